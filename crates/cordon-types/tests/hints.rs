//! The code the diagnostics quote as a fix checks: the loop that threads a session through a
//! list (`RECURSION_HINT`, quoted by `linear-in-loop`, closures and builtins).
#![allow(clippy::unwrap_used)]

use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, RECURSION_HINT, check};

#[test]
fn the_threading_loop_the_diagnostics_quote_checks() {
    let hint = RECURSION_HINT.trim_matches('`');
    let plan = format!("let repos = gh.list_repos();\n{hint}\n(\"read\", s)\n");
    let mut sources = SourceMap::new();
    let policy = sources.add("policies/github.cord", include_str!("../../../policies/github.cord"));
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    assert!(outcome.program.is_some(), "{:?}", outcome.diagnostics);
}

/// The errors `plan` gets under the GitHub policy.
fn errors_of(plan: &str) -> Vec<cordon_syntax::Diagnostic> {
    let mut sources = SourceMap::new();
    let policy = sources.add("policies/github.cord", include_str!("../../../policies/github.cord"));
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    outcome.diagnostics.into_iter().filter(|d| d.is_error()).collect()
}

/// The help of the first error `plan` gets under the GitHub policy.
fn help_of(plan: &str) -> String {
    let errors = errors_of(plan);
    let first = errors.iter().find(|d| d.code != cordon_syntax::Code::LinearUnused);
    first.and_then(|d| d.help.clone()).unwrap_or_default()
}

#[test]
fn loops_and_closures_over_a_session_point_at_the_threading_loop() {
    let in_loop = "for r in gh.list_repos() { let (t, s2) = gh.read_file(s, r, \"a\"); }\n(\"x\", s)";
    let in_map = "let xs = gh.list_repos().map(|r| gh.read_file(s, r, \"a\").0);\n(\"x\", s)";
    let in_fold = "let n = gh.list_repos().fold(0, |n, r| { let (t, s2) = gh.read_file(s, r, \"a\"); n });\n(\"x\", s)";
    for (plan, code) in [(in_loop, "linear-in-loop"), (in_map, "linear-captured"), (in_fold, "linear-captured")] {
        let help = help_of(plan);
        assert!(help.contains("thread it through") && help.contains(RECURSION_HINT), "{plan}: {help}");
        // One mistake, one error: the use in the loop or closure is reported, and the tuple after
        // it is not reported again as `linear-reused` (the unused `s2` inside is another).
        let codes: Vec<&str> =
            errors_of(plan).iter().map(|d| d.code.as_str()).filter(|c| *c != "linear-unused").collect();
        assert_eq!(codes, [code], "{plan}");
    }
    // A `fold` whose accumulator is the session is that loop, and checks.
    let mut sources = SourceMap::new();
    let policy = sources.add("policies/github.cord", include_str!("../../../policies/github.cord"));
    let plan = sources.add("plan.cord", "let s = gh.list_repos().fold(s, |s, r| s);\n(\"x\", s)");
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    assert!(outcome.program.is_some(), "{:?}", outcome.diagnostics);
}

#[test]
fn a_failed_measure_obligation_says_what_would_satisfy_it() {
    // Known tainted (it read a private repository): no `if` can change that.
    let known = "match gh.private_repo(\"plans\") {\n  Some(r) => if r.private {\n    let (t, s) = gh.read_file(s, r, \"a\");\n    let (i, s) = gh.create_issue(s, r, \"x\", t);\n    (\"posted\", s)\n  } else { (\"public\", s) },\n  None => (\"none\", s),\n}";
    let help = help_of(known);
    assert!(help.starts_with("this value is known not to satisfy it, and `tainted` is a measure"), "{help}");
    assert!(help.contains("return the answer to the user"), "{help}");
    // Not known either way (a fill gave it back): only a value whose type says it will do.
    let unknown = "let (a, s) = agent[(String, Session)](\"x\", s);\nmatch gh.repo(\"alice\", \"website\") {\n  Some(r) => if r.private { (a, s) } else {\n    let (i, s) = gh.create_issue(s, r, \"x\", a);\n    (a, s)\n  },\n  None => (a, s),\n}";
    let help = help_of(unknown);
    assert!(help.starts_with("`tainted` is a measure, which no `if` can test"), "{help}");
}

#[test]
fn a_function_named_like_a_builtin_is_told_so() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "fn sort(xs: List[Int]) -> List[Int] { xs }\nsort([2, 1]).len()");
    let outcome = check(&sources, &[], Some(plan), &CheckOptions::default());
    let first = outcome.diagnostics.iter().find(|d| d.is_error()).map(|d| d.message.clone()).unwrap_or_default();
    assert_eq!(first, "`sort` is a builtin; give yours another name");
}
