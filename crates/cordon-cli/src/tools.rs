//! What a run's tools are: the policies (`--policy`), the simulated environments (`--env`), the
//! directories the user grants (`--dir`, served as the `Fs` capability), and real MCP servers
//! (`--mcp`, from `cordon.toml` or `--config`). Each environment and each server serves one
//! capability; a server's tools are bound to the capability as the policies declare it, before
//! anything runs. Without `--env`, `--dir` or `--mcp`, the run uses the simulated GitHub. All of
//! them act for one principal: the environments', else the config's `user`, else `user`.

use std::io;
use std::path::{Path, PathBuf};

use cordon_envs::World;
use cordon_fs::{Fs, FsLimits, Grant};
use cordon_mcp::{Config, Connection, McpHost};

use crate::Error;

/// The flags that choose a run's tools.
#[derive(Debug, Clone, clap::Args)]
pub struct ToolArgs {
    /// A policy module; repeat for several. Defaults to the environments' own policies
    #[arg(long = "policy", value_name = "FILE")]
    pub policies: Vec<PathBuf>,

    /// A simulated environment whose tools the plan calls; repeat for several (`--env github
    /// --env chat`), each serving its own capability. `github` when no `--env`, `--dir` or
    /// `--mcp` is given
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

    /// The config listing MCP servers (default: ./cordon.toml, else ~/.config/cordon/cordon.toml)
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// A run's tools, open.
pub struct Tools {
    world: World,
    servers: Vec<McpHost>,
    principal: String,
    /// The policy modules: each file's name and text.
    pub policies: Vec<(String, String)>,
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tools").field("world", &self.world).field("servers", &self.servers.len()).finish()
    }
}

impl ToolArgs {
    /// Reads the policies and opens the environments and servers; a server whose tools do not
    /// match the policy is an error here, before anything runs.
    pub fn open(&self, read: &dyn Fn(&Path) -> io::Result<String>) -> Result<Tools, Error> {
        let mut policies = Vec::new();
        for path in &self.policies {
            let text = read(path).map_err(|error| Error::Read { path: path.clone(), error })?;
            policies.push((path.display().to_string(), text));
        }
        let config = if self.servers.is_empty() {
            Config::default()
        } else {
            Config::find(self.config.as_deref()).map_err(Error::Usage)?.0
        };
        let nothing_named = self.envs.is_empty() && self.dirs.is_empty() && self.servers.is_empty();
        let mut world = match nothing_named {
            true => World::open(&["github".to_string()]),
            false if self.envs.is_empty() => Ok(World::empty()),
            false => World::open(&self.envs),
        }
        .map_err(Error::Usage)?;
        let principal = match world.principal() {
            "" => config.user.clone().unwrap_or_else(|| cordon_fs::DEFAULT_PRINCIPAL.to_string()),
            p => p.to_string(),
        };
        if !self.dirs.is_empty() {
            let fs = Fs::open(&self.dirs, &principal, FsLimits::default()).map_err(Error::Usage)?;
            world.add(Box::new(fs)).map_err(Error::Usage)?;
        }
        if policies.is_empty() {
            if !self.servers.is_empty() {
                return Err(Error::Usage(
                    "--mcp needs a --policy that declares the servers' tools (`cordon mcp import SERVER` writes one)"
                        .into(),
                ));
            }
            policies.extend(world.policies().into_iter().map(|(name, text)| (name, text.to_string())));
        }
        let modules: Vec<cordon_syntax::ast::Module> = {
            let mut sources = cordon_syntax::SourceMap::new();
            policies
                .iter()
                .map(|(name, text)| cordon_syntax::parse(sources.add(name.clone(), text.clone()), text).module)
                .collect()
        };
        let mut servers = Vec::new();
        for name in &self.servers {
            if self.servers.iter().filter(|s| *s == name).count() > 1 {
                return Err(Error::Usage(format!("the MCP server `{name}` is named twice")));
            }
            let server = config.server(name).map_err(Error::Usage)?;
            let capability = server.capability(name);
            let served = world.capabilities().contains(&capability.as_str())
                || servers.iter().any(|s: &McpHost| s.capability() == capability);
            if served {
                return Err(Error::Usage(format!(
                    "the MCP server `{name}` would serve `{capability}`, which another environment or server serves"
                )));
            }
            let connection = Connection::start(name, server).map_err(Error::Usage)?;
            servers.push(McpHost::bind(connection, &capability, &modules).map_err(Error::Usage)?);
        }
        Ok(Tools { world, servers, principal, policies })
    }
}

impl Tools {
    /// The principal every tool acts for: the environments', else the config's `user`, else
    /// `user`.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// The tool hosts of one run, each serving its capability.
    pub fn hosts(&mut self) -> cordon_engine::Hosts<'_> {
        let mut hosts = self.world.hosts();
        for server in &mut self.servers {
            let capability = server.capability().to_string();
            hosts = hosts.serve(&capability, server);
        }
        hosts
    }
}
