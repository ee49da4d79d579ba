//! Why the vault cannot be used: every error says what is wrong and holds no secret.

use std::fmt;
use std::path::PathBuf;

/// Why the vault cannot be used. No variant holds a secret's value.
#[derive(Debug)]
pub enum VaultError {
    /// The key is missing or is not one.
    BadKey(String),
    /// The vault does not open with this key: the key is wrong, or the file was changed.
    WrongKeyOrTampered { path: PathBuf },
    /// The file is not a vault (another file, a truncated one, a newer format).
    Malformed { path: PathBuf, reason: String },
    /// Reading or writing a file, or a file another user could have written.
    File(String),
    /// A request the vault refuses (a bad name, a value too long, no such secret).
    Invalid(String),
}

impl fmt::Display for VaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VaultError::BadKey(why) => write!(f, "{why}"),
            VaultError::WrongKeyOrTampered { path } => write!(
                f,
                "the vault {} does not open with this key: the key is wrong, or the vault was changed since it \
                 was written",
                path.display()
            ),
            VaultError::Malformed { path, reason } => write!(f, "{} is not a vault: {reason}", path.display()),
            VaultError::File(why) | VaultError::Invalid(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for VaultError {}
