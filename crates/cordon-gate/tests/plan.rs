//! Approving a whole plan at once, hostile cases first: a call outside what the plan's card
//! said (another place, once too often, more secret or less vouched for than the summary's
//! bounds, another destination) gets its own card; `ask_always` calls and calls only the run
//! can judge are never covered; a plan card answered no leaves every call its own card. And
//! the point of it: fewer cards for the same calls.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_engine::{Ending, Engine};
use cordon_flow::Summary;
use cordon_gate::{Gate, PlanApproval, Scripted};
use cordon_label::{DcLabel, Label};
use cordon_runtime::{Config, Effect, Program, Run, Sessions, ToolHost};
use cordon_sim::{GitHub, Shop};
use cordon_syntax::SourceMap;
use cordon_types::CheckOptions;

const TRIAGE: &str = include_str!("../../../examples/github/weekly_triage.cord");
const PAY: &str = include_str!("../../../examples/shop/pay_tea_house.cord");
const WARRANTY: &str = include_str!("../../../examples/shop/warranty_from_review.cord");
const MESSAGE: &str = include_str!("../../../examples/shop/message_tea_house.cord");

/// `plan` checked against `policy` for `user`: the program and its effect summary.
fn checked(policy: &str, plan: &str, user: &str) -> (Program, Summary) {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", policy);
    let plan = sources.add("plan.cord", plan);
    let (outcome, summary) = cordon_flow::check(&sources, &[policy], Some(plan), &CheckOptions::default(), user, false);
    let Some(checked) = outcome.program else { panic!("the plan does not check: {:#?}", outcome.diagnostics) };
    (Program::new(&checked).unwrap(), summary.unwrap())
}

fn drive(program: &Program, user: &str, host: &mut dyn ToolHost, gate: &mut Gate<'_>) -> Ending {
    let config = Config { user: user.into(), ..Config::default() };
    let mut run = Run::start(program, &Sessions::default(), &config).unwrap();
    Engine::new(host).with_stage(gate).start(&mut run)
}

/// Runs the triage plan with `answers`, asking for the whole plan first if `whole`: the gate's
/// cards and the calls performed under the plan's approval.
fn triage(answers: &str, whole: bool) -> (u64, u64, Ending) {
    let (program, summary) = checked(cordon_sim::github::POLICY, TRIAGE, "alice");
    let mut gh = GitHub::builtin().unwrap();
    let mut gate = Gate::new(&program, "alice", Box::new(Scripted::parse(answers).unwrap()));
    if whole {
        gate.approve_plan(PlanApproval::of(&summary));
    }
    let ending = drive(&program, "alice", &mut gh, &mut gate);
    (gate.stats().cards, gate.stats().plan_covered, ending)
}

#[test]
fn one_card_covers_the_calls_the_summary_proves_safe_and_bounded() {
    let (cards, covered, ending) = triage("yes\n", true);
    assert!(matches!(ending, Ending::Done(_)), "{ending:?}");
    assert_eq!((cards, covered), (1, 4));
    // The same plan without it: a card per call.
    let (cards, covered, ending) = triage("yes\nyes\nyes\nyes\n", false);
    assert!(matches!(ending, Ending::Done(_)), "{ending:?}");
    assert_eq!((cards, covered), (4, 0));
}

#[test]
fn a_plan_card_answered_no_leaves_every_call_its_own_card() {
    let (cards, covered, ending) = triage("no\nyes\nyes\nyes\nyes\n", true);
    assert!(matches!(ending, Ending::Done(_)), "{ending:?}");
    assert_eq!((cards, covered), (5, 0));
}

#[test]
fn the_plan_card_lists_each_covered_call_with_its_count_and_data() {
    let (_, summary) = checked(cordon_sim::github::POLICY, TRIAGE, "alice");
    let text = PlanApproval::of(&summary).card("alice").render(80);
    assert!(text.contains("run this plan"), "{text}");
    assert!(text.contains("line 9: GitHub.create_issue"), "{text}");
    assert!(text.contains("at most once, to a destination the plan computes"), "{text}");
    assert!(text.contains("line 15: GitHub.comment"), "{text}");
    assert!(!text.contains(": GitHub.repo\n"), "a call that does not ask is not on the card: {text}");
    assert!(text.contains("asked every time"), "never remembered: {text}");
}

#[test]
fn ask_always_calls_are_never_covered_and_nothing_is_asked_for_them() {
    let (program, summary) = checked(cordon_sim::shop::POLICY, PAY, "ann");
    let plan = PlanApproval::of(&summary);
    assert!(plan.is_empty(), "a payment asks every time");
    let mut shop = Shop::builtin().unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(Scripted::parse("yes\n").unwrap()));
    assert!(!gate.approve_plan(plan), "nothing to approve");
    drive(&program, "ann", &mut shop, &mut gate);
    assert_eq!((gate.stats().cards, gate.stats().plan_covered), (1, 0), "the payment's own card");
}

#[test]
fn a_call_only_the_run_can_judge_is_never_covered() {
    // The payee comes from a review: the summary cannot prove it within its sink.
    let (_, summary) = checked(cordon_sim::shop::POLICY, WARRANTY, "ann");
    assert!(PlanApproval::of(&summary).is_empty());
}

/// The site of `summary`'s one `message_merchant` call, as an effect made there.
fn message_effect(summary: &Summary, merchant: &str, text: Label) -> Effect {
    let site = summary.calls.iter().find(|c| c.tool == "message_merchant").unwrap();
    let mut e = Effect::outside_a_run(
        "Shop",
        "message_merchant",
        vec![
            ("merchant".into(), cordon_runtime::Val::plain(cordon_runtime::Value::str(merchant))),
            ("text".into(), cordon_runtime::Val { value: cordon_runtime::Value::str("hi"), label: text }),
        ],
    );
    e.span = site.span;
    e
}

#[test]
fn a_call_outside_what_the_card_said_is_not_covered() {
    let (program, summary) = checked(cordon_sim::shop::POLICY, MESSAGE, "ann");
    let approved = PlanApproval::of(&summary);
    assert!(!approved.is_empty());
    let card = |e: &Effect| cordon_gate::Card::build(&program, e, cordon_label::Tier::Ask, "ann").unwrap();
    let source = cordon_label::Source { what: "a test".into(), span: Default::default() };

    // Within the bounds: covered once, as the summary counts it; a second time is not.
    let mut plan = approved.clone();
    let ok = message_effect(&summary, "tea-house", Label::bottom());
    assert!(plan.take(&ok, &card(&ok)));
    assert!(!plan.take(&ok, &card(&ok)), "once too often");

    // Another place in the program (a fill's call), another recipient, data the summary did
    // not allow there, a decision it did not see: each needs its own card.
    let mut elsewhere = ok.clone();
    elsewhere.span.start += 1;
    let other_recipient = message_effect(&summary, "mallory-shop", Label::bottom());
    let secret = message_effect(&summary, "tea-house", Label::new(DcLabel::secret("bob"), source.clone()));
    let mut decided = ok.clone();
    decided.pc = Label::new(DcLabel::untrusted(), source);
    for (what, e) in [("elsewhere", elsewhere), ("recipient", other_recipient), ("data", secret), ("decision", decided)]
    {
        let mut plan = approved.clone();
        assert!(!plan.take(&e, &card(&e)), "{what}: covered");
    }
}
