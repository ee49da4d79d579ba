//! What can go wrong on the host's side of a request: a file, a setting, the store. A problem in
//! the plan itself is never an [`Error`]: it is a diagnostic in the request's report.

use std::fmt;
use std::path::PathBuf;

use cordon_audit::RecordError;
use cordon_store::StoreError;

/// A host-side failure: nothing about it is the plan's fault.
#[derive(Debug)]
pub enum Error {
    /// A file could not be read.
    Read { path: PathBuf, error: std::io::Error },
    /// A file could not be written.
    Write { path: PathBuf, error: std::io::Error },
    /// A setting or input cannot be used (a policy, an environment, a directory, an MCP server,
    /// a model, a session file), with a message that says what is wrong.
    Setup(String),
    /// The store (at `path`, where it is known) failed.
    Store { path: Option<PathBuf>, error: StoreError },
    /// A request's record in the store is incomplete; no effect was performed after the
    /// failure.
    Record(RecordError),
    /// The vault cannot be opened or written.
    Vault(cordon_vault::VaultError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Read { path, error } => write!(f, "cannot read `{}`: {error}", path.display()),
            Error::Write { path, error } => write!(f, "cannot write `{}`: {error}", path.display()),
            Error::Setup(message) => f.write_str(message),
            // Opening says where itself.
            Error::Store { path: None, error } | Error::Store { error: error @ StoreError::Open { .. }, .. } => {
                write!(f, "{error}")
            }
            Error::Store { path: Some(path), error } => write!(f, "the store at {}: {error}", path.display()),
            Error::Record(error) => write!(f, "{error}; no effect was performed after that"),
            Error::Vault(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Read { error, .. } | Error::Write { error, .. } => Some(error),
            Error::Store { error, .. } => Some(error),
            Error::Record(error) => Some(error),
            Error::Vault(error) => Some(error),
            Error::Setup(_) => None,
        }
    }
}

impl From<cordon_vault::VaultError> for Error {
    fn from(error: cordon_vault::VaultError) -> Error {
        Error::Vault(error)
    }
}
