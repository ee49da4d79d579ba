//! The audit log's costs: appending a row (rows/s), the two rows of an effect (what the log adds
//! to each effect), in the default mode and the durable one (every commit synced to disk), and
//! verifying a log of 1,000,000 rows.
#![allow(clippy::unwrap_used)] // a benchmark whose store fails must stop loudly

use std::hint::black_box;
use std::time::Duration;

use cordon_store::{Durability, EffectIntent, Outcome, SqliteStore, Store, Verdict};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

/// An effect as the engine would record it.
fn intent(n: u64) -> EffectIntent {
    EffectIntent {
        tool: "comment".into(),
        args: json!({ "repo": "acme/site", "issue": n, "body": "Thanks, this is fixed in the next release." }),
        decision: "allowed".into(),
        approved_by: None,
        labels: json!(["public", "user"]),
        stages: Vec::new(),
    }
}

fn bench_append(c: &mut Criterion) {
    for (name, durability, samples) in
        [("default", Durability::SurvivesCrash, 100), ("durable", Durability::SurvivesPowerLoss, 10)]
    {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("cordon.db"), durability).unwrap();
        let row = serde_json::to_value(intent(7)).unwrap();
        let mut group = c.benchmark_group(format!("audit/{name}"));
        group.sample_size(samples).measurement_time(Duration::from_secs(5));
        group.throughput(Throughput::Elements(1));
        group.bench_function("append a row", |b| b.iter(|| store.append(None, "note", black_box(&row)).unwrap()));
        let mut n = 0;
        group.bench_function("an effect's two rows", |b| {
            b.iter(|| {
                n += 1;
                let effect = store.begin_effect(None, black_box(&intent(n))).unwrap();
                store.end_effect(effect, &Outcome::Performed { result_size: 512 }).unwrap()
            })
        });
        group.finish();
    }
}

fn bench_verify(c: &mut Criterion) {
    const ROWS: u64 = 1_000_000;
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("cordon.db"), Durability::SurvivesCrash).unwrap();
    let row = serde_json::to_value(intent(7)).unwrap();
    store.append_many(None, "note", (0..ROWS).map(|_| row.clone())).unwrap();
    let mut group = c.benchmark_group("audit");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(ROWS));
    group.bench_function("verify 1,000,000 rows", |b| {
        b.iter(|| assert!(matches!(store.verify().unwrap(), Verdict::Intact { rows: ROWS, .. })))
    });
    group.finish();
}

criterion_group!(benches, bench_append, bench_verify);
criterion_main!(benches);
