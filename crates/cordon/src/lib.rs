//! Cordon as a library: the one place a request is assembled, for every front end (the `cordon`
//! command, `cordon mcp serve`, the demo, tests, and later a server and bindings).
//!
//! A [`Workspace`] is what one user's requests run with: the [`Tools`] (hosts and the policies
//! declaring them, and the principal they act for), the [`Storage`] that records every request,
//! where the sessions are kept ([`SessionAt`]), and the [`Settings`]. It checks a plan
//! ([`Workspace::check`]), runs one ([`Workspace::run`]), or puts a request to a model
//! ([`Workspace::ask`]). Each request is checked once and compiled once; its effects pass the
//! approval gate and then the audit stage, last; its session is taken before anything runs and
//! given back after; every step is told to the caller's observer as it happens; and the whole
//! of it comes back as a [`Report`] (serde-serialisable) that front ends only render.
//!
//! ```
//! use cordon::{Settings, Source, Storage, Tools, ToolChoice, Workspace};
//! use cordon_engine::Observers;
//! use cordon_gate::DenyAll;
//!
//! let tools = Tools::open(&ToolChoice { envs: vec!["github".into()], ..ToolChoice::default() }, Vec::new())
//!     .expect("the simulated GitHub");
//! let mut workspace = Workspace::new(tools, Storage::in_memory().expect("a store"), Settings::default());
//! let plan = Source::new("plan.cord", r#"(to_string(len(gh.list_repos())) + " repositories", s)"#);
//! let report = workspace.run(&plan, &mut DenyAll, &mut Observers::new()).expect("recorded");
//! assert_eq!(report.status(), "done", "{:?}", report.diagnostics);
//! assert_eq!(report.performed, 1);
//! assert!(report.request.is_some(), "every request is recorded in the store");
//! ```

pub mod background;
pub mod bench;
mod error;
pub mod ide;
mod park;
pub mod people;
mod report;
mod request;
mod root;
mod session;
mod tools;
mod workspace;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cordon_store::{Durability, PostgresStore, SqliteStore, Store, StoreError};
use cordon_syntax::ast::Module;

/// What front ends name from the layers below the library: its API boundary. A front end
/// depends on this crate alone.
pub mod api {
    /// Sources, diagnostics and their renderers (human, concise for models, JSON).
    pub mod diagnostics {
        pub use cordon_syntax::{Code, Diagnostic, FileId, SourceFile, SourceMap, Span, render};
    }

    /// The formatter (`cordon fmt`): a file's layout made canonical, its meaning unchanged.
    pub mod format {
        pub use cordon_syntax::format::{FormatError, format};
    }

    /// Values, their labels, a run's limits and the boundary's record of each call.
    pub mod values {
        pub use cordon_label::Label;
        pub use cordon_runtime::trace::args_text;
        pub use cordon_runtime::value::Handle;
        pub use cordon_runtime::{Decision, ErrorKind, Limits, TraceEntry as Call, Val, Value, deep_label};
    }

    /// What happens in a request, as it happens.
    pub mod events {
        pub use cordon_engine::{Event, Note, Observer, Observers};
    }

    /// Who answers the approval gate's cards, and what the gate records.
    /// Text for people: the one escaping every command uses for what it shows.
    pub mod text {
        pub use cordon_text::{escape, guard, guard_line, html, is_hidden, is_mark};
    }

    pub mod approval {
        pub use cordon_gate::{
            Answer, ApproveAll, Approver, CONFIRM_CHARS, Card, DenyAll, ReadLine, Record, Reply, Scripted, StdinLines,
            Terminal,
        };
    }

    /// Models that fill holes, and transcripts of what they were asked.
    pub mod models {
        pub use cordon_agent::{
            Completion, FillConfig, HttpConfig, Problem, Provider, ProviderConfig, ProviderError, REFERENCE, Request,
            Scripted, Transcript, extract_code, open,
        };
    }

    /// The vault: credentials encrypted at rest, each bound to where it may be sent.
    pub mod vault {
        pub use cordon_vault::{
            Destination, Entry, KEY_VARIABLE, Key, SecretValue, Vault, VaultError, key_location, location, open_beside,
        };
    }

    /// The credential broker: the one process that opens the vault and sends the agent's HTTP
    /// requests.
    pub mod broker {
        pub use cordon_broker::{
            Broker, BrokerError, BrokerProcess, Client, READY, USER_AGENT, listen, resolve_program,
        };
    }

    /// The HTTP capability's template policy.
    pub mod http {
        pub use cordon_http::{HttpOptions, POLICY, POLICY_PATH};
    }

    /// The store: where it is, its audit log, its grants.
    pub mod store {
        pub use cordon_store::{
            AnswerRefused, BadRow, Checkpoint, Durability, EffectIntent, EffectStatus, Entry, GrantId, NewRun, Problem,
            QueuedRun, RequestId, RequestLog, RunId, RunKind, RunState, Scope, SqliteStore, Store, StoreError, Verdict,
            WebSession, location, private,
        };
    }

    /// Real MCP servers: the config, a connection, a starter policy from a server's tools.
    pub mod mcp {
        pub use cordon_mcp::config::user_config;
        pub use cordon_mcp::{Config, Connection, edit, foreign, import};
    }

    /// The simulated environments, for demos and tests.
    pub mod sim {
        pub use cordon_sim::{GitHub, github, hosts, shop};
    }

    pub use cordon_flow::Summary;
    pub use cordon_fs::Grant;
    pub use cordon_label::Release;
    pub use cordon_types::CheckOptions;
}

pub use error::Error;
pub use report::{Approvals, Audience, CheckReport, Ended, Report};
pub use request::{Prepared, Request};
pub use root::quote;
pub use session::{SessionAt, file_session_name};
pub use tools::{ToolChoice, Tools};
pub use workspace::{Clearance, Settings, Workspace, check};

/// A source file: a policy module or a plan, by the name diagnostics show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        Source { name: name.into(), text: text.into() }
    }

    /// Reads the file at `path`, named by it.
    pub fn read(path: &Path) -> Result<Source, Error> {
        let text = std::fs::read_to_string(path).map_err(|error| Error::Read { path: path.to_path_buf(), error })?;
        Ok(Source::new(path.display().to_string(), text))
    }

    /// The syntax trees of `sources` (parsing never fails; the checker reports what is wrong).
    pub(crate) fn parse_all(sources: &[Source]) -> Vec<Module> {
        let mut map = cordon_syntax::SourceMap::new();
        sources.iter().map(|s| cordon_syntax::parse(map.add(s.name.clone(), s.text.clone()), &s.text).module).collect()
    }
}

/// The store a workspace records in, and where it is (for messages).
#[derive(Clone)]
pub struct Storage {
    store: Arc<dyn Store>,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Storage {
    /// Opens the SQLite store at `path`, creating it if there is none.
    pub fn open(path: &Path, durability: Durability) -> Result<Storage, Error> {
        let store = SqliteStore::open(path, durability)
            .map_err(|error| Error::Store { path: Some(path.to_path_buf()), error })?;
        Ok(Storage { store: Arc::new(store), path: Some(path.to_path_buf()) })
    }

    /// Connects to the PostgreSQL store at `url` (`postgres://USER@HOST/DB`, or the key=value
    /// form), creating its tables if there are none: the store several machines share.
    pub fn connect(url: &str) -> Result<Storage, Error> {
        let store = PostgresStore::connect(url).map_err(|error| Error::Store { path: None, error })?;
        Ok(Storage { store: Arc::new(store), path: None })
    }

    /// A store in memory, gone with the process (the demo's, tests').
    pub fn in_memory() -> Result<Storage, Error> {
        let store = SqliteStore::open_in_memory().map_err(|error| Error::Store { path: None, error })?;
        Ok(Storage { store: Arc::new(store), path: None })
    }

    pub fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// Where the store is, unless it is in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// `error` of this store, with its path.
    pub fn error(&self, error: StoreError) -> Error {
        Error::Store { path: self.path.clone(), error }
    }
}

/// The time now, in Unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
