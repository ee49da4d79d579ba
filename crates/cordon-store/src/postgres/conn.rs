//! The PostgreSQL store's connections: where the server is (the URL, without its password in
//! any message), the store's one connection (behind a mutex, as SQLite's), and its
//! transactions: read ones see one snapshot (`REPEATABLE READ`), write ones run under
//! `READ COMMITTED`, where each statement sees what was committed before it, so that a head
//! read after the chain's lock is the latest.
//!
//! A connection found closed is opened again before the next transaction. If a transaction's
//! `BEGIN` fails because the connection was lost (the server restarted, the backend was ended),
//! it is opened again and the transaction started once more: nothing of it had run. A
//! connection lost later in a transaction fails that operation (nothing of it is committed,
//! unless the loss came during `COMMIT` itself, which PostgreSQL may or may not have done), and
//! the next operation connects again.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use postgres::config::Host;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Row, Statement};

use crate::StoreError;

/// How long a statement waits for a lock (the chain's, a row's) before failing with
/// `StoreError::Busy`: SQLite's busy timeout.
const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// How long connecting may take, unless the URL says otherwise.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The advisory lock keys (64-bit, "CORD" in the high half): the writers' gate, taken shared by
/// every transaction that appends to the audit log and exclusively by `head` (so that no append
/// is under way when it reads the heads), and the schema's, taken while it is checked and
/// migrated.
pub(super) const CHAIN_LOCK: i64 = 0x434f_5244_0000_0001;
/// The first half of each chain's own lock, a two-part key (`pg_advisory_xact_lock(int, int)`,
/// another key space than the 64-bit keys): the second half is the server's `hashtext` of the
/// chain's name. Two names with one hash only wait for each other; they never share a chain.
pub(super) const CHAIN_CLASS: i32 = 0x434f_5244;
pub(super) const SCHEMA_LOCK: i64 = 0x434f_5244_0000_0002;

/// A statement's parameters.
pub(super) type Params<'p> = [&'p (dyn ToSql + Sync)];

/// Where the store is, and how to connect to it.
pub(super) struct Connector {
    config: Config,
    /// The server, database and user, for messages.
    pub(super) target: String,
}

impl Connector {
    /// Reads a connection URL (`postgresql://user@host:port/db`) or key-value string
    /// (`host=/run/postgresql dbname=cordon`).
    pub(super) fn parse(url: &str) -> Result<Connector, StoreError> {
        let mut config: Config = url.parse().map_err(|e: postgres::Error| StoreError::Connect {
            // The text may hold a password: it is not repeated.
            to: "the PostgreSQL URL given".into(),
            cause: Box::new(e.into()),
        })?;
        if config.get_application_name().is_none() {
            config.application_name("cordon");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .map(|h| match h {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            })
            .collect();
        let port = config.get_ports().first().map_or(String::new(), |p| format!(":{p}"));
        let target = format!(
            "PostgreSQL database `{}` on {}{port} as `{}`",
            config.get_dbname().or(config.get_user()).unwrap_or("?"),
            if hosts.is_empty() { "the default host".to_string() } else { hosts.join(",") },
            config.get_user().unwrap_or("?"),
        );
        Ok(Connector { config, target })
    }

    /// A new connection, with the store's settings.
    pub(super) fn connect(&self) -> Result<Client, StoreError> {
        let connected = (|| {
            let mut client = self.config.connect(NoTls)?;
            let timeout = LOCK_TIMEOUT.as_millis();
            client.batch_execute(&format!("SET lock_timeout = {timeout}"))?;
            Ok::<_, postgres::Error>(client)
        })();
        connected.map_err(|e| self.failed(e.into()))
    }

    /// `cause`, as a failure to use the store at this target.
    pub(super) fn failed(&self, cause: StoreError) -> StoreError {
        StoreError::Connect { to: self.target.clone(), cause: Box::new(cause) }
    }
}

/// Whether `e` says the connection is gone (rather than a statement failed on a live one).
pub(super) fn lost(e: &postgres::Error) -> bool {
    match e.code() {
        // Operator intervention (the server shutting down, the backend ended), connection errors.
        Some(code) => code.code().starts_with("57P") || code.code().starts_with("08"),
        None => e.is_closed() || std::error::Error::source(e).is_some_and(|c| c.is::<std::io::Error>()),
    }
}

/// How a transaction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// Reads, from one snapshot.
    Read,
    /// Writes no audit row.
    Write,
    /// Writes, appending to the audit log: the writers' gate, shared, is its first statement;
    /// each chain's lock is taken before its head is read (`Tx::lock_chain`).
    Chained,
    /// Reads with no append under way: the writers' gate, exclusive, is its first statement,
    /// and each later statement sees everything committed before it.
    Still,
}

/// A connection and the statements prepared on it.
struct Session {
    client: Client,
    statements: HashMap<String, Statement>,
}

/// The store's connection, opened again when lost.
pub(super) struct Conn {
    pub(super) connector: Connector,
    session: Mutex<Option<Session>>,
}

impl Conn {
    pub(super) fn new(connector: Connector, client: Client) -> Conn {
        Conn { connector, session: Mutex::new(Some(Session { client, statements: HashMap::new() })) }
    }

    /// Runs `f` in a transaction of `mode`, committed if it succeeds.
    pub(super) fn run<T>(
        &self,
        mode: Mode,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // A panic while holding the lock rolled its transaction back (`Tx`'s drop): the
        // connection is sound.
        let mut slot = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        let begin = match mode {
            Mode::Read => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            Mode::Write | Mode::Chained | Mode::Still => "BEGIN ISOLATION LEVEL READ COMMITTED",
        };
        let mut fresh = false;
        let session = loop {
            let mut session = match slot.take() {
                Some(session) if !session.client.is_closed() => session,
                _ => {
                    fresh = true;
                    Session { client: self.connector.connect()?, statements: HashMap::new() }
                }
            };
            match session.client.batch_execute(begin) {
                Ok(()) => break slot.insert(session),
                // Nothing of the transaction ran: connect again and start it afresh, once.
                Err(e) if lost(&e) && !fresh => {}
                Err(e) if lost(&e) => return Err(self.connector.failed(e.into())),
                Err(e) => {
                    *slot = Some(session);
                    return Err(e.into());
                }
            }
        };
        let mut tx = Tx {
            client: &mut session.client,
            statements: &mut session.statements,
            gate: false,
            chains: Vec::new(),
            open: true,
        };
        let done = (|| {
            match mode {
                Mode::Chained => tx.open_gate()?,
                Mode::Still => {
                    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CHAIN_LOCK])?;
                }
                Mode::Read | Mode::Write => {}
            }
            let out = f(&mut tx)?;
            tx.open = false;
            tx.client.batch_execute("COMMIT")?;
            Ok(out)
        })();
        drop(tx);
        if let Err(StoreError::Postgres(e)) = &done
            && lost(e)
        {
            *slot = None;
        }
        done
    }
}

/// A transaction on the store's connection; rolled back when dropped before its commit.
pub(super) struct Tx<'c> {
    client: &'c mut Client,
    statements: &'c mut HashMap<String, Statement>,
    /// Whether the writers' gate is held (shared).
    gate: bool,
    /// The chains whose locks are held.
    chains: Vec<String>,
    open: bool,
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}

impl Tx<'_> {
    /// Takes the writers' gate, shared, until the transaction ends (once).
    fn open_gate(&mut self) -> Result<(), StoreError> {
        if !self.gate {
            self.execute("SELECT pg_advisory_xact_lock_shared($1)", &[&CHAIN_LOCK])?;
            self.gate = true;
        }
        Ok(())
    }

    /// Takes the writers' gate and `chain`'s lock until the transaction ends (each once): the
    /// appends to one chain are serialised, and its head read after this is the latest. Appends
    /// to other chains do not wait. So that none deadlock: a transaction that appends to several
    /// chains takes their locks in the order of their names (see `interrupt_own_requests`), and
    /// a chain's lock is taken before the rows of requests and grants it updates (a run's row,
    /// though, before the gate: see `queue`).
    pub(super) fn lock_chain(&mut self, chain: &str) -> Result<(), StoreError> {
        self.open_gate()?;
        if !self.chains.iter().any(|c| c == chain) {
            self.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", &[&CHAIN_CLASS, &chain])?;
            self.chains.push(chain.to_owned());
        }
        Ok(())
    }

    /// The statement prepared for `sql` on this connection.
    fn statement(&mut self, sql: &str) -> Result<Statement, StoreError> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql)?;
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    pub(super) fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64, StoreError> {
        let statement = self.statement(sql)?;
        Ok(self.client.execute(&statement, params)?)
    }

    pub(super) fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, StoreError> {
        let statement = self.statement(sql)?;
        Ok(self.client.query(&statement, params)?)
    }

    pub(super) fn query_opt(&mut self, sql: &str, params: &Params<'_>) -> Result<Option<Row>, StoreError> {
        let statement = self.statement(sql)?;
        Ok(self.client.query_opt(&statement, params)?)
    }

    pub(super) fn query_one(&mut self, sql: &str, params: &Params<'_>) -> Result<Row, StoreError> {
        let statement = self.statement(sql)?;
        Ok(self.client.query_one(&statement, params)?)
    }

    /// Runs `sql` and gives each row to `each` as it arrives, without holding them all, while
    /// `each` says to go on.
    pub(super) fn for_each(
        &mut self,
        sql: &str,
        params: &Params<'_>,
        mut each: impl FnMut(&Row) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let statement = self.statement(sql)?;
        let mut rows = self.client.query_raw(&statement, params.iter().map(|p| *p as &dyn ToSql))?;
        while let Some(row) = rows.next()? {
            if !each(&row)? {
                break;
            }
        }
        Ok(())
    }
}

/// This machine's name, to tell its processes from another machine's with the same pid.
pub(super) fn host_name() -> Option<String> {
    static NAME: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|p| std::fs::read_to_string(p).ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    })
    .clone()
}
