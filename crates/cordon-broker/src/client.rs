//! The client's side of the socket: what a run's hosts and its outgoing-data check ask the
//! broker. One connection, one ask at a time.

use std::ops::Range;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use cordon_egress::SecretFinder;
use cordon_vault::Entry;

use crate::error::BrokerError;
use crate::process::BrokerProcess;
use crate::protocol::{Answer, Ask, Incoming, Outgoing, Refusal, Spawn, read_frame, write_frame};

/// A connection to a broker.
#[derive(Debug)]
pub struct Client {
    path: PathBuf,
    /// The connection kept for questions about the vault; `None` once it failed, until the next
    /// question opens another.
    stream: Mutex<Option<UnixStream>>,
    /// The broker this client started for itself, ended when the client is dropped.
    process: Option<BrokerProcess>,
}

/// How long an ask about texts or secrets may take; a request may take its own timeout more.
const ASK_TIMEOUT: Duration = Duration::from_secs(10);

impl Client {
    /// Connects to the broker listening at `path`.
    pub fn connect(path: &Path) -> Result<Client, BrokerError> {
        let stream = UnixStream::connect(path)
            .map_err(|e| BrokerError(format!("no credential broker answers at {}: {e}", path.display())))?;
        Ok(Client { path: path.to_path_buf(), stream: Mutex::new(Some(stream)), process: None })
    }

    /// Starts a private broker ([`BrokerProcess::start`]) and connects to it; the broker ends
    /// when this client is dropped.
    pub fn spawn(command: std::process::Command) -> Result<Client, BrokerError> {
        let process = BrokerProcess::start(command)?;
        let mut client = Client::connect(process.socket())?;
        client.process = Some(process);
        Ok(client)
    }

    /// Where the broker listens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this client started its broker itself.
    pub fn owns_its_broker(&self) -> bool {
        self.process.is_some()
    }

    /// The vault's secrets: names, destinations and slots.
    pub fn secrets(&self) -> Result<Vec<Entry>, BrokerError> {
        match self.ask(&Ask::Secrets, ASK_TIMEOUT)? {
            Answer::Secrets { entries } => Ok(entries),
            other => Err(unexpected(&other)),
        }
    }

    /// Performs `out` through the broker: what the server answered, or why it was not sent. On
    /// a connection of its own, so that a slow site holds up no other question.
    pub fn send(&self, out: &Outgoing) -> Result<Result<Incoming, Refusal>, BrokerError> {
        let wait = Duration::from_millis(out.timeout_ms).saturating_add(ASK_TIMEOUT);
        let mut stream = self.open()?;
        match exchange(&mut stream, &Ask::Send(out.clone()), wait)? {
            Answer::Sent(incoming) => Ok(Ok(incoming)),
            Answer::Refused(refusal) => Ok(Err(refusal)),
            other => Err(unexpected(&other)),
        }
    }

    /// Starts `spawn`'s program through the broker: the connection that is its standard input
    /// and output (what it writes scrubbed of every vault secret).
    pub fn start(&self, spawn: &Spawn) -> Result<UnixStream, BrokerError> {
        let mut stream = self.open()?;
        match exchange(&mut stream, &Ask::Spawn(spawn.clone()), ASK_TIMEOUT)? {
            Answer::Spawned => {
                stream.set_read_timeout(None).map_err(gone)?;
                Ok(stream)
            }
            Answer::Refused(refusal) => Err(BrokerError(refusal.reason)),
            other => Err(unexpected(&other)),
        }
    }

    /// A new connection to the broker.
    fn open(&self) -> Result<UnixStream, BrokerError> {
        UnixStream::connect(&self.path)
            .map_err(|e| BrokerError(format!("no credential broker answers at {}: {e}", self.path.display())))
    }

    /// Where the vault's secrets are in `text`.
    pub fn find(&self, text: &str) -> Result<Vec<Range<usize>>, BrokerError> {
        match self.ask(&Ask::Find { texts: vec![text.to_string()] }, ASK_TIMEOUT)? {
            Answer::Found { spans } if spans.len() == 1 => Ok(spans[0]
                .iter()
                .filter(|(start, end)| start < end && *end <= text.len())
                .map(|(start, end)| *start..*end)
                .collect()),
            other => Err(unexpected(&other)),
        }
    }

    /// Asks on the kept connection and reads the answer. A connection that failed is dropped,
    /// never used again (an answer that came late would be read as the next one's); the next ask
    /// opens another.
    fn ask(&self, ask: &Ask, wait: Duration) -> Result<Answer, BrokerError> {
        let mut slot = self.stream.lock().map_err(|_| BrokerError("the broker's connection is broken".into()))?;
        let mut stream = match slot.take() {
            Some(stream) => stream,
            None => self.open()?,
        };
        let answer = exchange(&mut stream, ask, wait)?;
        *slot = Some(stream);
        Ok(answer)
    }
}

/// Writes `ask` on `stream` and reads the answer, waiting at most `wait`.
fn exchange(stream: &mut UnixStream, ask: &Ask, wait: Duration) -> Result<Answer, BrokerError> {
    stream.set_read_timeout(Some(wait)).map_err(gone)?;
    write_frame(stream, ask).map_err(gone)?;
    read_frame::<Answer>(stream).map_err(gone)?.ok_or_else(|| BrokerError("the credential broker went away".into()))
}

fn gone(e: std::io::Error) -> BrokerError {
    BrokerError(format!("the credential broker did not answer: {e}"))
}

fn unexpected(answer: &Answer) -> BrokerError {
    let what = match answer {
        Answer::Secrets { .. } => "a list of secrets",
        Answer::Found { .. } => "findings",
        Answer::Sent(_) => "a response",
        Answer::Refused(_) => "a refusal",
        Answer::Spawned => "a started program",
    };
    BrokerError(format!("the credential broker answered with {what} where it was asked something else"))
}

/// The outgoing-data check asking the broker where the vault's secrets are: the broker alone
/// holds their values. A broker that does not answer has found a secret in the whole text, so
/// nothing leaves unchecked.
impl SecretFinder for Client {
    fn find(&self, text: &str) -> Vec<Range<usize>> {
        if text.is_empty() {
            return Vec::new();
        }
        let whole: Range<usize> = 0..text.len();
        Client::find(self, text).unwrap_or_else(|_| std::iter::once(whole).collect())
    }
}
