//! The trace a person reads, printed as the run goes (`cordon run`, `ask`, `chat`): each call
//! allowed (performed) or blocked, what it returned or how it failed, and after each call what
//! the approval gate decided about it; at the end, the gate's counts. Every line is made from
//! the engine's events as they come, so a card the gate shows follows the calls made before it.

use std::collections::HashMap;
use std::io::{self, Write};

use cordon::Approvals;
use cordon::api::approval::Record;
use cordon::api::diagnostics::Code;
use cordon::api::diagnostics::{FileId, SourceFile, SourceMap, Span};
use cordon::api::events::{Event, Note, Observer};
use cordon::api::text::{escape, guard, guard_line};
use cordon::api::values::{Label, args_text};

/// Writes the trace to `out` as events come.
pub(crate) struct Trace<'o> {
    out: &'o mut dyn Write,
    /// The request's files as checked, and the fills accepted since, for the calls' places.
    sources: SourceMap,
    fills: HashMap<FileId, SourceFile>,
    /// Calls so far: the next call's number is one more.
    calls: usize,
    /// What the gate decided about the call in flight, shown after the call's own row.
    pending: String,
    /// The first write that failed: the run goes on, and the command reports it at the end.
    error: Option<io::Error>,
}

impl<'o> Trace<'o> {
    /// A trace of a request checked from `sources`, written to `out`.
    pub(crate) fn new(out: &'o mut dyn Write, sources: SourceMap) -> Trace<'o> {
        Trace { out, sources, fills: HashMap::new(), calls: 0, pending: String::new(), error: None }
    }

    /// Ends the trace: the gate's decision still pending (a held call), a blank line after the
    /// calls, and the gate's counts where it had any work. The first write that failed, if one
    /// did.
    pub(crate) fn finish(mut self, approvals: &Approvals) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.write(&pending);
        if self.calls > 0 {
            self.write("\n");
        }
        let stats = &approvals.stats;
        if stats.cards + stats.denied + stats.grants_used > 0 {
            let plan = match stats.plan_covered {
                0 => String::new(),
                n => format!(", {n} call(s) under the plan's approval"),
            };
            self.write(&format!(
                "approvals: {} card(s), {} approved, {} refused, {} denied by policy, {} grant(s) used{plan}\n",
                stats.cards, stats.approved, stats.refused, stats.denied, stats.grants_used,
            ));
        }
        match self.error.take() {
            Some(error) => Err(error),
            None => self.out.flush(),
        }
    }

    fn write(&mut self, text: &str) {
        if self.error.is_none()
            && let Err(error) = self.out.write_all(text.as_bytes())
        {
            self.error = Some(error);
        }
    }

    /// A row for a call, followed by the gate's decision about it.
    fn call(&mut self, row: Row<'_>) {
        self.calls += 1;
        let line = self.line(row);
        self.write(&line);
        let pending = std::mem::take(&mut self.pending);
        self.write(&pending);
    }

    /// One line of the trace: `  1. allowed  GitHub.repo(owner: "alice", ..)  at plan.cord:3:7`.
    fn line(&self, row: Row<'_>) -> String {
        let n = self.calls;
        match row {
            Row::Allowed { tool, args, at } => {
                format!("{n:>3}. allowed  {}({})  at {}\n", escape(tool), guard(&args), self.at(at))
            }
            Row::Blocked { tool, args, code, at } => {
                format!("{n:>3}. BLOCKED  {}({})  [{code}] at {}\n", escape(tool), guard(&args), self.at(at))
            }
            Row::Returned { text, label } => match label.is_bottom() {
                true => format!("     returned {}\n", guard(text)),
                false => format!("     returned {}  ({})\n", guard(text), escape(&label.dc().describe())),
            },
            Row::Failed { reason } => format!("     FAILED   {}\n", guard_line(reason)),
        }
    }

    /// Where `span` is: `plan.cord:3:7`, or in a fill, `<fill 0 attempt 1>:1:5`.
    fn at(&self, span: Span) -> String {
        let Some(file) = self.fills.get(&span.file).or_else(|| self.sources.get(span.file)) else {
            return "an unknown place".to_string();
        };
        let (line, col) = file.line_col(span.start);
        format!("{}:{line}:{col}", escape(&file.name))
    }
}

/// A line of the trace, from the event it shows.
enum Row<'a> {
    Allowed { tool: &'a str, args: String, at: Span },
    Blocked { tool: &'a str, args: String, code: Code, at: Span },
    Returned { text: &'a str, label: &'a Label },
    Failed { reason: &'a str },
}

impl Observer for Trace<'_> {
    fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::StageNoted { stage: "gate", note } => {
                if let Some(record) = record_of(note) {
                    self.write(&plan_line(record));
                }
            }
            Event::StageDecided { stage: "gate", note, .. } => {
                self.pending = note.and_then(record_of).map(gate_lines).unwrap_or_default();
            }
            Event::FillAccepted { hole, attempt, code, file } => {
                self.fills.insert(file, SourceFile::new(format!("<fill {hole} attempt {attempt}>"), code));
            }
            Event::EffectPerformed { effect, .. } => {
                let tool = format!("{}.{}", effect.capability, effect.tool);
                self.call(Row::Allowed { tool: &tool, args: args_text(&effect.args), at: effect.span });
            }
            Event::EffectRefused { tool, args, at, code, .. } => {
                self.call(Row::Blocked { tool, args: args_text(args), code, at });
            }
            Event::EffectReturned { text, label, .. } => {
                let line = self.line(Row::Returned { text, label });
                self.write(&line);
            }
            Event::EffectFailed { reason, .. } => {
                let line = self.line(Row::Failed { reason });
                self.write(&line);
            }
            _ => {}
        }
    }
}

/// The gate's record, from what it keeps of a decision.
fn record_of(note: &dyn Note) -> Option<&Record> {
    (note as &dyn std::any::Any).downcast_ref::<Record>()
}

/// The gate's card for the whole plan, as its line in the trace.
fn plan_line(record: &Record) -> String {
    let (id, covered) = record.card.as_ref().map_or((0, 0), |c| (c.id, c.fields.len()));
    let who = escape(record.approver.as_deref().unwrap_or("no one"));
    let said = if record.outcome == "approved" { "approved" } else { "refused" };
    format!("     gate     card {id}, the plan ({covered} call(s) without their own card), {said} by {who}\n")
}

/// What the gate decided about a call, as the trace shows it: nothing for a call with no tier
/// (or one the labels refused and no one may approve: its row says so), a line for a card, a
/// grant or a refusal, and a line for each intent flag.
fn gate_lines(record: &Record) -> String {
    let card = record.card.as_ref().map_or(0, |c| c.id);
    let who = escape(record.approver.as_deref().unwrap_or("no one"));
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
        "denied" | "error" => guard_line(record.reason.as_deref().unwrap_or_default()),
        _ => return String::new(),
    };
    let mut out = format!("     gate     {line}\n");
    for flag in record.card.iter().flat_map(|c| &c.flags) {
        out.push_str(&format!("     flagged  {}\n", escape(&flag.says)));
    }
    out
}
