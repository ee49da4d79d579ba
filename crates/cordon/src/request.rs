//! A request, from a plan or from a model's fill of a root hole, through one pipeline written
//! here once, and the workspace's methods that run one ([`Workspace::run`], [`Workspace::ask`],
//! [`Workspace::prepare`], [`Workspace::resume`]). [`Workspace::prepare`] takes the session and checks the plan (with what the
//! session knows of its measures); [`Prepared::run`] compiles it once, records the request in
//! the store, runs it under the engine with the outgoing-data check, the approval gate and then the audit stage (the
//! last) deciding each effect and the model filling holes, the caller's observer hearing every
//! step; then finishes the record, keeps the sessions the run hands back (whatever became of the
//! record: a taint is never forgotten) and gives the session back.

use cordon_agent::{Earlier, Filler, HoleStats, ModelHoles, ModelIntent, Provider, Usage};
use cordon_audit::Recording;
use cordon_engine::{Decisions, End, Ending, Engine, Event, Observer, Observers};
use cordon_flow::Summary;
use cordon_gate::{Approver, Egress, Gate, PlanApproval, ProvenanceRules, StoreGrants};
use cordon_runtime::{Config, Program, Run, Sessions, Val, Value};
use cordon_store::{NewRequest, RequestId};
use cordon_syntax::{Diagnostic, FileId, SourceMap};
use cordon_types::{CheckOptions, Checked};

use crate::park::{Background, LeaseStage, Waiting};
use crate::report::{Approvals, Ended, Report};
use crate::session::Taken;
use crate::{Error, Settings, Source, Storage, Workspace, root};

/// How a workspace runs its requests: each one through [`Prepared`].
impl Workspace {
    /// Checks `plan` and, if it is accepted, runs it: every call through the gate (`approver`
    /// answering its cards) and the audit log, `observer` hearing every step.
    pub fn run(
        &mut self,
        plan: &Source,
        approver: &mut dyn Approver,
        observer: &mut dyn Observer,
    ) -> Result<Report, Error> {
        self.prepare(Request::Plan(plan), approver)?.run(observer)
    }

    /// Puts `request` to `model` through a root hole at the policies' entry, whose fills are
    /// checked before they run; then as [`Workspace::run`]. The request and its answer go into
    /// the next request's prompt, as labels allow.
    pub fn ask(
        &mut self,
        request: &str,
        model: &mut dyn Provider,
        approver: &mut dyn Approver,
        observer: &mut dyn Observer,
    ) -> Result<Report, Error> {
        self.prepare(Request::Ask(request), approver)?.with_model(model).run(observer)
    }

    /// Takes the session (before anything runs: a session another request holds stops it here)
    /// and checks `request` as a run answered by `approver` would: what the check found, and,
    /// if it accepted the plan, the request ready to run, with the session held until it has.
    pub fn prepare<'w>(
        &'w mut self,
        request: Request<'_>,
        approver: &'w mut dyn Approver,
    ) -> Result<Prepared<'w>, Error> {
        Prepared::new(self, request, approver)
    }

    /// Goes on in the background ([`crate::background::Background`]) with a run saved when it
    /// waited for a person ([`crate::Ended::Waiting`]), recorded as the request `recorded`;
    /// `request` is what it was started as. With [`Prepared::run`] as for a new request; it may
    /// wait again.
    pub fn resume<'w>(
        &'w mut self,
        saved: &[u8],
        background: Background,
        recorded: RequestId,
        request: Request<'_>,
        approver: &'w mut dyn Approver,
    ) -> Result<Prepared<'w>, Error> {
        Prepared::saved(self, saved, background, recorded, request, approver)
    }
}

/// What a request runs.
#[derive(Clone, Copy, Debug)]
pub enum Request<'a> {
    /// A plan, as written by the user.
    Plan(&'a Source),
    /// A plan another agent wrote (`cordon mcp serve`'s calling agent): a model's plan, so on a
    /// card its own text is the model's, never the user's request.
    AgentPlan(&'a Source),
    /// A request in words: the plan is one typed hole at the policies' entry holding it,
    /// `agent[T]("request", s, ..)`, which the model filling holes answers.
    Ask(&'a str),
}

/// A request checked and ready to run, holding its session until it has run (or is dropped).
pub struct Prepared<'w> {
    workspace: &'w mut Workspace,
    approver: &'w mut dyn Approver,
    model: Option<&'w mut dyn Provider>,
    /// The session the request holds, and what it held when taken.
    taken: Option<Taken>,
    sessions: Sessions,
    /// The request's text, for the conversation's history, when it was put in words.
    asked: Option<String>,
    /// Whether a model wrote the plan (a request in words, or another agent's plan).
    by_model: bool,
    /// What the check found; taken when the request runs.
    checked: Option<Result<Accepted, Box<Report>>>,
    /// Where the run starts: afresh, or where a saved run stopped.
    start: Option<Start>,
    /// How a run in the background is leased and saved ([`Prepared::in_background`]).
    background: Option<Background>,
    /// Whether the report lists every call ([`Prepared::without_trace`]).
    keep_trace: bool,
}

/// Where a request's run starts.
enum Start {
    Fresh,
    /// Where a saved run stopped, as the request the store already records.
    Saved {
        run: Box<Run>,
        request: RequestId,
    },
}

impl std::fmt::Debug for Prepared<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared").field("accepted", &self.accepted()).field("session", &self.taken).finish()
    }
}

/// A plan the check accepted, with what running it needs.
struct Accepted {
    /// The plan's name, its source and the request as the store records it.
    name: String,
    text: String,
    request: String,
    sources: SourceMap,
    checked: Checked,
    options: CheckOptions,
    /// The check's warnings.
    warnings: Vec<Diagnostic>,
    effects: Option<Summary>,
}

impl<'w> Prepared<'w> {
    pub(crate) fn new(
        workspace: &'w mut Workspace,
        request: Request<'_>,
        approver: &'w mut dyn Approver,
    ) -> Result<Prepared<'w>, Error> {
        let taken = workspace.session.as_ref().map(|at| at.take(&workspace.storage)).transpose()?;
        let (taken, sessions) = match taken {
            Some((taken, sessions)) => (Some(taken), sessions),
            None => (None, workspace.sessions.clone()),
        };
        let (asked, by_model) = match request {
            Request::Ask(text) => (Some(text.to_string()), true),
            Request::Plan(_) => (None, false),
            Request::AgentPlan(_) => (None, true),
        };
        let checked = check(workspace, request, &sessions, &*approver);
        Ok(Prepared {
            workspace,
            approver,
            model: None,
            taken,
            sessions,
            asked,
            by_model,
            checked: Some(checked),
            start: Some(Start::Fresh),
            background: None,
            keep_trace: true,
        })
    }

    /// A run saved when it waited for a person ([`crate::Ended::Waiting`]) under `background`'s
    /// key, ready to go on in the background as the request `recorded`, which the store
    /// records; `request` is what it was started as (the plan, or the request in words). It
    /// goes on with the policies and plan it was saved with, checked again from them; it holds
    /// no session.
    pub(crate) fn saved(
        workspace: &'w mut Workspace,
        saved: &[u8],
        background: Background,
        recorded: RequestId,
        request: Request<'_>,
        approver: &'w mut dyn Approver,
    ) -> Result<Prepared<'w>, Error> {
        let key = &background.key;
        let (asked, by_model) = match request {
            Request::Ask(text) => (Some(text.to_string()), true),
            Request::Plan(_) => (None, false),
            Request::AgentPlan(_) => (None, true),
        };
        let (run, sources) = Run::load(saved, key).map_err(|e| Error::Setup(format!("the saved run: {e}")))?;
        let sessions = Sessions::default();
        let options = workspace.check_options(&sessions);
        let (policies, plan) = run.checked_from();
        let (outcome, effects) =
            cordon_flow::check(&sources, policies, plan, &options, workspace.principal(), approver.speaks_for_user());
        let (Some(checked), Some(plan)) = (outcome.program, plan) else {
            return Err(Error::Setup("the saved run's plan no longer checks".into()));
        };
        let file = sources.file(plan);
        let accepted = Accepted {
            name: file.name.clone(),
            text: file.text.clone(),
            request: String::new(),
            sources,
            checked,
            options,
            warnings: Vec::new(),
            effects,
        };
        Ok(Prepared {
            workspace,
            approver,
            model: None,
            taken: None,
            sessions,
            asked,
            by_model,
            checked: Some(Ok(accepted)),
            start: Some(Start::Saved { run: Box::new(run), request: recorded }),
            background: Some(background),
            keep_trace: true,
        })
    }

    /// The same request, run in the background ([`Background`]): the queue's run notes the
    /// request as soon as the store records it, no effect is performed once the worker's lease
    /// is lost, and when its first card waits for an answer that comes later (its approver
    /// replied [`cordon_gate::Reply::Later`]) it is saved under the key and ends as
    /// [`crate::Ended::Waiting`] instead of failing. A request holding a session cannot wait:
    /// the session would be free for others while the run still holds its values.
    pub fn in_background(mut self, background: Background) -> Result<Prepared<'w>, Error> {
        if self.taken.is_some() {
            return Err(Error::Setup("a run in the background holds no session".into()));
        }
        self.background = Some(background);
        Ok(self)
    }

    /// The same request, its report listing no call, only how many were performed
    /// ([`Report::performed`]), and of the gate's records only those of calls that took more
    /// than the policy's allowing (`Gate::keeping_only_decisions`): for a front end whose
    /// observer shows each call as it happens, so that a long run does not hold every call's
    /// arguments, answer and record to its end.
    pub fn without_trace(mut self) -> Prepared<'w> {
        self.keep_trace = false;
        self
    }

    /// The same request, its holes filled by `model` (without one, a hole ends the run).
    pub fn with_model(mut self, model: &'w mut dyn Provider) -> Prepared<'w> {
        self.model = Some(model);
        self
    }

    /// Whether the check accepted the plan.
    pub fn accepted(&self) -> bool {
        matches!(self.checked, Some(Ok(_)))
    }

    /// The check's warnings (a call that will need an approval): the plan runs despite them.
    pub fn warnings(&self) -> &[Diagnostic] {
        match &self.checked {
            Some(Ok(accepted)) => &accepted.warnings,
            _ => &[],
        }
    }

    /// What the labels' analysis says the plan may do, when the checker accepted it.
    pub fn effects(&self) -> Option<&Summary> {
        match self.checked.as_ref()? {
            Ok(accepted) => accepted.effects.as_ref(),
            Err(rejected) => rejected.effects.as_ref(),
        }
    }

    /// The request's files, for rendering the warnings.
    pub fn sources(&self) -> Option<&SourceMap> {
        match self.checked.as_ref()? {
            Ok(accepted) => Some(&accepted.sources),
            Err(rejected) => Some(&rejected.sources),
        }
    }

    /// Runs the request if the check accepted it (a rejected plan's report says why not),
    /// `observer` hearing every step; keeps the sessions it hands back and gives the session
    /// back.
    pub fn run(mut self, observer: &mut dyn Observer) -> Result<Report, Error> {
        let (report, after) = match self.checked.take() {
            None => (Err(Error::Setup("the request has run already".into())), None),
            Some(Err(rejected)) => (Ok(*rejected), None),
            Some(Ok(accepted)) => match self.execute(accepted, observer) {
                // A run that waits keeps its sessions in its saved state until it ends.
                Ok((report, _)) if matches!(report.ended, Ended::Waiting(_)) => (Ok(report), None),
                Ok((report, after)) => (Ok(report), Some(after)),
                Err(e) => (Err(e), None),
            },
        };
        let after = after.unwrap_or_else(|| self.sessions.clone());
        match self.taken.take() {
            Some(taken) => taken.save_and_release(&self.workspace.storage, &after)?,
            None => self.workspace.sessions = after,
        }
        report
    }

    /// Runs an accepted plan: compiled once, recorded, every effect through the gate and then
    /// the audit stage, holes filled by the model if there is one; the report, and the sessions
    /// the run hands back.
    fn execute(&mut self, accepted: Accepted, observer: &mut dyn Observer) -> Result<(Report, Sessions), Error> {
        let Accepted { name, text, request, mut sources, checked, options, warnings, effects } = accepted;
        let workspace = &mut *self.workspace;
        let principal = workspace.principal().to_string();
        let start = self.start.take().unwrap_or(Start::Fresh);
        let program = match &start {
            Start::Fresh => {
                Program::new(&checked).map_err(|e| Error::Setup(format!("cannot compile the plan: {}", e.message)))?
            }
            Start::Saved { run, .. } => run.program(),
        };
        let fill = workspace.fill_config(&principal, self.approver.speaks_for_user());
        let session = self.taken.as_ref().map(|t| t.name().to_string());
        let new = NewRequest { text: &request, principal: &principal, session: session.as_deref() };
        let storage = &workspace.storage;
        let recording = match &start {
            Start::Fresh => Recording::begin(storage.store(), &new),
            Start::Saved { request, .. } => Recording::resume(storage.store(), *request),
        }
        .map_err(|error| storage.error(error))?;
        let mut leased = self.background.as_ref().map(|b| LeaseStage::new(storage.store(), b));
        if let Some(leased) = &leased {
            leased.started(recording.request()).map_err(|error| storage.error(error))?;
        }
        let approver = &mut *self.approver;
        let instances = workspace.tools.hosts.instances();
        let scanner = workspace.scanner();
        let mut gate =
            gate(storage, &workspace.settings, &program, &principal, approver, session.as_deref(), instances)?;
        // What needs consent is sent without a card only as the user's own words say: their
        // request, or the plan they wrote.
        let own_words = match self.by_model {
            true => self.asked.as_deref().unwrap_or_default(),
            false => text.as_str(),
        };
        gate = gate.with_consent(scanner.clone(), own_words);
        if self.by_model {
            gate = gate.with_request(self.asked.as_deref().unwrap_or_default());
        }
        if !self.keep_trace {
            gate = gate.keeping_only_decisions();
        }
        let (mut stage, mut recorder) = (recording.stage(), recording.recorder());
        let mut observers = Observers::new().with(&mut recorder).with(observer);
        if let (true, Some(summary), None) = (workspace.settings.approve_plan, &effects, &self.asked) {
            gate.approve_plan(PlanApproval::of(summary));
            if let Some(record) = gate.plan_decision() {
                observers.event(&Event::StageNoted { stage: "gate", note: record });
            }
        }
        let config = Config { limits: workspace.settings.limits.clone(), user: principal.clone() };
        let started = match start {
            Start::Fresh => Run::start(&program, &self.sessions, &config).map(|run| (Box::new(run), true)),
            Start::Saved { run, .. } => Ok((run, false)),
        };
        let mut decisions = match self.keep_trace {
            true => Decisions::kept(),
            false => Decisions::counted(),
        };
        let ran = match started {
            Err(e) => {
                observers.event(&Event::RequestStarted { plan: &text });
                observers.event(&Event::RunEnded { end: End::Failed { error: &e } });
                Ran { ended: Ended::Failed(e), sessions: self.sessions.clone(), decisions, holes: Vec::new() }
            }
            Ok((mut run, fresh)) => {
                // What is never sent is refused before any card could ask about it.
                let mut egress = Egress::new(scanner.clone(), &principal);
                let mut engine = Engine::new(&mut workspace.tools.hosts).with_stage(&mut egress).with_stage(&mut gate);
                if let Some(leased) = &mut leased {
                    engine = engine.with_stage(leased);
                }
                let engine =
                    engine.with_last_stage(&mut stage).with_observer(&mut observers).with_decisions(&mut decisions);
                let (ending, holes) = match self.model.as_deref_mut() {
                    None => (drive(engine, &mut run, fresh, &text), Vec::new()),
                    Some(model) => {
                        let mut filler = Filler::new(model).with_config(fill).with_scanner(scanner.clone());
                        let mut holes = ModelHoles::new(&mut sources, &checked, &options, &mut filler);
                        let ending = drive(engine.with_holes(&mut holes), &mut run, fresh, &text);
                        let stats = holes.holes().to_vec();
                        (ending, stats)
                    }
                };
                let waiting = match (&ending, &self.background, gate.pending_card()) {
                    (Ending::Held(_), Some(Background { key, .. }), Some(_)) => gate
                        .records()
                        .iter()
                        .rev()
                        .find_map(|r| r.card.clone().filter(|_| r.outcome == "held"))
                        .map(|card| Waiting::new(&run, &sources, key, *card)),
                    _ => None,
                };
                let ended = match (waiting, ending.into_result()) {
                    (Some(waiting), _) => Ended::Waiting(Box::new(waiting)),
                    (None, Ok(v)) => Ended::Done(v),
                    (None, Err(e)) => Ended::Failed(e),
                };
                Ran { ended, sessions: run.sessions(), decisions, holes }
            }
        };
        drop(observers);
        let (records, plan, stats) = gate.into_decisions();
        let approvals = Approvals { records, plan, stats };
        let recorded = recording.finish();
        if let (Some(asked), Ended::Done(v)) = (&self.asked, &ran.ended) {
            workspace.history.push(Earlier { request: asked.clone(), answer: answer_part(v) });
        }
        let usage = ran.holes.iter().fold(Usage::default(), |sum, h| sum + h.usage);
        let diagnostics = match &ran.ended {
            Ended::Failed(e) => vec![e.to_diagnostic()],
            _ => Vec::new(),
        };
        let ended = ran.ended;
        let report = Report {
            plan: name,
            sources,
            warnings,
            diagnostics,
            effects,
            ended,
            performed: ran.decisions.performed(),
            trace: ran.decisions.into_events(),
            approvals,
            holes: ran.holes,
            usage,
            request: recorded.as_ref().ok().copied(),
            record_error: recorded.err(),
        };
        Ok((report, ran.sessions))
    }
}

impl Drop for Prepared<'_> {
    /// A request dropped before it ran gives its session back as it was.
    fn drop(&mut self) {
        if let Some(taken) = self.taken.take() {
            let _ = taken.save_and_release(&self.workspace.storage, &self.sessions);
        }
    }
}

/// Checks `request` in `workspace` with the sessions `sessions`, as a run `approver` answers
/// would: the plan accepted with what running it needs, or the report of its rejection.
fn check(
    workspace: &mut Workspace,
    request: Request<'_>,
    sessions: &Sessions,
    approver: &dyn Approver,
) -> Result<Accepted, Box<Report>> {
    let mut sources = SourceMap::new();
    let policies: Vec<FileId> =
        workspace.policies().iter().map(|p| sources.add(p.name.clone(), p.text.clone())).collect();
    let (name, text, recorded) = match request {
        Request::Plan(plan) | Request::AgentPlan(plan) => (plan.name.clone(), plan.text.clone(), plan.name.clone()),
        Request::Ask(text) => {
            workspace.asked += 1;
            (format!("<request {}>", workspace.asked), root::plan(&sources, &policies, text), text.to_string())
        }
    };
    let plan = sources.add(name.clone(), text.clone());
    let options = workspace.check_options(sessions);
    let asked = approver.speaks_for_user();
    let (outcome, effects) =
        cordon_flow::check(&sources, &policies, Some(plan), &options, workspace.principal(), asked);
    match outcome.program {
        None => Err(Box::new(Report::rejected(name, sources, outcome.diagnostics, effects))),
        Some(checked) => Ok(Accepted {
            name,
            text,
            request: recorded,
            sources,
            checked,
            options,
            warnings: outcome.diagnostics,
            effects,
        }),
    }
}

/// The approval gate for one run of `program`, on behalf of `user`: `approver` answers its
/// cards, grants are kept in the store (for the session `session`, if the request holds one,
/// and bound to what serves each capability, `instances`),
/// and the intent model the settings name gives its second opinion.
fn gate<'a>(
    storage: &'a Storage,
    settings: &Settings,
    program: &Program,
    user: &str,
    approver: &'a mut dyn Approver,
    session: Option<&str>,
    instances: Vec<(String, String)>,
) -> Result<Gate<'a>, Error> {
    let mut gate = Gate::new(program, user, Box::new(approver))
        .with_grants(Box::new(StoreGrants(storage.store())))
        .with_instances(instances);
    if let Some(name) = session {
        gate = gate.in_session(name);
    }
    if let Some(ms) = settings.grants_expire_after_ms {
        gate = gate.grants_expire_after_ms(ms);
    }
    if let Some(model) = &settings.intent_model {
        let provider = cordon_agent::open(model).map_err(|e| Error::Setup(format!("the intent model: {e}")))?;
        let clearance = settings.intent_clearance.label(user);
        gate = gate.with_intent(Box::new(ModelIntent::new(provider, ProvenanceRules::new()).with_clearance(clearance)));
    }
    Ok(gate)
}

/// Drives `run` from its start (`fresh`, the plan's source `text`) or from where it waits.
fn drive(mut engine: Engine<'_>, run: &mut Run, fresh: bool, text: &str) -> Ending {
    match fresh {
        true => engine.start_request(run, text),
        false => engine.resume(run),
    }
}

/// What a drive of a request's run came to.
struct Ran {
    ended: Ended,
    sessions: Sessions,
    decisions: Decisions,
    holes: Vec<HoleStats>,
}

/// The answer in a plan's value (its first part, when the entry hands more back), with its
/// label joined with the whole value's own (what decided which tuple it is): what the next
/// request's prompt may show of it.
fn answer_part(v: &Val) -> Val {
    if let Value::Tuple(items) = &v.value
        && let Some(first) = items.first()
    {
        return Val { value: first.value.clone(), label: first.label.join(&v.label) };
    }
    v.clone()
}
