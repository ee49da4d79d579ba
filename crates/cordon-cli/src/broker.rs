//! `cordon broker`: the credential broker as a process of its own, the only one that opens the
//! vault (`cordon_broker` says what it does). `run`, `ask`, `chat` and `mcp serve` start a private
//! one for themselves when there is a vault or `--web` asks for the web, or use the one
//! `--broker` names.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use cordon::api::broker::{Broker, Client, READY, listen};
use cordon::api::vault::{KEY_VARIABLE, key_location, location, open_beside};

use cordon::Error;

use crate::secrets::VaultArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to listen: a Unix socket, made private to this user (0600); it must not exist
    #[arg(long, value_name = "PATH")]
    pub socket: PathBuf,

    #[command(flatten)]
    pub vault: VaultArgs,

    /// Append a line for each request (method, site, path, secret's name, outcome; never a
    /// value or a query) to this file
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// End when standard input closes (how a private broker ends with the command that started
    /// it)
    #[arg(long, hide = true)]
    pub until_stdin_closes: bool,
}

/// Opens the vault, listens, says so on stdout, and serves until killed.
pub fn run(args: &Args) -> Result<(), Error> {
    let store = cordon::api::store::location(args.vault.store.as_deref())
        .map_err(|error| Error::Store { path: None, error })?;
    let key_file = match &args.vault.key_file {
        Some(path) => Some(path.clone()),
        None => key_location(|name| std::env::var_os(name)),
    };
    let vault = open_beside(&store, std::env::var(KEY_VARIABLE).ok(), key_file.as_deref()).map_err(Error::Vault)?;
    let mut broker = Broker::new(vault.as_ref());
    if let Some(path) = &args.log {
        broker = broker.with_log(private_log(path)?);
    }
    let listener = listen(&args.socket).map_err(|e| Error::Setup(e.to_string()))?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{READY}").and_then(|()| stdout.flush()).map_err(|e| Error::Setup(e.to_string()))?;
    if args.until_stdin_closes {
        std::thread::spawn(|| {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
            std::process::exit(0);
        });
    }
    Arc::new(broker).serve(listener).map_err(|e| Error::Setup(format!("the broker stopped: {e}")))
}

/// The log, appended to, the user's alone, never through a link.
fn private_log(path: &Path) -> Result<std::fs::File, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .map_err(|error| Error::Write { path: path.to_path_buf(), error })
}

/// The broker a request's tools use: the one at `socket` if given; else, when there is a vault
/// beside `store` or `http` asks for the web, a private one started now (its log beside the
/// store), which ends with the last handle on it; else none.
pub fn for_requests(socket: Option<&Path>, store: &Path, http: bool) -> Result<Option<Arc<Client>>, Error> {
    let failed = |e: cordon::api::broker::BrokerError| Error::Setup(e.to_string());
    if let Some(socket) = socket {
        return Ok(Some(Arc::new(Client::connect(socket).map_err(failed)?)));
    }
    if !http && !location(store).exists() {
        return Ok(None);
    }
    let exe = std::env::current_exe().map_err(|e| Error::Setup(format!("cannot find the cordon program: {e}")))?;
    let mut command = Command::new(exe);
    command.arg("broker").arg("--store").arg(store).arg("--log").arg(store.with_file_name("broker.log"));
    Ok(Some(Arc::new(Client::spawn(command).map_err(failed)?)))
}
