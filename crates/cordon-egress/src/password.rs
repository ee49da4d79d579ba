//! The never tier's password assignments: the value after a key named `password`, `passwd`,
//! `pwd`, `passphrase` or `secret` (`DB_PASSWORD=..`, `"password": ".."`, `client_secret: ..`),
//! after `my password is`, after `login NAME password` (`.netrc`), after a MySQL client's `-p`,
//! and in a URL's user information (`postgres://app:PASSWORD@db`). The word in prose ("forgot your
//! password") has no value and is no finding.
//!
//! A value that stands for a password without being one is no finding either: a placeholder
//! (`<your password>`, `${DB_PASSWORD}`, `********`, `redacted`), or code that reads it from
//! elsewhere (`os.environ["PWD"]`, `password: &str`). Unquoted, a value needs a digit or a
//! symbol: `password: String` is a type annotation, not a password.

use std::ops::Range;

use regex::Regex;

use crate::category::Category;
use crate::finding::Finding;
use crate::patterns::fixed;

/// The longest value read after a key.
const MAX_VALUE: usize = 256;

/// The assignment patterns, compiled once per scanner.
#[derive(Debug)]
pub struct Passwords {
    assignment: Regex,
    prose: Regex,
    mysql: Regex,
    netrc: Regex,
    userinfo: Regex,
}

impl Passwords {
    /// The compiled patterns.
    pub fn new() -> Passwords {
        Passwords {
            assignment: fixed(
                r#"(?i)(?-u:\b)[a-z0-9_.-]*(?:password|passwd|pwd|passphrase|secret)(?:_?key|_?value)?["']?[ \t]*(?::=|=>|:|=)[ \t]*"#,
            ),
            prose: fixed(r"(?i)(?-u:\b)(?:password|passphrase|pwd)[ \t]+(?:is|was)[ \t]*:?[ \t]+"),
            mysql: fixed(r"(?-u:\b)mysql(?:dump|admin)?[ \t][^\n]*?[ \t]-p"),
            netrc: fixed(r"(?-u:\b)login[ \t]+\S{1,100}\s+password[ \t]+"),
            // scheme://user: then the password, up to the `@` of the host.
            userinfo: fixed(r"(?-u:\b)[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@]{1,100}:"),
        }
    }

    /// The password values of `text`.
    pub fn find(&self, text: &str, out: &mut Vec<Finding>) {
        let matches = [&self.assignment, &self.mysql, &self.netrc].into_iter().flat_map(|r| r.find_iter(text));
        for m in matches {
            if let Some(span) = value(text, m.end()) {
                out.push(Finding::new(Category::Password, span));
            }
        }
        for m in self.prose.find_iter(text) {
            if let Some(span) = prose_value(text, m.end()) {
                out.push(Finding::new(Category::Password, span));
            }
        }
        for m in self.userinfo.find_iter(text) {
            if let Some(span) = userinfo_password(text, m.end()) {
                out.push(Finding::new(Category::Password, span));
            }
        }
    }
}

impl Default for Passwords {
    fn default() -> Self {
        Passwords::new()
    }
}

/// The text from `at`, at most one byte past the longest value: reading a value costs the
/// same however long the text (a text of many `password=` reads each value once, not the rest).
fn bounded(text: &str, at: usize) -> Option<&str> {
    let mut end = (at + MAX_VALUE + 2).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(at..end)
}

/// The value starting at `at`, when it is a real one.
fn value(text: &str, at: usize) -> Option<Range<usize>> {
    let rest = bounded(text, at)?;
    let quote = rest.chars().next().filter(|c| ['"', '\'', '`'].contains(c));
    let span = match quote {
        Some(q) => {
            let inner = &rest[1..];
            let len = inner.find([q, '\n'])?;
            (inner.as_bytes().get(len) == Some(&(q as u8))).then_some(at + 1..at + 1 + len)?
        }
        None => {
            let len = rest.find(|c: char| c.is_whitespace() || "\"'`,;&<>)]}".contains(c)).unwrap_or(rest.len());
            let len = if rest[..len].ends_with('.') { len - 1 } else { len };
            at..at + len
        }
    };
    let value = text.get(span.clone())?;
    let real = value.len() <= MAX_VALUE && !placeholder(value) && (quote.is_some() || !code_or_word(value));
    real.then_some(span)
}

/// Words that follow "password is" in prose without being the password.
const NOT_A_VALUE: &[&str] = &[
    "a",
    "an",
    "the",
    "on",
    "in",
    "at",
    "not",
    "now",
    "also",
    "just",
    "still",
    "too",
    "very",
    "so",
    "wrong",
    "incorrect",
    "invalid",
    "expired",
    "required",
    "needed",
    "mandatory",
    "weak",
    "strong",
    "correct",
    "right",
    "same",
    "different",
    "secure",
    "insecure",
    "long",
    "short",
    "case",
    "empty",
    "blank",
    "missing",
    "saved",
    "stored",
    "written",
    "hidden",
    "changed",
    "reset",
    "set",
    "sent",
    "shared",
    "visible",
    "encrypted",
    "hashed",
    "ok",
    "fine",
    "good",
    "bad",
    "easy",
    "hard",
    "simple",
    "taped",
    "somewhere",
    "there",
    "here",
    "what",
    "which",
    "whatever",
    "probably",
    "definitely",
];

/// The value after "my password is": like an assignment's, but a plain word counts unless it
/// is one of the words prose puts there (`the password is required`).
fn prose_value(text: &str, at: usize) -> Option<Range<usize>> {
    if let Some(span) = value(text, at) {
        return Some(span);
    }
    let rest = bounded(text, at)?;
    let len = rest.find(|c: char| !c.is_alphabetic()).unwrap_or(rest.len());
    let word = rest[..len].to_lowercase();
    ((4..=MAX_VALUE).contains(&len) && !NOT_A_VALUE.contains(&word.as_str()) && !PLACEHOLDERS.contains(&word.as_str()))
        .then_some(at..at + len)
}

/// The password of a URL's user information starting at `at`: up to the `@` before the host,
/// when it is not a placeholder (`USER:PASSWORD@HOST`).
fn userinfo_password(text: &str, at: usize) -> Option<Range<usize>> {
    let rest = bounded(text, at)?;
    let len = rest.find(|c: char| c == '@' || c == '/' || c.is_whitespace())?;
    let value = &rest[..len];
    let upper_word = value.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    (rest.as_bytes().get(len) == Some(&b'@') && !value.is_empty() && !placeholder(value) && !upper_word)
        .then_some(at..at + len)
}

/// Words that stand in a value's place.
const PLACEHOLDERS: &[&str] = &[
    "redacted",
    "hidden",
    "none",
    "null",
    "nil",
    "empty",
    "required",
    "optional",
    "true",
    "false",
    "password",
    "secret",
    "your_password",
    "yourpassword",
    "your-password",
    "xxx",
    "todo",
    "tbd",
    "string",
    "str",
    "example",
    "undefined",
    "masked",
    "removed",
    "omitted",
    "same",
    "see",
    "here",
    "changeme",
];

fn placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let first = value.chars().next();
    let all_same = first.is_some_and(|f| value.chars().all(|c| c == f));
    value.chars().count() < 3
        || all_same
        || PLACEHOLDERS.contains(&lower.as_str())
        || ["<", "${", "$(", "{{", "%(", "[", "…", "..."].iter().any(|p| value.starts_with(p))
        || (value.starts_with('$')
            && value[1..].bytes().all(|b| b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit()))
}

/// Whether an unquoted value is code (`os.environ[..]`, `getenv(..)`, `&str`, `Self::KEY`)
/// or a bare word (no digit, no symbol).
fn code_or_word(value: &str) -> bool {
    let word_len = value.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(value.len());
    let (word, after) = value.split_at(word_len);
    let starts_like_code = word.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && (after.starts_with(['.', '(', '[']) || after.starts_with("::"));
    let bare_word = value.chars().all(char::is_alphabetic);
    starts_like_code || bare_word || value.starts_with('&')
}
