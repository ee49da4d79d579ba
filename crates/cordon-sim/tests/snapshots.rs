//! Runs that park and resume in another process: every example plan, parked at each of its
//! effects in turn (a stage holds it, as an approval would), saved to bytes, dropped, loaded
//! and finished, ends exactly as the same plan run without a pause: the same value with the
//! same labels, the same trace, the same sessions, the same world. A saved run that was
//! changed is refused.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_engine::{Ending, Engine, Stage, Verdict};
use cordon_runtime::effect::Effect;
use cordon_runtime::{Config, Decision, Program, Run, Sessions, SnapshotError, deep_label};
use cordon_sim::{Environment, env};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

const KEY: &[u8] = b"the host's secret key for saved runs";

/// Holds the `n`-th effect it sees (counting from 0), once.
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
        if self.seen == self.n + 1 { Verdict::Hold { needs: "a test's pause".into() } } else { Verdict::Proceed }
    }
}

/// The plan checked against its environment's policy, with the source map it was checked from.
fn checked(world: &dyn Environment, plan: &str) -> Option<(Program, SourceMap)> {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", world.policy().unwrap_or_default());
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let program = Program::new(outcome.program.as_ref()?).unwrap();
    Some((program, sources))
}

/// How a run ended, in full: its value (or error) with labels, trace, sessions and the world.
fn ending(ending: Ending, run: &Run, world: &dyn Environment) -> String {
    let result = match ending {
        Ending::Done(v) => format!("{} {}", v.value, deep_label(&v)),
        Ending::Failed(e) => format!("{}: {}", e.kind.code(), e.message),
        Ending::Held(h) => format!("held at {}", h.effect.tool),
    };
    format!("{result}\n{:?}\n{:?}\n{}", run.trace(), run.sessions(), world.state_json())
}

fn examples(dir: &str) -> Vec<(String, String)> {
    let root = format!("{}/../../examples/{dir}", env!("CARGO_MANIFEST_DIR"));
    let mut plans: Vec<(String, String)> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cord"))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    plans.sort();
    plans
}

#[test]
fn every_example_parked_at_every_effect_resumes_to_the_same_end() {
    let config =
        |w: &dyn Environment| Config { user: w.principal().unwrap_or_default().to_string(), ..Config::default() };
    let mut resumed = 0;
    for (name, world) in [("github", "github"), ("chat", "chat"), ("mail", "mail")] {
        for (path, plan) in examples(name) {
            let fresh = env(world).unwrap();
            let Some((program, sources)) = checked(fresh.as_ref(), &plan) else { continue };
            // The run without a pause, and how many effects it proposes.
            let mut world_a = env(world).unwrap();
            let mut run = Run::start(&program, &Sessions::default(), &config(world_a.as_ref())).unwrap();
            let whole = Engine::new(world_a.as_mut()).start(&mut run);
            let expected = ending(whole, &run, world_a.as_ref());
            let proposed = run
                .trace()
                .iter()
                .filter(|e| matches!(e.decision, Decision::Allowed | Decision::Blocked { .. }))
                .count();
            for n in 0..proposed.max(1) {
                let mut world_b = env(world).unwrap();
                let mut run = Run::start(&program, &Sessions::default(), &config(world_b.as_ref())).unwrap();
                let mut hold = HoldNth { n, seen: 0 };
                let Ending::Held(_) = Engine::new(world_b.as_mut()).with_stage(&mut hold).start(&mut run) else {
                    continue; // the run ended before its n-th effect reached the stage
                };
                let bytes = run.save(&sources, KEY);
                drop(run);
                let (mut run, _sources) = Run::load(&bytes, KEY).unwrap_or_else(|e| panic!("{path}: {e}"));
                let end = Engine::new(world_b.as_mut()).resume(&mut run);
                assert_eq!(ending(end, &run, world_b.as_ref()), expected, "{path} parked at effect {n}");
                resumed += 1;
            }
        }
    }
    println!("{resumed} runs parked, saved, loaded and resumed");
    assert!(resumed >= 40, "only {resumed} runs were parked and resumed");
}

#[test]
fn a_saved_run_that_was_changed_is_refused() {
    let world = env("github").unwrap();
    let plan = include_str!("../../../examples/github/benign.cord");
    let (program, sources) = checked(world.as_ref(), plan).unwrap();
    let mut world = env("github").unwrap();
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let mut hold = HoldNth { n: 1, seen: 0 };
    let Ending::Held(_) = Engine::new(world.as_mut()).with_stage(&mut hold).start(&mut run) else { panic!("held") };
    let bytes = run.save(&sources, KEY);
    assert!(Run::load(&bytes, KEY).is_ok());
    // Untainting the session, or lowering a label, in the saved bytes: refused.
    let text = String::from_utf8_lossy(&bytes[32..]).to_string();
    assert!(text.contains("\"tainted\""), "the saved run records the session's measures");
    let mut edited = bytes.clone();
    let at = 32 + text.find("\"tainted\"").unwrap() + 12;
    edited[at] ^= 1;
    assert_eq!(Run::load(&edited, KEY).err(), Some(SnapshotError::Tampered));
    // Another key, a cut, or no bytes at all: refused.
    assert_eq!(Run::load(&bytes, b"another key").err(), Some(SnapshotError::Tampered));
    assert_eq!(Run::load(&bytes[..bytes.len() / 2], KEY).err(), Some(SnapshotError::Tampered));
    assert_eq!(Run::load(&[], KEY).err(), Some(SnapshotError::Tampered));
}
