//! The diagnostic codes are declared once (`codes!` in `diagnostic.rs`); the documentation must
//! name every one, and names must be unique and kebab-case.

use cordon_syntax::Code;

#[test]
fn every_code_is_documented_and_named_once() {
    let docs = include_str!("../../../docs/diagnostics.md");
    let mut seen = std::collections::HashSet::new();
    for code in Code::ALL {
        let name = code.as_str();
        assert!(seen.insert(name), "`{name}` is the name of two codes");
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "`{name}` is not kebab-case");
        assert!(docs.contains(&format!("`{name}`")), "docs/diagnostics.md does not name `{name}`");
        assert!(!code.summary().is_empty(), "`{name}` has no summary");
        assert_eq!(Code::named(name), Some(*code));
    }
}
