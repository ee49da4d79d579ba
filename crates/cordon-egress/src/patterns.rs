//! The crate's own patterns compiled: fixed at compile time, so a failure to compile is a bug
//! in the crate, caught by every test that builds a scanner.

/// A regex of this crate's own, fixed at compile time: a failure is a bug in the crate, caught
/// by every test that builds a scanner.
pub fn fixed(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).unwrap_or_else(|e| unreachable!("the pattern {pattern:?} does not compile: {e}"))
}

/// Patterns of this crate's own as one multi-pattern regex; see [`fixed`].
pub fn fixed_many(patterns: &[&str]) -> regex_automata::meta::Regex {
    regex_automata::meta::Regex::new_many(patterns)
        .unwrap_or_else(|e| unreachable!("the patterns {patterns:?} do not compile: {e}"))
}
