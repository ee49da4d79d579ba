//! Opening files: a fresh store, an older one migrated, a newer one refused, and files that are
//! no store at all (garbage, another program's database, a damaged store): each a clear error,
//! never a panic.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::{Scratch, raw};
use cordon_store::chain::{Fields, row_hash};
use cordon_store::{
    Checkpoint, Durability, NewRequest, RequestId, SCHEMA_VERSION, Scope, SqliteStore, Store, StoreError, Verdict,
};
use serde_json::json;

/// The schema of version 1, as a store written then holds it.
const V1: &str = "
    CREATE TABLE requests (id INTEGER PRIMARY KEY, started_ms INTEGER NOT NULL, text TEXT NOT NULL,
        principal TEXT NOT NULL, session TEXT, status TEXT NOT NULL, first_seq INTEGER) STRICT;
    CREATE TABLE transcript (request INTEGER NOT NULL REFERENCES requests (id), seq INTEGER NOT NULL,
        at_ms INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (request, seq)) STRICT;
    CREATE TABLE audit (seq INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, kind TEXT NOT NULL, request INTEGER,
        content TEXT NOT NULL, hash BLOB NOT NULL) STRICT;
    CREATE TABLE audit_start (only INTEGER PRIMARY KEY CHECK (only = 1), seq INTEGER NOT NULL,
        hash BLOB NOT NULL) STRICT;
    PRAGMA application_id = 1129271876;
    PRAGMA user_version = 1;
    PRAGMA journal_mode = WAL;
";

fn open_error(path: &std::path::Path) -> StoreError {
    match SqliteStore::open(path, Durability::SurvivesCrash) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(StoreError::Open { cause, .. }) => *cause,
        Err(e) => panic!("not an Open error: {e}"),
    }
}

#[test]
fn a_new_store_is_created_with_its_directory() {
    let scratch = Scratch::new();
    let path = scratch.path("a/b/cordon.db");
    let store = SqliteStore::open(&path, Durability::SurvivesPowerLoss).unwrap();
    assert_eq!(store.head().unwrap(), Checkpoint::START);
    assert_eq!(store.verify().unwrap(), Verdict::Intact { rows: 0, head: Checkpoint::START });
    let conn = raw(&path);
    let version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!((version, mode.as_str()), (SCHEMA_VERSION, "wal"));
    drop(store);
    // Opening again changes nothing.
    assert_eq!(SqliteStore::open(&path, Durability::SurvivesCrash).unwrap().head().unwrap(), Checkpoint::START);
}

#[test]
fn a_version_1_store_is_migrated_and_keeps_its_log() {
    let scratch = Scratch::new();
    let conn = raw(&scratch.db());
    conn.execute_batch(V1).unwrap();
    conn.execute("INSERT INTO requests VALUES (1, 5, 'triage', 'ann', NULL, 'done', 1)", []).unwrap();
    conn.execute("INSERT INTO requests VALUES (2, 6, 'tidy', 'ann', NULL, 'done', NULL)", []).unwrap();
    // Two transcripts written taking turns, as concurrent requests write them.
    for (request, seq) in [(1, 1), (2, 1), (1, 2), (2, 2), (1, 3)] {
        let event = json!({ "request": request, "line": seq }).to_string();
        conn.execute("INSERT INTO transcript VALUES (?1, ?2, 5, ?3)", rusqlite::params![request, seq, event]).unwrap();
    }
    let mut prev = Checkpoint::START;
    for (seq, kind, content) in [(1, "request", r#"{"text":"triage"}"#), (2, "hole", r#"{"fill":"x"}"#)] {
        let fields = Fields { at_ms: 5, kind, request: Some(1), content };
        let hash = row_hash(&prev.hash, seq, &fields);
        conn.execute(
            "INSERT INTO audit VALUES (?1, 5, ?2, 1, ?3, ?4)",
            rusqlite::params![seq as i64, kind, content, &hash.0[..]],
        )
        .unwrap();
        prev = Checkpoint { seq, hash };
    }
    drop(conn);

    let store = scratch.open();
    let version: u32 = raw(&scratch.db()).query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert_eq!(store.verify_against(&prev).unwrap(), Verdict::Intact { rows: 2, head: prev });
    let log = store.show(RequestId(1)).unwrap();
    assert_eq!(log.entries.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(), ["request", "hole"]);
    // What version 2 added works.
    let lock = store.lock_session("s").unwrap();
    store.save_session(&lock, &json!({})).unwrap();
    let grant = cordon_store::NewGrant {
        tool: "t".into(),
        destination: "*".into(),
        label_class: "public".into(),
        scope: Scope::UntilRevoked,
        expires_ms: None,
        instance: None,
        principal: None,
    };
    store.add_grant(&grant).unwrap();
    // The transcripts are each request's, in order, and go on from their last line.
    for (request, lines) in [(1, 3), (2, 2)] {
        let expected: Vec<_> = (1..=lines).map(|line| json!({ "request": request, "line": line })).collect();
        assert_eq!(store.transcript(RequestId(request)).unwrap(), expected);
    }
    assert_eq!(store.append_transcript(RequestId(2), &json!("more")).unwrap(), 3);
    assert_eq!(store.transcript(RequestId(2)).unwrap().len(), 3);
    // And the log goes on from where it was.
    let id = store.begin_request(&NewRequest { text: "next", principal: "ann", session: None }).unwrap();
    assert_eq!(id, RequestId(3));
    assert!(matches!(store.verify_against(&prev).unwrap(), Verdict::Intact { rows: 4, .. }));
}

#[test]
fn a_newer_store_is_refused_naming_both_versions() {
    let scratch = Scratch::new();
    drop(scratch.open());
    raw(&scratch.db()).execute_batch("PRAGMA user_version = 99").unwrap();
    let e = open_error(&scratch.db());
    assert!(matches!(e, StoreError::TooNew { found: 99, supported: SCHEMA_VERSION }), "{e:?}");
    let message = SqliteStore::open(&scratch.db(), Durability::SurvivesCrash).unwrap_err().to_string();
    assert!(
        message.contains("99") && message.contains(&format!("the {SCHEMA_VERSION} this Cordon knows")),
        "{message}"
    );
    assert!(message.contains(&scratch.db().display().to_string()), "{message}");
}

#[test]
fn garbage_is_not_a_database() {
    let scratch = Scratch::new();
    let mut rng = common::Rng::seeded();
    let bytes: Vec<u8> = (0..8192).map(|_| rng.below(256) as u8).collect();
    std::fs::write(scratch.db(), &bytes).unwrap();
    let e = open_error(&scratch.db());
    assert!(matches!(e, StoreError::NotADatabase { .. }), "{e:?}");
    assert!(e.to_string().starts_with("the file is not an SQLite database"), "{e}");
    // Text that starts like a database, too.
    std::fs::write(scratch.db(), b"SQLite format 3\0 and then nothing sensible").unwrap();
    assert!(SqliteStore::open(&scratch.db(), Durability::SurvivesCrash).is_err());
}

#[test]
fn an_empty_file_becomes_a_store() {
    let scratch = Scratch::new();
    std::fs::write(scratch.db(), b"").unwrap();
    assert_eq!(scratch.open().head().unwrap(), Checkpoint::START);
}

#[test]
fn another_programs_database_is_refused_untouched() {
    let scratch = Scratch::new();
    raw(&scratch.db()).execute_batch("CREATE TABLE photos (id INTEGER)").unwrap();
    let e = open_error(&scratch.db());
    assert!(matches!(e, StoreError::Foreign { .. }), "{e:?}");
    let tables: i64 = raw(&scratch.db()).query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0)).unwrap();
    assert_eq!(tables, 1);

    raw(&scratch.db()).execute_batch("PRAGMA application_id = 7").unwrap();
    let e = open_error(&scratch.db());
    assert_eq!(e.to_string(), "the database is not a Cordon store: its application id is 0x7");
}

#[test]
fn a_damaged_store_gives_an_error_or_a_broken_chain_never_a_panic() {
    let mut rng = common::Rng::seeded();
    for damage in 0..12 {
        let scratch = Scratch::new();
        {
            let store = scratch.open();
            let content = json!({ "text": "x".repeat(200) });
            store.append_many(None, "note", (0..400).map(|_| content.clone())).unwrap();
        }
        let mut bytes = std::fs::read(scratch.db()).unwrap();
        let len = bytes.len();
        match damage % 3 {
            // Garbage over a run of pages past the first.
            0 => {
                let from = 4096 + rng.below((len - 8192) as u64) as usize;
                for b in &mut bytes[from..from + 4096] {
                    *b = rng.below(256) as u8;
                }
            }
            // Cut short.
            1 => bytes.truncate(4096 + rng.below((len - 4096) as u64) as usize),
            // Flipped bytes here and there.
            _ => {
                for _ in 0..50 {
                    let at = 100 + rng.below((len - 100) as u64) as usize;
                    bytes[at] ^= 1 << rng.below(8);
                }
            }
        }
        std::fs::write(scratch.db(), &bytes).unwrap();
        let outcome = SqliteStore::open(&scratch.db(), Durability::SurvivesCrash).and_then(|s| s.verify());
        match outcome {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(Verdict::Broken(_)) => {}
            // Damage in free space or in the index only would leave the chain whole.
            Ok(Verdict::Intact { rows, .. }) => assert!(damage % 3 != 1, "a cut file kept all {rows} rows"),
        }
    }
}
