//! The one error type of the store. A broken hash chain is not an error: `verify` reports it as
//! data (`Verdict::Broken`); errors are what stops an operation.

use std::fmt;
use std::path::PathBuf;

use rusqlite::ErrorCode;

use crate::chain::BadRow;
use crate::grant::GrantId;
use crate::request::RequestId;

#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// Opening the store at `path` failed; `cause` says why.
    Open {
        path: PathBuf,
        cause: Box<StoreError>,
    },
    /// The file is not an SQLite database (garbage, encrypted, or truncated in its header).
    NotADatabase {
        detail: String,
    },
    /// An SQLite database, but not one this crate made.
    Foreign {
        reason: String,
    },
    /// SQLite found the file damaged.
    Corrupt {
        detail: String,
    },
    /// The store was written by a newer version of Cordon.
    TooNew {
        found: u32,
        supported: u32,
    },
    /// Another process kept the store busy for longer than the busy timeout.
    Busy {
        detail: String,
    },
    /// Any other database failure.
    Sqlite(rusqlite::Error),
    /// Connecting to a PostgreSQL store failed, or it is not one this crate can use; `to` names
    /// the server, database and user (never a password), `cause` says why.
    Connect {
        to: String,
        cause: Box<StoreError>,
    },
    /// Any other failure of PostgreSQL, or of the connection to it.
    Postgres(postgres::Error),
    /// Reading or writing a file.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A file Cordon keeps is not the user's alone (owned or writable by someone else, in a
    /// directory someone else can change, or a symbolic link): it is not used.
    NotPrivate {
        path: PathBuf,
        reason: String,
    },
    /// No path was given and neither `CORDON_STORE`, `XDG_DATA_HOME` nor `HOME` says where.
    NoLocation,
    /// The session is locked by a live process.
    SessionBusy {
        session: String,
        pid: u32,
        since_ms: i64,
    },
    /// The lock given is no longer the session's (it was broken and taken by another run).
    LockLost {
        session: String,
    },
    NoSuchRequest(RequestId),
    NoSuchGrant(GrantId),
    /// This kind of audit row is written only by its own method (`begin_effect`, ...).
    ReservedKind(String),
    /// A JSON value could not be written, or a stored one read.
    Json(String),
    /// The chain is broken where an operation needs it intact (archiving, appending after a
    /// malformed head).
    ChainBroken(BadRow),
    /// Archiving: there is nothing up to the given row to archive, or it is past the head.
    NothingToArchive {
        through: u64,
        first: u64,
        head: u64,
    },
    /// The archive file is not one this crate writes.
    NotAnArchive {
        path: PathBuf,
        reason: String,
    },
    /// The archive written did not verify, so no row was removed from the store.
    ArchiveUnverified {
        path: PathBuf,
        reason: String,
    },
    /// The store changed while archiving (another archive ran): nothing was removed.
    ArchiveRaced,
    /// A worker's lease on a background run was taken over by another worker (it ran out).
    LeaseLost {
        run: crate::queue::RunId,
    },
    /// A person of this name may sign in already.
    UserExists(String),
    /// This store cannot do what was asked (yet); the text says what, and what to do instead.
    Unsupported(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Open { path, cause } => write!(f, "cannot open the store at {}: {cause}", path.display()),
            StoreError::NotADatabase { detail } => write!(f, "the file is not an SQLite database ({detail})"),
            StoreError::Foreign { reason } => write!(f, "the database is not a Cordon store: {reason}"),
            StoreError::Corrupt { detail } => write!(f, "the store is damaged ({detail})"),
            StoreError::TooNew { found, supported } => write!(
                f,
                "its schema version is {found}, newer than the {supported} this Cordon knows: use a newer Cordon"
            ),
            StoreError::Busy { detail } => write!(f, "the store stayed busy with another process ({detail})"),
            StoreError::Sqlite(e) => write!(f, "database error: {e}"),
            StoreError::Connect { to, cause } => write!(f, "cannot use the store at {to}: {cause}"),
            StoreError::Postgres(e) => write!(f, "{}", describe_postgres(e)),
            StoreError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            StoreError::NotPrivate { path, reason } => {
                write!(f, "refusing {}: {reason}", path.display())
            }
            StoreError::NoLocation => {
                write!(f, "no store location: give a path, or set CORDON_STORE, XDG_DATA_HOME or HOME")
            }
            StoreError::SessionBusy { session, pid, since_ms } => {
                let held = (crate::now_ms() - since_ms).max(0) / 1000;
                write!(
                    f,
                    "session '{session}' is in use by another run (process {pid}, for {held} s); \
                     a session serves one run at a time"
                )
            }
            StoreError::LockLost { session } => {
                write!(f, "the lock on session '{session}' was broken and taken by another run")
            }
            StoreError::NoSuchRequest(id) => write!(f, "no request {id}"),
            StoreError::NoSuchGrant(id) => write!(f, "no live grant {id}"),
            StoreError::ReservedKind(kind) => {
                write!(f, "audit rows of kind '{kind}' are written by their own method, not `append`")
            }
            StoreError::Json(e) => write!(f, "JSON: {e}"),
            StoreError::ChainBroken(bad) => write!(f, "the audit chain is broken: {bad}"),
            StoreError::NothingToArchive { through, first, head } => {
                write!(f, "cannot archive through row {through}: the store holds rows {first}..={head}")
            }
            StoreError::NotAnArchive { path, reason } => {
                write!(f, "{} is not an audit archive: {reason}", path.display())
            }
            StoreError::ArchiveUnverified { path, reason } => {
                write!(f, "the archive {} did not verify ({reason}); no row was removed from the store", path.display())
            }
            StoreError::ArchiveRaced => {
                write!(f, "the audit log changed while archiving; no row was removed, try again")
            }
            StoreError::LeaseLost { run } => {
                write!(f, "run {run} was taken over by another worker: this worker's lease on it ran out")
            }
            StoreError::UserExists(name) => write!(f, "there is a user `{name}` already"),
            StoreError::Unsupported(what) => write!(f, "not supported by this store: {what}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Open { cause, .. } => Some(cause.as_ref()),
            StoreError::Sqlite(e) => Some(e),
            StoreError::Connect { cause, .. } => Some(cause.as_ref()),
            StoreError::Postgres(e) => Some(e),
            StoreError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => StoreError::NotADatabase { detail: e.to_string() },
            Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt { detail: e.to_string() },
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy { detail: e.to_string() },
            _ => StoreError::Sqlite(e),
        }
    }
}

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> Self {
        use postgres::error::SqlState;
        match e.code() {
            // `lock_timeout` (the busy timeout) ran out, or a deadlock was broken.
            Some(code) if *code == SqlState::LOCK_NOT_AVAILABLE || *code == SqlState::T_R_DEADLOCK_DETECTED => {
                StoreError::Busy { detail: describe_postgres(&e) }
            }
            _ => StoreError::Postgres(e),
        }
    }
}

/// What went wrong with PostgreSQL, in words: the server's message and SQLSTATE, or what
/// happened to the connection.
fn describe_postgres(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("PostgreSQL: {}: {} (SQLSTATE {})", db.severity(), db.message(), db.code().code());
    }
    let cause = std::error::Error::source(e).map(|c| format!(": {c}")).unwrap_or_default();
    if e.is_closed() {
        return format!("the connection to PostgreSQL was lost ({e}{cause}); the next operation connects again");
    }
    format!("PostgreSQL: {e}{cause}")
}

impl From<serde_json::Error> for StoreError {
    fn from(e: serde_json::Error) -> Self {
        StoreError::Json(e.to_string())
    }
}

impl StoreError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> StoreError {
        let path = path.into();
        move |error| StoreError::Io { path, error }
    }
}
