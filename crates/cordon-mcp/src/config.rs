//! `cordon.toml`: the MCP servers a user has, by name. Looked up as `--config PATH`, else
//! `./cordon.toml`, else `$XDG_CONFIG_HOME/cordon/cordon.toml` (`~/.config/cordon/cordon.toml`
//! when `XDG_CONFIG_HOME` is not set). `--config` may also name an `mcpServers` JSON file
//! (Claude Desktop, Claude Code, Cursor) or a Codex `config.toml` (`crate::foreign`).
//!
//! ```toml
//! user = "ann"            # whom runs act for (default: user)
//!
//! [servers.search]
//! url = "https://mcp.example.com/mcp"   # streamable HTTP instead of a command
//! credential = "SEARCH_TOKEN"           # a vault secret, put in by the credential broker
//! headers = { X-Team = "${TEAM}" }      # or values from the environment
//!
//! [servers.files]
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]
//! env = ["HOME"]          # variables passed through from Cordon's own environment
//! secrets = { NOTES_TOKEN = "NOTES_TOKEN" }  # variables set to vault secrets, by the broker
//! cwd = "/home/me"
//! capability = "Files"    # the policy's capability these tools serve (default: `Files` from `files`),
//!                         # or several, one server for all: ["Notes", "Drafts"]
//! timeout_secs = 30       # for each call, and for starting and listing unless:
//! startup_timeout_secs = 60  # for starting and listing its tools
//! ```
//!
//! A server process gets an empty environment but `PATH` and the variables `env` names: a
//! server is someone else's code, and Cordon's environment may hold keys it has no business
//! with.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::foreign::{Format, Imported};

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Whom the runs act for (the principal `user()` of the policies' labels), where no
    /// simulated environment says; by default `user`.
    pub user: Option<String>,
    #[serde(default)]
    pub servers: BTreeMap<String, Server>,
}

/// One server: a command to start (stdio), or a URL to reach (streamable HTTP).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Server {
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// The server's streamable HTTP endpoint: `https://..`, or `http://` to a loopback address.
    pub url: Option<String>,
    /// Headers sent with every HTTP request; a value `${NAME}` is the variable `NAME` of
    /// Cordon's environment, so a key need not be written in the file.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A vault secret for the server (`cordon secrets add NAME --host ...`): its requests are
    /// then sent by the credential broker, which puts the secret into the header the vault
    /// binds it to, if the server's address is one it is bound to.
    pub credential: Option<String>,
    /// Names of variables passed through from Cordon's environment (besides `PATH`).
    #[serde(default)]
    pub env: Vec<String>,
    /// Variables set to vault secrets, each by the secret's name (`{ GITHUB_PERSONAL_ACCESS_TOKEN
    /// = "GITHUB_TOKEN" }`): the credential broker starts the server then, only if each secret
    /// is bound to its command and arguments (`cordon secrets add NAME --program ".."`), and
    /// scrubs every vault secret out of what the server writes.
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// The capability of the policy its tools serve, or several, which one server process
    /// serves together; by default the server's name with its first letter in upper case.
    pub capability: Option<Capabilities>,
    /// Seconds to wait for the server to answer one call (and to start and list its tools,
    /// unless `startup_timeout_secs` says otherwise).
    pub timeout_secs: Option<u64>,
    /// Seconds to wait for the server to start and list its tools: a server fetched by `npx` or
    /// `uvx` may take longer to start than it may take to answer.
    pub startup_timeout_secs: Option<u64>,
}

/// The capabilities a server serves: one, or a list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Capabilities {
    One(String),
    Several(Vec<String>),
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport<'a> {
    Stdio {
        command: &'a str,
    },
    /// The URL as parsed and judged: the client reaches exactly this.
    Http {
        url: String,
    },
}

impl From<Imported> for Server {
    fn from(server: Imported) -> Server {
        Server {
            command: server.command,
            args: server.args,
            url: server.url,
            headers: server.headers,
            credential: None,
            env: server.env,
            secrets: BTreeMap::new(),
            cwd: server.cwd,
            capability: None,
            timeout_secs: server.timeout_secs,
            startup_timeout_secs: server.startup_timeout_secs,
        }
    }
}

/// The largest config file Cordon reads.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The user's config: `$XDG_CONFIG_HOME/cordon/cordon.toml` where that variable is set to an
/// absolute path, else `~/.config/cordon/cordon.toml`; none without either.
pub fn user_config() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    let base = xdg.or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("cordon/cordon.toml"))
}

/// The text of the config file `path`: at most [`MAX_CONFIG_BYTES`], and UTF-8.
pub fn read_text(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(format!("{}: a config is at most {MAX_CONFIG_BYTES} bytes", path.display()));
    }
    String::from_utf8(bytes)
        .map_err(|e| format!("{}: not UTF-8 text (at byte {})", path.display(), e.utf8_error().valid_up_to()))
}

/// How long a server may take, unless its entry says.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

impl Server {
    /// The command or the URL: exactly one of them.
    pub fn transport(&self, name: &str) -> Result<Transport<'_>, String> {
        match (&self.command, &self.url) {
            (Some(_), None) if self.credential.is_some() => Err(format!(
                "the MCP server `{name}` has a credential and a command: a credential is for a server's url \
                 (a command's secrets go in `secrets`)"
            )),
            (None, Some(_)) if !self.secrets.is_empty() => Err(format!(
                "the MCP server `{name}` has secrets and a url: `secrets` are a command's (a url's secret is \
                 its `credential`)"
            )),
            (Some(command), None) => Ok(Transport::Stdio { command }),
            (None, Some(url)) => Ok(Transport::Http { url: judge_url(name, url)? }),
            (Some(_), Some(_)) => Err(format!("the MCP server `{name}` has both a command and a url: give one")),
            (None, None) => Err(format!("the MCP server `{name}` needs a command (stdio) or a url (streamable HTTP)")),
        }
    }

    /// The headers, each `${NAME}` value read from the environment.
    pub fn header_values(&self, name: &str) -> Result<Vec<(String, String)>, String> {
        self.headers
            .iter()
            .map(|(key, value)| match value.strip_prefix("${").and_then(|v| v.strip_suffix('}')) {
                Some(var) => std::env::var(var).map(|v| (key.clone(), v)).map_err(|_| {
                    format!("the MCP server `{name}`'s header `{key}` needs the variable `{var}`, which is not set")
                }),
                None => Ok((key.clone(), value.clone())),
            })
            .collect()
    }

    /// How long one call may take.
    pub fn timeout(&self) -> Duration {
        self.timeout_secs.map_or(DEFAULT_TIMEOUT, Duration::from_secs)
    }

    /// How long starting the server and listing its tools may take.
    pub fn startup_timeout(&self) -> Duration {
        self.startup_timeout_secs.map_or_else(|| self.timeout(), Duration::from_secs)
    }

    /// The capabilities its tools serve in a policy, at least one and none twice: by default
    /// the server's name as an identifier, its first letter in upper case (`my-files` →
    /// `My_files`).
    pub fn capabilities(&self, name: &str) -> Result<Vec<String>, String> {
        let all = match &self.capability {
            None => {
                let id = crate::names::identifier(name);
                let mut chars = id.chars();
                vec![chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()]
            }
            Some(Capabilities::One(one)) => vec![one.clone()],
            Some(Capabilities::Several(several)) => several.clone(),
        };
        if all.is_empty() {
            return Err(format!("the MCP server `{name}` serves no capability: name at least one"));
        }
        if let Some(twice) = all.iter().enumerate().find_map(|(i, c)| all[..i].contains(c).then_some(c)) {
            return Err(format!("the MCP server `{name}` lists the capability `{twice}` twice"));
        }
        Ok(all)
    }
}

/// The URL of the server `name`, judged on its parsed form (as the client will reach it):
/// `https://` to a host, or `http://` to a loopback address (`127.0.0.1` and the rest of
/// `127.0.0.0/8` however written, `[::1]`, `localhost`); never a user or password in it.
fn judge_url(name: &str, text: &str) -> Result<String, String> {
    let url = url::Url::parse(text).map_err(|e| format!("the MCP server `{name}`'s url {text:?} is not a URL: {e}"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "the MCP server `{name}`'s url has a user or password before its host: put keys in `headers`"
        ));
    }
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        Some(url::Host::Domain(domain)) => domain == "localhost",
        None => false,
    };
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url.to_string()),
        "http" if loopback => Ok(url.to_string()),
        "http" => Err(format!(
            "the MCP server `{name}`'s url is plain http to another machine ({}): use https (headers may carry keys)",
            url.host_str().unwrap_or("no host")
        )),
        _ => Err(format!("the MCP server `{name}`'s url must start with https:// (or http:// to loopback)")),
    }
}

impl Config {
    /// Parses a config file's text, in Cordon's format, an `mcpServers` JSON file's or Codex's
    /// (`crate::foreign`); errors say what is wrong and where.
    pub fn parse(text: &str) -> Result<Config, String> {
        let imported = match Format::of(text) {
            Format::Cordon => return toml::from_str(text).map_err(|e| e.to_string()),
            Format::McpServersJson => crate::foreign::parse_json(text)?,
            Format::Codex => crate::foreign::parse_codex(text)?,
        };
        let servers = imported.into_iter().map(|(name, server)| (name, Server::from(server))).collect();
        Ok(Config { user: None, servers })
    }

    /// Reads `path` (at most [`MAX_CONFIG_BYTES`], UTF-8); errors name it.
    pub fn read(path: &Path) -> Result<Config, String> {
        Config::parse(&read_text(path)?).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The config `--config` names, else the first of `./cordon.toml` and the user's
    /// ([`user_config`]) that exists, else an empty one.
    pub fn find(explicit: Option<&Path>) -> Result<(Config, Option<PathBuf>), String> {
        if let Some(path) = explicit {
            return Ok((Config::read(path)?, Some(path.to_path_buf())));
        }
        for path in std::iter::once(PathBuf::from("cordon.toml")).chain(user_config()) {
            if path.is_file() {
                return Ok((Config::read(&path)?, Some(path)));
            }
        }
        Ok((Config::default(), None))
    }

    /// The server `name`; the error lists the ones there are.
    pub fn server(&self, name: &str) -> Result<&Server, String> {
        self.servers.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.servers.keys().map(String::as_str).collect();
            if known.is_empty() {
                format!("no MCP server `{name}`: the config lists none (add `[servers.{name}]` to cordon.toml)")
            } else {
                format!("no MCP server `{name}` in the config; it lists: {}", known.join(", "))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_lists_servers_and_refuses_what_it_does_not_know() {
        let config = Config::parse(
            "[servers.files]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\nenv = [\"HOME\"]\ntimeout_secs = 5\n",
        )
        .unwrap_or_default();
        let files = config.server("files").map_err(|e| e.to_string());
        assert_eq!(
            files.map(|s| (s.capabilities("files"), s.timeout())),
            Ok((Ok(vec!["Files".to_string()]), Duration::from_secs(5)))
        );
        let capabilities = |line: &str| {
            let config = Config::parse(&format!("[servers.x]\ncommand = \"a\"\n{line}\n")).unwrap_or_default();
            config.servers["x"].capabilities("x")
        };
        assert_eq!(capabilities("capability = \"Notes\""), Ok(vec!["Notes".to_string()]));
        assert_eq!(capabilities("capability = [\"Notes\", \"Drafts\"]"), Ok(vec!["Notes".into(), "Drafts".into()]));
        assert!(capabilities("capability = []").is_err_and(|e| e.contains("serves no capability")));
        assert!(capabilities("capability = [\"A\", \"A\"]").is_err_and(|e| e.contains("`A` twice")));
        assert!(config.server("mail").is_err_and(|e| e.contains("it lists: files")));
        assert!(Config::parse("[servers.x]\ncommand = 1\n").is_err());
        assert!(Config::parse("[servers.x]\ncommand = \"a\"\nsecret = \"k\"\n").is_err());
        let transport = |text: &str| {
            Config::parse(text).unwrap_or_default().servers["x"].transport("x").map_err(|e| e.to_string()).map(|_| ())
        };
        assert_eq!(transport("[servers.x]\nurl = \"https://mcp.example.com/mcp\"\n"), Ok(()));
        assert_eq!(transport("[servers.x]\nurl = \"http://127.0.0.1:8080/mcp\"\n"), Ok(()));
        assert!(
            transport("[servers.x]\nurl = \"http://mcp.example.com/mcp\"\n").is_err_and(|e| e.contains("plain http"))
        );
        assert!(transport("[servers.x]\nurl = \"http://127.0.0.1.evil.com/mcp\"\n").is_err());
        // Judged on the host as parsed, however the text is written.
        for url in [
            "http://localhost:@evil.com/",
            "http://localhost@evil.com/",
            "http://127.0.0.1:80@evil.com/",
            "http://[::1]@evil.com/",
            "http://evil.com#@127.0.0.1/",
            "http://evil.com\\\\@127.0.0.1/",
            "http://localhost.evil.com/",
            "http://localhost./",
            "http://0x7f000001.evil/",
            "http://3232235777/",
            "http://user:key@example.com/",
            "https://user:key@example.com/",
            "http:/evil.com/",
            "https://",
        ] {
            assert!(transport(&format!("[servers.x]\nurl = {url:?}\n")).is_err(), "{url}");
        }
        for (url, reached) in [
            ("HTTP://LOCALHOST:8080/mcp", "http://localhost:8080/mcp"),
            ("http://2130706433/", "http://127.0.0.1/"),
            ("http://0177.0.0.1/", "http://127.0.0.1/"),
            ("http://0x7f.1/", "http://127.0.0.1/"),
            ("http://127.1.2.3./", "http://127.1.2.3/"),
            ("http://[0:0:0:0:0:0:0:1]:9/", "http://[::1]:9/"),
            ("http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/"),
        ] {
            let parsed = Config::parse(&format!("[servers.x]\nurl = {url:?}\n")).unwrap_or_default();
            assert_eq!(parsed.servers["x"].transport("x"), Ok(Transport::Http { url: reached.to_string() }), "{url}");
        }
        assert!(transport("[servers.x]\nurl = \"ftp://x\"\n").is_err());
        assert!(transport("[servers.x]\n").is_err_and(|e| e.contains("needs a command")));
        assert!(transport("[servers.x]\ncommand = \"a\"\nurl = \"https://b\"\n").is_err_and(|e| e.contains("both")));
    }
}
