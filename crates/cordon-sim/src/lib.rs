//! Simulated environments for Cordon: deterministic tool hosts whose state is loaded from data
//! files in the repository, for tests, demos and benchmarks.
//!
//! The environments: `github` (repositories and issues), `chat` (channels, direct messages and
//! the web), `shop` (a bank and a shop, behind the approval gate), `mail` (a mailbox, a
//! calendar and documents), `bank` (accounts, transfers, standing orders, statements and a
//! profile with a password) and `citations` (a trusted index of papers and the user's
//! bibliography).
//!
//! Each environment is a [`Host`] for the tools of one policy module, which it brings, and
//! exposes its state so that a test can check what a run did (did a secret get published?).
//! [`env`] finds an environment by name, for `cordon run --env NAME`; several serve one run
//! through the engine's `Hosts` (`--env github --env chat`), each its own capability. [`noninterference`] runs a program
//! against two GitHub states that differ only in protected data and compares what each run
//! published (for property tests and the `run` fuzz target).

/// The ways every environment is made and read: `builtin()` (its built-in data, the module's
/// `DATA`), `from_json` (a data file's text; a malformed or inconsistent file is an error saying
/// what is wrong), `from_path`, `user()` (the principal `user()` names in labels), `data()` and
/// `state_json()` (the whole state, for tests and the benchmark's checks). `$make` builds the
/// environment from its parsed data.
macro_rules! loaded_from_data {
    ($ty:ident, $make:expr) => {
        impl $ty {
            /// The environment with the built-in data.
            pub fn builtin() -> Result<$ty, String> {
                $ty::from_json(DATA)
            }

            /// Loads a state from JSON text; a malformed or inconsistent file is an error saying
            /// what is wrong.
            pub fn from_json(text: &str) -> Result<$ty, String> {
                let make: fn(Data) -> $ty = $make;
                Ok(make(data::parse(text)?))
            }

            /// Loads a state from a JSON data file.
            pub fn from_path(path: &std::path::Path) -> Result<$ty, String> {
                crate::load_data_file(path, $ty::from_json)
            }

            /// The principal the agent acts for: `user()` in labels.
            pub fn user(&self) -> &str {
                &self.data.user
            }

            /// The whole state, for tests and the benchmark's checks.
            pub fn data(&self) -> &Data {
                &self.data
            }

            /// The whole state as JSON (the data file's format).
            pub fn state_json(&self) -> serde_json::Value {
                crate::state_as_json(&self.data)
            }
        }
    };
}

pub mod bank;
mod call;
pub mod chat;
pub mod citations;
pub mod clock;
pub mod github;
pub mod mail;
pub mod noninterference;
pub mod shop;

use cordon_engine::{Host, Hosts};

pub use bank::Bank;
pub use chat::Chat;
pub use citations::Citations;
pub use clock::Clock;
pub use github::GitHub;
pub use mail::Mail;
pub use shop::Shop;

/// A simulated environment: a tool host serving one capability for its principal, with the
/// policy that declares its tools and a state a test can look at.
pub trait Environment: Host {
    /// The whole state as JSON, for assertions on what a run did.
    fn state_json(&self) -> serde_json::Value;
}

/// Implements [`Host`] and [`Environment`] for a simulated environment of module `$module`,
/// found by `$name`, acting for `$principal`.
macro_rules! environment {
    ($ty:ty, $name:literal, $module:ident, |$this:ident| $principal:expr) => {
        impl Host for $ty {
            fn kind(&self) -> &str {
                "environment"
            }

            fn name(&self) -> &str {
                $name
            }

            fn capability(&self) -> &str {
                $module::CAPABILITY
            }

            fn principal(&self) -> Option<&str> {
                let $this = self;
                $principal
            }

            fn policy(&self) -> Option<&str> {
                Some($module::POLICY)
            }
        }

        impl Environment for $ty {
            fn state_json(&self) -> serde_json::Value {
                <$ty>::state_json(self)
            }
        }
    };
}

environment!(GitHub, "github", github, |this| Some(this.user()));
environment!(Chat, "chat", chat, |this| Some(this.user()));
environment!(Shop, "shop", shop, |this| Some(this.user()));
environment!(Mail, "mail", mail, |this| Some(this.user()));
environment!(Bank, "bank", bank, |this| Some(this.user()));
environment!(Citations, "citations", citations, |this| Some(this.user()));
// A clock acts for no one: it joins the hosts of any principal.
environment!(Clock, "clock", clock, |_this| None);

/// The names [`env`] knows.
pub const NAMES: &[&str] = &["github", "chat", "shop", "mail", "citations", "bank", "clock"];

/// A fresh environment with its built-in data, by name.
pub fn env(name: &str) -> Result<Box<dyn Environment>, String> {
    match name {
        "github" => Ok(Box::new(GitHub::builtin()?)),
        "chat" => Ok(Box::new(Chat::builtin()?)),
        "shop" => Ok(Box::new(Shop::builtin()?)),
        "mail" => Ok(Box::new(Mail::builtin()?)),
        "citations" => Ok(Box::new(Citations::builtin()?)),
        "bank" => Ok(Box::new(Bank::builtin()?)),
        "clock" => Ok(Box::new(Clock::builtin()?)),
        _ => Err(format!("there is no environment `{name}`; the environments are: {}", NAMES.join(", "))),
    }
}

/// An environment by name, its state loaded from `data` (its data file's format).
pub fn env_with_data(name: &str, data: &str) -> Result<Box<dyn Environment>, String> {
    match name {
        "github" => Ok(Box::new(GitHub::from_json(data)?)),
        "chat" => Ok(Box::new(Chat::from_json(data)?)),
        "shop" => Ok(Box::new(Shop::from_json(data)?)),
        "mail" => Ok(Box::new(Mail::from_json(data)?)),
        "citations" => Ok(Box::new(Citations::from_json(data)?)),
        "bank" => Ok(Box::new(Bank::from_json(data)?)),
        _ => Err(format!(
            "there is no environment `{name}` with a data file; those with one: github, chat, shop, mail, citations, bank"
        )),
    }
}

/// The state of the environment `name` among `hosts`, as JSON, if it is one of them.
pub fn state_of(hosts: &Hosts, name: &str) -> Option<serde_json::Value> {
    match name {
        "github" => hosts.get::<GitHub>().map(GitHub::state_json),
        "chat" => hosts.get::<Chat>().map(Chat::state_json),
        "shop" => hosts.get::<Shop>().map(Shop::state_json),
        "mail" => hosts.get::<Mail>().map(Mail::state_json),
        "citations" => hosts.get::<Citations>().map(Citations::state_json),
        "bank" => hosts.get::<Bank>().map(Bank::state_json),
        _ => None,
    }
}

/// Fresh environments by name, in order, as the hosts of one run (`--env github --env chat`).
pub fn hosts(names: &[&str]) -> Result<Hosts, String> {
    let mut hosts = Hosts::new();
    for name in names {
        hosts.add(env(name)?)?;
    }
    Ok(hosts)
}

/// Reads an environment's data file and loads it with `from_json`; errors name the file.
pub(crate) fn load_data_file<E>(path: &std::path::Path, from_json: fn(&str) -> Result<E, String>) -> Result<E, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Checks a data file's ids: none empty, none listed twice; `what` names one ("the account").
pub(crate) fn unique_ids<'a>(ids: impl IntoIterator<Item = &'a str>, what: &str) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        if id.is_empty() {
            return Err(format!("{what} with an empty id"));
        }
        if !seen.insert(id) {
            return Err(format!("{what} `{id}` is listed twice"));
        }
    }
    Ok(())
}

/// An environment's state as JSON (its data file's format).
pub(crate) fn state_as_json(data: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(data).unwrap_or(serde_json::Value::Null)
}
