//! Transcripts written by requests taking turns, as a server's concurrent requests write them:
//! each request reads back its own lines, in order, numbered from 1, whatever the others wrote
//! between them and whatever `gc` removed. The table has no index on the request (a request's
//! lines are found from its first line on, its last by reading back from the end), so this is
//! what holds that search to its request.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{Scratch, raw};
use cordon_store::{Batch, Lines, NewRequest, RequestId, Store};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::{Value, json};

/// What a turn does.
#[derive(Debug, Clone)]
enum Turn {
    /// Request `n` writes `lines` lines, one by one or as one batch.
    Write { n: usize, lines: usize, batch: bool },
    /// Request `n` is made old and `gc` removes the old requests' transcripts (theirs made
    /// before as well: a request once old stays old).
    Forget { n: usize },
    /// A new request begins.
    Begin,
}

fn turn() -> impl Strategy<Value = Turn> {
    prop_oneof![
        6 => (0usize..8, 0usize..4, any::<bool>()).prop_map(|(n, lines, batch)| Turn::Write { n, lines, batch }),
        1 => (0usize..8).prop_map(|n| Turn::Forget { n }),
        1 => Just(Turn::Begin),
    ]
}

fn begin(store: &dyn Store, n: usize) -> RequestId {
    store.begin_request(&NewRequest { text: &format!("request {n}"), principal: "ann", session: None }).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 96,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(5),
        ..ProptestConfig::default()
    })]

    #[test]
    fn each_request_reads_back_its_own_lines_in_order(turns in proptest::collection::vec(turn(), 1..40)) {
        let scratch = Scratch::new();
        let store = scratch.open();
        let mut requests = vec![begin(&store, 0)];
        let mut written: Vec<Vec<Value>> = vec![Vec::new()];
        let mut old = vec![false];
        for (t, turn) in turns.into_iter().enumerate() {
            match turn {
                Turn::Write { n, lines, batch } => {
                    let n = n % requests.len();
                    let new: Vec<Value> = (0..lines).map(|i| json!({ "turn": t, "line": i, "request": n })).collect();
                    let number = if batch {
                        store.append_transcript_batch(requests[n], &new).unwrap()
                    } else {
                        new.iter().map(|line| store.append_transcript(requests[n], line).unwrap()).last()
                            .unwrap_or(written[n].len() as u64)
                    };
                    written[n].extend(new);
                    prop_assert_eq!(number, written[n].len() as u64, "request {}'s last line number", n);
                }
                Turn::Forget { n } => {
                    let n = n % requests.len();
                    raw(&scratch.db())
                        .execute("UPDATE requests SET started_ms = 0 WHERE id = ?1", [requests[n].0])
                        .unwrap();
                    old[n] = true;
                    store.gc(Duration::from_secs(3600)).unwrap();
                    written.iter_mut().zip(&old).filter(|(_, old)| **old).for_each(|(lines, _)| lines.clear());
                }
                Turn::Begin => {
                    requests.push(begin(&store, requests.len()));
                    written.push(Vec::new());
                    old.push(false);
                }
            }
            for (n, id) in requests.iter().enumerate() {
                prop_assert_eq!(&store.transcript(*id).unwrap(), &written[n], "request {}", n);
            }
        }
    }
}

/// A request's effects recorded with the lines before them (`Store::record`, one commit each)
/// number their lines on from the last, as lines appended alone do.
#[test]
fn lines_recorded_with_effects_go_on_from_the_last() {
    let scratch = Scratch::new();
    let store = scratch.open();
    let (a, b) = (begin(&store, 0), begin(&store, 1));
    for i in 0..3 {
        for id in [a, b] {
            let batch = Batch { transcript: Lines::of([json!(i), json!(i + 10)]).unwrap(), rows: Vec::new() };
            store.record(id, &batch, Some(&common::intent("t", i))).unwrap();
        }
    }
    assert_eq!(store.append_transcript(a, &json!("last")).unwrap(), 7);
    let expected: Vec<Value> = [0, 10, 1, 11, 2, 12].into_iter().map(|i| json!(i)).chain([json!("last")]).collect();
    assert_eq!(store.transcript(a).unwrap(), expected);
    assert_eq!(store.transcript(b).unwrap().len(), 6);
    // One row a commit, each numbered on from the row before.
    let rows: Vec<(i64, i64)> = raw(&scratch.db())
        .prepare("SELECT seq, lines FROM transcript WHERE request = ?1 ORDER BY id")
        .unwrap()
        .query_map([a.0], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, [(1, 2), (3, 2), (5, 2), (7, 1)]);
}

/// A row of several lines holds them as a JSON array; a line that is itself an array, alone in
/// its row, is read back as one line, and `gc` counts lines, not rows.
#[test]
fn a_row_of_lines_and_a_line_that_is_an_array_read_back_as_written() {
    let scratch = Scratch::new();
    let store = scratch.open();
    let id = begin(&store, 0);
    store.append_transcript(id, &json!([1, 2])).unwrap();
    store.append_transcript_batch(id, &[json!([3]), json!({ "a": [4] }), json!("five")]).unwrap();
    store.append_transcript_batch(id, &[json!([])]).unwrap();
    let expected = [json!([1, 2]), json!([3]), json!({ "a": [4] }), json!("five"), json!([])];
    assert_eq!(store.transcript(id).unwrap(), expected);
    raw(&scratch.db()).execute("UPDATE requests SET started_ms = 0 WHERE id = ?1", [id.0]).unwrap();
    let report = store.gc(Duration::from_secs(3600)).unwrap();
    assert_eq!((report.requests, report.events), (1, 5));
}

/// A row whose count of lines is not what it holds (a file edited or damaged) is an error that
/// says so, never a panic nor a transcript with lines missing.
#[test]
fn a_row_that_does_not_hold_its_count_of_lines_is_corrupt() {
    let scratch = Scratch::new();
    let store = scratch.open();
    let id = begin(&store, 0);
    store.append_transcript_batch(id, &[json!(1), json!(2)]).unwrap();
    for (lines, event) in [(3, "[1,2]"), (2, "[1]"), (2, "{\"a\":1}"), (2, "[1,")] {
        let conn = raw(&scratch.db());
        conn.execute(
            "UPDATE transcript SET lines = ?1, event = ?2 WHERE request = ?3",
            rusqlite::params![lines, event, id.0],
        )
        .unwrap();
        let error = store.transcript(id).unwrap_err();
        assert!(!error.to_string().is_empty(), "{lines} {event}");
        if event.starts_with('[') && event.ends_with(']') {
            assert!(matches!(error, cordon_store::StoreError::Corrupt { .. }), "{lines} {event}: {error:?}");
        }
    }
}

/// Any JSON value: text with quotes, escapes and characters beyond ASCII included.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, rng_seed: RngSeed::Fixed(7), ..ProptestConfig::default() })]

    /// A batch's lines, written into one buffer, read back each as the text it serialised to,
    /// and together as the JSON a store keeps: the line alone, or the array of them. A batch
    /// emptied and filled again holds only its new lines.
    #[test]
    fn a_batchs_lines_are_each_lines_json(values in proptest::collection::vec(json_value(), 0..6), again in json_value()) {
        let mut lines = Lines::of(&values).unwrap();
        let texts: Vec<String> = values.iter().map(|v| serde_json::to_string(v).unwrap()).collect();
        prop_assert_eq!(lines.iter().collect::<Vec<_>>(), texts.iter().map(String::as_str).collect::<Vec<_>>());
        prop_assert_eq!(lines.len(), values.len());
        let together: Value = serde_json::from_str(lines.json()).unwrap();
        match values.as_slice() {
            [one] => prop_assert_eq!(&together, one),
            _ => prop_assert_eq!(together, Value::from(values.clone())),
        }
        lines.clear();
        lines.push(&again).unwrap();
        prop_assert_eq!(lines.iter().collect::<Vec<_>>(), [serde_json::to_string(&again).unwrap()]);
        prop_assert_eq!(serde_json::from_str::<Value>(lines.json()).unwrap(), again);
    }
}
