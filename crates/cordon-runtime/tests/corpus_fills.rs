//! Whatever is a plan is a fill: every accepted program of the conformance corpus, given to a
//! hole as its fill (with the case's policies, in the scope of their entry), compiles there and
//! runs. A fill may declare what a plan may (functions, constants, types); one that checked and
//! then failed to compile at run time (`the fill does not compile: A is not defined`, for a
//! fill declaring a `const`) was a gap between the checker and the compiler that this closes
//! for the whole corpus. Fills here skip the checker: only the compiler is under test.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-types/tests/common/mod.rs"]
mod common;

use common::{cord_files, repo_root, split_corpus_file};
use cordon_label::Label;
use cordon_runtime::{Config, Program, Run, Sessions, Step};
use cordon_syntax::SourceMap;

/// The plan every case is the fill of: one hole, in the scope of the policies' entry.
const HOLE: &str = r#"agent[Int]("the corpus case")"#;

#[test]
fn every_accepted_case_compiles_and_runs_as_a_fill() {
    let accept = cord_files(&repo_root().join("tests/corpus/accept"));
    let (mut tried, mut failures) = (0, Vec::new());
    for path in &accept {
        let text = std::fs::read_to_string(path).unwrap();
        let parts = split_corpus_file(&text);
        let mut sources = SourceMap::new();
        let mut policies = Vec::new();
        for p in &parts.policy_paths {
            let policy = std::fs::read_to_string(repo_root().join(p)).unwrap();
            policies.push(sources.add(p.as_str(), policy));
        }
        if let Some(inline) = &parts.inline_policy {
            policies.push(sources.add("policy.cord", inline.as_str()));
        }
        let hole = sources.add("plan.cord", HOLE);
        let fill = sources.add("fill.cord", parts.plan.as_str());
        let Ok(program) = Program::unchecked(&sources, &policies, Some(hole)) else { continue };
        // An entry whose inputs a fresh run cannot make (a refined one) has no run to try.
        let Ok(mut run) = Run::start(&program, &Sessions::default(), &Config::default()) else { continue };
        let Ok(Step::Hole(_)) = run.proceed() else { continue };
        tried += 1;
        match run.fill_unchecked(&sources, fill, &[], &Label::bottom()) {
            Err(e) if e.message.starts_with("the fill does not compile") => {
                failures.push(format!("{}: {}", path.display(), e.message));
            }
            // Anything else is the case running (or stopping at a tool the run has no host for).
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {tried} cases do not compile as fills:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Most cases are tried: a change that made them all skip would prove nothing.
    assert!(tried * 10 >= accept.len() * 8, "only {tried} of {} accepted cases were tried as fills", accept.len());
}
