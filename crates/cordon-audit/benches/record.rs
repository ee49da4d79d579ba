//! What recording a request costs per effect: a plan that makes 20 tool calls, run by the
//! engine with no store, and with the audit stage and the recorder writing to a store file in
//! both modes (and to one in memory, which shows the recording's own work apart from the
//! disk). Each effect costs its two audit rows and about four transcript lines (proposed, the
//! audit stage's decision, performed, returned), each its own transaction.
#![allow(clippy::panic)] // a benchmark whose run does not go as planned must stop loudly

use cordon_audit::Recording;
use cordon_engine::{Ending, Engine};
use cordon_runtime::{Config, Json, Program, Run, Sessions, ToolCall, ToolHost};
use cordon_store::{Durability, NewRequest, SqliteStore, Store};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const POLICY: &str = r#"
capability Log {
  tool note(text: String) -> () @label(text = untrusted(), returns = public())
}
entry(log: Log) -> Int
"#;

const EFFECTS: u64 = 20;

/// Answers every note at once.
struct Host;

impl ToolHost for Host {
    fn perform(&mut self, _: &ToolCall<'_>) -> Result<Json, String> {
        Ok(Json::Null)
    }
}

fn run(program: &Program, store: Option<&dyn Store>) {
    let mut run = Run::start(program, &Sessions::default(), &Config::default()).expect("the run starts");
    let ending = match store {
        None => Engine::new(&mut Host).start(&mut run),
        Some(store) => {
            let request = NewRequest { text: "notes", principal: "user", session: None };
            let recording = Recording::begin(store, &request).expect("recorded");
            let ending = {
                let (mut stage, mut recorder) = (recording.stage(), recording.recorder());
                Engine::new(&mut Host).with_last_stage(&mut stage).with_observer(&mut recorder).start(&mut run)
            };
            recording.finish().expect("every write succeeded");
            ending
        }
    };
    let Ending::Done(_) = ending else { panic!("the plan finishes: {ending:?}") };
}

fn bench_record(c: &mut Criterion) {
    let mut sources = SourceMap::new();
    let policy = sources.add("log.cord", POLICY);
    let items: Vec<String> = (1..=EFFECTS).map(|i| i.to_string()).collect();
    let plan = sources.add("plan.cord", format!("[{}].map(|i| log.note(\"step\")).len()", items.join(", ")));
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let program = Program::new(outcome.program.as_ref().expect("the plan checks")).expect("it compiles");
    let dir = tempfile::tempdir().expect("a temporary directory");

    let mut group = c.benchmark_group("request");
    group.throughput(Throughput::Elements(EFFECTS));
    group.bench_function("no store", |b| b.iter(|| run(&program, None)));
    let memory = SqliteStore::open_in_memory().expect("a store in memory");
    group.bench_function("in memory", |b| b.iter(|| run(&program, Some(&memory))));
    let default = SqliteStore::open(&dir.path().join("default.db"), Durability::SurvivesCrash).expect("a store");
    group.bench_function("default", |b| b.iter(|| run(&program, Some(&default))));
    group.sample_size(10);
    let durable = SqliteStore::open(&dir.path().join("durable.db"), Durability::SurvivesPowerLoss).expect("a store");
    group.bench_function("durable", |b| b.iter(|| run(&program, Some(&durable))));
    group.finish();
}

criterion_group!(benches, bench_record);
criterion_main!(benches);
