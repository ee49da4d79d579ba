//! The Cordon runtime: runs checked programs. The interpreter performs no IO: a tool call
//! stops it at the boundary ([`boundary`]), which checks the call on the real values (labels,
//! refinements, host-made values, limits) and hands the host a plain-data [`Effect`]; the host
//! performs it and resumes the run with the result.
//!
//! ```
//! use cordon_runtime::{Config, Program, Run, Sessions, Step};
//! use cordon_syntax::SourceMap;
//! use cordon_types::{CheckOptions, check};
//!
//! let mut sources = SourceMap::new();
//! let plan = sources.add("plan.cord", "[1, 2, 3].map(|x| x * x).sum()");
//! let outcome = check(&sources, &[], Some(plan), &CheckOptions::default());
//! let program = Program::new(outcome.program.as_ref().expect("accepted")).expect("compiles");
//! let mut run = Run::start(&program, &Sessions::default(), &Config::default()).expect("starts");
//! let Ok(Step::Done(value)) = run.proceed() else { panic!() };
//! assert_eq!(value.value.to_string(), "14");
//! ```
//!
//! Modules: `code` is the machine's code, which `compile` makes from syntax trees and
//! `machine` runs until it stops at a tool call, a hole or the end; `builtins` are the builtin
//! functions (`decimal` their exact decimal arithmetic, `time` dates, instants and durations);
//! `boundary` is where the run has every call checked, `host` is what the host
//! knows (measures, host-made values, sessions), `shape` the types the boundary checks against,
//! `limits` the host's limits, `trace` the record of decisions. Labels themselves are
//! `cordon_label`'s.

pub mod approval;
pub mod boundary;
mod builtins;
mod code;
mod compile;
mod ctx;
pub mod decimal;
pub mod effect;
pub mod error;
pub mod host;
pub mod limits;
mod live;
mod machine;
mod made;
mod received;
mod shape;
mod snapshot;
pub mod time;
pub mod trace;
pub mod value;

use std::sync::Arc;

use cordon_label::{Label, Source};
use cordon_syntax::Span;
use cordon_syntax::ast::Module;
#[cfg(feature = "unchecked")]
use cordon_syntax::{FileId, SourceMap};
use cordon_types::Checked;

pub use approval::CardField;
pub use builtins::deep_label;
pub use compile::CompileError;
use compile::FillCasts;
pub use effect::{Effect, Flow, HoleRequest, Json, ToolCall, ToolHost};
pub use error::{ErrorKind, RunError};
pub use host::{Scalar, Sessions, StoredValue};
pub use limits::Limits;
pub use snapshot::SnapshotError;
pub use trace::{Decision, TraceEntry};
pub use value::{AsJson, Val, Value};

use code::Compiled;
use ctx::{ConstState, Ctx};
use machine::{Exit, Vm};

/// A program ready to run. Only a program the checker accepted can become one (outside the
/// runtime's own tests).
#[derive(Debug, Clone)]
pub struct Program {
    compiled: Arc<Compiled>,
}

impl Program {
    pub fn new(checked: &Checked) -> Result<Program, CompileError> {
        let compiled =
            compile::compile(checked.policies(), checked.plan(), checked.resolved(), checked.declarations())?;
        Ok(Program { compiled: Arc::new(compiled) })
    }

    /// Compiles code the checker may reject, its calls and casts resolved as far as the checker
    /// could ([`cordon_types::resolve_calls_and_casts`]). For tests that prove the boundary's
    /// re-checks catch what a checker bug would let through; not available to the `cordon` binary.
    #[cfg(feature = "unchecked")]
    pub fn unchecked(sources: &SourceMap, policies: &[FileId], plan: Option<FileId>) -> Result<Program, CompileError> {
        let parse = |file: FileId| cordon_syntax::parse(file, &sources.file(file).text).module;
        let modules: Vec<Module> = policies.iter().map(|f| parse(*f)).collect();
        let plan = plan.map(parse);
        let resolved = cordon_types::resolve_calls_and_casts(sources, policies, plan.as_ref().map(|m| m.file));
        let options = cordon_types::CheckOptions::default();
        let declared = cordon_types::declare_program(sources, policies, plan.as_ref(), &options);
        let compiled = compile::compile(&modules, plan.as_ref(), &resolved, &declared)?;
        Ok(Program { compiled: Arc::new(compiled) })
    }

    /// The names of the entry's linear parameters and their types: what a host keeps between
    /// requests.
    pub fn linear_inputs(&self) -> Vec<(String, String)> {
        let Some(entry) = &self.compiled.entry else { return Vec::new() };
        entry
            .params
            .iter()
            .filter_map(|(n, s)| match s {
                shape::Shape::Linear(t) => Some((n.to_string(), t.to_string())),
                shape::Shape::Refined(r) => match &r.base {
                    shape::Shape::Linear(t) => Some((n.to_string(), t.to_string())),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }
}

/// The host's settings for a run.
#[derive(Clone, Debug)]
pub struct Config {
    pub limits: Limits,
    /// The principal the agent acts for (`user()` in label annotations).
    pub user: String,
}

impl Default for Config {
    fn default() -> Config {
        Config { limits: Limits::default(), user: "user".into() }
    }
}

/// What a run does next.
#[derive(Debug)]
pub enum Step {
    /// A tool call the boundary admitted: [`Run::commit`] it, perform it and [`Run::resume`]
    /// (or [`Run::refuse`] it).
    Effect(Effect),
    /// A typed hole: get a fill from a model, check it, and [`Run::fill`] (or give up with
    /// [`Run::abandon_hole`]). Also the run back at a hole whose fill the labels refused before
    /// it performed anything ([`HoleRequest::again`] says why): fill it again, or let the
    /// refusal stand with [`Run::end_at_hole`].
    Hole(HoleRequest),
    /// The plan finished with this value.
    Done(Val),
}

/// One run of a program: start it, then alternate [`Run::proceed`]/[`Run::resume`] until it is
/// done or fails. A failure is final.
#[derive(Debug)]
pub struct Run {
    vm: Vm,
    ctx: Ctx,
    state: State,
    sessions: Sessions,
    /// The fills running that have performed nothing yet, innermost last: where a call they
    /// make is refused by the labels, the run goes back to the innermost one's hole.
    running_fills: Vec<FillStart>,
}

/// Where a run is: what it waits for, or how it ended. Each method of [`Run`] acts in the
/// states it names and refuses the rest.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum State {
    /// Ready to go on ([`Run::proceed`]).
    Ready,
    /// At a tool call the boundary admitted, not yet committed.
    Proposed {
        effect: Effect,
        /// Who approved the effect's failed label checks (`Effect::flows`), if anyone did:
        /// for this run of the process only, never saved.
        #[serde(skip)]
        flows_approved_by: Option<String>,
    },
    /// At a committed tool call: the host is performing it ([`Run::resume`]).
    Performing(Effect),
    /// At a hole ([`Run::fill`]).
    AtHole(HoleRequest),
    /// Finished with the plan's result.
    Done(Val),
    /// Ended by a failure; what it may have depended on: the pc at the failure and every label
    /// the pc was raised by before it.
    Failed(Label),
}

/// Where a running fill started: the machine as it was at the fill's hole, so the run can go
/// back there. Kept until an effect is committed (the fill has then done something the world
/// saw) or the fill returns.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct FillStart {
    /// The machine waiting at the hole.
    vm: Vm,
    hole: HoleRequest,
    /// The fill's body: it runs in the frame above the hole's while the fill runs.
    body: value::CodeRef,
    /// The fill's source file.
    file: cordon_syntax::FileId,
    /// [`ctx::Ctx::pc_seen_in_fill`] when it started: the enclosing fill's, until then.
    seen_before: Label,
}

impl Run {
    /// Prepares a run; `sessions` holds the linear values earlier requests handed back.
    pub fn start(program: &Program, sessions: &Sessions, config: &Config) -> Result<Run, RunError> {
        let compiled = program.compiled.clone();
        let mut ctx = Ctx::new(compiled.clone(), config.limits.clone(), &config.user);
        let Some(plan) = compiled.plan else {
            return Err(RunError::new(ErrorKind::Type, Span::default(), "there is no plan to run"));
        };
        let args = match &compiled.entry {
            Some(entry) => boundary::entry_args(&mut ctx, entry, sessions)?,
            None => Vec::new(),
        };
        Ok(Run {
            vm: Vm::start(&compiled, plan, args),
            ctx,
            state: State::Ready,
            sessions: sessions.clone(),
            running_fills: Vec::new(),
        })
    }

    /// Runs until the next admitted tool call or the end.
    pub fn proceed(&mut self) -> Result<Step, RunError> {
        if !matches!(self.state, State::Ready) {
            return Err(RunError::new(ErrorKind::Type, Span::default(), "the run is not ready to continue"));
        }
        let exit = match machine::exec(&mut self.vm, &mut self.ctx) {
            Ok(exit) => exit,
            Err(e) => return self.stopped(e),
        };
        match exit {
            // The machine stops at every call; the boundary decides whether it is proposed.
            Exit::Call(call) => match boundary::admit(&mut self.ctx, call) {
                Ok(effect) => {
                    self.state = State::Proposed { effect: effect.clone(), flows_approved_by: None };
                    Ok(Step::Effect(effect))
                }
                Err(e) => self.stopped(e),
            },
            Exit::Hole(hole) => {
                self.state = State::AtHole(hole.clone());
                Ok(Step::Hole(hole))
            }
            Exit::Done(v) => {
                if let Err(e) = boundary::returned(&self.ctx, &v) {
                    return Err(self.fail(e));
                }
                self.state = State::Done(v.clone());
                Ok(Step::Done(v))
            }
        }
    }

    /// The machine failed, or the boundary refused the call it stopped at.
    fn stopped(&mut self, e: RunError) -> Result<Step, RunError> {
        let by_labels = e.kind == ErrorKind::LabelFlow;
        self.refused(e, by_labels)
    }

    /// The run stopped with `e`: a refused call (refused `by_labels`, or otherwise) or another
    /// failure. Where the labels refused a call made in a fill that has performed nothing yet,
    /// the run goes back to the fill's hole to be filled again, telling why
    /// ([`HoleRequest::again`]); otherwise the run ends with `e`.
    fn refused(&mut self, e: RunError, by_labels: bool) -> Result<Step, RunError> {
        // Set only when the boundary recorded a refusal: not for other failures.
        let label = self.ctx.refused.take();
        let Some(mut label) = label.filter(|_| by_labels) else { return Err(self.fail(e)) };
        // That the call was reached at all depends on every decision the fill left behind
        // before it (a branch that could have failed or looped), those of fills it entered too.
        let mut seen = self.ctx.pc_seen_in_fill.clone();
        while let Some(start) = self.running_fills.pop() {
            if !self.vm.runs(start.vm.depth(), start.body) {
                seen.join_mut(&start.seen_before); // returned already
                continue;
            }
            label.join_mut(&seen);
            // What the refused attempt depended on stays part of what a later failure may
            // depend on, in the enclosing fill too.
            self.ctx.pc_seen.join_mut(&label);
            self.ctx.pc_seen_in_fill = start.seen_before.join(&label);
            self.vm = start.vm;
            self.hold_fills();
            let mut hole = start.hole;
            hole.again = Some(Box::new(effect::Refill { error: e, label, fill: start.file }));
            self.state = State::AtHole(hole.clone());
            return Ok(Step::Hole(hole));
        }
        self.hold_fills();
        Err(self.fail(e))
    }

    /// Tells the context what the machines waiting at the holes of running fills hold: memory
    /// the run holds while a fill runs ([`ctx::Ctx::held`]). Called after each change of
    /// `running_fills`.
    fn hold_fills(&mut self) {
        let mut held = Vec::new();
        for start in &self.running_fills {
            live::Roots::visit_roots(&start.vm, &mut |root| {
                held.push(match root {
                    live::Root::Value(v) => v.clone(),
                    live::Root::Building(xs) => Val::plain(Value::List(Arc::new(xs.to_vec()))),
                    live::Root::Func(f) => Val::plain(Value::Func(f.clone())),
                })
            });
            let hole = &start.hole;
            held.extend([hole.task.clone()].into_iter().chain(hole.args.iter().cloned()));
            held.extend(hole.scope.iter().map(|(_, v)| v.clone()));
        }
        self.ctx.held = held;
    }

    /// Ends the run with `e`, remembering what the failure may have depended on.
    fn fail(&mut self, e: RunError) -> RunError {
        self.state = State::Failed(self.vm.pc.join(&self.ctx.pc_seen));
        e
    }

    /// The waiting effect is about to be performed: its linear arguments are used up, the call
    /// counted and recorded as allowed. Call it once, right before the host performs the
    /// effect, after every stage agreed; [`Run::resume`] then takes the host's answer.
    pub fn commit(&mut self) -> Result<(), RunError> {
        self.commit_showing(None)
    }

    /// As [`Run::commit`], recording the call's arguments as `shown` where given: a stage's
    /// screen of what must not be written down (data the user agreed to send, which the trace
    /// keeps masked).
    pub fn commit_showing(&mut self, shown: Option<Vec<(Arc<str>, Val)>>) -> Result<(), RunError> {
        if let Some(e) = self.unapproved_flows() {
            return Err(e);
        }
        match std::mem::replace(&mut self.state, State::Ready) {
            State::Proposed { effect, .. } => {
                boundary::commit(&mut self.ctx, &effect, shown);
                self.running_fills.clear();
                self.hold_fills();
                self.state = State::Performing(effect);
                Ok(())
            }
            other => {
                let message = match other {
                    State::Performing(_) => "the tool call is already committed",
                    _ => "no tool call is waiting",
                };
                self.state = other;
                Err(RunError::new(ErrorKind::Type, Span::default(), message))
            }
        }
    }

    /// Continues after the host performed the waiting tool call (or failed to). The call must
    /// have been committed.
    pub fn resume(&mut self, result: Result<Json, String>) -> Result<Step, RunError> {
        let effect = match std::mem::replace(&mut self.state, State::Ready) {
            State::Performing(effect) => effect,
            other => {
                let message = match other {
                    State::Proposed { .. } => "the tool call was not committed",
                    _ => "no tool call is waiting",
                };
                self.state = other;
                return Err(RunError::new(ErrorKind::Type, Span::default(), message));
            }
        };
        match boundary::complete(&mut self.ctx, &effect, result) {
            Ok(v) => {
                self.vm.resume(v);
                self.proceed()
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// A stage after the boundary refused the waiting tool call: nothing was performed, no
    /// linear value used up, and the refusal is recorded. Where the tool declares that it may be
    /// refused (its result is `Result[T, Refused]`, `Refused` a record with `code` and `reason`
    /// strings) and takes no linear value, the plan gets `Err(Refused { .. })` and goes on;
    /// otherwise the run ends with `e`.
    pub fn refuse(&mut self, e: RunError) -> Result<Step, RunError> {
        self.refuse_showing(e, None)
    }

    /// As [`Run::refuse`], recording the call's arguments as `shown` where given: a stage's
    /// rewrite of data it would not let leave, which the trace keeps instead of the data.
    pub fn refuse_showing(&mut self, mut e: RunError, shown: Option<Vec<(Arc<str>, Val)>>) -> Result<Step, RunError> {
        let State::Proposed { effect, .. } = std::mem::replace(&mut self.state, State::Ready) else {
            return Err(self.fail(RunError::new(
                ErrorKind::Type,
                Span::default(),
                "no uncommitted tool call is waiting",
            )));
        };
        if e.span == Span::default() {
            e.span = effect.span;
        }
        let shown = shown.unwrap_or_else(|| effect.args.clone());
        boundary::refused_showing(&mut self.ctx, &effect, &e, shown);
        // A call the labels refused is handled as when the boundary refuses it itself: no
        // refusal value the plan could go on with.
        if !effect.flows.is_empty() {
            return self.refused(e, true);
        }
        self.ctx.refused = None;
        match boundary::refusal_value(&mut self.ctx, &effect, &e) {
            Some(value) => {
                self.vm.resume(value);
                self.proceed()
            }
            None => Err(self.fail(e)),
        }
    }

    /// Continues at the waiting hole with a fill the checker accepted for it. `label` is the
    /// label of everything the model was shown (its prompt): the fill runs with the
    /// program-counter label raised by it, and its result carries it.
    pub fn fill(&mut self, fill: &cordon_types::CheckedFill, label: &Label) -> Result<Step, RunError> {
        self.fill_module(fill.module(), fill.arg_names(), fill.resolved(), FillCasts::Resolved, label)
    }

    /// Continues at the waiting hole with the fill in `sources`' file `fill`, which the checker
    /// may reject: its calls are resolved as the checker resolves a plan's against the program's
    /// policies, and its casts' targets as written, against the program's declarations and the
    /// fill's own types (`cordon_types::WrittenTypes`; a type the fill declares under a name the
    /// program declares too is the fill's, which the checker would refuse). For tests that show
    /// what the runtime alone enforces.
    #[cfg(feature = "unchecked")]
    pub fn fill_unchecked(
        &mut self,
        sources: &SourceMap,
        fill: FileId,
        arg_names: &[String],
        label: &Label,
    ) -> Result<Step, RunError> {
        let module = cordon_syntax::parse(fill, &sources.file(fill).text).module;
        // Not the checker's casts: it would give a type the fill declares under a name the
        // program declares too the program's meaning, where the fill means its own.
        let resolved = cordon_types::resolve_calls_and_casts(sources, &self.ctx.program.origin.policies, Some(fill));
        self.fill_module(&module, arg_names, &resolved, FillCasts::AsWritten, label)
    }

    /// Continues at the waiting hole with `fill`, whose calls call what `resolved` says and whose
    /// casts convert to what `casts` says they do (see [`compile::compile_fill`]).
    fn fill_module(
        &mut self,
        fill: &Module,
        arg_names: &[String],
        resolved: &cordon_types::Resolved,
        casts: FillCasts,
        label: &Label,
    ) -> Result<Step, RunError> {
        let hole = match std::mem::replace(&mut self.state, State::Ready) {
            State::AtHole(hole) => hole,
            other => {
                self.state = other;
                return Err(RunError::new(ErrorKind::Type, Span::default(), "no hole is waiting"));
            }
        };
        if arg_names.len() != hole.args.len() {
            return Err(self.fail(RunError::new(
                ErrorKind::Type,
                hole.span,
                format!("the fill names {} arguments; the hole has {}", arg_names.len(), hole.args.len()),
            )));
        }
        let compiled = match compile::compile_fill(&self.ctx.program, hole.site, fill, arg_names, resolved, casts) {
            Ok(c) => c,
            Err(e) => {
                let message = format!("the fill does not compile: {}", e.message);
                return Err(self.fail(RunError::new(ErrorKind::Type, e.span, message)));
            }
        };
        let body = compiled.body;
        Arc::make_mut(&mut self.ctx.program).extend(compiled);
        // The fill's constants are computed when first used, as the program's are.
        self.ctx.consts.resize(self.ctx.program.consts.len(), ConstState::Unset);
        // Fills that returned are no longer running: the run cannot go back to their holes. What
        // the fill enclosing them had left behind before them is its own again.
        while let Some(returned) = self.running_fills.pop_if(|start| !self.vm.runs(start.vm.depth(), start.body)) {
            self.ctx.pc_seen_in_fill.join_mut(&returned.seen_before);
        }
        let start = FillStart {
            vm: self.vm.clone(),
            hole: HoleRequest { again: None, ..hole.clone() },
            body,
            file: fill.file,
            seen_before: std::mem::replace(&mut self.ctx.pc_seen_in_fill, Label::bottom()),
        };
        self.running_fills.push(start);
        self.hold_fills();
        let scope = hole.scope.into_iter().map(|(_, v)| v).collect();
        // The fill's label also names its hole, so a refusal can point at the code's origin.
        let label = if label.is_bottom() {
            label.clone()
        } else {
            let what = "what the model that wrote this code was shown";
            label.join(&Label::new(label.dc(), Source { what: what.into(), span: hole.span }))
        };
        self.vm.enter_fill(&self.ctx.program, body, scope, hole.args, &label);
        self.proceed()
    }

    /// Ends the run at the waiting hole: no fill could be had (the model failed, or no fill
    /// checked within the attempts allowed). `related`: where the last fill the model wrote was
    /// rejected, and what was said of it.
    pub fn abandon_hole(&mut self, reason: &str, related: Option<(Span, String)>) -> RunError {
        let span = self.waiting_hole().map_or_else(Span::default, |h| h.span);
        let mut error = RunError::new(ErrorKind::Hole, span, format!("the hole got no fill: {reason}"));
        error.related.extend(related);
        self.end_at_hole(error)
    }

    /// Ends the run at the waiting hole with `e`: the model may not be asked, or a refusal that
    /// sent the run back to the hole ([`HoleRequest::again`]) stands.
    pub fn end_at_hole(&mut self, e: RunError) -> RunError {
        self.fail(e)
    }

    /// Lets a stage after the boundary put a call that fails only label checks to the user:
    /// such a call is proposed with its failures in [`Effect::flows`], and performed only if
    /// [`Run::approve_flows`] is called for it; otherwise it is refused exactly as the boundary
    /// would have. Off by default (and then the boundary refuses such calls itself).
    pub fn defer_label_flows(&mut self, on: bool) {
        self.ctx.defer_label_flows = on;
    }

    /// `principal` approves the waiting effect's failed label checks, for this call only: it
    /// vouches for the values in its own name, or releases what is secret to it alone. Fails,
    /// changing nothing, where the principal may not (another's secret, a sink that needs
    /// someone else to vouch): the error is the boundary's refusal, with a note saying why.
    pub fn approve_flows(&mut self, principal: &str) -> Result<(), RunError> {
        let Some(effect) = self.waiting_effect() else {
            return Err(RunError::new(ErrorKind::Type, Span::default(), "no uncommitted tool call is waiting"));
        };
        if let Some(e) = boundary::label_refusal(effect, Some(principal)) {
            return Err(e);
        }
        if let State::Proposed { flows_approved_by, .. } = &mut self.state {
            *flows_approved_by = Some(principal.to_string());
        }
        Ok(())
    }

    /// The refusal the waiting effect gets if it is performed as it is: its first failed label
    /// check, unless someone approved them. `None` when it may be performed.
    pub fn unapproved_flows(&self) -> Option<RunError> {
        match &self.state {
            State::Proposed { effect, flows_approved_by } => {
                boundary::label_refusal(effect, flows_approved_by.as_deref())
            }
            _ => None,
        }
    }

    /// The effect the run waits at, proposed and not yet committed, if any.
    pub fn waiting_effect(&self) -> Option<&Effect> {
        match &self.state {
            State::Proposed { effect, .. } => Some(effect),
            _ => None,
        }
    }

    /// The hole the run waits at, if any.
    pub fn waiting_hole(&self) -> Option<&HoleRequest> {
        match &self.state {
            State::AtHole(hole) => Some(hole),
            _ => None,
        }
    }

    /// The decisions the boundary made and [`Run::take_trace`] has not taken: every one, for a
    /// run whose driver never takes them.
    pub fn trace(&self) -> &[TraceEntry] {
        &self.ctx.trace
    }

    /// Takes the decisions the boundary made since the last call, oldest first: a driver that
    /// tells them on as they come (the engine does) keeps the run from holding every call's
    /// arguments and answer to its end.
    pub fn take_trace(&mut self) -> Vec<TraceEntry> {
        std::mem::take(&mut self.ctx.trace)
    }

    /// The sessions to keep for the next request. After a failure they still record what the
    /// run did (a session it tainted stays tainted).
    pub fn sessions(&self) -> Sessions {
        let entry = self.ctx.program.entry.as_ref();
        let (result, failure) = match &self.state {
            State::Done(v) => (Some(v), None),
            State::Failed(label) => (None, Some(label)),
            _ => (None, None),
        };
        boundary::sessions_now(&self.ctx, entry, &self.sessions, result, failure)
    }

    /// Fuel used so far.
    pub fn fuel_used(&self) -> u64 {
        self.ctx.fuel_used
    }

    /// The program the run runs, with the fills it entered so far (a loaded run's, compiled
    /// again from its own sources).
    pub fn program(&self) -> Program {
        Program { compiled: self.ctx.program.clone() }
    }

    /// The files of its source map that hold the policies, and the plan: what it was checked
    /// from.
    pub fn checked_from(&self) -> (&[cordon_syntax::FileId], Option<cordon_syntax::FileId>) {
        (&self.ctx.program.origin.policies, self.ctx.program.origin.plan)
    }
}
