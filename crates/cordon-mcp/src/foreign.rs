//! The MCP configuration people already have, read as servers of a `cordon.toml` (`Imported`,
//! which `crate::config` makes a `Server` of): the `mcpServers` JSON of
//! Claude Desktop, Claude Code (`.mcp.json`) and Cursor, and Codex's `[mcp_servers.NAME]` TOML.
//!
//! Those files may hold a value inline (`"env": {"GITHUB_TOKEN": "ghp_.."}`), and Cordon never
//! hands a server, or keeps, a value it cannot tell is not a secret. So an `env` value, or a
//! header's, must be a reference to Cordon's environment:
//!
//! - an `env` value that is exactly `${VAR}`, `VAR` being the variable it sets, passes `VAR`
//!   through from Cordon's environment (as `env = ["VAR"]` in `cordon.toml`);
//! - a header value that is exactly `${VAR}` is read from Cordon's environment (as in
//!   `cordon.toml`);
//! - any other value is refused, with an error naming the server and the variable: a secret
//!   goes in the vault (`cordon secrets add`) and `cordon.toml` names it (`secrets`,
//!   `credential`); anything else, export it and write `${VAR}`.
//!
//! Fields those tools define that Cordon does not use are tolerated (`type`, `disabled`,
//! `autoApprove`, Codex's `enabled_tools`, ..); a server marked `disabled` (or `enabled =
//! false`) is left out. Any other field is an error saying where it is.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

/// A server of a foreign file, as `cordon.toml` would list it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    pub command: Option<String>,
    pub args: Vec<String>,
    pub url: Option<String>,
    /// Header values, each `${VAR}`.
    pub headers: BTreeMap<String, String>,
    /// Variables passed through by name.
    pub env: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub timeout_secs: Option<u64>,
    pub startup_timeout_secs: Option<u64>,
}

/// The servers of a foreign file, by name.
pub type Servers = BTreeMap<String, Imported>;

/// Which format a config file's text is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Cordon's own `cordon.toml`.
    Cordon,
    /// `{"mcpServers": {..}}`: Claude Desktop, Claude Code, Cursor.
    McpServersJson,
    /// Codex's `config.toml`, `[mcp_servers.NAME]`.
    Codex,
}

impl Format {
    /// The format of `text`: JSON if it starts with `{`, Codex's if it is TOML with
    /// `mcp_servers` and no `servers`, else Cordon's.
    pub fn of(text: &str) -> Format {
        let text = text.trim_start_matches('\u{feff}').trim_start();
        if text.starts_with('{') {
            return Format::McpServersJson;
        }
        match toml::from_str::<toml::Table>(text) {
            Ok(table) if table.contains_key("mcp_servers") && !table.contains_key("servers") => Format::Codex,
            _ => Format::Cordon,
        }
    }
}

/// A JSON file with `mcpServers`; its other keys (a Claude Desktop or Claude Code file has
/// many) are not Cordon's business.
#[derive(Deserialize)]
struct JsonFile {
    #[serde(rename = "mcpServers")]
    servers: Option<BTreeMap<String, JsonServer>>,
}

/// One server of an `mcpServers` file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// `stdio`, `http` (or `streamable-http`); `sse` is refused.
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    disabled: bool,
    // Tolerated, unused: which tools a client approves without asking (Cordon's policy says),
    // a description, a client's timeout.
    #[serde(rename = "autoApprove", default)]
    _auto_approve: serde::de::IgnoredAny,
    #[serde(rename = "alwaysAllow", default)]
    _always_allow: serde::de::IgnoredAny,
    #[serde(rename = "description", default)]
    _description: serde::de::IgnoredAny,
    #[serde(rename = "timeout", default)]
    _timeout: serde::de::IgnoredAny,
}

/// Codex's `config.toml`: only `mcp_servers` is read.
#[derive(Deserialize)]
struct CodexFile {
    #[serde(default)]
    mcp_servers: BTreeMap<String, CodexServer>,
}

/// One `[mcp_servers.NAME]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CodexServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Variables passed through by name.
    #[serde(default)]
    env_vars: Vec<String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    http_headers: BTreeMap<String, String>,
    /// Headers read from variables: header → variable.
    #[serde(default)]
    env_http_headers: BTreeMap<String, String>,
    bearer_token_env_var: Option<String>,
    startup_timeout_sec: Option<f64>,
    startup_timeout_ms: Option<u64>,
    tool_timeout_sec: Option<f64>,
    enabled: Option<bool>,
    // Tolerated, unused: the policy says which tools a plan may call.
    #[serde(rename = "enabled_tools", default)]
    _enabled_tools: serde::de::IgnoredAny,
    #[serde(rename = "disabled_tools", default)]
    _disabled_tools: serde::de::IgnoredAny,
    #[serde(rename = "required", default)]
    _required: serde::de::IgnoredAny,
}

/// An `mcpServers` JSON file.
pub fn parse_json(text: &str) -> Result<Servers, String> {
    let file: JsonFile = serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| e.to_string())?;
    let Some(servers) = file.servers else {
        return Err("a JSON config must have `mcpServers` (the Claude Desktop, Claude Code and Cursor format)".into());
    };
    let mut config = Servers::new();
    for (name, server) in servers.into_iter().filter(|(_, s)| !s.disabled) {
        match server.kind.as_deref() {
            None | Some("stdio" | "http" | "streamable-http" | "streamableHttp") => {}
            Some("sse") => {
                return Err(format!(
                    "the MCP server `{name}` is `sse`: Cordon speaks streamable HTTP (`http`) and stdio only"
                ));
            }
            Some(other) => return Err(format!("the MCP server `{name}` has the unknown type {other:?}")),
        }
        let mut entry = empty(server.command, server.args, server.url, server.cwd);
        entry.env = pass_through(&name, &server.env)?;
        entry.headers = headers(&name, server.headers)?;
        config.insert(name, entry);
    }
    Ok(config)
}

/// A Codex `config.toml`.
pub fn parse_codex(text: &str) -> Result<Servers, String> {
    let file: CodexFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut config = Servers::new();
    for (name, server) in file.mcp_servers.into_iter().filter(|(_, s)| s.enabled != Some(false)) {
        if server.bearer_token_env_var.is_some() {
            return Err(format!(
                "the MCP server `{name}` has `bearer_token_env_var`: put the token in the vault (`cordon secrets add \
                 NAME --host HOST --scheme Bearer`) and give the server `credential = \"NAME\"` in cordon.toml"
            ));
        }
        let mut entry = empty(server.command, server.args, server.url, server.cwd);
        entry.env = pass_through(&name, &server.env)?;
        for var in server.env_vars {
            if !entry.env.contains(&var) {
                entry.env.push(var);
            }
        }
        entry.headers = headers(&name, server.http_headers)?;
        for (header, var) in server.env_http_headers {
            entry.headers.insert(header, format!("${{{var}}}"));
        }
        entry.startup_timeout_secs = match (server.startup_timeout_sec, server.startup_timeout_ms) {
            (Some(secs), _) => Some(seconds(&name, "startup_timeout_sec", secs)?),
            (None, Some(ms)) => Some(ms.div_ceil(1000)),
            (None, None) => None,
        };
        entry.timeout_secs = server.tool_timeout_sec.map(|s| seconds(&name, "tool_timeout_sec", s)).transpose()?;
        config.insert(name, entry);
    }
    Ok(config)
}

/// A server with only its command or url, its arguments and folder.
fn empty(command: Option<String>, args: Vec<String>, url: Option<String>, cwd: Option<PathBuf>) -> Imported {
    Imported { command, args, url, cwd, ..Imported::default() }
}

/// Whole seconds, rounded up, of a timeout given as a number of seconds.
fn seconds(name: &str, field: &str, secs: f64) -> Result<u64, String> {
    if !(secs.is_finite() && secs > 0.0 && secs <= 86_400.0) {
        return Err(format!("the MCP server `{name}`'s `{field}` must be between 0 and 86400 seconds"));
    }
    // In range, so the cast is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(secs.ceil() as u64)
}

/// The variable `value` refers to, if it is exactly `${VAR}`.
fn reference(value: &str) -> Option<&str> {
    let var = value.strip_prefix("${")?.strip_suffix('}')?;
    let mut chars = var.chars();
    let first = chars.next()?;
    let valid = (first == '_' || first.is_ascii_alphabetic()) && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
    valid.then_some(var)
}

/// The variables an `env` map passes through: each value must be `${VAR}` of its own name.
fn pass_through(name: &str, env: &BTreeMap<String, String>) -> Result<Vec<String>, String> {
    env.iter()
        .map(|(var, value)| match reference(value) {
            Some(same) if same == var => Ok(var.clone()),
            Some(other) => Err(format!(
                "the MCP server `{name}`'s variable `{var}` is set to `${{{other}}}`: Cordon passes a variable \
                 through under its own name only (write `\"{var}\": \"${{{var}}}\"`)"
            )),
            None => Err(format!(
                "the MCP server `{name}`'s variable `{var}` has a value written in the file, which Cordon does not \
                 pass to a server: if it is a secret, put it in the vault (`cordon secrets add NAME --program \
                 \"COMMAND ARGS\"`) and add the server to cordon.toml with `cordon mcp add {name} --secret \
                 {var}=NAME -- COMMAND ARGS`; if not, export it and write `\"{var}\": \"${{{var}}}\"`"
            )),
        })
        .collect()
}

/// Headers: each value must be `${VAR}`, read from Cordon's environment.
fn headers(name: &str, headers: BTreeMap<String, String>) -> Result<BTreeMap<String, String>, String> {
    for (header, value) in &headers {
        if reference(value).is_none() {
            return Err(format!(
                "the MCP server `{name}`'s header `{header}` has a value written in the file, which Cordon does not \
                 send: put a key in the vault (`cordon secrets add NAME --host HOST`) and give the server \
                 `credential = \"NAME\"` in cordon.toml; anything else, export it and write `\"${{VAR}}\"`"
            ));
        }
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Servers, String> {
        match Format::of(text) {
            Format::McpServersJson => parse_json(text),
            Format::Codex => parse_codex(text),
            Format::Cordon => Err("cordon.toml".into()),
        }
    }

    fn error(text: &str) -> String {
        parse(text).err().unwrap_or_default()
    }

    #[test]
    fn an_mcp_servers_file_maps_onto_servers() {
        let text = r#"{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "files": {"command": "npx", "args": ["-y", "fs", "/notes"], "env": {"HOME": "${HOME}"}, "cwd": "/tmp"},
    "search": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Key": "${SEARCH_KEY}"}},
    "off": {"command": "x", "disabled": true, "autoApprove": ["a"], "timeout": 60}
  }
}"#;
        assert_eq!(Format::of(text), Format::McpServersJson);
        let config = parse(text).unwrap_or_default();
        assert_eq!(config.keys().collect::<Vec<_>>(), ["files", "search"]);
        let files = &config["files"];
        assert_eq!(
            (files.command.as_deref(), files.args.len(), &files.env[..]),
            (Some("npx"), 3, &["HOME".to_string()][..])
        );
        assert_eq!(files.cwd, Some(PathBuf::from("/tmp")));
        assert_eq!(config["search"].headers["X-Key"], "${SEARCH_KEY}");
    }

    #[test]
    fn a_value_written_in_a_foreign_file_is_refused() {
        let secret = error(r#"{"mcpServers": {"gh": {"command": "x", "env": {"GITHUB_TOKEN": "ghp_123"}}}}"#);
        assert!(secret.contains("`gh`'s variable `GITHUB_TOKEN` has a value written in the file"), "{secret}");
        assert!(secret.contains("cordon secrets add") && !secret.contains("ghp_123"), "{secret}");
        let renamed = error(r#"{"mcpServers": {"gh": {"command": "x", "env": {"GITHUB_TOKEN": "${MINE}"}}}}"#);
        assert!(renamed.contains("under its own name only"), "{renamed}");
        for value in ["", "${}", "${A", "$A", "${A}x", "x${A}", "${A:-d}", "${1A}"] {
            let text = format!(r#"{{"mcpServers": {{"a": {{"command": "x", "env": {{"A": {value:?}}}}}}}}}"#);
            assert!(error(&text).contains("variable `A`"), "{value}: {}", error(&text));
        }
        let header =
            error(r#"{"mcpServers": {"s": {"url": "https://a.example", "headers": {"Authorization": "Bearer k"}}}}"#);
        assert!(header.contains("header `Authorization`") && !header.contains("Bearer k"), "{header}");
        let codex = error("[mcp_servers.gh]\ncommand = \"x\"\nenv = { TOKEN = \"abc\" }\n");
        assert!(codex.contains("`gh`'s variable `TOKEN`"), "{codex}");
        assert!(
            error("[mcp_servers.s]\nurl = \"https://a.example\"\nbearer_token_env_var = \"T\"\n").contains("vault")
        );
    }

    #[test]
    fn a_codex_file_maps_onto_servers() {
        let text = "model = \"o3\"\n[profiles.x]\nmodel = \"y\"\n\n[mcp_servers.docs]\ncommand = \"docs-server\"\n\
                    args = [\"--stdio\"]\nenv = { HOME = \"${HOME}\" }\nenv_vars = [\"LANG\", \"HOME\"]\n\
                    startup_timeout_sec = 12.5\ntool_timeout_sec = 30\nenabled_tools = [\"a\"]\n\n\
                    [mcp_servers.web]\nurl = \"https://mcp.example.com/mcp\"\nenv_http_headers = { X-Key = \"KEY\" }\n\n\
                    [mcp_servers.off]\ncommand = \"x\"\nenabled = false\n";
        assert_eq!(Format::of(text), Format::Codex);
        let config = parse(text).unwrap_or_default();
        assert_eq!(config.keys().collect::<Vec<_>>(), ["docs", "web"]);
        let docs = &config["docs"];
        assert_eq!(docs.env, ["HOME", "LANG"]);
        assert_eq!((docs.startup_timeout_secs, docs.timeout_secs), (Some(13), Some(30)));
        assert_eq!(config["web"].headers["X-Key"], "${KEY}");
        assert!(error("[mcp_servers.a]\ncommand = \"x\"\ntool_timeout_sec = -1\n").contains("tool_timeout_sec"));
    }

    #[test]
    fn garbage_is_refused_saying_where() {
        let unknown = error("{\"mcpServers\": {\"a\": {\"command\": \"x\",\n \"evil\": 1}}}");
        assert!(unknown.contains("unknown field `evil`") && unknown.contains("line 2"), "{unknown}");
        let wrong = error("{\"mcpServers\": {\"a\": {\"command\": 7}}}");
        assert!(wrong.contains("invalid type") && wrong.contains("column"), "{wrong}");
        assert!(error("{\"mcpServers\": []}").contains("invalid type"));
        assert!(error("{\"mcpServers\": {\"a\": {\"args\": \"x\"}}}").contains("invalid type"));
        assert!(error("{\"other\": 1}").contains("must have `mcpServers`"));
        assert!(error("{\"mcpServers\": {\"a\": {\"type\": \"sse\", \"url\": \"https://x\"}}}").contains("sse"));
        assert!(error("{\"mcpServers\": {\"a\": {\"type\": \"ws\"}}}").contains("unknown type"));
        assert!(error("{").contains("EOF"));
        let codex = error("[mcp_servers.a]\ncommand = \"x\"\nevil = 1\n");
        assert!(codex.contains("unknown field `evil`") && codex.contains("line 3"), "{codex}");
        assert!(error("[mcp_servers]\na = 1\n").contains("invalid type"));
        // Deep nesting, in either format, is an error, not a stack overflow.
        let deep =
            format!("{{\"mcpServers\": {{\"a\": {{\"cwd\": {}1{}}}}}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deep).is_err());
        let deep = format!("[mcp_servers.a]\nargs = {}1{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deep).is_err());
        let deep = format!("a = {}1{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deep).is_err());
    }
}
