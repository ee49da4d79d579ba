//! What a workspace's plans may call: simulated environments by name, the directories the user
//! grants (served as the `Fs` capability), and real MCP servers from the user's config, opened
//! and bound before anything runs, as one set of hosts; the policies that declare their tools;
//! and the principal they all act for.

use std::path::PathBuf;

use cordon_engine::Hosts;
use cordon_fs::{Fs, FsLimits, Grant};
use cordon_mcp::{Config, Connection, McpHost};

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
}

/// Open tools: the hosts, the policies declaring their tools, and the principal they act for.
#[derive(Debug)]
pub struct Tools {
    pub hosts: Hosts,
    pub policies: Vec<Source>,
    /// Whom `user()` names in the policies' labels.
    pub principal: String,
}

impl Tools {
    /// `hosts` with the policies they bring, acting for their principal (or `user`, where none
    /// of them acts for anyone).
    pub fn new(hosts: Hosts) -> Tools {
        let policies = hosts.policies().into_iter().map(|(name, text)| Source::new(name, text)).collect();
        let principal = hosts.principal().unwrap_or(cordon_fs::DEFAULT_PRINCIPAL).to_string();
        Tools { hosts, policies, principal }
    }

    /// Opens what `choice` names, declared by `policies` (without any, the environments' own
    /// policies). A server whose tools do not match the policies is an error here, before
    /// anything runs. The principal is the environments', else the config's `user`, else `user`.
    pub fn open(choice: &ToolChoice, policies: Vec<Source>) -> Result<Tools, Error> {
        let config = match choice.servers.is_empty() {
            true => Config::default(),
            false => Config::find(choice.config.as_deref()).map_err(Error::Setup)?.0,
        };
        let nothing_named = choice.envs.is_empty() && choice.dirs.is_empty() && choice.servers.is_empty();
        let envs: Vec<&str> = match nothing_named {
            true => vec!["github"],
            false => choice.envs.iter().map(String::as_str).collect(),
        };
        let mut hosts = cordon_sim::hosts(&envs).map_err(Error::Setup)?;
        let principal = match hosts.principal() {
            Some(p) => p.to_string(),
            None => config.user.clone().unwrap_or_else(|| cordon_fs::DEFAULT_PRINCIPAL.to_string()),
        };
        if !choice.dirs.is_empty() {
            let fs = Fs::open(&choice.dirs, &principal, FsLimits::default()).map_err(Error::Setup)?;
            hosts.add(Box::new(fs)).map_err(Error::Setup)?;
        }
        let policies = match policies.is_empty() {
            false => policies,
            true if !choice.servers.is_empty() => {
                return Err(Error::Setup(
                    "--mcp needs a --policy that declares the servers' tools (`cordon mcp import SERVER` writes one)"
                        .into(),
                ));
            }
            true => hosts.policies().into_iter().map(|(name, text)| Source::new(name, text)).collect(),
        };
        if !choice.servers.is_empty() {
            let modules = Source::parse_all(&policies);
            for name in &choice.servers {
                let server = config.server(name).map_err(Error::Setup)?;
                let connection = Connection::start(name, server).map_err(Error::Setup)?;
                let host = McpHost::bind(connection, &server.capability(name), &modules).map_err(Error::Setup)?;
                hosts.add(Box::new(host)).map_err(Error::Setup)?;
            }
        }
        Ok(Tools { hosts, policies, principal })
    }
}
