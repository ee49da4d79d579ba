//! The crate's own patterns compiled: fixed at compile time, so a failure to compile is a bug
//! in the crate, caught by every test that builds a scanner.
//!
//! A multi-pattern regex's lazy DFA cache is set larger than the `regex` default (2 MiB):
//! the lexicon's alternations make many states, and a DFA that keeps filling its cache gives
//! way to a slower (still linear) engine. It is a bound, not an allocation: the cache grows
//! with the states a text needs, and two such regexes per scanner make at most 16 MiB a thread.

use regex_automata::meta;

/// The lazy DFA's cache of a multi-pattern regex.
const DFA_CACHE: usize = 8 << 20;

/// A regex of this crate's own; see the module's doc.
pub fn fixed(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).unwrap_or_else(|e| unreachable!("the pattern {pattern:?} does not compile: {e}"))
}

/// Patterns of this crate's own as one multi-pattern regex; see the module's doc.
pub fn fixed_many(patterns: &[&str]) -> meta::Regex {
    meta::Builder::new()
        .configure(meta::Config::new().hybrid_cache_capacity(DFA_CACHE))
        .build_many(patterns)
        .unwrap_or_else(|e| unreachable!("the patterns {patterns:?} do not compile: {e}"))
}
