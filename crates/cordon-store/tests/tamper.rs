//! Hostile edits of the database with raw SQL: each is caught, and the first bad row named.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::OnceLock;

use common::{Scratch, intent, raw};
use cordon_store::chain::{Fields, row_hash};
use cordon_store::{BadRow, Checkpoint, NewRequest, Outcome, Problem, RowHash, Store, Verdict};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rusqlite::types::Value as Sql;
use serde_json::json;

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

/// Rows in the fixture log.
const ROWS: u64 = 13;

/// A store whose log has `ROWS` rows: a request, a hole, effects with outcomes, a status.
fn fixture() -> Scratch {
    let scratch = Scratch::new();
    let store = scratch.open();
    let req = store.begin_request(&NewRequest { text: "triage", principal: "ann", session: None }).unwrap();
    store.append(Some(req), "hole", &json!({ "fill": "list_issues()" })).unwrap();
    for n in 0..4 {
        let effect = store.begin_effect(Some(req), &intent("comment", n)).unwrap();
        store.end_effect(effect, &Outcome::Performed { result_size: n }).unwrap();
    }
    store.append(None, "note", &json!("between requests")).unwrap();
    store.set_status(req, cordon_store::Status::Done).unwrap();
    store.append(None, "note", &json!("last")).unwrap();
    assert_eq!(store.head().unwrap().seq, ROWS);
    assert!(matches!(store.verify().unwrap(), Verdict::Intact { rows: ROWS, .. }));
    scratch
}

/// Applies `sql` to a fresh fixture and returns what `verify` says.
fn verdict_after(sql: &str) -> Verdict {
    let scratch = fixture();
    raw(&scratch.db()).execute_batch(sql).unwrap();
    scratch.open().verify().unwrap()
}

fn broken(seq: u64, problem: Problem) -> Verdict {
    Verdict::Broken(BadRow { seq, problem })
}

#[test]
fn a_changed_content_is_caught_at_its_row() {
    let v = verdict_after(r#"UPDATE audit SET content = '{"n":99}' WHERE seq = 5"#);
    assert_eq!(v, broken(5, Problem::HashMismatch));
}

#[test]
fn every_column_is_covered() {
    assert_eq!(verdict_after("UPDATE audit SET at_ms = at_ms + 1 WHERE seq = 4"), broken(4, Problem::HashMismatch));
    assert_eq!(verdict_after("UPDATE audit SET kind = 'note' WHERE seq = 4"), broken(4, Problem::HashMismatch));
    assert_eq!(verdict_after("UPDATE audit SET request = NULL WHERE seq = 4"), broken(4, Problem::HashMismatch));
    assert_eq!(
        verdict_after("UPDATE audit SET hash = x'00' WHERE seq = 4"),
        broken(4, Problem::Malformed { column: "hash" })
    );
}

#[test]
fn a_deleted_row_is_named() {
    assert_eq!(verdict_after("DELETE FROM audit WHERE seq = 5"), broken(5, Problem::Missing { next: 6 }));
    assert_eq!(verdict_after("DELETE FROM audit WHERE seq = 1"), broken(1, Problem::Missing { next: 2 }));
    assert_eq!(verdict_after("DELETE FROM audit WHERE seq IN (5, 6, 7)"), broken(5, Problem::Missing { next: 8 }));
}

#[test]
fn an_inserted_row_is_caught() {
    // Renumber rows 5.. up by one, and put a row in the gap.
    let shift = "UPDATE audit SET seq = -seq - 1 WHERE seq >= 5; UPDATE audit SET seq = -seq WHERE seq < 0;";
    let forged = format!("{shift} INSERT INTO audit VALUES (5, 0, 'note', NULL, '\"forged\"', zeroblob(32));");
    assert_eq!(verdict_after(&forged), broken(5, Problem::HashMismatch));

    // An attacker who chains the inserted row correctly only moves the break to the row after,
    // whose number and predecessor changed.
    let scratch = fixture();
    let conn = raw(&scratch.db());
    conn.execute_batch(shift).unwrap();
    let prev: Vec<u8> = conn.query_row("SELECT hash FROM audit WHERE seq = 4", [], |r| r.get(0)).unwrap();
    let fields = Fields { at_ms: 0, kind: "note", request: None, content: "\"forged\"" };
    let hash = row_hash(&RowHash(prev.try_into().unwrap()), 5, &fields);
    conn.execute("INSERT INTO audit VALUES (5, 0, 'note', NULL, '\"forged\"', ?1)", [&hash.0[..]]).unwrap();
    assert_eq!(scratch.open().verify().unwrap(), broken(6, Problem::HashMismatch));

    // A row numbered before the first.
    let before = "INSERT INTO audit VALUES (0, 0, 'note', NULL, '1', zeroblob(32))";
    assert_eq!(verdict_after(before), broken(1, Problem::Unexpected { found: 0 }));
    // A row past a gap at the end.
    let after = format!("INSERT INTO audit VALUES ({}, 0, 'note', NULL, '1', zeroblob(32))", ROWS + 2);
    assert_eq!(verdict_after(&after), broken(ROWS + 1, Problem::Missing { next: ROWS as i64 + 2 }));
}

#[test]
fn swapped_rows_are_caught_at_the_first() {
    let swap = "UPDATE audit SET seq = -3 WHERE seq = 3; UPDATE audit SET seq = 3 WHERE seq = 7; \
                UPDATE audit SET seq = 7 WHERE seq = -3;";
    assert_eq!(verdict_after(swap), broken(3, Problem::HashMismatch));
    // Neighbours too.
    let swap = "UPDATE audit SET seq = -8 WHERE seq = 8; UPDATE audit SET seq = 8 WHERE seq = 9; \
                UPDATE audit SET seq = 9 WHERE seq = -8;";
    assert_eq!(verdict_after(swap), broken(8, Problem::HashMismatch));
}

#[test]
fn a_truncated_tail_is_caught_by_a_checkpoint() {
    let scratch = fixture();
    let checkpoint = scratch.open().head().unwrap();
    raw(&scratch.db()).execute("DELETE FROM audit WHERE seq > 9", []).unwrap();
    let store = scratch.open();
    // What is left is a valid, shorter chain: only the checkpoint knows better.
    assert!(matches!(store.verify().unwrap(), Verdict::Intact { rows: 9, .. }));
    let v = store.verify_against(&checkpoint).unwrap();
    assert_eq!(v, broken(10, Problem::Truncated { head: 9, checkpoint: ROWS }));
    // An earlier checkpoint still holds.
    let early = Checkpoint { seq: 9, hash: store.head().unwrap().hash };
    assert!(matches!(store.verify_against(&early).unwrap(), Verdict::Intact { .. }));
}

#[test]
fn a_rewritten_tail_is_caught_by_a_checkpoint() {
    let scratch = fixture();
    let checkpoint = scratch.open().head().unwrap();
    // Delete from row 6 on, and write new rows there with valid hashes.
    raw(&scratch.db()).execute("DELETE FROM audit WHERE seq >= 6", []).unwrap();
    let store = scratch.open();
    for n in 6..=ROWS {
        store.append(None, "note", &json!(n)).unwrap();
    }
    assert!(matches!(store.verify().unwrap(), Verdict::Intact { rows: ROWS, .. }));
    assert_eq!(store.verify_against(&checkpoint).unwrap(), broken(ROWS, Problem::CheckpointMismatch));
    let missing = Checkpoint { seq: 0, hash: RowHash([1; 32]) };
    assert_eq!(store.verify_against(&missing).unwrap(), broken(0, Problem::CheckpointMismatch));
}

#[test]
fn the_message_names_the_row_and_the_cause() {
    let Verdict::Broken(bad) = verdict_after("DELETE FROM audit WHERE seq = 5") else { panic!() };
    assert_eq!(bad.to_string(), "row 5 is missing: the next row is numbered 6");
    let json = serde_json::to_value(&bad).unwrap();
    assert_eq!(json, json!({ "seq": 5, "problem": { "kind": "missing", "next": 6 } }));
}

// Any single edit of any column of any row is detected, at the right row.

/// The fixture, built once, as bytes copied for each case.
fn fixture_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let scratch = fixture();
        // Closing the last connection folds the write-ahead log into the file.
        std::fs::read(scratch.db()).unwrap()
    })
}

const COLUMNS: [&str; 6] = ["seq", "at_ms", "kind", "request", "content", "hash"];

fn any_value() -> impl Strategy<Value = Sql> {
    prop_oneof![
        Just(Sql::Null),
        any::<i64>().prop_map(Sql::Integer),
        (-3i64..20).prop_map(Sql::Integer),
        ".{0,12}".prop_map(Sql::Text),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Sql::Blob),
    ]
}

/// A value of the column's own type, mostly: the edits a STRICT table lets through.
fn value_for(column: usize) -> BoxedStrategy<Sql> {
    let typed = match COLUMNS[column] {
        "seq" | "at_ms" | "request" => prop_oneof![any::<i64>(), -3i64..20].prop_map(Sql::Integer).boxed(),
        "kind" | "content" => prop_oneof![".{0,12}", r#"\{"n":[0-9]\}"#].prop_map(Sql::Text).boxed(),
        _ => prop_oneof![
            proptest::collection::vec(any::<u8>(), 32).prop_map(Sql::Blob),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(Sql::Blob),
        ]
        .boxed(),
    };
    prop_oneof![4 => typed, 1 => any_value()].boxed()
}

proptest! {
    // An edit the table refuses (a type, a duplicate number) or that changes nothing is rejected
    // and does not count: each of the 256 cases is an edit that took.
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, rng_seed: RngSeed::Fixed(SEED), ..ProptestConfig::default() })]

    #[test]
    fn any_single_edit_is_detected(
        (row, column, value) in (1..=ROWS, 0..COLUMNS.len()).prop_flat_map(|(r, c)| (Just(r), Just(c), value_for(c)))
    ) {
        let scratch = Scratch::new();
        std::fs::write(scratch.db(), fixture_bytes()).unwrap();
        let conn = raw(&scratch.db());
        let name = COLUMNS[column];
        let read = |seq: i64| conn.query_row(&format!("SELECT {name} FROM audit WHERE seq = ?1"), [seq], |r| r.get::<_, Sql>(0));
        let before = read(row as i64).unwrap();
        let edited = conn.execute(&format!("UPDATE audit SET {name} = ?1 WHERE seq = ?2"), rusqlite::params![value, row as i64]);
        // Refused by the table, or no change: nothing to detect.
        prop_assume!(matches!(edited, Ok(1)));
        let new_seq = if name == "seq" { let Sql::Integer(s) = value else { unreachable!() }; s } else { row as i64 };
        let after = read(new_seq).unwrap();
        prop_assume!(after != before || new_seq != row as i64);
        drop(conn);

        let Verdict::Broken(bad) = scratch.open().verify().unwrap() else {
            return Err(TestCaseError::fail(format!("edit of {name} at row {row} to {value:?} not detected")));
        };
        // A row renumbered before the first shows up first; otherwise the edited row is the first bad.
        let expected = if new_seq < 1 { 1 } else { row };
        prop_assert_eq!(bad.seq, expected, "{:?}", bad);
    }
}
