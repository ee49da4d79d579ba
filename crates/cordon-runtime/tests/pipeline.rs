//! An admitted effect is only proposed: the boundary's checks changed nothing. The run uses up
//! its linear arguments, counts it and records it as allowed only when it is committed (the
//! host is about to perform it); a stage after the boundary may refuse it instead, and then
//! nothing happened.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "common/mod.rs"]
mod common;

use common::Source;
use cordon_runtime::{Config, Decision, ErrorKind, Json, Limits, Run, RunError, Sessions, Step};

const POLICY: &str = r#"
linear type Session
capability Log {
  tool log(s: Session, n: Int) -> Session @label(s = untrusted(), n = untrusted(), returns = public())
}
entry(l: Log, s: Session) -> Session
"#;

const PLAN: &str = "let s = l.log(s, 1); l.log(s, 2)";

fn start(limits: Limits) -> Run {
    let program = Source::new(Some(POLICY), PLAN).checked();
    Run::start(&program, &Sessions::default(), &Config { limits, ..Config::default() }).unwrap()
}

fn decisions(run: &Run) -> Vec<String> {
    run.trace()
        .iter()
        .map(|e| match &e.decision {
            Decision::Allowed => format!("allowed {}", e.detail()),
            Decision::Blocked { code, .. } => format!("blocked {} [{code}]", e.detail()),
            Decision::Returned => "returned".to_string(),
            Decision::Failed { .. } => "failed".to_string(),
        })
        .collect()
}

#[test]
fn a_proposed_effect_is_recorded_only_when_committed() {
    let mut run = start(Limits::default());
    let Ok(Step::Effect(_)) = run.proceed() else { panic!("expected the first call") };
    assert!(decisions(&run).is_empty(), "proposing records nothing: {:?}", decisions(&run));
    assert!(run.resume(Ok(Json::Null)).is_err(), "an effect must be committed before its answer");
    run.commit().unwrap();
    assert!(run.commit().is_err(), "an effect is committed once");
    let Ok(Step::Effect(_)) = run.resume(Ok(Json::Null)) else { panic!("expected the second call") };
    assert_eq!(decisions(&run), ["allowed s: <Session #1>, n: 1", "returned"]);
}

#[test]
fn a_refused_effect_uses_up_nothing_and_counts_nothing() {
    // One tool call allowed: the first is refused by a stage, so it is not charged, and the
    // run's record shows it blocked with the stage's reason, never allowed.
    let mut run = start(Limits { max_tool_calls: 1, ..Limits::default() });
    let Ok(Step::Effect(effect)) = run.proceed() else { panic!("expected the first call") };
    let Err(e) = run.refuse(RunError::new(ErrorKind::LabelFlow, Default::default(), "refused by a stage")) else {
        panic!("a tool that cannot be refused ends the run when it is")
    };
    assert_eq!(e.message, "refused by a stage");
    assert_eq!(e.span, effect.span, "the refusal points at the call");
    assert_eq!(decisions(&run), ["blocked s: <Session #1>, n: 1 [label-flow]"]);
    assert!(run.commit().is_err() && run.proceed().is_err(), "a refused run is over");
}

#[test]
fn the_tool_call_limit_charges_performed_calls_only() {
    let mut run = start(Limits { max_tool_calls: 1, ..Limits::default() });
    let Ok(Step::Effect(_)) = run.proceed() else { panic!("expected the first call") };
    run.commit().unwrap();
    let second = run.resume(Ok(Json::Null));
    let Err(e) = second else { panic!("the second call is over the limit: {second:?}") };
    assert_eq!(e.kind, ErrorKind::Limit, "{e}");
}

/// Tools that say they may be refused: the plan gets the refusal as a value and goes on.
const REFUSABLE: &str = r#"
type Refused = { code: String, reason: String }
capability Mail {
  tool send(to: String) -> Result[Int, Refused] @label(to = endorsed(user()), returns = public())
}
entry(m: Mail) -> String
"#;

#[test]
fn a_tool_that_may_be_refused_gives_the_plan_the_refusal() {
    let plan =
        r#"match m.send("bob") { Ok(n) => "sent " + to_string(n), Err(r) => "not sent: " + r.code + ": " + r.reason }"#;
    let program = Source::new(Some(REFUSABLE), plan).checked();
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let Ok(Step::Effect(_)) = run.proceed() else { panic!("expected the send") };
    let step = run.refuse(RunError::new(ErrorKind::LabelFlow, Default::default(), "the user said no"));
    let Ok(Step::Done(v)) = step else { panic!("the plan goes on: {step:?}") };
    assert_eq!(v.value.to_string(), r#""not sent: label-flow: the user said no""#);
    assert!(matches!(run.trace()[0].decision, Decision::Blocked { .. }), "the refusal is recorded");
    // Performed, the same call gives `Ok`.
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let Ok(Step::Effect(_)) = run.proceed() else { panic!("expected the send") };
    run.commit().unwrap();
    let Ok(Step::Done(v)) = run.resume(Ok(serde_json::json!({ "Ok": 3 }))) else { panic!("the plan finishes") };
    assert_eq!(v.value.to_string(), r#""sent 3""#);
}

#[test]
fn a_refusal_of_a_call_that_takes_a_linear_value_ends_the_run() {
    // The plan would have no session to go on with: a refusal cannot be a value here.
    let policy = r#"
type Refused = { code: String, reason: String }
linear type Session
capability Log {
  tool log(s: Session) -> Result[Session, Refused] @label(s = untrusted(), returns = public())
}
entry(l: Log, s: Session) -> Result[Session, Refused]
"#;
    let program = Source::new(Some(policy), "l.log(s)").checked();
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let Ok(Step::Effect(_)) = run.proceed() else { panic!("expected the call") };
    let refused = run.refuse(RunError::new(ErrorKind::LabelFlow, Default::default(), "no"));
    assert!(refused.is_err(), "{refused:?}");
}

/// A proposed effect says where each argument goes: its parameter's declared sink, or the
/// default (public, vouched for by the user), so a stage after the boundary can tell what
/// leaves for readers other than the user.
#[test]
fn a_proposed_effect_carries_each_arguments_sink() {
    let policy = r#"
capability Mail {
  tool send(to: String, body: String, note: String) -> () @label(body = readers(["ann", "bob"]), note = secret(user()))
}
entry(m: Mail) -> ()
"#;
    let program = Source::new(Some(policy), r#"m.send("bob", "hi", "to self")"#).checked();
    let config = Config { user: "ann".into(), ..Config::default() };
    let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
    let Ok(Step::Effect(effect)) = run.proceed() else { panic!("expected the call") };
    let sinks: Vec<String> = (0..3).map(|i| effect.sink(i).to_string()).collect();
    assert_eq!(
        sinks,
        [
            cordon_label::DcLabel::endorsed("ann").to_string(),
            cordon_label::DcLabel::readers(&["ann", "bob"]).to_string(),
            cordon_label::DcLabel::secret("ann").to_string(),
        ]
    );
    assert_eq!(effect.sink(3), cordon_label::DcLabel::untrusted(), "an unknown sink is public");
}
