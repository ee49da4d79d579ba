//! What a command ends with: the report it prints, or the error it stops with, and the exit code
//! each means.

use std::fmt;

/// What a subcommand has to say: text for stdout and whether the program was accepted.
#[derive(Debug)]
pub struct Report {
    pub stdout: String,
    pub accepted: bool,
    /// A host-side failure that came after the output was made (the store could not record
    /// the whole request): printed after it, exit 2.
    pub error: Option<Error>,
}

/// A failure the command reports on stderr instead of a result: a host-side failure (not a
/// problem in the checked program; exit 2), or a request that got no answer.
#[derive(Debug)]
pub enum Error {
    /// A file, setting or store that cannot be used (`cordon::Error`).
    Cordon(cordon::Error),
    /// A bad argument or input file, with a message that says what is wrong.
    Usage(String),
    /// A request got no answer: a hole has no fill. `diagnostic` says why; `code` is the exit
    /// code (1 no fill checked, 2 the model spec or transcript does not fit, 3 the model could
    /// not be reached).
    Unanswered { diagnostic: String, code: u8 },
}

impl From<cordon::Error> for Error {
    fn from(error: cordon::Error) -> Error {
        Error::Cordon(error)
    }
}

impl Error {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Unanswered { code, .. } => *code,
            _ => 2,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Cordon(error) => write!(f, "{error}"),
            Error::Usage(message) => f.write_str(message),
            Error::Unanswered { diagnostic, .. } => f.write_str(diagnostic.trim_end()),
        }
    }
}
