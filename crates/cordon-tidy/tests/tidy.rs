//! The repository's invariants, checked on its real sources (see `docs/style.md` for the why of
//! each). Where the code does not hold a rule yet, its exceptions are listed here, each with the
//! reason, and the list may only shrink: a test fails on a new exception and on a listed one
//! that has been fixed, naming it.

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_tidy::{Repo, allow, docs, layers, modules, reach, size};

fn repo() -> Repo {
    Repo::this().unwrap_or_else(|e| panic!("cannot read the repository: {e}"))
}

fn holds(problems: Vec<String>) {
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// Each crate's layer (lowest 0). A crate's code depends only on crates of lower layers.
const LAYERS: &[(&str, u32)] = &[
    // The language: source to tree, and the solver, each on its own; the store on its own.
    ("cordon-syntax", 0),
    ("cordon-smt", 0),
    ("cordon-store", 0),
    // The tidy test reads the repository and depends on none of it.
    ("cordon-tidy", 0),
    ("cordon-label", 1),
    ("cordon-types", 2),
    ("cordon-runtime", 3),
    ("cordon-engine", 4),
    ("cordon-flow", 4),
    ("cordon-gate", 5),
    ("cordon-audit", 5),
    ("cordon-fs", 5),
    ("cordon-mcp", 5),
    ("cordon-sim", 5),
    ("cordon-agent", 6),
    ("cordon", 7),
    ("cordon-cli", 8),
];

#[test]
fn crates_depend_only_on_lower_layers() {
    let repo = repo();
    holds(layers::check(&repo.manifests(), LAYERS));
}

#[test]
fn the_cli_reaches_the_workspace_only_through_the_library() {
    let repo = repo();
    holds(layers::front_end(&repo.manifests(), "cordon-cli", "cordon"));
}
