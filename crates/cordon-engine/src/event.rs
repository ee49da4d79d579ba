//! What happens during a request, as it happens, for whoever listens: the CLI's printer, the
//! transcript, a store, a test. One stream: the engine's own steps (effects, stages, the run's
//! end) and the hole filler's (prompts, replies, rejected and accepted fills) reach the same
//! observers in the order they happen. Views of a request (the trace a user reads, the demo, the
//! JSONL transcript) are built from these events, never from rendered text.
//!
//! Every event serializes with serde as a JSON object tagged by its snake_case name in the field
//! `event` (`{"event": "fill_rejected", "hole": "0", ..}`); `cordon-agent`'s transcript writes
//! one per line.

use std::ops::{Add, AddAssign};
use std::sync::Arc;

use cordon_label::Label;
use cordon_runtime::effect::{Effect, HoleRequest};
use cordon_runtime::{Json, RunError, Val};
use cordon_syntax::{Code, FileId, Span};
use serde::Serialize;

use crate::stage::{Note, Verdict};

/// One thing that happened in a request.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event<'a> {
    /// A request starts, with the plan that runs it (for `cordon ask`, the root hole holding
    /// the request's text).
    RequestStarted { plan: &'a str },
    /// The run reached a typed hole: where, and its task. The hole filler takes it from here.
    HoleReached {
        #[serde(flatten, serialize_with = "write::hole")]
        hole: &'a HoleRequest,
    },
    /// A model is asked for a fill: hole `hole`'s attempt `attempt` (from 1) of `max_attempts`.
    /// `label` is the label of everything the prompt shows; `messages` the conversation so far.
    HolePrompted {
        hole: &'a str,
        attempt: u32,
        max_attempts: u32,
        model: &'a str,
        #[serde(serialize_with = "write::display")]
        label: &'a Label,
        max_tokens: u32,
        messages: &'a [Turn<'a>],
    },
    /// The model replied (what a replayed transcript answers with).
    FillReceived { hole: &'a str, attempt: u32, text: &'a str, usage: Usage },
    /// The reply was rejected: `feedback` went back to the model; `first` is its first problem
    /// as data (none when the reply had no code to check).
    FillRejected { hole: &'a str, attempt: u32, feedback: &'a str, first: Option<&'a Problem> },
    /// The reply's code checked as the hole's fill: the run goes on with `code`, the reply's
    /// code block, the source of `file` (where the places of the fill's calls are).
    FillAccepted { hole: &'a str, attempt: u32, code: &'a str, file: FileId },
    /// The accepted fill of attempt `attempt` made a call the labels refused before anything it
    /// did was performed, so the run went back to its hole: `feedback` goes to the model with
    /// the next prompt, if it may be told (`first` is the refusal as data).
    FillRefused { hole: &'a str, attempt: u32, feedback: &'a str, first: Option<&'a Problem> },
    /// The model gave no answer (the provider failed).
    ModelFailed { hole: &'a str, attempt: u32, error: &'a str },
    /// The hole gets no fill and the run ends: the model failed, the attempts ran out, holes
    /// nest too deep, or the model may not be asked at all (`label-flow`, after 0 attempts).
    /// `hole` is none when the hole's site is unknown to the host.
    HoleAbandoned { hole: Option<&'a str>, attempts: u32, code: Code, reason: &'a str },
    /// The boundary admitted a tool call: it goes through the stages next.
    EffectProposed {
        #[serde(flatten, serialize_with = "write::call")]
        effect: &'a Effect,
    },
    /// A stage decided about an effect; `note` is what the stage keeps of the decision, if it
    /// keeps anything (the gate's record: the card, who answered, the grant used or made).
    StageDecided {
        stage: &'a str,
        #[serde(flatten, serialize_with = "write::call")]
        effect: &'a Effect,
        #[serde(flatten, serialize_with = "write::verdict")]
        verdict: &'a Verdict,
        #[serde(skip_serializing_if = "Option::is_none", serialize_with = "write::maybe_note")]
        note: Option<&'a dyn Note>,
    },
    /// A stage decided something that is about no single effect, before the run went on (the
    /// gate's card for a whole plan), as the front end that asked it tells.
    StageNoted {
        stage: &'a str,
        #[serde(serialize_with = "write::note")]
        note: &'a dyn Note,
    },
    /// A call was refused and nothing was performed: by the boundary, as the plan made it, or by
    /// a stage. `args` are its arguments (written as `args_text`, as the trace shows them).
    EffectRefused {
        tool: &'a str,
        #[serde(rename = "args_text", serialize_with = "write::args_text")]
        args: &'a [(Arc<str>, Val)],
        at: Span,
        by: RefusedBy<'a>,
        code: Code,
        reason: &'a str,
    },
    /// Every stage agreed: the call was committed (linear arguments used up, counted, recorded
    /// as allowed) and its host performed it and answered.
    EffectPerformed {
        #[serde(flatten, serialize_with = "write::call")]
        effect: &'a Effect,
        #[serde(serialize_with = "write::answer")]
        answer: &'a Result<Json, String>,
    },
    /// The boundary checked what the tool returned and labelled it: `value`, written as
    /// `value_text` (as the trace shows it), `label` (empty for the bottom label) and `words` (the
    /// same label for people).
    EffectReturned {
        tool: &'a str,
        /// The answer as the boundary made it.
        #[serde(skip)]
        value: &'a Val,
        /// `value` as the trace shows it, shortened.
        #[serde(rename = "value_text")]
        text: &'a str,
        /// The label of all of `value` (its parts' joined).
        #[serde(flatten, serialize_with = "write::label_and_words")]
        label: &'a Label,
        at: Span,
    },
    /// The tool failed, or returned something other than it declares.
    EffectFailed { tool: &'a str, reason: &'a str, at: Span },
    /// A stage holds an effect: the run waits, intact, for what the stage `needs`.
    RunHeld {
        stage: &'a str,
        #[serde(flatten, serialize_with = "write::call")]
        effect: &'a Effect,
        needs: &'a str,
    },
    /// A waiting run is driven again: from the effect it waited at (released, refused, or a
    /// run loaded from bytes), or from a hole or its start.
    RunResumed {
        #[serde(flatten, serialize_with = "write::maybe_call")]
        effect: Option<&'a Effect>,
    },
    /// The run ended: done with the plan's value, or failed.
    RunEnded {
        #[serde(flatten)]
        end: End<'a>,
    },
}

/// The transcript format's version: the `v` of every [`TranscriptLine`]. A reader refuses a
/// line with a newer one. It changes when a line's meaning changes, not when an event or field is
/// added (`docs/transcripts.md`).
pub const TRANSCRIPT_VERSION: u64 = 1;

/// An event as a line of a transcript, `{"v": 1, "seq": n, "event": "<name>", ..fields}`: how
/// a JSONL transcript (`cordon-agent`) and the store's transcript table (`cordon-audit`) both
/// write events.
#[derive(Debug, Serialize)]
pub struct TranscriptLine<'a> {
    v: u64,
    seq: u64,
    #[serde(flatten)]
    event: &'a Event<'a>,
}

impl<'a> TranscriptLine<'a> {
    /// `event` as line `seq` (numbered from 0) of a transcript.
    pub fn new(seq: u64, event: &'a Event<'a>) -> TranscriptLine<'a> {
        TranscriptLine { v: TRANSCRIPT_VERSION, seq, event }
    }
}

/// How a run ended.
#[derive(Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum End<'a> {
    /// The plan's value, with its label.
    Done {
        #[serde(serialize_with = "write::val")]
        result: &'a Val,
    },
    /// Why the run stopped.
    Failed {
        #[serde(serialize_with = "write::error")]
        error: &'a RunError,
    },
}

/// Who refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusedBy<'a> {
    /// The runtime's boundary: a label, a refinement, a forged or used-up value, a limit.
    Boundary,
    /// The stage of this name (or whoever answered for it, refusing a held call).
    Stage(&'a str),
}

/// One message of a conversation with a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Turn<'a> {
    /// `system`, `user` or `assistant`.
    pub role: &'a str,
    pub content: &'a str,
}

/// One diagnostic of a rejected fill, as data: its code, the fill's line it points at, and its
/// message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub code: Code,
    pub line: u32,
    pub message: String,
}

/// Tokens used by one model request, or summed over several.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Usage {
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens in the reply.
    pub completion_tokens: u64,
}

impl Usage {
    /// Prompt and reply tokens together.
    pub fn total(self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self.completion_tokens.saturating_add(other.completion_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// Listens to a request's events.
pub trait Observer {
    fn event(&mut self, event: &Event<'_>);
}

/// A closure is an observer.
impl<F: FnMut(&Event<'_>)> Observer for F {
    fn event(&mut self, event: &Event<'_>) {
        self(event);
    }
}

/// Several observers as one: each hears every event, in the order they were added.
#[derive(Default)]
pub struct Observers<'a>(Vec<&'a mut dyn Observer>);

impl<'a> Observers<'a> {
    /// No observers (every event is dropped).
    pub fn new() -> Observers<'a> {
        Observers::default()
    }

    /// Adds `observer` after the ones already there.
    pub fn with(mut self, observer: &'a mut dyn Observer) -> Observers<'a> {
        self.0.push(observer);
        self
    }

    pub(crate) fn push(&mut self, observer: &'a mut dyn Observer) {
        self.0.push(observer);
    }
}

impl std::fmt::Debug for Observers<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Observers({})", self.0.len())
    }
}

impl Observer for Observers<'_> {
    fn event(&mut self, event: &Event<'_>) {
        for o in &mut self.0 {
            o.event(event);
        }
    }
}

/// How the runtime's data is written: values as JSON, labels as text, a call as its tool's
/// name, its arguments by name and its place; fields in the order a reader wants them.
mod write {
    use std::fmt::Display;
    use std::sync::Arc;

    use cordon_label::Label;
    use cordon_runtime::effect::{Effect, HoleRequest};
    use cordon_runtime::{Json, RunError, Val, deep_label};
    use serde::ser::{Serialize, SerializeMap, Serializer};

    use crate::stage::{Note, Verdict};

    pub(super) fn display<T: Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    /// Arguments as the trace shows them: `name: value, ..`.
    pub(super) fn args_text<S: Serializer>(args: &&[(Arc<str>, Val)], s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&cordon_runtime::trace::args_text(args))
    }

    /// A label as text (empty for the bottom label) and in words, for people.
    pub(super) fn label_and_words<S: Serializer>(label: &&Label, s: S) -> Result<S::Ok, S::Error> {
        let (dc, words) = match label.is_bottom() {
            true => (String::new(), String::new()),
            false => (label.dc().to_string(), label.dc().describe()),
        };
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("label", &dc)?;
        map.serialize_entry("words", &words)?;
        map.end()
    }

    /// A call's arguments by name, in the order of its parameters.
    struct Args<'a>(&'a Effect);

    impl Serialize for Args<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut map = s.serialize_map(Some(self.0.args.len()))?;
            for (name, v) in &self.0.args {
                map.serialize_entry(&**name, &v.value.as_json())?;
            }
            map.end()
        }
    }

    pub(super) fn call<S: Serializer>(effect: &&Effect, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("tool", &format_args!("{}.{}", effect.capability, effect.tool))?;
        map.serialize_entry("args", &Args(effect))?;
        map.serialize_entry("at", &effect.span)?;
        map.end()
    }

    pub(super) fn maybe_call<S: Serializer>(effect: &Option<&Effect>, s: S) -> Result<S::Ok, S::Error> {
        match effect {
            Some(effect) => call(effect, s),
            None => s.serialize_map(Some(0))?.end(),
        }
    }

    pub(super) fn hole<S: Serializer>(hole: &&HoleRequest, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("task", &hole.task.value.as_json())?;
        map.serialize_entry("at", &hole.span)?;
        map.end()
    }

    pub(super) fn verdict<S: Serializer>(verdict: &&Verdict, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        match verdict {
            Verdict::Proceed => map.serialize_entry("verdict", "proceed")?,
            Verdict::Endorse { by } => {
                map.serialize_entry("verdict", "endorse")?;
                map.serialize_entry("by", by)?;
            }
            Verdict::Hold { needs } => {
                map.serialize_entry("verdict", "hold")?;
                map.serialize_entry("needs", needs)?;
            }
            Verdict::Refuse(e) | Verdict::Withhold { error: e, .. } => {
                map.serialize_entry("verdict", "refuse")?;
                map.serialize_entry("code", &e.kind.code())?;
                map.serialize_entry("reason", &e.message)?;
            }
        }
        map.end()
    }

    pub(super) fn note<S: Serializer>(note: &&dyn Note, s: S) -> Result<S::Ok, S::Error> {
        note.to_json().serialize(s)
    }

    pub(super) fn maybe_note<S: Serializer>(note: &Option<&dyn Note>, s: S) -> Result<S::Ok, S::Error> {
        note.map(|n| n.to_json()).serialize(s)
    }

    pub(super) fn answer<S: Serializer>(answer: &&Result<Json, String>, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        match answer {
            Ok(v) => map.serialize_entry("ok", v)?,
            Err(e) => map.serialize_entry("error", e)?,
        }
        map.end()
    }

    pub(super) fn val<S: Serializer>(v: &&Val, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("value", &v.value.as_json())?;
        map.serialize_entry("label", &deep_label(v).to_string())?;
        map.end()
    }

    pub(super) fn error<S: Serializer>(e: &&RunError, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("code", &e.kind.code())?;
        map.serialize_entry("message", &e.message)?;
        map.serialize_entry("at", &e.span)?;
        map.end()
    }
}
