//! What a broker and its clients say to each other over the socket: one [`Ask`], one
//! [`Answer`], each a frame of JSON after its length (four bytes, big-endian). Nothing here
//! holds a secret's value: a request names the secret it wants put in, and an answer never
//! holds one (the broker scrubs it out of what it received).

use std::io::{self, Read, Write};

use cordon_vault::Entry;
use serde::{Deserialize, Serialize};

/// The largest frame either side reads: a response body at its limit, escaped as JSON.
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// What a client asks.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "kebab-case")]
pub enum Ask {
    /// The vault's secrets: names, destinations and header slots, never values.
    Secrets,
    /// Where the vault's secrets are in each text, in any form the outgoing-data check knows.
    Find { texts: Vec<String> },
    /// Perform one request.
    Send(Outgoing),
    /// Start a program with vault secrets in its environment; once it is answered `Spawned`, the
    /// connection is the program's standard input and output (what it writes scrubbed of every
    /// vault secret, line by line), until either ends.
    Spawn(Spawn),
}

/// What the broker answers.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "kebab-case")]
pub enum Answer {
    Secrets {
        entries: Vec<Entry>,
    },
    /// For each text asked about, the byte spans holding a secret (they may overlap).
    Found {
        spans: Vec<Vec<(usize, usize)>>,
    },
    Sent(Incoming),
    Refused(Refusal),
    /// The program started: the connection is its standard input and output from here on.
    Spawned,
}

/// A program to start: a local MCP server that wants a token in its environment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spawn {
    pub command: String,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    /// Variables set as they are (`PATH`, and what the configuration passes through); the
    /// program gets no other environment.
    pub env: Vec<(String, String)>,
    /// Variables set to a vault secret's value, each with the secret's name: only a secret bound
    /// to exactly this command and these arguments.
    pub secrets: Vec<(String, String)>,
}

/// One outgoing HTTP request. Redirects are not followed here: a redirect is answered as it is,
/// for the caller to judge the next address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outgoing {
    /// `GET`, `HEAD`, `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
    /// The secret to put in, by name: into the header the vault binds it to, and only if the
    /// request's scheme, host and port are one of the places it is bound to.
    pub credential: Option<String>,
    /// How long the whole exchange may take, in milliseconds.
    pub timeout_ms: u64,
    /// The most bytes of body the answer may have.
    pub max_response_bytes: usize,
    /// Whether an address written in the URL may be one on this machine or a private network
    /// (a name must always lead to the internet): the deployer's say, for the web; a server's
    /// own address from the user's configuration.
    #[serde(default)]
    pub local: bool,
}

/// What the server answered, with every vault secret in it replaced by `[vault secret]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Incoming {
    pub status: u16,
    /// Its headers, names in lower case, in the order received (`set-cookie` left out).
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Incoming {
    /// The first header called `name` (in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Why a request was not performed, or performed without an answer to give.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub code: Code,
    /// What happened, in words; never a secret.
    pub reason: String,
}

/// The kinds of [`Refusal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// The request is malformed: an address, a method or a header that cannot be sent.
    BadRequest,
    /// The request would put a secret where it is not bound, or reach an address it may not.
    NotAllowed,
    /// No connection, or the server broke it off.
    Unreachable,
    Timeout,
    /// The answer's body is longer than the limit.
    TooLarge,
    /// The answer's body is not UTF-8 text.
    NotText,
}

impl Code {
    /// Its name, as a host's error reports it.
    pub fn name(self) -> &'static str {
        match self {
            Code::BadRequest => "bad-request",
            Code::NotAllowed => "not-allowed",
            Code::Unreachable => "unreachable",
            Code::Timeout => "timeout",
            Code::TooLarge => "too-large",
            Code::NotText => "not-text",
        }
    }
}

impl Refusal {
    pub fn new(code: Code, reason: impl Into<String>) -> Refusal {
        Refusal { code, reason: reason.into() }
    }
}

/// Writes `message` as one frame.
pub fn write_frame(out: &mut impl Write, message: &impl Serialize) -> io::Result<()> {
    let bytes = serde_json::to_vec(message).map_err(io::Error::other)?;
    let length = u32::try_from(bytes.len()).ok().filter(|n| (*n as usize) <= MAX_FRAME);
    let Some(length) = length else {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "a message longer than the broker's frame limit"));
    };
    out.write_all(&length.to_be_bytes())?;
    out.write_all(&bytes)?;
    out.flush()
}

/// Reads one frame; `None` at the end of the stream before a frame starts.
pub fn read_frame<T: for<'de> Deserialize<'de>>(input: &mut impl Read) -> io::Result<Option<T>> {
    let mut length = [0u8; 4];
    match input.read_exact(&mut length) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let length = u32::from_be_bytes(length) as usize;
    if length > MAX_FRAME {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("a frame of {length} bytes is over the limit")));
    }
    // Read as it comes, not allocated up front: a peer cannot make the reader hold memory it did
    // not send.
    let mut bytes = Vec::new();
    input.take(length as u64).read_to_end(&mut bytes)?;
    if bytes.len() != length {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the stream ended inside a frame"));
    }
    serde_json::from_slice(&bytes).map(Some).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}
