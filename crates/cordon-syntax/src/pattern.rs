//! Regular expressions as the language defines them: the `regex` crate's syntax, matched in
//! time linear in the input (no backreferences, no look-around), with limits on a pattern's
//! length, nesting and compiled size. The checker compiles literal patterns with [`compile`]
//! and the runtime every other, so both refuse the same patterns.

/// The longest pattern, in characters.
pub const MAX_PATTERN_CHARS: usize = 1000;

/// The longest text a pattern is matched against, in bytes.
pub const MAX_INPUT_BYTES: usize = 1 << 20;

/// The most memory one compiled pattern (and its lazy DFA) may take.
const MAX_COMPILED_BYTES: usize = 1 << 20;

/// How deeply groups and repetitions may nest.
const MAX_NESTING: u32 = 50;

/// The pattern compiled, or why it is refused, in one line.
pub fn compile(pattern: &str) -> Result<regex::Regex, String> {
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Err(format!("a pattern of {chars} characters is over the limit of {MAX_PATTERN_CHARS}"));
    }
    regex::RegexBuilder::new(pattern)
        .size_limit(MAX_COMPILED_BYTES)
        .dfa_size_limit(MAX_COMPILED_BYTES)
        .nest_limit(MAX_NESTING)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => "the pattern compiles to more than the size limit".to_string(),
            // The parser's message is several lines (the pattern, a caret, the error): keep
            // the error.
            e => e
                .to_string()
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid pattern")
                .trim()
                .to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::compile;

    #[test]
    fn patterns_over_the_limits_are_refused_with_a_reason() {
        assert!(compile(r"\w+@example\.com").is_ok());
        assert!(compile("(").is_err_and(|e| e.contains("unclosed")), "{:?}", compile("("));
        assert!(compile(&"a".repeat(1001)).is_err_and(|e| e.contains("over the limit")));
        assert!(compile(r"\w{1000}\w{1000}\w{1000}").is_err_and(|e| e.contains("size limit")));
        assert!(compile(&format!("{}a{}", "(".repeat(60), ")".repeat(60))).is_err());
        // Backreferences would need backtracking: not in the language.
        assert!(compile(r"(a)\1").is_err());
    }
}
