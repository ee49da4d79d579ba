//! Grants in SQLite, honoured only as the audit chain holds them. The `grants` table is an index
//! into the log: each grant names its `grant` row (`audit_seq`), and a grant counts only while
//! that row is in the log, of kind `grant`, with this grant's every field as its content, its
//! hash that of its content after its predecessor, and no `revoke` row for it after it. A grant
//! row written by hand, or widened, or revived by clearing its revocation, is not honoured, and
//! `verify` names it. Each function runs inside its caller's transaction.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::log::{append_in, sql_seq, start_in};
use crate::StoreError;
use crate::audit::kind;
use crate::chain::{BadRow, Fields, Problem, row_hash};
use crate::grant::{Grant, GrantId, NewGrant, Scope};
use crate::now_ms;

const SELECT_GRANT: &str = "SELECT id, tool, destination, label_class, session, expires_ms, created_ms, audit_seq, revoked_ms, instance, \
     expired_ms, principal FROM grants";

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

fn stored_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Stored> {
    let session: Option<String> = r.get(4)?;
    let grant = Grant {
        id: GrantId(r.get(0)?),
        grant: NewGrant {
            tool: r.get(1)?,
            destination: r.get(2)?,
            label_class: r.get(3)?,
            scope: session.map_or(Scope::UntilRevoked, Scope::Session),
            expires_ms: r.get(5)?,
            instance: r.get(9)?,
            principal: r.get(11)?,
        },
        created_ms: r.get(6)?,
    };
    let (revoked, expired) = (r.get::<_, Option<i64>>(8)?.is_some(), r.get::<_, Option<i64>>(10)?.is_some());
    Ok(Stored { grant, audit_seq: r.get(7)?, revoked, expired })
}

/// Records a new grant: its table row and its `grant` row, in the caller's transaction.
pub(super) fn add_in(c: &Connection, grant: &NewGrant) -> Result<Grant, StoreError> {
    let created_ms = now_ms();
    let session = match &grant.scope {
        Scope::Session(s) => Some(s.as_str()),
        Scope::UntilRevoked => None,
    };
    let sql = "INSERT INTO grants (tool, destination, label_class, session, expires_ms, created_ms, instance, \
               principal) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
    let g = grant;
    let row = params![g.tool, g.destination, g.label_class, session, g.expires_ms, created_ms, g.instance, g.principal];
    c.execute(sql, row)?;
    let grant = Grant { id: GrantId(c.last_insert_rowid()), grant: grant.clone(), created_ms };
    chain_in(c, &grant)?;
    Ok(grant)
}

/// Appends `grant`'s `grant` row and points its table row at it.
fn chain_in(c: &Connection, grant: &Grant) -> Result<(), StoreError> {
    let row = append_in(c, None, kind::GRANT, &serde_json::to_string(grant)?)?;
    c.execute("UPDATE grants SET audit_seq = ?2 WHERE id = ?1", params![grant.id.0, sql_seq(row.seq)?])?;
    Ok(())
}

/// Revokes a live grant: marks its row and appends the `revoke` row.
pub(super) fn revoke_in(c: &Connection, id: GrantId) -> Result<(), StoreError> {
    let sql = "UPDATE grants SET revoked_ms = ?2 WHERE id = ?1 AND revoked_ms IS NULL";
    if c.execute(sql, params![id.0, now_ms()])? == 0 {
        return Err(StoreError::NoSuchGrant(id));
    }
    append_in(c, None, kind::REVOKE, &json!({ "grant": id }).to_string())?;
    Ok(())
}

/// The grants the chain honours, neither revoked nor expired, oldest first; `filter` picks
/// the table rows to look at (an SQL condition on `tool` and `label_class`, with `?1`, `?2`).
pub(super) fn live_in(c: &Connection, filter: Option<(&str, &str)>) -> Result<Vec<Grant>, StoreError> {
    let (sql, args) = match filter {
        Some((tool, label_class)) => (
            format!("{SELECT_GRANT} WHERE {LIVE} AND tool = ?1 AND label_class = ?2 ORDER BY id"),
            vec![tool, label_class],
        ),
        None => (format!("{SELECT_GRANT} WHERE {LIVE} ORDER BY id"), Vec::new()),
    };
    let mut stmt = c.prepare_cached(&sql)?;
    let rows: Vec<Stored> = stmt.query_map(rusqlite::params_from_iter(args), stored_row)?.collect::<Result<_, _>>()?;
    let now = now_ms();
    let mut live = Vec::new();
    for stored in rows {
        if stored.grant.grant.expires_ms.is_none_or(|at| now < at) && in_chain(c, &stored)?.is_ok() {
            live.push(stored.grant);
        }
    }
    Ok(live)
}

/// Whether the chain holds `stored` as its table row says: `Err` says why not.
fn in_chain(c: &Connection, stored: &Stored) -> Result<Result<(), &'static str>, StoreError> {
    let Some(seq) = stored.audit_seq else { return Ok(Err("it has no row in the audit log")) };
    let row = c
        .prepare_cached("SELECT at_ms, kind, request, content, hash FROM audit WHERE seq = ?1")?
        .query_row([seq], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<i64>>(2)?, r.get::<_, String>(3)?, {
                r.get::<_, Vec<u8>>(4)?
            }))
        })
        .optional();
    let Ok(Some((at_ms, row_kind, request, content, hash))) = row else {
        return Ok(Err("its row is not in the audit log"));
    };
    if row_kind != kind::GRANT || serde_json::from_str::<Grant>(&content).ok().as_ref() != Some(&stored.grant) {
        return Ok(Err("its row in the audit log records another grant"));
    }
    // The row's own hash, from its predecessor's: its content is what was chained.
    let start = start_in(c)?;
    let Ok(seq_u) = u64::try_from(seq) else { return Ok(Err("its row in the audit log is not a row")) };
    let prev = if seq_u == start.seq + 1 {
        Some(start.hash.0.to_vec())
    } else {
        c.prepare_cached("SELECT hash FROM audit WHERE seq = ?1")?.query_row([seq - 1], |r| r.get(0)).optional()?
    };
    let fields = Fields { at_ms, kind: &row_kind, request, content: &content };
    let chained = prev
        .and_then(|p| <[u8; 32]>::try_from(p).ok())
        .is_some_and(|p| row_hash(&crate::chain::RowHash(p), seq_u, &fields).0[..] == hash[..]);
    if !chained {
        return Ok(Err("its row in the audit log does not match its hash"));
    }
    if ended_in_chain(c, kind::REVOKE, stored.grant.id, seq)? != stored.revoked {
        return Ok(Err(if stored.revoked {
            "it is marked revoked, but the audit log holds no revocation"
        } else {
            "the audit log revoked it"
        }));
    }
    if ended_in_chain(c, kind::EXPIRE, stored.grant.id, seq)? != stored.expired {
        return Ok(Err(if stored.expired {
            "it is marked expired, but the audit log holds no expiry"
        } else {
            "the audit log says it expired"
        }));
    }
    Ok(Ok(()))
}

/// Whether the log holds a row of kind `ended` (`revoke`, `expire`) for grant `id` after row
/// `after`.
fn ended_in_chain(c: &Connection, ended: &str, id: GrantId, after: i64) -> Result<bool, StoreError> {
    let sql = "SELECT 1 FROM audit WHERE seq > ?1 AND kind = ?2 AND json_valid(content) \
               AND json_extract(content, '$.grant') = ?3 LIMIT 1";
    Ok(c.prepare_cached(sql)?.query_row(params![after, ended, id.0], |_| Ok(())).optional()?.is_some())
}

/// Whether some grant not yet marked ended has expired by `now`.
pub(super) fn any_expired_in(c: &Connection, now: i64) -> Result<bool, StoreError> {
    let sql = format!("SELECT 1 FROM grants WHERE {LIVE} AND expires_ms <= ?1 LIMIT 1");
    Ok(c.prepare_cached(&sql)?.query_row([now], |_| Ok(())).optional()?.is_some())
}

/// Ends every grant the chain holds that has expired by `now`: marks its row and appends its
/// `expire` row, so the log tells when each grant stopped counting.
pub(super) fn expire_in(c: &Connection, now: i64) -> Result<(), StoreError> {
    let sql = format!("{SELECT_GRANT} WHERE {LIVE} AND expires_ms <= ?1 ORDER BY id");
    let rows: Vec<Stored> = c.prepare(&sql)?.query_map([now], stored_row)?.collect::<Result<_, _>>()?;
    for stored in rows {
        if in_chain(c, &stored)?.is_ok() {
            let id = stored.grant.id;
            c.execute("UPDATE grants SET expired_ms = ?2 WHERE id = ?1", params![id.0, now])?;
            append_in(c, None, kind::EXPIRE, &json!({ "grant": id }).to_string())?;
        }
    }
    Ok(())
}

/// The first grant whose table row and the chain disagree, as a bad row of the log: a grant
/// the chain does not hold as its row says, or a `grant` row of the log whose grant is gone.
pub(super) fn verify_in(c: &Connection) -> Result<Option<BadRow>, StoreError> {
    let mut stmt = c.prepare(&format!("{SELECT_GRANT} ORDER BY id"))?;
    let rows: Vec<Stored> = stmt.query_map([], stored_row)?.collect::<Result<_, _>>()?;
    let start = start_in(c)?.seq;
    // A revoked grant's rows may have been archived: the archive's chain holds them.
    let archived =
        |s: &Stored| s.revoked && s.audit_seq.and_then(|a| u64::try_from(a).ok()).is_some_and(|a| a <= start);
    for stored in rows.iter().filter(|s| !archived(s)) {
        if let Err(reason) = in_chain(c, stored)? {
            let seq = stored.audit_seq.and_then(|s| u64::try_from(s).ok()).unwrap_or(0);
            return Ok(Some(BadRow { seq, problem: Problem::Grant { grant: stored.grant.id.0, reason } }));
        }
    }
    // Every `grant` row still in the log has its grant (or a later row carried it over).
    let sql = "SELECT a.seq, json_extract(a.content, '$.id') FROM audit a WHERE a.kind = ?1 AND json_valid(a.content) \
               AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.id = json_extract(a.content, '$.id'))";
    let gone =
        c.query_row(sql, [kind::GRANT], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?))).optional()?;
    Ok(gone.map(|(seq, id)| BadRow {
        seq: u64::try_from(seq).unwrap_or(0),
        problem: Problem::Grant { grant: id.unwrap_or(0), reason: "the audit log granted it, and it is gone" },
    }))
}

/// Before rows up to `through` are archived: every grant not revoked whose `grant` row goes
/// gets a new one, so the chain still holds it.
pub(super) fn carry_over_in(c: &Connection, through: u64) -> Result<(), StoreError> {
    let sql = format!("{SELECT_GRANT} WHERE {LIVE} AND audit_seq <= ?1 ORDER BY id");
    let rows: Vec<Stored> = c.prepare(&sql)?.query_map([sql_seq(through)?], stored_row)?.collect::<Result<_, _>>()?;
    for stored in rows {
        if in_chain(c, &stored)?.is_ok() {
            chain_in(c, &stored.grant)?;
        }
    }
    Ok(())
}
