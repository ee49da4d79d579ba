//! Transactions on the SQLite store's connection.
//!
//! `BEGIN`, `COMMIT` and `ROLLBACK` are prepared once and kept with the connection's other
//! statements: an effect's commit is one transaction, and preparing its three statements again
//! for each was a twentieth of the store's work.

use rusqlite::Connection;

use crate::StoreError;

/// Runs `f` in a write transaction (`BEGIN IMMEDIATE`), committed if `f` succeeds.
pub(super) fn write<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let open = Open::begin(conn, "BEGIN IMMEDIATE")?;
    let out = f(conn)?;
    open.commit()?;
    Ok(out)
}

/// Runs `f` in a read transaction: every statement sees the same state.
pub(super) fn read<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let open = Open::begin(conn, "BEGIN DEFERRED")?;
    let out = f(conn)?;
    open.commit()?;
    Ok(out)
}

/// A transaction begun and not yet ended: rolled back if it is dropped (an error or a panic
/// on the way), so the connection is never left inside it.
struct Open<'c> {
    conn: &'c Connection,
    ended: bool,
}

impl<'c> Open<'c> {
    fn begin(conn: &'c Connection, begin: &str) -> Result<Open<'c>, StoreError> {
        conn.prepare_cached(begin)?.execute([])?;
        Ok(Open { conn, ended: false })
    }

    fn commit(mut self) -> Result<(), StoreError> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        self.ended = true;
        Ok(())
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        // A commit that failed may have ended the transaction itself (SQLite rolls back on
        // some errors): roll back only one still open.
        if !self.ended && !self.conn.is_autocommit() {
            let _ = self.conn.prepare_cached("ROLLBACK").and_then(|mut rollback| rollback.execute([]));
        }
    }
}
