//! The engine's loop: stages that proceed, hold and refuse; hosts composed per capability;
//! events in the order things happen.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_engine::{Ending, Engine, Event, Hosts, Observer, Stage, Verdict};
use cordon_runtime::effect::{Effect, ToolHost};
use cordon_runtime::{Config, Decision, ErrorKind, Json, Program, Run, RunError, Sessions, ToolCall, Value};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

const POLICY: &str = r#"
capability Mail {
  tool send(to: String, body: String) -> Int @label(to = endorsed(user()), body = endorsed(user()), returns = public())
}
capability Log {
  tool note(text: String) -> () @label(text = untrusted(), returns = public())
}
entry(mail: Mail, log: Log) -> Int
"#;

const PLAN: &str = r#"log.note("start"); let n = mail.send("bob", "hi"); log.note("sent"); n"#;

fn program() -> Program {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let plan = sources.add("plan.cord", PLAN);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    Program::new(outcome.program.as_ref().expect("the plan checks")).unwrap()
}

fn start() -> Run {
    Run::start(&program(), &Sessions::default(), &Config::default()).unwrap()
}

/// A host that records the tools it performed and answers `send` with `answer`.
struct Host {
    performed: Vec<String>,
    answer: Json,
}

impl ToolHost for Host {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        self.performed.push(format!("{}.{}", call.capability(), call.tool()));
        Ok(if call.tool() == "send" { self.answer.clone() } else { Json::Null })
    }
}

fn host(answer: Json) -> Host {
    Host { performed: Vec::new(), answer }
}

/// Holds or refuses `send`, lets everything else through.
struct Gate {
    on_send: fn() -> Verdict,
}

impl Stage for Gate {
    fn name(&self) -> &str {
        "gate"
    }

    fn decide(&mut self, effect: &Effect) -> Verdict {
        if &*effect.tool == "send" { (self.on_send)() } else { Verdict::Proceed }
    }
}

#[test]
fn each_capability_is_served_by_its_own_host() {
    let (mut mail, mut log) = (host(Json::from(7)), host(Json::Null));
    let mut hosts = Hosts::new().serve("Mail", &mut mail).serve("Log", &mut log);
    let mut run = start();
    let Ending::Done(v) = Engine::new(&mut hosts).start(&mut run) else { panic!("the plan finishes") };
    assert_eq!(v.value, Value::Int(7));
    assert_eq!(mail.performed, ["Mail.send"]);
    assert_eq!(log.performed, ["Log.note", "Log.note"]);
}

#[test]
fn a_capability_no_host_serves_ends_the_run_with_a_clear_error() {
    let mut log = host(Json::Null);
    let mut hosts = Hosts::new().serve("Log", &mut log);
    let mut run = start();
    let Ending::Failed(e) = Engine::new(&mut hosts).start(&mut run) else { panic!("the run fails") };
    assert_eq!(e.kind, ErrorKind::Tool);
    assert!(e.message.contains("no host serves the capability `Mail`"), "{}", e.message);
}

#[test]
fn a_held_effect_waits_intact_and_runs_when_released() {
    let mut all = host(Json::from(1));
    let mut gate = Gate { on_send: || Verdict::Hold { needs: "the user's approval".into() } };
    let mut run = start();
    let ending = Engine::new(&mut all).with_stage(&mut gate).start(&mut run);
    let Ending::Held(held) = ending else { panic!("the send is held: {ending:?}") };
    assert_eq!((held.stage.as_str(), held.needs.as_str(), &*held.effect.tool), ("gate", "the user's approval", "send"));
    // Nothing of the held call happened: not performed, not recorded as allowed.
    assert_eq!(all.performed, ["Log.note"]);
    let allowed = run.trace().iter().filter(|e| e.decision == Decision::Allowed).count();
    assert_eq!(allowed, 1, "only the first note");
    // Released (the person said yes), the pipeline goes on after the gate.
    let mut gate = Gate { on_send: || panic!("a released effect is not asked again") };
    let ending = Engine::new(&mut all).with_stage(&mut gate).release(&mut run, held);
    let Ending::Done(v) = ending else { panic!("the plan finishes: {ending:?}") };
    assert_eq!(v.value, Value::Int(1));
    assert_eq!(all.performed, ["Log.note", "Mail.send", "Log.note"]);
}

#[test]
fn a_refusal_ends_the_run_and_nothing_is_performed() {
    let mut all = host(Json::from(1));
    let mut gate =
        Gate { on_send: || Verdict::Refuse(RunError::new(ErrorKind::LabelFlow, Default::default(), "denied")) };
    let mut run = start();
    let Ending::Failed(e) = Engine::new(&mut all).with_stage(&mut gate).start(&mut run) else { panic!("refused") };
    assert_eq!(e.message, "denied");
    assert_eq!(all.performed, ["Log.note"]);
    let blocked: Vec<&str> = run
        .trace()
        .iter()
        .filter(|e| matches!(e.decision, Decision::Blocked { .. }))
        .map(|e| e.tool.as_str())
        .collect();
    assert_eq!(blocked, ["Mail.send"]);
}

/// Records the events it hears, briefly.
#[derive(Default)]
struct Heard(Vec<String>);

impl Observer for Heard {
    fn event(&mut self, event: &Event<'_>) {
        self.0.push(match event {
            Event::EffectProposed(e) => format!("proposed {}", e.tool),
            Event::StageDecided { stage, effect, verdict } => format!("{stage} {} {verdict:?}", effect.tool),
            Event::EffectPerformed { effect, .. } => format!("performed {}", effect.tool),
            Event::HoleReached(_) => "hole".into(),
            Event::Held { effect, .. } => format!("held {}", effect.tool),
            Event::Finished(v) => format!("finished {}", v.value),
            Event::Failed(e) => format!("failed {}", e.message),
        });
    }
}

#[test]
fn observers_hear_every_step_in_order() {
    let mut all = host(Json::from(3));
    let mut gate = Gate { on_send: || Verdict::Proceed };
    let mut heard = Heard::default();
    let mut run = start();
    Engine::new(&mut all).with_stage(&mut gate).with_observer(&mut heard).start(&mut run);
    assert_eq!(
        heard.0,
        [
            "proposed note",
            "gate note Proceed",
            "performed note",
            "proposed send",
            "gate send Proceed",
            "performed send",
            "proposed note",
            "gate note Proceed",
            "performed note",
            "finished 3",
        ]
    );
}
