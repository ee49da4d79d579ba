//! The PostgreSQL store's audit chains: one per principal, each verified by its own order, and
//! the root hash over every chain's head that a checkpoint holds.
//!
//! **Chains.** Each row names its `chain` (a principal, or `""` for rows of no principal) and
//! `prev_seq`, the row of its chain it follows (`0` before a chain's first row; for `""`, the
//! last archived row of a log archived before chains, `audit_start`). Its hash is
//! `crate::chain::row_hash` of its fields, its `seq` and the hash of that row; a chain's first
//! row follows the chain's own start hash (`log::start_hash`: zeros for `""`, as SQLite's one
//! chain, so a log made before chains is chain `""` as it was), which binds the row to its
//! chain. `seq` is one sequence over every chain, taken under the chain's lock: within a chain,
//! `seq` grows in the chain's order, while across chains rows may commit out of `seq` order, and
//! a rolled-back append leaves a gap. So `verify` reads the rows by `seq` and checks each against
//! the last row of ITS chain only; what a snapshot holds of each chain is a prefix of it.
//!
//! **Checkpoints.** `head` is `(seq, root)`: the highest `seq`, and SHA-256 over a domain tag
//! and, for every chain in the order of its name's bytes, the name, its last row's `seq` and
//! hash (`root_hash`). `head` holds the writers' gate exclusively, so no append is under way:
//! every row numbered up to its `seq` has committed, and any later one is numbered above it.
//! `verify_against(checkpoint)` verifies every chain, then recomputes the root as of the
//! checkpoint's `seq` (each chain's last row up to it): a chain cut back, rewritten, or gone
//! changes it. A row's own `(seq, hash)`, which `append` returns, is also accepted: it holds that
//! row's chain up to that row.

use std::collections::BTreeMap;

use postgres::Row;
use sha2::{Digest, Sha256};

use super::conn::Tx;
use super::log::{chain_start, sql_seq, start_in, stored};
use crate::StoreError;
use crate::chain::{BadRow, Checkpoint, Problem, RowHash, Verdict, row_hash};

/// Separates root hashes from any other use of SHA-256.
const ROOT_DOMAIN: &[u8] = b"cordon-audit-root-v1\0";

/// The root hash over chains' heads: each chain's name, and its last row's number and hash.
pub(super) fn root_hash<'a>(heads: impl IntoIterator<Item = (&'a str, Checkpoint)>) -> RowHash {
    let mut heads: Vec<(&str, Checkpoint)> = heads.into_iter().collect();
    heads.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = Sha256::new();
    h.update(ROOT_DOMAIN);
    h.update((heads.len() as u64).to_be_bytes());
    for (name, head) in heads {
        h.update((name.len() as u64).to_be_bytes());
        h.update(name.as_bytes());
        h.update(head.seq.to_be_bytes());
        h.update(head.hash.0);
    }
    RowHash(h.finalize().into())
}

/// What the rows read so far say: each chain's last row, and the rows checked.
struct Chains {
    start: Checkpoint,
    heads: BTreeMap<String, Checkpoint>,
    rows: u64,
    last: u64,
}

/// A row whose link to its chain is broken: a row `missing`, if none is numbered so, else the
/// row `at` itself.
struct BadLink {
    at: u64,
    missing: u64,
}

impl Chains {
    /// Checks the next row by `seq`: `Err(Ok(bad))` names a bad row, `Err(Err(link))` a link to
    /// be told apart (by whether its predecessor exists) once the scan is over.
    fn check(&mut self, row: &Row) -> Result<(), Result<BadRow, BadLink>> {
        let expected = self.start.seq.saturating_add(1);
        let found: i64 = row.try_get(0).map_err(|_| Ok(self.bad(expected, Problem::Malformed { column: "seq" })))?;
        let seq = match u64::try_from(found) {
            Ok(seq) if seq >= expected => seq,
            _ => return Err(Ok(self.bad(expected, Problem::Unexpected { found }))),
        };
        let chain: &str = row.try_get(6).map_err(|_| Ok(self.bad(seq, Problem::Malformed { column: "chain" })))?;
        let prev: Option<i64> =
            row.try_get(7).map_err(|_| Ok(self.bad(seq, Problem::Malformed { column: "prev_seq" })))?;
        let prev = prev
            .and_then(|p| u64::try_from(p).ok())
            .ok_or_else(|| Ok(self.bad(seq, Problem::Malformed { column: "prev_seq" })))?;
        let head = self.heads.get(chain).copied().unwrap_or_else(|| chain_start(chain, self.start));
        if prev != head.seq {
            if prev > head.seq && prev < seq {
                return Err(Err(BadLink { at: seq, missing: prev }));
            }
            return Err(Ok(self.bad(seq, Problem::HashMismatch)));
        }
        let (fields, hash) = stored(row).map_err(|column| Ok(self.bad(seq, Problem::Malformed { column })))?;
        let hash: [u8; 32] = hash.try_into().map_err(|_| Ok(self.bad(seq, Problem::Malformed { column: "hash" })))?;
        if row_hash(&head.hash, seq, &fields).0 != hash {
            return Err(Ok(self.bad(seq, Problem::HashMismatch)));
        }
        self.heads.insert(chain.to_owned(), Checkpoint { seq, hash: RowHash(hash) });
        self.rows += 1;
        self.last = seq;
        Ok(())
    }

    fn bad(&self, seq: u64, problem: Problem) -> BadRow {
        BadRow { seq, problem }
    }

    /// The store's head by these rows: the last row's number and the root over the chains.
    fn head(&self) -> Checkpoint {
        if self.heads.is_empty() {
            return self.start;
        }
        Checkpoint { seq: self.last, hash: root_hash(self.heads.iter().map(|(c, h)| (c.as_str(), *h))) }
    }
}

/// The rows with their chain and link, by `seq` (`SELECT_ROW`'s columns first: `stored` reads
/// them by position).
const SELECT_LINKED: &str = "SELECT seq, at_ms, kind, request, content, hash, chain, prev_seq FROM audit ORDER BY seq";

/// Verifies every chain from its start; an intact log's head is as `head_in` tells it.
pub(super) fn verify_in(tx: &mut Tx<'_>) -> Result<Verdict, StoreError> {
    let start = start_in(tx)?;
    let mut chains = Chains { start, heads: BTreeMap::new(), rows: 0, last: start.seq };
    let mut broken = None;
    tx.for_each(SELECT_LINKED, &[], |row| match chains.check(row) {
        Ok(()) => Ok(true),
        Err(bad) => {
            broken = Some(bad);
            Ok(false)
        }
    })?;
    let bad = match broken {
        None => return Ok(Verdict::Intact { rows: chains.rows, head: chains.head() }),
        Some(Ok(bad)) => bad,
        // The row it follows is gone (deleted, renumbered), or is elsewhere (moved, inserted).
        Some(Err(BadLink { at, missing })) => {
            if tx.query_opt("SELECT 1 FROM audit WHERE seq = $1", &[&sql_seq(missing)?])?.is_some() {
                BadRow { seq: at, problem: Problem::HashMismatch }
            } else {
                BadRow { seq: missing, problem: Problem::Missing { next: i64::try_from(at).unwrap_or(i64::MAX) } }
            }
        }
    };
    Ok(Verdict::Broken(bad))
}

/// The store's head: the highest row and the root over every chain's last row, or where the
/// log starts if it holds no row. Only under the writers' gate is it a checkpoint.
pub(super) fn head_in(tx: &mut Tx<'_>) -> Result<Checkpoint, StoreError> {
    let last: Option<i64> = tx.query_one("SELECT max(seq) FROM audit", &[])?.try_get(0)?;
    match last {
        Some(last) => root_at(tx, u64::try_from(last).unwrap_or(0)),
        None => start_in(tx),
    }
}

/// The checkpoint as of row `seq`: the root over each chain's last row numbered up to it.
pub(super) fn root_at(tx: &mut Tx<'_>, seq: u64) -> Result<Checkpoint, StoreError> {
    let sql = "SELECT DISTINCT ON (chain) chain, seq, hash FROM audit WHERE seq <= $1 ORDER BY chain, seq DESC";
    let rows = tx.query(sql, &[&sql_seq(seq)?])?;
    let mut heads = Vec::with_capacity(rows.len());
    for row in &rows {
        let (chain, at, hash): (&str, i64, &[u8]) = (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        let corrupt = || StoreError::Corrupt { detail: format!("row {at} of the audit log is malformed") };
        let hash: [u8; 32] = hash.try_into().map_err(|_| corrupt())?;
        heads.push((chain, Checkpoint { seq: u64::try_from(at).map_err(|_| corrupt())?, hash: RowHash(hash) }));
    }
    Ok(Checkpoint { seq, hash: root_hash(heads) })
}

/// `verify`, and that the log still holds what the checkpoint saw (see the module's docs).
pub(super) fn verify_against_in(tx: &mut Tx<'_>, checkpoint: &Checkpoint) -> Result<Verdict, StoreError> {
    let verdict = verify_in(tx)?;
    let Verdict::Intact { head, .. } = verdict else { return Ok(verdict) };
    let start = start_in(tx)?;
    let broken = |seq, problem| Ok(Verdict::Broken(BadRow { seq, problem }));
    if checkpoint.seq < start.seq {
        return broken(checkpoint.seq, Problem::Archived { through: start.seq });
    }
    if checkpoint.seq > head.seq {
        return broken(head.seq + 1, Problem::Truncated { head: head.seq, checkpoint: checkpoint.seq });
    }
    let holds = *checkpoint == start
        || root_at(tx, checkpoint.seq)? == *checkpoint
        || tx
            .query_opt("SELECT hash FROM audit WHERE seq = $1", &[&sql_seq(checkpoint.seq)?])?
            .map(|row| row.try_get::<_, Vec<u8>>(0))
            .transpose()?
            .is_some_and(|hash| hash[..] == checkpoint.hash.0[..]);
    if !holds {
        return broken(checkpoint.seq, Problem::CheckpointMismatch);
    }
    Ok(verdict)
}
