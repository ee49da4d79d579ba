//! Session locks across machines. SQLite's locks name a process and check its pid, which means
//! nothing on another machine; here a run holds its session by a session-level advisory lock
//! (`pg_try_advisory_lock`, keyed by a hash of the session's name) held by a connection of its
//! own, opened for the lock and kept until the session is unlocked. PostgreSQL releases the
//! lock when that connection ends: when its process exits or dies, and when its machine is
//! gone (once the server notices the connection is dead: its TCP keepalive settings, or
//! `client_connection_check_interval`, say how soon). No pid is checked anywhere.
//!
//! The `sessions` row still names the holder (its host, pid and start time), only to say who
//! holds it, and counts the takings (`lock_epoch`): a save is made through the holding
//! connection, and only while the row's epoch is the lock's, so a run whose connection died or
//! whose lock was broken cannot save. `force_unlock_session` ends the holding connection
//! (`pg_terminate_backend`, which needs the same database role or `pg_signal_backend`).
//!
//! A lock is the store's that took it: give it back to the same `PostgresStore`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use postgres::Client;
use sha2::{Digest, Sha256};

use super::conn::{Conn, Mode, lost};
use crate::StoreError;
use crate::now_ms;
use crate::session::{Holder, SessionInfo, SessionLock};

/// A connection holding a session, used by one thread at a time.
type Holding = Arc<Mutex<Client>>;

/// The connections holding this store's sessions, by session and epoch.
#[derive(Default)]
pub(super) struct Held {
    connections: Mutex<HashMap<(String, i64), Holding>>,
}

/// The advisory lock key of session `name`.
fn key(name: &str) -> i64 {
    let digest = Sha256::new().chain_update(b"cordon-session\0").chain_update(name.as_bytes()).finalize();
    let mut first = [0; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first)
}

/// A 64-bit key as `pg_locks` shows it: its high half as `classid`, its low half as `objid`.
fn halves(key: i64) -> (i64, i64) {
    let key = key as u64;
    ((key >> 32) as i64, (key & 0xffff_ffff) as i64)
}

/// The advisory locks held in this database, as `halves`.
const HELD_LOCKS: &str = "SELECT classid::int8 AS classid, objid::int8 AS objid, pid FROM pg_locks WHERE locktype = 'advisory' \
     AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND objsubid = 1 AND granted";

impl Drop for Held {
    /// Gives the sessions still held back at once, rather than when the server sees their
    /// connections close.
    fn drop(&mut self) {
        let held = self.connections.get_mut().unwrap_or_else(PoisonError::into_inner);
        for holding in held.values() {
            let _ = client(holding).batch_execute("SELECT pg_advisory_unlock_all()");
        }
    }
}

fn client(holding: &Holding) -> MutexGuard<'_, Client> {
    holding.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Held {
    fn map(&self) -> MutexGuard<'_, HashMap<(String, i64), Holding>> {
        self.connections.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, lock: &SessionLock) -> Option<Holding> {
        self.map().get(&(lock.session.clone(), lock.epoch)).cloned()
    }

    fn take(&self, lock: &SessionLock) -> Option<Holding> {
        self.map().remove(&(lock.session.clone(), lock.epoch))
    }

    fn put(&self, session: &str, epoch: i64, client: Client) {
        self.map().insert((session.to_string(), epoch), Arc::new(Mutex::new(client)));
    }
}

fn holder_of(pid: Option<i64>, started: Option<i64>) -> Option<Holder> {
    Some(Holder { pid: u32::try_from(pid?).unwrap_or(0), started: started.and_then(|s| u64::try_from(s).ok()) })
}

/// Takes session `name` on a connection of its own.
pub(super) fn lock(conn: &Conn, held: &Held, name: &str) -> Result<SessionLock, StoreError> {
    let mut client = conn.connector.connect()?;
    let taken: bool = client.query_one("SELECT pg_try_advisory_lock($1)", &[&key(name)])?.try_get(0)?;
    if !taken {
        drop(client);
        let row = conn
            .run(Mode::Read, |tx| tx.query_opt("SELECT lock_pid, locked_ms FROM sessions WHERE name = $1", &[&name]))?;
        let (pid, since): (Option<i64>, Option<i64>) = match row {
            Some(row) => (row.try_get(0)?, row.try_get(1)?),
            None => (None, None),
        };
        let pid = pid.and_then(|p| u32::try_from(p).ok()).unwrap_or(0);
        return Err(StoreError::SessionBusy { session: name.into(), pid, since_ms: since.unwrap_or(0) });
    }
    let me = Holder::current();
    let (pid, started) = (i64::from(me.pid), me.started.and_then(|s| i64::try_from(s).ok()));
    let sql = "INSERT INTO sessions (name, lock_host, lock_pid, lock_started, lock_epoch, locked_ms) \
               VALUES ($1, $2, $3, $4, 1, $5) \
               ON CONFLICT (name) DO UPDATE SET lock_host = excluded.lock_host, lock_pid = excluded.lock_pid, \
               lock_started = excluded.lock_started, lock_epoch = sessions.lock_epoch + 1, \
               locked_ms = excluded.locked_ms \
               RETURNING lock_epoch";
    let host = super::conn::host_name();
    let epoch: i64 = client.query_one(sql, &[&name, &host, &pid, &started, &now_ms()])?.try_get(0)?;
    held.put(name, epoch, client);
    Ok(SessionLock { session: name.into(), holder: me, epoch })
}

/// Saves the session's state through the connection holding it.
pub(super) fn save(held: &Held, lock: &SessionLock, state: &str) -> Result<(), StoreError> {
    let lost_lock = || StoreError::LockLost { session: lock.session.clone() };
    let Some(holding) = held.get(lock) else { return Err(lost_lock()) };
    let mut client = client(&holding);
    let sql = "UPDATE sessions SET state = $3, updated_ms = $4 WHERE name = $1 AND lock_epoch = $2";
    match client.execute(sql, &[&lock.session, &lock.epoch, &state, &now_ms()]) {
        Ok(0) => Err(lost_lock()),
        Ok(_) => Ok(()),
        // The connection is gone, and the lock with it: another run may hold the session now.
        Err(e) if lost(&e) || client.is_closed() => Err(lost_lock()),
        Err(e) => Err(e.into()),
    }
}

/// Frees the session's row, then its lock; fails if the lock was broken meanwhile.
pub(super) fn unlock(conn: &Conn, held: &Held, lock: SessionLock) -> Result<(), StoreError> {
    let holding = held.take(&lock);
    let sql = "UPDATE sessions SET lock_host = NULL, lock_pid = NULL, lock_started = NULL, locked_ms = NULL \
               WHERE name = $1 AND lock_epoch = $2";
    let changed = conn.run(Mode::Write, |tx| tx.execute(sql, &[&lock.session, &lock.epoch]));
    if let Some(holding) = holding {
        // Released now, not whenever the server sees the connection close: the session may be
        // taken again at once.
        let _ = client(&holding).execute("SELECT pg_advisory_unlock($1)", &[&key(&lock.session)]);
    }
    if changed? == 0 { Err(StoreError::LockLost { session: lock.session }) } else { Ok(()) }
}

/// Ends whatever connection holds session `name` and frees its row; whether it was held.
pub(super) fn force_unlock(conn: &Conn, name: &str) -> Result<bool, StoreError> {
    let (high, low) = halves(key(name));
    conn.run(Mode::Write, |tx| {
        let sql = format!(
            "SELECT pg_terminate_backend(l.pid, 5000) FROM ({HELD_LOCKS}) l WHERE l.classid = $1 AND l.objid = $2"
        );
        let ended = tx.query(&sql, &[&high, &low])?;
        for row in &ended {
            if !row.try_get::<_, bool>(0)? {
                return Err(StoreError::Busy {
                    detail: format!("the connection holding session '{name}' did not end"),
                });
            }
        }
        // The epoch moves on: the old holder's lock is lost even if its connection came back.
        let sql = "UPDATE sessions SET lock_host = NULL, lock_pid = NULL, lock_started = NULL, locked_ms = NULL, \
                   lock_epoch = lock_epoch + 1 WHERE name = $1 AND (lock_pid IS NOT NULL OR $2)";
        let changed = tx.execute(sql, &[&name, &!ended.is_empty()])?;
        Ok(!ended.is_empty() || changed > 0)
    })
}

/// Every session, each with its holder while its lock is held.
pub(super) fn list(conn: &Conn) -> Result<Vec<SessionInfo>, StoreError> {
    conn.run(Mode::Read, |tx| {
        let mut locked = std::collections::HashSet::new();
        for row in tx.query(HELD_LOCKS, &[])? {
            locked.insert((row.try_get::<_, i64>(0)?, row.try_get::<_, i64>(1)?));
        }
        let sql =
            "SELECT name, updated_ms, lock_pid, lock_started, locked_ms FROM sessions ORDER BY name COLLATE \"C\"";
        let mut out = Vec::new();
        for row in tx.query(sql, &[])? {
            let name: String = row.try_get(0)?;
            let is_held = locked.contains(&halves(key(&name)));
            out.push(SessionInfo {
                updated_ms: row.try_get(1)?,
                held_by: if is_held { holder_of(row.try_get(2)?, row.try_get(3)?) } else { None },
                locked_ms: if is_held { row.try_get(4)? } else { None },
                name,
            });
        }
        Ok(out)
    })
}
