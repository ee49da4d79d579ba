//! What a check and a request report, as data: every front end renders these (the CLI for people
//! and as JSON, `cordon mcp serve` to a calling agent), and none computes them again.

use cordon_agent::{HoleStats, ProviderError, Usage};
use cordon_audit::RecordError;
use cordon_flow::Summary;
use cordon_gate::{Record, Stats};
use cordon_runtime::{ErrorKind, RunError, Val};
use cordon_store::RequestId;
use cordon_syntax::{Diagnostic, SourceMap, render};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// What checking a plan (or policies alone) found.
#[derive(Debug)]
pub struct CheckReport {
    /// The checked files, for rendering the diagnostics.
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
    /// What the plan may do with which data, when the checker accepted it.
    pub effects: Option<Summary>,
}

impl CheckReport {
    /// Whether nothing is an error.
    pub fn accepted(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// As `cordon check --format json` prints it: the diagnostics in their versioned JSON form
/// (`docs/diagnostics.md`), and the effect summary under `effects`.
impl Serialize for CheckReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut value = render::json(&self.diagnostics, &self.sources);
        if let Some(effects) = &self.effects {
            value["effects"] = serde_json::to_value(effects).map_err(serde::ser::Error::custom)?;
        }
        value.serialize(s)
    }
}

/// How a request's run ended.
#[derive(Debug)]
pub enum Ended {
    /// The check rejected the plan: nothing ran.
    Rejected,
    /// The run stopped with this error.
    Failed(RunError),
    /// The plan finished with this value.
    Done(Val),
}

/// What the approval gate decided in a request.
#[derive(Debug, Default)]
pub struct Approvals {
    /// Every decision, in order.
    pub records: Vec<Record>,
    /// The card for the whole plan, if one was shown (`--approve-plan`).
    pub plan: Option<Record>,
    pub stats: Stats,
}

/// What one request did: the check's findings, what ran and how it ended, what the gate
/// decided, what the holes cost, and where the store recorded it.
#[derive(Debug)]
pub struct Report {
    /// The plan's name: a file, or `<request N>` for a request put to a model.
    pub plan: String,
    /// Every file of the request (policies, plan, fills), for rendering diagnostics.
    pub sources: SourceMap,
    /// The check's warnings (a call that will need an approval): the plan ran despite them.
    pub warnings: Vec<Diagnostic>,
    /// The check's errors, or the run's.
    pub diagnostics: Vec<Diagnostic>,
    /// What the labels' analysis says the plan may do, when the checker accepted it.
    pub effects: Option<Summary>,
    pub ended: Ended,
    /// Every decision the boundary made, in order.
    pub trace: Vec<cordon_runtime::Event>,
    pub approvals: Approvals,
    /// Each hole the run reached and what it cost (a request put to a model).
    pub holes: Vec<HoleStats>,
    /// Tokens over all holes.
    pub usage: Usage,
    /// The request's id in the store, if it was recorded.
    pub request: Option<RequestId>,
    /// Why the store's record of the request is incomplete, if it is: no effect was performed
    /// after the failure.
    pub record_error: Option<RecordError>,
}

impl Report {
    /// A plan the check rejected: nothing ran and nothing was recorded.
    pub(crate) fn rejected(
        plan: String,
        sources: SourceMap,
        diagnostics: Vec<Diagnostic>,
        effects: Option<Summary>,
    ) -> Report {
        Report {
            plan,
            sources,
            warnings: Vec::new(),
            diagnostics,
            effects,
            ended: Ended::Rejected,
            trace: Vec::new(),
            approvals: Approvals::default(),
            holes: Vec::new(),
            usage: Usage::default(),
            request: None,
            record_error: None,
        }
    }

    /// `rejected`, `failed` or `done`.
    pub fn status(&self) -> &'static str {
        match self.ended {
            Ended::Rejected => "rejected",
            Ended::Failed(_) => "failed",
            Ended::Done(_) => "done",
        }
    }

    /// The plan's value, if it finished.
    pub fn value(&self) -> Option<&Val> {
        match &self.ended {
            Ended::Done(v) => Some(v),
            _ => None,
        }
    }

    /// The run's error, if it stopped.
    pub fn error(&self) -> Option<&RunError> {
        match &self.ended {
            Ended::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Why the model gave no answer, if the request ended at a hole for that reason.
    pub fn model_error(&self) -> Option<&ProviderError> {
        match self.error() {
            Some(e) if e.kind == ErrorKind::Hole => cordon_agent::model_error(&self.holes),
            _ => None,
        }
    }

    /// The calls performed.
    pub fn performed(&self) -> usize {
        self.trace.iter().filter(|e| e.decision == cordon_runtime::Decision::Allowed).count()
    }
}

/// As `cordon run --format json` prints it, and `cordon mcp serve` answers a `run`: the plan,
/// the status, the diagnostics (warnings first) in their versioned JSON form, the boundary's
/// trace, the result and its label, the request's id, the gate's records, the effect summary,
/// and for a request put to a model, its holes and tokens.
impl Serialize for Report {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let all: Vec<Diagnostic> = self.warnings.iter().chain(&self.diagnostics).cloned().collect();
        let value = self.value();
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("plan", &self.plan)?;
        map.serialize_entry("status", self.status())?;
        map.serialize_entry("diagnostics", &render::json(&all, &self.sources))?;
        let trace: Vec<serde_json::Value> = self.trace.iter().map(cordon_runtime::Event::to_json).collect();
        map.serialize_entry("trace", &trace)?;
        map.serialize_entry("result", &value.map(|v| v.value.to_json()))?;
        map.serialize_entry("label", &value.map(|v| cordon_runtime::deep_label(v).to_string()))?;
        map.serialize_entry("request", &self.request)?;
        map.serialize_entry("approvals", &self.approvals.records)?;
        map.serialize_entry("effects", &self.effects)?;
        if !self.holes.is_empty() {
            let holes: Vec<serde_json::Value> = self
                .holes
                .iter()
                .map(|h| {
                    serde_json::json!({
                        "hole": h.hole,
                        "attempts": h.attempts,
                        "filled": h.filled,
                        "prompt_tokens": h.usage.prompt_tokens,
                        "completion_tokens": h.usage.completion_tokens,
                    })
                })
                .collect();
            map.serialize_entry("holes", &holes)?;
            map.serialize_entry("usage", &self.usage)?;
        }
        map.end()
    }
}
