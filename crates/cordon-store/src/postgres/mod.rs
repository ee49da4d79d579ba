//! The store on a PostgreSQL server, for several `cordon serve` processes on different
//! machines sharing one database: the same `Store`, with SQLite's semantics, except that its
//! audit log is one hash chain per principal (rows hashed as SQLite's, each after the last row
//! of its own chain), so that writers for different principals never wait for each other.
//! docs/design.md, "The store on many machines", is the design followed.
//!
//! - **Connections.** One connection per `PostgresStore`, behind a mutex and shared by the
//!   threads of a process, as `SqliteStore`'s is (a pool is a later step); a process that needs
//!   more opens more stores. A lost connection is opened again (see `conn`). Each held session
//!   has a connection of its own (see `sessions`). No TLS yet: reach the server over a Unix
//!   socket, a private network or a tunnel.
//! - **One audit chain per principal** (`chains`): a row is in the chain of its request's
//!   principal, its grant's, its run's, or its user's; rows of no principal (an `expire`, a note
//!   about no request) are in chain `""`. Every transaction that appends takes the writers' gate
//!   (an advisory lock, shared) as its first statement, then its chain's own advisory lock
//!   (`pg_advisory_xact_lock`) before it reads that chain's head and inserts, under
//!   `READ COMMITTED` (a claim or an answer locks its run's row first, see `queue`): appends to
//!   one chain are serialised from every machine, appends to others go on at once; the locks go
//!   at commit, or when a dead client's connection ends. The unique key on `(chain, prev_seq)`
//!   is the backstop. Rows are numbered by one sequence (`seq`, with gaps where an append
//!   rolled back or the server crashed), which orders `rows`, `show` and the rest.
//! - **Checkpoints** (`head`) are the highest `seq` and a root hash over every chain's last row,
//!   read with the writers' gate held exclusively; `verify_against` recomputes the root as of
//!   the checkpoint's row, so a chain cut back or rewritten is found whichever it is (see
//!   `chains`).
//! - **Archiving** is refused for now (`StoreError::Unsupported`): the archive file holds one
//!   chain numbered without gaps. Back the database up with PostgreSQL's tools instead.
//! - **Sessions** are held by advisory locks of their own connections, not by pids (see
//!   `sessions`).
//! - **The queue** takes runs with `FOR UPDATE SKIP LOCKED`, and times leases by the server's
//!   clock (see `queue`).
//! - **Times** in rows (`at_ms`, a card's deadline) are the writing machine's clock, as with
//!   SQLite; they are recorded, never used to order rows.

mod chains;
mod conn;
mod grants;
mod log;
mod queue;
mod schema;
mod sessions;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use self::conn::{Conn, Connector, Mode, Tx, host_name};
use self::log::{SELECT_ROW, append_in, audit_rows, check_request, head_in, refuse_reserved, sql_seq};
use self::sessions::Held;
use crate::audit::{
    Archived, AuditRow, Batch, EffectIntent, EffectStatus, Entry, GcReport, Lines, Outcome, OutcomeRow, PendingEffect,
    RequestLog, StatusRow, fold, kind,
};
use crate::chain::{Checkpoint, Fields, RowHash, Verdict};
use crate::grant::{Grant, GrantId, GrantQuery, NewGrant};
use crate::queue::{AnswerRefused, Claimed, Lease, NewAnswer, NewRun, Parking, QueuedRun, RunId, RunState, WebSession};
use crate::request::{NewRequest, Request, RequestId, Status};
use crate::session::{Holder, SessionInfo, SessionLock};
use crate::{Store, StoreError, now_ms};

/// The store in a PostgreSQL database.
pub struct PostgresStore {
    conn: Conn,
    held: Held,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("target", &self.conn.connector.target).finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the store at `url` (`postgresql://user@host:port/db`, or key-value pairs:
    /// `host=/run/postgresql dbname=cordon`), creating its tables in the connection's schema
    /// if it has none, migrating older ones. A schema holding another program's tables, or
    /// tables of a newer Cordon, is refused.
    pub fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        let connector = Connector::parse(url)?;
        let mut client = connector.connect()?;
        schema::prepare(&mut client).map_err(|e| connector.failed(e))?;
        Ok(PostgresStore { conn: Conn::new(connector, client), held: Held::default() })
    }

    /// Where the store is: the server, database and user (never a password).
    pub fn target(&self) -> &str {
        &self.conn.connector.target
    }

    /// The schema version this crate writes in PostgreSQL (its own count, not SQLite's).
    pub const SCHEMA_VERSION: u32 = schema::VERSION;

    /// The hash the first row of `chain` follows (a principal's name, `""` for rows of none):
    /// for checking a chain's rows elsewhere with `crate::chain::row_hash`.
    pub fn chain_start_hash(chain: &str) -> RowHash {
        log::start_hash(chain)
    }

    /// The root hash `head` gives, over each chain's name and last row (in any order).
    pub fn root_hash<'a>(heads: impl IntoIterator<Item = (&'a str, Checkpoint)>) -> RowHash {
        chains::root_hash(heads)
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
        self.chained(|tx| {
            let chain = check_request(tx, request)?;
            tx.lock_chain(&chain)?;
            let mut head = head_in(tx, &chain)?;
            for content in contents {
                let content = serde_json::to_string(&content)?;
                let fields = Fields { at_ms: now_ms(), kind, request: request.map(|r| r.0), content: &content };
                head = log::insert_row(tx, &chain, &head, &fields)?;
            }
            Ok(head)
        })
    }

    fn read<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.conn.run(Mode::Read, f)
    }

    fn write<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.conn.run(Mode::Write, f)
    }

    /// A write that appends to the audit log: it holds the writers' gate (shared) from its start.
    fn chained<T>(&self, f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.conn.run(Mode::Chained, f)
    }
}

/// Appends `events` to the request's transcript; returns the last one's number there. The
/// request's row is locked: appends to one transcript are numbered one at a time.
fn transcript_in(tx: &mut Tx<'_>, request: RequestId, lines: &Lines) -> Result<u64, StoreError> {
    let found = tx.query_opt("SELECT 1 FROM requests WHERE id = $1 FOR NO KEY UPDATE", &[&request.0])?;
    found.ok_or(StoreError::NoSuchRequest(request))?;
    let sql = "SELECT coalesce(max(seq), 0)::bigint FROM transcript WHERE request = $1";
    let last: i64 = tx.query_one(sql, &[&request.0])?.try_get(0)?;
    let at_ms = now_ms();
    let mut seq = last;
    for event in lines.iter() {
        seq += 1;
        let sql = "INSERT INTO transcript (request, seq, at_ms, event) VALUES ($1, $2, $3, $4)";
        tx.execute(sql, &[&request.0, &seq, &at_ms, &event])?;
    }
    Ok(u64::try_from(seq).unwrap_or(0))
}

const SELECT_REQUEST: &str = "SELECT id, started_ms, text, principal, session, status FROM requests";

fn request_row(r: &postgres::Row) -> Result<Request, StoreError> {
    Ok(Request {
        id: RequestId(r.try_get(0)?),
        started_ms: r.try_get(1)?,
        text: r.try_get(2)?,
        principal: r.try_get(3)?,
        session: r.try_get(4)?,
        status: Status::parse(r.try_get(5)?),
    })
}

/// An intact chain's verdict, broken instead if the grants table and the chain disagree.
fn with_grants(tx: &mut Tx<'_>, verdict: Verdict) -> Result<Verdict, StoreError> {
    match (&verdict, grants::verify_in(tx)?) {
        (Verdict::Intact { .. }, Some(bad)) => Ok(Verdict::Broken(bad)),
        _ => Ok(verdict),
    }
}

/// The process this is, as requests name it: its host, pid and start time.
fn me() -> (Option<String>, i64, Option<i64>) {
    let me = Holder::current();
    (host_name(), i64::from(me.pid), me.started.and_then(|s| i64::try_from(s).ok()))
}

impl Store for PostgresStore {
    fn lock_session(&self, name: &str) -> Result<SessionLock, StoreError> {
        sessions::lock(&self.conn, &self.held, name)
    }

    fn load_session(&self, name: &str) -> Result<Option<Value>, StoreError> {
        let state: Option<String> =
            self.read(|tx| match tx.query_opt("SELECT state FROM sessions WHERE name = $1", &[&name])? {
                Some(row) => Ok(row.try_get(0)?),
                None => Ok(None),
            })?;
        Ok(state.map(|s| serde_json::from_str(&s)).transpose()?)
    }

    fn save_session(&self, lock: &SessionLock, state: &Value) -> Result<(), StoreError> {
        sessions::save(&self.held, lock, &serde_json::to_string(state)?)
    }

    fn unlock_session(&self, lock: SessionLock) -> Result<(), StoreError> {
        sessions::unlock(&self.conn, &self.held, lock)
    }

    fn force_unlock_session(&self, name: &str) -> Result<bool, StoreError> {
        sessions::force_unlock(&self.conn, name)
    }

    fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        sessions::list(&self.conn)
    }

    fn add_grant(&self, grant: &NewGrant) -> Result<Grant, StoreError> {
        self.chained(|tx| grants::add_in(tx, grant))
    }

    fn grants(&self) -> Result<Vec<Grant>, StoreError> {
        self.read(|tx| grants::live_in(tx, None))
    }

    fn revoke_grant(&self, id: GrantId) -> Result<(), StoreError> {
        self.chained(|tx| grants::revoke_in(tx, id))
    }

    fn find_grant(&self, query: &GrantQuery<'_>) -> Result<Option<Grant>, StoreError> {
        if self.read(|tx| grants::any_expired_in(tx, now_ms()))? {
            self.chained(|tx| grants::expire_in(tx, now_ms()))?;
        }
        let candidates = self.read(|tx| grants::live_in(tx, Some((query.tool, query.label_class))))?;
        let now = now_ms();
        Ok(candidates.into_iter().find(|g| g.covers(query, now)))
    }

    fn begin_request(&self, request: &NewRequest<'_>) -> Result<RequestId, StoreError> {
        let (host, pid, started) = me();
        self.chained(|tx| {
            let sql = "INSERT INTO requests (started_ms, text, principal, session, status, host, pid, pid_started) \
                       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id";
            let r = request;
            let status = Status::Running.as_str();
            let row =
                tx.query_one(sql, &[&now_ms(), &r.text, &r.principal, &r.session, &status, &host, &pid, &started])?;
            let id = RequestId(row.try_get(0)?);
            let content = json!({ "text": r.text, "principal": r.principal, "session": r.session });
            let first = append_in(tx, r.principal, Some(id), kind::REQUEST, &content.to_string())?;
            tx.execute("UPDATE requests SET first_seq = $2 WHERE id = $1", &[&id.0, &sql_seq(first.seq)?])?;
            Ok(id)
        })
    }

    fn set_status(&self, id: RequestId, status: Status) -> Result<(), StoreError> {
        self.chained(|tx| {
            // The chain's lock before the request's row, as every writer takes them.
            let chain = check_request(tx, Some(id))?;
            tx.lock_chain(&chain)?;
            tx.execute("UPDATE requests SET status = $2 WHERE id = $1", &[&id.0, &status.as_str()])?;
            append_in(tx, &chain, Some(id), kind::STATUS, &serde_json::to_string(&StatusRow { status })?)?;
            Ok(())
        })
    }

    fn interrupt_own_requests(&self) -> Result<Vec<RequestId>, StoreError> {
        let (host, pid, started) = me();
        self.chained(|tx| {
            let sql = "SELECT id, principal FROM requests WHERE status IN ('running', 'waiting') AND pid = $1 \
                       AND pid_started IS NOT DISTINCT FROM $2 AND host IS NOT DISTINCT FROM $3 ORDER BY id";
            let found: Vec<(RequestId, String)> = tx
                .query(sql, &[&pid, &started, &host])?
                .iter()
                .map(|r| Ok((RequestId(r.try_get(0)?), r.try_get(1)?)))
                .collect::<Result<_, StoreError>>()?;
            // Several chains: their locks in the order of their names, as every such writer takes
            // them, and before the requests' rows.
            let mut chains: Vec<&str> = found.iter().map(|(_, c)| c.as_str()).collect();
            chains.sort_unstable();
            chains.dedup();
            for chain in chains {
                tx.lock_chain(chain)?;
            }
            let status = Status::Interrupted;
            for (id, chain) in &found {
                tx.execute("UPDATE requests SET status = $2 WHERE id = $1", &[&id.0, &status.as_str()])?;
                append_in(tx, chain, Some(*id), kind::STATUS, &serde_json::to_string(&StatusRow { status })?)?;
            }
            Ok(found.into_iter().map(|(id, _)| id).collect())
        })
    }

    fn requests(&self, limit: usize) -> Result<Vec<Request>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(|tx| {
            let rows = tx.query(&format!("{SELECT_REQUEST} ORDER BY id DESC LIMIT $1"), &[&limit])?;
            rows.iter().map(request_row).collect()
        })
    }

    fn append_transcript_batch(&self, request: RequestId, events: &[Value]) -> Result<u64, StoreError> {
        let lines = Lines::of(events)?;
        self.write(|tx| transcript_in(tx, request, &lines))
    }

    fn transcript(&self, request: RequestId) -> Result<Vec<Value>, StoreError> {
        self.read(|tx| {
            let rows = tx.query("SELECT event FROM transcript WHERE request = $1 ORDER BY seq", &[&request.0])?;
            rows.iter().map(|r| Ok(serde_json::from_str(r.try_get(0)?)?)).collect()
        })
    }

    fn append(&self, request: Option<RequestId>, kind: &str, content: &Value) -> Result<Checkpoint, StoreError> {
        refuse_reserved(kind)?;
        let content = serde_json::to_string(content)?;
        self.chained(|tx| {
            let chain = check_request(tx, request)?;
            append_in(tx, &chain, request, kind, &content)
        })
    }

    fn begin_effect(&self, request: Option<RequestId>, effect: &EffectIntent) -> Result<PendingEffect, StoreError> {
        let content = serde_json::to_string(effect)?;
        self.chained(|tx| {
            let chain = check_request(tx, request)?;
            let row = append_in(tx, &chain, request, kind::EFFECT, &content)?;
            Ok(PendingEffect { seq: row.seq, request })
        })
    }

    fn end_effect(&self, effect: PendingEffect, outcome: &Outcome) -> Result<Checkpoint, StoreError> {
        let content = serde_json::to_string(&OutcomeRow { effect: effect.seq, outcome: outcome.clone() })?;
        self.chained(|tx| {
            let chain = check_request(tx, effect.request)?;
            append_in(tx, &chain, effect.request, kind::OUTCOME, &content)
        })
    }

    fn record(
        &self,
        request: RequestId,
        batch: &Batch,
        effect: Option<&EffectIntent>,
    ) -> Result<Option<PendingEffect>, StoreError> {
        let rows = batch.rows.iter().map(|row| row.content(request)).collect::<Result<Vec<_>, _>>()?;
        let effect = effect.map(serde_json::to_string).transpose()?;
        self.chained(|tx| {
            // The chain's lock before the request's row, as every writer takes them.
            let chain = check_request(tx, Some(request))?;
            tx.lock_chain(&chain)?;
            if !batch.transcript.is_empty() {
                transcript_in(tx, request, &batch.transcript)?;
            }
            for (kind, content) in &rows {
                append_in(tx, &chain, Some(request), kind, content)?;
            }
            let Some(effect) = effect else { return Ok(None) };
            let row = append_in(tx, &chain, Some(request), kind::EFFECT, &effect)?;
            Ok(Some(PendingEffect { seq: row.seq, request: Some(request) }))
        })
    }

    /// The highest row and the root hash over every chain's last row (see `chains`), read with
    /// no append under way: a checkpoint of every chain.
    fn head(&self) -> Result<Checkpoint, StoreError> {
        self.conn.run(Mode::Still, chains::head_in)
    }

    fn verify(&self) -> Result<Verdict, StoreError> {
        self.read(|tx| {
            let verdict = chains::verify_in(tx)?;
            with_grants(tx, verdict)
        })
    }

    fn verify_against(&self, checkpoint: &Checkpoint) -> Result<Verdict, StoreError> {
        self.read(|tx| {
            let verdict = chains::verify_against_in(tx, checkpoint)?;
            with_grants(tx, verdict)
        })
    }

    fn rows(&self, from: u64, limit: usize) -> Result<Vec<AuditRow>, StoreError> {
        let (from, limit) = (i64::try_from(from).unwrap_or(i64::MAX), i64::try_from(limit).unwrap_or(i64::MAX));
        self.read(|tx| {
            audit_rows(&tx.query(&format!("{SELECT_ROW} WHERE seq >= $1 ORDER BY seq LIMIT $2"), &[&from, &limit])?)
        })
    }

    fn show(&self, request: RequestId) -> Result<RequestLog, StoreError> {
        self.read(|tx| {
            let found = tx.query_opt(&format!("{SELECT_REQUEST} WHERE id = $1"), &[&request.0])?;
            let found = found.as_ref().map(request_row).transpose()?.ok_or(StoreError::NoSuchRequest(request))?;
            let first: Option<i64> =
                tx.query_one("SELECT first_seq FROM requests WHERE id = $1", &[&request.0])?.try_get(0)?;
            let sql = format!("{SELECT_ROW} WHERE seq >= $1 AND request = $2 ORDER BY seq");
            let rows = audit_rows(&tx.query(&sql, &[&first.unwrap_or(0), &request.0])?)?;
            Ok(RequestLog { request: found, entries: fold(rows) })
        })
    }

    fn unknown_outcomes(&self) -> Result<Vec<Entry>, StoreError> {
        let rows = self.read(|tx| {
            let sql = format!("{SELECT_ROW} WHERE kind IN ($1, $2) ORDER BY seq");
            audit_rows(&tx.query(&sql, &[&kind::EFFECT, &kind::OUTCOME])?)
        })?;
        Ok(fold(rows).into_iter().filter(|e| e.outcome == Some(EffectStatus::Unknown)).collect())
    }

    fn gc(&self, older_than: Duration) -> Result<GcReport, StoreError> {
        let cutoff = now_ms().saturating_sub(i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX));
        self.write(|tx| {
            let old = "request IN (SELECT id FROM requests WHERE started_ms < $1)";
            let sql = format!("SELECT count(DISTINCT request) FROM transcript WHERE {old}");
            let requests: i64 = tx.query_one(&sql, &[&cutoff])?.try_get(0)?;
            let events = tx.execute(&format!("DELETE FROM transcript WHERE {old}"), &[&cutoff])?;
            Ok(GcReport { requests: u64::try_from(requests).unwrap_or(0), events })
        })
    }

    /// Refused for now: an archive file holds one chain, numbered without gaps.
    fn archive(&self, _path: &Path, _through: u64) -> Result<Archived, StoreError> {
        Err(StoreError::Unsupported(
            "archiving a PostgreSQL store: its audit log is one chain per principal, and an archive file holds \
             one; back the database up with PostgreSQL's tools instead"
                .into(),
        ))
    }

    fn submit_run(&self, run: &NewRun<'_>) -> Result<RunId, StoreError> {
        self.chained(|tx| queue::submit_in(tx, run))
    }

    fn claim_run(&self, owner: &str, lease_ms: i64) -> Result<Option<Claimed>, StoreError> {
        // The run's row is locked before the chain's (to write a passed deadline's answer).
        self.write(|tx| queue::claim_in(tx, owner, lease_ms))
    }

    fn renew_lease(&self, lease: &Lease, lease_ms: i64) -> Result<(), StoreError> {
        self.write(|tx| queue::renew_in(tx, lease, lease_ms))
    }

    fn run_started(&self, lease: &Lease, request: RequestId) -> Result<(), StoreError> {
        self.write(|tx| queue::started_in(tx, lease, request))
    }

    fn park_run(&self, lease: &Lease, parking: &Parking<'_>) -> Result<(), StoreError> {
        self.write(|tx| queue::park_in(tx, lease, parking))
    }

    fn finish_run(
        &self,
        lease: &Lease,
        state: RunState,
        request: Option<RequestId>,
        result: &Value,
    ) -> Result<(), StoreError> {
        self.write(|tx| queue::finish_in(tx, lease, state, request, result))
    }

    fn answer_run(&self, run: RunId, answer: &NewAnswer<'_>) -> Result<Result<(), AnswerRefused>, StoreError> {
        // The run's row is locked before the chain's.
        self.write(|tx| queue::answer_in(tx, run, answer))
    }

    fn queued_run(&self, run: RunId) -> Result<Option<QueuedRun>, StoreError> {
        self.read(|tx| queue::run_in(tx, run))
    }

    fn queued_runs(&self, principal: Option<&str>, limit: usize) -> Result<Vec<QueuedRun>, StoreError> {
        self.read(|tx| queue::runs_in(tx, principal, limit))
    }

    fn add_user(&self, name: &str, token_hash: &[u8]) -> Result<(), StoreError> {
        self.chained(|tx| queue::add_user_in(tx, name, token_hash))
    }

    fn user_by_token(&self, token_hash: &[u8]) -> Result<Option<String>, StoreError> {
        self.read(|tx| queue::user_by_token_in(tx, token_hash))
    }

    fn start_web_session(&self, id_hash: &[u8], session: &WebSession) -> Result<(), StoreError> {
        self.write(|tx| queue::start_web_session_in(tx, id_hash, session))
    }

    fn web_session(&self, id_hash: &[u8]) -> Result<Option<WebSession>, StoreError> {
        self.read(|tx| queue::web_session_in(tx, id_hash))
    }

    fn end_web_session(&self, id_hash: &[u8]) -> Result<(), StoreError> {
        self.write(|tx| queue::end_web_session_in(tx, id_hash))
    }
}
