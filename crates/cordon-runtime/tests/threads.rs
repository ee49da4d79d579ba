//! A run and its values are `Send` (and `Sync`): a run parked at an effect can be finished on
//! another thread (a server's worker, after an approval arrives) and ends exactly as it would
//! have on the thread that started it: the same value with the same labels, the same trace, the
//! same sessions, the same calls performed.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::Source;
use cordon_engine::{Ending, Engine, Stage, Verdict};
use cordon_label::Label;
use cordon_runtime::effect::{Effect, HoleRequest, ToolCall, ToolHost};
use cordon_runtime::{Config, Json, Program, Run, RunError, Sessions, Step, Val, Value, deep_label};
use serde_json::json;

#[test]
fn runs_programs_and_values_can_cross_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Run>();
    assert_send_sync::<Program>();
    assert_send_sync::<Val>();
    assert_send_sync::<Value>();
    assert_send_sync::<Label>();
    assert_send_sync::<Effect>();
    assert_send_sync::<HoleRequest>();
    assert_send_sync::<Step>();
    assert_send_sync::<Sessions>();
    assert_send_sync::<RunError>();
    assert_send_sync::<Config>();
}

const POLICY: &str = r#"
opaque type Repo = { name: String, private: Bool }
linear type Session
measure tainted(s: Session) -> Bool = false
capability Git {
  tool repo(name: String) -> Repo @label(name = untrusted(), returns = public())
  tool read(s: Session, r: Repo) -> (String, {s2: Session | tainted(s2) == (r.private || tainted(s))})
    @label(s = untrusted(), r = untrusted(), returns = if r.private { secret(user()) } else { public() })
  tool note(text: String) -> Int @label(text = untrusted(), returns = public())
}
entry(git: Git, s: Session) -> (String, Session)
"#;

/// Host-made records, a linear session threaded through reads (one of them taints it and
/// returns a secret), and tool calls inside a closure that `map` runs.
const PLAN: &str = r#"
let docs = git.repo("docs");
let secrets = git.repo("secrets");
let (a, s) = git.read(s, docs);
let (b, s) = git.read(s, secrets);
let counts = ["one", "two", "three"].map(|t: String| git.note(t));
let total = counts.fold(0, |acc: Int, n: Int| acc + n);
(if total > 5 { a + b } else { b + a }, s)
"#;

/// A tool host that records what it performed. It holds nothing a thread keeps to itself, so
/// it moves along with the run.
#[derive(Default)]
struct Git {
    performed: Vec<String>,
}

impl ToolHost for Git {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        let effect = call.effect;
        let args: Vec<String> = effect.args.iter().map(|(_, v)| v.value.to_string()).collect();
        self.performed.push(format!("{}({})", effect.tool, args.join(", ")));
        match call.tool() {
            "repo" => {
                let name = call.arg("name").cloned().unwrap_or(Json::Null);
                Ok(json!({ "private": name == "secrets", "name": name }))
            }
            "read" => {
                let text = format!("<{}>", effect.arg("r").map(Value::to_string).unwrap_or_default());
                Ok(json!([text, null]))
            }
            "note" => Ok(json!(call.arg("text").and_then(Json::as_str).map_or(0, str::len))),
            other => Err(format!("no tool `{other}`")),
        }
    }
}

/// Holds the `n`-th effect it sees (counting from 0), once: the run parks there.
struct HoldNth {
    n: usize,
    seen: usize,
}

impl Stage for HoldNth {
    fn name(&self) -> &str {
        "hold"
    }

    fn decide(&mut self, _effect: &Effect) -> Verdict {
        self.seen += 1;
        if self.seen == self.n + 1 { Verdict::Hold { needs: "a pause".into() } } else { Verdict::Proceed }
    }
}

/// How a run ended, in full: its value (or error) with every label in it, the trace, the
/// sessions and what the host performed.
fn ending(ending: Ending, run: &Run, host: &Git) -> String {
    let result = match ending {
        Ending::Done(v) => format!("{} {}", v.value, deep_label(&v)),
        Ending::Failed(e) => format!("{}: {}", e.kind.code(), e.message),
        Ending::Held(h) => format!("held at {}", h.effect.tool),
    };
    format!("{result}\n{:?}\n{:?}\n{:?}", run.trace(), run.sessions(), host.performed)
}

fn start(program: &Program) -> Run {
    Run::start(program, &Sessions::default(), &Config::default()).unwrap()
}

#[test]
fn a_run_parked_at_an_effect_finishes_on_another_thread_as_it_would_have_here() {
    let program = Source::new(Some(POLICY), PLAN).checked();
    let mut host = Git::default();
    let mut run = start(&program);
    let whole = Engine::new(&mut host).start(&mut run);
    let expected = ending(whole, &run, &host);
    // The secret read labels the result, and it tainted the session the host keeps.
    let first = expected.lines().next().unwrap();
    assert!(first.ends_with(", <Session #5>) <secrecy: user, integrity: false>"), "{first}");
    assert!(expected.contains(r#"measures: {"tainted": Bool(true)}"#), "{expected}");
    assert_eq!(host.performed.len(), 7);

    for n in 0..host.performed.len() {
        let mut host = Git::default();
        let mut run = start(&program);
        let mut hold = HoldNth { n, seen: 0 };
        let Ending::Held(_) = Engine::new(&mut host).with_stage(&mut hold).start(&mut run) else {
            panic!("the run parks at effect {n}")
        };
        let finished = std::thread::spawn(move || {
            let ending = Engine::new(&mut host).resume(&mut run);
            (ending, run, host)
        });
        let (end, run, host) = finished.join().unwrap();
        assert_eq!(ending(end, &run, &host), expected, "parked at effect {n}");
    }
}

#[test]
fn a_program_is_shared_by_runs_on_several_threads() {
    let program = Source::new(Some(POLICY), PLAN).checked();
    let here = {
        let mut host = Git::default();
        let mut run = start(&program);
        let end = Engine::new(&mut host).start(&mut run);
        ending(end, &run, &host)
    };
    let there: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let mut host = Git::default();
                    let mut run = start(&program);
                    let end = Engine::new(&mut host).start(&mut run);
                    ending(end, &run, &host)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(there, [here.clone(), here]);
}
