//! The broker's side of the socket: one thread per client, each ask answered in turn. A
//! client must be the broker's own user (its peer credentials say so); anyone else is cut off
//! before it is read. Every request performed or refused is a line of the broker's log.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use cordon_egress::{SecretFinder, VaultMatcher};
use cordon_vault::{Entry, SecretValue, Vault};

use crate::address::{Resolve, SystemResolver};
use crate::protocol::{Answer, Ask, Outgoing, Spawn, read_frame, write_frame};
use crate::send::Sender;

/// The broker: the vault's secrets, and what it needs to send requests with them.
pub struct Broker {
    sender: Sender,
    log: Option<Mutex<File>>,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker").field("secrets", &self.entries()).finish_non_exhaustive()
    }
}

impl Broker {
    /// A broker for `vault`'s secrets (none without one), resolving names with the system's
    /// resolver.
    pub fn new(vault: Option<&Vault>) -> Broker {
        let secrets = vault.map(Vault::secrets).unwrap_or_default();
        Broker::with_secrets(secrets)
    }

    /// A broker for `secrets`, each with where it is bound.
    pub fn with_secrets(secrets: Vec<(Entry, SecretValue)>) -> Broker {
        let values: Vec<SecretValue> = secrets.iter().map(|(_, v)| v.clone()).collect();
        Broker {
            sender: Sender { matcher: VaultMatcher::new(&values), secrets, resolver: Arc::new(SystemResolver) },
            log: None,
        }
    }

    /// The same broker resolving names with `resolver`.
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolve>) -> Broker {
        self.sender.resolver = resolver;
        self
    }

    /// The same broker writing a line for each request to `log`.
    pub fn with_log(mut self, log: File) -> Broker {
        self.log = Some(Mutex::new(log));
        self
    }

    fn entries(&self) -> Vec<Entry> {
        self.sender.secrets.iter().map(|(e, _)| e.clone()).collect()
    }

    /// The answer to `ask`.
    pub fn answer(&self, ask: &Ask) -> Answer {
        match ask {
            Ask::Secrets => Answer::Secrets { entries: self.entries() },
            Ask::Find { texts } => Answer::Found {
                spans: texts
                    .iter()
                    .map(|t| self.sender.matcher.find(t).into_iter().map(|r| (r.start, r.end)).collect())
                    .collect(),
            },
            Ask::Spawn(_) => Answer::Refused(crate::Refusal::new(
                crate::Code::BadRequest,
                "a program is started only on a connection of its own",
            )),
            Ask::Send(out) => {
                let (sent, result) = self.sender.send(out);
                self.log(out, sent.as_ref().map(|s| (s.origin.as_str(), s.path.as_str())), &result);
                match result {
                    Ok(incoming) => Answer::Sent(incoming),
                    Err(refusal) => Answer::Refused(refusal),
                }
            }
        }
    }

    /// Serves clients on a new socket at `socket`, on a thread of its own (for a broker inside
    /// the process that uses it: tests, embedders), and connects to it.
    pub fn serve_on_thread(self, socket: &std::path::Path) -> Result<crate::Client, crate::BrokerError> {
        let listener = crate::listen(socket)?;
        let broker = Arc::new(self);
        std::thread::spawn(move || broker.serve(listener));
        crate::Client::connect(socket)
    }

    /// Serves clients on `listener` until it fails.
    pub fn serve(self: Arc<Self>, listener: UnixListener) -> io::Result<()> {
        for stream in listener.incoming() {
            match stream {
                Ok(stream) => {
                    let broker = self.clone();
                    std::thread::spawn(move || broker.serve_client(stream));
                }
                // Out of descriptors, say, for a moment: the broker goes on.
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
            }
        }
        Ok(())
    }

    fn serve_client(&self, mut stream: UnixStream) {
        let Ok(peer) = rustix::net::sockopt::socket_peercred(&stream) else { return };
        if peer.uid != rustix::process::getuid() {
            return;
        }
        while let Ok(Some(ask)) = read_frame::<Ask>(&mut stream) {
            if let Ask::Spawn(spawn) = &ask {
                return self.spawn(stream, spawn);
            }
            if write_frame(&mut stream, &self.answer(&ask)).is_err() {
                return;
            }
        }
    }

    /// Starts the program, tells the client, and relays for it on this connection.
    fn spawn(&self, mut stream: UnixStream, spawn: &Spawn) {
        let started = self.sender.start(spawn);
        self.log_spawn(spawn, &started);
        match started {
            Ok(child) => {
                if write_frame(&mut stream, &Answer::Spawned).is_ok() {
                    crate::spawn::relay(stream, child, &self.sender.matcher);
                }
            }
            Err(refusal) => {
                let _ = write_frame(&mut stream, &Answer::Refused(refusal));
            }
        }
    }

    fn log_spawn(&self, spawn: &Spawn, started: &Result<std::process::Child, crate::Refusal>) {
        let Some(log) = &self.log else { return };
        let time_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let outcome = match started {
            Ok(child) => serde_json::json!({ "pid": child.id() }),
            Err(refusal) => serde_json::json!({ "refused": refusal.code.name(), "reason": refusal.reason }),
        };
        let secrets: Vec<&str> = spawn.secrets.iter().map(|(_, name)| name.as_str()).collect();
        let line = serde_json::json!({
            "time_ms": time_ms,
            "program": spawn.command,
            "secrets": secrets,
            "outcome": outcome,
        });
        if let Ok(mut file) = log.lock() {
            let _ = writeln!(file, "{line}");
        }
    }

    fn log(&self, out: &Outgoing, sent: Option<(&str, &str)>, result: &Result<crate::Incoming, crate::Refusal>) {
        let Some(log) = &self.log else { return };
        let time_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let outcome = match result {
            Ok(incoming) => serde_json::json!({ "status": incoming.status }),
            Err(refusal) => serde_json::json!({ "refused": refusal.code.name(), "reason": refusal.reason }),
        };
        let line = serde_json::json!({
            "time_ms": time_ms,
            "method": out.method,
            "origin": sent.map(|s| s.0),
            "path": sent.map(|s| s.1),
            "credential": out.credential,
            "outcome": outcome,
        });
        if let Ok(mut file) = log.lock() {
            let _ = writeln!(file, "{line}");
        }
    }
}
