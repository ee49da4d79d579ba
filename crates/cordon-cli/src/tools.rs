//! The flags that say what a run's tools are: the policies (`--policy`), the simulated
//! environments (`--env`), the directories the user grants (`--dir`), and real MCP servers
//! (`--mcp`, from `cordon.toml` or `--config`). `cordon::Tools::open` opens them.

use std::io;
use std::path::{Path, PathBuf};

use cordon::api::Grant;
use cordon::{Source, ToolChoice, Tools};

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

impl ToolArgs {
    /// Reads the policies and opens the environments and servers (`cordon::Tools::open`); a
    /// server whose tools do not match the policy is an error here, before anything runs.
    pub fn open(&self, read: &dyn Fn(&Path) -> io::Result<String>) -> Result<Tools, Error> {
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
        };
        Ok(Tools::open(&choice, policies)?)
    }
}
