//! `cordon ask "request"`: one request through a root hole (`cordon::Workspace::ask`). The plan
//! is `agent[<entry's return type>]("<request>", <entry's linear parameters>)`; it is checked
//! against the policy (with what the session file says about the session), then run against the
//! environment, the model filling its holes with checked code. The request is recorded in the
//! store like a `cordon run`. Prints the trace and the result like `cordon run`, and what the
//! holes cost.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use cordon::api::approval::Approver;
use cordon::api::diagnostics::render;
use cordon::api::events::{Event, Observers};
use cordon::api::models::{FillConfig, HttpConfig, ProviderError, Transcript};
use cordon::api::store::{StoreError, private};
use cordon::api::text::escape;
use cordon::{Ended, Request, SessionAt, Settings, Workspace};

use crate::approve::ApproveArgs;
use crate::check::Format;
use crate::clearance::Clearance;
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
    pub setup: Setup,

    /// How to print: `human` (the trace as it happens, then the answer), or `json` (the
    /// report `cordon run --format json` prints: the calls, the cards and their flags, the
    /// holes, the answer and its label); `concise` is `human`
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// What to ask
    pub request: String,
}

pub fn run(args: &Args, read: &dyn Fn(&Path) -> io::Result<String>, out: &mut dyn Write) -> Result<Report, Error> {
    let mut conversation = Conversation::open(&args.setup, read)?;
    let report = conversation.ask(&args.request, out, args.format == Format::Json)?;
    match conversation.finish() {
        Err(error) if report.error.is_none() => Ok(Report { error: Some(error), ..report }),
        _ => Ok(report),
    }
}

/// What `cordon ask` and `cordon chat` share: the environment, the model, the policies, and
/// the sessions that carry from one request to the next.
#[derive(Debug, clap::Args)]
pub struct Setup {
    #[command(flatten)]
    pub tools: ToolArgs,

    /// The model: openai:MODEL[@BASE_URL], anthropic:MODEL[@BASE_URL], scripted:PATH or
    /// replay:PATH
    #[arg(long, value_name = "SPEC")]
    pub model: String,

    /// Allow a plain `http://` base URL to another machine (the key and the prompts would
    /// cross the network unencrypted); loopback needs no flag
    #[arg(long)]
    pub allow_insecure_http: bool,

    #[command(flatten)]
    pub timeout: ModelTimeout,

    #[command(flatten)]
    pub limits: LimitArgs,

    /// Keep the sessions in this file between requests (read if it exists, written after;
    /// kept in the store too, where one run at a time may hold it)
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,

    /// Write a JSONL transcript of the requests' events (prompts, replies, fills, effects) here
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,

    /// Replies asked for one hole before it is given up
    #[arg(long, value_name = "N", default_value_t = FillConfig::default().max_attempts)]
    pub max_attempts: u32,

    /// How deep holes may nest in fills
    #[arg(long, value_name = "N", default_value_t = FillConfig::default().max_depth)]
    pub max_depth: usize,

    /// What the model may be shown: `public` data only, or also what is secret to the `user`
    /// (for a model the user trusts with their data, e.g. one running on their machine)
    #[arg(long, value_enum, default_value_t = Clearance::Public)]
    pub clearance: Clearance,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub approve: ApproveArgs,
}

/// `--model-timeout`: how long one request to a model server may take (`ask`, `chat`, `run`).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ModelTimeout {
    /// Seconds one request to the model server may take, from sending it to the last byte of
    /// the reply (a model answers only when it is done generating)
    #[arg(
        long = "model-timeout",
        value_name = "SECONDS",
        default_value_t = HttpConfig::default().read_timeout.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub seconds: u64,
}

impl ModelTimeout {
    /// The HTTP settings of the model's provider: the defaults, with this timeout.
    pub fn http(self) -> HttpConfig {
        HttpConfig { read_timeout: std::time::Duration::from_secs(self.seconds), ..HttpConfig::default() }
    }
}

/// An open workspace, model and transcript: requests run one after another against the same
/// state (the environment's, and the sessions').
pub struct Conversation {
    workspace: Workspace,
    provider: Box<dyn cordon::api::models::Provider + Send>,
    approver: Box<dyn Approver>,
    transcript: Option<(PathBuf, Transcript<File>)>,
}

impl Conversation {
    pub fn open(setup: &Setup, read: &dyn Fn(&Path) -> io::Result<String>) -> Result<Conversation, Error> {
        let http = HttpConfig { allow_insecure_http: setup.allow_insecure_http, ..setup.timeout.http() };
        let provider = open_model(&setup.model, http)?;
        let kept = kept(&setup.store, &setup.approve, setup.session.as_deref());
        let tools = setup.tools.open(read, kept, &setup.store.location()?)?;
        // Before anything runs: a store that cannot be opened stops here.
        let storage = setup.store.open()?;
        let mut settings = Settings {
            max_attempts: setup.max_attempts,
            max_depth: setup.max_depth,
            clearance: setup.clearance.into(),
            limits: setup.limits.limits(),
            ..Settings::default()
        };
        setup.approve.apply(&mut settings)?;
        let mut workspace = Workspace::new(tools, storage, settings);
        if let Some(path) = &setup.session {
            workspace = workspace.with_session(SessionAt::File(path.clone()));
        }
        let transcript = match &setup.transcript {
            Some(path) => {
                // What the model was shown: the user's alone, and never written through a link.
                let file = private::create_private(path).map_err(|e| match e {
                    StoreError::Io { path, error } => Error::Cordon(cordon::Error::Write { path, error }),
                    refused => Error::Usage(refused.to_string()),
                })?;
                Some((path.clone(), Transcript::new(file)))
            }
            None => None,
        };
        let approver = setup.approve.approver()?;
        Ok(Conversation { workspace, provider, approver, transcript })
    }

    /// Runs one request through a root hole, the workspace keeping its sessions and the
    /// conversation so far for the next request. The trace is written to `out` as the run goes;
    /// what follows it comes back in the report.
    pub fn ask(&mut self, request: &str, out: &mut dyn Write, json: bool) -> Result<Report, Error> {
        let mut progress = |event: &Event<'_>| match *event {
            Event::HolePrompted { model, hole, attempt, max_attempts, .. } => {
                eprintln!("asking {} for hole {hole} (attempt {attempt}/{max_attempts})", escape(model));
            }
            Event::FillRefused { hole, attempt, .. } => {
                eprintln!(
                    "hole {hole}: the labels refused a call of fill {attempt} before it did anything; back at the hole"
                );
            }
            _ => {}
        };
        let mut prepared = self.workspace.prepare(Request::Ask(request), &mut *self.approver)?;
        if !json {
            // The trace is printed as the run goes: the report need not keep it.
            prepared = prepared.without_trace();
        }
        // In JSON the report holds the calls: nothing is written as they happen.
        let mut sink = io::sink();
        let out: &mut dyn Write = if json { &mut sink } else { out };
        let mut trace = Trace::new(out, prepared.sources().cloned().unwrap_or_default());
        let mut observers = Observers::new().with(&mut progress).with(&mut trace);
        if let Some((_, t)) = self.transcript.as_mut() {
            observers = observers.with(t);
        }
        let mut asked = prepared.with_model(&mut *self.provider).run(&mut observers)?;
        drop(observers);
        trace.finish(&asked.approvals).map_err(|e| Error::Usage(format!("cannot write the trace: {e}")))?;
        if let Some((path, error)) = self.transcript.as_ref().and_then(|(path, t)| Some((path, t.error()?))) {
            return Err(Error::Usage(format!("cannot write the transcript `{}`: {error}", path.display())));
        }
        let record_error = asked.record_error.take();
        let mut report = report(&asked);
        if json {
            let value = serde_json::to_value(&asked).unwrap_or_default();
            let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
            report.stdout = format!("{}\n", visible_json(&text));
        }
        if let Some(error) = record_error {
            report.error = Some(Error::Cordon(cordon::Error::Record(error)));
        }
        Ok(report)
    }

    /// The model is asked no more: a replayed transcript with replies left over says so here.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.provider.finish().map_err(|e| Error::Usage(e.to_string()))
    }
}

/// What follows the trace: the holes and their cost, and the result or error.
fn report(outcome: &cordon::Report) -> Report {
    let sources = &outcome.sources;
    let mut out = String::new();
    for hole in &outcome.holes {
        if !hole.filled && hole.attempts == 0 {
            out.push_str(&format!("hole {}: not asked (the model is not cleared for it)\n", hole.hole));
            continue;
        }
        let how = if hole.filled { "filled" } else { "not filled" };
        out.push_str(&format!(
            "hole {}: {how} after {} attempt{} ({} prompt + {} reply tokens)\n",
            hole.hole,
            hole.attempts,
            if hole.attempts == 1 { "" } else { "s" },
            hole.usage.prompt_tokens,
            hole.usage.completion_tokens
        ));
    }
    let accepted = outcome.value().is_some();
    let mut error = None;
    match &outcome.ended {
        // Nothing ran: no trace, no holes, no tokens.
        Ended::Rejected => {
            out.extend(outcome.diagnostics.iter().map(|d| render::human(d, sources) + "\n"));
            out.push_str(&format!("request: {}; nothing ran\n", render::summary(&outcome.diagnostics)));
            return Report { stdout: out, accepted: false, error: None };
        }
        Ended::Done(v) => {
            out.push_str(&answer(v));
            let label = cordon::api::values::deep_label(v);
            if !label.is_bottom() {
                out.push_str(&format!("label: {}\n", label.dc().describe()));
            }
            out.push_str("request: ran to the end\n");
        }
        // No fill: the model could not be reached, or none of its fills checked. An error, for
        // stderr, not an answer.
        Ended::Failed(e) if e.kind == cordon::api::values::ErrorKind::Hole => {
            let code = match outcome.model_error() {
                None => 1,
                Some(ProviderError::Mismatch(_) | ProviderError::Config(_) | ProviderError::Exhausted { .. }) => 2,
                Some(_) => 3,
            };
            let diagnostic = render::human(&e.to_diagnostic(), sources);
            out.push_str(&format!("request: stopped ({})\n", e.kind.code().as_str()));
            error = Some(Error::Unanswered { diagnostic, code });
        }
        Ended::Failed(e) => {
            out.push_str(&render::human(&e.to_diagnostic(), sources));
            out.push('\n');
            out.push_str(&format!("request: stopped ({})\n", e.kind.code().as_str()));
        }
        Ended::Waiting(_) => out.push_str("request: waits for an answer to a card\n"),
    }
    out.push_str(&format!(
        "tokens: {} prompt + {} reply\n",
        outcome.usage.prompt_tokens, outcome.usage.completion_tokens
    ));
    if let Some(id) = outcome.request {
        out.push_str(&format!("recorded as request {id} (`cordon audit show --request {id}`)\n"));
    }
    Report { stdout: out, accepted, error }
}

/// The plan's value for a person: its text as text (not a quoted, escaped string), and what
/// else it hands back (a session kept for the next request) on lines of their own.
fn answer(v: &cordon::api::values::Val) -> String {
    use cordon::api::values::Value;
    let parts: Vec<&cordon::api::values::Val> = match &v.value {
        Value::Tuple(items) => items.iter().collect(),
        _ => vec![v],
    };
    let mut text = String::new();
    let mut kept = String::new();
    for part in parts {
        match &part.value {
            Value::Str(s) => text.push_str(&format!("{}\n", s.trim_end_matches('\n'))),
            Value::Handle(_) => kept.push_str(&format!("kept for the next request: {}\n", part.value)),
            other => text.push_str(&format!("{other}\n")),
        }
    }
    let mut out = match text.lines().count() {
        0 => String::new(),
        1 => format!("answer: {text}"),
        _ => format!("answer:\n{}", text.lines().map(|l| format!("  {l}\n")).collect::<String>()),
    };
    out.push_str(&kept);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--model-timeout` alone, as `ask`, `chat` and `run` flatten it.
    #[derive(Debug, clap::Parser)]
    struct Timeout {
        #[command(flatten)]
        timeout: ModelTimeout,
    }

    fn parse(args: &[&str]) -> Result<HttpConfig, clap::Error> {
        let parsed = <Timeout as clap::Parser>::try_parse_from(std::iter::once("cordon").chain(args.iter().copied()))?;
        Ok(parsed.timeout.http())
    }

    #[test]
    fn the_model_timeout_sets_the_read_timeout_and_nothing_else() {
        assert_eq!(parse(&[]).ok(), Some(HttpConfig::default()));
        let http = parse(&["--model-timeout", "7"]).ok();
        let expected = HttpConfig { read_timeout: std::time::Duration::from_secs(7), ..HttpConfig::default() };
        assert_eq!(http, Some(expected));
        assert!(parse(&["--model-timeout", "0"]).is_err(), "no request can be answered in no time");
        assert!(parse(&["--model-timeout", "soon"]).is_err());
    }

    #[test]
    fn an_answer_is_printed_as_text_and_the_session_apart() {
        use cordon::api::values::Handle;
        use cordon::api::values::{Val, Value};
        use std::sync::Arc;
        let session = Val::plain(Value::Handle(Arc::new(Handle { ty: "Session".into(), id: 7 })));
        let two_lines = Val::plain(Value::str("Two issues:\n- a \"quoted\" one\n- another"));
        let value = Val::plain(Value::Tuple(Arc::new(vec![two_lines, session.clone()])));
        assert_eq!(
            answer(&value),
            "answer:\n  Two issues:\n  - a \"quoted\" one\n  - another\nkept for the next request: <Session #7>\n"
        );
        let one = Val::plain(Value::Tuple(Arc::new(vec![Val::plain(Value::str("3 open issues.")), session])));
        assert_eq!(answer(&one), "answer: 3 open issues.\nkept for the next request: <Session #7>\n");
        assert_eq!(answer(&Val::plain(Value::Int(42))), "answer: 42\n");
    }
}
