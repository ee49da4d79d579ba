//! JSONL transcripts of requests: every [`Event`] of the engine's one stream, one JSON object per
//! line, `{"v": 1, "seq": n, "event": "<name>", ..fields}` (the fields are the event's own; see
//! `cordon_engine::Event`). `v` is the format's version, [`VERSION`]; `seq` numbers the lines
//! from 0, across the requests of one transcript. A [`Transcript`] is an [`Observer`]: give it
//! to the engine (through `run_request`) and it writes what it hears.
//!
//! [`replay`] turns a transcript back into a [`Scripted`] provider from its `fill_received`
//! lines (keeping their hole ids), so a recorded run can be replayed offline. It refuses a line
//! written in a newer format, naming the line, rather than guess what it means.
//!
//! Each line is flushed as it is written, so a run that stops half-way leaves a readable
//! transcript. The first write error is kept and reported ([`Transcript::error`]), never ignored;
//! nothing is written after it.

use std::fmt;
use std::io::{self, BufRead, Write};
use std::path::Path;

use cordon_engine::{Event, Observer, TranscriptLine};
use serde_json::Value;

use crate::scripted::{Scripted, ScriptedReply};

/// The transcript format's version, written in every line's `v`. A reader refuses a line with a
/// newer one. It changes when a line's meaning changes, not when an event or field is added.
pub const VERSION: u64 = cordon_engine::TRANSCRIPT_VERSION;

/// Why a transcript could not be written or read.
#[derive(Debug)]
pub enum TranscriptError {
    /// Writing or reading failed.
    Io(io::Error),
    /// A line of a transcript being read was written in a newer format than this one reads.
    Newer {
        /// The line number, from 1.
        line: usize,
        /// Its format version.
        version: u64,
    },
    /// A line of a transcript being read is not a valid line.
    Line {
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

impl fmt::Display for TranscriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TranscriptError::Io(error) => write!(f, "transcript: {error}"),
            TranscriptError::Newer { line, version } => write!(
                f,
                "transcript line {line}: written in transcript format {version}, newer than this Cordon reads \
                 ({VERSION}); replay it with a newer Cordon"
            ),
            TranscriptError::Line { line, message } => write!(f, "transcript line {line}: {message}"),
        }
    }
}

impl std::error::Error for TranscriptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TranscriptError::Io(error) => Some(error),
            _ => None,
        }
    }
}

impl From<io::Error> for TranscriptError {
    fn from(error: io::Error) -> Self {
        TranscriptError::Io(error)
    }
}

/// A transcript being written to `W`.
#[derive(Debug)]
pub struct Transcript<W: Write> {
    out: W,
    seq: u64,
    /// The first write error; nothing is written after it.
    error: Option<TranscriptError>,
}

impl<W: Write> Transcript<W> {
    /// A transcript writing to `out`, numbering lines from 0.
    pub fn new(out: W) -> Self {
        Transcript { out, seq: 0, error: None }
    }

    /// Writes `event` as one line and flushes it.
    pub fn write(&mut self, event: &Event<'_>) -> Result<(), TranscriptError> {
        serde_json::to_writer(&mut self.out, &TranscriptLine::new(self.seq, event)).map_err(io::Error::from)?;
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        self.seq += 1;
        Ok(())
    }

    /// The first write error, if any: the events after it were not written.
    pub fn error(&self) -> Option<&TranscriptError> {
        self.error.as_ref()
    }

    /// How many lines have been written.
    pub fn len(&self) -> u64 {
        self.seq
    }

    /// Whether nothing has been written yet.
    pub fn is_empty(&self) -> bool {
        self.seq == 0
    }

    /// The writer, back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Writes each event it hears; after a write error, keeps the error and writes nothing more.
impl<W: Write> Observer for Transcript<W> {
    fn event(&mut self, event: &Event<'_>) {
        if self.error.is_none()
            && let Err(e) = self.write(event)
        {
            self.error = Some(e);
        }
    }
}

/// A scripted provider answering with the `fill_received` lines of a transcript, in order and
/// with their hole ids. Other lines are skipped, after their version is checked; blank lines
/// are allowed.
pub fn replay(reader: impl BufRead) -> Result<Scripted, TranscriptError> {
    let mut replies = Vec::new();
    for (index, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(reply) = reply_in(index + 1, &line)? {
            replies.push(reply);
        }
    }
    Ok(Scripted::new(replies).with_name("replay"))
}

/// [`replay`] of the transcript file at `path`.
pub fn replay_file(path: &Path) -> Result<Scripted, TranscriptError> {
    let file = std::fs::File::open(path)
        .map_err(|error| io::Error::new(error.kind(), format!("cannot open {}: {error}", path.display())))?;
    Ok(replay(io::BufReader::new(file))?.with_name(format!("replay:{}", path.display())))
}

/// The reply line `number` records, if it is a `fill_received` line.
fn reply_in(number: usize, line: &str) -> Result<Option<ScriptedReply>, TranscriptError> {
    let bad = |message: &str| TranscriptError::Line { line: number, message: message.to_string() };
    let record: Value = serde_json::from_str(line).map_err(|error| bad(&format!("not JSON: {error}")))?;
    match record.get("v") {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => match v.as_u64() {
            Some(version) if version > VERSION => return Err(TranscriptError::Newer { line: number, version }),
            _ => return Err(bad(&format!("`v` must be a format version (this Cordon reads {VERSION}), not {v}"))),
        },
        None => return Err(bad("expected an object with a format version `v` (a transcript from before events?)")),
    }
    let event = match record.get("event") {
        Some(Value::String(event)) => event.as_str(),
        _ => return Err(bad("expected a string `event`")),
    };
    if event != "fill_received" {
        return Ok(None);
    }
    let Some(Value::String(hole)) = record.get("hole") else {
        return Err(bad("a `fill_received` line needs a string `hole`"));
    };
    let Some(Value::String(text)) = record.get("text") else {
        return Err(bad("a `fill_received` line needs a string `text`"));
    };
    Ok(Some(ScriptedReply { hole: Some(hole.clone()), text: text.clone() }))
}
