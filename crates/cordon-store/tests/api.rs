//! The store's operations, one area per test: sessions, grants, requests and transcripts, what
//! `show` reports, retention (`gc`) and archiving.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{Scratch, intent, raw};
use cordon_store::{
    ArchiveReport, Batch, BatchRow, Checkpoint, EffectIntent, EffectStatus, GrantId, GrantQuery, Lines, NewGrant,
    NewRequest, Outcome, Problem, RequestId, Scope, SqliteStore, StageDecision, Status, Store, StoreError, Verdict,
    verify_archive,
};
use serde_json::{Value, json};

fn request(store: &dyn Store, text: &str) -> RequestId {
    store.begin_request(&NewRequest { text, principal: "ann", session: Some("work") }).unwrap()
}

#[test]
fn sessions_are_saved_and_loaded() {
    let scratch = Scratch::new();
    let store = scratch.open();
    assert_eq!(store.load_session("work").unwrap(), None);
    let lock = store.lock_session("work").unwrap();
    assert_eq!(lock.session(), "work");
    // A new session has no state until saved.
    assert_eq!(store.load_session("work").unwrap(), None);
    let state = json!({ "measures": { "tainted": true } });
    store.save_session(&lock, &state).unwrap();
    let listed = store.sessions().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].held_by.map(|h| h.pid), Some(std::process::id()));
    store.unlock_session(lock).unwrap();
    assert_eq!(store.sessions().unwrap()[0].held_by, None);
    assert_eq!(scratch.open().load_session("work").unwrap(), Some(state));
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

#[test]
fn grants_cover_what_they_name_until_revoked_or_expired() {
    let scratch = Scratch::new();
    let store = scratch.open();
    let mail = store.add_grant(&grant("send", "*@example.com", Scope::UntilRevoked, None)).unwrap();
    let session = store.add_grant(&grant("post", "#general", Scope::Session("work".into()), None)).unwrap();
    let expired = store.add_grant(&grant("fetch", "*", Scope::UntilRevoked, Some(1))).unwrap();

    let find = |tool: &str, destination: &str, label_class: &str, session: Option<&str>| {
        let query = GrantQuery { tool, destination, label_class, session, instance: None, principal: "alice" };
        store.find_grant(&query).unwrap().map(|g| g.id)
    };
    assert_eq!(find("send", "bo@example.com", "public", None), Some(mail.id));
    assert_eq!(find("send", "bo@example.com.evil", "public", None), None);
    assert_eq!(find("send", "bo@example.com", "secret", None), None);
    assert_eq!(find("post", "#general", "public", Some("work")), Some(session.id));
    assert_eq!(find("post", "#general", "public", Some("play")), None);
    assert_eq!(find("post", "#general", "public", None), None);
    assert_eq!(find("fetch", "https://x", "public", None), None);

    let live: Vec<GrantId> = store.grants().unwrap().iter().map(|g| g.id).collect();
    assert_eq!(live, [mail.id, session.id]);
    assert_eq!(store.grants().unwrap()[0], mail);

    store.revoke_grant(mail.id).unwrap();
    assert_eq!(find("send", "bo@example.com", "public", None), None);
    assert!(matches!(store.revoke_grant(mail.id), Err(StoreError::NoSuchGrant(id)) if id == mail.id));
    assert!(store.revoke_grant(expired.id).is_ok(), "an expired grant can still be revoked");

    // Granting, expiring (once a lookup found the grant past its expiry) and revoking are in
    // the audit log.
    let kinds: Vec<String> = store.rows(1, 100).unwrap().into_iter().map(|r| r.kind).collect();
    assert_eq!(kinds, ["grant", "grant", "grant", "expire", "revoke", "revoke"]);
    assert!(matches!(store.verify().unwrap(), cordon_store::Verdict::Intact { .. }));
}

#[test]
fn requests_keep_their_transcripts_and_status() {
    let scratch = Scratch::new();
    let store = scratch.open();
    let first = request(&store, "triage");
    let second = request(&store, "reply");
    assert_eq!(store.append_transcript(first, &json!({ "prompt": "p" })).unwrap(), 1);
    assert_eq!(store.append_transcript(first, &json!({ "reply": "r" })).unwrap(), 2);
    assert_eq!(store.transcript(first).unwrap(), [json!({ "prompt": "p" }), json!({ "reply": "r" })]);
    assert_eq!(store.transcript(second).unwrap(), Vec::<Value>::new());
    // Several at once, numbered on.
    assert_eq!(store.append_transcript_batch(first, &[json!(3), json!(4)]).unwrap(), 4);
    assert_eq!(store.append_transcript_batch(first, &[]).unwrap(), 4);
    assert_eq!(store.transcript(first).unwrap()[2..], [json!(3), json!(4)]);
    assert_eq!(store.append_transcript_batch(second, &[json!(1)]).unwrap(), 1);
    store.set_status(first, Status::Done).unwrap();

    let listed = store.requests(10).unwrap();
    assert_eq!(listed.iter().map(|r| r.id).collect::<Vec<_>>(), [second, first]);
    assert_eq!((listed[1].status, listed[1].session.as_deref()), (Some(Status::Done), Some("work")));
    assert_eq!(store.requests(1).unwrap().len(), 1);

    let missing = RequestId(99);
    assert!(matches!(store.append_transcript(missing, &json!(1)), Err(StoreError::NoSuchRequest(_))));
    assert!(matches!(store.set_status(missing, Status::Done), Err(StoreError::NoSuchRequest(_))));
    assert!(matches!(store.show(missing), Err(StoreError::NoSuchRequest(_))));
    assert!(matches!(store.append(Some(missing), "hole", &json!(1)), Err(StoreError::NoSuchRequest(_))));
    // An effect's batch, with lines or without, is refused whole for a request that is none.
    let rows = store.rows(1, 100).unwrap().len();
    let lines = Batch { transcript: Lines::of(&[json!({ "event": "effect_returned" })]).unwrap(), ..Batch::default() };
    for batch in [Batch::default(), lines] {
        let refused = store.record(missing, &batch, Some(&intent("comment", 1)));
        assert!(matches!(refused, Err(StoreError::NoSuchRequest(_))), "{refused:?}");
    }
    assert_eq!(store.rows(1, 100).unwrap().len(), rows);
}

#[test]
fn show_tells_each_effects_outcome_and_unknown_ones_as_unknown() {
    let scratch = Scratch::new();
    let store = scratch.open();
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

    // As JSON, for `cordon audit show --format json`.
    let json = serde_json::to_value(&log).unwrap();
    assert_eq!(json["request"]["status"], "failed");
    assert_eq!(json["entries"][4]["outcome"], json!({ "status": "unknown" }));
    assert_eq!(json["entries"][2]["outcome"], json!({ "status": "performed", "seq": 7, "result_size": 512 }));
    assert!(json["entries"][0].get("outcome").is_none());

    let unknown: Vec<u64> = store.unknown_outcomes().unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(unknown, [crashed_seq]);
}

#[test]
fn an_effect_keeps_what_each_stage_decided() {
    let store = Scratch::new().open();
    let held = StageDecision { stage: "gate".into(), verdict: "hold".into(), needs: Some("approval".into()) };
    let approved = StageDecision { stage: "gate".into(), verdict: "proceed".into(), needs: None };
    let staged = EffectIntent { stages: vec![held, approved], ..intent("comment", 1) };
    let effect = store.begin_effect(None, &staged).unwrap();
    let row = store.rows(effect.seq(), 1).unwrap().remove(0);
    let stored: EffectIntent = serde_json::from_str(&row.content).unwrap();
    assert_eq!(stored, staged);
    assert!(
        row.content.contains(r#""stages":[{"stage":"gate","verdict":"hold","needs":"approval"},"#),
        "{}",
        row.content
    );
    // No stage before the audit: the row is as it was before stages were recorded.
    let plain = store.begin_effect(None, &intent("comment", 2)).unwrap();
    assert!(!store.rows(plain.seq(), 1).unwrap()[0].content.contains("stages"));
    store.end_effect(effect, &Outcome::Performed { result_size: 1 }).unwrap();
    store.end_effect(plain, &Outcome::Performed { result_size: 1 }).unwrap();
}

#[test]
fn a_store_in_memory_is_a_store() {
    let store = SqliteStore::open_in_memory().unwrap();
    let id = request(&store, "triage");
    let effect = store.begin_effect(Some(id), &intent("comment", 1)).unwrap();
    store.end_effect(effect, &Outcome::Performed { result_size: 2 }).unwrap();
    assert!(matches!(store.verify().unwrap(), Verdict::Intact { rows: 3, .. }));
    assert_eq!(store.path(), std::path::Path::new(":memory:"));
}

#[test]
fn reserved_kinds_are_written_only_by_their_methods() {
    let store = Scratch::new().open();
    for kind in ["effect", "outcome", "request", "status", "grant", "revoke", "expire", "archive"] {
        assert!(matches!(store.append(None, kind, &json!(1)), Err(StoreError::ReservedKind(_))), "{kind}");
    }
    assert_eq!(store.head().unwrap(), Checkpoint::START);
}

#[test]
fn gc_removes_old_transcripts_and_no_audit_row() {
    let scratch = Scratch::new();
    let store = scratch.open();
    let (old, new) = (request(&store, "old"), request(&store, "new"));
    for id in [old, new] {
        store.append_transcript(id, &json!("prompt")).unwrap();
        store.append_transcript(id, &json!("reply")).unwrap();
    }
    let forty_days = 40 * 24 * 3600 * 1000;
    raw(&scratch.db())
        .execute("UPDATE requests SET started_ms = started_ms - ?1 WHERE id = ?2", [forty_days, old.0])
        .unwrap();
    let head = store.head().unwrap();

    let report = store.gc(Duration::from_secs(30 * 24 * 3600)).unwrap();
    assert_eq!((report.requests, report.events), (1, 2));
    assert!(store.transcript(old).unwrap().is_empty());
    assert_eq!(store.transcript(new).unwrap().len(), 2);
    assert_eq!(store.head().unwrap(), head);
    assert!(matches!(store.verify_against(&head).unwrap(), Verdict::Intact { .. }));
    // The request itself stays, for `show`.
    assert_eq!(store.show(old).unwrap().entries.len(), 1);
    assert_eq!(store.gc(Duration::from_secs(30 * 24 * 3600)).unwrap().events, 0);
}

#[test]
fn archived_rows_leave_only_into_a_file_that_verifies() {
    let scratch = Scratch::new();
    let store = scratch.open();
    store.append_many(None, "note", (1..=20).map(|n| json!(n))).unwrap();
    let at_5 = store.rows(5, 1).unwrap()[0].clone();
    let at_10 = store.rows(10, 1).unwrap()[0].clone();
    let head = store.head().unwrap();

    let first = scratch.path("audit-1.jsonl");
    let archived = store.archive(&first, 10).unwrap();
    assert_eq!((archived.rows, archived.through), (10, Checkpoint { seq: 10, hash: at_10.hash }));
    let report = verify_archive(&first).unwrap();
    let through = archived.through;
    assert_eq!(
        report,
        ArchiveReport { after: Checkpoint::START, verdict: Verdict::Intact { rows: 10, head: through } }
    );

    // The store now starts after row 10, and its chain still verifies, up to the old head and on.
    assert_eq!(store.rows(1, 1).unwrap()[0].seq, 11);
    assert!(matches!(store.verify_against(&head).unwrap(), Verdict::Intact { rows: 11, .. }));
    assert!(matches!(store.verify_against(&through).unwrap(), Verdict::Intact { .. }));
    let old = Checkpoint { seq: 5, hash: at_5.hash };
    assert_eq!(
        store.verify_against(&old).unwrap(),
        Verdict::Broken(cordon_store::BadRow { seq: 5, problem: Problem::Archived { through: 10 } })
    );

    // A second archive follows the first.
    let second = scratch.path("audit-2.jsonl");
    store.archive(&second, 15).unwrap();
    assert_eq!(verify_archive(&second).unwrap().after, through);

    // Nothing to archive, or past the head: refused, nothing written.
    let nowhere = scratch.path("nothing.jsonl");
    assert!(matches!(store.archive(&nowhere, 12), Err(StoreError::NothingToArchive { .. })));
    assert!(matches!(store.archive(&nowhere, 99), Err(StoreError::NothingToArchive { .. })));
    assert!(!nowhere.exists());
    // An existing file is never overwritten.
    assert!(matches!(store.archive(&first, 18), Err(StoreError::Io { .. })));
    assert_eq!(store.rows(1, 1).unwrap()[0].seq, 16);
}

#[test]
fn a_broken_chain_is_not_archived() {
    let scratch = Scratch::new();
    let store = scratch.open();
    store.append_many(None, "note", (1..=10).map(|n| json!(n))).unwrap();
    raw(&scratch.db()).execute("UPDATE audit SET content = '0' WHERE seq = 4", []).unwrap();
    let path = scratch.path("audit.jsonl");
    let e = store.archive(&path, 8).unwrap_err();
    assert!(matches!(&e, StoreError::ChainBroken(bad) if bad.seq == 4), "{e:?}");
    assert!(!path.exists());
    assert_eq!(store.rows(1, 100).unwrap().len(), 10);
}

#[test]
fn an_edited_archive_does_not_verify() {
    let scratch = Scratch::new();
    let store = scratch.open();
    store.append_many(None, "note", (1..=10).map(|n| json!(n))).unwrap();
    let path = scratch.path("audit.jsonl");
    store.archive(&path, 10).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let broken = |text: String| {
        std::fs::write(&path, text).unwrap();
        verify_archive(&path).unwrap().verdict
    };
    let edited = text.replacen(r#""content":"3""#, r#""content":"33""#, 1);
    assert_eq!(broken(edited), Verdict::Broken(cordon_store::BadRow { seq: 3, problem: Problem::HashMismatch }));
    let lines: Vec<&str> = text.lines().collect();
    let without_4: String = lines.iter().enumerate().filter(|(i, _)| *i != 4).map(|(_, l)| format!("{l}\n")).collect();
    assert_eq!(
        broken(without_4),
        Verdict::Broken(cordon_store::BadRow { seq: 4, problem: Problem::Missing { next: 5 } })
    );
    let garbled = text.replacen(r#""seq":6"#, r#""seq":"six""#, 1);
    assert_eq!(
        broken(garbled),
        Verdict::Broken(cordon_store::BadRow { seq: 6, problem: Problem::Malformed { column: "line" } })
    );
    std::fs::write(&path, "not json\n").unwrap();
    assert!(matches!(verify_archive(&path), Err(StoreError::NotAnArchive { .. })));
}

#[test]
fn an_archive_with_a_hostile_header_is_checked_without_overflow() {
    let scratch = Scratch::new();
    let path = scratch.path("audit.jsonl");
    let header = json!({ "format": "cordon-audit-archive", "version": 1, "after": { "seq": u64::MAX, "hash": "00".repeat(32) } });
    let row = json!({ "seq": u64::MAX, "at_ms": 0, "kind": "note", "request": null, "content": "1", "hash": "00".repeat(32) });
    std::fs::write(&path, format!("{header}\n{row}\n")).unwrap();
    assert!(matches!(verify_archive(&path).unwrap().verdict, Verdict::Broken(_)));
}

/// What a request did since its last commit goes in with its next effect's row, in one
/// transaction: all of it or none. A batch that names a reserved kind, or another request's
/// effect, is refused whole.
#[test]
fn a_batch_is_recorded_whole_with_its_effect_or_not_at_all() {
    let scratch = Scratch::new();
    let store = scratch.open();
    let id = request(&store, "triage");
    let other = request(&store, "elsewhere");
    let first = store.record(id, &Batch::default(), Some(&intent("list_issues", 1))).unwrap().unwrap();
    let batch = Batch {
        transcript: Lines::of(&[json!({ "event": "effect_returned" }), json!({ "event": "stage_decided" })]).unwrap(),
        rows: vec![
            BatchRow::Outcome { effect: first, outcome: Outcome::Performed { result_size: 12 } },
            BatchRow::Row { kind: "decision", content: json!({ "stage": "gate", "outcome": "approved" }) },
        ],
    };
    let second = store.record(id, &batch, Some(&intent("comment", 2))).unwrap().unwrap();
    let kinds: Vec<String> = store.rows(1, 100).unwrap().into_iter().map(|r| r.kind).collect();
    assert_eq!(kinds, ["request", "request", "effect", "outcome", "decision", "effect"]);
    assert_eq!(second.seq(), 6);
    assert_eq!(store.transcript(id).unwrap().len(), 2);

    let reserved = Batch { rows: vec![BatchRow::Row { kind: "grant", content: json!({}) }], ..Batch::default() };
    assert!(matches!(store.record(id, &reserved, None), Err(StoreError::ReservedKind(_))));
    let theirs = store.begin_effect(Some(other), &intent("comment", 4)).unwrap();
    let outcome = Outcome::Failed { error: "none".into() };
    let foreign = Batch { rows: vec![BatchRow::Outcome { effect: theirs, outcome }], ..Batch::default() };
    assert!(store.record(id, &foreign, None).is_err());
    assert_eq!(store.rows(1, 100).unwrap().len(), 7);

    // The disk fills up as the next effect's row is written: nothing of its batch is either.
    raw(&scratch.db())
        .execute_batch(
            "CREATE TRIGGER full BEFORE INSERT ON audit WHEN NEW.kind = 'effect' \
             BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
        )
        .unwrap();
    let batch = Batch {
        transcript: Lines::of(&[json!({ "event": "effect_returned" })]).unwrap(),
        rows: vec![BatchRow::Outcome { effect: second, outcome: Outcome::Performed { result_size: 3 } }],
    };
    let error = store.record(id, &batch, Some(&intent("comment", 3))).unwrap_err();
    assert!(error.to_string().contains("database or disk is full"), "{error}");
    assert_eq!(store.rows(1, 100).unwrap().len(), 7);
    assert_eq!(store.transcript(id).unwrap().len(), 2);

    assert!(matches!(store.verify().unwrap(), Verdict::Intact { rows: 7, .. }));
}
