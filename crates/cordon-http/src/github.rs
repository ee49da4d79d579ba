//! GitHub itself, over its REST API: the tools of `policies/github.cord` (the simulated GitHub's)
//! for a real account, `--env github-rest`. Every request goes through the credential broker,
//! with the vault's `GITHUB_TOKEN` put in by it; the base address is GitHub's
//! (`https://api.github.com/`) unless the user names another (GitHub Enterprise, a test's mock).
//!
//! The answers are shaped as the policy's types, exactly as the simulated GitHub shapes them, so
//! the same plans, sessions and labels hold: a session in a result is `null` (the boundary makes
//! it and keeps its measures); `Repo` and `Issue` are objects. Differences from the simulation,
//! which the API imposes: `list_repos` lists the account's own public repositories (GitHub has
//! no list of every public one), lists stop at 100 entries, and `search_code` gives each match
//! as `owner/name/path: line` (the API gives the matching line, not its number).

use std::sync::Arc;

use cordon_broker::{Client, Incoming, Outgoing};
use cordon_runtime::{Json, ToolCall, ToolHost};
use serde_json::json;
use url::Url;

use crate::HttpOptions;

/// The vault secret the host sends.
pub const TOKEN: &str = "GITHUB_TOKEN";

/// GitHub's own API.
pub const DEFAULT_API: &str = "https://api.github.com/";

/// The capability it serves: the simulated GitHub's.
pub const CAPABILITY: &str = "GitHub";

/// The policy declaring it.
pub const POLICY: &str = include_str!("../../../policies/github.cord");

/// The most entries a list holds.
const PAGE: &str = "100";

/// The host: the broker, where the API is, and the account's login.
#[derive(Debug)]
pub struct GitHubRest {
    broker: Arc<Client>,
    api: Url,
    login: String,
    limits: HttpOptions,
}

impl GitHubRest {
    /// The account whose token the vault holds as `GITHUB_TOKEN`, at `api`; asks the API who it
    /// is, so that a missing or refused token is an error here, before anything runs.
    pub fn open(broker: Arc<Client>, api: &str) -> Result<GitHubRest, String> {
        let mut api = Url::parse(api).map_err(|e| format!("`{api}` is not the address of a GitHub API: {e}"))?;
        if !api.path().ends_with('/') {
            api.set_path(&format!("{}/", api.path()));
        }
        let has_token = broker.secrets().map_err(|e| e.to_string())?.iter().any(|e| e.name == TOKEN);
        if !has_token {
            return Err(format!(
                "--env github-rest needs the vault's `{TOKEN}`: cordon secrets add {TOKEN} --host {} --scheme Bearer",
                api.host_str().unwrap_or("api.github.com")
            ));
        }
        let mut host = GitHubRest { broker, api, login: String::new(), limits: HttpOptions::default() };
        let user = host.get_json(&host.url(&["user"], &[]), &[200])?;
        host.login = user["login"].as_str().ok_or("GitHub did not say whose token this is")?.to_string();
        Ok(host)
    }

    /// The account's login: the principal `user()` in the policy's labels.
    pub fn login(&self) -> &str {
        &self.login
    }

    /// The API's address for the path `segments` (each escaped) and `query`.
    fn url(&self, segments: &[&str], query: &[(&str, &str)]) -> Url {
        let mut url = self.api.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    /// Sends one request with the token; the answer, whatever its status.
    fn send(&self, method: &str, url: &Url, accept: &str, body: Option<Json>) -> Result<Incoming, String> {
        let mut headers =
            vec![("Accept".to_string(), accept.to_string()), ("X-GitHub-Api-Version".into(), "2022-11-28".into())];
        if body.is_some() {
            headers.push(("Content-Type".into(), "application/json".into()));
        }
        let out = Outgoing {
            method: method.into(),
            url: url.to_string(),
            headers,
            body: body.map(|b| b.to_string()),
            credential: Some(TOKEN.into()),
            timeout_ms: self.limits.timeout_ms,
            max_response_bytes: self.limits.max_response_bytes,
            // The API's address is the user's configuration, not a plan's.
            local: true,
        };
        match self.broker.send(&out).map_err(|e| e.to_string())? {
            Ok(incoming) => Ok(incoming),
            Err(refusal) => Err(format!("GitHub was not reached ({}): {}", refusal.code.name(), refusal.reason)),
        }
    }

    /// A JSON answer with one of the `ok` statuses, or an error naming GitHub's message.
    fn get_json(&self, url: &Url, ok: &[u16]) -> Result<Json, String> {
        let incoming = self.send("GET", url, "application/vnd.github+json", None)?;
        json_of(&incoming, ok)
    }

    /// `GET` of a thing that may not exist: `None` for a 404.
    fn find(&self, url: &Url) -> Result<Option<Json>, String> {
        let incoming = self.send("GET", url, "application/vnd.github+json", None)?;
        match incoming.status {
            404 => Ok(None),
            _ => json_of(&incoming, &[200]).map(Some),
        }
    }

    fn post(&self, url: &Url, body: Json) -> Result<Json, String> {
        let incoming = self.send("POST", url, "application/vnd.github+json", Some(body))?;
        json_of(&incoming, &[201])
    }

    fn repo_tool(&self, call: &ToolCall<'_>) -> Result<Json, String> {
        let url = self.url(&["repos", text(call, "owner")?, text(call, "name")?], &[]);
        Ok(self.find(&url)?.filter(|r| visibility(r) == "public").map_or(Json::Null, |r| repo(&r)))
    }

    fn private_repo_tool(&self, call: &ToolCall<'_>) -> Result<Json, String> {
        let url = self.url(&["repos", &self.login, text(call, "name")?], &[]);
        Ok(self.find(&url)?.filter(|r| visibility(r) == "private").map_or(Json::Null, |r| repo(&r)))
    }

    fn list_repos_tool(&self, visibility_wanted: &str) -> Result<Json, String> {
        let query = [("visibility", visibility_wanted), ("affiliation", "owner"), ("per_page", PAGE)];
        let repos = self.get_json(&self.url(&["user", "repos"], &query), &[200])?;
        Ok(list(&repos)?.iter().filter(|r| visibility(r) == visibility_wanted).map(repo).collect())
    }

    /// The internal repositories of an organisation, as a member sees them.
    fn org_repos_tool(&self, call: &ToolCall<'_>) -> Result<Json, String> {
        let query = [("type", "internal"), ("per_page", PAGE)];
        let repos = self.get_json(&self.url(&["orgs", text(call, "org")?, "repos"], &query), &[200])?;
        Ok(list(&repos)?.iter().filter(|r| visibility(r) == "internal").map(repo).collect())
    }

    fn read_file_tool(&self, call: &ToolCall<'_>) -> Result<Json, String> {
        let (owner, name) = repo_arg(call, "r")?;
        let path = text(call, "path")?;
        let mut segments = vec!["repos", owner, name, "contents"];
        segments.extend(path.split('/').filter(|s| !s.is_empty()));
        let incoming = self.send("GET", &self.url(&segments, &[]), "application/vnd.github.raw", None)?;
        match incoming.status {
            200 => Ok(json!([incoming.body, null])),
            404 => Err(format!("`{owner}/{name}` has no file `{path}`")),
            status => Err(failure(&incoming, status)),
        }
    }

    fn list_issues_tool(&self, call: &ToolCall<'_>) -> Result<Json, String> {
        let (owner, name) = repo_arg(call, "r")?;
        let query = [("state", "all"), ("sort", "created"), ("direction", "asc"), ("per_page", PAGE)];
        let issues = self.get_json(&self.url(&["repos", owner, name, "issues"], &query), &[200])?;
        // The API lists pull requests as issues too; the policy's issues are issues.
        let issues: Json = list(&issues)?.iter().filter(|i| i.get("pull_request").is_none()).map(issue).collect();
        Ok(json!([issues, null]))
    }

    fn search_code_tool(&self, call: &ToolCall<'_>) -> Result<Json, String> {
        let query = format!("{} user:{}", text(call, "query")?, self.login);
        let url = self.url(&["search", "code"], &[("q", &query), ("per_page", PAGE)]);
        let incoming = self.send("GET", &url, "application/vnd.github.text-match+json", None)?;
        let found = json_of(&incoming, &[200])?;
        let mut lines = Vec::new();
        for item in list(&found["items"])? {
            let place = format!(
                "{}/{}",
                item["repository"]["full_name"].as_str().unwrap_or("?"),
                item["path"].as_str().unwrap_or("?")
            );
            for matched in item["text_matches"].as_array().into_iter().flatten() {
                for line in matched["fragment"].as_str().unwrap_or("").lines() {
                    lines.push(Json::String(format!("{place}: {line}")));
                }
            }
        }
        lines.truncate(50);
        Ok(Json::Array(lines))
    }

    fn create_issue_tool(&self, call: &ToolCall<'_>) -> Result<Json, String> {
        let (owner, name) = repo_arg(call, "r")?;
        let body = json!({ "title": text(call, "title")?, "body": text(call, "body")? });
        let created = self.post(&self.url(&["repos", owner, name, "issues"], &[]), body)?;
        Ok(json!([issue(&created), null]))
    }

    fn comment_tool(&self, call: &ToolCall<'_>) -> Result<Json, String> {
        let (owner, name) = repo_arg(call, "r")?;
        let number = call.arg("issue").and_then(|i| i["number"].as_i64()).ok_or("`issue` is not an `Issue`")?;
        let number = number.to_string();
        let url = self.url(&["repos", owner, name, "issues", &number, "comments"], &[]);
        self.post(&url, json!({ "body": text(call, "body")? }))?;
        Ok(Json::Null)
    }
}

impl ToolHost for GitHubRest {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        match call.tool() {
            "repo" => self.repo_tool(call),
            "private_repo" => self.private_repo_tool(call),
            "list_repos" => self.list_repos_tool("public"),
            "list_private_repos" => self.list_repos_tool("private"),
            "org_repos" => self.org_repos_tool(call),
            "read_file" => self.read_file_tool(call),
            "list_issues" => self.list_issues_tool(call),
            "search_code" => self.search_code_tool(call),
            "create_issue" => self.create_issue_tool(call),
            "comment" => self.comment_tool(call),
            other => Err(format!("the GitHub capability has no tool `{other}`")),
        }
    }
}

impl cordon_engine::Host for GitHubRest {
    fn kind(&self) -> &str {
        "environment"
    }

    fn name(&self) -> &str {
        "github-rest"
    }

    fn capability(&self) -> &str {
        CAPABILITY
    }

    fn principal(&self) -> Option<&str> {
        Some(&self.login)
    }

    fn policy(&self) -> Option<&str> {
        Some(POLICY)
    }

    /// A grant is for this account at this API.
    fn instance(&self) -> String {
        format!("environment github-rest {} {}", self.api, self.login)
    }
}

/// A repository's visibility: "public", "private" or "internal" (which the API also calls
/// private). An answer without the field is private unless it says it is not.
fn visibility(r: &Json) -> &str {
    match (r["visibility"].as_str(), r["private"].as_bool()) {
        (Some(v @ ("public" | "private" | "internal")), _) => v,
        (None, Some(false)) => "public",
        _ => "private",
    }
}

/// A `Repo`: `{ name, owner, private, internal }`.
fn repo(r: &Json) -> Json {
    let visibility = visibility(r);
    json!({
        "name": r["name"],
        "owner": r["owner"]["login"],
        "private": visibility == "private",
        "internal": visibility == "internal",
    })
}

/// An `Issue`: `{ number, title, body, author, open }` (a missing body is empty).
fn issue(i: &Json) -> Json {
    json!({
        "number": i["number"],
        "title": i["title"],
        "body": i["body"].as_str().unwrap_or(""),
        "author": i["user"]["login"],
        "open": i["state"] == "open",
    })
}

fn list(value: &Json) -> Result<&Vec<Json>, String> {
    value.as_array().ok_or_else(|| "GitHub answered something other than a list".to_string())
}

fn json_of(incoming: &Incoming, ok: &[u16]) -> Result<Json, String> {
    if !ok.contains(&incoming.status) {
        return Err(failure(incoming, incoming.status));
    }
    serde_json::from_str(&incoming.body).map_err(|e| format!("GitHub answered what is not JSON: {e}"))
}

/// What GitHub said, for a status it should not have answered.
fn failure(incoming: &Incoming, status: u16) -> String {
    let message = serde_json::from_str::<Json>(&incoming.body)
        .ok()
        .and_then(|b| b["message"].as_str().map(str::to_string))
        .unwrap_or_default();
    let message: String = message.chars().take(200).collect();
    format!("GitHub answered {status}: {message}")
}

fn text<'c>(call: &'c ToolCall<'_>, name: &str) -> Result<&'c str, String> {
    call.arg(name).and_then(Json::as_str).ok_or_else(|| format!("`{}` needs the string `{name}`", call.tool()))
}

/// A `Repo` argument's owner and name.
fn repo_arg<'c>(call: &'c ToolCall<'_>, name: &str) -> Result<(&'c str, &'c str), String> {
    let r = call.arg(name).ok_or_else(|| format!("`{}` needs the `Repo` `{name}`", call.tool()))?;
    match (r["owner"].as_str(), r["name"].as_str()) {
        (Some(owner), Some(name)) => Ok((owner, name)),
        _ => Err(format!("`{name}` is not a `Repo`")),
    }
}
