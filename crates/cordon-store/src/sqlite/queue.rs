//! The queue of background runs, their answers, and the people who give them, in SQLite. Each
//! function runs inside its caller's transaction.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use super::log::{append_in, head_in, sql_seq};
use crate::audit::kind;
use crate::queue::{
    AnswerRefused, Claimed, Lease, NewAnswer, NewRun, Parking, QueuedRun, RUN_COLUMNS, RunId, RunRow, RunState,
    WebSession,
};
use crate::request::RequestId;
use crate::{StoreError, now_ms};

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<QueuedRun> {
    let row = RunRow {
        id: r.get(0)?,
        created_ms: r.get(1)?,
        updated_ms: r.get(2)?,
        principal: r.get(3)?,
        kind: r.get(4)?,
        name: r.get(5)?,
        text: r.get(6)?,
        state: r.get(7)?,
        request: r.get(8)?,
        card: r.get(9)?,
        seal: r.get(10)?,
        deadline_ms: r.get(11)?,
        answer: r.get(12)?,
        answered_by: r.get(13)?,
        answered_ms: r.get(14)?,
        result: r.get(15)?,
        answer_mac: r.get(16)?,
        clearance: r.get(17)?,
    };
    Ok(row.into())
}

pub(super) fn run_in(c: &Connection, id: RunId) -> Result<Option<QueuedRun>, StoreError> {
    Ok(c.prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"))?
        .query_row([id.0], run_row)
        .optional()?)
}

pub(super) fn runs_in(c: &Connection, principal: Option<&str>, limit: usize) -> Result<Vec<QueuedRun>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {RUN_COLUMNS} FROM runs WHERE ?1 IS NULL OR principal = ?1 ORDER BY id DESC LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![principal, limit], run_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Queues a run, with its `run` row in the audit log.
pub(super) fn submit_in(c: &Connection, run: &NewRun<'_>) -> Result<RunId, StoreError> {
    let now = now_ms();
    let sql = "INSERT INTO runs (created_ms, updated_ms, principal, kind, name, text, state, lease_epoch, clearance) \
               VALUES (?1, ?1, ?2, ?3, ?4, ?5, 'queued', 0, ?6)";
    c.execute(sql, params![now, run.principal, run.kind.as_str(), run.name, run.text, run.clearance])?;
    let id = RunId(c.last_insert_rowid());
    let content = json!({ "run": id, "principal": run.principal, "kind": run.kind, "name": run.name });
    append_in(c, None, kind::RUN, &content.to_string())?;
    Ok(id)
}

/// Takes the next run there is work on for `owner`, leased for `lease_ms`: queued, answered,
/// past its deadline (answered `no` by the deadline, with its `answer` row), or left running by
/// a worker whose lease ran out.
pub(super) fn claim_in(c: &Connection, owner: &str, lease_ms: i64) -> Result<Option<Claimed>, StoreError> {
    let now = now_ms();
    let sql = "SELECT id, state, answer IS NULL FROM runs \
               WHERE state = 'queued' \
                  OR (state = 'waiting' AND (answer IS NOT NULL OR deadline_ms <= ?1)) \
                  OR (state = 'running' AND lease_until_ms < ?1) \
               ORDER BY updated_ms, id LIMIT 1";
    let found = c
        .prepare_cached(sql)?
        .query_row([now], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, bool>(2)?)))
        .optional()?;
    let Some((id, state, unanswered)) = found else { return Ok(None) };
    if state == "waiting" && unanswered {
        let sql =
            "UPDATE runs SET answer = 'no', answered_by = NULL, answered_ms = ?2, answer_mac = NULL WHERE id = ?1";
        c.execute(sql, params![id, now])?;
        let content = json!({ "run": id, "answer": "no", "by": null, "why": "the card's deadline passed" });
        append_in(c, None, kind::ANSWER, &content.to_string())?;
    }
    let sql = "UPDATE runs SET state = 'running', lease_owner = ?2, lease_until_ms = ?3, \
               lease_epoch = lease_epoch + 1, updated_ms = ?4 WHERE id = ?1 RETURNING lease_epoch";
    let epoch: i64 = c.query_row(sql, params![id, owner, now.saturating_add(lease_ms), now], |r| r.get(0))?;
    let run = run_in(c, RunId(id))?.ok_or_else(|| StoreError::Corrupt { detail: format!("run {id} vanished") })?;
    let saved: Option<Vec<u8>> = c.query_row("SELECT saved FROM runs WHERE id = ?1", [id], |r| r.get(0))?;
    let effects_since_saved = match run.request {
        Some(request) => {
            let sql = "SELECT count(*) FROM audit WHERE request = ?1 AND kind = 'effect' \
                       AND seq > coalesce((SELECT saved_seq FROM runs WHERE id = ?2), 0)";
            let n: i64 = c.query_row(sql, params![request.0, id], |r| r.get(0))?;
            u64::try_from(n).unwrap_or(0)
        }
        None => 0,
    };
    let lease = Lease { run: RunId(id), owner: owner.to_string(), epoch };
    Ok(Some(Claimed { run, lease, saved, resumed_after_crash: state == "running", effects_since_saved }))
}

/// Fails unless `lease` still holds its run.
fn held(c: &Connection, lease: &Lease) -> Result<(), StoreError> {
    let sql = "SELECT 1 FROM runs WHERE id = ?1 AND state = 'running' AND lease_owner = ?2 AND lease_epoch = ?3";
    let found = c.prepare_cached(sql)?.query_row(params![lease.run.0, lease.owner, lease.epoch], |_| Ok(()));
    found.optional()?.ok_or(StoreError::LeaseLost { run: lease.run })
}

pub(super) fn renew_in(c: &Connection, lease: &Lease, lease_ms: i64) -> Result<(), StoreError> {
    held(c, lease)?;
    let sql = "UPDATE runs SET lease_until_ms = ?2 WHERE id = ?1";
    c.execute(sql, params![lease.run.0, now_ms().saturating_add(lease_ms)])?;
    Ok(())
}

/// Notes the request a leased run is recorded as.
pub(super) fn started_in(c: &Connection, lease: &Lease, request: RequestId) -> Result<(), StoreError> {
    held(c, lease)?;
    c.execute("UPDATE runs SET request = ?2 WHERE id = ?1", params![lease.run.0, request.0])?;
    Ok(())
}

/// Parks a leased run at its card: the saved run, the card, its seal and deadline, and where
/// the audit log was, all at once; the lease ends.
pub(super) fn park_in(c: &Connection, lease: &Lease, parking: &Parking<'_>) -> Result<(), StoreError> {
    held(c, lease)?;
    let saved_seq = sql_seq(head_in(c)?.seq)?;
    let sql = "UPDATE runs SET state = 'waiting', request = ?2, saved = ?3, saved_seq = ?4, card = ?5, seal = ?6, \
               deadline_ms = ?7, answer = NULL, answered_by = NULL, answered_ms = NULL, answer_mac = NULL, lease_owner = NULL, \
               lease_until_ms = NULL, updated_ms = ?8 WHERE id = ?1";
    let p = parking;
    let card = serde_json::to_string(p.card)?;
    c.execute(sql, params![lease.run.0, p.request.0, p.saved, saved_seq, card, p.seal, p.deadline_ms, now_ms()])?;
    Ok(())
}

/// Ends a leased run: how it ended, and its report; the saved run is dropped.
pub(super) fn finish_in(
    c: &Connection,
    lease: &Lease,
    state: RunState,
    request: Option<RequestId>,
    result: &Value,
) -> Result<(), StoreError> {
    held(c, lease)?;
    let sql = "UPDATE runs SET state = ?2, request = coalesce(?3, request), result = ?4, saved = NULL, \
               lease_owner = NULL, lease_until_ms = NULL, updated_ms = ?5 WHERE id = ?1";
    let result = serde_json::to_string(result)?;
    c.execute(sql, params![lease.run.0, state.as_str(), request.map(|r| r.0), result, now_ms()])?;
    Ok(())
}

/// Takes an answer to the card run `id` waits on, once, with its audit row.
pub(super) fn answer_in(
    c: &Connection,
    id: RunId,
    given: &NewAnswer<'_>,
) -> Result<Result<(), AnswerRefused>, StoreError> {
    let NewAnswer { seal, by, answer, mac } = *given;
    let sql = "SELECT principal, state, seal, deadline_ms, answer IS NOT NULL, request FROM runs WHERE id = ?1";
    let row = c
        .query_row(sql, [id.0], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, bool>(4)?,
                r.get::<_, Option<i64>>(5)?,
            ))
        })
        .optional()?;
    let Some((principal, state, stored_seal, deadline, answered, request)) = row else {
        return Ok(Err(AnswerRefused::NoSuchRun));
    };
    let now = now_ms();
    let refused = if principal != by {
        Some(AnswerRefused::NotYours)
    } else if state != "waiting" || answered {
        Some(AnswerRefused::NotWaiting)
    } else if stored_seal.as_deref() != Some(seal) {
        Some(AnswerRefused::OtherCard)
    } else if deadline.is_some_and(|d| d <= now) {
        Some(AnswerRefused::TooLate)
    } else {
        None
    };
    if let Some(refused) = refused {
        return Ok(Err(refused));
    }
    let sql = "UPDATE runs SET answer = ?2, answered_by = ?3, answered_ms = ?4, updated_ms = ?4, answer_mac = ?5 \
               WHERE id = ?1";
    c.execute(sql, params![id.0, answer, by, now, mac])?;
    let content = json!({ "run": id, "request": request, "answer": answer, "by": by, "seal": seal });
    append_in(c, request.map(RequestId), kind::ANSWER, &content.to_string())?;
    Ok(Ok(()))
}

/// Adds a person who may sign in with the token whose hash is `token_hash`, with the `user`
/// row; a name already taken is refused.
pub(super) fn add_user_in(c: &Connection, name: &str, token_hash: &[u8]) -> Result<(), StoreError> {
    let taken = c.query_row("SELECT 1 FROM users WHERE name = ?1", [name], |_| Ok(())).optional()?;
    if taken.is_some() {
        return Err(StoreError::UserExists(name.to_string()));
    }
    let sql = "INSERT INTO users (name, token_hash, created_ms) VALUES (?1, ?2, ?3)";
    c.execute(sql, params![name, token_hash, now_ms()])?;
    append_in(c, None, kind::USER, &json!({ "user": name }).to_string())?;
    Ok(())
}

pub(super) fn user_by_token_in(c: &Connection, token_hash: &[u8]) -> Result<Option<String>, StoreError> {
    let sql = "SELECT name FROM users WHERE token_hash = ?1";
    Ok(c.prepare_cached(sql)?.query_row([token_hash], |r| r.get(0)).optional()?)
}

pub(super) fn start_web_session_in(c: &Connection, id_hash: &[u8], session: &WebSession) -> Result<(), StoreError> {
    let now = now_ms();
    c.execute("DELETE FROM web_sessions WHERE expires_ms <= ?1", [now])?;
    let sql = "INSERT INTO web_sessions (id_hash, user, csrf, expires_ms) VALUES (?1, ?2, ?3, ?4)";
    c.execute(sql, params![id_hash, session.user, session.csrf, session.expires_ms])?;
    Ok(())
}

pub(super) fn web_session_in(c: &Connection, id_hash: &[u8]) -> Result<Option<WebSession>, StoreError> {
    let sql = "SELECT user, csrf, expires_ms FROM web_sessions WHERE id_hash = ?1 AND expires_ms > ?2";
    let found = c.prepare_cached(sql)?.query_row(params![id_hash, now_ms()], |r| {
        Ok(WebSession { user: r.get(0)?, csrf: r.get(1)?, expires_ms: r.get(2)? })
    });
    Ok(found.optional()?)
}

pub(super) fn end_web_session_in(c: &Connection, id_hash: &[u8]) -> Result<(), StoreError> {
    c.execute("DELETE FROM web_sessions WHERE id_hash = ?1", [id_hash])?;
    Ok(())
}
