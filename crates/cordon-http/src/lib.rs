//! The HTTP capability: a plan's requests to the addresses its policy allows, each sent by the
//! credential broker, served as the `Http` capability of a policy like `policies/http.cord`;
//! and GitHub's REST API as the `GitHub` capability ([`github`]), through the same broker.
//!
//! # Where a request may go
//!
//! The allow-list is the policy's: the refinement on each tool's `url` (`{u: String |
//! u.starts_with("https://api.github.com/") || ..}`), a scheme, host, port and path prefix per
//! entry, one list per method (a tool per method). The checker proves it before the plan runs,
//! so a literal address outside it is a type error; the boundary checks it again on the real
//! value. This host sends only an address written in its normal form (the `url` crate's
//! serialisation: lower-case host, no default port, no `.` or `..` segments) and with no escaped
//! `/`, `\` or `.` in its path, so a prefix means what it says:
//! `https://api.github.com/repos/../user` and `https://api.github.com/repos/%2E%2E%2Fuser` are not
//! under `/repos/`, and each is refused here, not sent as `/user`. (A prefix should end in `/`
//! after the host: `https://en.wikipedia.org` would also admit `https://en.wikipedia.org.evil/`.)
//!
//! The broker then checks what only the sender can: a name is resolved once and must lead to
//! the internet (never this machine or a private network), the connection goes to the address
//! that was checked, and a credential goes only where the vault binds it.
//!
//! # Redirects
//!
//! A GET's redirect within the same site (scheme, host and port) is followed, at most
//! [`HttpOptions::max_redirects`] times, each hop checked by the broker again; the credential,
//! bound to the site, goes along, and nothing of the plan's is sent to the address the site
//! chose. Any other redirect (to another site, or of a POST, whose body would be sent again) is
//! not followed: it is the answer (its status and `location` header), and the plan may request
//! that address itself, through the allow-list like any other.
//!
//! # Credentials
//!
//! A plan holds a credential only as a `Secret`, an opaque record holding its name, which only
//! `http.secret(name)` makes (and only for a secret the vault has). Passed as a request's `auth`,
//! it tells the broker which secret to put in; the value never enters this process.

pub mod github;

use std::sync::Arc;

use cordon_broker::{Client, Incoming, Outgoing};
use cordon_runtime::{Json, ToolCall, ToolHost};
use serde_json::json;
use url::Url;

/// The capability this host serves.
pub const CAPABILITY: &str = "Http";

/// The template policy declaring it: a deployer copies it and writes their allow-list.
pub const POLICY: &str = include_str!("../../../policies/http.cord");

/// The policy's path from the repository root.
pub const POLICY_PATH: &str = "policies/http.cord";

/// Bounds on each request, and whether it may reach this machine.
#[derive(Clone, Copy, Debug)]
pub struct HttpOptions {
    /// How long one exchange may take, each hop of a redirect on its own.
    pub timeout_ms: u64,
    /// The most bytes an answer's body may have.
    pub max_response_bytes: usize,
    /// Redirects within a site followed before the last one is answered as it is.
    pub max_redirects: usize,
    /// Whether an address the allow-list names by number may be on this machine or a private
    /// network (`--web-local`, the deployer's say; a name must always lead to the internet).
    pub local: bool,
}

impl Default for HttpOptions {
    fn default() -> HttpOptions {
        HttpOptions { timeout_ms: 30_000, max_response_bytes: 4 * 1024 * 1024, max_redirects: 5, local: false }
    }
}

/// The host: the broker, the names of the vault's secrets, and the bounds.
#[derive(Debug)]
pub struct HttpHost {
    broker: Arc<Client>,
    secrets: Vec<String>,
    limits: HttpOptions,
}

impl HttpHost {
    /// The host sending through `broker`; it asks the broker once which secrets the vault has.
    pub fn open(broker: Arc<Client>, limits: HttpOptions) -> Result<HttpHost, String> {
        let secrets = broker.secrets().map_err(|e| e.to_string())?.into_iter().map(|e| e.name).collect();
        Ok(HttpHost { broker, secrets, limits })
    }

    fn secret(&self, call: &ToolCall<'_>) -> Result<Json, String> {
        let name = text(call, "name")?;
        Ok(match self.secrets.iter().any(|s| s == name) {
            true => json!({ "name": name }),
            false => Json::Null,
        })
    }

    /// Performs a request; its `Result[Response, HttpError]` as JSON.
    fn request(&self, method: &str, call: &ToolCall<'_>) -> Result<Json, String> {
        let address = text(call, "url")?;
        let url = match normal(address) {
            Ok(url) => url,
            Err((code, reason)) => return Ok(error(code, &reason)),
        };
        let headers = headers(call)?;
        let credential = match call.arg("auth") {
            None | Some(Json::Null) => None,
            Some(secret) => {
                Some(secret.get("name").and_then(Json::as_str).ok_or("`auth` is not a `Secret`")?.to_string())
            }
        };
        let body = match call.arg("body") {
            None | Some(Json::Null) => None,
            Some(b) => Some(b.as_str().ok_or("`body` is not a string")?.to_string()),
        };
        let mut out = Outgoing {
            method: method.to_string(),
            url: url.to_string(),
            headers,
            body,
            credential,
            timeout_ms: self.limits.timeout_ms,
            max_response_bytes: self.limits.max_response_bytes,
            local: self.limits.local,
        };
        let mut at = url;
        for hop in 0..=self.limits.max_redirects {
            let incoming = match self.broker.send(&out).map_err(|e| e.to_string())? {
                Ok(incoming) => incoming,
                Err(refusal) => return Ok(error(refusal.code.name(), &refusal.reason)),
            };
            // Only a GET follows a redirect, and only within its site: it sends nothing of the
            // plan's to the address the site chose. Anything else answers with the redirect.
            let next = redirect(&incoming).and_then(|location| at.join(location).ok());
            match next {
                Some(next) if method == "GET" && next.origin() == at.origin() && hop < self.limits.max_redirects => {
                    out.url = next.to_string();
                    at = next;
                }
                _ => return Ok(json!({ "Ok": response(incoming, &at) })),
            }
        }
        Err("a redirect loop was not bounded".into())
    }
}

/// `address` as a URL, if it is one in its normal form.
fn normal(address: &str) -> Result<Url, (&'static str, String)> {
    let url = Url::parse(address).map_err(|e| ("bad-address", format!("`{address}` is not an address: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(("bad-address", format!("`{}` is not HTTP", url.scheme())));
    }
    // An escaped `/`, `\` or `.` is one segment to this host and may be a path to the server:
    // `/repos/%2E%2E%2Fuser` would be under `/repos/` as written and `/user` as served.
    let escaped = url.path().to_ascii_lowercase();
    if ["%2f", "%5c", "%2e"].iter().any(|e| escaped.contains(e)) {
        return Err((
            "not-normal",
            format!("`{address}` escapes a `/`, `\\` or `.` in its path, which a server may read as the character"),
        ));
    }
    if url.as_str() != address {
        return Err((
            "not-normal",
            format!(
                "`{address}` is not written in its normal form, `{url}`: the allow-list is checked on the address as \
                 written, so it is sent only as every client would send it"
            ),
        ));
    }
    Ok(url)
}

/// The `location` of a redirect.
fn redirect(incoming: &Incoming) -> Option<&str> {
    matches!(incoming.status, 301 | 302 | 303 | 307 | 308).then(|| incoming.header("location")).flatten()
}

fn response(incoming: Incoming, at: &Url) -> Json {
    let headers: Vec<Json> =
        incoming.headers.into_iter().map(|(name, value)| json!({ "name": name, "value": value })).collect();
    json!({ "status": incoming.status, "headers": headers, "body": incoming.body, "url": at.as_str() })
}

fn error(code: &str, reason: &str) -> Json {
    json!({ "Err": { "code": code, "reason": reason } })
}

fn text<'c>(call: &'c ToolCall<'_>, name: &str) -> Result<&'c str, String> {
    call.arg(name).and_then(Json::as_str).ok_or_else(|| format!("`{}` needs the string `{name}`", call.tool()))
}

fn headers(call: &ToolCall<'_>) -> Result<Vec<(String, String)>, String> {
    let Some(list) = call.arg("headers") else { return Ok(Vec::new()) };
    let list = list.as_array().ok_or("`headers` is not a list")?;
    list.iter()
        .map(|h| {
            let field = |f: &str| h.get(f).and_then(Json::as_str).map(str::to_string);
            field("name").zip(field("value")).ok_or_else(|| "a header is not `{ name, value }`".to_string())
        })
        .collect()
}

impl ToolHost for HttpHost {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        match call.tool() {
            "secret" => self.secret(call),
            "get" => self.request("GET", call),
            "post" => self.request("POST", call),
            other => Err(format!("the Http host has no tool `{other}`")),
        }
    }
}

impl cordon_engine::Host for HttpHost {
    fn kind(&self) -> &str {
        "environment"
    }

    fn name(&self) -> &str {
        "http"
    }

    fn capability(&self) -> &str {
        CAPABILITY
    }

    /// The template's allow-list, unless the user gives their own policy.
    fn policy(&self) -> Option<&str> {
        Some(POLICY)
    }
}
