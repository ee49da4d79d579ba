//! The time Cordon adds to one typed hole, model time excluded (issue 4, "Speed": aim under
//! 2 ms median), on the GitHub example: `policies/github.cord` and the root plan `cordon ask`
//! builds, `agent[(String, Session)]("...", s)`, run until it stops at that hole.
//!
//! - `hole/prompt`: [`prompt`] for the hole (reference, declarations, task, bindings, source).
//! - `hole/check_fill/same`: [`check_fill`] of one correct 10-line fill (it looks the repo up,
//!   lists its issues, returns a summary and the session), the same text every iteration. Each
//!   check has a fresh answer cache, but the thread's Z3 solvers are warm and have seen the very
//!   same queries: the best case.
//! - `hole/check_fill/distinct`: the same fill with different literals every iteration, so no
//!   two checks ask Z3 the same thing: what a run of different holes costs.
//! - `hole/check_fill/new_thread`: the distinct fill checked on a new thread each time, so the
//!   thread's Z3 solvers are made anew: the first hole of a process (thread spawn included).
//! - `hole/per_hole/{same,distinct}`: everything between the run stopping at the hole and the
//!   fill running: the prompt, [`Filler::fill_hole`] with a [`Scripted`] provider that answers at
//!   once (the request, extracting the code block, adding it to the source map, [`check_fill`]),
//!   then [`Run::fill`] (compiling the fill and entering it, up to its first tool call).
//! - `hole/per_hole_transcript/distinct`: the same, writing the JSONL transcript (to
//!   `io::sink`), as `cordon ask --transcript` does.
//!
//! Starting the run and reaching the hole is setup, not measured. Before measuring, the
//! benchmark prints the prompt's size and estimated tokens and the solver queries the fill asks.
//!
//! ```text
//! cargo bench -p cordon-agent --bench hole
//! ```
//!
//! Criterion prints a confidence interval of the mean; the median of each benchmark is in
//! `target/criterion/<name>/new/estimates.json` (`median.point_estimate`, in nanoseconds).

#![allow(clippy::panic)] // a benchmark whose setup fails should fail loudly

use std::hint::black_box;
use std::io;

use cordon_agent::{Checking, Filler, Prompt, Scripted, ScriptedReply, Transcript, prompt};
use cordon_engine::{Observer, Observers};
use cordon_label::DcLabel;
use cordon_runtime::{Config, HoleRequest, Program, Run, Sessions, Step};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, Checked, check, check_fill};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

const POLICY: &str = include_str!("../../../policies/github.cord");

/// The root plan `cordon ask` builds for a request.
const PLAN: &str = r#"agent[(String, Session)]("Summarise the open issues of alice/website", s)"#;

/// A correct fill of the root hole, ten lines; `i` varies its literals (and so its solver
/// queries) without changing its shape.
fn fill_text(i: u64) -> String {
    format!(
        r##"match gh.repo("alice", "website") {{
  Some(r) => {{
    let (issues, s) = gh.list_issues(s, r);
    let open = issues.filter(|i| i.open);
    let titles = open.map(|i| "#" + to_string(i.number) + " " + i.title);
    let many = len(open) > {limit};
    let head = if many {{ "Many open issues ({i}): " }} else {{ "Open issues ({i}): " }};
    (if is_empty(open) {{ "No open issues." }} else {{ head + join(titles, "; ") }}, s)
  }},
  None => ("alice/website was not found ({i})", s),
}}"##,
        limit = i % 97 + 3,
    )
}

/// A model's reply holding `code` in one block, with prose around it.
fn reply(code: &str) -> String {
    format!("Here is the fill.\n```cordon\n{code}\n```\nIt has the expected type.")
}

/// The policy and plan, checked, and the compiled program.
struct Setup {
    sources: SourceMap,
    checked: Checked,
    program: Program,
    options: CheckOptions,
}

impl Setup {
    fn new() -> Setup {
        let mut sources = SourceMap::new();
        let policy = sources.add("policies/github.cord", POLICY);
        let plan = sources.add("plan.cord", PLAN);
        let options = CheckOptions::default();
        let outcome = check(&sources, &[policy], Some(plan), &options);
        eprintln!("hole: the plan: {} solver queries", outcome.solver_queries);
        let checked = outcome.program.unwrap_or_else(|| panic!("the plan is rejected: {:?}", outcome.diagnostics));
        let program = Program::new(&checked).unwrap_or_else(|e| panic!("the plan does not compile: {}", e.message));
        Setup { sources, checked, program, options }
    }

    /// A run stopped at the root hole, and its request.
    fn at_hole(&self) -> (Run, HoleRequest) {
        let mut run = Run::start(&self.program, &Sessions::default(), &Config::default())
            .unwrap_or_else(|e| panic!("the run does not start: {e}"));
        match run.proceed() {
            Ok(Step::Hole(request)) => (run, request),
            other => panic!("the run did not stop at the hole: {other:?}"),
        }
    }

    fn prompt(&self, request: &HoleRequest) -> Prompt {
        prompt(&self.sources, &self.checked, &self.checked.holes()[0], request, &DcLabel::untrusted())
            .unwrap_or_else(|e| panic!("the root hole is not shown to a public model: {e:?}"))
    }

    /// Checks `code` as the root hole's fill (in a copy of the source map); true if accepted.
    fn check(&self, code: &str) -> bool {
        let mut sources = self.sources.clone();
        let fill = sources.add("<fill>", code);
        check_fill(&sources, &self.checked, 0, fill, &self.options).accepted()
    }

    /// All Cordon does for one hole, as `run_request` does it: prompt, ask, extract, check,
    /// compile and enter. True if the fill was accepted and ran to its first tool call.
    fn per_hole(
        &self,
        sources: &mut SourceMap,
        mut run: Run,
        request: &HoleRequest,
        model: &mut Scripted,
        observer: &mut dyn Observer,
    ) -> bool {
        let p = self.prompt(request);
        let mut check = |code: &str, attempt: u32| {
            let file = sources.add(format!("<fill 0 attempt {attempt}>"), code);
            let outcome = check_fill(sources, &self.checked, 0, file, &self.options);
            match outcome.fill {
                Some(fill) => Checking::Accepted(Box::new(fill)),
                None => Checking::Rejected(cordon_agent::Rejection {
                    feedback: format!("{:?}", outcome.diagnostics),
                    first: None,
                    at: None,
                }),
            }
        };
        let filled = Filler::new(model).fill_hole("0", &p, &mut check, observer);
        let Ok((fill, _)) = filled.fill else { return false };
        matches!(run.fill(&fill, &p.label), Ok(Step::Effect(_)))
    }
}

/// The sizes and solver work measured, printed once.
fn report(setup: &Setup) {
    let (_, request) = setup.at_hole();
    let p = setup.prompt(&request);
    eprintln!(
        "hole: prompt of the GitHub root hole: {} chars, ~{} tokens (chars/4), {} messages",
        p.stats.chars,
        p.stats.estimated_tokens,
        p.messages.len()
    );
    // The fill as the plan's body asks the solver what the fill in the hole's place asks.
    let mut sources = SourceMap::new();
    let policy = sources.add("policies/github.cord", POLICY);
    let plan = sources.add("fill.cord", fill_text(0));
    let outcome = check(&sources, &[policy], Some(plan), &setup.options);
    assert!(outcome.accepted(), "the fill as a plan is rejected: {:?}", outcome.diagnostics);
    eprintln!(
        "hole: the fill: {} lines, {} solver queries ({} answered from the cache)",
        fill_text(0).lines().count(),
        outcome.solver_queries,
        outcome.solver_cache_hits
    );
    for i in [0, 1, 99] {
        assert!(setup.check(&fill_text(i)), "fill {i} must be accepted");
    }
    // The measured path must do the whole job: a rejected fill would stop early.
    let (run, request) = setup.at_hole();
    let mut model = Scripted::new(vec![ScriptedReply::next(reply(&fill_text(1)))]);
    let mut sources = setup.sources.clone();
    assert!(
        setup.per_hole(&mut sources, run, &request, &mut model, &mut Observers::new()),
        "the per-hole path must accept the fill"
    );
}

fn hole(c: &mut Criterion) {
    let setup = Setup::new();
    report(&setup);
    let (_, request) = setup.at_hole();
    c.bench_function("hole/prompt", |b| b.iter(|| setup.prompt(black_box(&request))));

    let same = fill_text(0);
    let mut group = c.benchmark_group("hole/check_fill");
    let mut i = 0u64;
    // The sources with fill `n` added (0 every time for "same", a new one each time otherwise).
    let mut with_fill = |distinct: bool| {
        i += 1;
        let mut sources = setup.sources.clone();
        let file = sources.add("<fill>", if distinct { fill_text(i) } else { same.clone() });
        (sources, file)
    };
    for distinct in [false, true] {
        let name = if distinct { "distinct" } else { "same" };
        group.bench_function(name, |b| {
            b.iter_batched(
                || with_fill(distinct),
                |(sources, file)| check_fill(&sources, &setup.checked, 0, file, &setup.options).accepted(),
                BatchSize::SmallInput,
            )
        });
    }
    group.bench_function("new_thread", |b| {
        b.iter_batched(
            || with_fill(true),
            |(sources, file)| {
                let (checked, options) = (&setup.checked, &setup.options);
                std::thread::scope(|scope| {
                    scope.spawn(|| check_fill(&sources, checked, 0, file, options).accepted()).join().unwrap_or(false)
                })
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();

    let mut group = c.benchmark_group("hole/per_hole");
    for distinct in [false, true] {
        let name = if distinct { "distinct" } else { "same" };
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    i += 1;
                    let code = if distinct { fill_text(i) } else { same.clone() };
                    let (run, request) = setup.at_hole();
                    let model = Scripted::new(vec![ScriptedReply::next(reply(&code))]);
                    (setup.sources.clone(), run, request, model)
                },
                |(mut sources, run, request, mut model)| {
                    setup.per_hole(&mut sources, run, &request, &mut model, &mut Observers::new())
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();

    c.bench_function("hole/per_hole_transcript/distinct", |b| {
        b.iter_batched(
            || {
                i += 1;
                let (run, request) = setup.at_hole();
                let model = Scripted::new(vec![ScriptedReply::next(reply(&fill_text(i)))]);
                (setup.sources.clone(), run, request, model, Transcript::new(io::sink()))
            },
            |(mut sources, run, request, mut model, mut transcript)| {
                setup.per_hole(&mut sources, run, &request, &mut model, &mut transcript)
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, hole);
criterion_main!(benches);
