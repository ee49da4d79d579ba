//! The audit log's rows in PostgreSQL: where each chain starts, reading a chain's head,
//! appending, reading rows back (`chains` verifies them). Each function runs inside its
//! caller's transaction.
//!
//! Rows are hashed as SQLite's are (`crate::chain::row_hash`: the same fields, the same hash),
//! each after the last row of its own chain, one chain per principal (see `chains`). An append
//! takes its chain's advisory lock before it reads the chain's head (`Tx::lock_chain`): appends
//! to one chain are serialised, those to other chains go on at once, and the unique key on
//! `(chain, prev_seq)` fails an insert that would fork a chain, should anything skip the lock.

use postgres::Row;
use sha2::{Digest, Sha256};

use super::conn::Tx;
use crate::StoreError;
use crate::audit::{AuditRow, kind};
use crate::chain::{BadRow, Checkpoint, Fields, Problem, RowHash, row_hash};
use crate::now_ms;
use crate::request::RequestId;

/// Separates the start hashes of chains from any other use of SHA-256.
const START_DOMAIN: &[u8] = b"cordon-audit-chain-v1\0";

pub(super) const SELECT_ROW: &str = "SELECT seq, at_ms, kind, request, content, hash FROM audit";

pub(super) fn refuse_reserved(kind: &str) -> Result<(), StoreError> {
    if kind::RESERVED.contains(&kind) { Err(StoreError::ReservedKind(kind.into())) } else { Ok(()) }
}

/// The chain of a row about `request`: its principal's (`""` for no request); an unknown
/// request is refused.
pub(super) fn check_request(tx: &mut Tx<'_>, request: Option<RequestId>) -> Result<String, StoreError> {
    let Some(id) = request else { return Ok(String::new()) };
    let found = tx.query_opt("SELECT principal FROM requests WHERE id = $1", &[&id.0])?;
    Ok(found.ok_or(StoreError::NoSuchRequest(id))?.try_get(0)?)
}

pub(super) fn sql_seq(seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq).map_err(|_| StoreError::Corrupt { detail: format!("row number {seq} is out of range") })
}

/// The hash a chain's first row follows: zeros for `""` (SQLite's chain), else SHA-256 over a
/// domain tag and the chain's name.
pub(super) fn start_hash(chain: &str) -> RowHash {
    if chain.is_empty() {
        return RowHash::ZERO;
    }
    let mut h = Sha256::new();
    h.update(START_DOMAIN);
    h.update(chain.as_bytes());
    RowHash(h.finalize().into())
}

/// Where `chain` starts: before its first row, or (chain `""`) after the archived rows.
pub(super) fn chain_start(chain: &str, archived: Checkpoint) -> Checkpoint {
    if chain.is_empty() { archived } else { Checkpoint { seq: 0, hash: start_hash(chain) } }
}

/// The row the next one of `chain` follows: the chain's last row, or where it starts.
pub(super) fn head_in(tx: &mut Tx<'_>, chain: &str) -> Result<Checkpoint, StoreError> {
    let sql = "SELECT seq, hash FROM audit WHERE chain = $1 ORDER BY seq DESC LIMIT 1";
    match tx.query_opt(sql, &[&chain])? {
        Some(row) => checkpoint(row.try_get(0)?, row.try_get(1)?).map_err(StoreError::ChainBroken),
        None => Ok(chain_start(chain, start_in(tx)?)),
    }
}

/// The highest row number there is (of any chain), or where the log starts.
pub(super) fn last_seq_in(tx: &mut Tx<'_>) -> Result<u64, StoreError> {
    match tx.query_one("SELECT max(seq) FROM audit", &[])?.try_get::<_, Option<i64>>(0)? {
        Some(seq) => Ok(u64::try_from(seq).unwrap_or(0)),
        None => Ok(start_in(tx)?.seq),
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

/// Chains and inserts the row after `head`, `chain`'s last row, numbered next of every chain
/// (the caller holds the chain's lock); returns the new row.
pub(super) fn insert_row(
    tx: &mut Tx<'_>,
    chain: &str,
    head: &Checkpoint,
    fields: &Fields<'_>,
) -> Result<Checkpoint, StoreError> {
    let seq: i64 = tx.query_one("SELECT nextval('audit_seq')", &[])?.try_get(0)?;
    let seq = u64::try_from(seq).map_err(|_| StoreError::Corrupt { detail: format!("row number {seq}") })?;
    let hash = row_hash(&head.hash, seq, fields);
    let sql = "INSERT INTO audit (seq, at_ms, kind, request, content, hash, chain, prev_seq) \
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
    let hash_bytes: &[u8] = &hash.0;
    let (f, prev) = (fields, sql_seq(head.seq)?);
    tx.execute(sql, &[&sql_seq(seq)?, &f.at_ms, &f.kind, &f.request, &f.content, &hash_bytes, &chain, &prev])?;
    Ok(Checkpoint { seq, hash })
}

/// Appends one row to `chain`, chained from its head read under its lock (taken here if the
/// transaction has not yet).
pub(super) fn append_in(
    tx: &mut Tx<'_>,
    chain: &str,
    request: Option<RequestId>,
    kind: &str,
    content: &str,
) -> Result<Checkpoint, StoreError> {
    tx.lock_chain(chain)?;
    let head = head_in(tx, chain)?;
    let fields = Fields { at_ms: now_ms(), kind, request: request.map(|r| r.0), content };
    insert_row(tx, chain, &head, &fields)
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
