//! Generic high-entropy strings, in the consent tier (the commonest false alarm of secret
//! scanners, so never refused outright): a run of 20 to 200 base64 or base64url characters,
//! after a short lowercase prefix such as `acct_`, that mixes upper and lower case letters
//! and digits, changes character class often, is not mostly lowercase words (as
//! `camelCaseNames2` are) and has a high Shannon entropy per character.
//!
//! Random strings that are public by nature are not findings: hex (hashes, UUIDs), the body of
//! a `data:` URI (an image), a subresource integrity hash (`sha512-..`), a digest
//! (`sha256:..`), an encoded image, a Stripe publishable key, an SSH public key, the body of a PEM block that is not a private key
//! (a public key, a certificate), and paths.

use std::ops::Range;

use regex::Regex;

use crate::category::Category;
use crate::checksum;
use crate::finding::Finding;
use crate::patterns::fixed;

/// The shortest random part that counts.
const MIN_LEN: usize = 20;
/// The longest run that counts: longer ones are encoded files, not credentials.
const MAX_LEN: usize = 200;
/// The least Shannon entropy, in bits per character.
const MIN_ENTROPY: f64 = 3.3;
/// The least share of adjacent characters of different classes (upper, lower, digit, symbol).
const MIN_CHANGES: f64 = 0.3;

/// The largest share of characters in runs of four or more lowercase letters: names
/// (`getUser2FactorAuthSettings`) are mostly such runs, random text seldom.
const MAX_WORDY: f64 = 0.4;

/// The high-entropy patterns, compiled once per classifier.
#[derive(Debug)]
pub struct HighEntropy {
    run: Regex,
    pem_begin: Regex,
    pem_end: Regex,
}

impl HighEntropy {
    /// The compiled patterns.
    pub fn new() -> HighEntropy {
        HighEntropy {
            run: fixed(r"[A-Za-z0-9+/_-]{20,}={0,2}"),
            pem_begin: fixed(r"-----BEGIN [A-Z0-9 ]{1,40}-----"),
            pem_end: fixed(r"-----END [A-Z0-9 ]{1,40}-----"),
        }
    }

    /// The high-entropy strings of `text`.
    pub fn find(&self, text: &str, out: &mut Vec<Finding>) {
        let mut pem: Option<Vec<Range<usize>>> = None;
        for m in self.run.find_iter(text) {
            let token = m.as_str().trim_end_matches('=');
            let random = strip_prefixes(token);
            if !random_looking(random) || public_by_context(text, m.start(), token) {
                continue;
            }
            let blocks = pem.get_or_insert_with(|| self.public_blocks(text));
            // The blocks are disjoint and sorted: the one that could hold the token starts last
            // at or before it.
            let holder = blocks.partition_point(|b| b.start <= m.start()).checked_sub(1).and_then(|i| blocks.get(i));
            let inside = holder.is_some_and(|b| m.end() <= b.end);
            if !inside {
                let start = m.start() + (token.len() - random.len());
                out.push(Finding::new(Category::HighEntropy, start..m.start() + token.len()));
            }
        }
    }

    /// The PEM blocks of `text` that are not private keys, BEGIN to END, joined where they
    /// overlap: sorted and disjoint.
    fn public_blocks(&self, text: &str) -> Vec<Range<usize>> {
        let ends: Vec<Range<usize>> = self.pem_end.find_iter(text).map(|m| m.range()).collect();
        let mut blocks: Vec<Range<usize>> = Vec::new();
        for m in self.pem_begin.find_iter(text).filter(|m| !m.as_str().contains("PRIVATE")) {
            let Some(end) = ends.get(ends.partition_point(|e| e.start < m.end())) else { continue };
            match blocks.last_mut() {
                Some(last) if m.start() <= last.end => last.end = last.end.max(end.end),
                _ => blocks.push(m.start()..end.end),
            }
        }
        blocks
    }
}

impl Default for HighEntropy {
    fn default() -> Self {
        HighEntropy::new()
    }
}

/// The token without up to two short lowercase prefixes (`acct_`, `sk_test_`).
fn strip_prefixes(token: &str) -> &str {
    let mut rest = token;
    for _ in 0..2 {
        let Some(cut) = rest.find(['_', '-']) else { break };
        let prefix = &rest[..cut];
        if (1..=8).contains(&prefix.len()) && prefix.bytes().all(|b| b.is_ascii_lowercase()) {
            rest = &rest[cut + 1..];
        } else {
            break;
        }
    }
    rest
}

fn random_looking(s: &str) -> bool {
    let bytes = s.as_bytes();
    let has = |f: fn(&u8) -> bool| bytes.iter().any(f);
    let all_hex = bytes.iter().all(|b| b.is_ascii_hexdigit() || *b == b'-');
    (MIN_LEN..=MAX_LEN).contains(&s.len())
        && has(u8::is_ascii_uppercase)
        && has(u8::is_ascii_lowercase)
        && has(u8::is_ascii_digit)
        && !all_hex
        && !path_like(s)
        && class_changes(bytes) >= MIN_CHANGES
        && wordy(bytes) < MAX_WORDY
        && entropy(bytes) >= MIN_ENTROPY
        && !checksum::documented_example(s)
}

/// A path has a segment of lowercase letters (`/api/v2/users/`).
fn path_like(s: &str) -> bool {
    s.contains('/') && s.split('/').any(|seg| seg.len() >= 3 && seg.bytes().all(|b| b.is_ascii_lowercase()))
}

fn class(b: u8) -> u8 {
    match b {
        b'A'..=b'Z' => 0,
        b'a'..=b'z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    }
}

fn class_changes(bytes: &[u8]) -> f64 {
    let changes = bytes.windows(2).filter(|w| class(w[0]) != class(w[1])).count();
    changes as f64 / bytes.len().saturating_sub(1).max(1) as f64
}

fn wordy(bytes: &[u8]) -> f64 {
    let in_words: usize = bytes.split(|b| !b.is_ascii_lowercase()).map(<[u8]>::len).filter(|&n| n >= 4).sum();
    in_words as f64 / bytes.len().max(1) as f64
}

fn entropy(bytes: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[usize::from(b)] += 1;
    }
    let len = bytes.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| f64::from(c) / len).map(|p| -p * p.log2()).sum()
}

/// Whether the token or what precedes it says it is public: a data URI, an encoded image (by
/// its file signature), a digest, an integrity hash, a password hash, an SSH public key, a
/// Stripe publishable key.
fn public_by_context(text: &str, start: usize, token: &str) -> bool {
    let mut from = start.saturating_sub(40);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let before = text.get(from..start).unwrap_or_default();
    let integrity = ["sha1-", "sha256-", "sha384-", "sha512-"].iter().any(|p| token.starts_with(p));
    let digest = ["sha1:", "sha256:", "sha512:", "md5:"].iter().any(|p| before.ends_with(p));
    let data_uri = before.ends_with(";base64,");
    // A password hash in the modular crypt format (`$2b$12$..`, `$argon2id$..$`).
    let crypt = before.strip_suffix('$').is_some_and(|b| b.contains('$'));
    let image = ["iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "PHN2Zy", "Qk0"].iter().any(|p| token.starts_with(p));
    let publishable = ["pk_live_", "pk_test_"].iter().any(|p| token.starts_with(p));
    let ssh = [
        "ssh-rsa ",
        "ssh-ed25519 ",
        "ssh-dss ",
        "ecdsa-sha2-nistp256 ",
        "ecdsa-sha2-nistp384 ",
        "ecdsa-sha2-nistp521 ",
    ]
    .iter()
    .any(|p| before.ends_with(p));
    integrity || digest || data_uri || crypt || image || publishable || ssh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_strings_look_random_and_names_do_not() {
        assert!(random_looking("uGVNPVdpJv9l1T3jq56ZK3qUddOhISyA"));
        assert!(random_looking("Yp2dLq8Zr5WmX3nVk7Ht1Bc9"));
        assert!(!random_looking("getUser2FactorAuthSettingsCache"));
        assert!(!random_looking("5f3c9a2e-8d41-4b7a-9e0c-2a6f1d3b8c47"));
        assert!(!random_looking("AbstractSingletonProxyFactoryBean"));
    }
}
