//! What a workspace's plans may call: simulated environments by name, the directories the user
//! grants (served as the `Fs` capability), the web through the credential broker (the `Http`
//! capability), and real MCP servers from the user's config, opened
//! and bound before anything runs, as one set of hosts; the policies that declare their tools;
//! and the principal they all act for.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cordon_broker::Client;

use cordon_engine::Hosts;
use cordon_fs::{Fs, FsLimits, Grant, Mode};
use cordon_http::github::{DEFAULT_API, GitHubRest, TOKEN};
use cordon_http::{HttpHost, HttpOptions};
use cordon_mcp::{Config, Connection, McpHost};
use cordon_syntax::{FileId, SourceMap};
use cordon_types::{CheckOptions, Declarations};

use crate::{Error, Source};

/// Which tools to open: what `--env`, `--dir`, `--mcp` and `--config` say.
#[derive(Clone, Debug, Default)]
pub struct ToolChoice {
    /// Simulated environments by name (`github`, `chat`, ..). With no environment, directory or
    /// server at all, the simulated GitHub.
    pub envs: Vec<String>,
    /// Directories the plan may use, each a root of the `Fs` capability.
    pub dirs: Vec<Grant>,
    /// Real MCP servers, by their names in the config.
    pub servers: Vec<String>,
    /// The config listing MCP servers (default: `./cordon.toml`, else the user's).
    pub config: Option<PathBuf>,
    /// Files the run reads as its own (the store, the policies, a file of answers, a session
    /// file), each with what it is: no read-write directory may hold one, nor the configs
    /// Cordon reads implicitly.
    pub kept: Vec<(String, PathBuf)>,
    /// Whether plans may use the web (the `Http` capability), sent through the broker.
    pub http: bool,
    /// Whether the web's requests may reach addresses on this machine or a private network
    /// that the allow-list names by number (a name must always lead to the internet).
    pub web_local: bool,
    /// The credential broker: it alone holds the vault's secrets, and it sends the web's
    /// requests. A front end gives one when there is a vault or `http` is asked for.
    pub broker: Option<Arc<Client>>,
    /// Where the `github-rest` environment's API is (default: GitHub's own).
    pub github_api: Option<String>,
    /// Whom the tools act for (`cordon serve`: the person who submitted the request). Tools
    /// that act for someone of their own (a simulated environment's user) refuse anyone else.
    pub principal: Option<String>,
}

/// The environment that is GitHub itself, over its REST API, rather than a simulation.
pub const GITHUB_REST: &str = "github-rest";

/// Open tools: the hosts, the policies declaring their tools, the principal they act for, and
/// the credential broker, if there is one.
#[derive(Debug)]
pub struct Tools {
    pub hosts: Hosts,
    pub policies: Vec<Source>,
    /// Whom `user()` names in the policies' labels.
    pub principal: String,
    /// What the outgoing-data check asks where the vault's secrets are; none without a vault.
    pub broker: Option<Arc<Client>>,
}

impl Tools {
    /// `hosts` with the policies they bring, acting for their principal (or `user`, where none
    /// of them acts for anyone).
    pub fn new(hosts: Hosts) -> Tools {
        let policies = hosts.policies().into_iter().map(|(name, text)| Source::new(name, text)).collect();
        let principal = hosts.principal().unwrap_or(cordon_fs::DEFAULT_PRINCIPAL).to_string();
        Tools { hosts, policies, principal, broker: None }
    }

    /// Opens what `choice` names, declared by the environments' own policies and `policies` (a
    /// policy declaring an environment's capability replaces that environment's). A server
    /// whose tools do not match the policies is an error here, before anything runs. The
    /// principal is the environments', else the config's `user`, else `user`.
    pub fn open(choice: &ToolChoice, policies: Vec<Source>) -> Result<Tools, Error> {
        refuse_writable_config(choice, &[])?;
        let config = match choice.servers.is_empty() {
            true => Config::default(),
            false => Config::find(choice.config.as_deref()).map_err(Error::Setup)?.0,
        };
        refuse_writable_config(choice, &given_secrets(choice, &config))?;
        let nothing_named =
            choice.envs.is_empty() && choice.dirs.is_empty() && choice.servers.is_empty() && !choice.http;
        let envs: Vec<&str> = match nothing_named {
            true => vec!["github"],
            false => choice.envs.iter().map(String::as_str).filter(|e| *e != GITHUB_REST).collect(),
        };
        let mut hosts = cordon_sim::hosts(&envs).map_err(Error::Setup)?;
        if choice.envs.iter().any(|e| e == GITHUB_REST) {
            let Some(broker) = &choice.broker else {
                return Err(Error::Setup(format!(
                    "--env {GITHUB_REST} needs the vault's `{TOKEN}`: cordon secrets add {TOKEN} --host api.github.com \
                     --scheme Bearer"
                )));
            };
            let api = choice.github_api.as_deref().unwrap_or(DEFAULT_API);
            hosts.add(Box::new(GitHubRest::open(broker.clone(), api).map_err(Error::Setup)?)).map_err(Error::Setup)?;
        }
        let principal = match (hosts.principal(), &choice.principal) {
            (Some(own), Some(asked)) if own != asked => {
                return Err(Error::Setup(format!("these tools act for `{own}`, so they cannot act for `{asked}`")));
            }
            (Some(own), _) => own.to_string(),
            (None, Some(asked)) => asked.clone(),
            (None, None) => config.user.clone().unwrap_or_else(|| cordon_fs::DEFAULT_PRINCIPAL.to_string()),
        };
        if !choice.dirs.is_empty() {
            let fs = Fs::open(&choice.dirs, &principal, FsLimits::default()).map_err(Error::Setup)?;
            hosts.add(Box::new(fs)).map_err(Error::Setup)?;
        }
        if choice.http {
            let Some(broker) = &choice.broker else {
                return Err(Error::Setup(
                    "the web is reached only through the credential broker, and none is given".into(),
                ));
            };
            let options = HttpOptions { local: choice.web_local, ..HttpOptions::default() };
            let http = HttpHost::open(broker.clone(), options).map_err(Error::Setup)?;
            hosts.add(Box::new(http)).map_err(Error::Setup)?;
        }
        if policies.is_empty() && !choice.servers.is_empty() {
            return Err(Error::Setup(
                "--mcp needs a --policy that declares the servers' tools (`cordon mcp import SERVER` writes one)"
                    .into(),
            ));
        }
        let policies = with_own_policies(&hosts, policies);
        if !choice.servers.is_empty() {
            let declared = declared(&policies);
            for name in &choice.servers {
                let server = config.server(name).map_err(Error::Setup)?;
                let connection = Connection::start(name, server, choice.broker.as_ref()).map_err(Error::Setup)?;
                let capabilities = server.capabilities(name).map_err(Error::Setup)?;
                let capabilities: Vec<&str> = capabilities.iter().map(String::as_str).collect();
                for host in McpHost::bind(connection, &capabilities, &declared).map_err(Error::Setup)? {
                    hosts.add(Box::new(host)).map_err(Error::Setup)?;
                }
            }
        }
        Ok(Tools { hosts, policies, principal, broker: choice.broker.clone() })
    }
}

/// The hosts' own policies (the environments', the filesystem's, the web's), but those declaring
/// a capability that one of `given` declares too (a policy of the user's own for it), and then
/// `given`: a `--policy` adds to the environments' policies and replaces only what it redeclares.
fn with_own_policies(hosts: &Hosts, given: Vec<Source>) -> Vec<Source> {
    let declared: Vec<String> = Source::parse_all(&given)
        .iter()
        .flat_map(|m| m.capabilities().map(str::to_string).collect::<Vec<_>>())
        .collect();
    let own: Vec<Source> = hosts.policies().into_iter().map(|(name, text)| Source::new(name, text)).collect();
    let modules = Source::parse_all(&own);
    let kept =
        own.into_iter().zip(&modules).filter(|(_, m)| !m.capabilities().any(|c| declared.iter().any(|d| d == c)));
    kept.map(|(source, _)| source).chain(given).collect()
}

/// What `policies` declare, as the checker resolves them, for the hosts to bind to. Of policies
/// with an error, what resolved: the check of any plan against them reports the error, before
/// anything runs.
fn declared(policies: &[Source]) -> Declarations {
    let mut sources = SourceMap::new();
    let files: Vec<FileId> = policies.iter().map(|p| sources.add(p.name.clone(), p.text.clone())).collect();
    cordon_types::declare(&sources, &files, &CheckOptions::default()).0
}

/// Refuses a read-write directory that holds a file Cordon reads as configuration (`cordon.toml`
/// here or in `~/.config/cordon`, the `--config` file) or as the run's own (`choice.kept`): a plan
/// writing there would change what a later run is allowed, or what it records.
fn refuse_writable_config(choice: &ToolChoice, programs: &[(String, PathBuf)]) -> Result<(), Error> {
    let mut files: Vec<(String, PathBuf)> = vec![("the config Cordon reads here".into(), PathBuf::from("cordon.toml"))];
    files.extend(programs.iter().cloned());
    // Where Cordon reads the user's config (`$XDG_CONFIG_HOME`, else `~/.config`), and the
    // second of these too, should the variable be set for one run and not the next.
    let implicit = cordon_mcp::config::user_config().into_iter();
    let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config/cordon/cordon.toml"));
    for config in implicit.chain(home) {
        files.push(("the user's config, which Cordon reads implicitly".into(), config));
    }
    if let Some(config) = &choice.config {
        files.push(("the config (--config)".into(), config.clone()));
    }
    files.extend(choice.kept.iter().cloned());
    for grant in choice.dirs.iter().filter(|g| g.mode == Mode::ReadWrite) {
        let dir = resolved(&grant.path);
        if let Some((what, file)) = files.iter().find(|(_, file)| resolved(file).starts_with(&dir)) {
            return Err(Error::Setup(format!(
                "--dir {}={}:rw would let a plan write {} ({what}), which Cordon reads and trusts: grant a \
                 directory that does not hold it, or grant this one read-only",
                grant.name,
                grant.path.display(),
                file.display()
            )));
        }
    }
    Ok(())
}

/// What the MCP servers `choice` names that are given vault secrets run: the program, the
/// arguments that are files, the folder it starts in. A plan that could change one would run
/// its own code with the secret.
fn given_secrets(choice: &ToolChoice, config: &Config) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    let path = std::env::var("PATH").ok();
    for name in &choice.servers {
        let Ok(server) = config.server(name) else { continue };
        if server.secrets.is_empty() {
            continue;
        }
        let what = format!("what the MCP server `{name}` runs, which is given vault secrets");
        let command = server.command.as_deref().and_then(|c| cordon_broker::resolve_program(c, path.as_deref()));
        let paths = command
            .into_iter()
            .map(PathBuf::from)
            .chain(server.args.iter().map(PathBuf::from).filter(|a| a.exists()))
            .chain(server.cwd.clone());
        files.extend(paths.map(|p| (what.clone(), p)));
    }
    files
}

/// `path` made absolute, with every symbolic link of the part that exists resolved (the rest,
/// not yet created, as written, without `.` or `..`).
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::env::current_dir().map_or_else(|_| path.to_path_buf(), |cwd| cwd.join(path));
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else { break };
        rest.push(name.to_owned());
        existing = parent;
    }
    let mut out = existing.canonicalize().unwrap_or_else(|_| existing.to_path_buf());
    for name in rest.into_iter().rev() {
        match Path::new(&name).components().next() {
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::CurDir) => {}
            _ => out.push(name),
        }
    }
    out
}
