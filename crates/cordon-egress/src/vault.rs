//! The vault's own secrets, found in a text however they are dressed: as they are, in base64
//! (standard or URL-safe, at any of the three alignments inside a longer encoded text), in hex
//! (either case), percent-encoded, or split by white space or punctuation between characters.
//!
//! All forms but the exact one are searched in the text's *skeleton*: its letters and digits
//! only (percent escapes decoded first), each mapped back to the bytes it came from. A secret
//! split by spaces, dots or dashes has the same skeleton as the secret; a base64 form has the
//! same skeleton in both alphabets (they differ only in the two symbols the skeleton drops).
//! The search is `memchr`'s substring search, linear in the text for each form.
//!
//! A [`SecretValue`] wipes its bytes when dropped and never prints them; the forms derived
//! from it are wiped too.

use std::fmt;
use std::ops::Range;

use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use memchr::memmem;
use zeroize::Zeroizing;

/// The fewest skeleton bytes a derived form may have: a shorter form would match ordinary
/// text by chance, so such a secret is only found exactly.
const MIN_FORM_LEN: usize = 8;

/// A secret value from the vault: wiped from memory when dropped, printed as
/// `SecretValue(..)`, never compared or shown.
#[derive(Clone)]
pub struct SecretValue(Zeroizing<String>);

impl SecretValue {
    /// Wraps `value`, which is wiped when this is dropped.
    pub fn new(value: String) -> SecretValue {
        SecretValue(Zeroizing::new(value))
    }

    /// The value itself: for the matcher that looks for it, and for the one place that puts it
    /// into a request.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SecretValue {
    fn from(value: &str) -> SecretValue {
        SecretValue::new(value.to_owned())
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretValue(..)")
    }
}

/// The forms of one secret the matcher looks for.
struct Forms {
    exact: Zeroizing<Vec<u8>>,
    /// Searched in the skeleton: the secret's own letters and digits, and its base64 forms.
    in_skeleton: Vec<Zeroizing<Vec<u8>>>,
    /// Lowercase hex, searched in the lowercased skeleton.
    hex: Option<Zeroizing<Vec<u8>>>,
}

/// Where a [`Scanner`](crate::Scanner) looks for the vault's own secrets: in this process
/// ([`VaultMatcher`], built from the values), or in another that alone holds them (the
/// credential broker, asked over its socket).
pub trait SecretFinder: Send + Sync + fmt::Debug {
    /// The spans of `text` where a secret appears in any of its forms (they may overlap). A
    /// finder that cannot answer answers the whole text: nothing leaves unchecked.
    fn find(&self, text: &str) -> Vec<Range<usize>>;
}

/// Finds the vault's secrets in a text, from their values.
pub struct VaultMatcher {
    secrets: Vec<Forms>,
}

impl fmt::Debug for VaultMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VaultMatcher({} secrets)", self.secrets.len())
    }
}

impl VaultMatcher {
    /// A matcher for `secrets`; an empty secret is ignored (it would match everywhere).
    pub fn new(secrets: &[SecretValue]) -> VaultMatcher {
        VaultMatcher { secrets: secrets.iter().filter(|s| !s.expose().is_empty()).map(forms).collect() }
    }

    /// Whether it looks for no secret at all.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }
}

impl SecretFinder for VaultMatcher {
    fn find(&self, text: &str) -> Vec<Range<usize>> {
        let mut spans = Vec::new();
        if self.secrets.is_empty() {
            return spans;
        }
        let skeleton = Skeleton::of(text);
        let lower = Zeroizing::new(skeleton.bytes.to_ascii_lowercase());
        for secret in &self.secrets {
            spans.extend(
                memmem::find_iter(text.as_bytes(), secret.exact.as_slice()).map(|at| at..at + secret.exact.len()),
            );
            for form in &secret.in_skeleton {
                spans.extend(
                    memmem::find_iter(&skeleton.bytes, form.as_slice()).map(|at| skeleton.span(at, form.len())),
                );
            }
            if let Some(hex) = &secret.hex {
                spans.extend(memmem::find_iter(&lower, hex.as_slice()).map(|at| skeleton.span(at, hex.len())));
            }
        }
        spans
    }
}

fn forms(secret: &SecretValue) -> Forms {
    let bytes = secret.expose().as_bytes();
    let mut in_skeleton = Vec::new();
    let own = Zeroizing::new(skeleton_of_secret(secret.expose()));
    if own.len() >= MIN_FORM_LEN {
        in_skeleton.push(own);
    }
    for offset in 0..3 {
        let form = base64_form(bytes, offset);
        if form.len() >= MIN_FORM_LEN {
            in_skeleton.push(form);
        }
    }
    let hex = Zeroizing::new(hex_lower(bytes));
    Forms { exact: Zeroizing::new(bytes.to_vec()), in_skeleton, hex: (hex.len() >= MIN_FORM_LEN).then_some(hex) }
}

/// The letters and digits of the secret, as UTF-8 bytes.
fn skeleton_of_secret(secret: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(secret.len());
    for c in secret.chars().filter(|c| c.is_alphanumeric()) {
        let mut buf = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
    out
}

/// The base64 characters that depend only on `bytes` when they are encoded after `offset`
/// other bytes, with the two alphabet-specific symbols dropped (as the skeleton drops them).
fn base64_form(bytes: &[u8], offset: usize) -> Zeroizing<Vec<u8>> {
    let mut padded = Zeroizing::new(vec![0u8; offset]);
    padded.extend_from_slice(bytes);
    let encoded = Zeroizing::new(STANDARD_NO_PAD.encode(padded.as_slice()));
    let first = (8 * offset).div_ceil(6);
    let last = 8 * (offset + bytes.len()) / 6;
    let kept = encoded.as_bytes().get(first..last).unwrap_or_default();
    Zeroizing::new(kept.iter().copied().filter(u8::is_ascii_alphanumeric).collect())
}

fn hex_lower(bytes: &[u8]) -> Vec<u8> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xf)]]).collect()
}

/// A text's letters and digits (percent escapes decoded), each byte with the span of the
/// text it came from.
struct Skeleton {
    bytes: Zeroizing<Vec<u8>>,
    origin: Vec<(usize, usize)>,
}

impl Skeleton {
    fn of(text: &str) -> Skeleton {
        let mut bytes = Zeroizing::new(Vec::with_capacity(text.len()));
        let mut origin = Vec::with_capacity(text.len());
        let raw = text.as_bytes();
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if c == '%'
                && let Some(byte) = percent_escape(raw, at)
            {
                // Skip the two hex digits; they are ASCII, one char each.
                chars.next();
                chars.next();
                if byte.is_ascii_alphanumeric() || byte >= 0x80 {
                    bytes.push(byte);
                    origin.push((at, at + 3));
                }
            } else if c.is_alphanumeric() {
                let end = at + c.len_utf8();
                bytes.extend_from_slice(&raw[at..end]);
                origin.extend(std::iter::repeat_n((at, end), end - at));
            }
        }
        Skeleton { bytes, origin }
    }

    /// The text's span for `len` skeleton bytes from `at`.
    fn span(&self, at: usize, len: usize) -> Range<usize> {
        let start = self.origin.get(at).map_or(0, |o| o.0);
        let end = self.origin.get(at + len - 1).map_or(start, |o| o.1);
        start..end
    }
}

fn percent_escape(raw: &[u8], at: usize) -> Option<u8> {
    let high = hex_value(*raw.get(at + 1)?)?;
    let low = hex_value(*raw.get(at + 2)?)?;
    Some(high << 4 | low)
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use super::*;

    #[test]
    fn base64_forms_at_each_offset_are_inside_the_encoding_of_a_longer_text() {
        let secret = b"cordon-canary-7Hq2xVp9Lm";
        for prefix in ["", "a", "ab", "abc", "user:"] {
            let mut data = prefix.as_bytes().to_vec();
            data.extend_from_slice(secret);
            data.extend_from_slice(b"!tail");
            let encoded: Vec<u8> = STANDARD_NO_PAD.encode(&data).bytes().filter(u8::is_ascii_alphanumeric).collect();
            let form = base64_form(secret, prefix.len() % 3);
            assert!(memmem::find(&encoded, &form).is_some(), "prefix {prefix:?}");
        }
    }

    #[test]
    fn a_secret_value_does_not_print() {
        let secret = SecretValue::from("hunter2-but-longer");
        assert_eq!(format!("{secret:?}"), "SecretValue(..)");
    }
}
