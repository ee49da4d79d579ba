//! The flags that say what a run's tools are: the policies (`--policy`), the simulated
//! environments (`--env`), the directories the user grants (`--dir`), the web (`--web`, through
//! the credential broker, `--broker`), and real MCP servers (`--mcp`, from `cordon.toml` or
//! `--config`). `cordon::Tools::open` opens them.

use std::io;
use std::path::{Path, PathBuf};

use cordon::api::Grant;
use cordon::{Source, ToolChoice, Tools};

use crate::approve::ApproveArgs;
use crate::outcome::Error;
use crate::store::StoreArgs;

/// The flags that choose a run's tools.
#[derive(Debug, Clone, clap::Args)]
pub struct ToolArgs {
    /// A policy module; repeat for several. Added to the environments' own policies; one that
    /// declares an environment's capability replaces that environment's policy
    #[arg(long = "policy", value_name = "FILE")]
    pub policies: Vec<PathBuf>,

    /// A simulated environment whose tools the plan calls; repeat for several (`--env github
    /// --env chat`), each serving its own capability. `github` when no `--env`, `--dir` or
    /// `--mcp` is given. `github-rest` is GitHub itself, through the credential broker with the
    /// vault's GITHUB_TOKEN (at $CORDON_GITHUB_API, else https://api.github.com/)
    #[arg(long = "env", value_name = "NAME")]
    pub envs: Vec<String>,

    /// A directory the plan may use, as NAME=PATH (read-only) or NAME=PATH:rw; repeat for
    /// several. The plan reaches it as `fs.root("NAME")`, and nothing outside it
    #[arg(long = "dir", value_name = "NAME=PATH[:rw]", value_parser = Grant::parse)]
    pub dirs: Vec<Grant>,

    /// A real MCP server, by its name in the config; repeat for several. Its tools serve the
    /// capability its entry names, as a `--policy` declares them
    #[arg(long = "mcp", value_name = "SERVER")]
    pub servers: Vec<String>,

    /// The config listing MCP servers (default: ./cordon.toml, else
    /// $XDG_CONFIG_HOME/cordon/cordon.toml, else ~/.config/cordon/cordon.toml); or an mcpServers
    /// JSON file, or a Codex config.toml
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The web: the plan gets `http: Http` (policies/http.cord, or a `--policy` with your own
    /// allow-list), its requests sent by the credential broker
    #[arg(long)]
    pub web: bool,

    /// Let the web's requests reach addresses on this machine or its private network that the
    /// allow-list names by number (`http://127.0.0.1:8080/`); by default only the internet
    #[arg(long, requires = "web")]
    pub web_local: bool,

    /// The credential broker to use, listening at this socket (`cordon broker --socket PATH`);
    /// without it, one is started for this command when there is a vault or `--web`
    #[arg(long, value_name = "SOCKET")]
    pub broker: Option<PathBuf>,
}

impl ToolArgs {
    /// Reads the policies, starts (or reaches) the credential broker where one is needed (a
    /// vault beside `store`, or `--web`), and opens the environments and servers
    /// (`cordon::Tools::open`); a server whose tools do not match the policy is an error here,
    /// before anything runs, and so is a read-write `--dir` holding a policy, a config or one
    /// of the `kept` files (see [`kept`]).
    pub fn open(
        &self,
        read: &dyn Fn(&Path) -> io::Result<String>,
        kept: Vec<(String, PathBuf)>,
        store: &Path,
    ) -> Result<Tools, Error> {
        self.open_for(read, kept, store, None)
    }

    /// As [`ToolArgs::open`], the tools acting for `principal` where one is given (see
    /// `cordon::ToolChoice::principal`).
    pub fn open_for(
        &self,
        read: &dyn Fn(&Path) -> io::Result<String>,
        kept: Vec<(String, PathBuf)>,
        store: &Path,
        principal: Option<&str>,
    ) -> Result<Tools, Error> {
        let mut policies = Vec::new();
        for path in &self.policies {
            let text = read(path).map_err(|error| cordon::Error::Read { path: path.clone(), error })?;
            policies.push(Source::new(path.display().to_string(), text));
        }
        let choice = ToolChoice {
            envs: self.envs.clone(),
            dirs: self.dirs.clone(),
            servers: self.servers.clone(),
            config: self.config.clone(),
            kept: self.policies.iter().map(|p| ("a policy (--policy)".to_string(), p.clone())).chain(kept).collect(),
            http: self.web,
            web_local: self.web_local,
            github_api: std::env::var("CORDON_GITHUB_API").ok().filter(|v| !v.is_empty()),
            broker: crate::broker::for_requests(self.broker.as_deref(), store, self.web).map_err(Error::from)?,
            principal: principal.map(str::to_string),
        };
        Ok(Tools::open(&choice, policies)?)
    }
}

/// The files a run reads as its own besides the policies: the store, the file of answers
/// (`--approve FILE`), the session file. No read-write `--dir` may hold one.
pub fn kept(store: &StoreArgs, approve: &ApproveArgs, session: Option<&Path>) -> Vec<(String, PathBuf)> {
    let mut kept = Vec::new();
    if let Ok(path) = store.location() {
        kept.push(("the store".to_string(), path));
    }
    if let Some(file) = approve.approve.as_deref().filter(|a| !matches!(*a, "none" | "all")) {
        kept.push(("the answers to the cards (--approve)".to_string(), PathBuf::from(file)));
    }
    if let Some(path) = session {
        kept.push(("the session file (--session)".to_string(), path.to_path_buf()));
    }
    kept
}
