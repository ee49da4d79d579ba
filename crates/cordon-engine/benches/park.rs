//! Parking a run and resuming it in another process: the 50-line plan of the checker's
//! benchmark (`crates/cordon-types/benches/programs/plan50.cord`) is held at its refund (its
//! fourth effect, as an approval gate would), then saved to bytes, loaded and driven to its end.
//! The figure is save + load + resume; the saved size is printed.
#![allow(clippy::panic)] // a benchmark whose run does not go as planned must stop loudly

use std::hint::black_box;

use cordon_engine::{Ending, Engine, Stage, Verdict};
use cordon_runtime::{Config, Effect, Json, Program, Run, Sessions, ToolCall, ToolHost};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

const POLICY: &str = include_str!("../../cordon-types/benches/programs/shop.cord");
const PLAN: &str = include_str!("../../cordon-types/benches/programs/plan50.cord");
const KEY: &[u8] = b"a benchmark's key";

/// The shop: three orders, 12 in stock, every note and refund goes through.
struct Shop;

impl ToolHost for Shop {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        let order = |id: i64, customer: &str, total: i64| json!({ "id": id, "customer": customer, "items": [42], "total": total });
        Ok(match call.tool() {
            "orders" => json!([order(1, "ann", 1200), order(2, "bo", 5400), order(3, "cy", 800)]),
            "stock" => json!(12),
            "refund" => json!(true),
            _ => Json::Null,
        })
    }
}

/// Holds the refund, as an approval gate would.
struct HoldRefunds;

impl Stage for HoldRefunds {
    fn name(&self) -> &str {
        "approval"
    }

    fn decide(&mut self, effect: &Effect) -> Verdict {
        if &*effect.tool == "refund" { Verdict::Hold { needs: "the user's approval".into() } } else { Verdict::Proceed }
    }
}

fn bench_park(c: &mut Criterion) {
    let mut sources = SourceMap::new();
    let policy = sources.add("shop.cord", POLICY);
    let plan = sources.add("plan50.cord", PLAN);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let program = Program::new(outcome.program.as_ref().expect("the plan checks")).expect("it compiles");
    let held = || {
        let mut run = Run::start(&program, &Sessions::default(), &Config::default()).expect("the run starts");
        let Ending::Held(_) = Engine::new(&mut Shop).with_stage(&mut HoldRefunds).start(&mut run) else {
            panic!("the refund is held")
        };
        run
    };
    let bytes = held().save(&sources, KEY);
    eprintln!("park/save_load_resume: a saved run of the 50-line plan is {} bytes", bytes.len());
    c.bench_function("park/save_load_resume", |b| {
        b.iter_batched(
            held,
            |run| {
                let bytes = run.save(&sources, KEY);
                drop(run);
                let (mut run, _) = Run::load(&bytes, KEY).expect("it loads");
                let Ending::Done(v) = Engine::new(&mut Shop).resume(&mut run) else { panic!("the plan finishes") };
                black_box(v)
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench_park);
criterion_main!(benches);
