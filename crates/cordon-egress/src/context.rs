//! What surrounds a candidate: the words just before it on its line (an `order` number is not a
//! card, a number to `call` is not a social security number) and the sentence it stands in
//! (a consent-tier word counts when the sentence is about a person). Every look is bounded in
//! bytes, so the cost per candidate is constant.

use std::ops::Range;

/// The start of the window `len` bytes before `at`, on a character boundary.
fn back(text: &str, at: usize, len: usize) -> usize {
    let mut start = at.saturating_sub(len);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    start
}

/// The end of the window `len` bytes after `at`, on a character boundary.
fn forward(text: &str, at: usize, len: usize) -> usize {
    let mut end = (at + len).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// Whether one of the last `count` words (ASCII letters, any case) within `window` bytes
/// before `at`, on the same line, is one of `words` (lowercase). Reads backwards, allocates
/// nothing.
pub fn preceded_by(text: &str, at: usize, window: usize, count: usize, words: &[&str]) -> bool {
    let start = back(text, at, window);
    let before = text.get(start..at).unwrap_or_default();
    let line = before.rsplit('\n').next().unwrap_or_default();
    line.rsplit(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .take(count)
        .any(|w| words.iter().any(|candidate| candidate.eq_ignore_ascii_case(w)))
}

/// How far a sentence is looked at around a word, each way.
const SENTENCE_REACH: usize = 90;

/// The sentence around `span`: up to [`SENTENCE_REACH`] bytes each way, stopped by a line
/// break, `!`, `?`, `;` or a full stop followed by white space.
pub fn sentence(text: &str, span: &Range<usize>) -> Range<usize> {
    let bytes = text.as_bytes();
    let mut start = span.start;
    let low = back(text, span.start, SENTENCE_REACH);
    while start > low && !ends_sentence(bytes, start - 1) {
        start -= 1;
    }
    let mut end = span.end;
    let high = forward(text, span.end, SENTENCE_REACH);
    while end < high && !ends_sentence(bytes, end) {
        end += 1;
    }
    back(text, start, 0)..forward(text, end, 0)
}

fn ends_sentence(bytes: &[u8], at: usize) -> bool {
    match bytes.get(at) {
        Some(b'\n' | b'!' | b'?' | b';') => true,
        Some(b'.') => bytes.get(at + 1).is_none_or(u8::is_ascii_whitespace),
        _ => false,
    }
}

/// Words that say a sentence is about a person: the speaker, the reader, someone near them.
const PERSONAL: &[&str] = &[
    "i", "im", "ive", "id", "ill", "me", "my", "mine", "myself", "we", "were", "weve", "our", "ours", "us", "you",
    "your", "youre", "yours", "he", "hes", "she", "shes", "his", "her", "him", "they", "theyre", "their", "them",
    "mum", "mom", "dad", "wife", "husband", "son", "daughter", "partner", "brother", "sister",
];

/// Whether the sentence `range` of `text` has a word about a person (apostrophes dropped:
/// `I'm` is `im`).
pub fn personal(text: &str, range: &Range<usize>) -> bool {
    let sentence = text.get(range.clone()).unwrap_or_default();
    let mut word = String::new();
    for c in sentence.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphabetic() {
            word.push(c.to_ascii_lowercase());
        } else if c == '\'' || c == '\u{2019}' {
            continue;
        } else if !word.is_empty() {
            if PERSONAL.contains(&word.as_str()) {
                return true;
            }
            word.clear();
        }
    }
    false
}
