//! The crate's own patterns compiled: fixed at compile time, so a failure to compile is a bug
//! in the crate, caught by every test that builds a scanner.
//!
//! The lazy DFA's cache is set larger than the `regex` default: the lexicon's alternations and
//! the Unicode classes of street names make many states, and a DFA that fills its cache gives
//! way to a slower (still linear) engine.

use regex_automata::meta;

/// The lazy DFA's cache, per regex.
const DFA_CACHE: usize = 32 << 20;

/// A regex of this crate's own; see the module's doc.
pub fn fixed(pattern: &str) -> regex::Regex {
    regex::RegexBuilder::new(pattern)
        .dfa_size_limit(DFA_CACHE)
        .build()
        .unwrap_or_else(|e| unreachable!("the pattern {pattern:?} does not compile: {e}"))
}

/// Patterns of this crate's own as one multi-pattern regex; see the module's doc.
pub fn fixed_many(patterns: &[&str]) -> meta::Regex {
    meta::Builder::new()
        .configure(meta::Config::new().hybrid_cache_capacity(DFA_CACHE))
        .build_many(patterns)
        .unwrap_or_else(|e| unreachable!("the patterns {patterns:?} do not compile: {e}"))
}
