//! `cordon ask "request"`: one request through a root hole. The plan is
//! `agent[<entry's return type>]("<request>", <entry's linear parameters>)`; it is checked
//! against the policy (with what the session file says about the session), then run against a
//! simulated environment, the model filling its holes with checked code. The request is
//! recorded in the store like a `cordon run`: its transcript, and the audit log's rows, each
//! effect's committed before the environment performs it, each accepted fill's code.
//! Prints the trace and the result like `cordon run`, and what the holes cost.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use cordon_agent::{
    Earlier, FillConfig, Filler, HttpConfig, ProviderConfig, ProviderError, RequestOutcome, Transcript,
};
use cordon_audit::Recording;
use cordon_engine::{Event, Observers, Stages};
use cordon_label::DcLabel;
use cordon_runtime::{Config, Program, Sessions};
use cordon_store::{NewRequest, RequestId, SqliteStore};
use cordon_syntax::ast::{Item, ItemKind, Module, TypeExpr, TypeExprKind};
use cordon_syntax::{FileId, SourceMap, render};
use cordon_types::CheckOptions;

use crate::approve::ApproveArgs;
use crate::store::{SessionFile, StoreArgs, store_error};
use crate::tools::{ToolArgs, Tools};
use crate::{Error, Report};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub setup: Setup,

    /// What to ask
    pub request: String,
}

pub fn run(args: &Args, read: &dyn Fn(&Path) -> io::Result<String>) -> Result<Report, Error> {
    let mut conversation = Conversation::open(&args.setup, read)?;
    let report = conversation.ask(&args.request)?;
    conversation.save()?;
    let finished = conversation.finish();
    conversation.close()?;
    match finished {
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

/// A model's clearance: showing it a value is a flow of that value to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Clearance {
    Public,
    User,
}

impl Clearance {
    /// The most a prompt may carry: public (or the user's secrets) from anyone.
    fn label(self, user: &str) -> DcLabel {
        match self {
            Clearance::Public => DcLabel::untrusted(),
            Clearance::User => DcLabel::secret(user).join(&DcLabel::untrusted()),
        }
    }

    /// Every clearance by its `--clearance` name, least first: a hole a model may not be asked
    /// says which would do.
    fn named(user: &str) -> Vec<(String, DcLabel)> {
        Clearance::value_variants()
            .iter()
            .filter_map(|c| Some((c.to_possible_value()?.get_name().to_string(), c.label(user))))
            .collect()
    }
}

/// An open environment, model and session: requests run one after another against the same
/// state (the environment's, and the sessions').
pub struct Conversation<'a> {
    setup: &'a Setup,
    env: Tools,
    provider: Box<dyn cordon_agent::Provider + Send>,
    sessions: Sessions,
    transcript: Option<Transcript<File>>,
    requests: usize,
    /// The requests so far and their answers, for the next request's prompt (`cordon chat`).
    history: Vec<Earlier>,
    store: SqliteStore,
    /// The session file, and the store's session of it, held until the conversation closes.
    session: Option<SessionFile>,
}

impl<'a> Conversation<'a> {
    pub fn open(setup: &'a Setup, read: &dyn Fn(&Path) -> io::Result<String>) -> Result<Conversation<'a>, Error> {
        let http = HttpConfig { allow_insecure_http: setup.allow_insecure_http, ..HttpConfig::default() };
        let model = ProviderConfig::parse(&setup.model).map_err(|e| Error::Usage(e.to_string()))?.with_http(http);
        let provider = cordon_agent::open(&model).map_err(|e| Error::Usage(e.to_string()))?;
        let env = setup.tools.open(read)?;
        // Before anything runs: a store that cannot be opened, or a session another run holds,
        // stops here.
        let store = setup.store.open()?;
        let (session, sessions) = match &setup.session {
            Some(path) => {
                let (file, sessions) = SessionFile::take(&store, path, read)?;
                (Some(file), sessions)
            }
            None => (None, Sessions::default()),
        };
        let transcript = match &setup.transcript {
            Some(path) => {
                let file = File::create(path).map_err(|error| Error::Write { path: path.clone(), error })?;
                Some(Transcript::new(file))
            }
            None => None,
        };
        Ok(Conversation {
            setup,
            env,
            provider,
            sessions,
            transcript,
            requests: 0,
            history: Vec::new(),
            store,
            session,
        })
    }

    /// Runs one request through a root hole: checks it with what the sessions say, runs it,
    /// and keeps the sessions it hands back for the next request.
    pub fn ask(&mut self, request: &str) -> Result<Report, Error> {
        self.requests += 1;
        let mut sources = SourceMap::new();
        let policies: Vec<FileId> =
            self.env.policies.iter().map(|(name, text)| sources.add(name.clone(), text.clone())).collect();
        let plan_text = root_plan(&sources, &policies, request);
        let plan = sources.add(format!("<request {}>", self.requests), plan_text);
        let options =
            CheckOptions { entry_facts: self.sessions.entry_facts(self.env.principal()), ..CheckOptions::default() };
        let approver = self.setup.approve.approver()?;
        let asked = approver.speaks_for_user();
        let (outcome, _) = cordon_flow::check(&sources, &policies, Some(plan), &options, self.env.principal(), asked);
        let Some(checked) = outcome.program.as_ref() else {
            let mut stdout: String = outcome.diagnostics.iter().map(|d| render::human(d, &sources) + "\n").collect();
            stdout.push_str(&format!("request: {}; nothing ran\n", render::summary(&outcome.diagnostics)));
            return Ok(Report { stdout, accepted: false, error: None });
        };
        let recorded = NewRequest {
            text: request,
            principal: self.env.principal(),
            session: self.session.as_ref().map(SessionFile::name),
        };
        let program =
            Program::new(checked).map_err(|e| Error::Usage(format!("cannot compile the plan: {}", e.message)))?;
        let session = self.session.as_ref().map(SessionFile::name);
        let mut gate = self
            .setup
            .approve
            .gate(&program, self.env.principal(), approver, &self.store, session)?
            .with_request(request);
        let recording = Recording::begin(&self.store, &recorded).map_err(|error| store_error(&self.store, error))?;
        let (mut stage, mut recorder) = (recording.stage(), recording.recorder());
        let mut progress = |event: &Event<'_>| match *event {
            Event::HolePrompted { model, hole, attempt, max_attempts, .. } => {
                eprintln!("asking {model} for hole {hole} (attempt {attempt}/{max_attempts})");
            }
            Event::FillRefused { hole, attempt, .. } => {
                eprintln!(
                    "hole {hole}: the labels refused a call of fill {attempt} before it did anything; back at the hole"
                );
            }
            _ => {}
        };
        let mut trace = crate::run::Trace::default();
        let mut observers = Observers::new().with(&mut recorder).with(&mut progress).with(&mut trace);
        if let Some(t) = self.transcript.as_mut() {
            observers = observers.with(t);
        }
        let config = FillConfig {
            max_attempts: self.setup.max_attempts,
            max_depth: self.setup.max_depth,
            clearance: self.setup.clearance.label(self.env.principal()),
            clearance_names: Clearance::named(self.env.principal()),
            history: self.history.clone(),
            user: self.env.principal().to_string(),
            asked,
            ..FillConfig::default()
        };
        let mut filler = Filler::new(&mut self.provider).with_config(config);
        let run_config = Config { user: self.env.principal().to_string(), ..Config::default() };
        let result = cordon_agent::run_request(
            &mut sources,
            checked,
            &options,
            &self.sessions,
            &run_config,
            &mut self.env.hosts(),
            &mut filler,
            Stages::new().with(&mut gate).with_last(&mut stage),
            &mut observers,
        );
        drop(observers);
        let recorded = recording.finish();
        self.sessions = result.sessions.clone();
        if let Ok(v) = &result.result {
            self.history.push(Earlier { request: request.to_string(), answer: answer_part(v) });
        }
        let transcript_error = self.transcript.as_ref().and_then(Transcript::error);
        if let (Some(path), Some(error)) = (&self.setup.transcript, transcript_error) {
            return Err(Error::Usage(format!("cannot write the transcript `{}`: {error}", path.display())));
        }
        let mut report =
            report(&sources, &result, &trace.render(Some(&gate), &sources), recorded.as_ref().ok().copied());
        if let Err(error) = recorded {
            report.error = Some(Error::Record(error));
        }
        Ok(report)
    }

    /// Writes the sessions to the session file and the store's session, if there is one.
    pub fn save(&self) -> Result<(), Error> {
        match &self.session {
            Some(session) => session.save(&self.store, &self.sessions),
            None => Ok(()),
        }
    }

    /// The model is asked no more: a replayed transcript with replies left over says so here.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.provider.finish().map_err(|e| Error::Usage(e.to_string()))
    }

    /// Gives the session back for the next run.
    pub fn close(self) -> Result<(), Error> {
        match self.session {
            Some(session) => session.release(&self.store),
            None => Ok(()),
        }
    }
}

/// `agent[T]("request", s, ..)`: `T` the return type of the policies' `entry` (as written, or
/// composed from several: `cordon_syntax::entry`), the arguments its linear parameters. Without
/// an `entry`, `agent[String]("request")`.
fn root_plan(sources: &SourceMap, policies: &[FileId], request: &str) -> String {
    let task = quote(request);
    let modules: Vec<Module> =
        policies.iter().map(|&file| cordon_syntax::parse(file, &sources.file(file).text).module).collect();
    let (Some(Item { kind: ItemKind::Entry { params, ret }, .. }), _) = cordon_syntax::entry::of(&modules) else {
        return format!("agent[String]({task})");
    };
    let linear: Vec<&str> =
        params.iter().filter(|p| is_linear(&modules, &p.ty)).map(|p| p.name.name.as_str()).collect();
    let args: String = linear.iter().map(|n| format!(", {n}")).collect();
    format!("agent[{}]({task}{args})", type_text(sources, &ret))
}

/// A type as written: named types and tuples rebuilt (a composed entry's result is not written
/// anywhere as a whole), anything else as its source text.
fn type_text(sources: &SourceMap, t: &TypeExpr) -> String {
    let list = |ts: &[TypeExpr]| ts.iter().map(|t| type_text(sources, t)).collect::<Vec<_>>().join(", ");
    match &t.kind {
        TypeExprKind::Named { name, args } if args.is_empty() => name.name.clone(),
        TypeExprKind::Named { name, args } => format!("{}[{}]", name.name, list(args)),
        TypeExprKind::Tuple(items) => format!("({})", list(items)),
        _ => sources.slice(t.span).to_string(),
    }
}

/// Whether `ty` names a `linear type` one of `modules` declares (directly, or refined:
/// `{s: Session | ..}`).
fn is_linear(modules: &[Module], ty: &TypeExpr) -> bool {
    let base = match &ty.kind {
        TypeExprKind::Refined { base, .. } => base,
        _ => ty,
    };
    let TypeExprKind::Named { name: ty_name, .. } = &base.kind else { return false };
    modules
        .iter()
        .flat_map(|m| &m.items)
        .any(|i| matches!(&i.kind, ItemKind::Linear { name } if name.name == ty_name.name))
}

/// A Cordon string literal holding `text`.
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:X}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The trace (as `Trace::render` wrote it), the holes and their cost, and the result or error.
fn report(sources: &SourceMap, outcome: &RequestOutcome, trace: &str, request: Option<RequestId>) -> Report {
    let mut out = trace.to_string();
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
    let accepted = outcome.result.is_ok();
    let mut error = None;
    match &outcome.result {
        Ok(v) => {
            out.push_str(&answer(v));
            let label = cordon_runtime::deep_label(v);
            if !label.is_bottom() {
                out.push_str(&format!("label: {}\n", label.dc().describe()));
            }
            out.push_str("request: ran to the end\n");
        }
        // No fill: the model could not be reached, or none of its fills checked. An error, for
        // stderr, not an answer.
        Err(e) if e.kind == cordon_runtime::ErrorKind::Hole => {
            let code = match outcome.model_error() {
                None => 1,
                Some(ProviderError::Mismatch(_) | ProviderError::Config(_) | ProviderError::Exhausted { .. }) => 2,
                Some(_) => 3,
            };
            let diagnostic = render::human(&e.to_diagnostic(), sources);
            out.push_str(&format!("request: stopped ({})\n", e.kind.code().as_str()));
            error = Some(Error::Unanswered { diagnostic, code });
        }
        Err(e) => {
            out.push_str(&render::human(&e.to_diagnostic(), sources));
            out.push('\n');
            out.push_str(&format!("request: stopped ({})\n", e.kind.code().as_str()));
        }
    }
    out.push_str(&format!(
        "tokens: {} prompt + {} reply\n",
        outcome.usage.prompt_tokens, outcome.usage.completion_tokens
    ));
    if let Some(id) = request {
        out.push_str(&format!("recorded as request {id} (`cordon audit show --request {id}`)\n"));
    }
    Report { stdout: out, accepted, error }
}

/// The answer in a plan's value (its first part, when the entry hands more back), with its
/// label joined with the whole value's own (what decided which tuple it is): what the next
/// request's prompt may show of it.
fn answer_part(v: &cordon_runtime::Val) -> cordon_runtime::Val {
    if let cordon_runtime::Value::Tuple(items) = &v.value
        && let Some(first) = items.first()
    {
        return cordon_runtime::Val { value: first.value.clone(), label: first.label.join(&v.label) };
    }
    v.clone()
}

/// The plan's value for a person: its text as text (not a quoted, escaped string), and what
/// else it hands back (a session kept for the next request) on lines of their own.
fn answer(v: &cordon_runtime::Val) -> String {
    use cordon_runtime::Value;
    let parts: Vec<&cordon_runtime::Val> = match &v.value {
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

    #[test]
    fn a_user_cleared_model_may_see_the_users_secrets_and_no_one_elses() {
        let alices = DcLabel::secret("alice").join(&DcLabel::endorsed("alice"));
        let bobs = DcLabel::secret("bob");
        assert!(!alices.flows_to(&Clearance::Public.label("alice")));
        assert!(alices.flows_to(&Clearance::User.label("alice")));
        assert!(!bobs.flows_to(&Clearance::User.label("alice")));
        assert!(DcLabel::untrusted().flows_to(&Clearance::Public.label("alice")));
    }

    #[test]
    fn an_answer_is_printed_as_text_and_the_session_apart() {
        use cordon_runtime::value::Handle;
        use cordon_runtime::{Val, Value};
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

    #[test]
    fn requests_become_string_literals() {
        assert_eq!(quote("say \"hi\"\n\\"), r#""say \"hi\"\n\\""#);
    }

    #[test]
    fn the_root_plan_returns_the_entrys_type_and_passes_its_linear_values() {
        let mut sources = SourceMap::new();
        let policy = sources.add("p.cord", cordon_envs::github::POLICY);
        assert_eq!(root_plan(&sources, &[policy], "hi"), r#"agent[(String, Session)]("hi", s)"#);
        let bare = sources.add("q.cord", "capability C { tool t() }");
        assert_eq!(root_plan(&sources, &[bare], "hi"), r#"agent[String]("hi")"#);
        // Several environments: the composed entry's type and every linear value.
        let chat = sources.add("c.cord", cordon_envs::chat::POLICY);
        assert_eq!(root_plan(&sources, &[chat, policy], "hi"), r#"agent[(String, Session)]("hi", s)"#);
        assert_eq!(root_plan(&sources, &[chat], "hi"), r#"agent[String]("hi")"#);
    }
}
