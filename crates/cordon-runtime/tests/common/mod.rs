//! Helpers the runtime's integration tests share (and `crates/cordon-sim/tests` borrow with
//! `#[path]`): compile a plan with or without the checker, run it against a tool host that
//! records every call, and describe how a run ended in one short string.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)] // each test binary uses a part; tests fail loudly

use std::time::Duration;

use cordon_engine::Report;
use cordon_runtime::{Config, Effect, Json, Limits, Program, Sessions, ToolCall, ToolHost};
use cordon_syntax::{SourceMap, render};
use cordon_types::{CheckOptions, EntryFact, check};

/// A plan with its policy (if any) in one source map, so that spans in run-time errors can be
/// shown as text.
pub struct Source {
    pub sources: SourceMap,
    pub policy: Option<cordon_syntax::FileId>,
    pub plan: cordon_syntax::FileId,
}

impl Source {
    pub fn new(policy: Option<&str>, plan: &str) -> Source {
        let mut sources = SourceMap::new();
        let policy = policy.map(|p| sources.add("policy.cord", p));
        let plan = sources.add("plan.cord", plan);
        Source { sources, policy, plan }
    }

    /// The program, if the checker accepts it (given `facts` about the entry's inputs);
    /// otherwise the codes of its errors.
    pub fn check_with(&self, facts: Option<Vec<EntryFact>>) -> Result<Program, Vec<String>> {
        let options = CheckOptions { entry_facts: facts, ..CheckOptions::default() };
        let policies: Vec<_> = self.policy.into_iter().collect();
        let outcome = check(&self.sources, &policies, Some(self.plan), &options);
        match &outcome.program {
            Some(checked) => Ok(Program::new(checked).expect("an accepted program compiles")),
            None => Err(outcome.diagnostics.iter().map(|d| d.code.as_str().to_string()).collect()),
        }
    }

    /// The program; the checker must accept it.
    pub fn checked(&self) -> Program {
        self.check_with(None).unwrap_or_else(|_| {
            let policies: Vec<_> = self.policy.into_iter().collect();
            let outcome = check(&self.sources, &policies, Some(self.plan), &CheckOptions::default());
            let shown: Vec<String> = outcome.diagnostics.iter().map(|d| render::human(d, &self.sources)).collect();
            panic!("the checker rejects\n{}\n{}", self.sources.file(self.plan).text, shown.join("\n"))
        })
    }

    /// The program compiled whether or not the checker accepts it; it must parse.
    pub fn unchecked(&self) -> Program {
        for file in self.policy.iter().chain([&self.plan]) {
            let parsed = cordon_syntax::parse(*file, &self.sources.file(*file).text);
            assert!(parsed.diagnostics.is_empty(), "does not parse: {:?}", parsed.diagnostics);
        }
        let policies: Vec<_> = self.policy.into_iter().collect();
        Program::unchecked(&self.sources, &policies, Some(self.plan)).expect("compiles")
    }

    /// Adds the source of a fill, which must parse.
    pub fn add_fill(&mut self, text: &str) -> cordon_syntax::FileId {
        let file = self.sources.add("fill.cord", text);
        let parsed = cordon_syntax::parse(file, text);
        assert!(parsed.diagnostics.is_empty(), "the fill does not parse: {:?}", parsed.diagnostics);
        file
    }

    /// The source text a span covers.
    pub fn text(&self, span: cordon_syntax::Span) -> &str {
        self.sources.slice(span)
    }
}

/// The program of a plan without a policy; the checker must accept it.
pub fn checked(plan: &str) -> Program {
    Source::new(None, plan).checked()
}

/// The program of a plan against `policy`; the checker must accept it.
pub fn checked_with(policy: &str, plan: &str) -> Program {
    Source::new(Some(policy), plan).checked()
}

/// The program of a plan against `policy` (if any), compiled without the checker.
pub fn unchecked(policy: Option<&str>, plan: &str) -> Program {
    Source::new(policy, plan).unchecked()
}

/// One tool call a host performed: `tool(arg, ..)` with its arguments printed as literals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub tool: String,
    pub args: Vec<String>,
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.tool, self.args.join(", "))
    }
}

/// How a test host answers a tool call.
type Answer<'a> = Box<dyn FnMut(&Effect) -> Result<Json, String> + 'a>;

/// A tool host that records every call it is asked to perform and answers with `answer`.
pub struct Recorder<'a> {
    pub calls: Vec<Call>,
    answer: Answer<'a>,
}

impl<'a> Recorder<'a> {
    pub fn new(answer: impl FnMut(&Effect) -> Result<Json, String> + 'a) -> Recorder<'a> {
        Recorder { calls: Vec::new(), answer: Box::new(answer) }
    }

    /// Records the calls and lets `host` perform them.
    pub fn around(host: &'a mut dyn ToolHost) -> Recorder<'a> {
        Recorder::new(move |e| host.perform(&ToolCall::new(e)))
    }

    /// The calls, as `tool(args)` text.
    pub fn seen(&self) -> Vec<String> {
        self.calls.iter().map(Call::to_string).collect()
    }

    /// The calls of one tool, by their arguments.
    pub fn calls_of(&self, tool: &str) -> Vec<String> {
        self.calls.iter().filter(|c| c.tool == tool).map(|c| c.args.join(", ")).collect()
    }
}

impl std::fmt::Debug for Recorder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("calls", &self.calls).finish_non_exhaustive()
    }
}

impl ToolHost for Recorder<'_> {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        let args = call.effect.args.iter().map(|(_, v)| v.value.to_string()).collect();
        self.calls.push(Call { tool: call.tool().to_string(), args });
        (self.answer)(call.effect)
    }
}

/// A host for plans that call no tool.
pub fn no_tools() -> Recorder<'static> {
    Recorder::new(|e| panic!("unexpected tool call `{}`", e.tool))
}

/// Limits small enough that a runaway test ends in milliseconds.
pub fn small_limits() -> Limits {
    Limits {
        fuel: 200_000,
        max_call_depth: 500,
        max_string_bytes: 1 << 16,
        max_list_len: 10_000,
        max_memory_bytes: 1 << 22,
        wall_clock: Duration::from_secs(2),
        max_tool_calls: 50,
        ..Limits::default()
    }
}

pub fn config(limits: Limits) -> Config {
    Config { limits, ..Config::default() }
}

/// Runs `program` from fresh sessions with the default settings.
pub fn run(program: &Program, tools: &mut dyn ToolHost) -> Report {
    cordon_engine::run(program, &Sessions::default(), &Config::default(), tools)
}

/// How a run ended: the printed value, or the error's code (`label-flow`, `out-of-range`, ..).
pub fn ending(report: &Report) -> String {
    match &report.result {
        Ok(v) => v.value.to_string(),
        Err(e) => e.kind.code().as_str().to_string(),
    }
}
