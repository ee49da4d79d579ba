//! The code the diagnostics quote as a fix, in one place: the expression and builtin passes
//! quote it where a linear value is misused, a test checks that it checks (`tests/hints.rs`),
//! and the agent's prompt quotes it too. Low in the crate: it imports nothing.

/// The loop that threads a linear value through a list (its body's value is the next `s`, the
/// loop's value the last), quoted by the diagnostics
/// of loops, closures and `fold`s that would use one (and shown in the language reference).
pub const RECURSION_HINT: &str =
    "`let s = for r in repos with s { let (_, s) = gh.read_file(s, r, \"README.md\"); s };`";
