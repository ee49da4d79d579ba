//! The library's interface beyond diagnostics: the checked program an accepted check hands
//! back, and the facts a host gives about the entry's inputs.

#![allow(clippy::unwrap_used, clippy::panic)]

use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, EntryFact, FactValue, Outcome, check};

const POLICY: &str = "
linear type Session
measure tainted(s: Session) -> Bool = false
measure level(s: Session) -> Int
type Repo = { name: String }
opaque type Issue = { id: Int }
capability GitHub {
  tool create_issue(s: {s: Session | !tainted(s)}, r: Repo, title: String) -> (Issue, Session)
}
entry(gh: GitHub, s: Session) -> Session
";

const PLAN: &str = "
let (issue, s2) = gh.create_issue(s, Repo { name: \"r\" }, \"title\");
s2
";

fn run(policy: &str, plan: &str, entry_facts: Option<Vec<EntryFact>>) -> Outcome {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", policy);
    let plan = sources.add("plan.cord", plan);
    let options = CheckOptions { entry_facts, ..CheckOptions::default() };
    check(&sources, &[policy], Some(plan), &options)
}

fn fact(param: &str, measure: &str, value: FactValue) -> EntryFact {
    EntryFact { param: param.into(), measure: measure.into(), value }
}

fn error_codes(outcome: &Outcome) -> Vec<&'static str> {
    outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code.as_str()).collect()
}

#[test]
fn an_accepted_program_is_handed_back() {
    let outcome = run(POLICY, PLAN, None);
    assert!(outcome.accepted(), "{:?}", outcome.diagnostics);
    let program = outcome.program.expect("an accepted program");
    assert_eq!(program.policies().len(), 1);
    assert_eq!(program.policies()[0].items.len(), 7);
    assert!(program.plan().is_some_and(|p| p.body.tail.is_some()));
}

#[test]
fn a_rejected_program_is_not_handed_back() {
    let outcome = run(POLICY, "gh.create_issue(s, Repo { name: \"r\" }, 1)", None);
    assert!(!outcome.accepted());
    assert!(outcome.program.is_none());
    let syntax = run(POLICY, "let = ;", None);
    assert!(syntax.program.is_none());
}

#[test]
fn policies_alone_are_a_program_without_a_plan() {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let outcome = check(&sources, &[policy], None, &CheckOptions::default());
    let program = outcome.program.expect("accepted policies");
    assert!(program.plan().is_none());
}

#[test]
fn without_host_facts_the_defaults_hold() {
    assert_eq!(error_codes(&run(POLICY, PLAN, None)), Vec::<&str>::new());
}

#[test]
fn a_host_fact_replaces_the_default() {
    let tainted = run(POLICY, PLAN, Some(vec![fact("s", "tainted", FactValue::Bool(true))]));
    assert_eq!(error_codes(&tainted), ["refinement-unproven"]);
    let clean = run(POLICY, PLAN, Some(vec![fact("s", "tainted", FactValue::Bool(false))]));
    assert_eq!(error_codes(&clean), Vec::<&str>::new());
}

#[test]
fn host_facts_are_exactly_what_is_assumed() {
    // Given facts (even none), the defaults are not assumed: nothing says `s` is untainted.
    assert_eq!(error_codes(&run(POLICY, PLAN, Some(Vec::new()))), ["refinement-unproven"]);
    let other = run(POLICY, PLAN, Some(vec![fact("s", "level", FactValue::Int(3))]));
    assert_eq!(error_codes(&other), ["refinement-unproven"]);
}

#[test]
fn bad_host_facts_are_errors_at_the_entry() {
    let cases = [
        (fact("session", "tainted", FactValue::Bool(false)), "undefined-name"),
        (fact("s", "dirty", FactValue::Bool(false)), "undefined-name"),
        (fact("s", "tainted", FactValue::Int(0)), "type-mismatch"),
        (fact("s", "level", FactValue::Str("high".into())), "type-mismatch"),
        (fact("gh", "tainted", FactValue::Bool(false)), "type-mismatch"),
    ];
    for (bad, code) in cases {
        let outcome = run(POLICY, PLAN, Some(vec![fact("s", "tainted", FactValue::Bool(false)), bad.clone()]));
        assert_eq!(error_codes(&outcome), [code], "for {bad:?}");
        let d = outcome.diagnostics.iter().find(|d| d.is_error()).unwrap();
        let entry_at = POLICY.find("entry(").unwrap() as u32;
        assert_eq!(d.span().start, entry_at, "for {bad:?}");
    }
}

#[test]
fn host_facts_that_contradict_the_entry_are_errors() {
    let policy = POLICY.replace("entry(gh: GitHub, s: Session)", "entry(gh: GitHub, s: {s: Session | !tainted(s)})");
    let outcome = run(&policy, PLAN, Some(vec![fact("s", "tainted", FactValue::Bool(true))]));
    assert_eq!(error_codes(&outcome), ["refinement-unproven"]);
    assert!(run(&policy, PLAN, None).accepted());
}

#[test]
fn host_facts_without_an_entry_are_an_error() {
    let outcome = run("type Repo = { name: String }", "1", Some(vec![fact("s", "tainted", FactValue::Bool(true))]));
    assert_eq!(error_codes(&outcome), ["undefined-name"]);
    assert!(run("type Repo = { name: String }", "1", Some(Vec::new())).accepted());
}

/// The bindings' types as `check` recorded them, as `name: type` in the order they were bound.
fn bindings(plan: &str, record: bool) -> Vec<String> {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let plan = sources.add("plan.cord", plan);
    let options = CheckOptions { record_bindings: record, ..CheckOptions::default() };
    let outcome = check(&sources, &[policy], Some(plan), &options);
    outcome
        .bindings
        .iter()
        .map(|b| {
            assert_eq!(sources.slice(b.span), b.name, "a binding's span is its name");
            format!("{}: {} ({})", b.name, b.ty, b.named.as_deref().unwrap_or("-"))
        })
        .collect()
}

#[test]
fn a_check_records_each_bindings_type_only_when_asked() {
    let plan = "let n: {v: Int | v > 0} = 3;\nlet xs = [n];\nfor x in xs { x };\n\
                let (issue, s2) = gh.create_issue(s, Repo { name: \"r\" }, \"title\");\ns2";
    assert_eq!(
        bindings(plan, true),
        [
            "gh: GitHub (GitHub)",
            "s: Session (Session)",
            "n: {v: Int | v > 0} (-)",
            "xs: List[Int] (-)",
            "x: Int (-)",
            "issue: Issue (Issue)",
            "s2: Session (Session)",
        ]
    );
    assert!(bindings(plan, false).is_empty(), "nothing is kept unless asked");
    // A rejected plan still has the types inferred up to its errors (not those of what has
    // one); one that does not parse has none.
    assert_eq!(bindings("let a = 1;\nlet b: String = a;\ns", true)[2..], ["a: Int (-)"]);
    assert!(bindings("let a = ;", true).is_empty());
}
