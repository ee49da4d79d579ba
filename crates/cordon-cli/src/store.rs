//! The store as the commands use it: where it is (`--store`, `--durable`), and `cordon store gc`.
//!
//! `run`, `ask` and `chat` open the store (creating it) before anything runs, so a store that
//! cannot be opened stops them before any effect. The `audit` and `store` commands only read or
//! tidy a store, so they refuse to create one.

use std::path::PathBuf;
use std::time::Duration;

use cordon::Storage;
use cordon::api::store::Durability;

use crate::outcome::{Error, Report};

/// Where the store is and what its commits survive.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// The store: an SQLite file holding requests, transcripts, sessions and the audit log.
    /// Default: $CORDON_STORE, else $XDG_DATA_HOME/cordon/cordon.db, else
    /// ~/.local/share/cordon/cordon.db
    #[arg(long = "store", value_name = "PATH")]
    pub path: Option<PathBuf>,

    /// Sync every commit to disk, so what was recorded survives a power loss too (slower: a
    /// disk sync per row); by default it survives any crash of the process
    #[arg(long)]
    pub durable: bool,
}

impl StoreArgs {
    fn durability(&self) -> Durability {
        if self.durable { Durability::SurvivesPowerLoss } else { Durability::SurvivesCrash }
    }

    /// The store's path, from `--store` or the environment.
    pub fn location(&self) -> Result<PathBuf, Error> {
        cordon::api::store::location(self.path.as_deref())
            .map_err(|error| Error::Cordon(cordon::Error::Store { path: None, error }))
    }

    /// Opens the store, creating it if there is none yet.
    pub fn open(&self) -> Result<Storage, Error> {
        Ok(Storage::open(&self.location()?, self.durability())?)
    }

    /// Opens an existing store: one that reads or tidies a store has nothing to do with a new
    /// one.
    pub fn open_existing(&self) -> Result<Storage, Error> {
        let path = self.location()?;
        if !path.exists() {
            return Err(Error::Usage(format!(
                "no store at `{}`: nothing was recorded there (`cordon run`, `ask` and `chat` create it)",
                path.display()
            )));
        }
        Ok(Storage::open(&path, self.durability())?)
    }
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Remove the transcripts of old requests; audit rows are never removed
    Gc {
        #[command(flatten)]
        store: StoreArgs,

        /// Age of the requests whose transcripts go: a number and a unit, s, m, h, d or w
        /// (`30d`)
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: Duration,
    },
}

pub fn run(command: &Command) -> Result<Report, Error> {
    match command {
        Command::Gc { store, older_than } => {
            let storage = store.open_existing()?;
            let report = storage.store().gc(*older_than).map_err(|error| storage.error(error))?;
            let stdout = format!(
                "removed the transcripts of {} request{} ({} event{}); audit rows are kept\n",
                report.requests,
                if report.requests == 1 { "" } else { "s" },
                report.events,
                if report.events == 1 { "" } else { "s" },
            );
            Ok(Report { stdout, accepted: true, error: None })
        }
    }
}

/// `30d`, `12h`, `90m`, `45s`, `2w`.
fn parse_age(text: &str) -> Result<Duration, String> {
    let bad = || format!("`{text}` is not an age: write a number and a unit, s, m, h, d or w (`30d`)");
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(bad()),
    };
    number.checked_mul(seconds).map(Duration::from_secs).ok_or_else(|| format!("`{text}` is too long an age"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_have_a_unit() {
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_age("90m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_age("0s"), Ok(Duration::ZERO));
        for bad in ["30", "d", "", "3 d", "-1d", "1y", "1.5d"] {
            assert!(parse_age(bad).is_err(), "{bad}");
        }
        assert!(parse_age("99999999999999999w").is_err_and(|e| e.contains("too long")));
    }
}
