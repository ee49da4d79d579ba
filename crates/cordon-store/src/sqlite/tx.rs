//! Transactions on the SQLite store's connection.

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::StoreError;

/// Runs `f` in a write transaction (`BEGIN IMMEDIATE`), committed if `f` succeeds.
pub(super) fn write<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let out = f(&tx)?;
    tx.commit()?;
    Ok(out)
}

/// Runs `f` in a read transaction: every statement sees the same state.
pub(super) fn read<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Deferred)?;
    f(&tx)
}
