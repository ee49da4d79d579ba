//! The vault's bytes: sealing and opening them, and reading and replacing its files privately.
//!
//! A vault file is `MAGIC`, a random 12-byte nonce, then the contents sealed with
//! ChaCha20-Poly1305 (their tag last), the magic bytes authenticated with them.

use std::io::{Read, Write};
use std::path::Path;

use cordon_store::private;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use zeroize::Zeroizing;

use crate::error::VaultError;

/// The length of a vault key, in bytes.
pub const KEY_LEN: usize = 32;

/// What every vault file starts with: the name and the format's version.
const MAGIC: &[u8] = b"cordon-vault 1\n";

/// The largest vault file read: far more than `MAX_ENTRIES` secrets of `MAX_VALUE_LEN` bytes.
const MAX_FILE_LEN: u64 = 64 << 20;

pub fn fill_random(out: &mut [u8]) -> Result<(), VaultError> {
    SystemRandom::new().fill(out).map_err(|_| VaultError::File("the system gave no random bytes".into()))
}

fn cipher(key: &[u8; KEY_LEN]) -> Result<LessSafeKey, VaultError> {
    let unbound = UnboundKey::new(&CHACHA20_POLY1305, key)
        .map_err(|_| VaultError::BadKey("the vault key is not a ChaCha20-Poly1305 key".into()))?;
    Ok(LessSafeKey::new(unbound))
}

/// `plain`, sealed under `key` with a fresh nonce, as a vault file's bytes.
pub fn seal(plain: &[u8], key: &[u8; KEY_LEN]) -> Result<Vec<u8>, VaultError> {
    let mut nonce = [0u8; NONCE_LEN];
    fill_random(&mut nonce)?;
    let mut body = plain.to_vec();
    cipher(key)?
        .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(MAGIC), &mut body)
        .map_err(|_| VaultError::File("the vault could not be sealed".into()))?;
    let mut out = Vec::with_capacity(MAGIC.len() + NONCE_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&body);
    Ok(out)
}

/// The contents of the vault file `bytes` (read from `path`), opened with `key`.
pub fn open_sealed(path: &Path, bytes: &[u8], key: &[u8; KEY_LEN]) -> Result<Zeroizing<Vec<u8>>, VaultError> {
    let malformed = |reason: &str| VaultError::Malformed { path: path.to_path_buf(), reason: reason.into() };
    let Some(rest) = bytes.strip_prefix(MAGIC) else {
        return Err(if bytes.starts_with(b"cordon-vault ") {
            malformed("it was written by another version of Cordon")
        } else {
            malformed("it does not start as a vault does")
        });
    };
    if rest.len() < NONCE_LEN + CHACHA20_POLY1305.tag_len() {
        return Err(malformed("it is cut short"));
    }
    let (nonce, sealed) = rest.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| malformed("it is cut short"))?;
    let mut body = Zeroizing::new(sealed.to_vec());
    let plain_len = cipher(key)?
        .open_in_place(nonce, Aad::from(MAGIC), &mut body)
        .map_err(|_| VaultError::WrongKeyOrTampered { path: path.to_path_buf() })?
        .len();
    body.truncate(plain_len);
    Ok(body)
}

/// The bytes of the private file `path`, or `None` if there is none.
pub fn read(path: &Path) -> Result<Option<Zeroizing<Vec<u8>>>, VaultError> {
    let Some(file) = private::read_private(path).map_err(|e| VaultError::File(e.to_string()))? else {
        return Ok(None);
    };
    let mut bytes = Zeroizing::new(Vec::new());
    file.take(MAX_FILE_LEN + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| VaultError::File(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 > MAX_FILE_LEN {
        return Err(VaultError::File(format!("{} is larger than any vault or key", path.display())));
    }
    Ok(Some(bytes))
}

/// Replaces the private file `path` with `contents`, atomically: they are written to a new
/// private file beside it, flushed to disk, and renamed over it.
pub fn replace(path: &Path, contents: &[u8]) -> Result<(), VaultError> {
    let io = |what: &str, e: std::io::Error| VaultError::File(format!("cannot {what} {}: {e}", path.display()));
    let Some(name) = path.file_name() else {
        return Err(VaultError::File(format!("{} names no file", path.display())));
    };
    let mut temporary = name.to_os_string();
    temporary.push(".new");
    let temporary = path.with_file_name(temporary);
    private::check_private(path).map_err(|e| VaultError::File(e.to_string()))?;
    let mut file = private::create_private(&temporary).map_err(|e| VaultError::File(e.to_string()))?;
    file.write_all(contents).and_then(|()| file.sync_all()).map_err(|e| io("write", e))?;
    drop(file);
    std::fs::rename(&temporary, path).map_err(|e| io("replace", e))?;
    // The rename is durable once the directory is.
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io("flush the directory of", e))?;
    }
    Ok(())
}
