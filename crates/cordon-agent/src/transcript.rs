//! JSONL transcripts of a run: one JSON object per line, `{"seq": n, "kind": ..., fields...}`,
//! with kind one of `prompt`, `reply`, `diagnostics`, `attempt`, `effect`, `decision`, `note`.
//! [`replay`] turns a transcript back into a [`Scripted`] provider from its `reply` lines
//! (keeping their hole ids), so a recorded run can be replayed offline.
//!
//! Each record is flushed as it is written, so a run that stops half-way leaves a readable
//! transcript. Write errors are returned, never ignored.

use std::fmt;
use std::io::{self, BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::provider::{Completion, Request};
use crate::scripted::{Scripted, ScriptedReply};

/// What a transcript line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A request sent to a model.
    Prompt,
    /// A model's reply (what [`replay`] reads).
    Reply,
    /// Parse or check diagnostics sent back to the model.
    Diagnostics,
    /// The start or outcome of an attempt at filling a hole.
    Attempt,
    /// An effect the program performed or tried.
    Effect,
    /// A gate or approval decision.
    Decision,
    /// Anything else worth keeping.
    Note,
}

impl Kind {
    /// The name written in the `kind` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Prompt => "prompt",
            Kind::Reply => "reply",
            Kind::Diagnostics => "diagnostics",
            Kind::Attempt => "attempt",
            Kind::Effect => "effect",
            Kind::Decision => "decision",
            Kind::Note => "note",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a transcript could not be written or read.
#[derive(Debug)]
pub enum TranscriptError {
    /// Writing or reading failed.
    Io(io::Error),
    /// A record's fields use a reserved name (`seq`, `kind`).
    ReservedField(String),
    /// A line of a transcript being read is not a valid record.
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
            TranscriptError::ReservedField(name) => {
                write!(f, "transcript record may not have a field named `{name}` (it is reserved)")
            }
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

/// One line as written: sequence number and kind first, then the fields.
#[derive(Serialize)]
struct Line<'a> {
    seq: u64,
    kind: Kind,
    #[serde(flatten)]
    fields: &'a Map<String, Value>,
}

/// A transcript being written to `W`.
#[derive(Debug)]
pub struct Transcript<W: Write> {
    out: W,
    seq: u64,
}

impl<W: Write> Transcript<W> {
    /// A transcript writing to `out`, numbering records from 0.
    pub fn new(out: W) -> Self {
        Transcript { out, seq: 0 }
    }

    /// Write one record. An object's fields are written beside `seq` and `kind`; any other
    /// value is written as the field `value` (`null` writes no fields).
    pub fn record(&mut self, kind: Kind, fields: Value) -> Result<(), TranscriptError> {
        let fields = match fields {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => Map::from_iter([("value".to_string(), other)]),
        };
        if let Some(reserved) = ["seq", "kind"].into_iter().find(|name| fields.contains_key(*name)) {
            return Err(TranscriptError::ReservedField(reserved.to_string()));
        }
        let line = Line { seq: self.seq, kind, fields: &fields };
        serde_json::to_writer(&mut self.out, &line).map_err(io::Error::from)?;
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        self.seq += 1;
        Ok(())
    }

    /// Record a request sent to `provider`.
    pub fn prompt(&mut self, provider: &str, request: &Request) -> Result<(), TranscriptError> {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|message| json!({ "role": message.role.as_str(), "content": message.content }))
            .collect();
        self.record(
            Kind::Prompt,
            json!({
                "hole": request.hole,
                "provider": provider,
                "max_tokens": request.max_tokens,
                "messages": messages,
            }),
        )
    }

    /// Record a model's reply for `hole`, in the form [`replay`] reads.
    pub fn reply(&mut self, hole: Option<&str>, completion: &Completion) -> Result<(), TranscriptError> {
        self.record(Kind::Reply, json!({ "hole": hole, "text": completion.text, "usage": completion.usage }))
    }

    /// How many records have been written.
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

/// A scripted provider answering with the `reply` records of a transcript, in order and with
/// their hole ids. Other records are skipped; blank lines are allowed.
pub fn replay(reader: impl BufRead) -> Result<Scripted, TranscriptError> {
    let mut replies = Vec::new();
    for (index, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(reply) = reply_in(&line).map_err(|message| TranscriptError::Line { line: index + 1, message })? {
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

/// The reply a transcript line records, if it is a `reply` record.
fn reply_in(line: &str) -> Result<Option<ScriptedReply>, String> {
    let record: Value = serde_json::from_str(line).map_err(|error| format!("not JSON: {error}"))?;
    let kind = match record.get("kind") {
        Some(Value::String(kind)) => kind.as_str(),
        _ => return Err("expected an object with a string `kind`".to_string()),
    };
    if kind != Kind::Reply.as_str() {
        return Ok(None);
    }
    let text = match record.get("text") {
        Some(Value::String(text)) => text.clone(),
        _ => return Err("a `reply` record needs a string `text`".to_string()),
    };
    let hole = match record.get("hole") {
        None | Some(Value::Null) => None,
        Some(Value::String(hole)) => Some(hole.clone()),
        Some(_) => return Err("a `reply` record's `hole` must be a string or null".to_string()),
    };
    Ok(Some(ScriptedReply { hole, text }))
}
