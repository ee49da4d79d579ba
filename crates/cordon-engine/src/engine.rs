//! The one loop that drives a run, and the stages an effect passes through. Each step is told
//! to the observers as it happens; what only the boundary saw (a call it refused as the plan made
//! it, the label it gave a tool's answer) is told from the runtime's trace records, as data,
//! taken from the run as they come and handed on to the drive's [`Decisions`].

use cordon_runtime::effect::{Effect, HoleRequest, ToolCall, ToolHost};
use cordon_runtime::trace::value_text;
use cordon_runtime::{Config, Decision, Program, Run, RunError, Sessions, Step, TraceEntry, Val};

use crate::decisions::Decisions;
use crate::event::{End, Event, Observer, Observers, RefusedBy};
use crate::stage::{Stage, Stages, Verdict};

/// Fills the typed holes a run reaches (with a model, in `cordon-agent`).
pub trait Holes {
    /// The run stopped at `hole`: continue it with a fill ([`Run::fill`]) or end it
    /// ([`Run::abandon_hole`]; [`Run::end_at_hole`] with the refusal, where the run came back to
    /// the hole after its fill was refused, `hole.again`). What the filler does (prompts, replies, fills) it tells
    /// `observer`: the engine's observers, so they hear it in order with the run's effects.
    fn fill(&mut self, run: &mut Run, hole: HoleRequest, observer: &mut dyn Observer) -> Result<Step, RunError>;
}

/// How a drive of a run stopped.
#[derive(Debug)]
pub enum Ending {
    /// The plan finished with this value.
    Done(Val),
    /// The run ended with this error.
    Failed(RunError),
    /// A stage holds an effect: the run waits for [`Engine::release`] or [`Engine::refuse`].
    Held(Held),
}

impl Ending {
    /// The plan's value or the error; a held run has neither yet.
    pub fn into_result(self) -> Result<Val, RunError> {
        match self {
            Ending::Done(v) => Ok(v),
            Ending::Failed(e) => Err(e),
            Ending::Held(h) => Err(RunError::new(
                cordon_runtime::ErrorKind::Tool,
                h.effect.span,
                format!("the run is waiting: `{}` holds this call for {}", h.stage, h.needs),
            )),
        }
    }
}

/// An effect a stage holds, and where in the pipeline it stopped.
#[derive(Debug)]
pub struct Held {
    pub effect: Effect,
    /// The stage that holds it.
    pub stage: String,
    /// What it waits for.
    pub needs: String,
    /// The stage after the holding one: where the pipeline goes on when it is released.
    next: usize,
}

/// How an effect left the pipeline: performed (or refused), and the run's next step; or held.
enum Passed {
    Performed(Result<Step, RunError>),
    Held(Held),
}

/// Drives runs: its hosts perform effects, its stages decide about them first, its hole
/// filler fills holes, and its observers hear everything.
pub struct Engine<'a> {
    hosts: &'a mut dyn ToolHost,
    stages: Stages<'a>,
    holes: Option<&'a mut dyn Holes>,
    observers: Observers<'a>,
    /// Where the boundary's decisions go once told; without it they are dropped.
    decisions: Option<&'a mut Decisions>,
}

impl std::fmt::Debug for Engine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("stages", &self.stages).field("holes", &self.holes.is_some()).finish()
    }
}

impl<'a> Engine<'a> {
    /// An engine whose effects `hosts` perform, with no stages, no hole filler and no
    /// observers.
    pub fn new(hosts: &'a mut dyn ToolHost) -> Engine<'a> {
        Engine { hosts, stages: Stages::default(), holes: None, observers: Observers::new(), decisions: None }
    }

    /// Adds a stage after the ones already there (and before the last stage, if there is one).
    pub fn with_stage(mut self, stage: &'a mut dyn Stage) -> Engine<'a> {
        self.stages.push(stage);
        self
    }

    /// Makes `stage` the pipeline's last stage: it decides after every stage added with
    /// [`Engine::with_stage`], before or after this call, and right before the effect is
    /// committed and performed. For the stage that records an effect as about to be performed
    /// (`cordon-audit`'s): a later stage could still hold or refuse it. It is given the effect as
    /// observers are told of it ([`Stage::screen`]), so what a stage keeps from being written down
    /// is not in its row either. One last stage; a second call replaces the first.
    pub fn with_last_stage(mut self, stage: &'a mut dyn Stage) -> Engine<'a> {
        self.stages.set_last(stage);
        self
    }

    /// Fills holes with `holes`; without one, a hole ends the run.
    pub fn with_holes(mut self, holes: &'a mut dyn Holes) -> Engine<'a> {
        self.holes = Some(holes);
        self
    }

    /// Hands the boundary's decisions to `decisions` once the observers were told of them.
    pub fn with_decisions(mut self, decisions: &'a mut Decisions) -> Engine<'a> {
        self.decisions = Some(decisions);
        self
    }

    /// Tells `observer` every event, after the observers already there.
    pub fn with_observer(mut self, observer: &'a mut dyn Observer) -> Engine<'a> {
        self.observers.push(observer);
        self
    }

    /// Drives `run` from its start (or from wherever it waits for [`Run::proceed`]).
    pub fn start(&mut self, run: &mut Run) -> Ending {
        self.keep_untold(run);
        self.defer_flows(run);
        let step = run.proceed();
        self.drive(run, step)
    }

    /// Drives a request's run from its start, first telling the observers the request started
    /// with `plan`, its source text.
    pub fn start_request(&mut self, run: &mut Run, plan: &str) -> Ending {
        self.emit(&Event::RequestStarted { plan });
        self.start(run)
    }

    /// Drives a run from where it waits: a run loaded from a saved one ([`Run::load`]), or one
    /// whose caller kept it aside. A waiting effect passes the whole pipeline again (a stage
    /// that held it decides again, now knowing its answer); a waiting hole is filled.
    pub fn resume(&mut self, run: &mut Run) -> Ending {
        self.keep_untold(run);
        self.defer_flows(run);
        let effect = run.waiting_effect().cloned();
        let shown = effect.as_ref().and_then(|e| self.stages.screen(e));
        self.emit(&Event::RunResumed { effect: shown.as_ref().or(effect.as_ref()) });
        if let Some(effect) = effect {
            return match self.pipeline(run, effect, shown, 0) {
                Passed::Performed(step) => self.drive(run, step),
                Passed::Held(held) => Ending::Held(held),
            };
        }
        if let Some(hole) = run.waiting_hole().cloned() {
            let step = self.fill(run, hole);
            return self.drive(run, step);
        }
        self.start(run)
    }

    /// Performs a held effect after the rest of the pipeline agrees, and drives on.
    pub fn release(&mut self, run: &mut Run, held: Held) -> Ending {
        self.keep_untold(run);
        self.defer_flows(run);
        let shown = self.stages.screen(&held.effect);
        self.emit(&Event::RunResumed { effect: Some(shown.as_ref().unwrap_or(&held.effect)) });
        match self.pipeline(run, held.effect, shown, held.next) {
            Passed::Performed(step) => self.drive(run, step),
            Passed::Held(held) => Ending::Held(held),
        }
    }

    /// Refuses a held effect on behalf of the stage that held it: the plan gets the refusal
    /// where its tool allows one ([`Run::refuse`]), else the run ends with `e`.
    pub fn refuse(&mut self, run: &mut Run, held: Held, e: RunError) -> Ending {
        self.keep_untold(run);
        let shown = self.stages.screen(&held.effect);
        self.emit(&Event::RunResumed { effect: Some(shown.as_ref().unwrap_or(&held.effect)) });
        let step = refuse_call(run, e, shown.as_ref());
        self.tell_trace(run, Some(&held.stage));
        self.drive(run, step)
    }

    /// Lets the boundary propose calls that fail only label checks when a stage may put them to
    /// the user; otherwise it refuses them itself, as always.
    fn defer_flows(&self, run: &mut Run) {
        run.defer_label_flows(self.stages.iter().any(|s| s.approves_flows()));
    }

    /// The loop: every step of every run, for every front end, goes through here.
    fn drive(&mut self, run: &mut Run, mut step: Result<Step, RunError>) -> Ending {
        loop {
            self.tell_trace(run, None);
            step = match step {
                Ok(Step::Effect(effect)) => {
                    let shown = self.stages.screen(&effect);
                    self.emit(&Event::EffectProposed { effect: shown.as_ref().unwrap_or(&effect) });
                    match self.pipeline(run, effect, shown, 0) {
                        Passed::Performed(next) => next,
                        Passed::Held(held) => return Ending::Held(held),
                    }
                }
                Ok(Step::Hole(hole)) => {
                    self.emit(&Event::HoleReached { hole: &hole });
                    self.fill(run, hole)
                }
                Ok(Step::Done(v)) => {
                    self.emit(&Event::RunEnded { end: End::Done { result: &v } });
                    return Ending::Done(v);
                }
                Err(e) => {
                    self.emit(&Event::RunEnded { end: End::Failed { error: &e } });
                    return Ending::Failed(e);
                }
            };
        }
    }

    /// Passes `effect` through the stages from `first` on, then commits and performs it; every
    /// event about it shows `shown` instead, if a stage screened it.
    fn pipeline(&mut self, run: &mut Run, effect: Effect, shown: Option<Effect>, first: usize) -> Passed {
        let told = shown.as_ref().unwrap_or(&effect);
        let mut i = first;
        loop {
            // The last stage sees only calls that will be performed if it agrees.
            if self.stages.is_last(i)
                && let Some(step) = self.refuse_unendorsed(run, shown.as_ref())
            {
                return Passed::Performed(step);
            }
            let last = self.stages.is_last(i);
            let Some(stage) = self.stages.get(i) else { break };
            // The last stage (the audit's) writes the call down: it is shown the call as every
            // observer is told of it, screened.
            let verdict = stage.decide(if last { told } else { &effect });
            self.observers.event(&Event::StageDecided {
                stage: stage.name(),
                effect: told,
                verdict: &verdict,
                note: stage.note(),
            });
            let stage = stage.name().to_string();
            match verdict {
                Verdict::Proceed => i += 1,
                Verdict::Endorse { by } => {
                    if let Err(e) = run.approve_flows(&by) {
                        let step = refuse_call(run, e, shown.as_ref());
                        self.tell_trace(run, Some(&stage));
                        return Passed::Performed(step);
                    }
                    i += 1;
                }
                Verdict::Hold { needs } => {
                    self.emit(&Event::RunHeld { stage: &stage, effect: told, needs: &needs });
                    return Passed::Held(Held { effect, stage, needs, next: i + 1 });
                }
                Verdict::Refuse(e) => {
                    let step = refuse_call(run, e, shown.as_ref());
                    self.tell_trace(run, Some(&stage));
                    return Passed::Performed(step);
                }
                Verdict::Withhold { error, shown } => {
                    let step = run.refuse_showing(error, Some(shown));
                    self.tell_trace(run, Some(&stage));
                    return Passed::Performed(step);
                }
            }
        }
        let told = shown.as_ref().unwrap_or(&effect);
        Passed::Performed(self.perform(run, &effect, told))
    }

    /// Refuses, as the boundary would have, a call that failed label checks and that no stage
    /// endorsed (its arguments recorded as `shown`, where a stage screened them).
    fn refuse_unendorsed(&mut self, run: &mut Run, shown: Option<&Effect>) -> Option<Result<Step, RunError>> {
        let e = run.unapproved_flows()?;
        let step = refuse_call(run, e, shown);
        self.tell_trace(run, None);
        Some(step)
    }

    /// Commits and performs `effect`, telling the observers of it as `told`.
    fn perform(&mut self, run: &mut Run, effect: &Effect, told: &Effect) -> Result<Step, RunError> {
        if let Some(step) = self.refuse_unendorsed(run, Some(told)) {
            return step;
        }
        // The trace keeps the call as observers are told of it.
        let shown = (!std::ptr::eq(told, effect)).then(|| told.args.clone());
        run.commit_showing(shown)?;
        let answer = self.hosts.perform(&ToolCall::new(effect));
        self.emit(&Event::EffectPerformed { effect: told, answer: &answer });
        run.resume(answer)
    }

    /// Hands a hole to the hole filler, which tells the observers what it does.
    fn fill(&mut self, run: &mut Run, hole: HoleRequest) -> Result<Step, RunError> {
        match &mut self.holes {
            Some(holes) => holes.fill(run, hole, &mut self.observers),
            None => Err(run.abandon_hole("this run has no model attached", None)),
        }
    }

    /// Tells the observers what the boundary recorded since they were last told: calls it
    /// refused (when admitting them, or for the stage `refused_by`: the first refusal recorded
    /// after a stage refused is that stage's), what tools returned, and tools that failed.
    fn tell_trace(&mut self, run: &mut Run, mut refused_by: Option<&str>) {
        let records = run.take_trace();
        for record in &records {
            let (tool, at) = (record.tool.as_str(), record.span);
            let event = match &record.decision {
                Decision::Allowed => continue,
                Decision::Blocked { code, reason } => {
                    let by = refused_by.take().map_or(RefusedBy::Boundary, RefusedBy::Stage);
                    Event::EffectRefused { tool, args: &record.values, at, by, code: *code, reason }
                }
                Decision::Returned => {
                    let (Some(value), Some(label)) = (record.result(), record.answer_label()) else { continue };
                    // Shown once, for every observer.
                    let text = value_text(value);
                    self.observers.event(&Event::EffectReturned { tool, value, text: &text, label: &label, at });
                    continue;
                }
                Decision::Failed { reason } => Event::EffectFailed { tool, reason, at },
            };
            self.observers.event(&event);
        }
        self.hand_on(records);
    }

    /// Hands on, untold, the decisions a run brings when a drive of it begins: made before (a
    /// run loaded from one saved with them), and told then.
    fn keep_untold(&mut self, run: &mut Run) {
        let records = run.take_trace();
        self.hand_on(records);
    }

    /// Gives decisions already told to the drive's [`Decisions`], if it keeps them.
    fn hand_on(&mut self, records: Vec<TraceEntry>) {
        if let Some(decisions) = &mut self.decisions {
            decisions.add(records);
        }
    }

    fn emit(&mut self, event: &Event<'_>) {
        self.observers.event(event);
    }
}

/// Refuses the waiting call with `e`; the trace keeps its arguments as `shown` where a stage
/// screened them ([`Stage::screen`]), so no refusal of it records what the stage kept out.
fn refuse_call(run: &mut Run, e: RunError, shown: Option<&Effect>) -> Result<Step, RunError> {
    run.refuse_showing(e, shown.map(|s| s.args.clone()))
}

/// The end of a run driven by [`run`].
#[derive(Debug)]
pub struct Report {
    pub result: Result<Val, RunError>,
    /// Every decision the boundary made.
    pub trace: Vec<TraceEntry>,
    /// The sessions to keep for the next request.
    pub sessions: Sessions,
}

/// Runs a program to its end with no stages and no model: its tool calls performed by
/// `tools`, a hole ending the run.
pub fn run(program: &Program, sessions: &Sessions, config: &Config, tools: &mut dyn ToolHost) -> Report {
    run_observed(program, sessions, config, tools, &mut Observers::new())
}

/// [`run`], telling `observer` every event.
pub fn run_observed(
    program: &Program,
    sessions: &Sessions,
    config: &Config,
    tools: &mut dyn ToolHost,
    observer: &mut dyn Observer,
) -> Report {
    let mut run = match Run::start(program, sessions, config) {
        Ok(run) => run,
        Err(e) => {
            observer.event(&Event::RunEnded { end: End::Failed { error: &e } });
            return Report { result: Err(e), trace: Vec::new(), sessions: sessions.clone() };
        }
    };
    let mut decisions = Decisions::kept();
    let result =
        Engine::new(tools).with_observer(observer).with_decisions(&mut decisions).start(&mut run).into_result();
    Report { result, trace: decisions.into_events(), sessions: run.sessions() }
}
