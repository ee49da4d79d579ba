//! A workspace and its requests. A request, from a plan or from a model's fill of a root hole,
//! goes through one pipeline, written here once: take the session; check (with what the session
//! knows of its measures) and compile once; record the request in the store; run it under the
//! engine with the approval gate and then the audit stage (the last) deciding each effect, the
//! model filling holes, the caller's observer hearing every step; finish the record; keep the
//! sessions it hands back; give the session back.

use cordon_agent::{Earlier, FillConfig, Filler, ModelHoles, ModelIntent, Provider, ProviderConfig, Usage};
use cordon_audit::Recording;
use cordon_engine::{End, Ending, Engine, Event, Hosts, Observer, Observers};
use cordon_flow::Summary;
use cordon_gate::{Approver, Gate, PlanApproval, ProvenanceRules, StoreGrants};
use cordon_label::DcLabel;
use cordon_runtime::{Config, Limits, Program, Run, RunError, Sessions, Val, Value};
use cordon_store::NewRequest;
use cordon_syntax::{FileId, SourceMap};
use cordon_types::{CheckOptions, Checked};

use crate::report::{Approvals, CheckReport, Ended, Report};
use crate::session::SessionAt;
use crate::{Error, Source, Storage, Tools, root};

/// What a model may be shown: showing it a value is a flow of that value to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clearance {
    /// Public data only.
    #[default]
    Public,
    /// Also what is secret to the user (a model the user trusts with their data, e.g. one
    /// running on their machine).
    User,
}

impl Clearance {
    /// Every clearance, least first.
    pub const ALL: [Clearance; 2] = [Clearance::Public, Clearance::User];

    /// Its name, as `--clearance` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Clearance::Public => "public",
            Clearance::User => "user",
        }
    }

    /// The most a prompt may carry: public data (or also `user`'s secrets) from anyone.
    pub fn label(self, user: &str) -> DcLabel {
        match self {
            Clearance::Public => DcLabel::untrusted(),
            Clearance::User => DcLabel::secret(user).join(&DcLabel::untrusted()),
        }
    }
}

/// How a workspace's requests run.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Each run's limits: fuel, tool calls, memory, depth, time.
    pub limits: Limits,
    /// The checker's limits (its solver and wall-clock time).
    pub check: CheckOptions,
    /// How long a person's "always" lasts, in milliseconds; without it, until revoked (or, in a
    /// session, for that session).
    pub grants_expire_after_ms: Option<i64>,
    /// A second opinion on each card, from a model that is not the acting one: it is sent only
    /// the request and the card, and can flag a card, never clear one.
    pub intent_model: Option<ProviderConfig>,
    /// Before a plan runs, one card for the calls that ask which its effect summary proves
    /// within their sinks and bounded in number.
    pub approve_plan: bool,
    /// Replies asked for one hole before it is given up.
    pub max_attempts: u32,
    /// How deep holes may nest in fills.
    pub max_depth: usize,
    /// What the model filling holes may be shown.
    pub clearance: Clearance,
}

impl Default for Settings {
    fn default() -> Settings {
        let fill = FillConfig::default();
        Settings {
            limits: Limits::default(),
            check: CheckOptions::default(),
            grants_expire_after_ms: None,
            intent_model: None,
            approve_plan: false,
            max_attempts: fill.max_attempts,
            max_depth: fill.max_depth,
            clearance: Clearance::Public,
        }
    }
}

/// Checks `plan` against `policies` for `user` (whom `user()` names), or the policies alone
/// (which are then also linted for the default labels they rely on): types, refinements,
/// linearity, and the labels' static analysis.
pub fn check(policies: &[Source], plan: Option<&Source>, options: &CheckOptions, user: &str) -> CheckReport {
    let mut sources = SourceMap::new();
    let files: Vec<FileId> = policies.iter().map(|p| sources.add(p.name.clone(), p.text.clone())).collect();
    let plan = plan.map(|p| sources.add(p.name.clone(), p.text.clone()));
    let (mut outcome, effects) = cordon_flow::check(&sources, &files, plan, options, user, false);
    if plan.is_none() {
        outcome.diagnostics.extend(cordon_types::lint(&sources, &files));
    }
    CheckReport { sources, diagnostics: outcome.diagnostics, effects }
}

/// The policies, tools, store, session and settings one user's requests run with.
#[derive(Debug)]
pub struct Workspace {
    tools: Tools,
    storage: Storage,
    session: Option<SessionAt>,
    /// The sessions between requests when they are kept nowhere else (no `session`).
    sessions: Sessions,
    settings: Settings,
    /// The requests put to a model so far and their answers, for the next one's prompt.
    history: Vec<Earlier>,
    /// Requests put to a model so far: the next is `<request N+1>`.
    asked: usize,
}

/// What a request runs: a plan, or a request a model answers through a root hole.
enum Asking<'a> {
    Plan(&'a Source),
    Model { request: &'a str, model: &'a mut dyn Provider },
}

impl Workspace {
    /// A workspace over `tools`, recording in `storage`, keeping no sessions.
    pub fn new(tools: Tools, storage: Storage, settings: Settings) -> Workspace {
        Workspace {
            tools,
            storage,
            session: None,
            sessions: Sessions::default(),
            settings,
            history: Vec::new(),
            asked: 0,
        }
    }

    /// The same workspace, keeping its sessions at `at` from one request to the next (without,
    /// they are kept in memory, for the workspace's life).
    pub fn with_session(mut self, at: SessionAt) -> Workspace {
        self.session = Some(at);
        self
    }

    /// Whom the plans act for.
    pub fn principal(&self) -> &str {
        &self.tools.principal
    }

    /// The policy modules, in order.
    pub fn policies(&self) -> &[Source] {
        &self.tools.policies
    }

    pub fn hosts(&self) -> &Hosts {
        &self.tools.hosts
    }

    pub fn hosts_mut(&mut self) -> &mut Hosts {
        &mut self.tools.hosts
    }

    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Checks `plan` as a run answered by `approver` would (with what the session knows now),
    /// changing nothing.
    pub fn check(&self, plan: &Source, approver: &dyn Approver) -> Result<CheckReport, Error> {
        let sessions = match &self.session {
            Some(at) => at.peek(&self.storage)?,
            None => self.sessions.clone(),
        };
        let mut sources = SourceMap::new();
        let policies: Vec<FileId> =
            self.policies().iter().map(|p| sources.add(p.name.clone(), p.text.clone())).collect();
        let file = sources.add(plan.name.clone(), plan.text.clone());
        let options = self.check_options(&sessions);
        let (outcome, effects) =
            cordon_flow::check(&sources, &policies, Some(file), &options, self.principal(), approver.speaks_for_user());
        Ok(CheckReport { sources, diagnostics: outcome.diagnostics, effects })
    }

    /// Checks `plan` and, if it is accepted, runs it: every call through the gate (`approver`
    /// answering its cards) and the audit log, `observer` hearing every step.
    pub fn run(
        &mut self,
        plan: &Source,
        approver: &mut dyn Approver,
        observer: &mut dyn Observer,
    ) -> Result<Report, Error> {
        self.request(Asking::Plan(plan), approver, observer)
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
        self.request(Asking::Model { request, model }, approver, observer)
    }

    fn check_options(&self, sessions: &Sessions) -> CheckOptions {
        CheckOptions { entry_facts: sessions.entry_facts(self.principal()), ..self.settings.check.clone() }
    }

    /// Takes the session, runs the request, keeps what it did to the sessions (whatever became
    /// of its record: a taint is never forgotten) and gives the session back.
    fn request(
        &mut self,
        asking: Asking<'_>,
        approver: &mut dyn Approver,
        observer: &mut dyn Observer,
    ) -> Result<Report, Error> {
        let taken = self.session.as_ref().map(|at| at.take(&self.storage)).transpose()?;
        let (taken, sessions) = match taken {
            Some((taken, sessions)) => (Some(taken), sessions),
            None => (None, self.sessions.clone()),
        };
        let session = taken.as_ref().map(|t| t.name().to_string());
        let (report, after) = self.request_in(asking, &sessions, session.as_deref(), approver, observer);
        let after = after.unwrap_or(sessions);
        match taken {
            Some(taken) => taken.save_and_release(&self.storage, &after)?,
            None => self.sessions = after,
        }
        report
    }

    /// The request itself, in the session `session` holding `sessions`: its report, and the
    /// sessions it hands back if it ran. The plan is checked here, once.
    fn request_in(
        &mut self,
        asking: Asking<'_>,
        sessions: &Sessions,
        session: Option<&str>,
        approver: &mut dyn Approver,
        observer: &mut dyn Observer,
    ) -> (Result<Report, Error>, Option<Sessions>) {
        let mut sources = SourceMap::new();
        let policies: Vec<FileId> =
            self.policies().iter().map(|p| sources.add(p.name.clone(), p.text.clone())).collect();
        let (name, text, request) = match &asking {
            Asking::Plan(plan) => (plan.name.clone(), plan.text.clone(), plan.name.clone()),
            Asking::Model { request, .. } => {
                self.asked += 1;
                (format!("<request {}>", self.asked), root::plan(&sources, &policies, request), request.to_string())
            }
        };
        let plan = sources.add(name.clone(), text.clone());
        let options = self.check_options(sessions);
        let asked = approver.speaks_for_user();
        let (outcome, effects) = cordon_flow::check(&sources, &policies, Some(plan), &options, self.principal(), asked);
        let Some(checked) = outcome.program else {
            return (Ok(Report::rejected(name, sources, outcome.diagnostics, effects)), None);
        };
        let accepted =
            Accepted { name, text, request, sources, checked, options, warnings: outcome.diagnostics, effects };
        match self.execute(accepted, asking, sessions, session, approver, observer) {
            Ok((report, after)) => (Ok(report), Some(after)),
            Err(e) => (Err(e), None),
        }
    }

    /// Runs an accepted plan: compiled once, recorded, every effect through the gate and then
    /// the audit stage, holes filled by the model if it was asked; the report, and the sessions
    /// the run hands back.
    fn execute(
        &mut self,
        accepted: Accepted,
        asking: Asking<'_>,
        sessions: &Sessions,
        session: Option<&str>,
        approver: &mut dyn Approver,
        observer: &mut dyn Observer,
    ) -> Result<(Report, Sessions), Error> {
        let Accepted { name, text, request, mut sources, checked, options, warnings, effects } = accepted;
        let principal = self.principal().to_string();
        let program =
            Program::new(&checked).map_err(|e| Error::Setup(format!("cannot compile the plan: {}", e.message)))?;
        let fill = self.fill_config(&principal, approver.speaks_for_user());
        let new = NewRequest { text: &request, principal: &principal, session };
        let recording = Recording::begin(self.storage.store(), &new).map_err(|error| self.storage.error(error))?;
        let mut gate = gate(&self.storage, &self.settings, &program, &principal, approver, session)?;
        let config = Config { limits: self.settings.limits.clone(), user: principal.clone() };
        let (mut stage, mut recorder) = (recording.stage(), recording.recorder());
        let mut observers = Observers::new().with(&mut recorder).with(observer);
        let ran = match Run::start(&program, sessions, &config) {
            Err(e) => {
                observers.event(&Event::RequestStarted { plan: &text });
                observers.event(&Event::RunEnded { end: End::Failed { error: &e } });
                Ran { result: Err(e), sessions: sessions.clone(), trace: Vec::new(), holes: Vec::new() }
            }
            Ok(mut run) => {
                let engine = Engine::new(&mut self.tools.hosts).with_last_stage(&mut stage);
                match asking {
                    Asking::Plan(_) => {
                        if let (true, Some(summary)) = (self.settings.approve_plan, &effects) {
                            gate.approve_plan(PlanApproval::of(summary));
                        }
                        let ending =
                            engine.with_stage(&mut gate).with_observer(&mut observers).start_request(&mut run, &text);
                        Ran::of(ending.into_result(), &run, Vec::new())
                    }
                    Asking::Model { request, model } => {
                        gate = gate.with_request(request);
                        let mut filler = Filler::new(model).with_config(fill);
                        let mut holes = ModelHoles::new(&mut sources, &checked, &options, &mut filler);
                        let ending = engine
                            .with_stage(&mut gate)
                            .with_holes(&mut holes)
                            .with_observer(&mut observers)
                            .start_request(&mut run, &text);
                        let holes = holes.holes().to_vec();
                        if let Ending::Done(v) = &ending {
                            self.history.push(Earlier { request: request.to_string(), answer: answer_part(v) });
                        }
                        Ran::of(ending.into_result(), &run, holes)
                    }
                }
            }
        };
        drop(observers);
        let approvals = Approvals {
            records: gate.records().to_vec(),
            plan: gate.plan_decision().cloned(),
            stats: gate.stats().clone(),
        };
        drop(gate);
        let recorded = recording.finish();
        let usage = ran.holes.iter().fold(Usage::default(), |sum, h| sum + h.usage);
        let (ended, diagnostics) = match ran.result {
            Ok(v) => (Ended::Done(v), Vec::new()),
            Err(e) => {
                let diagnostic = e.to_diagnostic();
                (Ended::Failed(e), vec![diagnostic])
            }
        };
        let report = Report {
            plan: name,
            sources,
            warnings,
            diagnostics,
            effects,
            ended,
            trace: ran.trace,
            approvals,
            holes: ran.holes,
            usage,
            request: recorded.as_ref().ok().copied(),
            record_error: recorded.err(),
        };
        Ok((report, ran.sessions))
    }

    /// How holes are filled, for `user`, where `asked` says whether a person speaking for them
    /// will be shown cards.
    fn fill_config(&self, user: &str, asked: bool) -> FillConfig {
        FillConfig {
            max_attempts: self.settings.max_attempts,
            max_depth: self.settings.max_depth,
            clearance: self.settings.clearance.label(user),
            clearance_names: Clearance::ALL.iter().map(|c| (c.name().to_string(), c.label(user))).collect(),
            history: self.history.clone(),
            user: user.to_string(),
            asked,
            ..FillConfig::default()
        }
    }
}

/// A plan the check accepted, with what running it needs.
struct Accepted {
    /// The plan's name, its source and the request's text as the store records it.
    name: String,
    text: String,
    request: String,
    sources: SourceMap,
    checked: Checked,
    options: CheckOptions,
    /// The check's warnings.
    warnings: Vec<cordon_syntax::Diagnostic>,
    effects: Option<Summary>,
}

/// The approval gate for one run of `program`, on behalf of `user`: `approver` answers its
/// cards, grants are kept in the store (for the session `session`, if the request holds one),
/// and the intent model the settings name gives its second opinion.
fn gate<'a>(
    storage: &'a Storage,
    settings: &Settings,
    program: &Program,
    user: &str,
    approver: &'a mut dyn Approver,
    session: Option<&str>,
) -> Result<Gate<'a>, Error> {
    let mut gate = Gate::new(program, user, Box::new(approver)).with_grants(Box::new(StoreGrants(storage.store())));
    if let Some(name) = session {
        gate = gate.in_session(name);
    }
    if let Some(ms) = settings.grants_expire_after_ms {
        gate = gate.grants_expire_after_ms(ms);
    }
    if let Some(model) = &settings.intent_model {
        let provider = cordon_agent::open(model).map_err(|e| Error::Setup(format!("the intent model: {e}")))?;
        gate = gate.with_intent(Box::new(ModelIntent::new(provider, ProvenanceRules::new())));
    }
    Ok(gate)
}

/// What a drive of a request's run came to.
struct Ran {
    result: Result<Val, RunError>,
    sessions: Sessions,
    trace: Vec<cordon_runtime::Event>,
    holes: Vec<cordon_agent::HoleStats>,
}

impl Ran {
    fn of(result: Result<Val, RunError>, run: &Run, holes: Vec<cordon_agent::HoleStats>) -> Ran {
        Ran { result, sessions: run.sessions(), trace: run.trace().to_vec(), holes }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_cleared_model_may_see_the_users_secrets_and_no_one_elses() {
        let alices = DcLabel::secret("alice").join(&DcLabel::endorsed("alice"));
        let bobs = DcLabel::secret("bob");
        assert!(!alices.flows_to(&Clearance::Public.label("alice")));
        assert!(alices.flows_to(&Clearance::User.label("alice")));
        assert!(!bobs.flows_to(&Clearance::User.label("alice")));
        assert!(DcLabel::untrusted().flows_to(&Clearance::Public.label("alice")));
    }
}
