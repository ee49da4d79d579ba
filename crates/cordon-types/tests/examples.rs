//! The seed examples under `examples/`, as a user runs them: each is accepted or rejected as
//! its comment says, and the diagnostics a user reads (human and concise forms) are snapshots.

#![allow(clippy::panic, clippy::unwrap_used)] // a test may fail loudly

use std::path::Path;

use cordon_syntax::{SourceMap, render};
use cordon_types::{CheckOptions, check};

/// (example, policy, accepted)
const EXAMPLES: &[(&str, &str, bool)] = &[
    ("examples/divide/reject_zero.cord", "policies/console.cord", false),
    ("examples/divide/reject_unchecked_input.cord", "policies/console.cord", false),
    ("examples/divide/accept_guarded.cord", "policies/console.cord", true),
    ("examples/github/benign.cord", "policies/github.cord", true),
    ("examples/github/exfiltrate_private.cord", "policies/github.cord", false),
    ("examples/github/reuse_session.cord", "policies/github.cord", false),
    ("examples/citations/fetch_and_append.cord", "policies/citations.cord", true),
    ("examples/citations/forge_entry.cord", "policies/citations.cord", false),
    ("examples/citations/write_plain_bib.cord", "policies/citations.cord", false),
];

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn seed_examples() {
    for &(plan, policy, accepted) in EXAMPLES {
        let mut sources = SourceMap::new();
        let policy_file = sources.add(policy, read(policy));
        let plan_file = sources.add(plan, read(plan));
        let outcome = check(&sources, &[policy_file], Some(plan_file), &CheckOptions::default());
        let human: String = outcome.diagnostics.iter().map(|d| render::human(d, &sources) + "\n").collect();
        let concise: String = outcome.diagnostics.iter().map(|d| render::concise(d, &sources)).collect();
        assert_eq!(outcome.accepted(), accepted, "{plan}:\n{human}");
        let name = Path::new(plan).with_extension("").display().to_string().replace('/', "__");
        insta::assert_snapshot!(
            format!("{name}__human"),
            format!("{}\n{human}", render::summary(&outcome.diagnostics))
        );
        insta::assert_snapshot!(format!("{name}__concise"), concise);
    }
}
