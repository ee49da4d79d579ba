//! The PostgreSQL store against a real server (see `pg`): the API as SQLite's, a chain per
//! principal (each hashed as SQLite's rows are, each verified on its own, none waiting for
//! another's writers, a checkpoint holding them all), hostile edits by SQL, stores on many
//! connections appending and claiming at once, a connection ended mid-transaction, and a server
//! restarted between two operations.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod pg;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cordon_store::chain::{Fields, row_hash};
use cordon_store::{
    AnswerRefused, BadRow, Batch, BatchRow, Checkpoint, EffectIntent, EffectStatus, GrantId, GrantQuery, Lines,
    NewAnswer, NewGrant, NewRequest, NewRun, Outcome, Parking, PostgresStore, Problem, RequestId, RowHash, RunId,
    RunKind, RunState, Scope, Status, Store, StoreError, Verdict, WebSession,
};
use pg::{Server, raw, shared};
use serde_json::{Value, json};

/// The writers' gate's advisory lock key, as the store takes it (shared to append).
const CHAIN_LOCK: i64 = 0x434f_5244_0000_0001;
/// The first half of a chain's own advisory lock key; the second is `hashtext(chain)`.
const CHAIN_CLASS: i32 = 0x434f_5244;

/// A store in a new database of the shared server, and the database's connection string.
fn store() -> (PostgresStore, String) {
    let url = shared().database();
    (PostgresStore::connect(&url).unwrap(), url)
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

fn intent(tool: &str, n: u64) -> EffectIntent {
    EffectIntent {
        tool: tool.into(),
        args: json!({ "n": n }),
        decision: "allowed".into(),
        approved_by: None,
        labels: json!(["public"]),
        stages: Vec::new(),
    }
}

fn request(store: &dyn Store, text: &str) -> RequestId {
    store.begin_request(&NewRequest { text, principal: "ann", session: Some("work") }).unwrap()
}

fn intact(store: &dyn Store) -> u64 {
    match store.verify().unwrap() {
        Verdict::Intact { rows, .. } => rows,
        broken => panic!("{broken:?}"),
    }
}

fn broken(seq: u64, problem: Problem) -> Verdict {
    Verdict::Broken(BadRow { seq, problem })
}

fn grant(tool: &str, destination: &str, scope: Scope, expires_ms: Option<i64>) -> NewGrant {
    NewGrant {
        tool: tool.into(),
        destination: destination.into(),
        label_class: "public".into(),
        scope,
        expires_ms,
        instance: None,
        principal: None,
    }
}

fn kinds(store: &dyn Store) -> Vec<String> {
    store.rows(1, 1000).unwrap().into_iter().map(|r| r.kind).collect()
}

#[test]
fn sessions_are_saved_and_loaded_and_held_by_one_run() {
    let (a, url) = store();
    let b = PostgresStore::connect(&url).unwrap();
    assert_eq!(a.load_session("work").unwrap(), None);
    let lock = a.lock_session("work").unwrap();
    assert_eq!(lock.session(), "work");
    assert_eq!(a.load_session("work").unwrap(), None);
    // Held: refused to another store, and to the same one.
    let Err(e) = b.lock_session("work") else { panic!("taken twice") };
    assert!(
        matches!(&e, StoreError::SessionBusy { session, pid, .. } if session == "work" && *pid == std::process::id()),
        "{e:?}"
    );
    assert!(e.to_string().starts_with("session 'work' is in use by another run (process "), "{e}");
    assert!(matches!(a.lock_session("work"), Err(StoreError::SessionBusy { .. })));
    // Other sessions are free.
    b.unlock_session(b.lock_session("play").unwrap()).unwrap();

    let state = json!({ "measures": { "tainted": true } });
    a.save_session(&lock, &state).unwrap();
    let listed = b.sessions().unwrap();
    let names: Vec<&str> = listed.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["play", "work"]);
    assert_eq!(listed[0].held_by, None);
    assert_eq!(listed[1].held_by.map(|h| h.pid), Some(std::process::id()));
    a.unlock_session(lock).unwrap();
    assert_eq!(b.sessions().unwrap()[1].held_by, None);
    assert_eq!(b.load_session("work").unwrap(), Some(state));
    // Unlocked is free at once, for anyone.
    b.unlock_session(b.lock_session("work").unwrap()).unwrap();
}

/// Ends the connection holding an advisory lock in `url`'s database, as a machine's death would.
fn end_lock_holders(url: &str) {
    let sql = "SELECT pg_terminate_backend(pid, 5000) FROM pg_locks WHERE locktype = 'advisory' AND granted \
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    let ended = raw(url).query(sql, &[]).unwrap();
    assert_eq!(ended.len(), 1, "one connection holds a lock");
    assert!(ended[0].get::<_, bool>(0));
}

#[test]
fn a_session_whose_connection_ended_is_taken_over_and_lost_to_its_holder() {
    let (a, url) = store();
    let b = PostgresStore::connect(&url).unwrap();
    let old = a.lock_session("work").unwrap();
    a.save_session(&old, &json!(1)).unwrap();
    end_lock_holders(&url);
    let new = b.lock_session("work").unwrap();
    let e = a.save_session(&old, &json!("late")).unwrap_err();
    assert_eq!(e.to_string(), "the lock on session 'work' was broken and taken by another run");
    assert!(matches!(a.unlock_session(old), Err(StoreError::LockLost { .. })));
    b.save_session(&new, &json!(2)).unwrap();

    // Forced: the holder's connection is ended, and its lock lost even to a save.
    assert!(a.force_unlock_session("work").unwrap());
    assert!(matches!(b.save_session(&new, &json!(3)), Err(StoreError::LockLost { .. })));
    assert!(matches!(b.unlock_session(new), Err(StoreError::LockLost { .. })));
    assert_eq!(a.sessions().unwrap()[0].held_by, None);
    a.unlock_session(a.lock_session("work").unwrap()).unwrap();
    assert!(!a.force_unlock_session("work").unwrap());
    assert_eq!(b.load_session("work").unwrap(), Some(json!(2)));
    // The stores go on.
    assert_eq!(intact(&a), 0);
    b.append(None, "note", &json!("still here")).unwrap();
}

#[test]
fn requests_keep_their_transcripts_and_status() {
    let (store, url) = store();
    let first = request(&store, "triage");
    let second = request(&store, "reply");
    assert_eq!(store.append_transcript(first, &json!({ "prompt": "p" })).unwrap(), 1);
    assert_eq!(store.append_transcript(first, &json!({ "reply": "r" })).unwrap(), 2);
    assert_eq!(store.transcript(first).unwrap(), [json!({ "prompt": "p" }), json!({ "reply": "r" })]);
    assert_eq!(store.transcript(second).unwrap(), Vec::<Value>::new());
    assert_eq!(store.append_transcript_batch(first, &[json!(3), json!(4)]).unwrap(), 4);
    assert_eq!(store.append_transcript_batch(first, &[]).unwrap(), 4);
    assert_eq!(store.transcript(first).unwrap()[2..], [json!(3), json!(4)]);
    store.set_status(first, Status::Done).unwrap();

    let listed = store.requests(10).unwrap();
    assert_eq!(listed.iter().map(|r| r.id).collect::<Vec<_>>(), [second, first]);
    assert_eq!((listed[1].status, listed[1].session.as_deref()), (Some(Status::Done), Some("work")));
    assert_eq!(store.requests(1).unwrap().len(), 1);

    // A signal: this process's unfinished requests end as interrupted.
    assert_eq!(store.interrupt_own_requests().unwrap(), [second]);
    assert_eq!(store.requests(1).unwrap()[0].status, Some(Status::Interrupted));

    let missing = RequestId(99);
    assert!(matches!(store.append_transcript(missing, &json!(1)), Err(StoreError::NoSuchRequest(_))));
    assert!(matches!(store.set_status(missing, Status::Done), Err(StoreError::NoSuchRequest(_))));
    assert!(matches!(store.show(missing), Err(StoreError::NoSuchRequest(_))));
    assert!(matches!(store.append(Some(missing), "hole", &json!(1)), Err(StoreError::NoSuchRequest(_))));
    for kind in ["effect", "outcome", "request", "status", "grant", "revoke", "expire", "archive", "run", "answer"] {
        assert!(matches!(store.append(None, kind, &json!(1)), Err(StoreError::ReservedKind(_))), "{kind}");
    }

    // Retention: old transcripts go, no audit row does.
    let forty_days = 40 * 24 * 3600 * 1000_i64;
    raw(&url)
        .execute("UPDATE requests SET started_ms = started_ms - $1 WHERE id = $2", &[&forty_days, &first.0])
        .unwrap();
    let head = store.head().unwrap();
    let report = store.gc(Duration::from_secs(30 * 24 * 3600)).unwrap();
    assert_eq!((report.requests, report.events), (1, 4));
    assert!(store.transcript(first).unwrap().is_empty());
    assert_eq!(store.head().unwrap(), head);
    assert!(matches!(store.verify_against(&head).unwrap(), Verdict::Intact { rows: 4, .. }));
}

/// What a request did since its last commit goes in with its next effect's row, in one
/// transaction, on its principal's chain: all of it or none.
#[test]
fn a_batch_is_recorded_whole_with_its_effect_or_not_at_all() {
    let (store, url) = store();
    let id = request(&store, "triage");
    let first = store.record(id, &Batch::default(), Some(&intent("list_issues", 1))).unwrap().unwrap();
    let batch = Batch {
        transcript: Lines::of(&[json!({ "event": "effect_returned" }), json!({ "event": "stage_decided" })]).unwrap(),
        rows: vec![
            BatchRow::Outcome { effect: first, outcome: Outcome::Performed { result_size: 12 } },
            BatchRow::Row { kind: "decision", content: json!({ "stage": "gate", "outcome": "approved" }) },
        ],
    };
    let second = store.record(id, &batch, Some(&intent("comment", 2))).unwrap().unwrap();
    assert_eq!(kinds(&store), ["request", "effect", "outcome", "decision", "effect"]);
    assert_eq!(store.transcript(id).unwrap().len(), 2);
    let sql = "CREATE FUNCTION disk_full() RETURNS trigger AS $$ BEGIN \
               IF NEW.kind = 'effect' THEN RAISE EXCEPTION 'database or disk is full'; END IF; RETURN NEW; \
               END $$ LANGUAGE plpgsql; \
               CREATE TRIGGER disk_full BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION disk_full();";
    raw(&url).batch_execute(sql).unwrap();
    let batch = Batch {
        transcript: Lines::of(&[json!({ "event": "effect_returned" })]).unwrap(),
        rows: vec![BatchRow::Outcome { effect: second, outcome: Outcome::Performed { result_size: 3 } }],
    };
    let error = store.record(id, &batch, Some(&intent("comment", 3))).unwrap_err();
    assert!(error.to_string().contains("database or disk is full"), "{error}");
    assert_eq!(kinds(&store).len(), 5);
    assert_eq!(store.transcript(id).unwrap().len(), 2);
    assert_eq!(intact(&store), 5);
}

#[test]
fn show_tells_each_effects_outcome_and_unknown_ones_as_unknown() {
    let (store, _) = store();
    let id = request(&store, "triage");
    let other = request(&store, "elsewhere");
    store.append(Some(id), "hole", &json!({ "hole": 1, "fill": "list_issues()" })).unwrap();
    let done = store.begin_effect(Some(id), &intent("list_issues", 1)).unwrap();
    store.append(Some(other), "hole", &json!({ "hole": 1 })).unwrap();
    let failed = store.begin_effect(Some(id), &intent("comment", 2)).unwrap();
    store.end_effect(done, &Outcome::Performed { result_size: 512 }).unwrap();
    store.end_effect(failed, &Outcome::Failed { error: "rate limited".into() }).unwrap();
    // The process "crashes" here: the effect's outcome is never written.
    let crashed = store.begin_effect(Some(id), &intent("comment", 3)).unwrap();
    let crashed_seq = crashed.seq();
    drop(crashed);
    store.set_status(id, Status::Failed).unwrap();

    let log = store.show(id).unwrap();
    assert_eq!(log.request.text, "triage");
    let summary: Vec<(String, Option<EffectStatus>)> =
        log.entries.iter().map(|e| (e.kind.clone(), e.outcome.clone())).collect();
    assert_eq!(
        summary,
        [
            ("request".into(), None),
            ("hole".into(), None),
            ("effect".into(), Some(EffectStatus::Performed { seq: 7, result_size: 512 })),
            ("effect".into(), Some(EffectStatus::Failed { seq: 8, error: "rate limited".into() })),
            ("effect".into(), Some(EffectStatus::Unknown)),
            ("status".into(), None),
        ]
    );
    assert_eq!(log.entries[2].content["tool"], "list_issues");
    let unknown: Vec<u64> = store.unknown_outcomes().unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(unknown, [crashed_seq]);
    let head = store.head().unwrap();
    assert_eq!(head.seq, 10);
    assert_eq!(store.verify_against(&head).unwrap(), Verdict::Intact { rows: 10, head });
    let early = Checkpoint { seq: 3, hash: store.rows(3, 1).unwrap()[0].hash };
    assert!(matches!(store.verify_against(&early).unwrap(), Verdict::Intact { .. }));
}

#[test]
fn grants_cover_what_they_name_for_whom_they_name_until_revoked_or_expired() {
    let (store, _) = store();
    let mail = store.add_grant(&grant("send", "*@example.com", Scope::UntilRevoked, None)).unwrap();
    let session = store.add_grant(&grant("post", "#general", Scope::Session("work".into()), None)).unwrap();
    let expired = store.add_grant(&grant("fetch", "*", Scope::UntilRevoked, Some(1))).unwrap();
    let anns =
        store.add_grant(&NewGrant { principal: Some("ann".into()), ..grant("pay", "*", Scope::UntilRevoked, None) });
    let anns = anns.unwrap();

    let find = |tool: &str, destination: &str, session: Option<&str>, principal: &str| {
        let query = GrantQuery { tool, destination, label_class: "public", session, instance: None, principal };
        store.find_grant(&query).unwrap().map(|g| g.id)
    };
    assert_eq!(find("send", "bo@example.com", None, "bob"), Some(mail.id));
    assert_eq!(find("send", "bo@example.com.evil", None, "bob"), None);
    assert_eq!(find("post", "#general", Some("work"), "bob"), Some(session.id));
    assert_eq!(find("post", "#general", Some("play"), "bob"), None);
    assert_eq!(find("fetch", "https://x", None, "bob"), None);
    // A grant that names its principal covers only that principal's effects.
    assert_eq!(find("pay", "shop", None, "ann"), Some(anns.id));
    assert_eq!(find("pay", "shop", None, "bob"), None);

    let live: Vec<GrantId> = store.grants().unwrap().iter().map(|g| g.id).collect();
    assert_eq!(live, [mail.id, session.id, anns.id]);
    assert_eq!(store.grants().unwrap()[0], mail);
    store.revoke_grant(mail.id).unwrap();
    assert_eq!(find("send", "bo@example.com", None, "bob"), None);
    assert!(matches!(store.revoke_grant(mail.id), Err(StoreError::NoSuchGrant(id)) if id == mail.id));
    assert!(store.revoke_grant(expired.id).is_ok(), "an expired grant can still be revoked");
    assert_eq!(kinds(&store), ["grant", "grant", "grant", "grant", "expire", "revoke", "revoke"]);
    assert_eq!(intact(&store), 7);
}

/// The audit rows of `store`, each chained by the crate's own `row_hash` after the last row of
/// its chain (read by SQL): the head `head` gives, the root over the chains' last rows.
fn chained_by_row_hash(store: &dyn Store, url: &str) -> Checkpoint {
    let links: HashMap<u64, (String, i64)> = raw(url)
        .query("SELECT seq, chain, prev_seq FROM audit", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get::<_, i64>(0) as u64, (r.get(1), r.get(2))))
        .collect();
    let mut heads: BTreeMap<String, Checkpoint> = BTreeMap::new();
    let mut last = Checkpoint::START;
    for r in store.rows(1, 10_000).unwrap() {
        let (chain, prev) = &links[&r.seq];
        let start = Checkpoint { seq: 0, hash: PostgresStore::chain_start_hash(chain) };
        let head = heads.get(chain).copied().unwrap_or(start);
        assert_eq!(*prev as u64, head.seq, "row {} follows the last row of its chain", r.seq);
        let fields = Fields { at_ms: r.at_ms, kind: &r.kind, request: r.request.map(|q| q.0), content: &r.content };
        assert_eq!(row_hash(&head.hash, r.seq, &fields), r.hash, "row {}", r.seq);
        heads.insert(chain.clone(), Checkpoint { seq: r.seq, hash: r.hash });
        last = Checkpoint { seq: r.seq, hash: PostgresStore::root_hash(heads.iter().map(|(c, h)| (c.as_str(), *h))) };
    }
    last
}

#[test]
fn each_principals_chain_is_hashed_as_sqlites_rows_are() {
    let (store, url) = store();
    let id = request(&store, "triage");
    let effect = store.begin_effect(Some(id), &intent("comment", 1)).unwrap();
    store.append_many(None, "note", (1..=5).map(|n| json!({ "n": n, "text": "é \u{1F600} \"quoted\"" }))).unwrap();
    store.end_effect(effect, &Outcome::Performed { result_size: 3 }).unwrap();
    store
        .add_grant(&NewGrant { principal: Some("bob".into()), ..grant("send", "*", Scope::UntilRevoked, None) })
        .unwrap();
    submit(&store, "carol");
    store.add_user("dan", b"token").unwrap();
    let head = store.head().unwrap();
    assert_eq!(chained_by_row_hash(&store, &url), head);
    let chains: Vec<String> =
        raw(&url).query("SELECT DISTINCT chain FROM audit ORDER BY 1", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(chains, ["", "ann", "bob", "carol", "dan"]);
    assert_eq!(store.verify_against(&head).unwrap(), Verdict::Intact { rows: 11, head });
    // A row's own checkpoint, as `append` returns it, holds its chain up to it.
    let second = Checkpoint { seq: 2, hash: store.rows(2, 1).unwrap()[0].hash };
    assert!(matches!(store.verify_against(&second).unwrap(), Verdict::Intact { .. }));

    // Archiving is refused, and nothing changes: an archive file holds one chain.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit-1.jsonl");
    let e = store.archive(&path, 6).unwrap_err();
    assert!(matches!(e, StoreError::Unsupported(_)), "{e:?}");
    assert!(e.to_string().contains("one chain per principal"), "{e}");
    assert!(!path.exists());
    assert_eq!(store.head().unwrap(), head);
    assert_eq!(intact(&store), 11);
}

/// A store whose log has 13 rows: a request, a hole, effects with outcomes, notes, a status.
fn fixture() -> (PostgresStore, String) {
    let (store, url) = store();
    let req = store.begin_request(&NewRequest { text: "triage", principal: "ann", session: None }).unwrap();
    store.append(Some(req), "hole", &json!({ "fill": "list_issues()" })).unwrap();
    for n in 0..4 {
        let effect = store.begin_effect(Some(req), &intent("comment", n)).unwrap();
        store.end_effect(effect, &Outcome::Performed { result_size: n }).unwrap();
    }
    store.append(None, "note", &json!("between requests")).unwrap();
    store.set_status(req, Status::Done).unwrap();
    store.append(None, "note", &json!("last")).unwrap();
    assert_eq!(intact(&store), 13);
    (store, url)
}

fn verdict_after(sql: &str) -> Verdict {
    let (store, url) = fixture();
    raw(&url).batch_execute(sql).unwrap();
    store.verify().unwrap()
}

#[test]
fn hostile_edits_of_the_log_are_named_at_their_row() {
    let content = verdict_after(r#"UPDATE audit SET content = '{"n":99}' WHERE seq = 5"#);
    assert_eq!(content, broken(5, Problem::HashMismatch));
    assert_eq!(verdict_after("UPDATE audit SET at_ms = at_ms + 1 WHERE seq = 4"), broken(4, Problem::HashMismatch));
    assert_eq!(verdict_after("UPDATE audit SET kind = 'note' WHERE seq = 4"), broken(4, Problem::HashMismatch));
    assert_eq!(verdict_after("UPDATE audit SET request = NULL WHERE seq = 4"), broken(4, Problem::HashMismatch));
    let hash = verdict_after(r"UPDATE audit SET hash = '\x00' WHERE seq = 4");
    assert_eq!(hash, broken(4, Problem::Malformed { column: "hash" }));
    assert_eq!(verdict_after("DELETE FROM audit WHERE seq = 5"), broken(5, Problem::Missing { next: 6 }));
    assert_eq!(verdict_after("DELETE FROM audit WHERE seq = 1"), broken(1, Problem::Missing { next: 2 }));
    let before = "INSERT INTO audit VALUES (0, 0, 'note', NULL, '1', '\\x00')";
    assert_eq!(verdict_after(before), broken(1, Problem::Unexpected { found: 0 }));
    let swap = "UPDATE audit SET seq = -3 WHERE seq = 3; UPDATE audit SET seq = 3 WHERE seq = 7; \
                UPDATE audit SET seq = 7 WHERE seq = -3;";
    assert_eq!(verdict_after(swap), broken(3, Problem::HashMismatch));

    // Cut back, or rewritten after some row: only a checkpoint knows.
    let (store, url) = fixture();
    let checkpoint = store.head().unwrap();
    raw(&url).execute("DELETE FROM audit WHERE seq > 9", &[]).unwrap();
    assert!(matches!(store.verify().unwrap(), Verdict::Intact { rows: 9, .. }));
    let truncated = store.verify_against(&checkpoint).unwrap();
    assert_eq!(truncated, broken(10, Problem::Truncated { head: 9, checkpoint: 13 }));
    for n in 10..=13 {
        store.append(None, "note", &json!(n)).unwrap();
    }
    assert_eq!(intact(&store), 13);
    assert_eq!(store.verify_against(&checkpoint).unwrap(), broken(13, Problem::CheckpointMismatch));
}

/// A store whose chains interleave, and the rows of each: ann's at 1, 3, 6, 9, 12 (a request
/// and notes), bob's at 2, 4, 7, 10, 13, and rows of no principal at 5, 8, 11, 14.
fn interleaved() -> (PostgresStore, String) {
    let (store, url) = store();
    let ann = store.begin_request(&NewRequest { text: "a", principal: "ann", session: None }).unwrap();
    let bob = store.begin_request(&NewRequest { text: "b", principal: "bob", session: None }).unwrap();
    for n in 0..4 {
        store.append(Some(ann), "note", &json!(n)).unwrap();
        store.append(Some(bob), "note", &json!(n)).unwrap();
        store.append(None, "note", &json!(n)).unwrap();
    }
    assert_eq!(intact(&store), 14);
    (store, url)
}

/// Sets row `seq`'s hash as a forger would: from its fields and its chain predecessor's hash.
fn rehash(url: &str, seq: i64) {
    let mut db = raw(url);
    let sql = "SELECT a.at_ms, a.kind, a.request, a.content, p.hash FROM audit a JOIN audit p ON p.seq = a.prev_seq \
               WHERE a.seq = $1";
    let r = db.query_one(sql, &[&seq]).unwrap();
    let fields = Fields { at_ms: r.get(0), kind: r.get(1), request: r.get(2), content: r.get(3) };
    let hash = row_hash(&RowHash(r.get::<_, Vec<u8>>(4).try_into().unwrap()), seq as u64, &fields);
    db.execute("UPDATE audit SET hash = $2 WHERE seq = $1", &[&seq, &&hash.0[..]]).unwrap();
}

#[test]
fn each_chain_verifies_on_its_own_and_a_checkpoint_holds_every_chain() {
    // An edit or a deletion in one chain is named at its row; the rows of other chains between
    // are no gap in it.
    let after = |sql: &str| {
        let (store, url) = interleaved();
        raw(&url).batch_execute(sql).unwrap();
        store.verify().unwrap()
    };
    assert_eq!(after("UPDATE audit SET content = '9' WHERE seq = 7"), broken(7, Problem::HashMismatch));
    assert_eq!(after("DELETE FROM audit WHERE seq = 7"), broken(7, Problem::Missing { next: 10 }));
    assert_eq!(after("DELETE FROM audit WHERE seq = 1"), broken(1, Problem::Missing { next: 3 }));
    assert_eq!(after("UPDATE audit SET chain = 'ann' WHERE seq = 13"), broken(13, Problem::HashMismatch));

    // An older checkpoint holds while every chain goes on; a chain cut back, even with later
    // rows after it, is found.
    let (store, url) = interleaved();
    let checkpoint = store.head().unwrap();
    assert_eq!(checkpoint.seq, 14);
    store.append(Some(RequestId(1)), "note", &json!("ann goes on")).unwrap();
    store.append(Some(RequestId(2)), "note", &json!("bob goes on")).unwrap();
    assert!(matches!(store.verify_against(&checkpoint).unwrap(), Verdict::Intact { rows: 16, .. }));
    raw(&url).execute("DELETE FROM audit WHERE seq IN (12, 15)", &[]).unwrap();
    assert_eq!(intact(&store), 14);
    assert_eq!(store.verify_against(&checkpoint).unwrap(), broken(14, Problem::CheckpointMismatch));
    raw(&url).execute("DELETE FROM audit WHERE chain = 'ann'", &[]).unwrap();
    assert_eq!(store.verify_against(&checkpoint).unwrap(), broken(14, Problem::CheckpointMismatch));

    // A chain rewritten, each row's hash made again: it verifies, the checkpoint finds it.
    let (store, url) = interleaved();
    let checkpoint = store.head().unwrap();
    store.append(Some(RequestId(2)), "note", &json!("bob goes on")).unwrap();
    raw(&url).execute("UPDATE audit SET content = '99' WHERE seq = 10", &[]).unwrap();
    assert_eq!(store.verify().unwrap(), broken(10, Problem::HashMismatch));
    for seq in [10, 13, 15] {
        rehash(&url, seq);
    }
    assert_eq!(intact(&store), 15);
    assert_eq!(store.verify_against(&checkpoint).unwrap(), broken(14, Problem::CheckpointMismatch));
}

#[test]
fn principals_append_without_waiting_for_each_others_writers() {
    let (store, url) = store();
    let ann = store.begin_request(&NewRequest { text: "a", principal: "ann", session: None }).unwrap();
    let ann_first = store.rows(1, 1).unwrap()[0].hash;
    // A writer for ann holds its transaction open, a row appended to ann's chain.
    let mut holder = raw(&url);
    holder.batch_execute("BEGIN").unwrap();
    holder.execute("SELECT pg_advisory_xact_lock_shared($1)", &[&CHAIN_LOCK]).unwrap();
    holder.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", &[&CHAIN_CLASS, &"ann"]).unwrap();
    let seq: i64 = holder.query_one("SELECT nextval('audit_seq')", &[]).unwrap().get(0);
    let fields = Fields { at_ms: 1, kind: "note", request: Some(ann.0), content: "\"late\"" };
    let hash = row_hash(&ann_first, seq as u64, &fields);
    let sql = "INSERT INTO audit (seq, at_ms, kind, request, content, hash, chain, prev_seq) \
               VALUES ($1, 1, 'note', $2, '\"late\"', $3, 'ann', 1)";
    holder.execute(sql, &[&seq, &ann.0, &&hash.0[..]]).unwrap();

    // Writers for bob, and of no principal, do not wait for it: each row commits after ann's
    // row is numbered, before it commits.
    let started = Instant::now();
    let bob = store.begin_request(&NewRequest { text: "b", principal: "bob", session: None }).unwrap();
    store.set_status(bob, Status::Done).unwrap();
    store
        .add_grant(&NewGrant { principal: Some("bob".into()), ..grant("send", "*", Scope::UntilRevoked, None) })
        .unwrap();
    submit(&store, "bob");
    store.append(None, "note", &json!("no principal")).unwrap();
    assert!(started.elapsed() < Duration::from_secs(3), "bob's writes took {:?}", started.elapsed());

    // Another writer for ann waits, for ann's chain's lock; so does a checkpoint, for the gate.
    let mut admin = raw(&url);
    let waiting = std::thread::spawn({
        let url = url.clone();
        move || PostgresStore::connect(&url).unwrap().set_status(ann, Status::Done)
    });
    let pid = waiting_for_the_chain(&mut admin);
    let sql = "SELECT classid::bigint, objsubid::int FROM pg_locks WHERE pid = $1 AND NOT granted";
    let lock = admin.query_one(sql, &[&pid]).unwrap();
    assert_eq!((lock.get::<_, i64>(0), lock.get::<_, i32>(1)), (i64::from(CHAIN_CLASS), 2), "ann's chain's lock");
    let head = std::thread::spawn({
        let url = url.clone();
        move || PostgresStore::connect(&url).unwrap().head().unwrap()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!waiting.is_finished() && !head.is_finished());
    holder.batch_execute("COMMIT").unwrap();
    waiting.join().unwrap().unwrap();
    // The rows committed out of their order across chains: each chain verifies by its own.
    let head = head.join().unwrap();
    assert_eq!(intact(&store), 8);
    assert_eq!(chained_by_row_hash(&store, &url), store.head().unwrap());
    assert!(matches!(store.verify_against(&head).unwrap(), Verdict::Intact { rows: 8, .. }));
    let kinds: Vec<String> = store.show(ann).unwrap().entries.iter().map(|e| e.kind.clone()).collect();
    assert_eq!(kinds, ["request", "note", "status"]);
}

/// A store with four grants (one revoked, one for a session, one that expires far off) among
/// other rows.
fn granted() -> (PostgresStore, String) {
    let (store, url) = store();
    store.append(None, "note", &json!("first")).unwrap();
    store.add_grant(&grant("send", "a@example.com", Scope::UntilRevoked, None)).unwrap();
    let revoked = store.add_grant(&grant("send", "*", Scope::UntilRevoked, None)).unwrap();
    store.append(None, "note", &json!("between")).unwrap();
    store.add_grant(&grant("post", "#general", Scope::Session("work".into()), None)).unwrap();
    store.add_grant(&grant("fetch", "https://x/*", Scope::UntilRevoked, Some(i64::MAX))).unwrap();
    store.revoke_grant(revoked.id).unwrap();
    store.append(None, "note", &json!("last")).unwrap();
    intact(&store);
    (store, url)
}

/// A grant `verify` names: its row in the log, the grant, and why.
type GrantProblem = (u64, i64, &'static str);

/// What the store honours (its live grants' ids, and whether anything covers sending to b),
/// and what `verify` says of a grant (its row, the grant, why), after `sql`.
fn grants_after(sql: &str) -> (Vec<i64>, bool, Option<GrantProblem>) {
    let (store, url) = granted();
    raw(&url).batch_execute(sql).unwrap();
    let live = store.grants().unwrap().iter().map(|g| g.id.0).collect();
    let query = GrantQuery {
        tool: "send",
        destination: "b@example.com",
        label_class: "public",
        session: None,
        instance: None,
        principal: "ann",
    };
    let covered = store.find_grant(&query).unwrap().is_some();
    let problem = match store.verify().unwrap() {
        Verdict::Broken(BadRow { seq, problem: Problem::Grant { grant, reason } }) => Some((seq, grant, reason)),
        other => panic!("{sql}: {other:?}"),
    };
    (live, covered, problem)
}

#[test]
fn grants_edited_by_sql_are_not_honoured_and_verify_names_them() {
    let widened = grants_after("UPDATE grants SET destination = '*' WHERE id = 1");
    assert_eq!(widened, (vec![3, 4], false, Some((2, 1, "its row in the audit log records another grant"))));
    let revived = grants_after("UPDATE grants SET revoked_ms = NULL WHERE id = 2");
    assert_eq!(revived, (vec![1, 3, 4], false, Some((3, 2, "the audit log revoked it"))));
    let by_hand = grants_after(
        "INSERT INTO grants (tool, destination, label_class, session, expires_ms, created_ms) \
         VALUES ('send', '*', 'public', NULL, NULL, 1)",
    );
    assert_eq!(by_hand, (vec![1, 3, 4], false, Some((0, 5, "it has no row in the audit log"))));
    let pointed = grants_after(
        "INSERT INTO grants (tool, destination, label_class, session, expires_ms, created_ms, audit_seq) \
         VALUES ('send', '*', 'public', NULL, NULL, 1, 2)",
    );
    assert_eq!(pointed, (vec![1, 3, 4], false, Some((2, 5, "its row in the audit log records another grant"))));
    let gone = grants_after("DELETE FROM grants WHERE id = 1");
    assert_eq!(gone, (vec![3, 4], false, Some((2, 1, "the audit log granted it, and it is gone"))));
    // A grant's row of the log edited: the chain breaks there, and the grant is not honoured.
    let (store, url) = granted();
    raw(&url).batch_execute("UPDATE audit SET content = replace(content, 'a@example.com', '*') WHERE seq = 2").unwrap();
    assert_eq!(store.verify().unwrap(), broken(2, Problem::HashMismatch));
    assert!(store.grants().unwrap().iter().all(|g| g.id.0 != 1));
}

#[test]
fn the_schema_is_made_once_and_another_programs_or_a_newer_one_is_refused() {
    // Servers starting at once on an empty database: one makes the schema, the others wait.
    let url = shared().database();
    let start = Barrier::new(6);
    std::thread::scope(|s| {
        for _ in 0..6 {
            s.spawn(|| {
                start.wait();
                PostgresStore::connect(&url).unwrap();
            });
        }
    });
    let version: i32 = raw(&url).query_one("SELECT version FROM cordon_schema", &[]).unwrap().get(0);
    assert_eq!(version as u32, PostgresStore::SCHEMA_VERSION);

    raw(&url).execute("UPDATE cordon_schema SET version = 99", &[]).unwrap();
    let e = PostgresStore::connect(&url).unwrap_err();
    let StoreError::Connect { cause, .. } = &e else { panic!("{e:?}") };
    assert!(matches!(**cause, StoreError::TooNew { found: 99, .. }), "{e:?}");
    assert!(e.to_string().contains("use a newer Cordon"), "{e}");

    let other = shared().database();
    raw(&other).batch_execute("CREATE TABLE accounts (id int)").unwrap();
    let e = PostgresStore::connect(&other).unwrap_err();
    let StoreError::Connect { cause, .. } = &e else { panic!("{e:?}") };
    assert!(matches!(**cause, StoreError::Foreign { .. }), "{e:?}");
    assert!(raw(&other).query("SELECT 1 FROM pg_tables WHERE tablename = 'audit'", &[]).unwrap().is_empty());

    // Nowhere to connect: the message says where, never the password.
    let e = PostgresStore::connect("host=/nonexistent port=5432 user=cordon password=hunter2 dbname=x").unwrap_err();
    let message = e.to_string();
    assert!(message.starts_with("cannot use the store at PostgreSQL database `x` on /nonexistent:5432"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
}

#[test]
fn a_log_of_one_chain_is_migrated_to_chain_of_no_principal() {
    // A store as schema 1 left it: one chain, numbered without gaps, from zeros.
    let (store, url) = store();
    store.append_many(None, "note", (1..=3).map(|n| json!(n))).unwrap();
    raw(&url)
        .batch_execute(
            "DROP INDEX audit_links; DROP INDEX audit_chains; DROP SEQUENCE audit_seq; \
             ALTER TABLE audit DROP COLUMN chain, DROP COLUMN prev_seq; UPDATE cordon_schema SET version = 1",
        )
        .unwrap();
    let store = PostgresStore::connect(&url).unwrap();
    assert_eq!(intact(&store), 3);
    let first = store.begin_request(&NewRequest { text: "a", principal: "ann", session: None }).unwrap();
    assert_eq!(store.append(None, "note", &json!(4)).unwrap().seq, 5);
    assert_eq!(store.rows(4, 1).unwrap()[0].request, Some(first));
    assert_eq!(chained_by_row_hash(&store, &url), store.head().unwrap());
    assert_eq!(intact(&store), 5);
}

#[test]
fn stores_appending_at_once_keep_one_chain() {
    const WRITERS: usize = 6;
    const PER_WRITER: u64 = 80;
    let (shared_store, url) = store();
    let shared_store = Arc::new(shared_store);
    let start = Barrier::new(WRITERS);
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (url, start, shared_store) = (&url, &start, shared_store.clone());
            s.spawn(move || {
                // Four stores of their own, two threads sharing one.
                let own = (w < 4).then(|| PostgresStore::connect(url).unwrap());
                let store: &dyn Store = match &own {
                    Some(own) => own,
                    None => shared_store.as_ref(),
                };
                start.wait();
                for n in 0..PER_WRITER {
                    store.append(None, "note", &json!({ "writer": w, "n": n })).unwrap();
                }
            });
        }
    });
    assert_eq!(intact(shared_store.as_ref()), WRITERS as u64 * PER_WRITER);
    let rows = shared_store.rows(1, 10_000).unwrap();
    let contents: Vec<Value> = rows.iter().map(|r| serde_json::from_str(&r.content).unwrap()).collect();
    for w in 0..WRITERS {
        let ns: Vec<u64> = contents.iter().filter(|c| c["writer"] == w).map(|c| c["n"].as_u64().unwrap()).collect();
        assert_eq!(ns, (0..PER_WRITER).collect::<Vec<_>>(), "writer {w}");
    }
    let switches = contents.windows(2).filter(|p| p[0]["writer"] != p[1]["writer"]).count();
    assert!(switches >= 20, "the writers took turns only {switches} times");
}

fn submit(store: &dyn Store, principal: &str) -> RunId {
    store
        .submit_run(&NewRun { principal, kind: RunKind::Plan, name: "plan.cord", text: "1 + 1", clearance: None })
        .unwrap()
}

/// Runs `id` to its card (sealed `seal`, due at `deadline_ms`); the request it runs as.
fn park(store: &dyn Store, seal: &str, deadline_ms: i64) -> (RunId, RequestId) {
    let id = submit(store, "alice");
    let claimed = store.claim_run("w1", 60_000).unwrap().unwrap();
    assert_eq!(claimed.run.id, id);
    let request = store.begin_request(&NewRequest { text: "plan.cord", principal: "alice", session: None }).unwrap();
    store.run_started(&claimed.lease, request).unwrap();
    let card = json!({ "tool": "send", "to": "bo@example.com" });
    let parking = Parking { request, saved: b"the saved run", card: &card, seal, deadline_ms };
    store.park_run(&claimed.lease, &parking).unwrap();
    (id, request)
}

fn answer<'a>(seal: &'a str, by: &'a str, answer: &'a str) -> NewAnswer<'a> {
    NewAnswer { seal, by, answer, mac: "mac" }
}

#[test]
fn workers_on_many_connections_each_take_a_run_once() {
    let (store, url) = store();
    let runs: Vec<RunId> = (0..24).map(|_| submit(&store, "alice")).collect();
    let start = Barrier::new(4);
    let mut taken: Vec<RunId> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|n| {
                let (url, start) = (&url, &start);
                s.spawn(move || {
                    let own = PostgresStore::connect(url).unwrap();
                    start.wait();
                    let mut taken = Vec::new();
                    while let Some(claimed) = own.claim_run(&format!("w{n}"), 60_000).unwrap() {
                        assert_eq!(claimed.lease.epoch, 1);
                        taken.push(claimed.run.id);
                    }
                    taken
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    taken.sort();
    assert_eq!(taken, runs, "every run taken, and by one worker");
    assert_eq!(intact(&store), 24);
}

#[test]
fn a_lease_that_runs_out_is_taken_over_and_lost_to_its_worker() {
    let (a, url) = store();
    let b = PostgresStore::connect(&url).unwrap();
    let id = submit(&a, "alice");
    // The first worker takes the run and stops answering: its lease runs out at once.
    let first = a.claim_run("dead", 0).unwrap().unwrap();
    assert!(!first.resumed_after_crash);
    std::thread::sleep(Duration::from_millis(5));
    let second = b.claim_run("w2", 60_000).unwrap().unwrap();
    assert_eq!((second.run.id, second.lease.epoch), (id, first.lease.epoch + 1));
    assert!(second.resumed_after_crash);
    // A lease still running is not taken.
    assert!(a.claim_run("w3", 60_000).unwrap().is_none());

    let lost = a.renew_lease(&first.lease, 60_000).unwrap_err();
    assert!(matches!(lost, StoreError::LeaseLost { run } if run == id));
    assert!(lost.to_string().contains("taken over"), "{lost}");
    let request = a.begin_request(&NewRequest { text: "plan.cord", principal: "alice", session: None }).unwrap();
    assert!(matches!(a.run_started(&first.lease, request), Err(StoreError::LeaseLost { .. })));
    let card = json!({});
    let parking = Parking { request, saved: b"s", card: &card, seal: "x", deadline_ms: i64::MAX };
    assert!(matches!(a.park_run(&first.lease, &parking), Err(StoreError::LeaseLost { .. })));
    let finished = a.finish_run(&first.lease, RunState::Done, None, &json!({}));
    assert!(matches!(finished, Err(StoreError::LeaseLost { .. })));

    b.renew_lease(&second.lease, 60_000).unwrap();
    b.run_started(&second.lease, request).unwrap();
    b.finish_run(&second.lease, RunState::Done, Some(request), &json!({ "value": 2 })).unwrap();
    let run = a.queued_run(id).unwrap().unwrap();
    assert_eq!((run.state, run.request, run.result), (RunState::Done, Some(request), Some(json!({ "value": 2 }))));
    assert!(
        matches!(b.renew_lease(&second.lease, 1), Err(StoreError::LeaseLost { .. })),
        "an ended run holds no lease"
    );
    assert_eq!(a.queued_runs(Some("alice"), 10).unwrap().len(), 1);
    assert!(a.queued_runs(Some("bob"), 10).unwrap().is_empty());
    intact(&a);
}

#[test]
fn an_answer_is_taken_once_with_its_row_in_the_chain() {
    let (store, url) = store();
    for round in 0..6 {
        let (id, request) = park(&store, "seal-1", now_ms() + 3_600_000);
        let run = store.queued_run(id).unwrap().unwrap();
        assert_eq!((run.state, run.seal.as_deref()), (RunState::Waiting, Some("seal-1")));
        assert_eq!(store.answer_run(id, &answer("seal-1", "bob", "yes")).unwrap(), Err(AnswerRefused::NotYours));
        assert_eq!(store.answer_run(id, &answer("seal-2", "alice", "yes")).unwrap(), Err(AnswerRefused::OtherCard));
        assert_eq!(store.answer_run(RunId(999), &answer("s", "alice", "yes")).unwrap(), Err(AnswerRefused::NoSuchRun));
        // Two servers, each with its own connection, take an answer at the same time.
        let start = Barrier::new(2);
        let taken: Vec<Result<(), AnswerRefused>> = std::thread::scope(|s| {
            let answers: Vec<_> = ["yes", "no"]
                .into_iter()
                .map(|given| {
                    let (url, start) = (&url, &start);
                    s.spawn(move || {
                        let own = PostgresStore::connect(url).unwrap();
                        start.wait();
                        own.answer_run(id, &answer("seal-1", "alice", given)).unwrap()
                    })
                })
                .collect();
            answers.into_iter().map(|a| a.join().unwrap()).collect()
        });
        assert_eq!(taken.iter().filter(|t| t.is_ok()).count(), 1, "round {round}: {taken:?}");
        assert!(taken.contains(&Err(AnswerRefused::NotWaiting)), "{taken:?}");
        let rows: Vec<_> = store.rows(1, 1000).unwrap().into_iter().filter(|r| r.kind == "answer").collect();
        assert_eq!(rows.len(), round + 1);
        let last = rows.last().unwrap();
        assert_eq!(last.request, Some(request));
        let content: Value = serde_json::from_str(&last.content).unwrap();
        assert_eq!((content["by"].as_str(), content["seal"].as_str()), (Some("alice"), Some("seal-1")));
        // The answered run goes on in a worker, from where it was saved.
        let claimed = store.claim_run("w2", 60_000).unwrap().unwrap();
        assert_eq!(claimed.run.id, id);
        assert_eq!(claimed.saved.as_deref(), Some(&b"the saved run"[..]));
        assert_eq!(claimed.run.answer.map(|a| (a.by, a.mac)), Some((Some("alice".into()), Some("mac".into()))));
        assert_eq!(claimed.effects_since_saved, 0);
        store.finish_run(&claimed.lease, RunState::Done, None, &json!({})).unwrap();
    }
    intact(&store);
}

#[test]
fn a_card_whose_deadline_passes_is_denied_by_no_one() {
    let (store, _) = store();
    let (id, request) = park(&store, "seal", now_ms() - 1);
    assert_eq!(store.answer_run(id, &answer("seal", "alice", "yes")).unwrap(), Err(AnswerRefused::TooLate));
    // An effect begun after the run was saved counts against going on.
    store.begin_effect(Some(request), &intent("send", 1)).map(drop).unwrap();
    let claimed = store.claim_run("w2", 60_000).unwrap().unwrap();
    let given = claimed.run.answer.unwrap();
    assert_eq!((given.answer.as_str(), given.by, given.mac), ("no", None, None));
    assert_eq!(claimed.effects_since_saved, 1);
    let row = store.rows(1, 1000).unwrap().into_iter().find(|r| r.kind == "answer").unwrap();
    let content: Value = serde_json::from_str(&row.content).unwrap();
    assert_eq!((content["by"].clone(), content["answer"].as_str()), (Value::Null, Some("no")));
    intact(&store);
}

#[test]
fn people_sign_in_by_token_and_keep_web_sessions() {
    let (store, _) = store();
    store.add_user("alice", &[1; 32]).unwrap();
    assert!(matches!(store.add_user("alice", &[2; 32]), Err(StoreError::UserExists(name)) if name == "alice"));
    assert_eq!(store.user_by_token(&[1; 32]).unwrap().as_deref(), Some("alice"));
    assert_eq!(store.user_by_token(&[2; 32]).unwrap(), None);
    let session = WebSession { user: "alice".into(), csrf: "c".into(), expires_ms: now_ms() + 60_000 };
    store.start_web_session(&[9; 32], &session).unwrap();
    assert_eq!(store.web_session(&[9; 32]).unwrap(), Some(session));
    store.end_web_session(&[9; 32]).unwrap();
    assert_eq!(store.web_session(&[9; 32]).unwrap(), None);
    let expired = WebSession { user: "alice".into(), csrf: "c".into(), expires_ms: now_ms() - 1 };
    store.start_web_session(&[8; 32], &expired).unwrap();
    assert_eq!(store.web_session(&[8; 32]).unwrap(), None);
    assert_eq!(kinds(&store), ["user"]);
}

/// The backend of `admin`'s database waiting for an advisory lock, once one is.
fn waiting_for_the_chain(admin: &mut postgres::Client) -> i32 {
    let sql = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    for _ in 0..1000 {
        if let Some(row) = admin.query_opt(sql, &[]).unwrap() {
            return row.get(0);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no connection came to wait for the chain's lock");
}

#[test]
fn a_connection_ended_mid_transaction_leaves_no_partial_row() {
    let (store, url) = store();
    store.append(None, "note", &json!(1)).unwrap();
    let mut admin = raw(&url);

    // A writer ended between its insert and its commit: its row is gone, and so is its hold on
    // the chain, so the next writer goes on.
    let mut writer = raw(&url);
    writer.batch_execute("BEGIN").unwrap();
    writer.execute("SELECT pg_advisory_xact_lock($1)", &[&CHAIN_LOCK]).unwrap();
    writer.batch_execute("INSERT INTO audit VALUES (2, 0, 'note', NULL, '\"half\"', '\\x00')").unwrap();
    let pid: i32 = writer.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    let next = std::thread::spawn({
        let url = url.clone();
        move || PostgresStore::connect(&url).unwrap().append(None, "note", &json!(2)).unwrap()
    });
    waiting_for_the_chain(&mut admin);
    assert!(admin.query_one("SELECT pg_terminate_backend($1, 5000)", &[&pid]).unwrap().get::<_, bool>(0));
    assert_eq!(next.join().unwrap().seq, 2);
    assert!(writer.batch_execute("COMMIT").is_err());
    assert_eq!(intact(&store), 2);

    // The store's own connection ended in the middle of taking an answer: it had marked the
    // run answered, and waits for the chain to append the answer's row.
    let (id, _) = park(&store, "seal", now_ms() + 3_600_000);
    let head = store.head().unwrap();
    admin.execute("SELECT pg_advisory_lock($1)", &[&CHAIN_LOCK]).unwrap();
    let answering = std::thread::spawn({
        let url = url.clone();
        move || {
            let own = PostgresStore::connect(&url).unwrap();
            let ended = own.answer_run(id, &answer("seal", "alice", "yes"));
            (own, ended)
        }
    });
    let pid = waiting_for_the_chain(&mut admin);
    let mut killer = raw(&url);
    assert!(killer.query_one("SELECT pg_terminate_backend($1, 5000)", &[&pid]).unwrap().get::<_, bool>(0));
    let (own, ended) = answering.join().unwrap();
    let e = ended.unwrap_err();
    assert!(matches!(e, StoreError::Postgres(_)), "{e:?}");
    admin.execute("SELECT pg_advisory_unlock($1)", &[&CHAIN_LOCK]).unwrap();
    let run = store.queued_run(id).unwrap().unwrap();
    assert_eq!((run.state, run.answer), (RunState::Waiting, None), "the answer was rolled back");
    assert_eq!(store.head().unwrap(), head);
    intact(&store);
    // The store connects again, and the answer is taken.
    assert_eq!(own.answer_run(id, &answer("seal", "alice", "yes")).unwrap(), Ok(()));
    assert_eq!(kinds(&store).iter().filter(|k| *k == "answer").count(), 1);
    intact(&store);
}

#[test]
fn a_server_restarted_between_two_operations_loses_nothing_committed() {
    let server = Server::start("restart");
    let url = server.database();
    let store = PostgresStore::connect(&url).unwrap();
    let id = request(&store, "triage");
    let effect = store.begin_effect(Some(id), &intent("comment", 1)).unwrap();
    store.end_effect(effect, &Outcome::Performed { result_size: 1 }).unwrap();
    store.append_transcript(id, &json!("prompt")).unwrap();
    let kept = store.add_grant(&grant("send", "*", Scope::UntilRevoked, None)).unwrap();
    let run = submit(&store, "alice");
    let lock = store.lock_session("work").unwrap();
    store.save_session(&lock, &json!("saved")).unwrap();
    let head = store.head().unwrap();
    let rows = intact(&store);

    // As a crash would: the server recovers what was committed from its write-ahead log. Row
    // numbers come from a sequence, which a crash may advance (PostgreSQL logs it ahead): the
    // next row is numbered past every one before, not always next.
    server.restart("immediate");
    let after = store.append(None, "note", &json!("after the restart")).unwrap();
    assert!(after.seq > head.seq, "the store connected again by itself");
    assert_eq!(store.rows(head.seq + 1, 10).unwrap().len(), 1);
    assert!(matches!(store.verify_against(&head).unwrap(), Verdict::Intact { .. }));
    assert_eq!(store.show(id).unwrap().entries.len(), 2);
    assert_eq!(store.transcript(id).unwrap(), [json!("prompt")]);
    assert_eq!(store.grants().unwrap(), [kept]);
    assert_eq!(store.queued_run(run).unwrap().unwrap().state, RunState::Queued);
    assert_eq!(store.load_session("work").unwrap(), Some(json!("saved")));
    // The session's connection ended with the server: so did its lock.
    assert!(matches!(store.save_session(&lock, &json!("late")), Err(StoreError::LockLost { .. })));
    let again = store.lock_session("work").unwrap();
    store.unlock_session(again).unwrap();

    // A server that is down: a clear error, and nothing lost; back up, the store goes on.
    server.restart("fast");
    server.stop();
    let e = store.append(None, "note", &json!("while down")).unwrap_err();
    assert!(e.to_string().starts_with("cannot use the store at PostgreSQL database"), "{e}");
    server.resume();
    assert!(store.append(None, "note", &json!("back")).unwrap().seq > after.seq);
    let notes: Vec<String> = store.rows(head.seq + 1, 10).unwrap().into_iter().map(|r| r.content).collect();
    assert_eq!(notes, [r#""after the restart""#, r#""back""#]);
    assert_eq!(intact(&store), rows + 2);
    server.stop();
}
