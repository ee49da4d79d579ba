//! `cordon run`: check a plan, and only if it is accepted, run it against a simulated
//! environment, printing the result and the trace of every tool call and decision. The run is
//! recorded in the store: the request, its transcript, and the audit log's rows, each effect's
//! committed before the environment performs it (the audit stage is the pipeline's last). With
//! `--session FILE` the linear values the plan hands back (and their measures) are kept for the
//! next run, so a session tainted by one request stays tainted in the next; the store's session
//! of that file is locked while the run holds it.

use std::io;
use std::path::{Path, PathBuf};

use cordon::{Approvals, Ended, SessionAt, Settings, Source, Workspace};
use cordon_engine::Observer;
use cordon_runtime::{Decision, Event, Limits};
use cordon_syntax::{Diagnostic, SourceMap, render};

use crate::approve::ApproveArgs;
use crate::check::Format;
use crate::store::StoreArgs;
use crate::tools::ToolArgs;
use crate::{Error, Report};

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

    /// Print what the plan may do before the run's trace (as `cordon check --effects` does;
    /// `--format json` always has it, under `effects`)
    #[arg(long)]
    pub effects: bool,
}

pub fn run(args: &Args, read: &dyn Fn(&Path) -> io::Result<String>) -> Result<Report, Error> {
    let plan = read(&args.plan).map_err(|error| cordon::Error::Read { path: args.plan.clone(), error })?;
    let plan = Source::new(args.plan.display().to_string(), plan);
    let tools = args.tools.open(read)?;
    // Before anything runs: a store that cannot be opened stops the run here (and a session
    // another run holds, when the workspace takes it).
    let storage = args.store.open()?;
    let mut settings = Settings {
        limits: Limits { fuel: args.fuel, max_tool_calls: args.max_tool_calls, ..Limits::default() },
        ..Settings::default()
    };
    args.approve.apply(&mut settings)?;
    let mut workspace = Workspace::new(tools, storage, settings);
    if let Some(path) = &args.session {
        workspace = workspace.with_session(SessionAt::File(path.clone()));
    }
    let mut approver = args.approve.approver()?;
    let mut trace = Trace::default();
    let mut report = workspace.run(&plan, &mut *approver, &mut trace)?;
    let error = report.record_error.take().map(|e| Error::Cordon(cordon::Error::Record(e)));
    Ok(Report { error, ..render_report(args, &report, &trace) })
}

fn render_report(args: &Args, report: &cordon::Report, trace: &Trace) -> Report {
    let sources = &report.sources;
    let accepted = report.value().is_some();
    let stdout = match args.format {
        Format::Json => {
            let json = serde_json::to_value(report).unwrap_or_default();
            format!("{}\n", serde_json::to_string_pretty(&json).unwrap_or_else(|_| json.to_string()))
        }
        Format::Human | Format::Concise => {
            let mut out = match report.effects.as_ref().filter(|_| args.effects) {
                Some(summary) => format!("{}\n", summary.render()),
                None => String::new(),
            };
            let diagnostic = |d: &Diagnostic| match args.format {
                Format::Concise => render::concise(d, sources),
                _ => render::human(d, sources) + "\n",
            };
            out.extend(report.warnings.iter().map(diagnostic));
            if !matches!(report.ended, Ended::Rejected) {
                out.push_str(&trace.render(&report.approvals, sources));
            }
            out.extend(report.diagnostics.iter().map(diagnostic));
            if let Some(v) = report.value() {
                out.push_str(&format!("result: {}\n", v.value));
                let label = cordon_runtime::deep_label(v);
                if !label.is_bottom() {
                    out.push_str(&format!("label: {}\n", label.dc().describe()));
                }
            }
            let performed = report.performed();
            let summary = match &report.ended {
                Ended::Rejected => format!("{}; nothing ran", render::summary(&report.diagnostics)),
                Ended::Failed(e) => format!(
                    "stopped at run time ({}) after {} tool call{}",
                    e.kind.code().as_str(),
                    performed,
                    if performed == 1 { "" } else { "s" }
                ),
                Ended::Done(_) => "ran to the end".to_string(),
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

/// The trace a user reads, as the engine's events tell it: each call allowed (performed) or
/// blocked, what it returned or how it failed, as the boundary recorded them, and after each
/// call what the approval gate decided about it.
#[derive(Default)]
pub(crate) struct Trace {
    rows: Vec<Row>,
    /// The gate's decisions so far: the next one is the gate's record of this number.
    gate_decisions: usize,
    /// The gate's decision about the call in flight, shown after the call's own row.
    pending: Option<usize>,
}

enum Row {
    Call(Event),
    /// The gate's record of this number.
    Gate(usize),
}

impl Trace {
    /// The trace for people, a line per row, with the gate's decisions worth a line (a card,
    /// a grant, a refusal) from `gate`'s records.
    pub(crate) fn render(&self, approvals: &Approvals, sources: &SourceMap) -> String {
        let mut out = String::new();
        if let Some(record) = &approvals.plan {
            let card = record.card.as_ref();
            let (id, covered) = card.map_or((0, 0), |c| (c.id, c.fields.len()));
            let who = record.approver.as_deref().unwrap_or("no one");
            let said = if record.outcome == "approved" { "approved" } else { "refused" };
            out.push_str(&format!(
                "     gate     card {id}, the plan ({covered} call(s) without their own card), {said} by {who}\n"
            ));
        }
        let mut calls = 0;
        let pending = self.pending.map(Row::Gate);
        for row in self.rows.iter().chain(pending.as_ref()) {
            match row {
                Row::Call(event) => {
                    if matches!(event.decision, Decision::Allowed | Decision::Blocked { .. }) {
                        calls += 1;
                    }
                    out.push_str(&trace_line(calls, event, sources));
                }
                Row::Gate(n) => {
                    if let Some(record) = approvals.records.get(*n) {
                        out.push_str(&gate_lines(record));
                    }
                }
            }
        }
        if !self.rows.is_empty() {
            out.push('\n');
        }
        if let Some(stats) = Some(&approvals.stats).filter(|s| s.cards + s.denied + s.grants_used > 0) {
            out.push_str(&format!(
                "approvals: {} card(s), {} approved, {} refused, {} denied by policy, {} grant(s) used{}\n",
                stats.cards,
                stats.approved,
                stats.refused,
                stats.denied,
                stats.grants_used,
                if stats.plan_covered > 0 {
                    format!(", {} call(s) under the plan's approval", stats.plan_covered)
                } else {
                    String::new()
                }
            ));
        }
        out
    }
}

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
            E::StageDecided { stage: "gate", .. } => {
                self.pending = Some(self.gate_decisions);
                self.gate_decisions += 1;
                return;
            }
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
        let call = matches!(record.decision, Decision::Allowed | Decision::Blocked { .. });
        self.rows.push(Row::Call(record));
        if call && let Some(n) = self.pending.take() {
            self.rows.push(Row::Gate(n));
        }
    }
}

/// What the gate decided about a call, as the trace shows it: nothing for a call with no tier
/// (or one the labels refused and no one may approve: its row says so), a line for a card, a
/// grant or a refusal, and a line for each intent flag.
fn gate_lines(record: &cordon_gate::Record) -> String {
    let card = record.card.as_ref().map_or(0, |c| c.id);
    let who = record.approver.as_deref().unwrap_or("no one");
    let line = match record.outcome {
        "granted" => match record.grant_used {
            Some(id) => format!("performed under grant {id} (`cordon approvals list`)"),
            None => "performed under a grant".to_string(),
        },
        "approved" if record.grants_made.is_empty() => format!("card {card} approved by {who}"),
        "approved" => {
            let ids: Vec<String> = record.grants_made.iter().map(ToString::to_string).collect();
            format!("card {card} approved by {who}, who answered always: grant {} made", ids.join(", "))
        }
        "refused" if who == "none" => format!("card {card} refused: no one to ask (`--approve none`)"),
        "refused" => format!("card {card} refused by {who}"),
        "held" => format!("card {card} waits for an answer"),
        "plan" => "performed under the plan's approval".to_string(),
        "denied" | "error" => record.reason.clone().unwrap_or_default(),
        _ => return String::new(),
    };
    let mut out = format!("     gate     {line}\n");
    for flag in record.card.iter().flat_map(|c| &c.flags) {
        out.push_str(&format!("     flagged  {flag}\n"));
    }
    out
}

/// One line of the trace: `  1. allowed  GitHub.repo(owner: "alice", ..)  at plan.cord:3:7`.
fn trace_line(n: usize, event: &Event, sources: &SourceMap) -> String {
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
