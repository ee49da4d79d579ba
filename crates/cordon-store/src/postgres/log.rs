//! The audit log's rows in PostgreSQL: reading the head, appending, reading rows back,
//! verifying. Each function runs inside its caller's transaction.
//!
//! Rows are chained exactly as SQLite's are (`crate::chain`: the same fields, the same hash),
//! so the same `Verifier` checks them, a checkpoint taken of one store reads the same, and an
//! archive of either verifies alike. An append takes the chain's advisory lock before it reads
//! the head (`Tx::lock_chain`): appends of every connection are serialised, and the primary
//! key on `seq` fails an insert that would fork the chain, should anything skip the lock.

use postgres::Row;

use super::conn::Tx;
use crate::StoreError;
use crate::audit::{AuditRow, kind};
use crate::chain::{BadRow, Checkpoint, Fields, Problem, RowHash, Verdict, Verifier, row_hash};
use crate::now_ms;
use crate::request::RequestId;

pub(super) const SELECT_ROW: &str = "SELECT seq, at_ms, kind, request, content, hash FROM audit";

pub(super) fn refuse_reserved(kind: &str) -> Result<(), StoreError> {
    if kind::RESERVED.contains(&kind) { Err(StoreError::ReservedKind(kind.into())) } else { Ok(()) }
}

pub(super) fn check_request(tx: &mut Tx<'_>, request: Option<RequestId>) -> Result<(), StoreError> {
    let Some(id) = request else { return Ok(()) };
    let found = tx.query_opt("SELECT 1 FROM requests WHERE id = $1", &[&id.0])?;
    found.map(|_| ()).ok_or(StoreError::NoSuchRequest(id))
}

pub(super) fn sql_seq(seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq).map_err(|_| StoreError::Corrupt { detail: format!("row number {seq} is out of range") })
}

/// The row the next one follows: the last row, or where the log starts if it has none.
pub(super) fn head_in(tx: &mut Tx<'_>) -> Result<Checkpoint, StoreError> {
    match tx.query_opt("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1", &[])? {
        Some(row) => checkpoint(row.try_get(0)?, row.try_get(1)?).map_err(StoreError::ChainBroken),
        None => start_in(tx),
    }
}

/// Where the log starts: the last archived row, or the empty log.
pub(super) fn start_in(tx: &mut Tx<'_>) -> Result<Checkpoint, StoreError> {
    match tx.query_opt("SELECT seq, hash FROM audit_start", &[])? {
        Some(row) => checkpoint(row.try_get(0)?, row.try_get(1)?).map_err(StoreError::ChainBroken),
        None => Ok(Checkpoint::START),
    }
}

fn checkpoint(seq: i64, hash: &[u8]) -> Result<Checkpoint, BadRow> {
    let seq = u64::try_from(seq).map_err(|_| BadRow { seq: 0, problem: Problem::Unexpected { found: seq } })?;
    let malformed = BadRow { seq, problem: Problem::Malformed { column: "hash" } };
    let hash: [u8; 32] = hash.try_into().map_err(|_| malformed)?;
    Ok(Checkpoint { seq, hash: RowHash(hash) })
}

/// Chains and inserts the row after `head`; returns the new head.
pub(super) fn insert_row(tx: &mut Tx<'_>, head: &Checkpoint, fields: &Fields<'_>) -> Result<Checkpoint, StoreError> {
    let seq = head.seq + 1;
    let hash = row_hash(&head.hash, seq, fields);
    let sql = "INSERT INTO audit (seq, at_ms, kind, request, content, hash) VALUES ($1, $2, $3, $4, $5, $6)";
    let hash_bytes: &[u8] = &hash.0;
    tx.execute(sql, &[&sql_seq(seq)?, &fields.at_ms, &fields.kind, &fields.request, &fields.content, &hash_bytes])?;
    Ok(Checkpoint { seq, hash })
}

/// Appends one row, chained from the head read under the chain's lock (taken here if the
/// transaction has not yet).
pub(super) fn append_in(
    tx: &mut Tx<'_>,
    request: Option<RequestId>,
    kind: &str,
    content: &str,
) -> Result<Checkpoint, StoreError> {
    tx.lock_chain()?;
    let head = head_in(tx)?;
    let fields = Fields { at_ms: now_ms(), kind, request: request.map(|r| r.0), content };
    insert_row(tx, &head, &fields)
}

/// A stored row's fields and hash, or the column that holds something the log never writes.
pub(super) fn stored(row: &Row) -> Result<(Fields<'_>, &[u8]), &'static str> {
    let at_ms = row.try_get(1).map_err(|_| "at_ms")?;
    let kind = row.try_get(2).map_err(|_| "kind")?;
    let request = row.try_get(3).map_err(|_| "request")?;
    let content = row.try_get(4).map_err(|_| "content")?;
    let hash = row.try_get(5).map_err(|_| "hash")?;
    Ok((Fields { at_ms, kind, request, content }, hash))
}

/// Verifies the whole log from its start.
pub(super) fn verify_in(tx: &mut Tx<'_>, start: Checkpoint) -> Result<Verdict, StoreError> {
    let mut verifier = Verifier::after(start);
    let mut broken = None;
    tx.for_each(&format!("{SELECT_ROW} ORDER BY seq"), &[], |row| {
        match verifier.check(row.try_get(0)?, stored(row)) {
            Ok(()) => Ok(true),
            Err(bad) => {
                broken = Some(bad);
                Ok(false)
            }
        }
    })?;
    Ok(broken.map_or_else(|| verifier.finish(), Verdict::Broken))
}

/// Reads rows as `AuditRow`s; one that cannot be is reported as a broken chain.
pub(super) fn audit_rows(rows: &[Row]) -> Result<Vec<AuditRow>, StoreError> {
    rows.iter().map(audit_row).collect()
}

fn audit_row(row: &Row) -> Result<AuditRow, StoreError> {
    let seq: i64 = row.try_get(0)?;
    let bad = |problem| StoreError::ChainBroken(BadRow { seq: u64::try_from(seq).unwrap_or(0), problem });
    let seq = u64::try_from(seq).map_err(|_| bad(Problem::Unexpected { found: seq }))?;
    let (fields, hash) = stored(row).map_err(|column| bad(Problem::Malformed { column }))?;
    let hash: [u8; 32] = hash.try_into().map_err(|_| bad(Problem::Malformed { column: "hash" }))?;
    Ok(AuditRow {
        seq,
        at_ms: fields.at_ms,
        kind: fields.kind.into(),
        request: fields.request.map(RequestId),
        content: fields.content.into(),
        hash: RowHash(hash),
    })
}
