//! The store as the commands use it: where it is (`--store`, `--durable`), a session file
//! imported into the store's session and exported back, and `cordon store gc`.
//!
//! `run`, `ask` and `chat` open the store (creating it) before anything runs, so a store that
//! cannot be opened stops them before any effect. The `audit` and `store` commands only read or
//! tidy a store, so they refuse to create one.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cordon_runtime::Sessions;
use cordon_store::{Durability, SessionLock, SqliteStore, Store};

use crate::{Error, Report};

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
        cordon_store::location(self.path.as_deref()).map_err(|error| Error::Store { path: None, error })
    }

    /// Opens the store, creating it if there is none yet.
    pub fn open(&self) -> Result<SqliteStore, Error> {
        let path = self.location()?;
        SqliteStore::open(&path, self.durability()).map_err(|error| Error::Store { path: Some(path), error })
    }

    /// Opens an existing store: one that reads or tidies a store has nothing to do with a new
    /// one.
    pub fn open_existing(&self) -> Result<SqliteStore, Error> {
        let path = self.location()?;
        if !path.exists() {
            return Err(Error::Usage(format!(
                "no store at `{}`: nothing was recorded there (`cordon run`, `ask` and `chat` create it)",
                path.display()
            )));
        }
        SqliteStore::open(&path, self.durability()).map_err(|error| Error::Store { path: Some(path), error })
    }
}

/// A session file taken for a run: the store's session of the same name is locked (one run at a
/// time) until it is given back.
#[derive(Debug)]
pub struct SessionFile {
    path: PathBuf,
    lock: SessionLock,
}

impl SessionFile {
    /// Locks the store's session for the file at `path` and imports the file into it: the
    /// file, if it exists, is what the session holds (a user may have edited or reset it);
    /// without it the session starts empty. Fails with the store's "in use" error while another
    /// run holds the session.
    pub fn take(
        store: &SqliteStore,
        path: &Path,
        read: &dyn Fn(&Path) -> io::Result<String>,
    ) -> Result<(SessionFile, Sessions), Error> {
        let name = session_name(path);
        let lock = store.lock_session(&name).map_err(|error| store_error(store, error))?;
        let file = SessionFile { path: path.to_path_buf(), lock };
        let imported = (|| {
            let sessions = if path.exists() {
                let text = read(path).map_err(|error| Error::Read { path: path.to_path_buf(), error })?;
                Sessions::from_json(&text).map_err(|e| Error::Usage(format!("`{}`: {e}", path.display())))?
            } else {
                Sessions::default()
            };
            file.save_in_store(store, &sessions)?;
            Ok(sessions)
        })();
        match imported {
            Ok(sessions) => Ok((file, sessions)),
            Err(e) => {
                // Nothing ran: the session is given back as it was.
                let _ = store.unlock_session(file.lock);
                Err(e)
            }
        }
    }

    /// The store's name of the session: the file's absolute path.
    pub fn name(&self) -> &str {
        self.lock.session()
    }

    /// Exports `sessions` to the file and saves them in the store's session.
    pub fn save(&self, store: &SqliteStore, sessions: &Sessions) -> Result<(), Error> {
        std::fs::write(&self.path, sessions.to_json())
            .map_err(|error| Error::Write { path: self.path.clone(), error })?;
        self.save_in_store(store, sessions)
    }

    fn save_in_store(&self, store: &SqliteStore, sessions: &Sessions) -> Result<(), Error> {
        let state = serde_json::from_str(&sessions.to_json())
            .map_err(|e| Error::Usage(format!("the session could not be written as JSON: {e}")))?;
        store.save_session(&self.lock, &state).map_err(|error| store_error(store, error))
    }

    /// Gives the session back for the next run.
    pub fn release(self, store: &SqliteStore) -> Result<(), Error> {
        store.unlock_session(self.lock).map_err(|error| store_error(store, error))
    }
}

/// `file:` and the file's absolute path (its directory resolved, so `./s.json` and `s.json` are
/// one session).
fn session_name(path: &Path) -> String {
    let absolute = match (path.parent(), path.file_name()) {
        (Some(dir), Some(file)) => {
            let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
            dir.canonicalize().map_or_else(|_| path.to_path_buf(), |dir| dir.join(file))
        }
        _ => path.to_path_buf(),
    };
    format!("file:{}", absolute.display())
}

/// An error of the store at hand, with its path.
pub fn store_error(store: &SqliteStore, error: cordon_store::StoreError) -> Error {
    Error::Store { path: Some(store.path().to_path_buf()), error }
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
            let store = store.open_existing()?;
            let report = store.gc(*older_than).map_err(|error| store_error(&store, error))?;
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

    #[test]
    fn a_session_is_named_by_its_files_absolute_path() {
        let here = std::env::current_dir().and_then(|d| d.canonicalize()).expect("the working directory");
        let expect = format!("file:{}", here.join("s.json").display());
        assert_eq!(session_name(Path::new("s.json")), expect);
        assert_eq!(session_name(Path::new("./s.json")), expect);
    }
}
