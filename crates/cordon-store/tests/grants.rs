//! A grant counts only as the audit chain holds it. Hostile edits of the `grants` and `audit`
//! tables with raw SQL (a grant written by hand, widened, revived, pointed at another row; a
//! row of the log changed, removed or added) never make the store honour a grant it did not
//! make, and `verify` reports every one that changes what the store would honour.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::cell::Cell;
use std::sync::OnceLock;

use common::{Scratch, raw};
use cordon_store::{Grant, GrantQuery, NewGrant, Problem, Scope, Store, Verdict};
use proptest::prelude::*;
use proptest::test_runner::{RngSeed, TestCaseError, TestRunner};
use rusqlite::types::Value as Sql;
use serde_json::json;

/// The seed of every case generated here: the same cases on every run.
const SEED: u64 = 0x636f_7264_6f6e;

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

/// A store with four grants (one revoked, one for a session, one that expires in the far
/// future) among other rows of the log.
fn fixture() -> Scratch {
    let scratch = Scratch::new();
    let store = scratch.open();
    store.append(None, "note", &json!("first")).unwrap();
    store.add_grant(&grant("send", "a@example.com", Scope::UntilRevoked, None)).unwrap();
    let revoked = store.add_grant(&grant("send", "*", Scope::UntilRevoked, None)).unwrap();
    store.append(None, "note", &json!("between")).unwrap();
    store.add_grant(&grant("post", "#general", Scope::Session("work".into()), None)).unwrap();
    store.add_grant(&grant("fetch", "https://x/*", Scope::UntilRevoked, Some(i64::MAX))).unwrap();
    store.revoke_grant(revoked.id).unwrap();
    store.append(None, "note", &json!("last")).unwrap();
    assert!(matches!(store.verify().unwrap(), Verdict::Intact { .. }));
    scratch
}

/// The fixture's file, made once.
fn fixture_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let scratch = fixture();
        // Fold the write-ahead log into the file, so the file alone is the store.
        raw(&scratch.db()).execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        std::fs::read(scratch.db()).unwrap()
    })
}

fn fresh() -> Scratch {
    let scratch = Scratch::new();
    std::fs::write(scratch.db(), fixture_bytes()).unwrap();
    scratch
}

/// What the store honours: its live grants, and what a query for each original grant finds.
fn honoured(store: &impl Store) -> Vec<Grant> {
    let mut all = store.grants().unwrap();
    for (tool, destination, session) in
        [("send", "a@example.com", None), ("send", "b@example.com", None), ("post", "#general", Some("work"))]
    {
        let query =
            GrantQuery { tool, destination, label_class: "public", session, instance: None, principal: "alice" };
        all.extend(store.find_grant(&query).unwrap());
    }
    all.sort_by_key(|g| g.id);
    all.dedup();
    all
}

/// Applies `sql` to a fresh fixture: what the store honours then, and what `verify` says.
fn after(sql: &str) -> (Vec<Grant>, Verdict) {
    let scratch = fresh();
    raw(&scratch.db()).execute_batch(sql).unwrap();
    let store = scratch.open();
    (honoured(&store), store.verify().unwrap())
}

fn grant_problem(verdict: &Verdict) -> Option<(i64, &'static str)> {
    match verdict {
        Verdict::Broken(bad) => match bad.problem {
            Problem::Grant { grant, reason } => Some((grant, reason)),
            _ => None,
        },
        Verdict::Intact { .. } => None,
    }
}

#[test]
fn a_grant_written_by_hand_is_not_honoured_and_verify_names_it() {
    let before = honoured(&fresh().open());
    let (now, verdict) = after(
        "INSERT INTO grants (tool, destination, label_class, session, expires_ms, created_ms) \
         VALUES ('send', '*', 'public', NULL, NULL, 1)",
    );
    assert_eq!(now, before);
    assert_eq!(grant_problem(&verdict), Some((5, "it has no row in the audit log")), "{verdict:?}");
    // Pointing it at a real grant row does not help: that row records another grant.
    let (now, verdict) = after(
        "INSERT INTO grants (tool, destination, label_class, session, expires_ms, created_ms, audit_seq) \
         VALUES ('send', '*', 'public', NULL, NULL, 1, 2)",
    );
    assert_eq!(now, before);
    assert_eq!(grant_problem(&verdict), Some((5, "its row in the audit log records another grant")));
}

#[test]
fn a_widened_or_revived_grant_is_not_honoured_and_verify_names_it() {
    let before = honoured(&fresh().open());
    assert_eq!(before.len(), 3, "{before:?}");
    let (now, verdict) = after("UPDATE grants SET destination = '*' WHERE id = 1");
    assert!(now.iter().all(|g| g.id.0 != 1), "{now:?}");
    assert_eq!(grant_problem(&verdict), Some((1, "its row in the audit log records another grant")));
    let (now, verdict) = after("UPDATE grants SET revoked_ms = NULL WHERE id = 2");
    assert_eq!(now, before, "the log revoked it");
    assert_eq!(grant_problem(&verdict), Some((2, "the audit log revoked it")));
    let (now, verdict) = after("DELETE FROM grants WHERE id = 1");
    assert!(now.iter().all(|g| g.id.0 != 1));
    assert_eq!(grant_problem(&verdict), Some((1, "the audit log granted it, and it is gone")));
}

#[test]
fn archiving_carries_live_grants_over() {
    let scratch = fresh();
    let store = scratch.open();
    let before = honoured(&store);
    let head = store.head().unwrap().seq;
    store.archive(&scratch.path("archive.jsonl"), head).unwrap();
    assert_eq!(honoured(&store), before);
    assert!(matches!(store.verify().unwrap(), Verdict::Intact { .. }), "{:?}", store.verify());
}

/// The columns a hostile edit may change, by table.
const GRANT_COLUMNS: [&str; 9] =
    ["id", "tool", "destination", "label_class", "session", "expires_ms", "created_ms", "revoked_ms", "audit_seq"];
const AUDIT_COLUMNS: [&str; 6] = ["seq", "at_ms", "kind", "request", "content", "hash"];

/// One hostile edit of the file.
#[derive(Clone, Debug)]
enum Edit {
    SetGrant { id: i64, column: usize, value: Sql },
    SetAudit { seq: i64, column: usize, value: Sql },
    DeleteGrant { id: i64 },
    DeleteAudit { seq: i64 },
    InsertGrant { destination: String, audit_seq: Option<i64> },
    InsertAudit { kind: &'static str, content: String },
}

fn value() -> BoxedStrategy<Sql> {
    prop_oneof![
        Just(Sql::Null),
        (-2i64..14).prop_map(Sql::Integer),
        Just(Sql::Integer(i64::MAX)),
        prop::sample::select(vec!["*", "send", "public", "work", "grant", "revoke", r#"{"grant":2}"#])
            .prop_map(|s| Sql::Text(s.into())),
        proptest::collection::vec(any::<u8>(), 32).prop_map(Sql::Blob),
    ]
    .boxed()
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (1i64..5, 0..GRANT_COLUMNS.len(), value()).prop_map(|(id, column, value)| Edit::SetGrant { id, column, value }),
        3 => (1i64..12, 0..AUDIT_COLUMNS.len(), value()).prop_map(|(seq, column, value)| Edit::SetAudit { seq, column, value }),
        1 => (1i64..5).prop_map(|id| Edit::DeleteGrant { id }),
        1 => (1i64..12).prop_map(|seq| Edit::DeleteAudit { seq }),
        1 => (prop::sample::select(vec!["*", "a@example.com"]), prop::option::of(1i64..12))
            .prop_map(|(d, audit_seq)| Edit::InsertGrant { destination: d.into(), audit_seq }),
        1 => prop::sample::select(vec!["grant", "revoke"]).prop_map(|kind| Edit::InsertAudit {
            kind,
            content: if kind == "grant" { r#"{"id":2,"tool":"send","destination":"*","label_class":"public","scope":"until-revoked","expires_ms":null,"created_ms":1}"#.into() } else { r#"{"grant":1}"#.into() },
        }),
    ]
}

/// Applies `edit`; whether the table took it and changed something.
fn apply(conn: &rusqlite::Connection, edit: &Edit) -> bool {
    let done = match edit {
        Edit::SetGrant { id, column, value } => {
            let name = GRANT_COLUMNS[*column];
            let sql = format!("UPDATE grants SET {name} = ?1 WHERE id = ?2 AND {name} IS NOT ?1");
            conn.execute(&sql, rusqlite::params![value, id])
        }
        Edit::SetAudit { seq, column, value } => {
            let name = AUDIT_COLUMNS[*column];
            let sql = format!("UPDATE audit SET {name} = ?1 WHERE seq = ?2 AND {name} IS NOT ?1");
            conn.execute(&sql, rusqlite::params![value, seq])
        }
        Edit::DeleteGrant { id } => conn.execute("DELETE FROM grants WHERE id = ?1", [id]),
        Edit::DeleteAudit { seq } => conn.execute("DELETE FROM audit WHERE seq = ?1", [seq]),
        Edit::InsertGrant { destination, audit_seq } => conn.execute(
            "INSERT INTO grants (tool, destination, label_class, session, expires_ms, created_ms, audit_seq) \
             VALUES ('send', ?1, 'public', NULL, NULL, 1, ?2)",
            rusqlite::params![destination, audit_seq],
        ),
        Edit::InsertAudit { kind, content } => conn.execute(
            "INSERT INTO audit (seq, at_ms, kind, request, content, hash) \
             VALUES ((SELECT max(seq) + 1 FROM audit), 1, ?1, NULL, ?2, zeroblob(32))",
            rusqlite::params![kind, content],
        ),
    };
    matches!(done, Ok(1))
}

#[test]
fn no_edit_of_the_grants_or_the_log_makes_a_grant_the_store_did_not_make() {
    let before = honoured(&fresh().open());
    let config = ProptestConfig {
        cases: 256,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(SEED),
        ..ProptestConfig::default()
    };
    let took = Cell::new(0u32);
    let result = TestRunner::new(config).run(&edit(), |edit| {
        let scratch = fresh();
        if !apply(&raw(&scratch.db()), &edit) {
            return Ok(());
        }
        took.set(took.get() + 1);
        let store = scratch.open();
        let now = honoured(&store);
        // Whatever the edit, only grants the store made, unchanged, are honoured.
        for g in &now {
            if !before.contains(g) {
                return Err(TestCaseError::fail(format!("{edit:?} made the store honour {g:?}")));
            }
        }
        // And an edit that changed what is honoured is reported.
        if now != before && matches!(store.verify().unwrap(), Verdict::Intact { .. }) {
            return Err(TestCaseError::fail(format!("{edit:?} changed the grants honoured unreported: {now:?}")));
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    println!("{} of 256 edits took", took.get());
    assert!(took.get() >= 128, "only {} of 256 edits took", took.get());
}
