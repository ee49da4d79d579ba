//! What the audit log holds, and how `show` reads it back.
//!
//! Each effect is two rows: `effect` ("about to perform", committed before the host acts) and
//! `outcome` (performed, with the result's size, or failed). A crash between them leaves an
//! effect whose outcome is unknown, and `show` says so: the log is never silent about an effect
//! the host may have performed.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chain::RowHash;
use crate::request::{Request, RequestId, Status};

/// The kinds of row this crate writes itself; `append` refuses them.
pub mod kind {
    /// A request started: its text, principal and session.
    pub const REQUEST: &str = "request";
    /// A request's status changed.
    pub const STATUS: &str = "status";
    /// An effect is about to be performed.
    pub const EFFECT: &str = "effect";
    /// What became of an effect.
    pub const OUTCOME: &str = "outcome";
    /// The user granted an approval.
    pub const GRANT: &str = "grant";
    /// The user revoked one.
    pub const REVOKE: &str = "revoke";
    /// One expired: written when the store is next asked for a grant after its expiry.
    pub const EXPIRE: &str = "expire";
    /// Rows up to here were moved to an archive file.
    pub const ARCHIVE: &str = "archive";
    /// A run was queued to run in the background: its number, principal, kind and name.
    pub const RUN: &str = "run";
    /// A person answered a background run's card (or its deadline passed, for no one).
    pub const ANSWER: &str = "answer";
    /// A person was allowed to sign in to `cordon serve`.
    pub const USER: &str = "user";

    pub(crate) const RESERVED: [&str; 11] =
        [REQUEST, STATUS, EFFECT, OUTCOME, GRANT, REVOKE, EXPIRE, ARCHIVE, RUN, ANSWER, USER];
}

/// An effect about to be performed: the `effect` row's content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EffectIntent {
    pub tool: String,
    /// The arguments, as the host shows them (never an uncleared secret).
    pub args: Value,
    /// What the gate decided ("allowed", "approved", ..).
    pub decision: String,
    /// Who approved it, if someone had to.
    pub approved_by: Option<String>,
    /// The labels of what flowed into it.
    pub labels: Value,
    /// What each stage of the pipeline before the audit said about it, in order (the approval
    /// gate's hold and, once approved, its proceed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageDecision>,
}

/// A stage's decision about an effect, as the audit log keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageDecision {
    pub stage: String,
    /// `proceed`, `endorse` (the label checks it failed approved; who did is the effect's
    /// `approved_by`) or `hold` (an effect a stage refused is never about to be performed).
    pub verdict: String,
    /// What a held effect waited for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs: Option<String>,
}

/// What became of an effect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Performed { result_size: u64 },
    Failed { error: String },
}

/// The `outcome` row's content.
#[derive(Serialize, Deserialize)]
pub(crate) struct OutcomeRow {
    pub effect: u64,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// An effect whose "about to perform" row is committed and whose outcome is not yet written.
/// `end_effect` takes it, so an outcome is written at most once.
#[must_use = "an effect's outcome must be written with `end_effect`"]
#[derive(Debug)]
pub struct PendingEffect {
    pub(crate) seq: u64,
    pub(crate) request: Option<RequestId>,
}

impl PendingEffect {
    /// The number of its "about to perform" row.
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

/// What a request did since its record was last committed: its transcript lines and its audit
/// rows, in the order they happened. [`Store::record`](crate::Store::record) writes a batch in
/// one transaction, with the "about to perform" row of the effect that follows it, so a request
/// costs one commit per effect rather than one per row.
#[derive(Debug, Default)]
pub struct Batch {
    pub transcript: Lines,
    pub rows: Vec<BatchRow>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.transcript.is_empty() && self.rows.is_empty()
    }

    /// Empties the batch, keeping what it allocated for the next one.
    pub fn clear(&mut self) {
        self.transcript.clear();
        self.rows.clear();
    }
}

/// Transcript lines, each the JSON text a value serialised to, written one after another into
/// one buffer: no allocation of its own for each line, and the lines are already the JSON
/// array a store keeps them in.
#[derive(Debug, Default)]
pub struct Lines {
    /// Empty, or the JSON array of the lines: `[`, the lines separated by commas, `]`.
    text: String,
    /// Where each line ends in `text`.
    ends: Vec<usize>,
    /// Where a line is serialised before it joins `text`, once it is known to be text.
    scratch: Vec<u8>,
}

impl Lines {
    /// The lines `items` serialise to, in order.
    pub fn of<T: Serialize>(items: impl IntoIterator<Item = T>) -> Result<Lines, serde_json::Error> {
        let mut lines = Lines::default();
        items.into_iter().try_for_each(|item| lines.push(&item))?;
        Ok(lines)
    }

    /// Appends `line` serialised as JSON; if it cannot be, nothing is appended.
    pub fn push(&mut self, line: &impl Serialize) -> Result<(), serde_json::Error> {
        self.scratch.clear();
        serde_json::to_writer(&mut self.scratch, line)?;
        let line = std::str::from_utf8(&self.scratch)
            .map_err(|e| serde_json::Error::io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        // The array's `]` gives way to the comma before the new line.
        if self.text.pop().is_none() {
            self.text.push('[');
        } else {
            self.text.push(',');
        }
        self.text.push_str(line);
        self.ends.push(self.text.len());
        self.text.push(']');
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// Each line's text, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        // Past the `[` or the comma before each line.
        starts.zip(&self.ends).map(|(start, end)| &self.text[start + 1..*end])
    }

    /// The lines as one JSON text: the line itself if there is one, else the array of them.
    pub fn json(&self) -> &str {
        match self.ends.as_slice() {
            [] => "[]",
            [one] => &self.text[1..*one],
            [..] => &self.text,
        }
    }
}

/// One audit row of a [`Batch`].
#[derive(Debug)]
pub enum BatchRow {
    /// A row of a kind this crate does not reserve, as `append` writes it.
    Row { kind: &'static str, content: Value },
    /// What became of an effect, as `end_effect` writes it.
    Outcome { effect: PendingEffect, outcome: Outcome },
}

impl BatchRow {
    /// The row's kind and content, as stored for `request`; a reserved kind is refused, and so
    /// is the outcome of another request's effect.
    pub(crate) fn content(&self, request: RequestId) -> Result<(&'static str, String), crate::StoreError> {
        match self {
            BatchRow::Row { kind, content } => {
                if kind::RESERVED.contains(kind) {
                    return Err(crate::StoreError::ReservedKind((*kind).into()));
                }
                Ok((kind, serde_json::to_string(content)?))
            }
            BatchRow::Outcome { effect, .. } if effect.request != Some(request) => Err(crate::StoreError::Unsupported(
                format!("writing request {request}'s record with another's outcome"),
            )),
            BatchRow::Outcome { effect, outcome } => {
                let row = OutcomeRow { effect: effect.seq, outcome: outcome.clone() };
                Ok((kind::OUTCOME, serde_json::to_string(&row)?))
            }
        }
    }
}

/// An audit row as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRow {
    pub seq: u64,
    pub at_ms: i64,
    pub kind: String,
    pub request: Option<RequestId>,
    /// The JSON text exactly as hashed.
    pub content: String,
    pub hash: RowHash,
}

/// One entry of `show`: a row, with an effect's outcome folded into it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    pub seq: u64,
    pub at_ms: i64,
    pub kind: String,
    pub request: Option<RequestId>,
    /// The content; a string if the stored text is not JSON.
    pub content: Value,
    /// For an `effect` row: what became of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<EffectStatus>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum EffectStatus {
    Performed {
        seq: u64,
        result_size: u64,
    },
    Failed {
        seq: u64,
        error: String,
    },
    /// No outcome row: the process stopped between the two rows (or is still performing it).
    /// The host may or may not have performed the effect.
    Unknown,
}

/// What happened in a request, for `cordon audit show`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestLog {
    pub request: Request,
    pub entries: Vec<Entry>,
}

/// Folds each `outcome` row into its `effect` row; every other row stays as it is.
pub(crate) fn fold(rows: Vec<AuditRow>) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::with_capacity(rows.len());
    // Effects still waiting for their outcome: row number to index in `entries`.
    let mut pending: HashMap<u64, usize> = HashMap::new();
    for row in rows {
        let content = serde_json::from_str(&row.content).unwrap_or(Value::String(row.content));
        if row.kind == kind::OUTCOME
            && let Ok(out) = serde_json::from_value::<OutcomeRow>(content.clone())
            && let Some(effect) = pending.remove(&out.effect).and_then(|i| entries.get_mut(i))
        {
            effect.outcome = Some(match out.outcome {
                Outcome::Performed { result_size } => EffectStatus::Performed { seq: row.seq, result_size },
                Outcome::Failed { error } => EffectStatus::Failed { seq: row.seq, error },
            });
            continue;
        }
        let outcome = (row.kind == kind::EFFECT).then_some(EffectStatus::Unknown);
        if outcome.is_some() {
            pending.insert(row.seq, entries.len());
        }
        entries.push(Entry { seq: row.seq, at_ms: row.at_ms, kind: row.kind, request: row.request, content, outcome });
    }
    entries
}

/// A request's status as written in its `status` row.
#[derive(Serialize)]
pub(crate) struct StatusRow {
    pub status: Status,
}

/// What `gc` removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GcReport {
    /// Requests whose transcripts were removed.
    pub requests: u64,
    /// Transcript events removed.
    pub events: u64,
}

/// What `archive` moved out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Archived {
    pub rows: u64,
    /// The last row archived: the new start of the store's chain.
    pub through: crate::chain::Checkpoint,
}
