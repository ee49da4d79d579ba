//! JSONL transcripts of requests: every [`Event`] of the engine's one stream, one JSON object per
//! line, `{"v": 1, "seq": n, "event": "<name>", ..fields}` (the fields are the event's own; see
//! `cordon_engine::Event`). `v` is the format's version, [`VERSION`]; `seq` numbers the lines
//! from 0, across the requests of one transcript. A [`Transcript`] is an [`Observer`]: give it
//! to the engine and it writes what it hears.
//!
//! [`replay`] turns a transcript back into a provider, [`Replay`], from its `hole_prompted` and
//! `fill_received` lines, so a recorded run can be replayed offline. It refuses a line written
//! in a newer format, naming the line, rather than guess what it means. A replay answers only
//! the run it was recorded for: each request must carry the prompt recorded for that hole and
//! attempt (a transcript of another request is refused at its first prompt, saying where they
//! differ), the usage is the recorded token counts, and replies no request asked for are an
//! error when the caller is done ([`Provider::finish`]).
//!
//! Each line is flushed as it is written, so a run that stops half-way leaves a readable
//! transcript. The first write error is kept and reported ([`Transcript::error`]), never ignored;
//! nothing is written after it.

use std::fmt;
use std::io::{self, BufRead, Write};
use std::path::Path;

use cordon_engine::{Event, Observer, TranscriptLine};
use serde_json::Value;

use crate::provider::{Completion, Message, Provider, ProviderError, Request, Usage};

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

/// One recorded attempt: the hole, the conversation the model was shown, its reply and what the
/// reply cost.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Recorded {
    hole: String,
    attempt: u64,
    messages: Vec<(String, String)>,
    text: String,
    usage: Usage,
    used: bool,
}

/// A provider replaying a transcript (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Replay {
    name: String,
    recorded: Vec<Recorded>,
}

impl Replay {
    /// The same replay under another name (shown in logs and transcripts).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// How many recorded replies have not been asked for yet.
    pub fn remaining(&self) -> usize {
        self.recorded.iter().filter(|r| !r.used).count()
    }
}

impl Provider for Replay {
    fn name(&self) -> &str {
        &self.name
    }

    /// The next recorded reply for the request's hole, if the request carries the prompt it was
    /// recorded with; its recorded usage.
    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        let hole = request.hole.clone();
        let Some(next) = self.recorded.iter_mut().find(|r| !r.used && Some(&r.hole) == hole.as_ref()) else {
            return Err(match &hole {
                Some(hole) => ProviderError::Mismatch(format!(
                    "the transcript holds no reply for hole `{hole}` here; it was recorded for another request"
                )),
                None => ProviderError::Exhausted { hole: None },
            });
        };
        if let Some(difference) = difference(&next.messages, &request.messages) {
            return Err(ProviderError::Mismatch(format!(
                "hole `{}` attempt {} was recorded for another request: {difference}",
                next.hole, next.attempt
            )));
        }
        next.used = true;
        Ok(Completion { text: next.text.clone(), usage: next.usage })
    }

    fn finish(&mut self) -> Result<(), ProviderError> {
        let left: Vec<String> = self
            .recorded
            .iter()
            .filter(|r| !r.used)
            .map(|r| format!("hole `{}` attempt {}", r.hole, r.attempt))
            .collect();
        if left.is_empty() {
            return Ok(());
        }
        Err(ProviderError::Mismatch(format!(
            "{} recorded repl{} never asked for ({}): the transcript was recorded for another run",
            left.len(),
            if left.len() == 1 { "y was" } else { "ies were" },
            left.join(", ")
        )))
    }
}

/// Where the conversation `now` differs from the recorded one, if it does: the first message
/// that differs, and the first line in it.
fn difference(recorded: &[(String, String)], now: &[Message]) -> Option<String> {
    for (index, (want, got)) in recorded.iter().zip(now).enumerate() {
        if want.0 != got.role.as_str() {
            return Some(format!("message {} is from the {} (recorded: the {})", index + 1, got.role.as_str(), want.0));
        }
        if want.1 != got.content {
            let (mut recorded_lines, mut lines) = (want.1.lines(), got.content.lines());
            let mut line = 1;
            loop {
                match (recorded_lines.next(), lines.next()) {
                    (Some(a), Some(b)) if a == b => line += 1,
                    (a, b) => {
                        let show = |l: Option<&str>| match l {
                            Some(l) => format!("`{}`", l.chars().take(120).collect::<String>()),
                            None => "nothing".to_string(),
                        };
                        return Some(format!(
                            "the prompt's message {} differs at line {line}: recorded {}, now {}",
                            index + 1,
                            show(a),
                            show(b)
                        ));
                    }
                }
            }
        }
    }
    (recorded.len() != now.len())
        .then(|| format!("the prompt has {} messages (recorded: {})", now.len(), recorded.len()))
}

/// A provider answering with the replies a transcript recorded (its `fill_received` lines),
/// each for the hole and the prompt its `hole_prompted` line recorded. Other lines are skipped,
/// after their version is checked; blank lines are allowed.
pub fn replay(reader: impl BufRead) -> Result<Replay, TranscriptError> {
    let mut recorded = Vec::new();
    let mut prompted: Option<Prompted> = None;
    for (index, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match line_in(index + 1, &line)? {
            Line::Prompted { hole, attempt, messages } => prompted = Some((hole, attempt, messages)),
            Line::Received { hole, attempt, text, usage } => {
                let messages = match prompted.take() {
                    Some((h, a, messages)) if h == hole && a == attempt => messages,
                    _ => {
                        return Err(TranscriptError::Line {
                            line: index + 1,
                            message: format!(
                                "a `fill_received` line for hole `{hole}` attempt {attempt} must follow the \
                                 `hole_prompted` line of that attempt"
                            ),
                        });
                    }
                };
                recorded.push(Recorded { hole, attempt, messages, text, usage, used: false });
            }
            Line::Other => {}
        }
    }
    Ok(Replay { name: "replay".to_string(), recorded })
}

/// [`replay`] of the transcript file at `path`.
pub fn replay_file(path: &Path) -> Result<Replay, TranscriptError> {
    let file = std::fs::File::open(path)
        .map_err(|error| io::Error::new(error.kind(), format!("cannot open {}: {error}", path.display())))?;
    Ok(replay(io::BufReader::new(file))?.with_name(format!("replay:{}", path.display())))
}

/// A `hole_prompted` line's hole, attempt and conversation.
type Prompted = (String, u64, Vec<(String, String)>);

/// What a transcript line holds, for a replay.
enum Line {
    Prompted { hole: String, attempt: u64, messages: Vec<(String, String)> },
    Received { hole: String, attempt: u64, text: String, usage: Usage },
    Other,
}

/// What line `number` records.
fn line_in(number: usize, line: &str) -> Result<Line, TranscriptError> {
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
    if event != "fill_received" && event != "hole_prompted" {
        return Ok(Line::Other);
    }
    let Some(Value::String(hole)) = record.get("hole") else {
        return Err(bad(&format!("a `{event}` line needs a string `hole`")));
    };
    let text = match record.get("text") {
        Some(Value::String(text)) => Some(text),
        _ if event == "fill_received" => return Err(bad("a `fill_received` line needs a string `text`")),
        _ => None,
    };
    let Some(attempt) = record.get("attempt").and_then(Value::as_u64) else {
        return Err(bad(&format!("a `{event}` line needs a count `attempt`")));
    };
    let Some(text) = text else {
        let Some(Value::Array(turns)) = record.get("messages") else {
            return Err(bad("a `hole_prompted` line needs an array `messages`"));
        };
        let mut messages = Vec::new();
        for turn in turns {
            let (Some(Value::String(role)), Some(Value::String(content))) = (turn.get("role"), turn.get("content"))
            else {
                return Err(bad("each of `messages` needs a string `role` and `content`"));
            };
            messages.push((role.clone(), content.clone()));
        }
        return Ok(Line::Prompted { hole: hole.clone(), attempt, messages });
    };
    let usage = match record.get("usage") {
        Some(usage) => serde_json::from_value::<Usage>(usage.clone())
            .map_err(|error| bad(&format!("`usage` is not a token count: {error}")))?,
        None => return Err(bad("a `fill_received` line needs its `usage`")),
    };
    Ok(Line::Received { hole: hole.clone(), attempt, text: text.clone(), usage })
}
