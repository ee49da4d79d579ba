//! The sessions a workspace's requests carry from one to the next: the linear values a plan hands
//! back and what is known of their measures (a session tainted by one request stays tainted in
//! the next). They live in the store under a name, where one request at a time may hold them;
//! a session may also be mirrored in a file the user can read, edit or delete.

use std::path::{Path, PathBuf};

use cordon_runtime::Sessions;
use cordon_store::{SessionLock, StoreError};

use crate::{Error, Storage};

/// Where a workspace keeps its sessions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionAt {
    /// In the store alone, under this name.
    Store(String),
    /// In this file and in the store's session named after the file's absolute path: the file,
    /// if it exists, is what the session holds when a request takes it (a user may have edited
    /// or removed it), and it is written back after.
    File(PathBuf),
}

impl SessionAt {
    /// The store's name of the session.
    pub fn name(&self) -> String {
        match self {
            SessionAt::Store(name) => name.clone(),
            SessionAt::File(path) => file_session_name(path),
        }
    }

    /// What the session holds now, without taking it (for a check, which changes nothing).
    pub fn peek(&self, store: &Storage) -> Result<Sessions, Error> {
        match self {
            SessionAt::File(path) if path.exists() => read_file(path),
            _ => {
                let state = store.store().load_session(&self.name()).map_err(|e| store.error(e))?;
                let Some(state) = state else { return Ok(Sessions::default()) };
                Sessions::from_json(&state.to_string())
                    .map_err(|e| Error::Setup(format!("the session `{}` in the store: {e}", self.name())))
            }
        }
    }

    /// Takes the session for one request: locks it in the store (failing with the store's "in
    /// use" error while another request holds it) and reads what it holds.
    pub(crate) fn take(&self, store: &Storage) -> Result<(Taken, Sessions), Error> {
        let taken =
            Taken { at: self.clone(), lock: store.store().lock_session(&self.name()).map_err(|e| store.error(e))? };
        let read = match self {
            // The file is what the session holds; without it the session starts empty.
            SessionAt::File(path) => {
                let sessions = if path.exists() { read_file(path) } else { Ok(Sessions::default()) };
                sessions.and_then(|s| taken.save_in_store(store, &s).map(|()| s))
            }
            SessionAt::Store(_) => self.peek(store),
        };
        match read {
            Ok(sessions) => Ok((taken, sessions)),
            Err(e) => {
                // Nothing ran: the session is given back as it was.
                let _ = store.store().unlock_session(taken.lock);
                Err(e)
            }
        }
    }
}

/// A session one request holds.
#[derive(Debug)]
pub(crate) struct Taken {
    at: SessionAt,
    lock: SessionLock,
}

impl Taken {
    /// The store's name of the session.
    pub(crate) fn name(&self) -> &str {
        self.lock.session()
    }

    /// Keeps `sessions` (in the file too, if it has one) and gives the session back.
    pub(crate) fn save_and_release(self, store: &Storage, sessions: &Sessions) -> Result<(), Error> {
        let saved = self.save(store, sessions);
        let released = store.store().unlock_session(self.lock).map_err(|e| store.error(e));
        saved.and(released)
    }

    fn save(&self, store: &Storage, sessions: &Sessions) -> Result<(), Error> {
        if let SessionAt::File(path) = &self.at {
            cordon_store::private::write_private(path, sessions.to_json().as_bytes()).map_err(|e| match e {
                StoreError::Io { path, error } => Error::Write { path, error },
                refused => Error::Setup(refused.to_string()),
            })?;
        }
        self.save_in_store(store, sessions)
    }

    fn save_in_store(&self, store: &Storage, sessions: &Sessions) -> Result<(), Error> {
        let state = serde_json::from_str(&sessions.to_json())
            .map_err(|e| Error::Setup(format!("the session could not be written as JSON: {e}")))?;
        store.store().save_session(&self.lock, &state).map_err(|e| store.error(e))
    }
}

/// A session file's sessions; the file must be the user's alone (`cordon_store::private`).
fn read_file(path: &Path) -> Result<Sessions, Error> {
    let read_error = |error| Error::Read { path: path.to_path_buf(), error };
    let file = cordon_store::private::read_private(path).map_err(|e| match e {
        StoreError::Io { path, error } => Error::Read { path, error },
        refused => Error::Setup(refused.to_string()),
    })?;
    let mut text = String::new();
    match file {
        Some(mut file) => std::io::Read::read_to_string(&mut file, &mut text).map_err(read_error)?,
        None => return Err(read_error(std::io::ErrorKind::NotFound.into())),
    };
    Sessions::from_json(&text).map_err(|e| Error::Setup(format!("`{}`: {e}", path.display())))
}

/// The store's name of a session file: `file:` and its absolute path, so that two ways of
/// writing the same path name one session.
pub fn file_session_name(path: &Path) -> String {
    let absolute = match (path.parent(), path.file_name()) {
        (Some(dir), Some(file)) => {
            let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
            dir.canonicalize().map_or_else(|_| path.to_path_buf(), |dir| dir.join(file))
        }
        _ => path.to_path_buf(),
    };
    format!("file:{}", absolute.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_file_is_named_by_its_absolute_path() {
        let here = std::env::current_dir().and_then(|d| d.canonicalize()).expect("the working directory");
        let expect = format!("file:{}", here.join("s.json").display());
        assert_eq!(file_session_name(Path::new("s.json")), expect);
        assert_eq!(file_session_name(Path::new("./s.json")), expect);
    }
}
