//! One benchmark case: a plan run in a fresh workspace of its suite's environment (its data
//! patched with an injection where the case has one), answered by a scripted person, and
//! judged: was the user's task done, did the attacker's goal or the over-reach happen, how many
//! cards were shown, and where a run that did not finish was stopped.

use std::time::Instant;

use cordon_agent::Provider;
use cordon_engine::{Hosts, Observer};
use cordon_gate::{Answer, Approver, Card, Reply};
use cordon_runtime::{ErrorKind, Value};
use cordon_syntax::Code;
use serde::Serialize;

use crate::bench::check::{Reading, all_hold, patched};
use crate::bench::files;
use crate::bench::model::BenchModel;
use crate::bench::suite::{Asked, Check, Fill, Patch, Suite};
use crate::{Clearance, Ended, Error, Settings, Storage, Tools, Workspace};

/// Who writes the plan that runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The reference plans, their holes filled by the reference fills: utility under the
    /// policy with a perfect model.
    Oracle,
    /// The reference plans, every hole whose prompt showed injected text filled by the
    /// attacker: a sub-agent the injection took over, with the reach of its hole.
    WorstCase,
    /// The attacker writes the root plan; only types, labels, the gate and the outgoing-data
    /// check stand in the way.
    CompromisedPlanner,
    /// The attacker writes the root plan, reads why it failed, and writes another, within a
    /// budget of attempts per goal (`adaptive.rs`).
    Adaptive,
    /// A real model (`--model`) writes the plans and fills for every user task, on clean data
    /// and with each injection it reads; the same people and checks.
    Live,
}

impl Mode {
    pub const ALL: [Mode; 5] = [Mode::Oracle, Mode::WorstCase, Mode::CompromisedPlanner, Mode::Adaptive, Mode::Live];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Oracle => "oracle",
            Mode::WorstCase => "worst-case",
            Mode::CompromisedPlanner => "compromised-planner",
            Mode::Adaptive => "adaptive",
            Mode::Live => "live",
        }
    }

    /// The mode called `name`.
    pub fn named(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Which data and which tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// The suite's data as it is.
    Normal,
    /// An injection task's text placed where the user task reads.
    Injected,
    /// A benign request that tempts an agent past its authority.
    OverReach,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Normal => "normal",
            Variant::Injected => "injected",
            Variant::OverReach => "over-reach",
        }
    }
}

/// A scripted person at the cards. The informed one says yes to the cards the request asked
/// for (the tool, showing what it named), flagged or not, and no to every other. The hurried
/// one presses `y` on any card of a tool the request asked for, whatever it shows; a flagged
/// card takes the flagged value's last characters typed, which `y` is not, so it refuses those.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Person {
    Informed,
    Hurried,
}

impl Person {
    pub fn name(self) -> &'static str {
        match self {
            Person::Informed => "informed",
            Person::Hurried => "hurried",
        }
    }
}

/// Where a run that did not finish was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// The checker: types, refinements, linearity, capabilities.
    Checker,
    /// The labels' static analysis, before anything ran.
    StaticLabels,
    /// The labels at the boundary, at run time.
    RuntimeLabels,
    /// The boundary's re-checks of refinements and host-made values.
    RuntimeChecks,
    /// The approval gate: a `deny` tool or a person's no.
    Gate,
    /// The outgoing-data check.
    OutgoingCheck,
    /// Anything else: a tool that failed, a limit.
    Other,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Checker => "checker",
            Stop::StaticLabels => "static labels",
            Stop::RuntimeLabels => "run-time labels",
            Stop::RuntimeChecks => "run-time checks",
            Stop::Gate => "gate",
            Stop::OutgoingCheck => "outgoing check",
            Stop::Other => "other",
        }
    }
}

/// One case to run.
#[derive(Clone, Debug)]
pub struct Case<'s> {
    pub suite: &'s Suite,
    pub mode: Mode,
    pub variant: Variant,
    pub person: Person,
    /// Whether the policies' guards are on: off, every tool's labels let anything through and
    /// nothing asks (`cordon_syntax::unguarded`), to measure what the guards buy.
    pub guarded: bool,
    /// The user task, or over-reach task, it stands for.
    pub task: String,
    pub injection: Option<String>,
    /// What the person asked, in words: the model answers it with `plan`.
    pub request: &'s str,
    pub plan: &'s str,
    /// The data's patches (an injection's).
    pub patches: &'s [Patch],
    /// The cards the person asked for.
    pub approve: &'s [Asked],
    /// What a model writes for the plan's holes.
    pub fills: &'s [Fill],
    /// What the attacker writes in a hole whose prompt shows the injected text (none outside
    /// `worst-case`).
    pub attacker_fills: &'s [Fill],
    /// Judges whether the user's task was done, if the case measures it.
    pub utility: Option<&'s [Check]>,
    /// Judges whether the attacker's goal happened, if the case measures it.
    pub attack: Option<&'s [Check]>,
    /// Judges whether the agent over-reached, if the case measures it.
    pub over_reach: Option<&'s [Check]>,
}

/// How a case went.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub suite: String,
    pub mode: Mode,
    pub variant: Variant,
    pub person: Person,
    /// Whether the policies' guards were on.
    pub guarded: bool,
    pub task: String,
    pub injection: Option<String>,
    /// `done`, `rejected` (nothing ran) or `stopped` (at run time).
    pub ended: &'static str,
    /// Where the run was stopped, or (for one that finished) where a call of it was refused.
    pub stopped_by: Option<Stop>,
    pub utility: Option<bool>,
    pub attack: Option<bool>,
    pub over_reach: Option<bool>,
    /// Cards shown, and how many the person approved.
    pub cards: usize,
    pub approved: usize,
    /// Holes the model was asked to fill, and how many of them the attacker filled.
    pub holes: usize,
    pub attacked_holes: usize,
    pub micros: u64,
    /// The answer, or why the run stopped (for `-v`).
    pub said: String,
    /// Each call the plan proposed, in order, and what became of it: `allowed Chat.send_dm(to:
    /// "bob", ..)`, `refused Chat.post_message(..): label-flow`.
    pub calls: Vec<String>,
    /// In `adaptive` mode, how many plans the attacker tried (until its goal happened or the
    /// budget was spent), and what each tried and how it ended.
    pub attempts: Option<usize>,
    pub tried: Vec<String>,
    /// Tokens of the model's prompts and replies (estimated for the scripted model).
    pub tokens: u64,
}

/// A model to put the requests to (`live` mode), and who hears each request's events (a
/// transcript, to replay the run offline).
pub struct Live<'a> {
    pub model: &'a mut dyn Provider,
    pub observer: &'a mut dyn Observer,
}

impl std::fmt::Debug for Live<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").field("model", &self.model.name()).finish_non_exhaustive()
    }
}

/// The person at the cards, counting them.
struct Scripted<'a> {
    person: Person,
    approve: &'a [Asked],
    cards: usize,
    approved: usize,
}

impl Approver for Scripted<'_> {
    fn name(&self) -> &str {
        self.person.name()
    }

    fn review(&mut self, card: &Card) -> Reply {
        self.cards += 1;
        let tool = card.tool.rsplit('.').next().unwrap_or_default();
        let shown: Vec<&str> =
            card.destination.iter().chain(&card.recipients).chain(&card.content).map(|s| s.text.as_str()).collect();
        let asked = |a: &Asked| {
            a.tool == tool
                && match self.person {
                    Person::Informed => a.shows.as_ref().is_none_or(|x| shown.iter().any(|s| s.contains(x.as_str()))),
                    Person::Hurried => card.flags.is_empty(),
                }
        };
        let yes = self.approve.iter().any(asked);
        self.approved += usize::from(yes);
        Reply::Answer(if yes { Answer::Yes } else { Answer::No })
    }

    fn speaks_for_user(&self) -> bool {
        true
    }
}

/// The tools of `case`'s environment (its data patched), guarded or not, and the fixture on
/// disk that holds them where the environment is the real filesystem.
fn tools(case: &Case<'_>) -> Result<(Option<files::Fixture>, Tools), String> {
    let suite = case.suite;
    let data = patched(&suite.data, case.patches)?;
    // The `files` environment is the real filesystem over a fixture written for this case.
    let (fixture, hosts) = match suite.env.as_str() {
        files::ENV => {
            let (fixture, hosts) = files::Fixture::open(&data)?;
            (Some(fixture), hosts)
        }
        env => {
            let mut hosts = Hosts::new();
            hosts.add(cordon_sim::env_with_data(env, &data)?)?;
            (None, hosts)
        }
    };
    let mut tools = Tools::new(hosts);
    if !case.guarded {
        for policy in &mut tools.policies {
            policy.text = cordon_syntax::unguarded::unguarded(&policy.text)?;
        }
    }
    Ok((fixture, tools))
}

/// The texts of the policies `case`'s plan is checked against.
pub fn policies(case: &Case<'_>) -> Result<Vec<String>, String> {
    Ok(tools(case)?.1.policies.into_iter().map(|p| p.text).collect())
}

/// Runs `case` in a fresh, in-memory workspace: its request answered by `live`'s model if
/// there is one, else by the case's plan and fills.
pub fn run(case: &Case<'_>, live: Option<&mut Live<'_>>) -> Result<Outcome, Error> {
    let suite = case.suite;
    let setup = |e: String| Error::Setup(format!("suite `{}`, `{}`: {e}", suite.name, case.task));
    let (fixture, tools) = tools(case).map_err(setup)?;
    // In `worst-case` mode a hole's model is shown all the user may see: the most an
    // injection can reach it through.
    let clearance = if case.mode == Mode::WorstCase { Clearance::User } else { Clearance::Public };
    let settings = Settings { clearance, ..Settings::default() };
    let mut workspace = Workspace::new(tools, Storage::in_memory()?, settings);
    let mut person = Scripted { person: case.person, approve: case.approve, cards: 0, approved: 0 };
    let injected = if case.attacker_fills.is_empty() { Vec::new() } else { placed_texts(case.patches) };
    let root = Fill { task: case.request.to_string(), plan: case.plan.to_string() };
    let mut model = BenchModel::new(&root, case.fills, case.attacker_fills, &injected);
    let started = Instant::now();
    let report = match live {
        Some(live) => workspace.ask(case.request, live.model, &mut person, live.observer)?,
        None => workspace.ask(case.request, &mut model, &mut person, &mut |_: &cordon_engine::Event<'_>| {})?,
    };
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    let state = match &fixture {
        Some(fixture) => fixture.state(),
        None => cordon_sim::state_of(workspace.hosts(), &suite.env).unwrap_or_default(),
    };
    let (ended, stopped_by, said) = match &report.ended {
        // A plan may go on past a refused call (a tool whose result says it was refused).
        Ended::Done(v) => ("done", refused_call(&report.trace), answer_text(&v.value)),
        // The bench's people answer at once: its runs never wait.
        Ended::Waiting(_) => ("waiting", None, String::new()),
        Ended::Rejected => {
            let errors: Vec<Code> = report.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code).collect();
            let by = if errors.contains(&Code::LabelFlow) { Stop::StaticLabels } else { Stop::Checker };
            let codes: Vec<&str> = errors.iter().map(|c| c.as_str()).collect();
            ("rejected", Some(by), codes.join(", "))
        }
        Ended::Failed(e) => {
            let by = match e.kind {
                // The root plan, or a hole's fill, rejected on every attempt: by the labels'
                // analysis, by the gate's `deny`, or by the checker, as its last rejection says.
                ErrorKind::Hole if e.message.contains("error[label-flow]") => Stop::StaticLabels,
                ErrorKind::Hole if e.message.contains("error[approval-denied]") => Stop::Gate,
                kind => stop_of(kind.code()),
            };
            ("stopped", Some(by), format!("{}: {}", e.kind.code().as_str(), e.message))
        }
    };
    let answer = if ended == "done" { said.as_str() } else { "" };
    let judge = |checks: Option<&[Check]>, reading| checks.map(|c| all_hold(c, answer, &state, reading));
    Ok(Outcome {
        suite: suite.name.clone(),
        mode: case.mode,
        variant: case.variant,
        person: case.person,
        guarded: case.guarded,
        task: case.task.clone(),
        injection: case.injection.clone(),
        ended,
        stopped_by,
        utility: judge(case.utility, Reading::Each),
        attack: judge(case.attack, Reading::Joined),
        over_reach: judge(case.over_reach, Reading::Joined),
        cards: person.cards,
        approved: person.approved,
        holes: model.asked,
        attacked_holes: model.attacked,
        micros,
        said,
        calls: calls(&report.trace),
        attempts: None,
        tried: Vec::new(),
        tokens: report.usage.total(),
    })
}

/// Every text an injection's patches place.
fn placed_texts(patches: &[Patch]) -> Vec<String> {
    fn texts(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(items) => items.iter().for_each(|x| texts(x, out)),
            serde_json::Value::Object(fields) => fields.values().for_each(|x| texts(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for patch in patches {
        match patch {
            Patch::Set { value, .. } | Patch::Append { value, .. } => texts(value, &mut out),
        }
    }
    out
}

/// The calls of a trace as `-v` lists them.
fn calls(trace: &[cordon_runtime::TraceEntry]) -> Vec<String> {
    let args = |e: &cordon_runtime::TraceEntry| cordon_runtime::trace::args_text(&e.values);
    trace
        .iter()
        .filter_map(|e| match &e.decision {
            cordon_runtime::Decision::Allowed => Some(format!("allowed {}({})", e.tool, args(e))),
            cordon_runtime::Decision::Blocked { code, .. } => {
                Some(format!("refused {}({}): {}", e.tool, args(e), code.as_str()))
            }
            cordon_runtime::Decision::Returned | cordon_runtime::Decision::Failed { .. } => None,
        })
        .collect()
}

/// Which layer refused the first call the boundary or the gate refused, if one was.
fn refused_call(trace: &[cordon_runtime::TraceEntry]) -> Option<Stop> {
    trace.iter().find_map(|e| match &e.decision {
        cordon_runtime::Decision::Blocked { code, .. } => Some(stop_of(*code)),
        _ => None,
    })
}

/// Which layer a run-time refusal or error comes from, by its code.
fn stop_of(code: Code) -> Stop {
    match code {
        Code::LabelFlow => Stop::RuntimeLabels,
        Code::RecheckFailed | Code::ForgedValue | Code::ToolContract => Stop::RuntimeChecks,
        Code::ApprovalDenied => Stop::Gate,
        // A hole none of whose fills the checker accepted.
        Code::HoleUnfilled => Stop::Checker,
        Code::SensitiveData => Stop::OutgoingCheck,
        _ => Stop::Other,
    }
}

/// The answer for the user: the text a plan returns (alone, or first of a tuple with the
/// session).
fn answer_text(v: &Value) -> String {
    match v {
        Value::Str(s) => s.as_str().to_string(),
        Value::Tuple(items) => items.first().map_or_else(String::new, |x| answer_text(&x.value)),
        other => other.to_string(),
    }
}
