//! The simulated GitHub's state as plain data: what the JSON data file holds, and the checks
//! that make a loaded file a consistent state (unique names and numbers, no empty fields).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// The whole state: the account the agent acts for and every repository on the server,
/// including ones that account cannot see.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    /// The login of the account the agent acts for: the principal of its labels.
    pub user: String,
    /// The organisations, with their members.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orgs: Vec<OrgData>,
    pub repos: Vec<RepoData>,
}

impl Data {
    /// The organisation `name`, if there is one.
    pub fn org(&self, name: &str) -> Option<&OrgData> {
        self.orgs.iter().find(|o| o.name == name)
    }
}

/// An organisation: its internal repositories are its members' to read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrgData {
    pub name: String,
    pub members: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoData {
    pub owner: String,
    pub name: String,
    pub private: bool,
    /// Visible to the members of the organisation that owns it, and to no one else (never
    /// together with `private`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub internal: bool,
    #[serde(default)]
    pub files: Vec<FileData>,
    #[serde(default)]
    pub issues: Vec<IssueData>,
}

impl RepoData {
    /// `owner/name`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    pub fn file(&self, path: &str) -> Option<&FileData> {
        self.files.iter().find(|f| f.path == path)
    }

    pub fn issue(&self, number: i64) -> Option<&IssueData> {
        self.issues.iter().find(|i| i.number == number)
    }

    /// The number the next issue gets: one more than the largest so far.
    pub fn next_issue_number(&self) -> i64 {
        self.issues.iter().map(|i| i.number).max().unwrap_or(0).saturating_add(1)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileData {
    pub path: String,
    /// Who wrote the file (informational: the policy labels content by the repository owner).
    pub author: String,
    pub content: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssueData {
    pub number: i64,
    pub title: String,
    pub body: String,
    pub author: String,
    #[serde(default = "open_by_default")]
    pub open: bool,
    #[serde(default)]
    pub comments: Vec<CommentData>,
}

fn open_by_default() -> bool {
    true
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommentData {
    pub author: String,
    pub body: String,
}

/// Parses and validates a data file.
pub fn parse(text: &str) -> Result<Data, String> {
    let data: Data = serde_json::from_str(text).map_err(|e| format!("the GitHub data is not valid: {e}"))?;
    validate(&data).map_err(|e| format!("the GitHub data is not valid: {e}"))?;
    Ok(data)
}

/// Checks what the JSON shape cannot: names are well formed and unique, issue numbers positive
/// and unique per repository, authors named, an internal repository owned by an organisation.
pub fn validate(data: &Data) -> Result<(), String> {
    check_login(&data.user, "the user")?;
    let mut orgs = HashSet::new();
    for org in &data.orgs {
        check_login(&org.name, "an organisation's name")?;
        if !orgs.insert(org.name.as_str()) {
            return Err(format!("the organisation `{}` is listed twice", org.name));
        }
        for member in &org.members {
            check_login(member, &format!("a member of `{}`", org.name))?;
        }
    }
    let mut names = HashSet::new();
    for repo in &data.repos {
        check_login(&repo.owner, "a repository owner")?;
        check_login(&repo.name, "a repository name")?;
        if !names.insert((repo.owner.as_str(), repo.name.as_str())) {
            return Err(format!("the repository `{}` is listed twice", repo.full_name()));
        }
        if repo.internal && (repo.private || !orgs.contains(repo.owner.as_str())) {
            return Err(format!(
                "`{}` is internal: it must be owned by a listed organisation and not be private",
                repo.full_name()
            ));
        }
        validate_repo(repo)?;
    }
    Ok(())
}

fn validate_repo(repo: &RepoData) -> Result<(), String> {
    let full = repo.full_name();
    let mut paths = HashSet::new();
    for file in &repo.files {
        if file.path.is_empty() || file.path.starts_with('/') || file.path.split('/').any(|c| c.is_empty() || c == "..")
        {
            return Err(format!("`{full}` has a file with the malformed path `{}`", file.path));
        }
        if !paths.insert(file.path.as_str()) {
            return Err(format!("`{full}` lists the file `{}` twice", file.path));
        }
        check_login(&file.author, &format!("the author of `{full}/{}`", file.path))?;
    }
    let mut numbers = HashSet::new();
    for issue in &repo.issues {
        if issue.number < 1 {
            return Err(format!("`{full}` has an issue numbered {}: numbers start at 1", issue.number));
        }
        if !numbers.insert(issue.number) {
            return Err(format!("`{full}` has two issues numbered {}", issue.number));
        }
        let what = format!("`{full}#{}`", issue.number);
        check_login(&issue.author, &format!("the author of {what}"))?;
        for comment in &issue.comments {
            check_login(&comment.author, &format!("the author of a comment on {what}"))?;
        }
    }
    Ok(())
}

/// A login or repository name: not empty, no `/` and no whitespace.
fn check_login(name: &str, what: &str) -> Result<(), String> {
    if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
        return Err(format!("{what} is `{name}`: expected a non-empty name without `/` or spaces"));
    }
    Ok(())
}
