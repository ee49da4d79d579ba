//! The `GitHub` capability's tools as a [`ToolHost`]: decodes an [`Effect`]'s arguments, runs
//! the operation on the simulated state and encodes the result as the tool's declared type in
//! `policies/github.cord`. A session in the result is `Value::Unit` (the boundary mints the
//! session); `Repo` and `Issue` are records with their fields in declaration order.
//!
//! Arguments the program could not have produced (a missing argument, a `Repo` without an
//! `owner`) are errors, never panics: the boundary vets calls, but this host does not rely on it.

use cordon_runtime::effect::{Effect, ToolHost};
use cordon_runtime::value::Value;

use crate::call::Call;

use super::{GitHub, IssueData, RepoData};

/// The capability's declared name.
pub const CAPABILITY: &str = "GitHub";

impl ToolHost for GitHub {
    fn perform(&mut self, effect: &Effect) -> Result<Value, String> {
        if &*effect.capability != CAPABILITY {
            return Err(format!("the GitHub environment has no capability `{}`", effect.capability));
        }
        let call = Call { effect };
        match &*effect.tool {
            "repo" => self.repo_tool(&call),
            "private_repo" => self.private_repo_tool(&call),
            "list_repos" => Ok(self.list_repos_tool(false)),
            "list_private_repos" => Ok(self.list_repos_tool(true)),
            "read_file" => self.read_file_tool(&call),
            "list_issues" => self.list_issues_tool(&call),
            "create_issue" => self.create_issue_tool(&call),
            "comment" => self.comment_tool(&call),
            "search_code" => self.search_code_tool(&call),
            other => Err(format!("the GitHub capability has no tool `{other}`")),
        }
    }
}

impl GitHub {
    // What anyone can see and what only the account can are separate tools, so that the label
    // of a result never depends on a secret (whether a private repository exists).

    fn repo_tool(&self, call: &Call<'_>) -> Result<Value, String> {
        let (owner, name) = (call.str("owner")?, call.str("name")?);
        let public = self.repo(owner, name).filter(|r| !r.private);
        Ok(public.map_or_else(Value::none, |r| Value::some(repo_value(r))))
    }

    fn private_repo_tool(&self, call: &Call<'_>) -> Result<Value, String> {
        let name = call.str("name")?;
        let private = self.repo(self.user(), name).filter(|r| r.private);
        Ok(private.map_or_else(Value::none, |r| Value::some(repo_value(r))))
    }

    fn list_repos_tool(&self, private: bool) -> Value {
        Value::list(self.visible_repos().filter(|r| r.private == private).map(repo_value).collect())
    }

    fn read_file_tool(&self, call: &Call<'_>) -> Result<Value, String> {
        let (owner, name) = call.repo("r")?;
        let content = self.read_file(owner, name, call.str("path")?)?;
        Ok(Value::tuple(vec![Value::str(content), Value::Unit]))
    }

    fn list_issues_tool(&self, call: &Call<'_>) -> Result<Value, String> {
        let (owner, name) = call.repo("r")?;
        let issues = self.issues(owner, name)?.into_iter().map(issue_value).collect();
        Ok(Value::tuple(vec![Value::list(issues), Value::Unit]))
    }

    fn create_issue_tool(&mut self, call: &Call<'_>) -> Result<Value, String> {
        let (owner, name) = call.repo("r")?;
        let (title, body) = (call.str("title")?, call.str("body")?);
        let author = self.user().to_string();
        let issue = self.open_issue(owner, name, &author, title, body)?;
        Ok(Value::tuple(vec![issue_value(issue), Value::Unit]))
    }

    fn comment_tool(&mut self, call: &Call<'_>) -> Result<Value, String> {
        let (owner, name) = call.repo("r")?;
        let number = call.issue_number("issue")?;
        let author = self.user().to_string();
        self.add_comment(owner, name, number, &author, call.str("body")?)?;
        Ok(Value::Unit)
    }

    fn search_code_tool(&self, call: &Call<'_>) -> Result<Value, String> {
        let hits = self.search_code(call.str("query")?)?;
        Ok(Value::list(hits.iter().map(|h| Value::str(h)).collect()))
    }
}

/// A `Repo` value: `{ name, owner, private }`.
fn repo_value(r: &RepoData) -> Value {
    Value::record(
        "Repo",
        vec![("name", Value::str(&r.name)), ("owner", Value::str(&r.owner)), ("private", Value::Bool(r.private))],
    )
}

/// An `Issue` value: `{ number, title, body, author, open }`.
fn issue_value(i: &IssueData) -> Value {
    Value::record(
        "Issue",
        vec![
            ("number", Value::Int(i.number)),
            ("title", Value::str(&i.title)),
            ("body", Value::str(&i.body)),
            ("author", Value::str(&i.author)),
            ("open", Value::Bool(i.open)),
        ],
    )
}

impl<'a> Call<'a> {
    /// A `Repo` argument's owner and name.
    fn repo(&self, param: &str) -> Result<(&'a str, &'a str), String> {
        let record = self.record(param, "Repo")?;
        match (self.field(param, record, "owner")?, self.field(param, record, "name")?) {
            (Value::Str(owner), Value::Str(name)) => Ok((owner, name)),
            _ => Err(self.error(param, "should have String fields `owner` and `name`")),
        }
    }

    /// An `Issue` argument's number.
    fn issue_number(&self, param: &str) -> Result<i64, String> {
        let record = self.record(param, "Issue")?;
        match self.field(param, record, "number")? {
            Value::Int(n) => Ok(*n),
            other => Err(self.error(param, &format!("should have an Int `number`, found {}", other.kind()))),
        }
    }
}
