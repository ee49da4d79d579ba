//! The people who answer background runs' cards (`cordon serve`), how they prove who they are,
//! and the deployment's key.
//!
//! - A person is added by name and given a token once ([`add_user`]); the store keeps only the
//!   token's SHA-256 (a token is 256 random bits, so a fast hash is enough: there is nothing to
//!   guess). The token is what the HTTP API takes (`Authorization: Bearer`), and what the web
//!   page's sign-in form takes once.
//! - Signing in on the page ([`sign_in`]) starts a web session: a random cookie (kept as its
//!   hash too) and a random CSRF token that every form the page posts must carry.
//! - The deployment's key ([`deployment_key`]) authenticates saved runs and seals cards; every
//!   worker of a deployment shares it: `CORDON_SERVE_KEY` (hex), else a private file beside the
//!   store, made on first use.

use std::io::Read;
use std::path::Path;

use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};

use crate::{Error, Storage};

/// The variable that holds the deployment's key, in hex (at least 32 bytes).
pub const KEY_VARIABLE: &str = "CORDON_SERVE_KEY";

/// How long a web session lasts.
pub const WEB_SESSION_MS: i64 = 12 * 60 * 60 * 1000;

/// A web session just started: the cookie to set and the CSRF token of its forms.
#[derive(Debug)]
pub struct SignedIn {
    pub user: String,
    pub cookie: String,
    pub csrf: String,
}

/// `n` random bytes, in hex.
fn random_hex(n: usize) -> Result<String, Error> {
    let mut bytes = vec![0u8; n];
    SystemRandom::new().fill(&mut bytes).map_err(|_| Error::Setup("the system's random source failed".into()))?;
    Ok(hex(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of a secret, as the store keeps it.
fn hashed(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

/// Whether `a` and `b` are equal, in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `name` may name a person: 1 to 64 letters, digits, `.`, `_` or `-` (it is shown on
/// cards and in the log, and compared as it is).
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b".-_".contains(&b))
}

/// Lets `name` sign in, and returns their token: shown once, kept nowhere but as its hash.
pub fn add_user(storage: &Storage, name: &str) -> Result<String, Error> {
    if !valid_name(name) {
        return Err(Error::Setup(format!(
            "`{}` cannot name a person: use 1 to 64 letters, digits, `.`, `_` or `-`",
            cordon_text::escape(name)
        )));
    }
    let token = format!("cordon_{}", random_hex(32)?);
    storage.store().add_user(name, &hashed(&token)).map_err(|e| storage.error(e))?;
    Ok(token)
}

/// Who the token is, if anyone.
pub fn user_by_token(storage: &Storage, token: &str) -> Result<Option<String>, Error> {
    storage.store().user_by_token(&hashed(token.trim())).map_err(|e| storage.error(e))
}

/// Starts a web session for the token's person, if the token is anyone's.
pub fn sign_in(storage: &Storage, token: &str) -> Result<Option<SignedIn>, Error> {
    let Some(user) = user_by_token(storage, token)? else { return Ok(None) };
    let (cookie, csrf) = (random_hex(32)?, random_hex(32)?);
    let session = cordon_store::WebSession {
        user: user.clone(),
        csrf: csrf.clone(),
        expires_ms: crate::now_ms().saturating_add(WEB_SESSION_MS),
    };
    storage.store().start_web_session(&hashed(&cookie), &session).map_err(|e| storage.error(e))?;
    Ok(Some(SignedIn { user, cookie, csrf }))
}

/// The live web session of `cookie`, if any.
pub fn web_session(storage: &Storage, cookie: &str) -> Result<Option<cordon_store::WebSession>, Error> {
    storage.store().web_session(&hashed(cookie)).map_err(|e| storage.error(e))
}

pub fn sign_out(storage: &Storage, cookie: &str) -> Result<(), Error> {
    storage.store().end_web_session(&hashed(cookie)).map_err(|e| storage.error(e))
}

/// The deployment's key: `CORDON_SERVE_KEY` (hex, at least 32 bytes), else the private file
/// `path`, made with a new random key if there is none.
pub fn deployment_key(path: &Path) -> Result<Vec<u8>, Error> {
    let from_hex = |text: &str, whence: &str| {
        let text = text.trim();
        let bytes: Option<Vec<u8>> = text
            .len()
            .is_multiple_of(2)
            .then(|| (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect())
            .flatten();
        match bytes {
            Some(bytes) if bytes.len() >= 32 => Ok(bytes),
            _ => Err(Error::Setup(format!("{whence} is not a key: 64 or more hexadecimal digits"))),
        }
    };
    if let Ok(text) = std::env::var(KEY_VARIABLE) {
        return from_hex(&text, KEY_VARIABLE);
    }
    let refused = |e: cordon_store::StoreError| Error::Setup(e.to_string());
    if let Some(mut file) = cordon_store::private::read_private(path).map_err(refused)? {
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(|error| Error::Read { path: path.to_path_buf(), error })?;
        return from_hex(&text, &path.display().to_string());
    }
    let key = random_hex(32)?;
    cordon_store::private::write_private(path, key.as_bytes()).map_err(refused)?;
    from_hex(&key, &path.display().to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test may fail loudly
mod tests {
    use super::*;

    #[test]
    fn a_token_signs_in_its_person_and_no_other_token_does() {
        let storage = Storage::in_memory().unwrap();
        let token = add_user(&storage, "alice").unwrap();
        assert_eq!(user_by_token(&storage, &token).unwrap().as_deref(), Some("alice"));
        assert_eq!(user_by_token(&storage, "cordon_0000").unwrap(), None);
        let signed = sign_in(&storage, &token).unwrap().expect("signed in");
        let session = web_session(&storage, &signed.cookie).unwrap().expect("a session");
        assert_eq!((session.user.as_str(), session.csrf.as_str()), ("alice", signed.csrf.as_str()));
        assert!(web_session(&storage, &signed.csrf).unwrap().is_none(), "the CSRF token is no cookie");
        sign_out(&storage, &signed.cookie).unwrap();
        assert!(web_session(&storage, &signed.cookie).unwrap().is_none());
        assert!(add_user(&storage, "alice").is_err(), "a name is taken once");
    }

    #[test]
    fn a_name_is_plain() {
        for bad in ["", "a b", "al\u{202e}ice", "<b>", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
        assert!(valid_name("ann.lee-2_x"));
    }
}
