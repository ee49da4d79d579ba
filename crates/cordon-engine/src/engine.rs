//! The one loop that drives a run, and the stages an effect passes through.

use cordon_runtime::effect::{Effect, HoleRequest, ToolCall, ToolHost};
use cordon_runtime::{Config, Event as TraceEvent, Program, Run, RunError, Sessions, Step, Val};

use crate::event::{Event, Observer};
use crate::stage::{Stage, Verdict};

/// Fills the typed holes a run reaches (with a model, in `cordon-agent`).
pub trait Holes {
    /// The run stopped at `hole`: continue it with a fill ([`Run::fill`]) or end it
    /// ([`Run::abandon_hole`]).
    fn fill(&mut self, run: &mut Run, hole: HoleRequest) -> Result<Step, RunError>;

    /// Hears every event of the run, as an observer does (a hole filler's transcript records
    /// the effects between its prompts).
    fn event(&mut self, _event: &Event<'_>) {}
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
    stages: Vec<&'a mut dyn Stage>,
    holes: Option<&'a mut dyn Holes>,
    observers: Vec<&'a mut dyn Observer>,
}

impl std::fmt::Debug for Engine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stages: Vec<&str> = self.stages.iter().map(|s| s.name()).collect();
        f.debug_struct("Engine").field("stages", &stages).field("holes", &self.holes.is_some()).finish()
    }
}

impl<'a> Engine<'a> {
    /// An engine whose effects `hosts` perform, with no stages, no hole filler and no
    /// observers.
    pub fn new(hosts: &'a mut dyn ToolHost) -> Engine<'a> {
        Engine { hosts, stages: Vec::new(), holes: None, observers: Vec::new() }
    }

    /// Adds a stage after the ones already there.
    pub fn with_stage(mut self, stage: &'a mut dyn Stage) -> Engine<'a> {
        self.stages.push(stage);
        self
    }

    /// Fills holes with `holes`; without one, a hole ends the run.
    pub fn with_holes(mut self, holes: &'a mut dyn Holes) -> Engine<'a> {
        self.holes = Some(holes);
        self
    }

    pub fn with_observer(mut self, observer: &'a mut dyn Observer) -> Engine<'a> {
        self.observers.push(observer);
        self
    }

    /// Drives `run` from its start (or from wherever it waits for [`Run::proceed`]).
    pub fn start(&mut self, run: &mut Run) -> Ending {
        let step = run.proceed();
        self.drive(run, step)
    }

    /// Drives a run from where it waits: a run loaded from a saved one ([`Run::load`]), or one
    /// whose caller kept it aside. A waiting effect passes the whole pipeline again (a stage
    /// that held it decides again, now knowing its answer); a waiting hole is filled.
    pub fn resume(&mut self, run: &mut Run) -> Ending {
        if let Some(effect) = run.waiting_effect().cloned() {
            return match self.pipeline(run, effect, 0) {
                Passed::Performed(step) => self.drive(run, step),
                Passed::Held(held) => Ending::Held(held),
            };
        }
        if let Some(hole) = run.waiting_hole().cloned() {
            let step = match &mut self.holes {
                Some(holes) => holes.fill(run, hole),
                None => Err(run.abandon_hole("this run has no model attached")),
            };
            return self.drive(run, step);
        }
        self.start(run)
    }

    /// Performs a held effect after the rest of the pipeline agrees, and drives on.
    pub fn release(&mut self, run: &mut Run, held: Held) -> Ending {
        match self.pipeline(run, held.effect, held.next) {
            Passed::Performed(step) => self.drive(run, step),
            Passed::Held(held) => Ending::Held(held),
        }
    }

    /// Refuses a held effect: the plan gets the refusal where its tool allows one
    /// ([`Run::refuse`]), else the run ends with `e`.
    pub fn refuse(&mut self, run: &mut Run, held: Held, e: RunError) -> Ending {
        let _ = held;
        let step = run.refuse(e);
        self.drive(run, step)
    }

    /// The loop: every step of every run, for every front end, goes through here.
    fn drive(&mut self, run: &mut Run, mut step: Result<Step, RunError>) -> Ending {
        loop {
            step = match step {
                Ok(Step::Effect(effect)) => {
                    self.emit(&Event::EffectProposed(&effect));
                    match self.pipeline(run, effect, 0) {
                        Passed::Performed(next) => next,
                        Passed::Held(held) => return Ending::Held(held),
                    }
                }
                Ok(Step::Hole(hole)) => {
                    self.emit(&Event::HoleReached(&hole));
                    match &mut self.holes {
                        Some(holes) => holes.fill(run, hole),
                        None => Err(run.abandon_hole("this run has no model attached")),
                    }
                }
                Ok(Step::Done(v)) => {
                    self.emit(&Event::Finished(&v));
                    return Ending::Done(v);
                }
                Err(e) => {
                    self.emit(&Event::Failed(&e));
                    return Ending::Failed(e);
                }
            };
        }
    }

    /// Passes `effect` through the stages from `first` on, then commits and performs it.
    fn pipeline(&mut self, run: &mut Run, effect: Effect, first: usize) -> Passed {
        for i in first..self.stages.len() {
            let verdict = self.stages[i].decide(&effect);
            let stage = self.stages[i].name().to_string();
            self.emit(&Event::StageDecided { stage: &stage, effect: &effect, verdict: &verdict });
            match verdict {
                Verdict::Proceed => {}
                Verdict::Hold { needs } => {
                    self.emit(&Event::Held { effect: &effect, stage: &stage, needs: &needs });
                    return Passed::Held(Held { effect, stage, needs, next: i + 1 });
                }
                Verdict::Refuse(e) => return Passed::Performed(run.refuse(e)),
            }
        }
        Passed::Performed(self.perform(run, &effect))
    }

    fn perform(&mut self, run: &mut Run, effect: &Effect) -> Result<Step, RunError> {
        run.commit()?;
        let answer = self.hosts.perform(&ToolCall::new(effect));
        self.emit(&Event::EffectPerformed { effect, answer: &answer });
        run.resume(answer)
    }

    fn emit(&mut self, event: &Event<'_>) {
        if let Some(holes) = &mut self.holes {
            holes.event(event);
        }
        for o in &mut self.observers {
            o.event(event);
        }
    }
}

/// The end of a run driven by [`run`].
#[derive(Debug)]
pub struct Report {
    pub result: Result<Val, RunError>,
    /// Every decision the boundary made.
    pub trace: Vec<TraceEvent>,
    /// The sessions to keep for the next request.
    pub sessions: Sessions,
}

/// Runs a program to its end with no stages and no model: its tool calls performed by
/// `tools`, a hole ending the run.
pub fn run(program: &Program, sessions: &Sessions, config: &Config, tools: &mut dyn ToolHost) -> Report {
    let mut run = match Run::start(program, sessions, config) {
        Ok(run) => run,
        Err(e) => return Report { result: Err(e), trace: Vec::new(), sessions: sessions.clone() },
    };
    let result = Engine::new(tools).start(&mut run).into_result();
    Report { result, trace: run.trace().to_vec(), sessions: run.sessions() }
}
