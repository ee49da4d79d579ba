//! What the agent's integration tests share: a scripted model that keeps every request it is
//! asked, so a test can read what each prompt showed; and a request driven by the engine with the
//! agent's hole filler, as the library drives one, without its gate and store.
#![allow(dead_code, clippy::unwrap_used)] // each test binary uses a part; tests fail loudly

use cordon_agent::{
    Completion, Filler, HoleStats, ModelHoles, Provider, ProviderError, Request, Scripted, ScriptedReply, Usage,
};
use cordon_engine::{Decisions, Engine, Observer, Stage};
use cordon_runtime::{Config, Program, Run, RunError, Sessions, ToolHost, TraceEntry, Val};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, Checked};

/// How a request driven by [`run_request`] ended.
#[derive(Debug)]
pub struct RequestOutcome {
    pub result: Result<Val, RunError>,
    /// Every decision the boundary made.
    pub trace: Vec<TraceEntry>,
    /// The sessions to keep for the next request.
    pub sessions: Sessions,
    /// Tokens over all holes.
    pub usage: Usage,
    /// Each hole reached, in order.
    pub holes: Vec<HoleStats>,
}

impl RequestOutcome {
    pub fn model_error(&self) -> Option<&ProviderError> {
        cordon_agent::model_error(&self.holes)
    }
}

/// Runs `checked` to its end: `tools` perform its calls after `last` (the pipeline's last
/// stage, if any) agrees, `filler` fills its holes, `observer` hears every event.
#[allow(clippy::too_many_arguments)]
pub fn run_request(
    sources: &mut SourceMap,
    checked: &Checked,
    options: &CheckOptions,
    sessions: &Sessions,
    config: &Config,
    tools: &mut dyn ToolHost,
    filler: &mut Filler<'_>,
    last: Option<&mut dyn Stage>,
    observer: &mut dyn Observer,
) -> RequestOutcome {
    let plan = checked.plan().map(|m| sources.file(m.file).text.clone()).unwrap_or_default();
    let program = Program::new(checked).unwrap();
    let mut run = Run::start(&program, sessions, config).unwrap();
    let mut holes = ModelHoles::new(sources, checked, options, filler);
    let mut decisions = Decisions::kept();
    let mut engine = Engine::new(tools).with_holes(&mut holes).with_observer(observer).with_decisions(&mut decisions);
    if let Some(last) = last {
        engine = engine.with_last_stage(last);
    }
    let result = engine.start_request(&mut run, &plan).into_result();
    let holes = holes.holes().to_vec();
    RequestOutcome {
        result,
        usage: holes.iter().fold(Usage::default(), |sum, h| sum + h.usage),
        trace: decisions.into_events(),
        sessions: run.sessions(),
        holes,
    }
}

/// A provider that answers with scripted replies, in order, and keeps every request.
pub struct Recording {
    inner: Scripted,
    pub requests: Vec<Request>,
}

impl Recording {
    /// Answers with `replies` (whole replies, code blocks and all), in order.
    pub fn new(replies: &[&str]) -> Recording {
        let replies = replies.iter().map(|r| ScriptedReply::next(*r)).collect();
        Recording { inner: Scripted::new(replies), requests: Vec::new() }
    }

    /// Everything the model was shown, over all requests.
    pub fn everything(&self) -> String {
        self.requests.iter().flat_map(|r| r.messages.iter().map(|m| m.content.clone())).collect()
    }

    /// The last message of the `i`th request.
    pub fn last(&self, i: usize) -> &str {
        &self.requests[i].messages.last().unwrap().content
    }
}

impl Provider for Recording {
    fn name(&self) -> &str {
        "recording"
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        self.requests.push(request.clone());
        self.inner.complete(request)
    }
}
