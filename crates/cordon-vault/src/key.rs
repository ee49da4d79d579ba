//! The vault's key: 32 bytes, from `CORDON_VAULT_KEY` or a private key file, never shown.

use std::fmt;
use std::path::Path;

use zeroize::Zeroizing;

use crate::error::VaultError;
use crate::file::{self, KEY_LEN};

/// The environment variable that may hold the vault's key, as hexadecimal.
pub const KEY_VARIABLE: &str = "CORDON_VAULT_KEY";

/// The vault's key.
pub struct Key(Zeroizing<[u8; KEY_LEN]>);

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// The key's bytes, for the cipher.
    pub(crate) fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// The key as 64 hexadecimal digits say it.
    pub fn from_hex(text: &str) -> Result<Key, VaultError> {
        let text = text.trim();
        let bad = || VaultError::BadKey("a vault key is 64 hexadecimal digits (32 bytes)".into());
        if text.len() != 2 * KEY_LEN || !text.is_ascii() {
            return Err(bad());
        }
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        for (i, byte) in key.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Key(key))
    }

    /// A new random key.
    pub fn generate() -> Result<Key, VaultError> {
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        file::fill_random(&mut key[..])?;
        Ok(Key(key))
    }

    fn to_hex(&self) -> Zeroizing<String> {
        let mut text = Zeroizing::new(String::with_capacity(2 * KEY_LEN + 1));
        for byte in self.0.iter() {
            text.push_str(&format!("{byte:02x}"));
        }
        text.push('\n');
        text
    }

    /// The key from `CORDON_VAULT_KEY` if `variable` gives it, else from the private file
    /// `path`; `None` when neither has one.
    pub fn load(variable: Option<String>, path: &Path) -> Result<Option<Key>, VaultError> {
        if let Some(text) = variable.filter(|v| !v.is_empty()) {
            return Key::from_hex(&text).map(Some);
        }
        match file::read(path)? {
            Some(bytes) => {
                let text = Zeroizing::new(String::from_utf8_lossy(&bytes).into_owned());
                Key::from_hex(&text)
                    .map_err(|e| VaultError::BadKey(format!("the key file {} is not a vault key: {e}", path.display())))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    /// As [`Key::load`], making a new key in the private file `path` when there is none.
    pub fn load_or_create(variable: Option<String>, path: &Path) -> Result<Key, VaultError> {
        if let Some(key) = Key::load(variable, path)? {
            return Ok(key);
        }
        let key = Key::generate()?;
        file::replace(path, key.to_hex().as_bytes())?;
        Ok(key)
    }
}
