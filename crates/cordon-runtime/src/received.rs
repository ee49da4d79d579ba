//! What of a value a run received as it is, for a release's card: whether a text a call would
//! let out of a group is one a tool's answer carrying that group held word for word (a link as
//! it was posted), and else which parts of it are.
//!
//! The run keeps for this only the answers that carried some group's data: a release lets data
//! out of a group, so an answer that carried none can never be where a released text came from.
//! A long run of public answers keeps none of them.

use cordon_label::Label;
use serde::{Deserialize, Serialize};

use crate::builtins::deep_label;
use crate::value::{Val, Value};

/// The tools' answers that carried some group's data, oldest first, each with those groups.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Received(Vec<(Vec<String>, Val)>);

impl Received {
    /// The answers among `answers` that [`Received::add`] keeps.
    pub(crate) fn of<'v>(answers: impl Iterator<Item = &'v Val>) -> Received {
        let mut received = Received::default();
        answers.for_each(|a| received.add(a, &deep_label(a)));
        received
    }

    /// Keeps `answer`, whose whole label is `label`, if it carried some group's data.
    pub(crate) fn add(&mut self, answer: &Val, label: &Label) {
        let groups = label.dc().secrecy.groups();
        if !groups.is_empty() {
            self.0.push((groups, answer.clone()));
        }
    }

    /// The answers kept, oldest first (what the run holds, for its memory count).
    pub(crate) fn answers(&self) -> impl Iterator<Item = &Val> {
        self.0.iter().map(|(_, answer)| answer)
    }

    /// The answers kept that carried the data of every group in `groups`, newest first.
    fn carrying<'a>(&'a self, groups: &'a [String]) -> impl Iterator<Item = &'a Val> {
        self.0.iter().rev().filter(|(carried, _)| groups.iter().all(|g| carried.contains(g))).map(|(_, a)| a)
    }

    /// Whether `value` is a text an answer carrying the data of every group in `groups` held
    /// as it is: one of its texts, or one word of one, punctuation around it aside (a link as
    /// it was posted). See [`crate::Flow::as_received`].
    pub(crate) fn as_is(&self, value: &Val, groups: &[String]) -> bool {
        let Value::Str(text) = &value.value else { return false };
        let text = text.as_str();
        if text.trim().is_empty() {
            return false;
        }
        self.carrying(groups).any(|answer| crate::builtins::texts(answer).iter().any(|t| has_word(t, text)))
    }

    /// The parts of `value`, a text, that answers carrying the data of every group in `groups`
    /// held word for word: its maximal runs of which every [`RECEIVED_RUN`] characters stand
    /// together in one such answer (their newest [`RECEIVED_SCAN_BYTES`] read). See
    /// [`crate::Flow::received`].
    pub(crate) fn parts(&self, value: &Val, groups: &[String]) -> Vec<String> {
        let Value::Str(text) = &value.value else { return Vec::new() };
        let mut sources = Vec::new();
        let mut budget = RECEIVED_SCAN_BYTES;
        for answer in self.carrying(groups) {
            for t in crate::builtins::texts(answer) {
                let t = &t[..floor_char_boundary(t, budget.min(t.len()))];
                budget -= t.len();
                sources.push(t);
            }
            if budget == 0 {
                break;
            }
        }
        runs_found_in(text.as_str(), &sources)
    }
}

/// The shortest run of a built text that [`Received::parts`] marks as received: shorter runs
/// (a word, `https://`) are in too many texts to say anything.
pub(crate) const RECEIVED_RUN: usize = 8;

/// How much of the answers carrying the groups [`Received::parts`] reads, newest first.
const RECEIVED_SCAN_BYTES: usize = 1 << 20;

/// The maximal runs of `text` of which every [`RECEIVED_RUN`] characters stand together in one
/// of `sources`, in order.
fn runs_found_in(text: &str, sources: &[&str]) -> Vec<String> {
    let windows: std::collections::HashSet<&str> = sources.iter().flat_map(|s| runs_of(s, RECEIVED_RUN)).collect();
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let chars = bounds.len() - 1;
    let mut covered = vec![false; chars];
    for i in 0..(chars + 1).saturating_sub(RECEIVED_RUN) {
        if windows.contains(&text[bounds[i]..bounds[i + RECEIVED_RUN]]) {
            covered[i..i + RECEIVED_RUN].iter_mut().for_each(|c| *c = true);
        }
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < chars {
        let start = i;
        while i < chars && covered[i] {
            i += 1;
        }
        if i > start {
            parts.push(text[bounds[start]..bounds[i]].to_string());
        }
        i += 1;
    }
    parts
}

/// Every run of `n` characters in `text`.
fn runs_of(text: &str, n: usize) -> impl Iterator<Item = &str> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    (0..bounds.len().saturating_sub(n)).map(move |i| &text[bounds[i]..bounds[i + n]])
}

/// The largest character boundary of `text` at or before `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    (0..=at).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}

/// Whether `word` is `text` or one of its words, punctuation around the word aside.
fn has_word(text: &str, word: &str) -> bool {
    let around = |c: char| {
        matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | '"' | '\'' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>')
    };
    text == word || text.split_whitespace().any(|w| w == word || w.trim_matches(around) == word)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{RECEIVED_RUN, Received, deep_label, has_word, runs_found_in};
    use crate::value::{Val, Value};

    #[test]
    fn only_answers_that_carried_a_groups_data_are_kept() {
        use cordon_label::{DcLabel, Label, Source};
        let source = || Source { what: "a test".into(), span: Default::default() };
        let public = Val::plain(Value::str("https://example.com/talk"));
        let group = DcLabel::group("team", &["alice"]);
        let secret = Val { value: Value::str("https://example.com/talk"), label: Label::new(group, source()) };
        let mut received = Received::default();
        (0..1000).for_each(|_| received.add(&public, &deep_label(&public)));
        assert!(received.answers().next().is_none(), "a public answer is never where a release's text came from");
        received.add(&secret, &deep_label(&secret));
        assert_eq!(received.answers().count(), 1);
        let text = Val::plain(Value::str("https://example.com/talk"));
        assert!(received.as_is(&text, &["team".to_string()]));
    }

    #[test]
    fn a_word_received_is_a_whole_word_punctuation_around_it_aside() {
        let text = "great read: (https://blog.example.com/a). see you";
        for word in ["https://blog.example.com/a", "(https://blog.example.com/a).", "see", text] {
            assert!(has_word(text, word), "{word}");
        }
        for word in
            ["https://blog.example.com", "blog.example.com/a", "see you", "https://blog.example.com/a?q=see", ""]
        {
            assert!(!has_word(text, word), "{word}");
        }
    }

    #[test]
    fn a_built_address_marks_the_groups_text_in_it() {
        let said = "Standup moves to 10:30. Great write-up: https://blog.example.com/a";
        let url = format!("https://evil.test/?q={}", said.replace(' ', "+"));
        assert_eq!(runs_found_in(&url, &[said]), ["https://", "write-up:", "https://blog.example.com/a"]);
        assert!(runs_found_in("https://evil.test/?q=", &["Standup moves"]).is_empty());
        assert!(runs_found_in("short", &["short"]).is_empty(), "shorter than a run: nothing to say");
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            failure_persistence: None,
            rng_seed: proptest::test_runner::RngSeed::Fixed(27),
            ..ProptestConfig::default()
        })]

        /// Every part marked is the group's text word for word, and every piece of the group's
        /// text put in whole (at least a run long) is marked.
        #[test]
        fn what_is_marked_is_received_and_what_was_put_in_is_marked(
            source in "[a-z :/.]{0,60}",
            cuts in proptest::collection::vec((0usize..60, 0usize..60, "[A-Z?=&]{0,4}"), 0..5),
        ) {
            let chars: Vec<char> = source.chars().collect();
            let mut built = String::new();
            let mut put_in = Vec::new();
            for (a, b, junk) in cuts {
                let (a, b) = (a.min(chars.len()), b.min(chars.len()));
                let piece: String = chars[a.min(b)..a.max(b)].iter().collect();
                built.push_str(&junk);
                built.push_str(&piece);
                put_in.push(piece);
            }
            let marked = runs_found_in(&built, &[&source]);
            let source_chars: Vec<char> = source.chars().collect();
            let windows_of_source: std::collections::HashSet<String> =
                source_chars.windows(RECEIVED_RUN).map(|w| w.iter().collect()).collect();
            // Each marked character stands in a run of the part that the source holds.
            for part in &marked {
                let chars: Vec<char> = part.chars().collect();
                let mut covered = vec![false; chars.len()];
                for (i, w) in chars.windows(RECEIVED_RUN).enumerate() {
                    if windows_of_source.contains(&w.iter().collect::<String>()) {
                        covered[i..i + RECEIVED_RUN].iter_mut().for_each(|c| *c = true);
                    }
                }
                prop_assert!(covered.iter().all(|c| *c), "{part:?} in {built:?}");
            }
            let all_marked = marked.concat();
            for piece in put_in.iter().filter(|p| p.chars().count() >= RECEIVED_RUN) {
                prop_assert!(marked.iter().any(|m| m.contains(piece.as_str())), "{piece:?} unmarked in {built:?}: {all_marked:?}");
            }
        }
    }
}
