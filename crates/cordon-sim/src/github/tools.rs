//! The `GitHub` capability's tools as a [`ToolHost`]: reads a call's JSON arguments, runs the
//! operation on the simulated state and answers in JSON as the tool's declared type in
//! `policies/github.cord` maps to it (see [`ToolHost`]): a session in the result is `null` (the
//! boundary mints the session); `Repo` and `Issue` are objects.
//!
//! Arguments the program could not have produced (a missing argument, a `Repo` without an
//! `owner`) are errors, never panics: the boundary vets calls, but this host does not rely on it.

use cordon_runtime::{Json, ToolCall, ToolHost};
use serde::Deserialize;
use serde_json::json;

use crate::call::Args;

use super::{GitHub, IssueData, RepoData};

/// The capability's declared name.
pub const CAPABILITY: &str = "GitHub";

impl ToolHost for GitHub {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        if call.capability() != CAPABILITY {
            return Err(format!("the GitHub environment has no capability `{}`", call.capability()));
        }
        let args = Args { call };
        match call.tool() {
            "repo" => self.repo_tool(&args),
            "private_repo" => self.private_repo_tool(&args),
            "list_repos" => Ok(self.list_repos_tool(false)),
            "list_private_repos" => Ok(self.list_repos_tool(true)),
            "org_repos" => self.org_repos_tool(&args),
            "read_file" => self.read_file_tool(&args),
            "list_issues" => self.list_issues_tool(&args),
            "create_issue" => self.create_issue_tool(&args),
            "comment" => self.comment_tool(&args),
            "search_code" => self.search_code_tool(&args),
            other => Err(format!("the GitHub capability has no tool `{other}`")),
        }
    }
}

/// A `Repo` argument: the fields this host reads.
#[derive(Deserialize)]
struct RepoArg {
    owner: String,
    name: String,
}

/// An `Issue` argument: the field this host reads.
#[derive(Deserialize)]
struct IssueArg {
    number: i64,
}

impl GitHub {
    // What anyone can see and what only the account can are separate tools, so that the label
    // of a result never depends on a secret (whether a private repository exists).

    fn repo_tool(&self, args: &Args<'_>) -> Result<Json, String> {
        let (owner, name) = (args.str("owner")?, args.str("name")?);
        Ok(self.repo(&owner, &name).filter(|r| is_public(r)).map_or(Json::Null, repo_json))
    }

    fn private_repo_tool(&self, args: &Args<'_>) -> Result<Json, String> {
        let name = args.str("name")?;
        Ok(self.repo(self.user(), &name).filter(|r| r.private).map_or(Json::Null, repo_json))
    }

    fn list_repos_tool(&self, private: bool) -> Json {
        let chosen = |r: &&RepoData| if private { r.private } else { is_public(r) };
        self.visible_repos().filter(chosen).map(repo_json).collect()
    }

    /// The internal repositories of `org` the account can see (none if it is not a member).
    fn org_repos_tool(&self, args: &Args<'_>) -> Result<Json, String> {
        let org = args.str("org")?;
        Ok(self.visible_repos().filter(|r| r.internal && r.owner == org).map(repo_json).collect())
    }

    fn read_file_tool(&self, args: &Args<'_>) -> Result<Json, String> {
        let r: RepoArg = args.get("r", "Repo")?;
        let content = self.read_file(&r.owner, &r.name, &args.str("path")?)?;
        Ok(json!([content, null]))
    }

    fn list_issues_tool(&self, args: &Args<'_>) -> Result<Json, String> {
        let r: RepoArg = args.get("r", "Repo")?;
        let issues: Json = self.issues(&r.owner, &r.name)?.into_iter().map(issue_json).collect();
        Ok(json!([issues, null]))
    }

    fn create_issue_tool(&mut self, args: &Args<'_>) -> Result<Json, String> {
        let r: RepoArg = args.get("r", "Repo")?;
        let (title, body) = (args.str("title")?, args.str("body")?);
        let author = self.user().to_string();
        let issue = self.open_issue(&r.owner, &r.name, &author, &title, &body)?;
        Ok(json!([issue_json(issue), null]))
    }

    fn comment_tool(&mut self, args: &Args<'_>) -> Result<Json, String> {
        let r: RepoArg = args.get("r", "Repo")?;
        let issue: IssueArg = args.get("issue", "Issue")?;
        let author = self.user().to_string();
        self.add_comment(&r.owner, &r.name, issue.number, &author, &args.str("body")?)?;
        Ok(Json::Null)
    }

    fn search_code_tool(&self, args: &Args<'_>) -> Result<Json, String> {
        Ok(self.search_code(&args.str("query")?)?.into())
    }
}

/// Public to the world: neither private nor internal.
fn is_public(r: &RepoData) -> bool {
    !r.private && !r.internal
}

/// A `Repo`: `{ name, owner, private, internal }`.
fn repo_json(r: &RepoData) -> Json {
    json!({ "name": r.name, "owner": r.owner, "private": r.private, "internal": r.internal })
}

/// An `Issue`: `{ number, title, body, author, open }`.
fn issue_json(i: &IssueData) -> Json {
    json!({ "number": i.number, "title": i.title, "body": i.body, "author": i.author, "open": i.open })
}
