//! A request's record in the store, written as the engine drives it. The engine knows nothing
//! of the store and the store nothing of the engine; this crate joins them, for every front end
//! (through the `cordon` library: the CLI, `cordon serve`, `mcp serve`):
//!
//! - the **audit stage** ([`AuditStage`]), the pipeline's last stage: it commits an effect's
//!   "about to perform" row (`Store::record`) and only then lets the engine perform it. If
//!   the row cannot be written, the effect is refused and nothing is performed;
//! - the **recorder** ([`Recorder`]), an observer: the effect's outcome after its host answered
//!   (performed with the size of the answer, or failed), every event of the
//!   request as a transcript line (the JSON of a JSONL transcript's line,
//!   [`TranscriptLine`](cordon_engine::TranscriptLine)), and audit rows for what else a reader
//!   of the log needs: each accepted fill with its code, each abandoned hole, each refused call,
//!   and the request's status.
//!
//! What the request does is written in batches ([`Batch`]), one transaction each: the
//! transcript lines and audit rows so far go with an effect's "about to perform" row (so what
//! led to an effect is stored before it is performed, and the outcome of the effect before it
//! with it), with a refused call's row (a refusal is committed at once), and when the run waits
//! or ends. That is one commit per effect. A crash loses at most what happened since the last
//! commit, none of it an effect: an effect whose outcome was not committed yet reads "unknown"
//! in the log, as one the host may or may not have performed.
//!
//! Both are views of one [`Recording`] of one request. After any write to the store fails, no
//! further effect of the request is performed, and [`Recording::finish`] returns the first
//! failure.
//!
//! ```
//! use cordon_audit::Recording;
//! use cordon_engine::{Ending, Engine, Hosts};
//! use cordon_runtime::{Config, Program, Run, Sessions};
//! use cordon_store::{NewRequest, SqliteStore, Status, Store};
//! use cordon_syntax::SourceMap;
//! use cordon_types::{CheckOptions, check};
//!
//! let mut sources = SourceMap::new();
//! let plan = sources.add("plan.cord", "1 + 1");
//! let checked = check(&sources, &[], Some(plan), &CheckOptions::default()).program.expect("checks");
//! let program = Program::new(&checked).expect("compiles");
//! let mut run = Run::start(&program, &Sessions::default(), &Config::default()).expect("starts");
//!
//! let store = SqliteStore::open_in_memory().expect("opens");
//! let request = NewRequest { text: "add", principal: "alice", session: None };
//! let recording = Recording::begin(&store, &request).expect("recorded");
//! let (mut stage, mut recorder) = (recording.stage(), recording.recorder());
//! let mut no_tools = Hosts::new();
//! let ending = Engine::new(&mut no_tools)
//!     .with_last_stage(&mut stage)
//!     .with_observer(&mut recorder)
//!     .start_request(&mut run, "1 + 1");
//! assert!(matches!(ending, Ending::Done(_)));
//! let id = recording.finish().expect("every write succeeded");
//! assert_eq!(store.show(id).expect("shown").request.status, Some(Status::Done));
//! assert_eq!(store.transcript(id).expect("read")[0]["event"], "request_started");
//! ```

use std::cell::RefCell;
use std::fmt;

use cordon_engine::{End, Event, Note, Observer, RefusedBy, Stage, TranscriptLine, Verdict};
use cordon_runtime::effect::Effect;
use cordon_runtime::{ErrorKind, RunError, deep_label};
use cordon_store::{
    Batch, BatchRow, EffectIntent, NewRequest, Outcome, PendingEffect, RequestId, StageDecision, Status, Store,
    StoreError,
};
use serde_json::{Map, Value, json};

/// The audit stage's name, in events and diagnostics.
pub const STAGE: &str = "audit";

/// The kinds of audit row this crate writes besides the store's own (`request`, `status`,
/// `effect`, `outcome`).
pub mod kind {
    /// A hole's accepted fill: the hole, the attempt, the code that ran.
    pub const FILL: &str = "fill";
    /// A hole's fill the run went back from: a call it made was refused by the labels before
    /// it performed anything. The hole, the attempt, the refusal's code.
    pub const FILL_REFUSED: &str = "fill-refused";
    /// A hole that got no fill: the hole, the attempts, the code of why.
    pub const HOLE_ABANDONED: &str = "hole-abandoned";
    /// A call refused by the boundary or a stage: nothing was performed. The row names the
    /// tool, who refused and the diagnostic's code, never the arguments' values: a refused
    /// call's arguments are what may not go there (a secret, an outsider's text), and the log
    /// keeps its rows for good. The transcript, which `gc` removes, has them.
    pub const REFUSED: &str = "refused";
    /// A stage's decision with what it noted, unless it let a call through with no card and
    /// no grant (the effect row says so): the approval gate's: the tier, whether a card
    /// was shown and how it was answered and by whom, the grant used or made, a whole plan's
    /// approval). A card is kept by its id, action, flags and label class, never its values:
    /// the effect row that follows an approval has the arguments as the host shows them.
    pub const DECISION: &str = "decision";
}

/// Why a request's record is incomplete.
#[derive(Debug)]
pub enum RecordError {
    /// A write to the store failed. No effect was performed after it.
    Store(StoreError),
    /// The engine performed an effect that has no "about to perform" row: the audit stage was
    /// not the engine's last stage. A bug in the front end, reported, never ignored.
    Unaudited { tool: String },
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::Store(e) => write!(f, "the store could not record the request: {e}"),
            RecordError::Unaudited { tool } => write!(
                f,
                "`{tool}` was performed without its audit row: the audit stage is not the engine's last stage"
            ),
        }
    }
}

impl std::error::Error for RecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecordError::Store(e) => Some(e),
            RecordError::Unaudited { .. } => None,
        }
    }
}

/// One request being recorded in a store.
pub struct Recording<'s> {
    store: &'s dyn Store,
    request: RequestId,
    state: RefCell<State>,
}

impl fmt::Debug for Recording<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recording").field("request", &self.request).finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    /// The next transcript line's number.
    line: u64,
    /// Transcript lines and audit rows not written yet: committed with the next effect's row,
    /// with a refusal, or when the run waits or ends.
    batch: Batch,
    /// What the stages before the audit said about the effect in the pipeline.
    decisions: Vec<StageDecision>,
    /// Who vouched for the label checks the effect in the pipeline failed, if a stage says
    /// someone did (the gate, with the user's yes to a label card).
    endorsed_by: Option<String>,
    /// The effect whose "about to perform" row is committed and whose outcome is not, with its
    /// tool.
    pending: Option<(PendingEffect, String)>,
    /// The first failure; no effect is performed after it.
    failure: Option<RecordError>,
}

impl State {
    fn fail(&mut self, error: RecordError) {
        self.failure.get_or_insert(error);
    }

    /// Keeps the first store error, if `result` is one.
    fn check<T>(&mut self, result: Result<T, StoreError>) -> Option<T> {
        result.map_err(|e| self.fail(RecordError::Store(e))).ok()
    }
}

impl<'s> Recording<'s> {
    /// Records `request` as running, with its audit row.
    pub fn begin(store: &'s dyn Store, request: &NewRequest<'_>) -> Result<Recording<'s>, StoreError> {
        let request = store.begin_request(request)?;
        Ok(Recording { store, request, state: RefCell::new(State::default()) })
    }

    /// Goes on recording `request`, begun earlier (a run that was parked and is resumed, maybe
    /// by another process): its transcript continues where it stopped.
    pub fn resume(store: &'s dyn Store, request: RequestId) -> Result<Recording<'s>, StoreError> {
        let line = u64::try_from(store.transcript(request)?.len()).unwrap_or(u64::MAX);
        Ok(Recording { store, request, state: RefCell::new(State { line, ..State::default() }) })
    }

    /// The request's number in the store.
    pub fn request(&self) -> RequestId {
        self.request
    }

    /// The stage to give the engine as its last ([`Engine::with_last_stage`]).
    ///
    /// [`Engine::with_last_stage`]: cordon_engine::Engine::with_last_stage
    pub fn stage(&self) -> AuditStage<'_> {
        AuditStage(self)
    }

    /// The observer to give the engine.
    pub fn recorder(&self) -> Recorder<'_> {
        Recorder(self)
    }

    /// Ends the recording: writes the transcript lines not written yet. Returns the request's
    /// number, or the first failure: the record is then incomplete, and no effect was performed
    /// after the failure.
    pub fn finish(self) -> Result<RequestId, RecordError> {
        let mut state = self.state.take();
        self.flush(&mut state);
        // An effect still waiting for its outcome here was never told of by the engine (the
        // recorder was not among its observers): whether it was performed is not known, and the
        // log says so.
        drop(state.pending.take());
        match state.failure {
            Some(failure) => Err(failure),
            None => Ok(self.request),
        }
    }

    /// Commits the lines and rows not written yet, in one transaction. What could not be
    /// written stays for the next try.
    fn flush(&self, state: &mut State) {
        if state.batch.is_empty() {
            return;
        }
        let written = self.store.record(self.request, &state.batch, None);
        if state.check(written).is_some() {
            state.batch.clear();
        }
    }

    /// Adds a row to the batch.
    fn append(&self, state: &mut State, kind: &'static str, content: Value) {
        state.batch.rows.push(BatchRow::Row { kind, content });
    }

    /// Commits what the batch holds, then the status.
    fn set_status(&self, state: &mut State, status: Status) {
        self.flush(state);
        let written = self.store.set_status(self.request, status);
        state.check(written);
    }

    /// Adds the outcome of the effect waiting for one to the batch.
    fn end_effect(&self, state: &mut State, performed: &Effect, outcome: Outcome) {
        match state.pending.take() {
            Some((effect, _)) => state.batch.rows.push(BatchRow::Outcome { effect, outcome }),
            None => {
                let tool = format!("{}.{}", performed.capability, performed.tool);
                state.fail(RecordError::Unaudited { tool });
            }
        }
    }
}

/// The audit log's stage: the pipeline's last. It commits an effect's "about to perform" row
/// and answers proceed, or, if the row cannot be written (or an earlier write of the request
/// failed), refuses: nothing is performed.
#[derive(Debug)]
pub struct AuditStage<'r>(&'r Recording<'r>);

impl Stage for AuditStage<'_> {
    fn name(&self) -> &str {
        STAGE
    }

    fn decide(&mut self, effect: &Effect) -> Verdict {
        let recording = self.0;
        let mut state = recording.state.borrow_mut();
        let refuse =
            |why: String| Verdict::Refuse(RunError::new(ErrorKind::Tool, effect.span, format!("not performed: {why}")));
        if let Some(failure) = &state.failure {
            return refuse(format!("the request's record is incomplete, so no effect may be performed ({failure})"));
        }
        // An effect before this one whose outcome was never told stays unknown in the log: the
        // recorder was not among the engine's observers.
        drop(state.pending.take());
        let intent = intent(effect, std::mem::take(&mut state.decisions), state.endorsed_by.take());
        // What led to the effect is committed with its row, before it is performed.
        match recording.store.record(recording.request, &state.batch, Some(&intent)) {
            Ok(pending) => {
                state.batch.clear();
                state.pending = pending.map(|pending| (pending, intent.tool));
                Verdict::Proceed
            }
            Err(e) => {
                let verdict = refuse(format!("its audit row could not be written: {e}"));
                state.fail(RecordError::Store(e));
                verdict
            }
        }
    }
}

/// What the "about to perform" row says: the tool, its arguments by name, the labels of those
/// that carry one and of the decision to call, what the stages before decided, and who
/// approved the label checks it failed, if anyone did.
fn intent(effect: &Effect, stages: Vec<StageDecision>, endorsed_by: Option<String>) -> EffectIntent {
    let mut args = Map::new();
    let mut labels = Map::new();
    for (name, v) in &effect.args {
        args.insert(name.to_string(), v.value.to_json());
        let label = deep_label(v);
        if !label.is_bottom() {
            labels.insert(name.to_string(), Value::String(label.to_string()));
        }
    }
    let mut all = Map::new();
    if !labels.is_empty() {
        all.insert("args".into(), Value::Object(labels));
    }
    if !effect.pc.is_bottom() {
        all.insert("pc".into(), Value::String(effect.pc.to_string()));
    }
    EffectIntent {
        tool: format!("{}.{}", effect.capability, effect.tool),
        args: Value::Object(args),
        // Every stage let it through; the labels did too, or whom a stage named vouched for it.
        decision: if endorsed_by.is_some() { "approved" } else { "allowed" }.into(),
        approved_by: endorsed_by,
        labels: Value::Object(all),
        stages,
    }
}

/// The size in bytes of `json` written compactly, counted as it is written, not kept.
fn json_size(json: &Value) -> u64 {
    struct Counter(u64);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Counting cannot fail, nor can writing a JSON value.
    let _ = serde_json::to_writer(&mut counter, json);
    counter.0
}

/// A decision row's content: what the stage noted, a card cut down to what it was (never the
/// values it showed).
fn decision(stage: &str, noted: &dyn Note) -> Value {
    let mut row = Map::new();
    row.insert("stage".into(), json!(stage));
    // The note's text is JSON its stage wrote: it reads back.
    if let Ok(Value::Object(noted)) = serde_json::from_str(noted.to_json().get()) {
        for (key, value) in noted {
            let value = match key.as_str() {
                "card" if value.is_object() => {
                    let kept = ["id", "action", "flags", "grantable", "label_class"];
                    Value::Object(
                        kept.iter().filter_map(|k| Some(((*k).to_string(), value.get(*k)?.clone()))).collect(),
                    )
                }
                _ => value,
            };
            row.insert(key, value);
        }
    }
    Value::Object(row)
}

/// The recording's observer: outcomes, transcript lines, and the audit rows of fills, holes,
/// refusals and the request's status.
#[derive(Debug)]
pub struct Recorder<'r>(&'r Recording<'r>);

impl Observer for Recorder<'_> {
    fn event(&mut self, event: &Event<'_>) {
        let recording = self.0;
        let mut state = recording.state.borrow_mut();
        let state = &mut *state;
        if let Err(e) = state.batch.transcript.push(&TranscriptLine::new(state.line, event)) {
            state.fail(RecordError::Store(StoreError::from(e)));
        }
        state.line += 1;
        match *event {
            Event::EffectProposed { .. } => {
                state.decisions.clear();
                state.endorsed_by = None;
            }
            Event::StageNoted { stage, note } => {
                recording.append(state, kind::DECISION, decision(stage, note));
            }
            Event::StageDecided { stage, verdict, note, .. } if stage != STAGE => {
                // A call the policy let through alone is said by its effect row.
                if let Some(note) = note.filter(|n| !n.routine()) {
                    recording.append(state, kind::DECISION, decision(stage, note));
                }
                let (verdict, needs) = match verdict {
                    Verdict::Proceed => ("proceed", None),
                    Verdict::Endorse { by } => {
                        state.endorsed_by = Some(by.clone());
                        ("endorse", None)
                    }
                    Verdict::Hold { needs } => ("hold", Some(needs.clone())),
                    Verdict::Refuse(_) | Verdict::Withhold { .. } => ("refuse", None),
                };
                state.decisions.push(StageDecision { stage: stage.to_string(), verdict: verdict.into(), needs });
            }
            Event::EffectPerformed { effect, answer } => {
                let outcome = match answer {
                    Ok(json) => Outcome::Performed { result_size: json_size(json) },
                    Err(error) => Outcome::Failed { error: error.clone() },
                };
                recording.end_effect(state, effect, outcome);
            }
            Event::EffectRefused { tool, by, code, .. } => {
                if let Some((effect, _)) = state.pending.take() {
                    // Refused after its row was written: not performed.
                    let outcome = Outcome::Failed { error: format!("not performed: refused [{code}]") };
                    state.batch.rows.push(BatchRow::Outcome { effect, outcome });
                }
                let by = match by {
                    RefusedBy::Boundary => json!("boundary"),
                    RefusedBy::Stage(stage) => json!({ "stage": stage }),
                };
                recording.append(state, kind::REFUSED, json!({ "tool": tool, "by": by, "code": code }));
                // A refusal is committed at once: an attempt the labels or a stage stopped is
                // never left for a crash to lose.
                recording.flush(state);
            }
            Event::FillAccepted { hole, attempt, code, .. } => {
                recording.append(state, kind::FILL, json!({ "hole": hole, "attempt": attempt, "code": code }));
            }
            Event::FillRefused { hole, attempt, first, .. } => {
                let code = first.map(|problem| problem.code);
                recording.append(state, kind::FILL_REFUSED, json!({ "hole": hole, "attempt": attempt, "code": code }));
            }
            Event::HoleAbandoned { hole, attempts, code, reason } => {
                let content = json!({ "hole": hole, "attempts": attempts, "code": code, "reason": reason });
                recording.append(state, kind::HOLE_ABANDONED, content);
            }
            Event::RunHeld { .. } => recording.set_status(state, Status::Waiting),
            Event::RunResumed { .. } => recording.set_status(state, Status::Running),
            Event::RunEnded { ref end } => {
                if let Some((effect, tool)) = state.pending.take() {
                    // The row is written and the run ended before the host was asked: the engine
                    // tells every performed effect before anything else.
                    let outcome =
                        Outcome::Failed { error: format!("not performed: the run ended before `{tool}` was") };
                    state.batch.rows.push(BatchRow::Outcome { effect, outcome });
                }
                let status = match end {
                    End::Done { .. } => Status::Done,
                    End::Failed { .. } => Status::Failed,
                };
                recording.set_status(state, status);
            }
            _ => {}
        }
    }
}
