//! Grants in PostgreSQL, honoured only as the audit chain holds them, as in SQLite
//! (`crate::sqlite`'s grants): each grant names its `grant` row (`audit_seq`), and counts only
//! while that row is in the log, in the chain of the grant's principal (`""` for a grant to
//! every principal), of kind `grant`, with this grant's every field as its content, its hash
//! that of its content after its predecessor in that chain, and no `revoke` or `expire` row for
//! it after it unless its table row says so. A grant's `grant` and `revoke` rows are in its
//! principal's chain; `expire` rows, written for any grants at once, in chain `""`. A grant row
//! written by hand, widened, or revived by clearing its revocation, is not honoured, and
//! `verify` names it. The JSON of the log's rows is read here, not by SQL: a row whose content is
//! not JSON is passed over, as SQLite's `json_valid` does. Each function runs inside its caller's transaction.

use std::collections::HashSet;

use postgres::Row;
use serde_json::{Value, json};

use super::conn::Tx;
use super::log::{append_in, chain_start, start_in};
use crate::StoreError;
use crate::audit::kind;
use crate::chain::{BadRow, Fields, Problem, RowHash, row_hash};
use crate::grant::{Grant, GrantId, NewGrant, Scope};
use crate::now_ms;

const SELECT_GRANT: &str = "SELECT id, tool, destination, label_class, session, expires_ms, created_ms, audit_seq, \
     revoked_ms, instance, expired_ms, principal FROM grants";

/// The table rows of grants neither revoked nor known to have expired.
const LIVE: &str = "revoked_ms IS NULL AND expired_ms IS NULL";

/// A grant as its table row holds it: the grant, where its `grant` row is said to be, and
/// whether it is marked revoked, or expired (once the store noticed).
struct Stored {
    grant: Grant,
    audit_seq: Option<i64>,
    revoked: bool,
    expired: bool,
}

fn stored_row(r: &Row) -> Result<Stored, StoreError> {
    let session: Option<String> = r.try_get(4)?;
    let grant = Grant {
        id: GrantId(r.try_get(0)?),
        grant: NewGrant {
            tool: r.try_get(1)?,
            destination: r.try_get(2)?,
            label_class: r.try_get(3)?,
            scope: session.map_or(Scope::UntilRevoked, Scope::Session),
            expires_ms: r.try_get(5)?,
            instance: r.try_get(9)?,
            principal: r.try_get(11)?,
        },
        created_ms: r.try_get(6)?,
    };
    let revoked = r.try_get::<_, Option<i64>>(8)?.is_some();
    let expired = r.try_get::<_, Option<i64>>(10)?.is_some();
    Ok(Stored { grant, audit_seq: r.try_get(7)?, revoked, expired })
}

fn stored_rows(tx: &mut Tx<'_>, sql: &str, params: &super::conn::Params<'_>) -> Result<Vec<Stored>, StoreError> {
    tx.query(sql, params)?.iter().map(stored_row).collect()
}

/// Records a new grant: its table row and its `grant` row, in the caller's transaction (which
/// holds the chain's lock already).
pub(super) fn add_in(tx: &mut Tx<'_>, grant: &NewGrant) -> Result<Grant, StoreError> {
    let created_ms = now_ms();
    let session = match &grant.scope {
        Scope::Session(s) => Some(s.as_str()),
        Scope::UntilRevoked => None,
    };
    let sql = "INSERT INTO grants (tool, destination, label_class, session, expires_ms, created_ms, instance, \
               principal) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id";
    let g = grant;
    let row = tx.query_one(
        sql,
        &[&g.tool, &g.destination, &g.label_class, &session, &g.expires_ms, &created_ms, &g.instance, &g.principal],
    )?;
    let grant = Grant { id: GrantId(row.try_get(0)?), grant: grant.clone(), created_ms };
    chain_in(tx, &grant)?;
    Ok(grant)
}

/// Appends `grant`'s `grant` row, in its principal's chain, and points its table row at it.
fn chain_in(tx: &mut Tx<'_>, grant: &Grant) -> Result<(), StoreError> {
    let chain = grant.grant.principal.as_deref().unwrap_or("");
    let row = append_in(tx, chain, None, kind::GRANT, &serde_json::to_string(grant)?)?;
    tx.execute("UPDATE grants SET audit_seq = $2 WHERE id = $1", &[&grant.id.0, &super::log::sql_seq(row.seq)?])?;
    Ok(())
}

/// Revokes a live grant: marks its row and appends the `revoke` row, in its principal's chain.
pub(super) fn revoke_in(tx: &mut Tx<'_>, id: GrantId) -> Result<(), StoreError> {
    // The chain's lock before the grant's row, as every writer takes them.
    let found = tx.query_opt("SELECT principal FROM grants WHERE id = $1", &[&id.0])?;
    let principal: Option<String> = found.ok_or(StoreError::NoSuchGrant(id))?.try_get(0)?;
    let chain = principal.as_deref().unwrap_or("");
    tx.lock_chain(chain)?;
    let sql = "UPDATE grants SET revoked_ms = $2 WHERE id = $1 AND revoked_ms IS NULL";
    if tx.execute(sql, &[&id.0, &now_ms()])? == 0 {
        return Err(StoreError::NoSuchGrant(id));
    }
    append_in(tx, chain, None, kind::REVOKE, &json!({ "grant": id }).to_string())?;
    Ok(())
}

/// The grants the chain honours, neither revoked nor expired, oldest first; `filter` picks
/// the table rows to look at (a tool and a label class).
pub(super) fn live_in(tx: &mut Tx<'_>, filter: Option<(&str, &str)>) -> Result<Vec<Grant>, StoreError> {
    let rows = match filter {
        Some((tool, label_class)) => {
            let sql = format!("{SELECT_GRANT} WHERE {LIVE} AND tool = $1 AND label_class = $2 ORDER BY id");
            stored_rows(tx, &sql, &[&tool, &label_class])?
        }
        None => stored_rows(tx, &format!("{SELECT_GRANT} WHERE {LIVE} ORDER BY id"), &[])?,
    };
    let now = now_ms();
    let mut live = Vec::new();
    for stored in rows {
        if stored.grant.grant.expires_ms.is_none_or(|at| now < at) && in_chain(tx, &stored)?.is_ok() {
            live.push(stored.grant);
        }
    }
    Ok(live)
}

/// Whether the chain holds `stored` as its table row says: `Err` says why not.
fn in_chain(tx: &mut Tx<'_>, stored: &Stored) -> Result<Result<(), &'static str>, StoreError> {
    let Some(seq) = stored.audit_seq else { return Ok(Err("it has no row in the audit log")) };
    let sql = "SELECT at_ms, kind, request, content, hash, chain, prev_seq FROM audit WHERE seq = $1";
    let Some(row) = tx.query_opt(sql, &[&seq])? else { return Ok(Err("its row is not in the audit log")) };
    let (at_ms, row_kind, request, content, hash): (i64, &str, Option<i64>, &str, &[u8]) =
        (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?, row.try_get(3)?, row.try_get(4)?);
    let (chain, prev_seq): (&str, Option<i64>) = (row.try_get(5)?, row.try_get(6)?);
    if row_kind != kind::GRANT || serde_json::from_str::<Grant>(content).ok().as_ref() != Some(&stored.grant) {
        return Ok(Err("its row in the audit log records another grant"));
    }
    if chain != stored.grant.grant.principal.as_deref().unwrap_or("") {
        return Ok(Err("its row in the audit log is in another principal's chain"));
    }
    // The row's own hash, from its predecessor's in its chain: its content is what was chained.
    let Ok(seq_u) = u64::try_from(seq) else { return Ok(Err("its row in the audit log is not a row")) };
    let start = chain_start(chain, start_in(tx)?);
    let prev: Option<Vec<u8>> = match prev_seq {
        Some(p) if u64::try_from(p).ok() == Some(start.seq) => Some(start.hash.0.to_vec()),
        Some(p) => match tx.query_opt("SELECT hash FROM audit WHERE seq = $1 AND chain = $2", &[&p, &chain])? {
            Some(r) => Some(r.try_get(0)?),
            None => None,
        },
        None => None,
    };
    let fields = Fields { at_ms, kind: row_kind, request, content };
    let chained = prev
        .and_then(|p| <[u8; 32]>::try_from(p).ok())
        .is_some_and(|p| row_hash(&RowHash(p), seq_u, &fields).0[..] == hash[..]);
    if !chained {
        return Ok(Err("its row in the audit log does not match its hash"));
    }
    if ended_in_chain(tx, kind::REVOKE, stored.grant.id, seq)? != stored.revoked {
        return Ok(Err(if stored.revoked {
            "it is marked revoked, but the audit log holds no revocation"
        } else {
            "the audit log revoked it"
        }));
    }
    if ended_in_chain(tx, kind::EXPIRE, stored.grant.id, seq)? != stored.expired {
        return Ok(Err(if stored.expired {
            "it is marked expired, but the audit log holds no expiry"
        } else {
            "the audit log says it expired"
        }));
    }
    Ok(Ok(()))
}

/// The integer at `field` of a row's content, if the content is JSON and holds one there.
fn field_of(content: &str, field: &str) -> Option<i64> {
    serde_json::from_str::<Value>(content).ok()?.get(field)?.as_i64()
}

/// Whether the log holds a row of kind `ended` (`revoke`, `expire`) for grant `id` after row
/// `after`.
fn ended_in_chain(tx: &mut Tx<'_>, ended: &str, id: GrantId, after: i64) -> Result<bool, StoreError> {
    let rows = tx.query("SELECT content FROM audit WHERE seq > $1 AND kind = $2", &[&after, &ended])?;
    for row in &rows {
        if field_of(row.try_get(0)?, "grant") == Some(id.0) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether some grant not yet marked ended has expired by `now`.
pub(super) fn any_expired_in(tx: &mut Tx<'_>, now: i64) -> Result<bool, StoreError> {
    let sql = format!("SELECT 1 FROM grants WHERE {LIVE} AND expires_ms <= $1 LIMIT 1");
    Ok(tx.query_opt(&sql, &[&now])?.is_some())
}

/// Ends every grant the chain holds that has expired by `now`: marks its row and appends its
/// `expire` row, so the log tells when each grant stopped counting.
pub(super) fn expire_in(tx: &mut Tx<'_>, now: i64) -> Result<(), StoreError> {
    // The chain's lock before the grants' rows, as every writer takes them.
    tx.lock_chain("")?;
    let sql = format!("{SELECT_GRANT} WHERE {LIVE} AND expires_ms <= $1 ORDER BY id");
    for stored in stored_rows(tx, &sql, &[&now])? {
        if in_chain(tx, &stored)?.is_ok() {
            let id = stored.grant.id;
            tx.execute("UPDATE grants SET expired_ms = $2 WHERE id = $1", &[&id.0, &now])?;
            append_in(tx, "", None, kind::EXPIRE, &json!({ "grant": id }).to_string())?;
        }
    }
    Ok(())
}

/// The first grant whose table row and the chain disagree, as a bad row of the log: a grant
/// the chain does not hold as its row says, or a `grant` row of the log whose grant is gone.
pub(super) fn verify_in(tx: &mut Tx<'_>) -> Result<Option<BadRow>, StoreError> {
    let rows = stored_rows(tx, &format!("{SELECT_GRANT} ORDER BY id"), &[])?;
    let start = start_in(tx)?.seq;
    // A revoked grant's rows may have been archived: the archive's chain holds them.
    let archived =
        |s: &Stored| s.revoked && s.audit_seq.and_then(|a| u64::try_from(a).ok()).is_some_and(|a| a <= start);
    for stored in rows.iter().filter(|s| !archived(s)) {
        if let Err(reason) = in_chain(tx, stored)? {
            let seq = stored.audit_seq.and_then(|s| u64::try_from(s).ok()).unwrap_or(0);
            return Ok(Some(BadRow { seq, problem: Problem::Grant { grant: stored.grant.id.0, reason } }));
        }
    }
    // Every `grant` row still in the log has its grant (or a later row carried it over).
    let ids: HashSet<i64> =
        tx.query("SELECT id FROM grants", &[])?.iter().map(|r| r.try_get(0)).collect::<Result<_, _>>()?;
    let granted = tx.query("SELECT seq, content FROM audit WHERE kind = $1 ORDER BY seq", &[&kind::GRANT])?;
    for row in &granted {
        let content: &str = row.try_get(1)?;
        if serde_json::from_str::<Value>(content).is_err() {
            continue;
        }
        let id = field_of(content, "id");
        if id.is_none_or(|id| !ids.contains(&id)) {
            let seq: i64 = row.try_get(0)?;
            return Ok(Some(BadRow {
                seq: u64::try_from(seq).unwrap_or(0),
                problem: Problem::Grant { grant: id.unwrap_or(0), reason: "the audit log granted it, and it is gone" },
            }));
        }
    }
    Ok(None)
}
