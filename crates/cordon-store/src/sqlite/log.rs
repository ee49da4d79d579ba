//! The audit log's rows in SQLite: reading the head, appending, reading rows back, verifying.
//! Each function runs inside its caller's transaction.

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, params};

use crate::StoreError;
use crate::audit::{AuditRow, kind};
use crate::chain::{BadRow, Checkpoint, Fields, Problem, RowHash, Verdict, Verifier, row_hash};
use crate::now_ms;
use crate::request::RequestId;

pub(super) const INSERT_ROW: &str =
    "INSERT INTO audit (seq, at_ms, kind, request, content, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
pub(super) const SELECT_ROW: &str = "SELECT seq, at_ms, kind, request, content, hash FROM audit";

pub(super) fn refuse_reserved(kind: &str) -> Result<(), StoreError> {
    if kind::RESERVED.contains(&kind) { Err(StoreError::ReservedKind(kind.into())) } else { Ok(()) }
}

pub(super) fn check_request(c: &Connection, request: Option<RequestId>) -> Result<(), StoreError> {
    let Some(id) = request else { return Ok(()) };
    let found = c.prepare_cached("SELECT 1 FROM requests WHERE id = ?1")?.query_row([id.0], |_| Ok(())).optional()?;
    found.ok_or(StoreError::NoSuchRequest(id))
}

pub(super) fn sql_seq(seq: u64) -> Result<i64, StoreError> {
    i64::try_from(seq).map_err(|_| StoreError::Corrupt { detail: format!("row number {seq} is out of range") })
}

/// The row the next one follows: the last row, or where the log starts if it has none.
pub(super) fn head_in(c: &Connection) -> Result<Checkpoint, StoreError> {
    let last = c
        .prepare_cached("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1")?
        .query_row([], |r| Ok(checkpoint(r.get(0)?, r.get_ref(1)?)))
        .optional()?;
    match last {
        Some(head) => head.map_err(StoreError::ChainBroken),
        None => start_in(c),
    }
}

/// Where the log starts: the last archived row, or the empty log.
pub(super) fn start_in(c: &Connection) -> Result<Checkpoint, StoreError> {
    let start = c
        .prepare_cached("SELECT seq, hash FROM audit_start")?
        .query_row([], |r| Ok(checkpoint(r.get(0)?, r.get_ref(1)?)))
        .optional()?;
    start.unwrap_or(Ok(Checkpoint::START)).map_err(StoreError::ChainBroken)
}

fn checkpoint(seq: i64, hash: ValueRef<'_>) -> Result<Checkpoint, BadRow> {
    let seq = u64::try_from(seq).map_err(|_| BadRow { seq: 0, problem: Problem::Unexpected { found: seq } })?;
    let malformed = BadRow { seq, problem: Problem::Malformed { column: "hash" } };
    let hash: [u8; 32] = hash.as_blob().ok().and_then(|b| b.try_into().ok()).ok_or(malformed)?;
    Ok(Checkpoint { seq, hash: RowHash(hash) })
}

/// Chains and inserts the row after `head`; returns the new head.
pub(super) fn insert_row(
    insert: &mut rusqlite::CachedStatement<'_>,
    head: &Checkpoint,
    fields: &Fields<'_>,
) -> Result<Checkpoint, StoreError> {
    let seq = head.seq + 1;
    let hash = row_hash(&head.hash, seq, fields);
    insert.execute(params![sql_seq(seq)?, fields.at_ms, fields.kind, fields.request, fields.content, &hash.0[..]])?;
    Ok(Checkpoint { seq, hash })
}

/// Appends one row, chained from the head read inside the caller's write transaction.
pub(super) fn append_in(
    c: &Connection,
    request: Option<RequestId>,
    kind: &str,
    content: &str,
) -> Result<Checkpoint, StoreError> {
    let head = head_in(c)?;
    let fields = Fields { at_ms: now_ms(), kind, request: request.map(|r| r.0), content };
    insert_row(&mut c.prepare_cached(INSERT_ROW)?, &head, &fields)
}

/// A stored row's fields and hash, or the column that holds something the log never writes.
pub(super) fn stored<'r>(row: &'r rusqlite::Row<'_>) -> Result<(Fields<'r>, &'r [u8]), &'static str> {
    let col = |i: usize, name: &'static str| row.get_ref(i).map_err(|_| name);
    let at_ms = col(1, "at_ms")?.as_i64().map_err(|_| "at_ms")?;
    let kind = col(2, "kind")?.as_str().map_err(|_| "kind")?;
    let request = match col(3, "request")? {
        ValueRef::Null => None,
        ValueRef::Integer(id) => Some(id),
        _ => return Err("request"),
    };
    let content = col(4, "content")?.as_str().map_err(|_| "content")?;
    let hash = col(5, "hash")?.as_blob().map_err(|_| "hash")?;
    Ok((Fields { at_ms, kind, request, content }, hash))
}

/// Verifies the whole log from its start.
pub(super) fn verify_in(c: &Connection, start: Checkpoint) -> Result<Verdict, StoreError> {
    let mut verifier = Verifier::after(start);
    let mut stmt = c.prepare(&format!("{SELECT_ROW} ORDER BY seq"))?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        if let Err(bad) = verifier.check(row.get(0)?, stored(row)) {
            return Ok(Verdict::Broken(bad));
        }
    }
    Ok(verifier.finish())
}

/// Reads rows as `AuditRow`s; one that cannot be is reported as a broken chain.
pub(super) fn audit_rows(
    stmt: &mut rusqlite::Statement<'_>,
    params: impl rusqlite::Params,
) -> Result<Vec<AuditRow>, StoreError> {
    let mut rows = stmt.query(params)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let bad = |problem| StoreError::ChainBroken(BadRow { seq: u64::try_from(seq).unwrap_or(0), problem });
        let seq = u64::try_from(seq).map_err(|_| bad(Problem::Unexpected { found: seq }))?;
        let (fields, hash) = stored(row).map_err(|column| bad(Problem::Malformed { column }))?;
        let hash: [u8; 32] = hash.try_into().map_err(|_| bad(Problem::Malformed { column: "hash" }))?;
        out.push(AuditRow {
            seq,
            at_ms: fields.at_ms,
            kind: fields.kind.into(),
            request: fields.request.map(RequestId),
            content: fields.content.into(),
            hash: RowHash(hash),
        });
    }
    Ok(out)
}
