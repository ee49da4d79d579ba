//! `cordon run`: check a plan, and only if it is accepted, run it against a simulated
//! environment, printing the result and the trace of every tool call and decision. The run is
//! recorded in the store: the request, its transcript, and the audit log's rows, each effect's
//! committed before the environment performs it (the audit stage is the pipeline's last). With
//! `--session FILE` the linear values the plan hands back (and their measures) are kept for the
//! next run, so a session tainted by one request stays tainted in the next; the store's session
//! of that file is locked while the run holds it.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use cordon::api::diagnostics::{Diagnostic, SourceMap, render};
use cordon::api::events::Observers;
use cordon::{Ended, Request, SessionAt, Settings, Source, Workspace};

use crate::approve::ApproveArgs;
use crate::ask::ModelTimeout;
use crate::check::Format;
use crate::limits::LimitArgs;
use crate::outcome::{Error, Report};
use crate::shown::visible_json;
use crate::store::StoreArgs;
use crate::tools::{ToolArgs, kept};
use crate::trace::Trace;
use crate::waiting::open_model;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub tools: ToolArgs,

    /// Keep the plan's sessions in this file between runs (read if it exists, written after;
    /// kept in the store too, where one run at a time may hold it)
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,

    /// How to print: `human` or `json` (`concise` prints diagnostics for models)
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    #[command(flatten)]
    pub limits: LimitArgs,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub approve: ApproveArgs,

    /// The model that fills the plan's typed holes (`agent[T](..)`), as for `cordon ask`:
    /// openai:MODEL[@BASE_URL], anthropic:MODEL[@BASE_URL], scripted:PATH or replay:PATH.
    /// Without one, a hole ends the run (`hole-unfilled`)
    #[arg(long, value_name = "SPEC")]
    pub model: Option<String>,

    #[command(flatten)]
    pub timeout: ModelTimeout,

    /// The plan to run
    pub plan: PathBuf,

    /// Print what the plan may do before the run's trace (as `cordon check --effects` does;
    /// `--format json` always has it, under `effects`)
    #[arg(long)]
    pub effects: bool,
}

/// Checks and runs the plan; the trace is written to `out` as the run goes, and what follows it
/// (the run's diagnostic, the result, the summary line) comes back in the report.
pub fn run(args: &Args, read: &dyn Fn(&Path) -> io::Result<String>, out: &mut dyn Write) -> Result<Report, Error> {
    let plan = read(&args.plan).map_err(|error| cordon::Error::Read { path: args.plan.clone(), error })?;
    let plan = Source::new(args.plan.display().to_string(), plan);
    let kept = kept(&args.store, &args.approve, args.session.as_deref());
    let tools = args.tools.open(read, kept, &args.store.location()?)?;
    // Before anything runs: a store that cannot be opened stops the run here (and a session
    // another run holds, when the workspace takes it).
    let storage = args.store.open()?;
    let mut settings = Settings { limits: args.limits.limits(), ..Settings::default() };
    args.approve.apply(&mut settings)?;
    let mut workspace = Workspace::new(tools, storage, settings);
    if let Some(path) = &args.session {
        workspace = workspace.with_session(SessionAt::File(path.clone()));
    }
    let mut approver = args.approve.approver()?;
    let mut model = match &args.model {
        Some(spec) => Some(open_model(spec, args.timeout.http())?),
        None => None,
    };
    let mut prepared = workspace.prepare(Request::Plan(&plan), &mut *approver)?;
    if args.format != Format::Json {
        // The trace is printed as the run goes: the report need not keep it.
        prepared = prepared.without_trace();
    }
    if let Some(model) = model.as_deref_mut() {
        prepared = prepared.with_model(model);
    }
    let mut report = match (args.format, prepared.accepted()) {
        (Format::Human | Format::Concise, true) => {
            let sources = prepared.sources().cloned().unwrap_or_default();
            let mut before = effects(args, prepared.effects());
            before.extend(prepared.warnings().iter().map(|d| diagnostic(args.format, d, &sources)));
            out.write_all(before.as_bytes()).map_err(write_error)?;
            let mut trace = Trace::new(out, sources);
            let report = prepared.run(&mut trace)?;
            trace.finish(&report.approvals).map_err(write_error)?;
            report
        }
        _ => prepared.run(&mut Observers::new())?,
    };
    let error = report.record_error.take().map(|e| Error::Cordon(cordon::Error::Record(e)));
    let rendered = render_report(args, &report);
    // The report is plain data the process ends with: freeing the trace a long run's JSON report
    // lists, value by value, took 4% of a 10,000-call run, so the process's end frees it at once.
    std::mem::forget(report);
    Ok(Report { error, ..rendered })
}

fn write_error(error: io::Error) -> Error {
    Error::Usage(format!("cannot write the trace: {error}"))
}

/// The effect summary, when `--effects` asks for it.
fn effects(args: &Args, summary: Option<&cordon::api::Summary>) -> String {
    match summary.filter(|_| args.effects) {
        Some(summary) => format!("{}\n", summary.render()),
        None => String::new(),
    }
}

/// A diagnostic for people (with a blank line after it) or for models.
fn diagnostic(format: Format, d: &Diagnostic, sources: &SourceMap) -> String {
    match format {
        Format::Concise => render::concise(d, sources),
        _ => render::human(d, sources) + "\n",
    }
}

/// What the report says after the trace (or, for a plan that did not run, all of it); the
/// whole report, in JSON.
fn render_report(args: &Args, report: &cordon::Report) -> Report {
    let sources = &report.sources;
    let accepted = report.value().is_some();
    let stdout = match args.format {
        Format::Json => {
            let json = serde_json::to_value(report).unwrap_or_default();
            format!("{}\n", visible_json(&serde_json::to_string_pretty(&json).unwrap_or_else(|_| json.to_string())))
        }
        Format::Human | Format::Concise => {
            let mut out = match report.ended {
                // Nothing was written before: the effects and the check's findings are here.
                Ended::Rejected => effects(args, report.effects.as_ref()),
                _ => String::new(),
            };
            out.extend(report.diagnostics.iter().map(|d| diagnostic(args.format, d, sources)));
            if let Some(v) = report.value() {
                out.push_str(&format!("result: {}\n", v.value));
                let label = cordon::api::values::deep_label(v);
                if !label.is_bottom() {
                    out.push_str(&format!("label: {}\n", label.dc().describe()));
                }
            }
            let performed = report.performed;
            let summary = match &report.ended {
                Ended::Rejected => format!("{}; nothing ran", render::summary(&report.diagnostics)),
                Ended::Failed(e) => format!(
                    "stopped at run time ({}) after {} tool call{}",
                    e.kind.code().as_str(),
                    performed,
                    if performed == 1 { "" } else { "s" }
                ),
                Ended::Done(_) => "ran to the end".to_string(),
                Ended::Waiting(_) => "waits for an answer to a card".to_string(),
            };
            if let Some(id) = report.request {
                out.push_str(&format!("recorded as request {id} (`cordon audit show --request {id}`)\n"));
            }
            out.push_str(&format!("{}: {summary}\n", report.plan));
            out
        }
    };
    Report { stdout, accepted, error: None }
}
