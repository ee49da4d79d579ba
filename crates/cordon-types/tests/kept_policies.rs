//! A check against the policies the last check on its thread declared starts from a copy of that
//! declaration (`cache.rs`). It must say exactly what declaring them again says: the same
//! diagnostics, the same acceptance, the same solver counters, for every example plan of every
//! shipped policy, for plans that collide with the policies' names, and after the policies
//! changed under the same file ids.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::Path;

use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, Outcome, check};

/// What a check says, all of it that a caller sees.
fn said(outcome: &Outcome) -> String {
    format!(
        "{:?}\naccepted: {}\nqueries {} folded {} to z3 {} hypotheses {}",
        outcome.diagnostics,
        outcome.program.is_some(),
        outcome.solver_queries,
        outcome.folded,
        outcome.solver_calls,
        outcome.solver_hypotheses
    )
}

fn check_text(policies: &[(&str, &str)], plan: &str) -> Outcome {
    let mut sources = SourceMap::new();
    let files: Vec<_> = policies.iter().map(|(name, text)| sources.add(*name, *text)).collect();
    let plan = sources.add("plan.cord", plan);
    check(&sources, &files, Some(plan), &CheckOptions::default())
}

/// The plan checked on a new thread (the policies declared afresh), then again on that thread
/// (from the kept declaration): both must say the same.
fn same_twice(policies: &[(&str, &str)], plan: &str) -> String {
    let (fresh, kept) = std::thread::scope(|s| {
        s.spawn(|| (said(&check_text(policies, plan)), said(&check_text(policies, plan)))).join().unwrap()
    });
    assert_eq!(fresh, kept, "the kept policies changed what the check says about:\n{plan}");
    fresh
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn every_example_checks_the_same_from_the_kept_policies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut checked = 0;
    for env in ["github", "chat", "mail", "shop", "citations", "bank"] {
        let policy = read(&root.join(format!("policies/{env}.cord")));
        let Ok(dir) = std::fs::read_dir(root.join("examples").join(env)) else { continue };
        for entry in dir {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "cord") {
                same_twice(&[(&format!("{env}.cord"), &policy)], &read(&path));
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "only {checked} examples were found");
}

/// Plans that reuse the policy's names, declare what only a policy may, or do not parse.
#[test]
fn plans_that_collide_with_the_policies_check_the_same_from_the_kept_policies() {
    let policy = "linear type Session\n\
                  measure tainted(s: Session) -> Bool = false\n\
                  type Doc = { title: String }\n\
                  const LIMIT: Int = 3\n\
                  fn twice(x: Int) -> Int { x * 2 }\n\
                  capability Docs {\n  tool read(s: {s: Session | !tainted(s)}, d: Doc) -> (String, Session)\n}\n\
                  entry(docs: Docs, s: Session) -> (String, Session)\n";
    let policies = [("docs.cord", policy)];
    let plans = [
        "let d = Doc { title: \"a\" };\ndocs.read(s, d)",
        "fn twice(x: Int) -> Int { x }\n(to_string(twice(LIMIT)), s)",
        "type Doc = { body: String }\n(\"x\", s)",
        "const LIMIT: Int = 4\n(to_string(LIMIT), s)",
        "linear type Session\n(\"x\", s)",
        "(\"x\", s",
        "let t: {v: Int | v > LIMIT} = twice(2);\n(to_string(t), s)",
        "(\"unused\", docs)",
    ];
    let said: Vec<String> = plans.iter().map(|plan| same_twice(&policies, plan)).collect();
    // The collisions are reported, the good plan accepted.
    assert!(said[0].contains("accepted: true"), "{}", said[0]);
    assert!(said[1].contains("DuplicateDefinition") || said[1].contains("duplicate"), "{}", said[1]);
    assert!(said[4].contains("accepted: false"), "{}", said[4]);
}

/// The same file ids with other texts: the kept declaration is not used.
#[test]
fn changed_policies_are_declared_again() {
    let first = "capability Log {\n  tool note(text: String)\n}\nentry(log: Log) -> String\n";
    let second = "capability Log {\n  tool note(text: {t: String | t != \"\"})\n}\nentry(log: Log) -> String\n";
    let plan = "log.note(\"\");\n\"done\"";
    let (before, after) = std::thread::scope(|s| {
        s.spawn(|| (check_text(&[("log.cord", first)], plan), check_text(&[("log.cord", second)], plan)))
            .join()
            .unwrap()
    });
    assert!(before.program.is_some(), "{:?}", before.diagnostics);
    assert!(after.program.is_none(), "the second policy refuses an empty note");
    assert_eq!(said(&after), same_twice(&[("log.cord", second)], plan));
}
