//! Several writers on one store: processes and threads appending at once keep one chain; a
//! second writer waits for the first; a session serves one run at a time, and a dead run's lock
//! is taken over.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::{Scratch, env_path, raw, role, spawn_child};
use cordon_store::{Durability, SqliteStore, Store, StoreError, Verdict};
use serde_json::json;

const PER_WRITER: u64 = 150;

/// The child roles of this binary.
#[test]
fn child() {
    let Some(role) = role() else { return };
    let store = SqliteStore::open(&env_path("DB"), Durability::SurvivesCrash).unwrap();
    match role.as_str() {
        // Append rows naming this writer.
        "append" => {
            let me = format!("process {}", std::process::id());
            wait_for(&env_path("GO"));
            for n in 0..PER_WRITER {
                store.append(None, "note", &json!({ "writer": me, "n": n })).unwrap();
                pause();
            }
        }
        // Take the session, say so, and hold it until killed.
        "hold" => {
            let _lock = store.lock_session("work").unwrap();
            std::fs::write(env_path("READY"), "locked").unwrap();
            std::thread::sleep(Duration::from_secs(60));
        }
        other => panic!("no role {other}"),
    }
}

/// Between two appends: writers that pause, as runs do between effects, interleave.
fn pause() {
    std::thread::sleep(Duration::from_micros(300));
}

/// Waits until the file exists: the start line of a race.
fn wait_for(path: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn processes_and_threads_appending_at_once_keep_one_chain() {
    let scratch = Scratch::new();
    drop(scratch.open());
    let (db, go) = (scratch.db(), scratch.path("go"));
    let children: Vec<_> = (0..2).map(|_| spawn_child("append", &[("DB", &db), ("GO", &go)])).collect();
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let (db, go) = (db.clone(), go.clone());
            std::thread::spawn(move || {
                let store = SqliteStore::open(&db, Durability::SurvivesCrash).unwrap();
                wait_for(&go);
                for n in 0..PER_WRITER {
                    store.append(None, "note", &json!({ "writer": format!("thread {t}"), "n": n })).unwrap();
                    pause();
                }
            })
        })
        .collect();
    // One store shared by two threads of this process, too.
    let shared = std::sync::Arc::new(scratch.open());
    let sharing: Vec<_> = (0..2)
        .map(|t| {
            let (store, go) = (shared.clone(), go.clone());
            std::thread::spawn(move || {
                wait_for(&go);
                for n in 0..PER_WRITER {
                    store.append(None, "note", &json!({ "writer": format!("shared {t}"), "n": n })).unwrap();
                    pause();
                }
            })
        })
        .collect();
    // Give the children time to start, then let everyone go.
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(&go, "go").unwrap();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    for t in threads.into_iter().chain(sharing) {
        t.join().unwrap();
    }

    let store = scratch.open();
    let total = 6 * PER_WRITER;
    assert!(matches!(store.verify().unwrap(), Verdict::Intact { rows, .. } if rows == total));
    let rows: Vec<serde_json::Value> =
        store.rows(1, usize::MAX).unwrap().iter().map(|r| serde_json::from_str(&r.content).unwrap()).collect();
    let writers: Vec<&serde_json::Value> = rows.iter().map(|r| &r["writer"]).collect();
    // Every writer's rows are there, in its own order.
    let mut by_writer = std::collections::BTreeMap::<String, Vec<u64>>::new();
    for r in &rows {
        by_writer.entry(r["writer"].to_string()).or_default().push(r["n"].as_u64().unwrap());
    }
    assert_eq!(by_writer.len(), 6);
    for (writer, ns) in by_writer {
        assert_eq!(ns, (0..PER_WRITER).collect::<Vec<_>>(), "{writer}");
    }
    // And the writers did write at once: the log switches between them far more often than
    // the 5 times of writers taking turns.
    let switches = writers.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(switches >= 100, "the writers took turns only {switches} times");
}

#[test]
fn a_second_writer_waits_for_the_first() {
    let scratch = Scratch::new();
    let store = scratch.open();
    let holder = raw(&scratch.db());
    holder
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO requests (id, started_ms, text, principal, status) VALUES (99, 0, 't', 'p', 'running');")
        .unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        holder.execute_batch("COMMIT").unwrap();
    });
    let start = Instant::now();
    store.append(None, "note", &json!("after the other writer")).unwrap();
    assert!(start.elapsed() >= Duration::from_millis(250), "did not wait: {:?}", start.elapsed());
    release.join().unwrap();
    assert!(matches!(store.verify().unwrap(), Verdict::Intact { rows: 1, .. }));
}

#[test]
fn a_session_in_use_cannot_be_taken() {
    let scratch = Scratch::new();
    let (a, b) = (scratch.open(), scratch.open());
    let lock = a.lock_session("work").unwrap();
    let Err(e) = b.lock_session("work") else { panic!("taken twice") };
    assert!(
        matches!(&e, StoreError::SessionBusy { session, pid, .. } if session == "work" && *pid == std::process::id())
    );
    let message = e.to_string();
    assert!(message.starts_with("session 'work' is in use by another run (process "), "{message}");
    // Not even by the same store: a session serves one run at a time.
    assert!(matches!(a.lock_session("work"), Err(StoreError::SessionBusy { .. })));
    // Other sessions are free.
    b.unlock_session(b.lock_session("play").unwrap()).unwrap();
    a.unlock_session(lock).unwrap();
    b.unlock_session(b.lock_session("work").unwrap()).unwrap();
}

#[test]
fn a_dead_processs_lock_is_taken_over() {
    let scratch = Scratch::new();
    drop(scratch.open());
    let ready = scratch.path("ready");
    let mut holder = spawn_child("hold", &[("DB", &scratch.db()), ("READY", &ready)]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready.exists() {
        assert!(Instant::now() < deadline, "the child never took the session");
        std::thread::sleep(Duration::from_millis(5));
    }
    let store = scratch.open();
    let Err(StoreError::SessionBusy { pid, .. }) = store.lock_session("work") else { panic!("not busy") };
    assert_eq!(pid, holder.id());

    holder.kill().unwrap();
    holder.wait().unwrap();
    let lock = store.lock_session("work").unwrap();
    store.save_session(&lock, &json!({ "taken": "over" })).unwrap();
    store.unlock_session(lock).unwrap();
    assert_eq!(store.load_session("work").unwrap(), Some(json!({ "taken": "over" })));
}

#[test]
fn a_recycled_pid_does_not_keep_a_lock() {
    let scratch = Scratch::new();
    let store = scratch.open();
    store.unlock_session(store.lock_session("work").unwrap()).unwrap();
    // The lock names a live pid (this one) but another start time: a later process, that is,
    // the pid was reused. Only Linux tells start times.
    let sql = "UPDATE sessions SET lock_pid = ?1, lock_started = 1, lock_epoch = 7 WHERE name = 'work'";
    raw(&scratch.db()).execute(sql, [std::process::id()]).unwrap();
    let taken = store.lock_session("work");
    if cfg!(target_os = "linux") {
        store.unlock_session(taken.unwrap()).unwrap();
    } else {
        assert!(matches!(taken, Err(StoreError::SessionBusy { .. })));
    }
}

#[test]
fn a_lock_taken_over_is_lost_to_its_old_holder() {
    let scratch = Scratch::new();
    let store = scratch.open();
    let old = store.lock_session("work").unwrap();
    assert!(store.force_unlock_session("work").unwrap());
    let new = store.lock_session("work").unwrap();
    let e = store.save_session(&old, &json!(1)).unwrap_err();
    assert_eq!(e.to_string(), "the lock on session 'work' was broken and taken by another run");
    assert!(matches!(store.unlock_session(old), Err(StoreError::LockLost { .. })));
    store.save_session(&new, &json!(2)).unwrap();
    store.unlock_session(new).unwrap();
    assert_eq!(store.load_session("work").unwrap(), Some(json!(2)));
    assert!(!store.force_unlock_session("work").unwrap());
}

#[test]
fn threads_creating_one_new_store_at_once_all_open_it() {
    // Each opener reads the file's setup as one state: none may see the tables another is
    // creating without the application id that comes with them.
    for round in 0..20 {
        let scratch = Scratch::new();
        let path = scratch.db();
        let barrier = std::sync::Barrier::new(6);
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| {
                    barrier.wait();
                    if let Err(e) = SqliteStore::open(&path, Durability::SurvivesCrash) {
                        panic!("round {round}: {e}");
                    }
                });
            }
        });
    }
}
