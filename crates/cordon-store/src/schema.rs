//! The store's schema, built by migrations, and the checks made on opening a file.
//!
//! `PRAGMA user_version` is the schema's version: the number of migrations applied. An older
//! store is migrated on open, in one transaction; a newer one is refused. Never edit a migration
//! that has shipped: add another.

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::StoreError;

/// `PRAGMA application_id`: "CORD". Tells a Cordon store from any other SQLite file.
const APPLICATION_ID: i32 = 0x434f_5244;

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: [&str; 6] = [
    // 1: requests, their transcripts, and the audit log.
    "CREATE TABLE requests (
        id INTEGER PRIMARY KEY,
        started_ms INTEGER NOT NULL,
        text TEXT NOT NULL,
        principal TEXT NOT NULL,
        session TEXT,
        status TEXT NOT NULL,
        -- The request's first audit row: its rows are found from there on.
        first_seq INTEGER
    ) STRICT;
    CREATE TABLE transcript (
        request INTEGER NOT NULL REFERENCES requests (id),
        seq INTEGER NOT NULL,
        at_ms INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (request, seq)
    ) STRICT;
    CREATE TABLE audit (
        seq INTEGER PRIMARY KEY,
        at_ms INTEGER NOT NULL,
        kind TEXT NOT NULL,
        request INTEGER,
        content TEXT NOT NULL,
        hash BLOB NOT NULL
    ) STRICT;
    -- No index on audit.request: a second index page in every commit costs more than a scan
    -- from the request's first row costs `show`.
    -- The row the log's first row follows, once rows were archived.
    CREATE TABLE audit_start (
        only INTEGER PRIMARY KEY CHECK (only = 1),
        seq INTEGER NOT NULL,
        hash BLOB NOT NULL
    ) STRICT;",
    // 2: sessions with their locks, and approval grants.
    "CREATE TABLE sessions (
        name TEXT PRIMARY KEY,
        state TEXT,
        updated_ms INTEGER,
        lock_pid INTEGER,
        lock_started INTEGER,
        lock_epoch INTEGER NOT NULL DEFAULT 0,
        locked_ms INTEGER
    ) STRICT;
    CREATE TABLE grants (
        id INTEGER PRIMARY KEY,
        tool TEXT NOT NULL,
        destination TEXT NOT NULL,
        label_class TEXT NOT NULL,
        session TEXT,
        expires_ms INTEGER,
        created_ms INTEGER NOT NULL,
        revoked_ms INTEGER
    ) STRICT;
    CREATE INDEX live_grants ON grants (tool, label_class) WHERE revoked_ms IS NULL;",
    // 3: each grant names its `grant` row in the audit log, and counts only as the log holds it;
    // each request names the process running it, so a signal can end its own requests.
    "ALTER TABLE grants ADD COLUMN audit_seq INTEGER;
    ALTER TABLE grants ADD COLUMN instance TEXT;
    ALTER TABLE grants ADD COLUMN expired_ms INTEGER;
    ALTER TABLE requests ADD COLUMN pid INTEGER;
    ALTER TABLE requests ADD COLUMN pid_started INTEGER;
    UPDATE grants SET audit_seq = (
        SELECT max(a.seq) FROM audit a
        WHERE a.kind = 'grant' AND json_valid(a.content) AND json_extract(a.content, '$.id') = grants.id
    );",
    // 4: background runs (`cordon serve`) and the people who answer their cards; each grant
    // names the principal it answers for (none: any, as every grant made before this did).
    "ALTER TABLE grants ADD COLUMN principal TEXT;
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL,
        principal TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        text TEXT NOT NULL,
        state TEXT NOT NULL,
        request INTEGER REFERENCES requests (id),
        -- While parked: the saved run, and the audit log's last row when it was saved.
        saved BLOB,
        saved_seq INTEGER,
        card TEXT,
        seal TEXT,
        deadline_ms INTEGER,
        answer TEXT,
        answered_by TEXT,
        answered_ms INTEGER,
        answer_mac TEXT,
        result TEXT,
        clearance TEXT,
        lease_owner TEXT,
        lease_until_ms INTEGER,
        lease_epoch INTEGER NOT NULL
    ) STRICT;
    CREATE INDEX runs_to_claim ON runs (state, updated_ms);
    CREATE TABLE users (
        name TEXT PRIMARY KEY,
        token_hash BLOB NOT NULL UNIQUE,
        created_ms INTEGER NOT NULL
    ) STRICT;
    CREATE TABLE web_sessions (
        id_hash BLOB PRIMARY KEY,
        user TEXT NOT NULL REFERENCES users (name),
        csrf TEXT NOT NULL,
        expires_ms INTEGER NOT NULL
    ) STRICT;",
    // 5: the transcript without an index: its lines in the order they were written, a request's
    // found from its first line on (`requests.first_line`). An index on (request, seq) wrote one
    // more page in every commit of an effect, a fifth of the commit's writes.
    "CREATE TABLE transcript_lines (
        id INTEGER PRIMARY KEY,
        request INTEGER NOT NULL REFERENCES requests (id),
        seq INTEGER NOT NULL,
        at_ms INTEGER NOT NULL,
        event TEXT NOT NULL
    ) STRICT;
    INSERT INTO transcript_lines (request, seq, at_ms, event)
        SELECT request, seq, at_ms, event FROM transcript ORDER BY request, seq;
    DROP TABLE transcript;
    ALTER TABLE transcript_lines RENAME TO transcript;
    ALTER TABLE requests ADD COLUMN first_line INTEGER;
    UPDATE requests SET first_line = firsts.id
        FROM (SELECT request, min(id) AS id FROM transcript GROUP BY request) AS firsts
        WHERE firsts.request = requests.id;",
    // 6: a row holds the `lines` lines a commit wrote for its request, numbered from `seq` on:
    // one line is the event itself, more are a JSON array of them. A row a line cost an
    // effect's commit six rows' work.
    "ALTER TABLE transcript ADD COLUMN lines INTEGER NOT NULL DEFAULT 1 CHECK (lines >= 1);",
];

/// The schema version this crate writes.
pub const VERSION: u32 = MIGRATIONS.len() as u32;

/// Checks that `conn` is a Cordon store (or an empty file), sets it up, and migrates it.
pub(crate) fn prepare(conn: &Connection, synchronous: &str) -> Result<(), StoreError> {
    // The first read of the file: garbage fails here with "not a database". The three reads
    // are one transaction, so they see one state of the file: another process creating the
    // store at the same moment is seen before its tables or after its whole setup, never with
    // tables and no application id.
    let (app, version, tables) = {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Deferred)?;
        let app: i32 = tx.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        let version = user_version(&tx)?;
        let tables: i64 = tx.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
        tx.commit()?;
        (app, version, tables)
    };
    if app != APPLICATION_ID {
        if app != 0 {
            return Err(StoreError::Foreign { reason: format!("its application id is {app:#x}") });
        }
        if tables > 0 || version != 0 {
            return Err(StoreError::Foreign { reason: "it holds another program's tables".into() });
        }
    }
    if version > VERSION {
        return Err(StoreError::TooNew { found: version, supported: VERSION });
    }
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Foreign { reason: format!("it cannot use a write-ahead log (journal mode {mode})") });
    }
    conn.pragma_update(None, "synchronous", synchronous)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // Fewer checkpoints (each syncs the file) than the default 1000 pages: the log's appends
    // are small, frequent commits.
    conn.pragma_update(None, "wal_autocheckpoint", 4000)?;
    migrate(conn)
}

/// Sets up a fresh in-memory database: the same schema, with no file and so no write-ahead log.
pub(crate) fn prepare_in_memory(conn: &Connection) -> Result<(), StoreError> {
    // A request's transcript lines of one commit are a row of a few KB. Small pages need a new
    // page, allocated and balanced into the tree, at nearly every commit; large ones are copied
    // whole into the rollback journal whenever a commit first changes them (64 KB pages cost a
    // fifth more an effect than 8 KB ones; docs/performance.md). (A file store keeps 4 KB
    // pages: there a larger page is more bytes written to the log at every commit.)
    conn.pragma_update(None, "page_size", 8192)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    migrate(conn)
}

fn migrate(conn: &Connection) -> Result<(), StoreError> {
    if user_version(conn)? == VERSION {
        return Ok(());
    }
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    // Read again under the write lock: another process may have migrated meanwhile.
    let from = user_version(&tx)?;
    let steps = MIGRATIONS.get(from as usize..).ok_or(StoreError::TooNew { found: from, supported: VERSION })?;
    for step in steps {
        tx.execute_batch(step)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)?;
    tx.pragma_update(None, "user_version", VERSION)?;
    tx.commit()?;
    Ok(())
}

fn user_version(conn: &Connection) -> Result<u32, StoreError> {
    let v: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    // user_version is a signed 32-bit field: a negative one is no version of ours.
    u32::try_from(v).map_err(|_| StoreError::Foreign { reason: format!("its schema version is {v}") })
}
