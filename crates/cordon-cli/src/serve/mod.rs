//! `cordon serve`: runs requests in the background and lets people answer their cards later,
//! from a web page or over the HTTP API.
//!
//! - Workers (`--workers`, threads of this process; more processes may share the store) take
//!   the store's queue of runs (`cordon::background::Worker`): a run goes until it ends or
//!   reaches a card, where it is saved with its sealed card and deadline before anyone is told
//!   (then `--notify` runs with the run's number). An answer, or the deadline, makes the run
//!   work again, for whichever worker takes it.
//! - People are added with `cordon serve --add-user NAME`, which prints their token once. The
//!   API takes it as `Authorization: Bearer TOKEN`; the page's sign-in form takes it once and
//!   gives a session cookie (HttpOnly, SameSite=Strict, Secure behind TLS) and a CSRF token that
//!   every form carries. A card is answered only by the principal it asks, once.
//! - It listens on loopback; anywhere else only with `--behind-tls-proxy`, which says the
//!   deployer terminates TLS in front of it.

mod http;
mod page;
mod wake;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cordon::api::models::{HttpConfig, ProviderConfig};
use cordon::background::{OpenWorkspace, Worker, WorkerSettings};
use cordon::{Settings, Storage, Workspace};

use crate::outcome::{Error, Report};
use crate::store::StoreArgs;
use crate::tools::ToolArgs;
use wake::Wake;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub tools: ToolArgs,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Let NAME sign in, print their token (shown once; the store keeps only its hash), and exit
    #[arg(long, value_name = "NAME")]
    pub add_user: Option<String>,

    /// Where to listen. Loopback only, unless --behind-tls-proxy
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8700")]
    pub listen: SocketAddr,

    /// Listening beyond loopback is allowed: the deployer terminates TLS in front of this
    /// server (cookies are then marked Secure)
    #[arg(long)]
    pub behind_tls_proxy: bool,

    /// Worker threads running requests
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub workers: usize,

    /// How long a card waits for its answer before it counts as denied, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 24 * 60 * 60)]
    pub card_timeout: u64,

    /// How long a worker holds a run without renewing its lease (at each effect), in seconds;
    /// after it, another worker takes the run over
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub lease: u64,

    /// A command run with a parked run's number as its last argument, once its card is stored
    /// (a notification); split on spaces
    #[arg(long, value_name = "COMMAND")]
    pub notify: Option<String>,

    /// The model for requests in words, as for `cordon ask` (without one, only plans are
    /// taken)
    #[arg(long, value_name = "SPEC")]
    pub model: Option<String>,

    /// Keep the queue, the people, the grants and the audit log in this PostgreSQL database
    /// instead of the store's file, shared by every `cordon serve` given it (each machine's
    /// workers take turns at the queue); default: $CORDON_DATABASE_URL, which keeps a password
    /// out of the process list. The deployment's key then comes from CORDON_SERVE_KEY, the same
    /// on every machine
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
}

/// Adds a person, or serves until the process is stopped.
pub fn run(args: &Args) -> Result<Report, Error> {
    let database = args.database.clone().or_else(|| std::env::var("CORDON_DATABASE_URL").ok());
    let storage = match &database {
        Some(url) => Storage::connect(url)?,
        None => args.store.open()?,
    };
    if let Some(name) = &args.add_user {
        let token = cordon::people::add_user(&storage, name)?;
        let stdout = format!(
            "{name} may sign in with this token (shown once, kept only as its hash):\n{token}\n",
            name = cordon::api::text::escape(name)
        );
        return Ok(Report { stdout, accepted: true, error: None });
    }
    if !args.listen.ip().is_loopback() && !args.behind_tls_proxy {
        return Err(Error::Usage(format!(
            "--listen {}: beyond loopback, people's tokens and cookies would cross the network in the clear; serve \
             behind a proxy that terminates TLS and say so with --behind-tls-proxy",
            args.listen
        )));
    }
    let store_path = args.store.location()?;
    if database.is_some() && std::env::var_os(cordon::people::KEY_VARIABLE).is_none() {
        return Err(Error::Usage(format!(
            "--database: every machine of the deployment must share its key; set {} (64 or more hexadecimal \
             digits) the same on each",
            cordon::people::KEY_VARIABLE
        )));
    }
    let key = cordon::people::deployment_key(&key_path(&store_path))?;
    let model = match &args.model {
        Some(spec) => {
            let config = ProviderConfig::parse(spec).map_err(|e| Error::Usage(e.to_string()))?;
            Some(config.with_http(HttpConfig::default()))
        }
        None => None,
    };
    // The tools open here once, so a broken policy or server stops the server before it serves.
    args.tools.open(&|p| std::fs::read_to_string(p), kept(args), &store_path)?;
    let wake = Arc::new(Wake::default());
    for n in 0..args.workers.max(1) {
        let settings = WorkerSettings {
            name: format!("{}-{}-{n}", std::process::id(), cordon_now_ms()),
            key: key.clone(),
            lease_ms: seconds_ms(args.lease),
            card_ms: seconds_ms(args.card_timeout),
            model: model.clone(),
            notify: args.notify.as_ref().map(|c| c.split_whitespace().map(str::to_string).collect()),
        };
        let worker = Worker::new(settings, storage.clone(), opener(args, storage.clone(), store_path.clone()));
        let wake = wake.clone();
        std::thread::spawn(move || work(worker, &wake));
    }
    let server =
        http::Server { storage, key, secure: args.behind_tls_proxy, wake, loopback: args.listen.ip().is_loopback() };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("cannot start the server: {e}")))?;
    runtime.block_on(http::serve(Arc::new(server), args.listen)).map_err(Error::Usage)?;
    Ok(Report { stdout: String::new(), accepted: true, error: None })
}

/// The deployment's key file, beside the store.
fn key_path(store: &Path) -> PathBuf {
    let mut name = store.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".serve-key");
    store.with_file_name(name)
}

/// The files no read-write directory may hold: the store and its key.
fn kept(args: &Args) -> Vec<(String, PathBuf)> {
    let mut kept = Vec::new();
    if let Ok(path) = args.store.location() {
        kept.push(("the server's key".to_string(), key_path(&path)));
        kept.push(("the store".to_string(), path));
    }
    kept
}

/// How a worker opens the workspace of a principal's requests: the tools, acting for them.
fn opener(args: &Args, storage: Storage, store_path: PathBuf) -> OpenWorkspace {
    let (tools, kept) = (args.tools.clone(), kept(args));
    Box::new(move |principal: &str| {
        let opened = tools.open_for(&|p| std::fs::read_to_string(p), kept.clone(), &store_path, Some(principal));
        let tools = opened.map_err(|e| cordon::Error::Setup(e.to_string()))?;
        Ok(Workspace::new(tools, storage.clone(), Settings::default()))
    })
}

fn seconds_ms(s: u64) -> i64 {
    i64::try_from(s.saturating_mul(1000)).unwrap_or(i64::MAX)
}

fn cordon_now_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}

/// A worker's loop: work while there is work, else wait to be told (or a second).
fn work(mut worker: Worker, wake: &Wake) {
    loop {
        match worker.work_once() {
            Ok(Some(_)) => {}
            Ok(None) => wake.wait(Duration::from_secs(1)),
            Err(e) => {
                eprintln!("cordon serve: {}", cordon::api::text::guard_line(&e.to_string()));
                wake.wait(Duration::from_secs(1));
            }
        }
    }
}
