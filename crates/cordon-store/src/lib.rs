//! Cordon's durable state: sessions and their locks, approval grants, requests with their
//! transcripts, and a tamper-evident audit log, in one embedded SQLite file, or in a PostgreSQL
//! database that the processes of many machines share ([`PostgresStore`]).
//!
//! ```no_run
//! use cordon_store::{Durability, EffectIntent, NewRequest, Outcome, SqliteStore, Store, Verdict, location};
//!
//! # fn main() -> Result<(), cordon_store::StoreError> {
//! // `--store PATH`, else CORDON_STORE, else ~/.local/share/cordon/cordon.db.
//! let store = SqliteStore::open(&location(None)?, Durability::SurvivesCrash)?;
//!
//! // A run takes its session (one run at a time), and saves it when done.
//! let session = store.lock_session("work")?;
//! let request = store.begin_request(&NewRequest { text: "triage", principal: "ann", session: Some("work") })?;
//!
//! // An effect is written before the host performs it, and its outcome after.
//! let intent = EffectIntent {
//!     tool: "comment".into(),
//!     args: serde_json::json!({ "issue": 7 }),
//!     decision: "allowed".into(),
//!     approved_by: None,
//!     labels: serde_json::json!([]),
//!     stages: Vec::new(),
//! };
//! let effect = store.begin_effect(Some(request), &intent)?;
//! // ... the host performs it ...
//! store.end_effect(effect, &Outcome::Performed { result_size: 12 })?;
//!
//! store.save_session(&session, &serde_json::json!({ "measures": {} }))?;
//! store.unlock_session(session)?;
//!
//! // Anyone can check that nothing was edited, and keep the head to detect truncation later.
//! let checkpoint = store.head()?;
//! assert!(matches!(store.verify_against(&checkpoint)?, Verdict::Intact { .. }));
//! # Ok(())
//! # }
//! ```
//!
//! What the audit log guarantees: every row is chained to the one before by SHA-256
//! ([`chain`]), so `verify` finds any edit, deletion, insertion or reordering of rows and names
//! the first bad one. The chain has no secret: whoever can write the file can append rows, or
//! rewrite everything after some row and hash it again. A checkpoint (`head`) kept elsewhere
//! closes that: `verify_against` finds a log cut back or rewritten before it.

pub mod archive;
pub mod audit;
pub mod chain;
mod error;
pub mod grant;
mod location;
mod postgres;
pub mod private;
pub mod queue;
pub mod request;
mod schema;
pub mod session;
mod sqlite;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

pub use self::postgres::PostgresStore;
pub use archive::{ArchiveReport, verify_archive};
pub use audit::{
    Archived, AuditRow, Batch, BatchRow, EffectIntent, EffectStatus, Entry, GcReport, Lines, Outcome, PendingEffect,
    RequestLog, StageDecision,
};
pub use chain::{BadRow, Checkpoint, Problem, RowHash, Verdict};
pub use error::StoreError;
pub use grant::{Grant, GrantId, GrantQuery, NewGrant, Scope};
pub use location::location;
pub use queue::{
    AnswerRefused, Claimed, GivenAnswer, Lease, NewAnswer, NewRun, Parking, QueuedRun, RunId, RunKind, RunState,
    WebSession,
};
pub use request::{NewRequest, Request, RequestId, Status};
pub use schema::VERSION as SCHEMA_VERSION;
pub use session::{Holder, SessionInfo, SessionLock};
pub use sqlite::{Durability, SqliteStore};

/// Everything Cordon keeps between runs. SQLite implements it, and PostgreSQL for a fleet of
/// machines ([`PostgresStore`]).
pub trait Store: Send + Sync {
    // Sessions: linear, so one run at a time holds each.

    /// Takes the session for this run, creating it if new. Fails with `SessionBusy` while a live
    /// process holds it; a dead process's lock is taken over.
    fn lock_session(&self, name: &str) -> Result<SessionLock, StoreError>;
    /// The session's last saved state, if any. Needs no lock.
    fn load_session(&self, name: &str) -> Result<Option<Value>, StoreError>;
    fn save_session(&self, lock: &SessionLock, state: &Value) -> Result<(), StoreError>;
    fn unlock_session(&self, lock: SessionLock) -> Result<(), StoreError>;
    /// Frees a session whatever holds it, for systems where a dead holder cannot be detected.
    /// Returns whether it was locked.
    fn force_unlock_session(&self, name: &str) -> Result<bool, StoreError>;
    fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError>;

    // Approval grants. Granting and revoking are audited.

    fn add_grant(&self, grant: &NewGrant) -> Result<Grant, StoreError>;
    /// The grants neither revoked nor expired.
    fn grants(&self) -> Result<Vec<Grant>, StoreError>;
    fn revoke_grant(&self, id: GrantId) -> Result<(), StoreError>;
    /// The oldest live grant covering the effect, if any.
    fn find_grant(&self, query: &GrantQuery<'_>) -> Result<Option<Grant>, StoreError>;

    // Requests and their transcripts (what was shown to models and what they replied).

    /// Records a request as running, with its audit row.
    fn begin_request(&self, request: &NewRequest<'_>) -> Result<RequestId, StoreError>;
    fn set_status(&self, id: RequestId, status: Status) -> Result<(), StoreError>;
    /// Marks every request this process began and has not ended (running or waiting) as
    /// interrupted, each with its status row: what a signal handler calls before the process
    /// stops. Returns them.
    fn interrupt_own_requests(&self) -> Result<Vec<RequestId>, StoreError>;
    /// The most recent requests, newest first.
    fn requests(&self, limit: usize) -> Result<Vec<Request>, StoreError>;
    /// Appends an event to a request's transcript; returns its number there.
    fn append_transcript(&self, request: RequestId, event: &Value) -> Result<u64, StoreError> {
        self.append_transcript_batch(request, std::slice::from_ref(event))
    }
    /// Appends events to a request's transcript in one transaction (all or none); returns the
    /// last one's number there (the one before them if `events` is empty).
    fn append_transcript_batch(&self, request: RequestId, events: &[Value]) -> Result<u64, StoreError>;
    fn transcript(&self, request: RequestId) -> Result<Vec<Value>, StoreError>;

    // The audit log.

    /// Appends a row of a kind this crate does not reserve (a hole's fill, a diagnostic, ..).
    fn append(&self, request: Option<RequestId>, kind: &str, content: &Value) -> Result<Checkpoint, StoreError>;
    /// Commits the "about to perform" row of an effect. Call it before the host acts.
    fn begin_effect(&self, request: Option<RequestId>, effect: &EffectIntent) -> Result<PendingEffect, StoreError>;
    /// Commits what became of the effect.
    fn end_effect(&self, effect: PendingEffect, outcome: &Outcome) -> Result<Checkpoint, StoreError>;
    /// Commits what `request` did since its last commit (`batch`) and then, if given, the
    /// "about to perform" row of its next effect, in one transaction: all or none. Returns the
    /// effect's pending outcome. An outcome in the batch must be of one of the request's effects.
    fn record(
        &self,
        request: RequestId,
        batch: &Batch,
        effect: Option<&EffectIntent>,
    ) -> Result<Option<PendingEffect>, StoreError>;
    /// The last row: a checkpoint to keep elsewhere.
    fn head(&self) -> Result<Checkpoint, StoreError>;
    /// Checks the whole chain; a broken one is reported with its first bad row.
    fn verify(&self) -> Result<Verdict, StoreError>;
    /// `verify`, and that the log still holds the checkpoint's row, unchanged.
    fn verify_against(&self, checkpoint: &Checkpoint) -> Result<Verdict, StoreError>;
    /// Up to `limit` rows from row `from` on.
    fn rows(&self, from: u64, limit: usize) -> Result<Vec<AuditRow>, StoreError>;
    /// What happened in a request: its rows, each effect with its outcome (or `Unknown`).
    fn show(&self, request: RequestId) -> Result<RequestLog, StoreError>;
    /// Every effect whose outcome was never written.
    fn unknown_outcomes(&self) -> Result<Vec<Entry>, StoreError>;

    // Retention.

    /// Removes the transcripts of requests started longer than `older_than` ago. Audit rows are
    /// never removed, only archived.
    fn gc(&self, older_than: Duration) -> Result<GcReport, StoreError>;
    /// Moves the audit rows up to `through` into a new JSONL file at `path`, removing them from
    /// the store only once the file's chain verifies. The log then starts after `through`.
    fn archive(&self, path: &Path, through: u64) -> Result<Archived, StoreError>;

    // Background runs (`cordon serve`), see [`queue`].

    /// Queues a run, with its `run` audit row.
    fn submit_run(&self, run: &NewRun<'_>) -> Result<RunId, StoreError>;
    /// Takes the next run there is work on, leased to `owner` for `lease_ms`: queued, answered,
    /// past its deadline (then answered `no`, by no one, with its audit row), or left running
    /// by a worker whose lease ran out.
    fn claim_run(&self, owner: &str, lease_ms: i64) -> Result<Option<Claimed>, StoreError>;
    /// Extends a lease by `lease_ms` from now; fails with `LeaseLost` once another worker took
    /// the run.
    fn renew_lease(&self, lease: &Lease, lease_ms: i64) -> Result<(), StoreError>;
    /// Notes the request a leased run is recorded as, as soon as it is.
    fn run_started(&self, lease: &Lease, request: RequestId) -> Result<(), StoreError>;
    /// Parks a leased run at a card (the saved run, the card, its seal and deadline, at once);
    /// the lease ends.
    fn park_run(&self, lease: &Lease, parking: &Parking<'_>) -> Result<(), StoreError>;
    /// Ends a leased run as `state` (done or failed) with its report.
    fn finish_run(
        &self,
        lease: &Lease,
        state: RunState,
        request: Option<RequestId>,
        result: &Value,
    ) -> Result<(), StoreError>;
    /// Takes an answer (`yes`, `no`, `always`) to the card sealed `answer.seal` that run `run`
    /// waits on, with its `answer` audit row; refused (and nothing written) unless `answer.by`
    /// is the run's principal, the run waits on that very card, unanswered, and its deadline
    /// has not passed.
    fn answer_run(&self, run: RunId, answer: &NewAnswer<'_>) -> Result<Result<(), AnswerRefused>, StoreError>;
    fn queued_run(&self, run: RunId) -> Result<Option<QueuedRun>, StoreError>;
    /// The newest runs, of `principal` (or everyone's), newest first.
    fn queued_runs(&self, principal: Option<&str>, limit: usize) -> Result<Vec<QueuedRun>, StoreError>;

    // The people who may answer cards on the web page, and their sign-ins.

    /// Lets `name` sign in with the token whose SHA-256 is `token_hash` (the token itself is
    /// never stored), with its `user` audit row.
    fn add_user(&self, name: &str, token_hash: &[u8]) -> Result<(), StoreError>;
    fn user_by_token(&self, token_hash: &[u8]) -> Result<Option<String>, StoreError>;
    /// Starts a web session whose cookie hashes to `id_hash` (expired ones are removed).
    fn start_web_session(&self, id_hash: &[u8], session: &WebSession) -> Result<(), StoreError>;
    /// The live web session whose cookie hashes to `id_hash`, if any.
    fn web_session(&self, id_hash: &[u8]) -> Result<Option<WebSession>, StoreError>;
    fn end_web_session(&self, id_hash: &[u8]) -> Result<(), StoreError>;
}

/// The time now, in Unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
