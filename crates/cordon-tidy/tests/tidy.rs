//! The repository's invariants, checked on its real sources (see `docs/style.md` for the why of
//! each). Where the code does not hold a rule yet, its exceptions are listed here, each with the
//! reason, and the list may only shrink: a test fails on a new exception and on a listed one
//! that has been fixed, naming it.

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::sync::OnceLock;

use cordon_tidy::{Repo, allow, docs, layers, modules, reach, size};

/// The repository, read and scanned once for all the tests.
fn repo() -> &'static Repo {
    static REPO: OnceLock<Repo> = OnceLock::new();
    REPO.get_or_init(|| Repo::this().unwrap_or_else(|e| panic!("cannot read the repository: {e}")))
}

fn holds(problems: Vec<String>) {
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// Each crate's layer (lowest 0). A crate's code depends only on crates of lower layers.
const LAYERS: &[(&str, u32)] = &[
    // What a person is shown, escaped: below everything that shows text.
    ("cordon-text", 0),
    // The tidy test reads the repository and depends on none of it.
    ("cordon-tidy", 0),
    // The editors' tree-sitter grammar depends on no crate of the workspace; its tests read cordon-syntax.
    ("tree-sitter-cordon", 0),
    // The language: source to tree (escaping what it shows by cordon-text), and the solver,
    // each on its own; the store on its own.
    ("cordon-syntax", 1),
    ("cordon-smt", 1),
    ("cordon-store", 1),
    // The outgoing-data check's detectors: a pure library on texts, naming findings by cordon-text.
    ("cordon-egress", 1),
    ("cordon-label", 2),
    // The vault keeps its files as the store keeps its own.
    ("cordon-vault", 2),
    // The credential broker: the vault's secrets into requests, as a process of its own; it
    // knows no language, no engine and no host.
    ("cordon-broker", 3),
    ("cordon-types", 3),
    ("cordon-runtime", 4),
    ("cordon-engine", 5),
    ("cordon-flow", 5),
    ("cordon-gate", 6),
    ("cordon-audit", 6),
    ("cordon-fs", 6),
    ("cordon-http", 6),
    ("cordon-mcp", 6),
    ("cordon-sim", 6),
    ("cordon-agent", 7),
    ("cordon", 8),
    ("cordon-cli", 9),
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

/// The steps of assembling a request; only the library (`crates/cordon/src/request.rs`,
/// `workspace.rs`) takes them, so every front end gets the same order of stages.
const ASSEMBLING_A_REQUEST: &[&str] = &[
    // `Engine::start_request`: the engine driven on a plan (called, or taken as a function).
    ". start_request (",
    ":: start_request",
    // The static label analysis of a plan against its policies.
    "cordon_flow :: check",
    // The audit record of a request, opened before it runs.
    "Recording :: begin",
];

#[test]
fn a_request_is_assembled_only_in_the_library() {
    let repo = repo();
    let found = reach::forbidden(&repo.files, &["cordon"], ASSEMBLING_A_REQUEST).unwrap();
    holds(found.iter().map(|p| format!("{p}: a request is assembled only in the library (crates/cordon)")).collect());
}

/// The enums of the syntax tree whose variants say what a node is.
const SYNTAX_KINDS: &[&str] = &["ExprKind", "ItemKind", "TypeExprKind", "PatternKind", "Stmt", "TokenKind"];

/// Crates that may look at a plan's syntax: the parser that makes it and the checker that
/// resolves it.
const READ_SYNTAX: &[&str] = &["cordon-syntax", "cordon-types"];

/// Files outside those crates that name syntax kinds: the compiler and the static analysis read
/// a program through the checker's views of it (`cordon_types::node`), never by its kinds.
const READ_SYNTAX_FOR_NOW: &[&str] = &[
    // `mcp import` builds a policy's tree for the printer: it makes the kinds, never matches
    // on them.
    "crates/cordon-mcp/src/import.rs",
];

#[test]
fn only_the_syntax_and_checker_crates_match_on_syntax_kinds() {
    let repo = repo();
    let missing = reach::undeclared(&repo.files, "cordon-syntax", SYNTAX_KINDS).unwrap();
    assert!(missing.is_empty(), "cordon-syntax declares no enum {missing:?}: update SYNTAX_KINDS");
    let found = reach::variants(&repo.files, READ_SYNTAX, SYNTAX_KINDS).unwrap();
    holds(allow::ratchet("only the syntax and checker crates name syntax kinds", &found, READ_SYNTAX_FOR_NOW));
}

/// Crates whose string literals may equal a builtin's name: cordon-syntax declares the names;
/// the hosts match on their own tools' names (`remove` a file), which are not the language's.
const NAME_BUILTINS: &[&str] = &["cordon-syntax", "cordon-fs", "cordon-http", "cordon-sim", "cordon-mcp"];

#[test]
fn builtins_are_dispatched_by_enum_not_by_name() {
    let repo = repo();
    let declaring = repo.files.iter().find(|f| f.path == "crates/cordon-syntax/src/builtins.rs").unwrap();
    let names = reach::builtin_names(&declaring.text).unwrap();
    assert!(names.len() > 50 && names.iter().any(|n| n == "len") && names.iter().any(|n| n == "public"), "{names:?}");
    holds(reach::string_dispatch(&repo.files, NAME_BUILTINS, &names).unwrap());
}

/// Looking a builtin up by its name (`Builtin::from_name`): a name is resolved once, where the
/// checker resolves a call, and every later stage reads the builtin it found.
const LOOK_UP_BUILTINS: &[&str] = &["Builtin :: from_name", "LabelFn :: from_name"];

/// Crates that may look a builtin up by name: the one that declares the names, and the checker.
const RESOLVE_BUILTINS: &[&str] = &["cordon-syntax", "cordon-types"];

#[test]
fn builtins_are_resolved_by_name_only_by_the_checker() {
    let repo = repo();
    let found = reach::forbidden(&repo.files, RESOLVE_BUILTINS, LOOK_UP_BUILTINS).unwrap();
    holds(
        found
            .iter()
            .map(|p| format!("{p}: only the checker resolves a builtin by name (read `Checked::resolved`)"))
            .collect(),
    );
}

/// The process's terminal: printing to its standard output or error, reading its input.
const PRINTING: &[&str] =
    &["print !", "println !", "eprint !", "eprintln !", "io :: stdout (", "io :: stderr (", "io :: stdin ("];

/// Files outside the CLI that use the process's terminal.
const PRINTING_FOR_NOW: &[&str] = &[
    // The terminal approver: `Terminal::stdio` asks a person on this process's stdin and stderr.
    "crates/cordon-gate/src/approver.rs",
];

#[test]
fn only_the_cli_prints() {
    let repo = repo();
    let found = reach::by_file(&reach::forbidden(&repo.files, &["cordon-cli"], PRINTING).unwrap());
    holds(allow::ratchet("only cordon-cli prints", &found, PRINTING_FOR_NOW));
}

/// Circles of imports between the files of a crate, each as its files (in order, separated by
/// white space).
const CIRCLES_FOR_NOW: &[&str] = &[];

#[test]
fn no_crate_has_a_circle_of_imports_between_its_files() {
    let repo = repo();
    let found = modules::circles(&repo.files).unwrap();
    let found = found
        .into_iter()
        .map(|c| {
            let imports: Vec<_> =
                c.imports.iter().map(|(from, to, line)| format!("\n    {from}:{line} imports {to}")).collect();
            (c.files.join(" "), format!("{} files reach each other:{}", c.files.len(), imports.concat()))
        })
        .collect();
    let allowed: Vec<String> =
        CIRCLES_FOR_NOW.iter().map(|c| c.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
    holds(allow::ratchet("no circle of imports", &found, &allowed));
}

/// Files over 1,000 lines.
const LONG_FILES_FOR_NOW: &[&str] = &[
    // The solver's tests, one per encoding rule.
    "crates/cordon-smt/tests/solver.rs",
    // The parser's tests, one per form of the grammar.
    "crates/cordon-syntax/tests/parser.rs",
];

#[test]
fn no_file_is_over_a_thousand_lines() {
    let repo = repo();
    holds(allow::ratchet("no file over 1,000 lines", &size::long_files(&repo.files, 1000), LONG_FILES_FOR_NOW));
}

/// Functions over 150 lines, as `path::name`.
const LONG_FUNCTIONS_FOR_NOW: &[&str] = &[];

#[test]
fn no_function_is_over_a_hundred_and_fifty_lines() {
    let repo = repo();
    let found = size::long_functions(&repo.files, 150).unwrap();
    holds(allow::ratchet("no function over 150 lines", &found, LONG_FUNCTIONS_FOR_NOW));
}

#[test]
fn every_module_starts_with_a_doc_comment() {
    let repo = repo();
    holds(docs::undocumented(&repo.files));
}
