//! The vault: the user's credentials, encrypted at rest, each bound to the places it may be
//! sent (a scheme, an exact host and a port) and the one header slot it goes in there.
//!
//! The vault is one file, written whole and atomically (a new file renamed over the old, so a
//! crash leaves the old vault or the new one, never half of either), private to the user (as
//! the store's files are). Its contents are sealed with ChaCha20-Poly1305 under a 32-byte key
//! kept apart from it: in `CORDON_VAULT_KEY` (64 hex digits), or in a private key file that
//! [`Key::load_or_create`] makes on first use. A wrong key and a vault changed by anyone are
//! the same error, since the cipher cannot tell them apart; neither is ever read as an empty
//! vault.
//!
//! Nothing here shows a secret's value: [`SecretValue`]'s `Debug` and every error leave it out,
//! [`Vault::entries`] lists names, destinations and slots only, and values are cleared from
//! memory when dropped.

mod destination;
mod error;
mod file;
mod key;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

pub use cordon_egress::SecretValue;
pub use destination::Destination;
pub use error::VaultError;
pub use file::KEY_LEN;
pub use key::{KEY_VARIABLE, Key};

/// The longest secret value the vault keeps, in bytes.
pub const MAX_VALUE_LEN: usize = 16 * 1024;

/// The most secrets one vault keeps.
pub const MAX_ENTRIES: usize = 1024;

/// One secret as `cordon secrets list` shows it: everything but its value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its name (`GITHUB_TOKEN`): what a policy or an MCP server's configuration refers to.
    pub name: String,
    /// Where it may be sent.
    pub destinations: Vec<Destination>,
    /// The header it goes in there (`Authorization`).
    pub header: String,
    /// The word the header's value starts with before the secret (`Bearer`), if it wants one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// Programs (each a command and its arguments, exactly) that may be started with it in an
    /// environment variable: a local MCP server that wants a token.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<Vec<String>>,
}

impl Entry {
    /// Whether the vault takes this entry: a name, a header's name, at least one destination.
    /// What [`Vault::add`] checks first; a front end checks it before asking for the value.
    pub fn check(&self) -> Result<(), VaultError> {
        check_name(&self.name)?;
        check_header(&self.header)?;
        if let Some(scheme) = &self.scheme {
            check_scheme(scheme)?;
        }
        if self.destinations.is_empty() && self.programs.is_empty() {
            return Err(VaultError::Invalid(format!(
                "the secret `{}` needs a host it may be sent to, or a program it may be given to",
                self.name
            )));
        }
        if self.programs.iter().any(|p| p.first().is_none_or(|c| c.is_empty())) {
            return Err(VaultError::Invalid(format!("the secret `{}` names a program with no command", self.name)));
        }
        Ok(())
    }
}

/// What the vault file holds once opened.
#[derive(Serialize, Deserialize)]
struct Sealed {
    entries: Vec<Stored>,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    #[serde(flatten)]
    entry: Entry,
    value: Zeroizing<String>,
}

/// The vault, opened.
pub struct Vault {
    path: PathBuf,
    entries: Vec<Stored>,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vault").field("path", &self.path).field("entries", &self.entries()).finish()
    }
}

impl Vault {
    /// The vault at `path`, opened with `key`; empty if there is no such file yet.
    pub fn open(path: &Path, key: &Key) -> Result<Vault, VaultError> {
        let entries = match file::read(path)? {
            Some(bytes) => {
                let plain = file::open_sealed(path, &bytes, key.bytes())?;
                let sealed: Sealed = serde_json::from_slice(&plain)
                    .map_err(|e| VaultError::Malformed { path: path.to_path_buf(), reason: e.to_string() })?;
                sealed.entries
            }
            None => Vec::new(),
        };
        Ok(Vault { path: path.to_path_buf(), entries })
    }

    /// Every secret, without its value, in name order.
    pub fn entries(&self) -> Vec<Entry> {
        self.entries.iter().map(|s| s.entry.clone()).collect()
    }

    /// The value of the secret `name`, if there is one.
    pub fn value(&self, name: &str) -> Option<SecretValue> {
        self.entries.iter().find(|s| s.entry.name == name).map(|s| SecretValue::new(s.value.to_string()))
    }

    /// Every secret's value: what the outgoing-data check looks for.
    pub fn values(&self) -> Vec<SecretValue> {
        self.entries.iter().map(|s| SecretValue::new(s.value.to_string())).collect()
    }

    /// Every secret with its value, in name order: what the credential broker puts into requests.
    pub fn secrets(&self) -> Vec<(Entry, SecretValue)> {
        self.entries.iter().map(|s| (s.entry.clone(), SecretValue::new(s.value.to_string()))).collect()
    }

    /// Adds the secret `entry.name` (replacing one of that name) and writes the vault.
    pub fn add(&mut self, entry: Entry, value: SecretValue, key: &Key) -> Result<(), VaultError> {
        entry.check()?;
        let length = value.expose().len();
        if length == 0 || length > MAX_VALUE_LEN {
            return Err(VaultError::Invalid(format!(
                "a secret's value is 1 to {MAX_VALUE_LEN} bytes; the one given for `{}` has {}",
                entry.name, length
            )));
        }
        let mut entries: Vec<&Stored> = self.entries.iter().filter(|s| s.entry.name != entry.name).collect();
        if entries.len() >= MAX_ENTRIES {
            return Err(VaultError::Invalid(format!("the vault holds at most {MAX_ENTRIES} secrets")));
        }
        let added = Stored { entry, value: Zeroizing::new(value.expose().to_string()) };
        entries.push(&added);
        entries.sort_by(|a, b| a.entry.name.cmp(&b.entry.name));
        self.write(&entries, key)?;
        // Only once the new vault is on disk does this one change.
        let name = added.entry.name.clone();
        self.entries.retain(|s| s.entry.name != name);
        self.entries.push(added);
        self.entries.sort_by(|a, b| a.entry.name.cmp(&b.entry.name));
        Ok(())
    }

    /// Removes the secret `name` and writes the vault.
    pub fn remove(&mut self, name: &str, key: &Key) -> Result<(), VaultError> {
        if !self.entries.iter().any(|s| s.entry.name == name) {
            return Err(VaultError::Invalid(format!("the vault has no secret `{name}`")));
        }
        let kept: Vec<&Stored> = self.entries.iter().filter(|s| s.entry.name != name).collect();
        self.write(&kept, key)?;
        self.entries.retain(|s| s.entry.name != name);
        Ok(())
    }

    fn write(&self, entries: &[&Stored], key: &Key) -> Result<(), VaultError> {
        #[derive(Serialize)]
        struct SealedRef<'a> {
            entries: &'a [&'a Stored],
        }
        // Serialising plain data to memory cannot fail.
        let plain = Zeroizing::new(serde_json::to_vec(&SealedRef { entries }).unwrap_or_default());
        let sealed = file::seal(&plain, key.bytes())?;
        file::replace(&self.path, &sealed)
    }
}

/// Where the vault is: the file `vault` beside the store at `store`, with the user's data.
pub fn location(store: &Path) -> PathBuf {
    store.with_file_name("vault")
}

/// The vault beside the store at `store`, opened with its key from `key_variable` (the value of
/// `CORDON_VAULT_KEY`) or the file `key_file`: what the credential broker serves. `None` if
/// there is no vault; a vault that exists but does not open is an error, never an empty vault
/// (a check that silently lost the vault would let its secrets leave).
pub fn open_beside(
    store: &Path,
    key_variable: Option<String>,
    key_file: Option<&Path>,
) -> Result<Option<Vault>, VaultError> {
    let path = location(store);
    if !path.exists() {
        return Ok(None);
    }
    let key = match (key_variable.filter(|v| !v.is_empty()), key_file) {
        (Some(text), _) => Some(Key::from_hex(&text)?),
        (None, Some(file)) => Key::load(None, file)?,
        (None, None) => None,
    };
    let Some(key) = key else {
        return Err(VaultError::BadKey(format!(
            "there is a vault at {} but no key for it: set {KEY_VARIABLE} or restore the key file",
            path.display()
        )));
    };
    Ok(Some(Vault::open(&path, &key)?))
}

/// Where the vault's key file is by default: `$XDG_CONFIG_HOME/cordon/vault.key`, else
/// `~/.config/cordon/vault.key`; apart from the vault (which is beside the store, with the
/// user's data), so that a copy of the data is no copy of the key. `env` reads a variable.
pub fn key_location(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |name| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    // A relative XDG_CONFIG_HOME is invalid and ignored, as the XDG spec says.
    let config =
        set("XDG_CONFIG_HOME").filter(|p| p.is_absolute()).or_else(|| set("HOME").map(|h| h.join(".config")))?;
    Some(config.join("cordon").join("vault.key"))
}

/// A secret's name: a letter or `_`, then letters, digits and `_`, at most 64 in all.
fn check_name(name: &str) -> Result<(), VaultError> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && name.len() <= 64 && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Ok(());
    }
    Err(VaultError::Invalid(format!(
        "`{}` is not a secret's name: a letter or `_`, then letters, digits and `_` (at most 64)",
        name.escape_debug()
    )))
}

/// An authentication scheme (`Bearer`, `token`): letters, digits and `-`, at most 32.
fn check_scheme(scheme: &str) -> Result<(), VaultError> {
    if !scheme.is_empty() && scheme.len() <= 32 && scheme.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Ok(());
    }
    Err(VaultError::Invalid(format!("`{}` is not an authentication scheme (`Bearer`, `token`)", scheme.escape_debug())))
}

/// A header's name: an HTTP token (RFC 9110), at most 64 characters.
fn check_header(header: &str) -> Result<(), VaultError> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if !header.is_empty() && header.len() <= 64 && header.chars().all(token) {
        return Ok(());
    }
    Err(VaultError::Invalid(format!("`{}` is not a header's name", header.escape_debug())))
}
