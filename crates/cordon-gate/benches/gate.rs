//! What the gate costs per effect when no card is shown: the tier lookup, and for an `ask`
//! tool covered by a grant, the card's fields computed, the intent rules and the grant match
//! (in memory, and in an SQLite store). Next to it, the same effect with no gate at all.
//!
//! `cargo bench -p cordon-gate --bench gate`
#![allow(clippy::unwrap_used, clippy::panic)] // a benchmark may fail loudly

use std::hint::black_box;

use cordon_engine::Stage;
use cordon_gate::{DenyAll, Gate, Grants, MemoryGrants, StoreGrants};
use cordon_runtime::{Config, Effect, Program, Run, Sessions, Step};
use cordon_store::{Durability, NewGrant, Scope, SqliteStore};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};
use criterion::{Criterion, criterion_group, criterion_main};

const PLAN: &str = r#"
let a = shop.search("tea");
match shop.message_merchant("tea-house", "is the green tea in stock?") { Ok(_) => "sent", Err(r) => r.code }
"#;

/// The program and the two effects its run proposes: `search` (no tier) and
/// `message_merchant` (`ask`).
fn effects() -> (Program, Effect, Effect) {
    let mut sources = SourceMap::new();
    let policy = sources.add("shop.cord", cordon_sim::shop::POLICY);
    let plan = sources.add("plan.cord", PLAN);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let program = Program::new(outcome.program.as_ref().unwrap()).unwrap();
    let config = Config { user: "ann".into(), ..Config::default() };
    let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
    let Ok(Step::Effect(search)) = run.proceed() else { panic!("expected search") };
    run.commit().unwrap();
    let Ok(Step::Effect(message)) = run.resume(Ok(serde_json::json!([]))) else { panic!("expected the message") };
    (program, search, message)
}

fn grant() -> NewGrant {
    NewGrant {
        tool: "Shop.message_merchant".into(),
        destination: "tea-*".into(),
        label_class: "public".into(),
        scope: Scope::UntilRevoked,
        expires_ms: None,
        instance: None,
        principal: None,
    }
}

fn bench(c: &mut Criterion) {
    let (program, search, message) = effects();
    let mut group = c.benchmark_group("gate");
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll));
    group.bench_function("no tier", |b| b.iter(|| black_box(gate.decide(black_box(&search)))));
    let memory = MemoryGrants::new();
    memory.add(&grant()).unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll)).with_grants(Box::new(&memory));
    group.bench_function("ask, grant in memory", |b| b.iter(|| black_box(gate.decide(black_box(&message)))));
    assert_eq!(gate.stats().cards, 0, "the grant covers the message");
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("cordon.db"), Durability::SurvivesCrash).unwrap();
    StoreGrants(&store).add(&grant()).unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll)).with_grants(Box::new(StoreGrants(&store)));
    group.bench_function("ask, grant in SQLite", |b| b.iter(|| black_box(gate.decide(black_box(&message)))));
    assert_eq!(gate.stats().cards, 0, "the grant covers the message");
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
