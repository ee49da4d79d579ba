//! One request of many simulated effects, through the library as `cordon run` drives it (each
//! effect checked at the boundary, gated, its rows committed to the store before it is
//! performed, its answer labelled), without the terminal's trace:
//!
//! - `effects/1000/in_memory`: the store in memory (`Storage::in_memory`, as the demo's);
//! - `effects/1000/file`: the store in a file (the default durability, a write-ahead log).
//!
//! Criterion's figure is the time of the whole request; a thousandth of it is the cost of one
//! effect. Before them, one request of 10,000 effects on each store is timed once and printed
//! per effect, for docs/performance.md.
#![allow(clippy::unwrap_used, clippy::panic)] // a benchmark whose run does not go as planned must stop loudly

use std::time::Instant;

use cordon::api::store::Durability;
use cordon::{Ended, Settings, Source, Storage, ToolChoice, Tools, Workspace};
use cordon_engine::Observers;
use cordon_gate::DenyAll;
use criterion::{Criterion, criterion_group, criterion_main};

/// The `cordon` binary's allocator: the benchmark measures a request as the binary runs it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `calls` lists of alice's issues, each passing the session on.
fn plan(calls: usize) -> Source {
    Source::new(
        "effects.cord",
        format!(
            "match gh.repo(\"alice\", \"website\") {{ Some(r) => {{ let s = range(0, {calls}).fold(s, |s, i| {{ \
             let (issues, s) = gh.list_issues(s, r); s }}); (\"done\", s) }}, None => (\"none\", s), }}"
        ),
    )
}

/// A workspace on a fresh simulated GitHub, recording in `storage`, allowed `calls` calls.
fn github(storage: &Storage, calls: u32) -> Workspace {
    let tools = Tools::open(&ToolChoice { envs: vec!["github".into()], ..ToolChoice::default() }, Vec::new()).unwrap();
    let limits = cordon::api::values::Limits { max_tool_calls: calls + 1, ..Default::default() };
    Workspace::new(tools, storage.clone(), Settings { limits, ..Settings::default() })
}

/// Runs `plan` once, as `cordon run` does in its human format (each call shown as it happens,
/// so the report keeps no list of them).
fn request(workspace: &mut Workspace, plan: &Source) {
    let mut no = DenyAll;
    let prepared = workspace.prepare(cordon::Request::Plan(plan), &mut no).unwrap().without_trace();
    let report = prepared.run(&mut Observers::new()).unwrap();
    assert!(matches!(report.ended, Ended::Done(_)), "{:?}", report.diagnostics);
}

/// A store in memory and one in a file of a new directory (kept as long as the store is).
fn stores() -> [(&'static str, Storage, Option<tempfile::TempDir>); 2] {
    let dir = tempfile::tempdir().unwrap();
    let file = Storage::open(&dir.path().join("cordon.db"), Durability::SurvivesCrash).unwrap();
    [("in_memory", Storage::in_memory().unwrap(), None), ("file", file, Some(dir))]
}

fn effects(c: &mut Criterion) {
    for (name, storage, _dir) in stores() {
        let mut workspace = github(&storage, 10_000);
        let started = Instant::now();
        request(&mut workspace, &plan(10_000));
        eprintln!("effects/10000/{name}: {:.1?} per effect", started.elapsed() / 10_001);
    }
    let mut group = c.benchmark_group("effects/1000");
    group.sample_size(20);
    for (name, storage, _dir) in stores() {
        let mut workspace = github(&storage, 1_000);
        let plan = plan(1_000);
        group.bench_function(name, |b| b.iter(|| request(&mut workspace, &plan)));
    }
    group.finish();
}

criterion_group!(benches, effects);
criterion_main!(benches);
