//! Crash safety: a child process performs effect after effect (the "about to perform" row, the
//! host's action, the outcome row) and is killed with SIGKILL at random points, over and over.
//! After each kill the store opens, its chain verifies, and every effect the child reported as
//! performed has its committed "about to perform" row: a crash leaves an unknown outcome, never
//! silence.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::time::Duration;

use common::{Rng, Scratch, env_path, role, spawn_child};
use cordon_store::audit::kind;
use cordon_store::{Durability, EffectIntent, Outcome, SqliteStore, Store, Verdict};
use serde_json::{Value, json};

const KILLS: u32 = 220;

/// The child: effects until killed. The host's action is to report the effect performed, in a
/// file the parent reads; it happens only once the "about to perform" row is committed.
#[test]
fn child() {
    if role().as_deref() != Some("effects") {
        return;
    }
    let store = SqliteStore::open(&env_path("DB"), Durability::SurvivesCrash).unwrap();
    let mut report = std::fs::File::options().append(true).create(true).open(env_path("PERFORMED")).unwrap();
    let me = std::process::id();
    for i in 0.. {
        let id = format!("{me}-{i}");
        let intent = EffectIntent {
            tool: "act".into(),
            args: json!({ "id": id }),
            decision: "allowed".into(),
            approved_by: None,
            labels: json!([]),
            stages: Vec::new(),
        };
        let effect = store.begin_effect(None, &intent).unwrap();
        // The action takes a while, and its only trace is the report, written in one call.
        std::thread::sleep(Duration::from_micros(200));
        report.write_all(format!("performed {id}\n").as_bytes()).unwrap();
        store.end_effect(effect, &Outcome::Performed { result_size: id.len() as u64 }).unwrap();
    }
}

#[test]
fn killed_at_random_points_the_log_holds_every_performed_effect() {
    let scratch = Scratch::new();
    let (db, performed_file) = (scratch.db(), scratch.path("performed"));
    let size = || std::fs::metadata(&performed_file).map_or(0, |m| m.len());
    let mut rng = Rng::seeded();
    // What the log held after the last kill: effects by row, and those with an outcome.
    let mut intents: HashMap<u64, String> = HashMap::new();
    let mut finished: HashSet<u64> = HashSet::new();
    let mut seen = 0;
    // Kills that landed after the child performed something, and kills that left an effect
    // with no outcome: the cases that test something.
    let (mut mid_run, mut between_rows) = (0, 0);
    for kill in 0..KILLS {
        let before = size();
        let mut child = spawn_child("effects", &[("DB", &db), ("PERFORMED", &performed_file)]);
        if rng.below(4) == 0 {
            // Anywhere from the start, opening the store included.
            std::thread::sleep(Duration::from_micros(rng.below(15_000)));
        } else {
            // Somewhere in the loop of effects.
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while size() == before && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(100));
            }
            std::thread::sleep(Duration::from_micros(rng.below(3_000)));
        }
        child.kill().unwrap();
        child.wait().unwrap();

        let store = SqliteStore::open(&db, Durability::SurvivesCrash)
            .unwrap_or_else(|e| panic!("kill {kill}: the store does not open: {e}"));
        let verdict = store.verify().unwrap();
        assert!(matches!(verdict, Verdict::Intact { .. }), "kill {kill}: {verdict:?}");

        let unknown_before = intents.len() - finished.len();
        for row in store.rows(seen + 1, usize::MAX).unwrap() {
            let content: Value = serde_json::from_str(&row.content).unwrap();
            if row.kind == kind::EFFECT {
                intents.insert(row.seq, content["args"]["id"].as_str().unwrap().to_string());
            } else {
                finished.insert(content["effect"].as_u64().unwrap());
            }
            seen = row.seq;
        }
        let mut text = std::fs::read_to_string(&performed_file).unwrap_or_default();
        // A line cut short by the kill (a write that crossed a page of the file can stop between
        // pages) has no newline yet and counts for nothing: it goes, so that the next child's
        // first line does not run on from it.
        if !text.ends_with('\n') && !text.is_empty() {
            text.truncate(text.rfind('\n').map_or(0, |i| i + 1));
            std::fs::write(&performed_file, &text).unwrap();
        }
        let performed: HashSet<&str> =
            text.split_inclusive('\n').filter_map(|l| l.strip_prefix("performed ")?.strip_suffix('\n')).collect();
        let recorded: HashSet<&str> = intents.values().map(String::as_str).collect();
        for id in &performed {
            assert!(recorded.contains(id), "kill {kill}: effect {id} was performed with no row before it");
        }
        // An outcome is written only after the action: it never claims an unreported effect.
        for seq in &finished {
            assert!(performed.contains(intents[seq].as_str()), "kill {kill}: outcome of unreported {}", intents[seq]);
        }
        // Each kill leaves at most one effect without an outcome.
        let unknown = intents.len() - finished.len();
        assert!(unknown <= unknown_before + 1, "kill {kill}: {unknown} unknown outcomes");

        mid_run += u32::from(size() > before);
        between_rows += u32::from(unknown > unknown_before);
    }
    // `show` and `unknown_outcomes` report those effects as such, never as nothing.
    let store = SqliteStore::open(&db, Durability::SurvivesCrash).unwrap();
    let unknown: Vec<u64> = store.unknown_outcomes().unwrap().iter().map(|e| e.seq).collect();
    let mut expected: Vec<u64> = intents.keys().filter(|seq| !finished.contains(seq)).copied().collect();
    expected.sort();
    assert_eq!(unknown, expected);
    eprintln!(
        "{KILLS} kills, {} effects: {mid_run} kills after some effect was performed, {between_rows} between an effect's two rows",
        intents.len()
    );
    assert!(mid_run >= KILLS / 2, "only {mid_run} kills landed while the child was performing effects");
    assert!(between_rows >= KILLS / 10, "only {between_rows} kills landed between an effect's rows");
}
