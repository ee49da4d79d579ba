//! The store in one SQLite file: WAL mode (readers never wait for the writer), a busy timeout
//! (a second writer waits for the first), and every write in one `BEGIN IMMEDIATE` transaction,
//! so that an audit row is numbered and chained from the head read under the write lock: two
//! processes appending never fork the chain.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde_json::{Value, json};

use crate::audit::{
    Archived, AuditRow, Batch, EffectIntent, EffectStatus, Entry, GcReport, Lines, Outcome, OutcomeRow, PendingEffect,
    RequestLog, StatusRow, fold, kind,
};
use crate::chain::{BadRow, Checkpoint, Fields, Problem, Verdict};
use crate::grant::{Grant, GrantId, GrantQuery, NewGrant};
use crate::queue::{AnswerRefused, Claimed, Lease, NewAnswer, NewRun, Parking, QueuedRun, RunId, RunState, WebSession};
use crate::request::{NewRequest, Request, RequestId, Status};
use crate::session::{Holder, SessionInfo, SessionLock};
use crate::{Store, StoreError, now_ms, schema};

mod archive;
mod grants;
mod log;
mod queue;
mod tx;

use log::{
    INSERT_ROW, SELECT_ROW, append_in, audit_rows, check_request, head_in, insert_row, refuse_reserved, sql_seq,
    start_in, verify_in,
};

/// How long a writer waits for another to finish before giving up with `StoreError::Busy`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// What a commit survives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Any crash of the process (`synchronous = NORMAL`: the write-ahead log is synced at
    /// checkpoints, not at every commit). The default.
    SurvivesCrash,
    /// A power loss too (`synchronous = FULL`: every commit is synced to disk). `--durable`.
    SurvivesPowerLoss,
}

impl Durability {
    /// SQLite's `synchronous` setting for it.
    fn synchronous(self) -> &'static str {
        match self {
            Durability::SurvivesCrash => "NORMAL",
            Durability::SurvivesPowerLoss => "FULL",
        }
    }
}

/// The SQLite store. One connection, shared by the threads of a process; other processes open
/// their own.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl SqliteStore {
    /// Opens the store at `path`, creating it (0600, and its directory 0700) if needed,
    /// migrating an older one. A store that is not the user's alone is refused (see
    /// [`crate::private`]).
    pub fn open(path: &Path, durability: Durability) -> Result<SqliteStore, StoreError> {
        let opened = || {
            // The file (made 0600 in a 0700 directory if new) and SQLite's files beside it must
            // be the user's alone; SQLite gives its own files the store's permissions.
            crate::private::prepare_private(path)?;
            for suffix in ["-wal", "-shm", "-journal"] {
                let mut beside = path.as_os_str().to_owned();
                beside.push(suffix);
                crate::private::check_private(Path::new(&beside))?;
            }
            // SQLite opens the very file checked above: by its absolute path, which SQLite never
            // reads as anything else (`:memory:` is a store in memory to it, `file:x?..` a URI
            // naming another file, made with the umask's mode), and with URIs off.
            let file = std::path::absolute(path).map_err(StoreError::io(path))?;
            let flags = OpenFlags::default().difference(OpenFlags::SQLITE_OPEN_URI) | OpenFlags::SQLITE_OPEN_NOFOLLOW;
            let conn = Connection::open_with_flags(&file, flags)?;
            conn.busy_timeout(BUSY_TIMEOUT)?;
            // Setting a new store up (its write-ahead log, its tables) can find another process
            // doing the same: SQLite then answers "locked" at once rather than waiting, so this
            // waits and tries again, as long as the busy timeout.
            let started = std::time::Instant::now();
            loop {
                match schema::prepare(&conn, durability.synchronous()) {
                    Err(StoreError::Busy { .. }) if started.elapsed() < BUSY_TIMEOUT => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    done => break done?,
                }
            }
            Ok(conn)
        };
        match opened() {
            Ok(conn) => Ok(SqliteStore { path: path.to_path_buf(), conn: Mutex::new(conn) }),
            Err(cause) => Err(StoreError::Open { path: path.to_path_buf(), cause: Box::new(cause) }),
        }
    }

    /// A store in memory, gone when it is dropped: the same schema, chain and checks, for a
    /// demo or a test that must write no file. Only this process sees it.
    pub fn open_in_memory() -> Result<SqliteStore, StoreError> {
        let conn = Connection::open_in_memory()?;
        schema::prepare_in_memory(&conn)?;
        Ok(SqliteStore { path: PathBuf::from(":memory:"), conn: Mutex::new(conn) })
    }

    /// Where the store is (`:memory:` for one in memory).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one row per content, all of one kind and request, in one transaction: for
    /// importing, and for making large logs fast (benchmarks, tests).
    pub fn append_many(
        &self,
        request: Option<RequestId>,
        kind: &str,
        contents: impl IntoIterator<Item = Value>,
    ) -> Result<Checkpoint, StoreError> {
        refuse_reserved(kind)?;
        self.write(|c| {
            check_request(c, request)?;
            let mut head = head_in(c)?;
            let mut insert = c.prepare_cached(INSERT_ROW)?;
            for content in contents {
                let content = serde_json::to_string(&content)?;
                let fields = Fields { at_ms: now_ms(), kind, request: request.map(|r| r.0), content: &content };
                head = insert_row(&mut insert, &head, &fields)?;
            }
            Ok(head)
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock rolled its transaction back: the connection is sound.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` in a write transaction, committed if `f` succeeds.
    fn write<T>(&self, f: impl FnOnce(&Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
        tx::write(&self.conn(), f)
    }

    /// Runs `f` in a read transaction: every statement sees the same state.
    fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
        tx::read(&self.conn(), f)
    }
}

/// Appends `events` to the request's transcript, in one row; returns the last one's number
/// there.
///
/// The table has no index but its row ids, which grow as rows are written: a request's last
/// row is the first of its rows read back from the end, past only the rows other requests
/// wrote since; its first row's id is kept in its `requests` row, written with that row.
fn transcript_in(c: &Connection, request: RequestId, lines: &Lines) -> Result<u64, StoreError> {
    let first = first_line_in(c, request)?;
    let last: i64 = match first {
        None => 0,
        Some(first) => c
            .prepare_cached(
                "SELECT seq + lines - 1 FROM transcript WHERE id >= ?1 AND request = ?2 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([first, request.0], |r| r.get(0))
            .optional()?
            .unwrap_or(0),
    };
    if lines.is_empty() {
        return Ok(u64::try_from(last).unwrap_or(0));
    }
    let text = lines.json();
    let lines = i64::try_from(lines.len()).unwrap_or(i64::MAX);
    c.prepare_cached("INSERT INTO transcript (request, seq, lines, at_ms, event) VALUES (?1, ?2, ?3, ?4, ?5)")?
        .execute(params![request.0, last + 1, lines, now_ms(), text])?;
    if first.is_none() {
        c.prepare_cached("UPDATE requests SET first_line = ?2 WHERE id = ?1")?
            .execute([request.0, c.last_insert_rowid()])?;
    }
    Ok(u64::try_from(last + lines).unwrap_or(0))
}

/// The id of the request's first transcript line, if it has one; refused if there is no such
/// request.
fn first_line_in(c: &Connection, request: RequestId) -> Result<Option<i64>, StoreError> {
    let first = c.prepare_cached("SELECT first_line FROM requests WHERE id = ?1")?.query_row([request.0], |r| r.get(0));
    first.optional()?.ok_or(StoreError::NoSuchRequest(request))
}

fn request_in(c: &Connection, id: RequestId) -> Result<Option<Request>, StoreError> {
    let sql = "SELECT id, started_ms, text, principal, session, status FROM requests WHERE id = ?1";
    Ok(c.query_row(sql, [id.0], request_row).optional()?)
}

fn request_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Request> {
    Ok(Request {
        id: RequestId(r.get(0)?),
        started_ms: r.get(1)?,
        text: r.get(2)?,
        principal: r.get(3)?,
        session: r.get(4)?,
        status: Status::parse(r.get_ref(5)?.as_str().unwrap_or("")),
    })
}

/// An intact chain's verdict, broken instead if the grants table and the chain disagree.
fn with_grants(c: &Connection, verdict: Verdict) -> Result<Verdict, StoreError> {
    match (&verdict, grants::verify_in(c)?) {
        (Verdict::Intact { .. }, Some(bad)) => Ok(Verdict::Broken(bad)),
        _ => Ok(verdict),
    }
}

fn holder_of(pid: Option<i64>, started: Option<i64>) -> Option<Holder> {
    // A pid that is no pid (a hostile edit) names no live process: the lock is stale.
    let pid = u32::try_from(pid?).unwrap_or(0);
    Some(Holder { pid, started: started.and_then(|s| u64::try_from(s).ok()) })
}

impl Store for SqliteStore {
    fn lock_session(&self, name: &str) -> Result<SessionLock, StoreError> {
        let me = Holder::current();
        let started = me.started.and_then(|s| i64::try_from(s).ok());
        self.write(|c| {
            let sql = "SELECT lock_pid, lock_started, lock_epoch, locked_ms FROM sessions WHERE name = ?1";
            let row = c
                .query_row(sql, [name], |r| {
                    Ok((
                        r.get::<_, Option<i64>>(0)?,
                        r.get::<_, Option<i64>>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, Option<i64>>(3)?,
                    ))
                })
                .optional()?;
            let epoch = match row {
                None => {
                    let sql = "INSERT INTO sessions (name, lock_pid, lock_started, lock_epoch, locked_ms) \
                               VALUES (?1, ?2, ?3, 1, ?4)";
                    c.execute(sql, params![name, me.pid, started, now_ms()])?;
                    1
                }
                Some((pid, held_started, epoch, since)) => {
                    if let Some(holder) = holder_of(pid, held_started)
                        && holder.pid != 0
                        && holder.is_alive()
                    {
                        let since_ms = since.unwrap_or(0);
                        return Err(StoreError::SessionBusy { session: name.into(), pid: holder.pid, since_ms });
                    }
                    let sql = "UPDATE sessions SET lock_pid = ?2, lock_started = ?3, lock_epoch = ?4, locked_ms = ?5 \
                               WHERE name = ?1";
                    c.execute(sql, params![name, me.pid, started, epoch + 1, now_ms()])?;
                    epoch + 1
                }
            };
            Ok(SessionLock { session: name.into(), holder: me, epoch })
        })
    }

    fn load_session(&self, name: &str) -> Result<Option<Value>, StoreError> {
        let conn = self.conn();
        let state: Option<Option<String>> =
            conn.query_row("SELECT state FROM sessions WHERE name = ?1", [name], |r| r.get(0)).optional()?;
        Ok(state.flatten().map(|s| serde_json::from_str(&s)).transpose()?)
    }

    fn save_session(&self, lock: &SessionLock, state: &Value) -> Result<(), StoreError> {
        let state = serde_json::to_string(state)?;
        self.write(|c| {
            let sql =
                "UPDATE sessions SET state = ?4, updated_ms = ?5 WHERE name = ?1 AND lock_pid = ?2 AND lock_epoch = ?3";
            let changed = c.execute(sql, params![lock.session, lock.holder.pid, lock.epoch, state, now_ms()])?;
            if changed == 0 { Err(StoreError::LockLost { session: lock.session.clone() }) } else { Ok(()) }
        })
    }

    fn unlock_session(&self, lock: SessionLock) -> Result<(), StoreError> {
        self.write(|c| {
            let sql = "UPDATE sessions SET lock_pid = NULL, lock_started = NULL, locked_ms = NULL \
                       WHERE name = ?1 AND lock_pid = ?2 AND lock_epoch = ?3";
            let changed = c.execute(sql, params![lock.session, lock.holder.pid, lock.epoch])?;
            if changed == 0 { Err(StoreError::LockLost { session: lock.session }) } else { Ok(()) }
        })
    }

    fn force_unlock_session(&self, name: &str) -> Result<bool, StoreError> {
        self.write(|c| {
            let sql = "UPDATE sessions SET lock_pid = NULL, lock_started = NULL, locked_ms = NULL \
                       WHERE name = ?1 AND lock_pid IS NOT NULL";
            Ok(c.execute(sql, [name])? > 0)
        })
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare("SELECT name, updated_ms, lock_pid, lock_started, locked_ms FROM sessions ORDER BY name")?;
        let rows = stmt.query_map([], |r| {
            Ok(SessionInfo {
                name: r.get(0)?,
                updated_ms: r.get(1)?,
                held_by: holder_of(r.get(2)?, r.get(3)?),
                locked_ms: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn add_grant(&self, grant: &NewGrant) -> Result<Grant, StoreError> {
        self.write(|c| grants::add_in(c, grant))
    }

    fn grants(&self) -> Result<Vec<Grant>, StoreError> {
        self.read(|c| grants::live_in(c, None))
    }

    fn revoke_grant(&self, id: GrantId) -> Result<(), StoreError> {
        self.write(|c| grants::revoke_in(c, id))
    }

    fn find_grant(&self, query: &GrantQuery<'_>) -> Result<Option<Grant>, StoreError> {
        if self.read(|c| grants::any_expired_in(c, now_ms()))? {
            self.write(|c| grants::expire_in(c, now_ms()))?;
        }
        let candidates = self.read(|c| grants::live_in(c, Some((query.tool, query.label_class))))?;
        let now = now_ms();
        Ok(candidates.into_iter().find(|g| g.covers(query, now)))
    }

    fn begin_request(&self, request: &NewRequest<'_>) -> Result<RequestId, StoreError> {
        self.write(|c| {
            let sql = "INSERT INTO requests (started_ms, text, principal, session, status, pid, pid_started) \
                       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
            let (r, me) = (request, Holder::current());
            let started = me.started.and_then(|s| i64::try_from(s).ok());
            c.execute(
                sql,
                params![now_ms(), r.text, r.principal, r.session, Status::Running.as_str(), me.pid, started],
            )?;
            let id = RequestId(c.last_insert_rowid());
            let content = json!({ "text": r.text, "principal": r.principal, "session": r.session });
            let first = append_in(c, Some(id), kind::REQUEST, &content.to_string())?;
            c.execute("UPDATE requests SET first_seq = ?2 WHERE id = ?1", params![id.0, sql_seq(first.seq)?])?;
            Ok(id)
        })
    }

    fn set_status(&self, id: RequestId, status: Status) -> Result<(), StoreError> {
        self.write(|c| {
            if c.execute("UPDATE requests SET status = ?2 WHERE id = ?1", params![id.0, status.as_str()])? == 0 {
                return Err(StoreError::NoSuchRequest(id));
            }
            append_in(c, Some(id), kind::STATUS, &serde_json::to_string(&StatusRow { status })?)?;
            Ok(())
        })
    }

    fn interrupt_own_requests(&self) -> Result<Vec<RequestId>, StoreError> {
        let me = Holder::current();
        let started = me.started.and_then(|s| i64::try_from(s).ok());
        self.write(|c| {
            let sql = "SELECT id FROM requests WHERE status IN ('running', 'waiting') AND pid = ?1 \
                       AND pid_started IS ?2 ORDER BY id";
            let ids: Vec<RequestId> = c
                .prepare(sql)?
                .query_map(params![me.pid, started], |r| r.get(0).map(RequestId))?
                .collect::<Result<_, _>>()?;
            let status = Status::Interrupted;
            for id in &ids {
                c.execute("UPDATE requests SET status = ?2 WHERE id = ?1", params![id.0, status.as_str()])?;
                append_in(c, Some(*id), kind::STATUS, &serde_json::to_string(&StatusRow { status })?)?;
            }
            Ok(ids)
        })
    }

    fn requests(&self, limit: usize) -> Result<Vec<Request>, StoreError> {
        let conn = self.conn();
        let sql = "SELECT id, started_ms, text, principal, session, status FROM requests ORDER BY id DESC LIMIT ?1";
        let mut stmt = conn.prepare(sql)?;
        let rows = stmt.query_map([i64::try_from(limit).unwrap_or(i64::MAX)], request_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn append_transcript_batch(&self, request: RequestId, events: &[Value]) -> Result<u64, StoreError> {
        let lines = Lines::of(events)?;
        self.write(|c| transcript_in(c, request, &lines))
    }

    fn transcript(&self, request: RequestId) -> Result<Vec<Value>, StoreError> {
        self.read(|c| {
            let first = match first_line_in(c, request) {
                Err(StoreError::NoSuchRequest(_)) => None,
                first => first?,
            };
            let Some(first) = first else { return Ok(Vec::new()) };
            let sql = "SELECT lines, event FROM transcript WHERE id >= ?1 AND request = ?2 ORDER BY id";
            let mut stmt = c.prepare(sql)?;
            let mut rows = stmt.query([first, request.0])?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let (lines, text): (i64, &str) =
                    (row.get(0)?, row.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?);
                match lines {
                    1 => out.push(serde_json::from_str(text)?),
                    _ => {
                        let some: Vec<Value> = serde_json::from_str(text)?;
                        if i64::try_from(some.len()) != Ok(lines) {
                            let detail =
                                format!("a transcript row says it holds {lines} lines and holds {}", some.len());
                            return Err(StoreError::Corrupt { detail });
                        }
                        out.extend(some);
                    }
                }
            }
            Ok(out)
        })
    }

    fn append(&self, request: Option<RequestId>, kind: &str, content: &Value) -> Result<Checkpoint, StoreError> {
        refuse_reserved(kind)?;
        let content = serde_json::to_string(content)?;
        self.write(|c| {
            check_request(c, request)?;
            append_in(c, request, kind, &content)
        })
    }

    fn begin_effect(&self, request: Option<RequestId>, effect: &EffectIntent) -> Result<PendingEffect, StoreError> {
        let content = serde_json::to_string(effect)?;
        self.write(|c| {
            check_request(c, request)?;
            let row = append_in(c, request, kind::EFFECT, &content)?;
            Ok(PendingEffect { seq: row.seq, request })
        })
    }

    fn end_effect(&self, effect: PendingEffect, outcome: &Outcome) -> Result<Checkpoint, StoreError> {
        let content = serde_json::to_string(&OutcomeRow { effect: effect.seq, outcome: outcome.clone() })?;
        self.write(|c| append_in(c, effect.request, kind::OUTCOME, &content))
    }

    fn record(
        &self,
        request: RequestId,
        batch: &Batch,
        effect: Option<&EffectIntent>,
    ) -> Result<Option<PendingEffect>, StoreError> {
        let rows = batch.rows.iter().map(|row| row.content(request)).collect::<Result<Vec<_>, _>>()?;
        let effect = effect.map(serde_json::to_string).transpose()?;
        self.write(|c| {
            if batch.transcript.is_empty() {
                first_line_in(c, request)?;
            } else {
                transcript_in(c, request, &batch.transcript)?;
            }
            // Each row follows the one inserted before it in this transaction, as in `append_many`.
            let mut head = head_in(c)?;
            let mut insert = c.prepare_cached(INSERT_ROW)?;
            let mut append = |kind: &str, content: &str| -> Result<Checkpoint, StoreError> {
                let fields = Fields { at_ms: now_ms(), kind, request: Some(request.0), content };
                head = insert_row(&mut insert, &head, &fields)?;
                Ok(head)
            };
            for (kind, content) in &rows {
                append(kind, content)?;
            }
            let Some(effect) = effect else { return Ok(None) };
            let row = append(kind::EFFECT, &effect)?;
            Ok(Some(PendingEffect { seq: row.seq, request: Some(request) }))
        })
    }

    fn head(&self) -> Result<Checkpoint, StoreError> {
        self.read(head_in)
    }

    fn verify(&self) -> Result<Verdict, StoreError> {
        self.read(|c| with_grants(c, verify_in(c, start_in(c)?)?))
    }

    fn verify_against(&self, checkpoint: &Checkpoint) -> Result<Verdict, StoreError> {
        self.read(|c| {
            let start = start_in(c)?;
            let verdict = verify_in(c, start)?;
            let Verdict::Intact { head, .. } = verdict else { return Ok(verdict) };
            let broken = |seq, problem| Ok(Verdict::Broken(BadRow { seq, problem }));
            let hash = if checkpoint.seq < start.seq {
                return broken(checkpoint.seq, Problem::Archived { through: start.seq });
            } else if checkpoint.seq > head.seq {
                let problem = Problem::Truncated { head: head.seq, checkpoint: checkpoint.seq };
                return broken(head.seq + 1, problem);
            } else if checkpoint.seq == start.seq {
                Some(start.hash.0.to_vec())
            } else {
                let sql = "SELECT hash FROM audit WHERE seq = ?1";
                c.query_row(sql, [sql_seq(checkpoint.seq)?], |r| r.get::<_, Vec<u8>>(0)).optional()?
            };
            if hash.as_deref() != Some(&checkpoint.hash.0[..]) {
                return broken(checkpoint.seq, Problem::CheckpointMismatch);
            }
            with_grants(c, verdict)
        })
    }

    fn rows(&self, from: u64, limit: usize) -> Result<Vec<AuditRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("{SELECT_ROW} WHERE seq >= ?1 ORDER BY seq LIMIT ?2"))?;
        audit_rows(&mut stmt, params![sql_seq(from)?, i64::try_from(limit).unwrap_or(i64::MAX)])
    }

    fn show(&self, request: RequestId) -> Result<RequestLog, StoreError> {
        self.read(|c| {
            let found = request_in(c, request)?.ok_or(StoreError::NoSuchRequest(request))?;
            let first: Option<i64> =
                c.query_row("SELECT first_seq FROM requests WHERE id = ?1", [request.0], |r| r.get(0))?;
            let mut stmt = c.prepare(&format!("{SELECT_ROW} WHERE seq >= ?1 AND request = ?2 ORDER BY seq"))?;
            let rows = audit_rows(&mut stmt, [first.unwrap_or(0), request.0])?;
            Ok(RequestLog { request: found, entries: fold(rows) })
        })
    }

    fn unknown_outcomes(&self) -> Result<Vec<Entry>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!("{SELECT_ROW} WHERE kind IN (?1, ?2) ORDER BY seq"))?;
        let rows = audit_rows(&mut stmt, [kind::EFFECT, kind::OUTCOME])?;
        Ok(fold(rows).into_iter().filter(|e| e.outcome == Some(EffectStatus::Unknown)).collect())
    }

    fn gc(&self, older_than: Duration) -> Result<GcReport, StoreError> {
        let cutoff = now_ms().saturating_sub(i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX));
        self.write(|c| {
            let old = "request IN (SELECT id FROM requests WHERE started_ms < ?1)";
            let (requests, events): (i64, i64) = c.query_row(
                &format!("SELECT count(DISTINCT request), coalesce(sum(lines), 0) FROM transcript WHERE {old}"),
                [cutoff],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            c.execute(&format!("DELETE FROM transcript WHERE {old}"), [cutoff])?;
            // A request whose lines are gone starts again from its next line, wherever it is.
            c.execute("UPDATE requests SET first_line = NULL WHERE started_ms < ?1", [cutoff])?;
            Ok(GcReport { requests: u64::try_from(requests).unwrap_or(0), events: u64::try_from(events).unwrap_or(0) })
        })
    }

    fn archive(&self, path: &Path, through: u64) -> Result<Archived, StoreError> {
        archive::archive(&self.conn(), path, through)
    }

    fn submit_run(&self, run: &NewRun<'_>) -> Result<RunId, StoreError> {
        self.write(|c| queue::submit_in(c, run))
    }

    fn claim_run(&self, owner: &str, lease_ms: i64) -> Result<Option<Claimed>, StoreError> {
        self.write(|c| queue::claim_in(c, owner, lease_ms))
    }

    fn renew_lease(&self, lease: &Lease, lease_ms: i64) -> Result<(), StoreError> {
        self.write(|c| queue::renew_in(c, lease, lease_ms))
    }

    fn run_started(&self, lease: &Lease, request: RequestId) -> Result<(), StoreError> {
        self.write(|c| queue::started_in(c, lease, request))
    }

    fn park_run(&self, lease: &Lease, parking: &Parking<'_>) -> Result<(), StoreError> {
        self.write(|c| queue::park_in(c, lease, parking))
    }

    fn finish_run(
        &self,
        lease: &Lease,
        state: RunState,
        request: Option<RequestId>,
        result: &Value,
    ) -> Result<(), StoreError> {
        self.write(|c| queue::finish_in(c, lease, state, request, result))
    }

    fn answer_run(&self, run: RunId, answer: &NewAnswer<'_>) -> Result<Result<(), AnswerRefused>, StoreError> {
        self.write(|c| queue::answer_in(c, run, answer))
    }

    fn queued_run(&self, run: RunId) -> Result<Option<QueuedRun>, StoreError> {
        self.read(|c| queue::run_in(c, run))
    }

    fn queued_runs(&self, principal: Option<&str>, limit: usize) -> Result<Vec<QueuedRun>, StoreError> {
        self.read(|c| queue::runs_in(c, principal, limit))
    }

    fn add_user(&self, name: &str, token_hash: &[u8]) -> Result<(), StoreError> {
        self.write(|c| queue::add_user_in(c, name, token_hash))
    }

    fn user_by_token(&self, token_hash: &[u8]) -> Result<Option<String>, StoreError> {
        self.read(|c| queue::user_by_token_in(c, token_hash))
    }

    fn start_web_session(&self, id_hash: &[u8], session: &WebSession) -> Result<(), StoreError> {
        self.write(|c| queue::start_web_session_in(c, id_hash, session))
    }

    fn web_session(&self, id_hash: &[u8]) -> Result<Option<WebSession>, StoreError> {
        self.read(|c| queue::web_session_in(c, id_hash))
    }

    fn end_web_session(&self, id_hash: &[u8]) -> Result<(), StoreError> {
        self.write(|c| queue::end_web_session_in(c, id_hash))
    }
}
