//! Snapshots of what the analysis says, as people and models read it: the effect summary of
//! seed examples at 80 columns, and the check-time refusals in the run time's shape.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_syntax::{SourceMap, render};
use cordon_types::CheckOptions;

fn check(policy: &str, plan: &str) -> (SourceMap, cordon_types::Outcome, Option<cordon_flow::Summary>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut sources = SourceMap::new();
    let p = sources.add(policy, std::fs::read_to_string(root.join(policy)).unwrap());
    let f = sources.add(plan, std::fs::read_to_string(root.join(plan)).unwrap());
    let (outcome, summary) = cordon_flow::check(&sources, &[p], Some(f), &CheckOptions::default(), "alice", false);
    (sources, outcome, summary)
}

#[test]
fn the_summary_of_a_plan_that_copies_an_issue() {
    let (_, outcome, summary) = check("policies/github.cord", "examples/github/injected_issue.cord");
    assert!(outcome.accepted());
    let text = summary.unwrap().render();
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn the_summary_of_a_plan_that_thanks_the_newest_author() {
    let (_, outcome, summary) = check("policies/github.cord", "examples/github/thank_newest_author.cord");
    assert!(outcome.accepted());
    insta::assert_snapshot!(summary.unwrap().render());
}

#[test]
fn a_secret_posted_on_every_path_is_refused_before_anything_runs() {
    let (sources, outcome, _) = check("policies/github.cord", "examples/github/exfiltrate_via_search.cord");
    assert!(!outcome.accepted());
    let human: String = outcome.diagnostics.iter().map(|d| render::human(d, &sources)).collect();
    let concise: String = outcome.diagnostics.iter().map(|d| render::concise(d, &sources)).collect();
    insta::assert_snapshot!("exfiltrate_via_search_human", human);
    insta::assert_snapshot!("exfiltrate_via_search_concise", concise);
}

#[test]
fn a_denied_tool_is_refused_before_anything_runs() {
    let (sources, outcome, _) = check("policies/shop.cord", "examples/shop/move_savings.cord");
    let concise: String = outcome.diagnostics.iter().map(|d| render::concise(d, &sources)).collect();
    insta::assert_snapshot!(concise);
}

/// Where a person speaking for the user will be asked, a refusal they may lift (their own
/// secret released, data vouched for in their name) is a warning: the run shows them a card.
/// Someone else's secret stays an error: no answer of theirs can release it.
#[test]
fn a_refusal_the_person_asked_may_lift_is_a_warning_and_no_other() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut sources = SourceMap::new();
    let p = sources.add("github.cord", std::fs::read_to_string(root.join("policies/github.cord")).unwrap());
    let text = std::fs::read_to_string(root.join("examples/github/exfiltrate_via_search.cord")).unwrap();
    let f = sources.add("plan.cord", text);
    let (outcome, _) = cordon_flow::check(&sources, &[p], Some(f), &CheckOptions::default(), "alice", true);
    assert!(outcome.accepted(), "{:?}", outcome.diagnostics);
    let [warning] = outcome.diagnostics.as_slice() else { panic!("{:?}", outcome.diagnostics) };
    assert!(!warning.is_error());
    assert!(warning.message.starts_with("`GitHub.create_issue` will need your approval"), "{}", warning.message);

    let policy = r#"
capability Lab {
  tool bobs() -> Int @label(returns = secret("bob"))
  tool send(x: Int)
}
entry(lab: Lab) -> ()
"#;
    let mut sources = SourceMap::new();
    let p = sources.add("lab.cord", policy);
    let f = sources.add("plan.cord", "lab.send(lab.bobs())");
    let (outcome, _) = cordon_flow::check(&sources, &[p], Some(f), &CheckOptions::default(), "alice", true);
    assert!(!outcome.accepted(), "bob's secret is not alice's to release");
    assert!(outcome.diagnostics[0].message.contains("would be blocked"), "{:?}", outcome.diagnostics);
}
