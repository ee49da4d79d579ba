//! Runs in the background (`cordon serve`'s workers), over an SQLite store in a file:
//!
//! - `background/run_10_effects/{1,2}_workers`: a plan making 10 calls of the simulated
//!   GitHub (no card), from its submission to its end (queued, claimed under a lease, checked,
//!   run with every effect's rows in the log, finished); with 2 workers, two threads with their
//!   own connections take the queue together. Criterion's figure is the time per run, so runs
//!   per second is its inverse.
//! - `background/answer_to_effect`: a run parked at its card (a file write), answered; the
//!   figure is the worker's resumption: the run claimed, loaded from its saved bytes, its plan
//!   checked again, its card built again and matched to the answer's seal, the write performed
//!   and the run finished.
//!
//! Before each, p50 and p99 over 200 runs are printed, for docs/performance.md.
//!
//! With `CORDON_BENCH_DATABASE_URL` set (a PostgreSQL database the bench may fill), the
//! `run_10_effects` figures are measured on it too, as `background/postgres/...`.
#![allow(clippy::unwrap_used, clippy::panic)] // a benchmark whose run does not go as planned must stop loudly

use std::time::{Duration, Instant};

use cordon::api::Grant;
use cordon::api::store::{Durability, NewRun, RunId, RunKind, RunState};
use cordon::background::{Did, Worker, WorkerSettings};
use cordon::{Settings, Storage, ToolChoice, Tools, Workspace};
use criterion::{Criterion, criterion_group, criterion_main};

const KEY: &[u8] = b"a benchmark's deployment key";

/// Ten calls of the simulated GitHub, none of which needs a card.
const TEN_EFFECTS: &str = "let a = len(gh.list_repos());
let b = len(gh.list_repos());
let c = len(gh.list_repos());
let d = len(gh.list_repos());
let e = len(gh.list_repos());
let f = len(gh.list_repos());
let g = len(gh.list_repos());
let h = len(gh.list_repos());
let i = len(gh.list_repos());
let j = len(gh.list_repos());
(to_string(a + b + c + d + e + f + g + h + i + j), s)";

/// One write, which asks.
const ONE_WRITE: &str = r#"match fs.root("out") {
  Some(out) => if out.writable {
    match fs.write(out, "a.txt", "hello") { Ok(_) => "wrote", Err(e) => e.reason }
  } else { "read-only" },
  None => "no out",
}"#;

fn settings(name: &str) -> WorkerSettings {
    WorkerSettings {
        name: name.into(),
        key: KEY.to_vec(),
        lease_ms: 60_000,
        card_ms: 3_600_000,
        model: None,
        notify: None,
    }
}

fn submit(storage: &Storage, principal: &str, plan: &str) -> RunId {
    let run = NewRun { principal, kind: RunKind::Plan, name: "plan.cord", text: plan, clearance: None };
    storage.store().submit_run(&run).unwrap()
}

/// Works until the queue has nothing for this worker.
fn drain(worker: &mut Worker) -> usize {
    let mut ended = 0;
    while let Some(did) = worker.work_once().unwrap() {
        assert!(matches!(did, Did::Ended(_, RunState::Done)), "{did:?}");
        ended += 1;
    }
    ended
}

fn percentiles(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    eprintln!("{what}: p50 {:.2?}, p99 {:.2?} over {} runs", at(0.5), at(0.99), samples.len());
}

fn github() -> ToolChoice {
    ToolChoice { envs: vec!["github".into()], ..ToolChoice::default() }
}

/// Opens the store a worker of the bench uses: the SQLite file at `db`, or the PostgreSQL
/// database at `url`.
#[derive(Clone)]
enum At {
    File(std::path::PathBuf),
    Database(String),
}

impl At {
    fn open(&self) -> Storage {
        match self {
            At::File(db) => Storage::open(db, Durability::SurvivesCrash).unwrap(),
            At::Database(url) => Storage::connect(url).unwrap(),
        }
    }
}

/// A worker over the store `at` whose workspaces open `choice`, acting for each principal.
fn worker_at(name: &str, at: &At, choice: ToolChoice) -> Worker {
    let storage = at.open();
    let store = storage.clone();
    let open = move |principal: &str| {
        let choice = ToolChoice { principal: Some(principal.into()), ..choice.clone() };
        Ok(Workspace::new(Tools::open(&choice, Vec::new())?, store.clone(), Settings::default()))
    };
    Worker::new(settings(name), storage, Box::new(open))
}

fn bench_runs(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    runs_on(c, "background/run_10_effects", &At::File(dir.path().join("cordon.db")));
    if let Ok(url) = std::env::var("CORDON_BENCH_DATABASE_URL") {
        runs_on(c, "background/postgres/run_10_effects", &At::Database(url));
    }
}

/// The 10-call plan from submission to its end on the store `at`, with 1 and 2 workers.
fn runs_on(c: &mut Criterion, name: &str, at: &At) {
    let storage = at.open();
    let principal = Tools::open(&github(), Vec::new()).unwrap().principal;
    let mut one = worker_at("one", at, github());
    let samples: Vec<Duration> = (0..200)
        .map(|_| {
            let started = Instant::now();
            submit(&storage, &principal, TEN_EFFECTS);
            assert_eq!(drain(&mut one), 1);
            started.elapsed()
        })
        .collect();
    percentiles(&format!("{name}/1_worker"), samples);
    let mut group = c.benchmark_group(name);
    group.bench_function("1_worker", |b| {
        b.iter_custom(|iters| {
            let started = Instant::now();
            for _ in 0..iters {
                submit(&storage, &principal, TEN_EFFECTS);
            }
            assert_eq!(drain(&mut one) as u64, iters);
            started.elapsed()
        })
    });
    let mut two = [worker_at("a", at, github()), worker_at("b", at, github())];
    group.bench_function("2_workers", |b| {
        b.iter_custom(|iters| {
            let started = Instant::now();
            for _ in 0..iters {
                submit(&storage, &principal, TEN_EFFECTS);
            }
            let ended: usize = std::thread::scope(|s| {
                let handles: Vec<_> = two.iter_mut().map(|w| s.spawn(move || drain(w))).collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum()
            });
            assert_eq!(ended as u64, iters);
            started.elapsed()
        })
    });
    group.finish();
}

/// A run parked at its card and answered: what the measured step starts from.
fn parked_and_answered(storage: &Storage, worker: &mut Worker) -> RunId {
    let id = submit(storage, "alice", ONE_WRITE);
    assert_eq!(worker.work_once().unwrap(), Some(Did::Parked(id)));
    let seal = storage.store().queued_run(id).unwrap().unwrap().seal.unwrap();
    let given = cordon::background::Given { seal: &seal, answer: "yes", confirm: None };
    cordon::background::answer(storage, KEY, id, "alice", &given).unwrap().unwrap();
    id
}

fn bench_answer(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (db, out) = (dir.path().join("cordon.db"), dir.path().join("out"));
    std::fs::create_dir(&out).unwrap();
    let at = At::File(db);
    let storage = at.open();
    let grant = Grant::parse(&format!("out={}:rw", out.display())).unwrap();
    let choice = ToolChoice { dirs: vec![grant], ..ToolChoice::default() };
    let mut worker = worker_at("w", &at, choice);
    let mut samples = Vec::new();
    for _ in 0..200 {
        let id = parked_and_answered(&storage, &mut worker);
        let started = Instant::now();
        assert_eq!(worker.work_once().unwrap(), Some(Did::Ended(id, RunState::Done)));
        samples.push(started.elapsed());
    }
    percentiles("background/answer_to_effect", samples);
    c.bench_function("background/answer_to_effect", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let id = parked_and_answered(&storage, &mut worker);
                let started = Instant::now();
                assert_eq!(worker.work_once().unwrap(), Some(Did::Ended(id, RunState::Done)));
                total += started.elapsed();
            }
            total
        })
    });
}

criterion_group!(benches, bench_runs, bench_answer);
criterion_main!(benches);
