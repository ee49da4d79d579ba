//! Simulated environments for Cordon: deterministic tool hosts whose state is loaded from data
//! files in the repository, for tests, demos and benchmarks.
//!
//! The environments: `github` (repositories and issues), `chat` (channels, direct messages and
//! the web), `shop` (a bank and a shop, behind the approval gate) and `mail` (a mailbox, a
//! calendar and documents).
//!
//! Each environment implements [`ToolHost`] for the tools of one policy module and exposes its
//! state so that a test can check what a run did (did a secret get published?). [`env`] finds
//! an environment by name, for `cordon run --env NAME`; a [`World`] is several at once
//! (`--env github --env chat`), each serving its own capability. [`noninterference`] runs a program
//! against two GitHub states that differ only in protected data and compares what each run
//! published (for property tests and the `run` fuzz target).

mod call;
pub mod chat;
pub mod clock;
pub mod github;
pub mod mail;
pub mod noninterference;
pub mod shop;

use cordon_runtime::effect::ToolHost;

pub use chat::Chat;
pub use clock::Clock;
pub use github::GitHub;
pub use mail::Mail;
pub use shop::Shop;

/// A simulated environment: a tool host with a principal and an inspectable state.
pub trait Environment: ToolHost {
    /// The name `env` finds it by.
    fn name(&self) -> &'static str;

    /// The capability whose tools it performs.
    fn capability(&self) -> &'static str;

    /// The principal the agent acts for (`user()` in the policy's labels).
    fn principal(&self) -> &str;

    /// The source of the policy module that declares this environment's tools.
    fn policy(&self) -> &'static str;

    /// The whole state as JSON, for assertions on what a run did.
    fn state_json(&self) -> serde_json::Value;
}

impl Environment for GitHub {
    fn name(&self) -> &'static str {
        "github"
    }

    fn capability(&self) -> &'static str {
        github::CAPABILITY
    }

    fn principal(&self) -> &str {
        self.user()
    }

    fn policy(&self) -> &'static str {
        github::POLICY
    }

    fn state_json(&self) -> serde_json::Value {
        GitHub::state_json(self)
    }
}

impl Environment for Chat {
    fn name(&self) -> &'static str {
        "chat"
    }

    fn capability(&self) -> &'static str {
        chat::CAPABILITY
    }

    fn principal(&self) -> &str {
        self.user()
    }

    fn policy(&self) -> &'static str {
        chat::POLICY
    }

    fn state_json(&self) -> serde_json::Value {
        Chat::state_json(self)
    }
}

impl Environment for Shop {
    fn name(&self) -> &'static str {
        "shop"
    }

    fn capability(&self) -> &'static str {
        shop::CAPABILITY
    }

    fn principal(&self) -> &str {
        self.user()
    }

    fn policy(&self) -> &'static str {
        shop::POLICY
    }

    fn state_json(&self) -> serde_json::Value {
        Shop::state_json(self)
    }
}

impl Environment for Mail {
    fn name(&self) -> &'static str {
        "mail"
    }

    fn capability(&self) -> &'static str {
        mail::CAPABILITY
    }

    fn principal(&self) -> &str {
        self.user()
    }

    fn policy(&self) -> &'static str {
        mail::POLICY
    }

    fn state_json(&self) -> serde_json::Value {
        Mail::state_json(self)
    }
}

impl Environment for Clock {
    fn name(&self) -> &'static str {
        "clock"
    }

    fn capability(&self) -> &'static str {
        clock::CAPABILITY
    }

    /// A clock acts for no one: it joins a world of any principal.
    fn principal(&self) -> &str {
        ""
    }

    fn policy(&self) -> &'static str {
        clock::POLICY
    }

    fn state_json(&self) -> serde_json::Value {
        Clock::state_json(self)
    }
}

/// The names [`env`] knows.
pub const NAMES: &[&str] = &["github", "chat", "shop", "mail", "clock"];

/// A fresh environment with its built-in data, by name.
pub fn env(name: &str) -> Result<Box<dyn Environment>, String> {
    match name {
        "github" => Ok(Box::new(GitHub::builtin()?)),
        "chat" => Ok(Box::new(Chat::builtin()?)),
        "shop" => Ok(Box::new(Shop::builtin()?)),
        "mail" => Ok(Box::new(Mail::builtin()?)),
        "clock" => Ok(Box::new(Clock::builtin()?)),
        _ => Err(format!("there is no environment `{name}`; the environments are: {}", NAMES.join(", "))),
    }
}

/// Several environments in one run, all acting for one principal: each serves its own
/// capability, and each policy declares its part of the entry (composed as
/// `cordon_syntax::entry` says).
pub struct World {
    envs: Vec<Box<dyn Environment>>,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.envs.iter().map(|e| e.name())).finish()
    }
}

impl World {
    /// The environments named, fresh, in order: at least one, none twice, one principal.
    pub fn open(names: &[String]) -> Result<World, String> {
        if names.is_empty() {
            return Err(format!("name an environment; the environments are: {}", NAMES.join(", ")));
        }
        let mut world = World::empty();
        for name in names {
            world.add(env(name)?)?;
        }
        Ok(world)
    }

    /// A world with no environment yet, for [`World::add`].
    pub fn empty() -> World {
        World { envs: Vec::new() }
    }

    /// Adds an environment, fresh or made elsewhere (the filesystem with the directories the
    /// user granted): none twice, one principal.
    pub fn add(&mut self, next: Box<dyn Environment>) -> Result<(), String> {
        let name = next.name();
        if self.envs.iter().any(|e| e.name() == name) {
            return Err(format!("the environment `{name}` is named twice"));
        }
        // An environment that acts for no one (`""`: the clock) joins any world.
        if let Some(first) = self
            .envs
            .iter()
            .find(|e| !e.principal().is_empty())
            .filter(|e| !next.principal().is_empty() && e.principal() != next.principal())
        {
            return Err(format!(
                "`{}` acts for {} and `{name}` for {}: one run acts for one principal",
                first.name(),
                first.principal(),
                next.principal()
            ));
        }
        self.envs.push(next);
        Ok(())
    }

    /// The principal every environment acts for (`""` in a world where none acts for anyone).
    pub fn principal(&self) -> &str {
        self.envs.iter().map(|e| e.principal()).find(|p| !p.is_empty()).unwrap_or("")
    }

    /// Each environment's policy, as a file name to show and its source.
    pub fn policies(&self) -> Vec<(String, &'static str)> {
        self.envs.iter().map(|e| (format!("<{} policy>", e.name()), e.policy())).collect()
    }

    /// The capabilities the environments serve.
    pub fn capabilities(&self) -> Vec<&'static str> {
        self.envs.iter().map(|e| e.capability()).collect()
    }

    /// The environments as the tool hosts of one run, each serving its capability.
    pub fn hosts(&mut self) -> cordon_engine::Hosts<'_> {
        let mut hosts = cordon_engine::Hosts::new();
        for env in &mut self.envs {
            let capability = env.capability();
            hosts = hosts.serve(capability, env.as_mut());
        }
        hosts
    }
}

/// Reads an environment's data file and loads it with `from_json`; errors name the file.
pub(crate) fn load_data_file<E>(path: &std::path::Path, from_json: fn(&str) -> Result<E, String>) -> Result<E, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// An environment's state as JSON (its data file's format).
pub(crate) fn state_as_json(data: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(data).unwrap_or(serde_json::Value::Null)
}
