//! `cordon run`: check a plan, and only if it is accepted, run it against a simulated
//! environment, printing the result and the trace of every tool call and decision. The run is
//! recorded in the store: the request, its transcript, and the audit log's rows, each effect's
//! committed before the environment performs it (the audit stage is the pipeline's last). With
//! `--session FILE` the linear values the plan hands back (and their measures) are kept for the
//! next run, so a session tainted by one request stays tainted in the next; the store's session
//! of that file is locked while the run holds it.

use std::io;
use std::path::{Path, PathBuf};

use cordon_audit::Recording;
use cordon_engine::{End, Engine, Observer};
use cordon_gate::{Gate, StoreGrants};
use cordon_runtime::{Config, Decision, Event, Limits, Program, Run, Sessions};
use cordon_store::{NewRequest, RequestId};
use cordon_syntax::{Diagnostic, SourceMap, render};
use cordon_types::CheckOptions;

use crate::approve::ApproveArgs;
use crate::check::Format;
use crate::store::{SessionFile, StoreArgs, store_error};
use crate::{Error, Report};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A policy module; repeat for several. Defaults to the environment's own policy
    #[arg(long = "policy", value_name = "FILE")]
    pub policies: Vec<PathBuf>,

    /// The simulated environment whose tools the plan calls; repeat for several in one run
    /// (`--env github --env chat`), each serving its own capability
    #[arg(long = "env", value_name = "NAME", default_value = "github")]
    pub envs: Vec<String>,

    /// Keep the plan's sessions in this file between runs (read if it exists, written after;
    /// kept in the store too, where one run at a time may hold it)
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,

    /// How to print: `human` or `json` (`concise` prints diagnostics for models)
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Calls and loop iterations the run may make
    #[arg(long, value_name = "N", default_value_t = Limits::default().fuel)]
    pub fuel: u64,

    /// Tool calls the run may make
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_tool_calls)]
    pub max_tool_calls: u32,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub approve: ApproveArgs,

    /// The plan to run
    pub plan: PathBuf,
}

/// How a run ended, for the summary line and JSON.
enum Status {
    Rejected,
    Failed,
    Done,
}

pub fn run(args: &Args, read: &dyn Fn(&Path) -> io::Result<String>) -> Result<Report, Error> {
    let mut env = cordon_envs::World::open(&args.envs).map_err(Error::Usage)?;
    let mut sources = SourceMap::new();
    let mut load = |path: &Path| {
        let text = read(path).map_err(|error| Error::Read { path: path.to_path_buf(), error })?;
        Ok::<_, Error>(sources.add(path.display().to_string(), text))
    };
    let mut policies = args.policies.iter().map(|p| load(p)).collect::<Result<Vec<_>, _>>()?;
    let plan = load(&args.plan)?;
    if policies.is_empty() {
        policies.extend(env.policies().into_iter().map(|(name, text)| sources.add(name, text)));
    }
    // Before anything runs: a store that cannot be opened, or a session another run holds,
    // stops the run here.
    let store = args.store.open()?;
    let (session, sessions) = match &args.session {
        Some(path) => {
            let (file, sessions) = SessionFile::take(&store, path, read)?;
            (Some(file), sessions)
        }
        None => (None, Sessions::default()),
    };

    let options = CheckOptions { entry_facts: sessions.entry_facts(env.principal()), ..CheckOptions::default() };
    let outcome = cordon_types::check(&sources, &policies, Some(plan), &options);
    let Some(checked) = outcome.program.as_ref() else {
        if let Some(session) = session {
            session.release(&store)?;
        }
        return Ok(render_report(args, &sources, Status::Rejected, &outcome.diagnostics, Ran::nothing()));
    };
    let program = Program::new(checked).map_err(|e| Error::Usage(format!("cannot compile the plan: {}", e.message)))?;
    let config = Config {
        limits: Limits { fuel: args.fuel, max_tool_calls: args.max_tool_calls, ..Limits::default() },
        user: env.principal().to_string(),
    };

    let text = args.plan.display().to_string();
    let request = NewRequest { text: &text, principal: env.principal(), session: session.as_ref().map(|s| s.name()) };
    let recording = Recording::begin(&store, &request).map_err(|error| store_error(&store, error))?;
    let mut trace = Trace::default();
    let mut gate =
        Gate::new(&program, env.principal(), args.approve.approver()?).with_grants(Box::new(StoreGrants(&store)));
    if let Some(session) = &session {
        gate = gate.in_session(session.name());
    }
    let (result, sessions) = {
        let (mut stage, mut recorder) = (recording.stage(), recording.recorder());
        match Run::start(&program, &sessions, &config) {
            Ok(mut run) => {
                let mut hosts = env.hosts();
                let ending = Engine::new(&mut hosts)
                    .with_stage(&mut gate)
                    .with_last_stage(&mut stage)
                    .with_observer(&mut recorder)
                    .with_observer(&mut trace)
                    .start_request(&mut run, &sources.file(plan).text);
                (ending.into_result(), run.sessions())
            }
            Err(e) => {
                recorder.event(&cordon_engine::Event::RequestStarted { plan: &sources.file(plan).text });
                recorder.event(&cordon_engine::Event::RunEnded { end: End::Failed { error: &e } });
                (Err(e), sessions)
            }
        }
    };
    let recorded = recording.finish();
    // What the run did to its sessions is kept whatever became of the record (a taint is never
    // forgotten).
    if let Some(session) = session {
        session.save(&store, &sessions)?;
        session.release(&store)?;
    }
    let request = recorded.as_ref().ok().copied();
    let ran = |value| Ran { trace: &trace.0, value, request, gate: Some(&gate) };
    let mut report = match &result {
        Ok(value) => render_report(args, &sources, Status::Done, &[], ran(Some(value))),
        Err(e) => render_report(args, &sources, Status::Failed, &[e.to_diagnostic()], ran(None)),
    };
    report.error = recorded.err().map(Error::Record);
    Ok(report)
}

/// What a run did, for its report: the trace, the plan's value, the request it was recorded as,
/// and the gate's decisions.
struct Ran<'a> {
    trace: &'a [Event],
    value: Option<&'a cordon_runtime::Val>,
    request: Option<RequestId>,
    gate: Option<&'a Gate<'a>>,
}

impl Ran<'_> {
    /// A plan that never ran.
    fn nothing() -> Ran<'static> {
        Ran { trace: &[], value: None, request: None, gate: None }
    }
}

fn render_report(args: &Args, sources: &SourceMap, status: Status, diagnostics: &[Diagnostic], ran: Ran<'_>) -> Report {
    let Ran { trace, value, request, gate } = ran;
    let subject = args.plan.display().to_string();
    let accepted = matches!(status, Status::Done);
    let stdout = match args.format {
        Format::Json => {
            let json = serde_json::json!({
                "plan": subject,
                "status": match status { Status::Rejected => "rejected", Status::Failed => "failed", Status::Done => "done" },
                "diagnostics": render::json(diagnostics, sources),
                "trace": trace.iter().map(Event::to_json).collect::<Vec<_>>(),
                "result": value.map(|v| v.value.to_json()),
                "label": value.map(|v| cordon_runtime::deep_label(v).to_string()),
                "request": request,
                "approvals": gate.map(|g| g.records()),
            });
            format!("{}\n", serde_json::to_string_pretty(&json).unwrap_or_else(|_| json.to_string()))
        }
        Format::Human | Format::Concise => {
            let mut out = String::new();
            let mut calls = 0;
            for event in trace {
                if matches!(event.decision, Decision::Allowed | Decision::Blocked { .. }) {
                    calls += 1;
                }
                out.push_str(&trace_line(calls, event, sources));
            }
            if !trace.is_empty() {
                out.push('\n');
            }
            for d in diagnostics {
                if args.format == Format::Concise {
                    out.push_str(&render::concise(d, sources));
                } else {
                    out.push_str(&render::human(d, sources));
                    out.push('\n');
                }
            }
            if let Some(v) = value {
                out.push_str(&format!("result: {}\n", v.value));
                let label = cordon_runtime::deep_label(v);
                if !label.is_bottom() {
                    out.push_str(&format!("label: {}\n", label.dc().describe()));
                }
            }
            let summary = match status {
                Status::Rejected => format!("{}; nothing ran", render::summary(diagnostics)),
                Status::Failed => format!(
                    "stopped at run time ({}) after {} tool call{}",
                    diagnostics.first().map_or("error", |d| d.code.as_str()),
                    trace.iter().filter(|e| e.decision == Decision::Allowed).count(),
                    if trace.iter().filter(|e| e.decision == Decision::Allowed).count() == 1 { "" } else { "s" }
                ),
                Status::Done => "ran to the end".to_string(),
            };
            if let Some(stats) = gate.map(Gate::stats).filter(|s| s.cards + s.denied + s.grants_used > 0) {
                out.push_str(&format!(
                    "approvals: {} card(s), {} approved, {} refused, {} denied by policy, {} grant(s) used\n",
                    stats.cards, stats.approved, stats.refused, stats.denied, stats.grants_used
                ));
            }
            if let Some(id) = request {
                out.push_str(&format!("recorded as request {id} (`cordon audit show --request {id}`)\n"));
            }
            out.push_str(&format!("{subject}: {summary}\n"));
            out
        }
    };
    Report { stdout, accepted, error: None }
}

/// The trace a user reads, as the engine's events tell it: each call allowed (performed) or
/// blocked, and what it returned or how it failed, as the boundary recorded them.
#[derive(Default)]
pub(crate) struct Trace(pub Vec<Event>);

impl Observer for Trace {
    fn event(&mut self, event: &cordon_engine::Event<'_>) {
        use cordon_engine::Event as E;
        let row = |tool: &str, detail: &str, decision, span| Event {
            tool: tool.to_string(),
            detail: detail.to_string(),
            decision,
            span,
        };
        let record = match *event {
            E::EffectPerformed { effect, .. } => Event::allowed(effect),
            E::EffectRefused { tool, args_text, at, code, reason, .. } => {
                row(tool, args_text, Decision::Blocked { code, reason: reason.to_string() }, at)
            }
            E::EffectReturned { tool, value_text, label, words, at } => {
                row(tool, value_text, Decision::Returned { label: label.to_string(), words: words.to_string() }, at)
            }
            E::EffectFailed { tool, reason, at } => row(tool, "", Decision::Failed { reason: reason.to_string() }, at),
            _ => return,
        };
        self.0.push(record);
    }
}

/// One line of the trace: `  1. allowed  GitHub.repo(owner: "alice", ..)  at plan.cord:3:7`.
pub(crate) fn trace_line(n: usize, event: &Event, sources: &SourceMap) -> String {
    let at = {
        let file = sources.file(event.span.file);
        let (line, col) = file.line_col(event.span.start);
        format!("{}:{line}:{col}", file.name)
    };
    match &event.decision {
        Decision::Allowed => format!("{n:>3}. allowed  {}({})  at {at}\n", event.tool, event.detail),
        Decision::Blocked { code, .. } => {
            format!("{n:>3}. BLOCKED  {}({})  [{code}] at {at}\n", event.tool, event.detail)
        }
        Decision::Returned { label, .. } if label.is_empty() => format!("     returned {}\n", event.detail),
        Decision::Returned { words, .. } => format!("     returned {}  ({words})\n", event.detail),
        Decision::Failed { reason } => format!("     FAILED   {reason}\n"),
    }
}
