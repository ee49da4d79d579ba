//! The broker as a process of its own: where it listens, and a private one started for a run.
//!
//! A front end that needs a broker and was given none starts one for itself ([`Client::spawn`]):
//! the `cordon broker` command with a socket in a new directory only the user may enter, a
//! broker that ends with its client, or when the front end ends (its standard input closes).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::error::BrokerError;

/// What a broker prints on standard output once it listens.
pub const READY: &str = "cordon-broker ready";

/// How long a starting broker may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Listens at `socket`, a new socket only the user may use (0600). An existing file there is
/// an error, not replaced.
pub fn listen(socket: &Path) -> Result<UnixListener, BrokerError> {
    let listener =
        UnixListener::bind(socket).map_err(|e| BrokerError(format!("cannot listen at {}: {e}", socket.display())))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| BrokerError(format!("cannot make {} private: {e}", socket.display())))?;
    Ok(listener)
}

/// A broker started for one front end: killed, and its directory removed, when dropped.
#[derive(Debug)]
pub struct BrokerProcess {
    child: Child,
    socket: PathBuf,
    // Removed when dropped, after the child is gone.
    _dir: tempfile::TempDir,
}

impl BrokerProcess {
    /// Starts `command` (the `cordon broker` command line, with its store and log but no
    /// socket), adding `--socket` in a new private directory and `--until-stdin-closes`, and
    /// waits until it listens.
    pub fn start(mut command: Command) -> Result<BrokerProcess, BrokerError> {
        let dir = tempfile::Builder::new()
            .prefix("cordon-broker-")
            .tempdir()
            .map_err(|e| BrokerError(format!("cannot make a private directory for the broker: {e}")))?;
        let socket = dir.path().join("broker.sock");
        command.arg("--socket").arg(&socket).arg("--until-stdin-closes");
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| BrokerError(format!("cannot start the credential broker: {e}")))?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (tell, ready) = mpsc::channel();
        std::thread::spawn(move || {
            let line = stdout.and_then(|out| BufReader::new(out).lines().next()).and_then(Result::ok);
            let _ = tell.send(line);
        });
        match ready.recv_timeout(START_TIMEOUT) {
            Ok(Some(line)) if line == READY => Ok(BrokerProcess { child, socket, _dir: dir }),
            outcome => {
                let _ = child.kill();
                let _ = child.wait();
                let said = stderr.map(|e| {
                    let mut text = String::new();
                    let _ = std::io::Read::read_to_string(&mut std::io::Read::take(e, 4096), &mut text);
                    text
                });
                let said = said.unwrap_or_default();
                let why = match outcome {
                    Err(_) => format!("it did not listen within {} s", START_TIMEOUT.as_secs()),
                    _ if said.trim().is_empty() => "it ended".to_string(),
                    _ => said.trim().trim_start_matches("error: ").to_string(),
                };
                Err(BrokerError(format!("the credential broker could not start: {why}")))
            }
        }
    }

    /// Where it listens.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for BrokerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
