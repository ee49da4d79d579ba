//! How long checking takes: parse, type check and every solver query, from text to `Outcome`.
//!
//! - `check/50_lines`: a realistic 50-line plan (`programs/plan50.cord`, about ten refinement
//!   obligations) against a small policy (`programs/shop.cord`). Each iteration calls
//!   [`check`] as a server would, again and again on one thread: each starts from the policy as
//!   the thread declared it once (`cache.rs`), with a cold answer cache, so every query goes to
//!   Z3. The Z3 solvers themselves are pooled per thread by `cordon-smt`, so they are made once.
//! - `check/50_lines_new_thread`: the same on a new thread each time, so the policy is declared
//!   and the Z3 solvers are made anew too: what the first check in a process costs.
//! - `check/shapes/{session,session_branches,let_chain,branches,blocks,modular,running_sum}/
//!   {20,200,2000,20000}` and `check/shapes/disjunctive/{20,200,2000}`: generated plans of that
//!   many lines, of the shapes in `shapes/mod.rs` (a linear session threaded through a tool call
//!   per line, the same through an `if` per line, a chain of refined lets, sequential ifs on one
//!   variable, blocks of guarded calls, remainders, a running sum, disjunctions only Z3 proves);
//!   the time per line must stay flat (`tests/scaling.rs` guards the counts of work).
//! - `check/fill_github`: checking a model's fill of the first hole of a plan against
//!   `policies/github.cord` ([`check_fill`]: parse the fill, check the plan's body again with the
//!   fill in the hole's place); what a hole adds to a model's latency besides its prompt.
//! - `check/process`: the whole `cordon check` process on the 50-line plan. It needs the release
//!   binary, so build it first; without it the benchmark is skipped with a message:
//!
//! ```text
//! cargo build --release -p cordon-cli
//! cargo bench -p cordon-types --bench check
//! ```
//!
//! `CORDON_BIN=/path/to/cordon` overrides where the binary is looked for.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, Outcome, check, check_fill};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

mod shapes;

const POLICY: &str = include_str!("programs/shop.cord");
const PLAN50: &str = include_str!("programs/plan50.cord");

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/programs")
}

/// Everything `cordon check` does in-process, from text to outcome.
fn check_text(policy: Option<&str>, plan: &str) -> Outcome {
    let mut sources = SourceMap::new();
    let policies: Vec<_> = policy.map(|p| sources.add("shop.cord", p)).into_iter().collect();
    let plan = sources.add("plan.cord", plan);
    check(&sources, &policies, Some(plan), &CheckOptions::default())
}

/// Benchmarks must measure accepted programs: a rejected one may stop early.
fn assert_accepted(what: &str, policy: Option<&str>, plan: &str) -> Outcome {
    let outcome = check_text(policy, plan);
    let errors: Vec<String> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {} (at {:?})", d.code.as_str(), d.message, d.span()))
        .collect();
    assert!(errors.is_empty(), "{what} must be accepted, got:\n{}", errors.join("\n"));
    outcome
}

fn fifty_lines(c: &mut Criterion) {
    let outcome = assert_accepted("programs/plan50.cord", Some(POLICY), PLAN50);
    eprintln!(
        "check/50_lines: {} lines, {} solver queries ({} answered from the cache)",
        PLAN50.lines().count(),
        outcome.solver_queries,
        outcome.solver_cache_hits
    );
    c.bench_function("check/50_lines", |b| b.iter(|| check_text(Some(black_box(POLICY)), black_box(PLAN50))));
    c.bench_function("check/50_lines_new_thread", |b| {
        b.iter(|| std::thread::spawn(|| check_text(Some(black_box(POLICY)), black_box(PLAN50)).accepted()).join())
    });
}

const GITHUB_PLAN: &str = r#"let limit = 10;
let (n, s) = agent[({n: Int | n >= 0}, Session)]("count the open issues of alice/website", s);
let answer = if n > limit { "many" } else { agent[{t: String | t != ""}]("say how many", n) };
(answer, s)
"#;

const GITHUB_FILL: &str = r#"match gh.repo("alice", "website") {
  Some(r) => {
    let (issues, s) = gh.list_issues(s, r);
    (issues.filter(|i| i.open).len(), s)
  },
  None => (0, s),
}"#;

fn fill(c: &mut Criterion) {
    let mut sources = SourceMap::new();
    let policy = sources.add("github.cord", shapes::GITHUB);
    let plan = sources.add("plan.cord", GITHUB_PLAN);
    let options = CheckOptions::default();
    let program = check(&sources, &[policy], Some(plan), &options).program.expect("the plan is accepted");
    let fill = sources.add("fill.cord", GITHUB_FILL);
    assert!(check_fill(&sources, &program, 0, fill, &options).accepted(), "the fill must be accepted");
    c.bench_function("check/fill_github", |b| {
        b.iter(|| check_fill(black_box(&sources), &program, 0, fill, &options).accepted())
    });
}

/// Checks a generated plan of a shape (`shapes/mod.rs`), with the GitHub policy if it needs it.
fn check_shape(plan: &str, github: bool) -> Outcome {
    let mut sources = SourceMap::new();
    let policies: Vec<_> = github.then(|| sources.add("github.cord", shapes::GITHUB)).into_iter().collect();
    let file = sources.add("plan.cord", plan);
    check(&sources, &policies, Some(file), &CheckOptions::default())
}

/// Each shape of `shapes/mod.rs` at 20, 200, 2,000 and 20,000 lines; criterion reports the
/// time per line as the throughput's inverse.
fn shapes(c: &mut Criterion) {
    for (name, generate, github) in shapes::SHAPES {
        let mut group = c.benchmark_group(format!("check/shapes/{name}"));
        for lines in [20usize, 200, 2000, 20_000] {
            // Every line of `disjunctive` is a query to Z3 (half a millisecond each): 20,000
            // lines would take ten seconds a sample (the `shapes` example gives the figure).
            if name == "disjunctive" && lines > 2000 {
                continue;
            }
            let plan = generate(lines);
            assert_eq!(plan.lines().count(), lines);
            let outcome = check_shape(&plan, github);
            assert!(outcome.accepted(), "the {lines}-line {name} plan must be accepted: {:?}", outcome.diagnostics);
            eprintln!(
                "check/shapes/{name}/{lines}: {} obligations ({} folded, {} queries to z3 with {} hypotheses)",
                outcome.solver_queries + outcome.folded,
                outcome.folded,
                outcome.solver_calls,
                outcome.solver_hypotheses
            );
            if lines >= 2000 {
                group.sample_size(10);
            }
            group.throughput(Throughput::Elements(lines as u64));
            group.bench_with_input(BenchmarkId::from_parameter(lines), &plan, |b, plan| {
                b.iter(|| check_shape(black_box(plan), github))
            });
        }
        group.finish();
    }
}

/// `target/release/cordon`: this benchmark runs as `target/release/deps/check-HASH`.
fn cordon_binary() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("CORDON_BIN") {
        return Some(PathBuf::from(bin));
    }
    let exe = std::env::current_exe().ok()?;
    let profile_dir = exe.parent()?.parent()?;
    let bin = profile_dir.join(format!("cordon{}", std::env::consts::EXE_SUFFIX));
    bin.is_file().then_some(bin)
}

fn process(c: &mut Criterion) {
    let Some(bin) = cordon_binary() else {
        eprintln!(
            "check/process: skipped: no `cordon` binary next to this benchmark; \
             run `cargo build --release -p cordon-cli` first (or set CORDON_BIN)"
        );
        return;
    };
    let dir = programs_dir();
    let run = || {
        Command::new(&bin)
            .arg("check")
            .arg("--policy")
            .arg(dir.join("shop.cord"))
            .arg(dir.join("plan50.cord"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
    };
    let output = match run() {
        Ok(output) => output,
        Err(e) => {
            eprintln!("check/process: skipped: cannot run {}: {e}", bin.display());
            return;
        }
    };
    assert!(
        output.status.success(),
        "`{} check` must accept the plan (is the binary stale? rebuild it):\n{}{}",
        bin.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("check/process: {}", bin.display());
    c.bench_function("check/process", |b| {
        b.iter(|| {
            let output = run();
            assert!(output.as_ref().is_ok_and(|o| o.status.success()), "cordon check failed: {output:?}");
        })
    });
}

criterion_group!(benches, fifty_lines, fill, shapes, process);
criterion_main!(benches);
