//! What a check and a request report, as data: every front end renders these (the CLI for people
//! and as JSON, `cordon mcp serve` to a calling agent), and none computes them again.

use cordon_agent::{HoleStats, ProviderError, Usage};
use cordon_audit::RecordError;
use cordon_flow::Summary;
use cordon_gate::{Record, Stats};
use cordon_label::{DcLabel, Release};
use cordon_runtime::{ErrorKind, RunError, Val};
use cordon_store::RequestId;
use cordon_syntax::{Code, Diagnostic, SourceMap, render};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// What checking a plan (or policies alone) found.
#[derive(Debug)]
pub struct CheckReport {
    /// The checked files, for rendering the diagnostics.
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
    /// What the plan may do with which data, when the checker accepted it.
    pub effects: Option<Summary>,
    /// For policies checked alone: the releases they declare (what may leave a group, to where,
    /// and whether the user is asked).
    pub releases: Vec<Release>,
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
    /// The run waits for a person's answer to a card, saved ([`crate::Prepared::parking`]).
    Waiting(Box<crate::park::Waiting>),
}

/// What the approval gate decided in a request.
#[derive(Debug, Default)]
pub struct Approvals {
    /// Every decision, in order; of a request run [`crate::Prepared::without_trace`], only
    /// those of calls that took more than the policy's allowing (the rest are in `stats`).
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
    /// Every decision the boundary made, in order; none if the request ran
    /// [`crate::Prepared::without_trace`].
    pub trace: Vec<cordon_runtime::TraceEntry>,
    /// How many calls were performed.
    pub performed: usize,
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
            performed: 0,
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
            Ended::Waiting(_) => "waiting",
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
}

/// Whom a report is written for: the user, who may see all of it, or a calling agent (a model
/// driving Cordon over MCP), which is a sink like any model: it is shown only what its
/// clearance allows, as a prompt is.
#[derive(Clone, Copy, Debug)]
pub enum Audience<'a> {
    User,
    /// A calling agent with this clearance, by its name (`public`) and its label.
    Agent {
        name: &'a str,
        clearance: &'a DcLabel,
    },
}

impl Report {
    /// The report as JSON for `audience`. For the user: everything, as `cordon run --format json`
    /// prints it. For an agent:
    /// - a call is listed only if the decision to make it (its pc) flows to the clearance (that
    ///   it happened says which way that decision went), and each of its values is shown only
    ///   if its label does, else `<hidden>` (`cordon_agent::shown_to`, as in prompts);
    /// - the result and its label only if the result's label flows to the clearance;
    /// - a refusal's or failure's own words, and a run error's, only where Cordon writes them
    ///   from the plan and the policy alone (a limit, a hole, a cycle): elsewhere they can
    ///   quote the data (a blocked argument, a tool's error text), and a fixed sentence stands
    ///   in for them;
    /// - not the gate's records (cards show the values): `withheld` lists what was left out.
    pub fn to_json(&self, audience: Audience<'_>) -> serde_json::Value {
        serde_json::Value::Object(self.entries(audience).into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    /// The fields of [`Report::to_json`], in the order the CLI prints them.
    fn entries(&self, audience: Audience<'_>) -> Vec<(&'static str, serde_json::Value)> {
        use serde_json::json;
        let mut withheld: Vec<&str> = Vec::new();
        let diagnostics: Vec<Diagnostic> = match (audience, self.error()) {
            (Audience::Agent { .. }, Some(e)) if withheld_reason(e.kind.code()).is_some() => {
                let words = withheld_reason(e.kind.code()).unwrap_or_default();
                let mut error = Diagnostic::error(e.kind.code(), e.span, words);
                error
                    .notes
                    .push("its own words are withheld: they may quote data above this client's clearance".into());
                self.warnings.iter().cloned().chain([error]).collect()
            }
            _ => self.warnings.iter().chain(&self.diagnostics).cloned().collect(),
        };
        let trace: Vec<serde_json::Value> = match audience {
            Audience::User => self.trace.iter().map(cordon_runtime::TraceEntry::to_json).collect(),
            Audience::Agent { clearance, .. } => {
                let listed: Vec<_> = self.trace.iter().filter_map(|e| cleared_row(e, clearance)).collect();
                if listed.len() < self.trace.len() {
                    withheld.push("calls made under decisions above the clearance");
                }
                listed
            }
        };
        let value = self.value();
        let shown = match audience {
            Audience::User => value,
            Audience::Agent { clearance, .. } => value.filter(|v| cordon_runtime::deep_label(v).flows_to(clearance)),
        };
        if value.is_some() && shown.is_none() {
            withheld.push("result");
        }
        let approvals: Vec<serde_json::Value> = match audience {
            Audience::User => self.approvals.records.iter().map(|r| json!(r)).collect(),
            Audience::Agent { clearance, .. } => {
                let listed: Vec<_> = self.approvals.records.iter().filter(|r| r.pc.flows_to(clearance)).collect();
                if listed.len() < self.approvals.records.len() {
                    withheld.push("the gate's records of calls made under decisions above the clearance");
                }
                listed.into_iter().map(|r| json!(cleared_record(r, clearance))).collect()
            }
        };
        let mut out = vec![
            ("plan", json!(self.plan)),
            ("status", json!(self.status())),
            ("diagnostics", render::json(&diagnostics, &self.sources)),
            ("trace", json!(trace)),
            ("result", json!(shown.map(|v| v.value.to_json()))),
            ("label", json!(shown.map(|v| cordon_runtime::deep_label(v).to_string()))),
            ("request", json!(self.request)),
            ("approvals", json!(approvals)),
            ("effects", json!(self.effects)),
        ];
        if !self.holes.is_empty() {
            let holes: Vec<serde_json::Value> = self
                .holes
                .iter()
                .map(|h| {
                    json!({
                        "hole": h.hole,
                        "attempts": h.attempts,
                        "filled": h.filled,
                        "prompt_tokens": h.usage.prompt_tokens,
                        "completion_tokens": h.usage.completion_tokens,
                    })
                })
                .collect();
            out.push(("holes", json!(holes)));
            out.push(("usage", json!(self.usage)));
        }
        if let Audience::Agent { name, .. } = audience {
            out.push(("clearance", json!(name)));
            out.push(("withheld", json!(withheld)));
        }
        out
    }
}

/// The gate's record as an agent with `clearance` may see it: the card's values it may not see
/// read `<hidden>` (as the intent model's do), and a refusal's own words give way to a fixed
/// sentence.
fn cleared_record(record: &Record, clearance: &DcLabel) -> Record {
    let mut shown = record.clone();
    shown.card = record.card.as_ref().map(|card| Box::new(cordon_agent::intent::card_under(card, clearance)));
    if shown.reason.is_some() {
        shown.reason = withheld_reason(Code::ApprovalDenied).map(str::to_string);
    }
    shown
}

/// A trace row as an agent with `clearance` may see it, or none if the decision to make the
/// call may not flow there.
fn cleared_row(event: &cordon_runtime::TraceEntry, clearance: &DcLabel) -> Option<serde_json::Value> {
    if !event.pc.flows_to(clearance) {
        return None;
    }
    let detail = event.detail_with(&|v| cordon_agent::shown_to(clearance, &event.pc, v));
    let label = event
        .result()
        .filter(|v| cordon_runtime::deep_label(v).join(&event.pc).flows_to(clearance))
        .and_then(|_| event.result_label())
        .map(|(label, _)| label)
        .or_else(|| event.result().map(|_| "<hidden>".to_string()));
    let reason = match &event.decision {
        cordon_runtime::Decision::Blocked { code, .. } => withheld_reason(*code),
        cordon_runtime::Decision::Failed { .. } => withheld_reason(Code::ToolFailed),
        _ => None,
    };
    Some(event.json(detail, label, reason))
}

/// The sentence that stands in for a refusal's or run error's own words before an agent, for
/// errors whose words can quote data; none for those Cordon writes from the plan and the
/// policy alone.
fn withheld_reason(code: Code) -> Option<&'static str> {
    Some(match code {
        Code::LimitReached | Code::ConstantCycle | Code::HoleUnfilled | Code::RuntimeTypeError => return None,
        Code::LabelFlow => "the call was blocked: data it depends on may not flow to its tool's sink",
        Code::ApprovalDenied => "the approval gate refused the call",
        Code::SensitiveData => "the outgoing-data check refused the call: it would send what is never sent",
        Code::ToolFailed => "the tool failed",
        Code::ToolContract => "the tool returned something other than it declares",
        Code::RecheckFailed => "a refinement does not hold on the real values",
        Code::ArithmeticError => "an arithmetic error (overflow, or division by zero)",
        Code::OutOfRange => "an index or position out of range",
        Code::ForgedValue => "a host-made value the host did not make, or a linear value used twice",
        Code::InvalidPattern => "a regular expression that does not parse or is too large",
        _ => "the run stopped",
    })
}

/// As `cordon run --format json` prints it, and `cordon mcp serve` answers a `run` for a client
/// cleared to see everything: the plan, the status, the diagnostics (warnings first) in their
/// versioned JSON form, the boundary's trace, the result and its label, the request's id, the
/// gate's records, the effect summary, and for a request put to a model, its holes and tokens.
impl Serialize for Report {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (key, value) in self.entries(Audience::User) {
            map.serialize_entry(key, &value)?;
        }
        map.end()
    }
}
