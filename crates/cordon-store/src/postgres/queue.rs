//! The queue of background runs, their answers, and the people who give them, in PostgreSQL,
//! with SQLite's semantics (`crate::queue`). Each function runs inside its caller's transaction.
//!
//! Workers on many machines share the queue. `claim_run` takes the next run with
//! `FOR UPDATE SKIP LOCKED`: a run another worker is claiming is passed over, never taken twice.
//! Every write under a lease locks the run's row first and checks the lease there, so a worker
//! whose lease was taken over meanwhile fails with `LeaseLost`. An answer locks the run's row,
//! so of two answers at once the second finds the first and is refused. Leases are timed by the
//! database server's clock, one clock for every worker; a card's deadline, set by the worker
//! that parked it, is compared with the clock of whoever answers or claims, as in SQLite.
//!
//! A run's rows (`run`, `answer`) are in its principal's chain. Locks are taken in one order: a
//! run's row, then the writers' gate and the chain's lock (to append); no transaction holding
//! the gate waits for a run's row.

use postgres::Row;
use serde_json::{Value, json};

use super::conn::Tx;
use super::log::{append_in, last_seq_in, sql_seq};
use crate::audit::kind;
use crate::queue::{
    AnswerRefused, Claimed, Lease, NewAnswer, NewRun, Parking, QueuedRun, RUN_COLUMNS, RunId, RunRow, RunState,
    WebSession,
};
use crate::request::RequestId;
use crate::{StoreError, now_ms};

/// The database server's time, in Unix milliseconds: the clock of leases.
const DB_NOW: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

fn run_row(r: &Row) -> Result<QueuedRun, StoreError> {
    let row = RunRow {
        id: r.try_get(0)?,
        created_ms: r.try_get(1)?,
        updated_ms: r.try_get(2)?,
        principal: r.try_get(3)?,
        kind: r.try_get(4)?,
        name: r.try_get(5)?,
        text: r.try_get(6)?,
        state: r.try_get(7)?,
        request: r.try_get(8)?,
        card: r.try_get(9)?,
        seal: r.try_get(10)?,
        deadline_ms: r.try_get(11)?,
        answer: r.try_get(12)?,
        answered_by: r.try_get(13)?,
        answered_ms: r.try_get(14)?,
        result: r.try_get(15)?,
        answer_mac: r.try_get(16)?,
        clearance: r.try_get(17)?,
    };
    Ok(row.into())
}

pub(super) fn run_in(tx: &mut Tx<'_>, id: RunId) -> Result<Option<QueuedRun>, StoreError> {
    tx.query_opt(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"), &[&id.0])?.as_ref().map(run_row).transpose()
}

pub(super) fn runs_in(tx: &mut Tx<'_>, principal: Option<&str>, limit: usize) -> Result<Vec<QueuedRun>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let sql =
        format!("SELECT {RUN_COLUMNS} FROM runs WHERE $1::text IS NULL OR principal = $1 ORDER BY id DESC LIMIT $2");
    tx.query(&sql, &[&principal, &limit])?.iter().map(run_row).collect()
}

/// Queues a run, with its `run` row in the audit log.
pub(super) fn submit_in(tx: &mut Tx<'_>, run: &NewRun<'_>) -> Result<RunId, StoreError> {
    let sql = "INSERT INTO runs (created_ms, updated_ms, principal, kind, name, text, state, lease_epoch, clearance) \
               VALUES ($1, $1, $2, $3, $4, $5, 'queued', 0, $6) RETURNING id";
    let row =
        tx.query_one(sql, &[&now_ms(), &run.principal, &run.kind.as_str(), &run.name, &run.text, &run.clearance])?;
    let id = RunId(row.try_get(0)?);
    let content = json!({ "run": id, "principal": run.principal, "kind": run.kind, "name": run.name });
    append_in(tx, run.principal, None, kind::RUN, &content.to_string())?;
    Ok(id)
}

/// Takes the next run there is work on for `owner`, leased for `lease_ms`: queued, answered,
/// past its deadline (answered `no` by the deadline, with its `answer` row), or left running by
/// a worker whose lease ran out.
pub(super) fn claim_in(tx: &mut Tx<'_>, owner: &str, lease_ms: i64) -> Result<Option<Claimed>, StoreError> {
    let now = now_ms();
    let sql = format!(
        "SELECT id, state, answer IS NULL, principal FROM runs \
         WHERE state = 'queued' \
            OR (state = 'waiting' AND (answer IS NOT NULL OR deadline_ms <= $1)) \
            OR (state = 'running' AND lease_until_ms < {DB_NOW}) \
         ORDER BY updated_ms, id LIMIT 1 FOR UPDATE SKIP LOCKED"
    );
    let Some(found) = tx.query_opt(&sql, &[&now])? else { return Ok(None) };
    let (id, state, unanswered): (i64, String, bool) = (found.try_get(0)?, found.try_get(1)?, found.try_get(2)?);
    let principal: &str = found.try_get(3)?;
    if state == "waiting" && unanswered {
        let sql =
            "UPDATE runs SET answer = 'no', answered_by = NULL, answered_ms = $2, answer_mac = NULL WHERE id = $1";
        tx.execute(sql, &[&id, &now])?;
        let content = json!({ "run": id, "answer": "no", "by": null, "why": "the card's deadline passed" });
        append_in(tx, principal, None, kind::ANSWER, &content.to_string())?;
    }
    let sql = format!(
        "UPDATE runs SET state = 'running', lease_owner = $2, lease_until_ms = {DB_NOW} + $3, \
         lease_epoch = lease_epoch + 1, updated_ms = $4 WHERE id = $1 RETURNING lease_epoch, saved"
    );
    let updated = tx.query_one(&sql, &[&id, &owner, &lease_ms, &now])?;
    let (epoch, saved): (i64, Option<Vec<u8>>) = (updated.try_get(0)?, updated.try_get(1)?);
    let run = run_in(tx, RunId(id))?.ok_or_else(|| StoreError::Corrupt { detail: format!("run {id} vanished") })?;
    let effects_since_saved = match run.request {
        Some(request) => {
            let sql = "SELECT count(*) FROM audit WHERE request = $1 AND kind = 'effect' \
                       AND seq > coalesce((SELECT saved_seq FROM runs WHERE id = $2), 0)";
            let n: i64 = tx.query_one(sql, &[&request.0, &id])?.try_get(0)?;
            u64::try_from(n).unwrap_or(0)
        }
        None => 0,
    };
    let lease = Lease { run: RunId(id), owner: owner.to_string(), epoch };
    Ok(Some(Claimed { run, lease, saved, resumed_after_crash: state == "running", effects_since_saved }))
}

/// Locks the run's row, and fails unless `lease` still holds it.
fn held(tx: &mut Tx<'_>, lease: &Lease) -> Result<(), StoreError> {
    let sql = "SELECT 1 FROM runs WHERE id = $1 AND state = 'running' AND lease_owner = $2 AND lease_epoch = $3 \
               FOR UPDATE";
    let found = tx.query_opt(sql, &[&lease.run.0, &lease.owner, &lease.epoch])?;
    found.map(|_| ()).ok_or(StoreError::LeaseLost { run: lease.run })
}

pub(super) fn renew_in(tx: &mut Tx<'_>, lease: &Lease, lease_ms: i64) -> Result<(), StoreError> {
    held(tx, lease)?;
    tx.execute(&format!("UPDATE runs SET lease_until_ms = {DB_NOW} + $2 WHERE id = $1"), &[&lease.run.0, &lease_ms])?;
    Ok(())
}

/// Notes the request a leased run is recorded as.
pub(super) fn started_in(tx: &mut Tx<'_>, lease: &Lease, request: RequestId) -> Result<(), StoreError> {
    held(tx, lease)?;
    tx.execute("UPDATE runs SET request = $2 WHERE id = $1", &[&lease.run.0, &request.0])?;
    Ok(())
}

/// Parks a leased run at its card: the saved run, the card, its seal and deadline, and where
/// the audit log was, all at once; the lease ends.
pub(super) fn park_in(tx: &mut Tx<'_>, lease: &Lease, parking: &Parking<'_>) -> Result<(), StoreError> {
    held(tx, lease)?;
    let saved_seq = sql_seq(last_seq_in(tx)?)?;
    let sql = "UPDATE runs SET state = 'waiting', request = $2, saved = $3, saved_seq = $4, card = $5, seal = $6, \
               deadline_ms = $7, answer = NULL, answered_by = NULL, answered_ms = NULL, answer_mac = NULL, \
               lease_owner = NULL, lease_until_ms = NULL, updated_ms = $8 WHERE id = $1";
    let p = parking;
    let card = serde_json::to_string(p.card)?;
    tx.execute(sql, &[&lease.run.0, &p.request.0, &p.saved, &saved_seq, &card, &p.seal, &p.deadline_ms, &now_ms()])?;
    Ok(())
}

/// Ends a leased run: how it ended, and its report; the saved run is dropped.
pub(super) fn finish_in(
    tx: &mut Tx<'_>,
    lease: &Lease,
    state: RunState,
    request: Option<RequestId>,
    result: &Value,
) -> Result<(), StoreError> {
    held(tx, lease)?;
    let sql = "UPDATE runs SET state = $2, request = coalesce($3, request), result = $4, saved = NULL, \
               lease_owner = NULL, lease_until_ms = NULL, updated_ms = $5 WHERE id = $1";
    let result = serde_json::to_string(result)?;
    tx.execute(sql, &[&lease.run.0, &state.as_str(), &request.map(|r| r.0), &result, &now_ms()])?;
    Ok(())
}

/// Takes an answer to the card run `id` waits on, once, with its audit row: the run's row is
/// locked first, then the chain's.
pub(super) fn answer_in(
    tx: &mut Tx<'_>,
    id: RunId,
    given: &NewAnswer<'_>,
) -> Result<Result<(), AnswerRefused>, StoreError> {
    let NewAnswer { seal, by, answer, mac } = *given;
    let sql = "SELECT principal, state, seal, deadline_ms, answer IS NOT NULL, request FROM runs WHERE id = $1 \
               FOR UPDATE";
    let Some(row) = tx.query_opt(sql, &[&id.0])? else { return Ok(Err(AnswerRefused::NoSuchRun)) };
    let principal: &str = row.try_get(0)?;
    let state: &str = row.try_get(1)?;
    let stored_seal: Option<&str> = row.try_get(2)?;
    let deadline: Option<i64> = row.try_get(3)?;
    let answered: bool = row.try_get(4)?;
    let request: Option<i64> = row.try_get(5)?;
    let now = now_ms();
    let refused = if principal != by {
        Some(AnswerRefused::NotYours)
    } else if state != "waiting" || answered {
        Some(AnswerRefused::NotWaiting)
    } else if stored_seal != Some(seal) {
        Some(AnswerRefused::OtherCard)
    } else if deadline.is_some_and(|d| d <= now) {
        Some(AnswerRefused::TooLate)
    } else {
        None
    };
    if let Some(refused) = refused {
        return Ok(Err(refused));
    }
    let sql = "UPDATE runs SET answer = $2, answered_by = $3, answered_ms = $4, updated_ms = $4, answer_mac = $5 \
               WHERE id = $1";
    tx.execute(sql, &[&id.0, &answer, &by, &now, &mac])?;
    let content = json!({ "run": id, "request": request, "answer": answer, "by": by, "seal": seal });
    append_in(tx, principal, request.map(RequestId), kind::ANSWER, &content.to_string())?;
    Ok(Ok(()))
}

/// Adds a person who may sign in with the token whose hash is `token_hash`, with the `user`
/// row, in the chain of that name; a name already taken is refused. The chain's lock is taken
/// first: adding users of one name is serialised, so the name is checked against every one
/// committed.
pub(super) fn add_user_in(tx: &mut Tx<'_>, name: &str, token_hash: &[u8]) -> Result<(), StoreError> {
    tx.lock_chain(name)?;
    if tx.query_opt("SELECT 1 FROM users WHERE name = $1", &[&name])?.is_some() {
        return Err(StoreError::UserExists(name.to_string()));
    }
    let sql = "INSERT INTO users (name, token_hash, created_ms) VALUES ($1, $2, $3)";
    tx.execute(sql, &[&name, &token_hash, &now_ms()])?;
    append_in(tx, name, None, kind::USER, &json!({ "user": name }).to_string())?;
    Ok(())
}

pub(super) fn user_by_token_in(tx: &mut Tx<'_>, token_hash: &[u8]) -> Result<Option<String>, StoreError> {
    let found = tx.query_opt("SELECT name FROM users WHERE token_hash = $1", &[&token_hash])?;
    Ok(found.map(|r| r.try_get(0)).transpose()?)
}

pub(super) fn start_web_session_in(tx: &mut Tx<'_>, id_hash: &[u8], session: &WebSession) -> Result<(), StoreError> {
    tx.execute("DELETE FROM web_sessions WHERE expires_ms <= $1", &[&now_ms()])?;
    let sql = "INSERT INTO web_sessions (id_hash, user_name, csrf, expires_ms) VALUES ($1, $2, $3, $4)";
    tx.execute(sql, &[&id_hash, &session.user, &session.csrf, &session.expires_ms])?;
    Ok(())
}

pub(super) fn web_session_in(tx: &mut Tx<'_>, id_hash: &[u8]) -> Result<Option<WebSession>, StoreError> {
    let sql = "SELECT user_name, csrf, expires_ms FROM web_sessions WHERE id_hash = $1 AND expires_ms > $2";
    let Some(r) = tx.query_opt(sql, &[&id_hash, &now_ms()])? else { return Ok(None) };
    Ok(Some(WebSession { user: r.try_get(0)?, csrf: r.try_get(1)?, expires_ms: r.try_get(2)? }))
}

pub(super) fn end_web_session_in(tx: &mut Tx<'_>, id_hash: &[u8]) -> Result<(), StoreError> {
    tx.execute("DELETE FROM web_sessions WHERE id_hash = $1", &[&id_hash])?;
    Ok(())
}
