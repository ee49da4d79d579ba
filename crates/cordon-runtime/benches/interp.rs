//! How fast the interpreter runs, compared with CPython, and what one tool call costs at the
//! boundary.
//!
//! - `cordon/<program>`: a checked program run to its end in process (`Run::start` and
//!   `proceed` until `Done`; checking and compiling happen once, outside the timing). The
//!   programs are loop-, list-, call- and string-heavy: a fold over `range(0, 200_000)`,
//!   `map`+`filter`+`sum` over 100k elements, naive recursive `fib(22)`, building and scanning
//!   50k records, joining 50k strings, sorting 100k integers by a key, and counting 100k keys
//!   into a `Map`.
//! - The same computation in Python, each program in two versions: `mirror` follows the Cordon
//!   program step by step (a lambda where Cordon has a closure, `list(..)` where Cordon builds a
//!   list), `idiomatic` is what a Python programmer would write (comprehensions and `for`
//!   loops, which call no function per element). Both must give Cordon's result, which is
//!   checked.
//! - `effect/round_trip`: one tool call crossing the boundary, without the tool's own work:
//!   `resume(Ok(value))` on the waiting call, through the boundary's checks of the result,
//!   the plan's loop, and the boundary's checks of the next call (a refined parameter, a
//!   `@label` sink and a `@label(returns)`), to the next `Step::Effect`. The tool host answers
//!   at once.
//! - `effect/plan_100_calls`: a whole run of a plan that makes 100 such calls, through
//!   [`cordon_engine::run`].
//!
//! After the criterion benchmarks, the binary compares each program with its peers in turn,
//! in rounds: Cordon runs it for about 150 ms in process (checked and compiled once, outside
//! the timing), then each peer does in its own process, which stays up between rounds and
//! times `run()` itself with `time.perf_counter_ns` (`benches/time_python.py`; a first run
//! before the rounds, so no start-up is counted). Each round gives each side's median and the ratio of the two; the table shows
//! the medians over seven rounds, of times and of ratios. A ratio is taken within a round
//! because the machine's speed drifts between rounds much more than within one (other work
//! on a shared machine). The table (`program, cordon, cpython medians, monty median, ratios`)
//! is printed and written to `target/criterion/cpython-ratio.txt`, naming the Python it ran:
//! the distribution's `/usr/bin/python3`, else `python3` on the `PATH` (`CORDON_PYTHON=/path/to/python`
//! chooses another interpreter); without one the Python side is skipped with a message.
//!
//! - Monty (pydantic-monty, a sandboxed interpreter for model-written Python, the closest
//!   peer) runs the mirror programs. The version pinned in `benches/monty/requirements.txt` is
//!   installed into a virtual environment under `target/tmp/py-monty` the first time the table
//!   is made; where it cannot install, its column is skipped with the reason.
//!   `benches/time_python.py` times it in rounds as it times CPython, from the host.
//! - Peak memory: each program's whole process, checked, compiled and run once (this binary
//!   run again as a child with `CORDON_BENCH_PEAK_OF=<program>`), against `python3` running the
//!   mirror once; both read the kernel's high-water mark of resident memory (`VmHWM`).
//!
//! This binary allocates as `cordon` does (mimalloc, transparent huge pages off). The peers it
//! starts inherit the huge-page opt-out, which changes nothing where the system leaves huge
//! pages to `madvise` (as Debian does) and Python asks for none.
//!
//! ```text
//! cargo bench -p cordon-runtime --bench interp
//! cargo bench -p cordon-runtime --bench interp -- fib     # only the programs matching `fib`
//! ```

#![allow(clippy::panic)] // a benchmark of a program that fails must stop loudly

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cordon_runtime::{Config, Effect, Json, Program, Run, Sessions, Step, ToolCall, ToolHost};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};
use criterion::{Criterion, Throughput};

/// The `cordon` binary's allocator: the benchmark measures the interpreter as the binary runs it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A program in Cordon and in Python. Each Python text defines `run()`, returning the result.
struct Bench {
    name: &'static str,
    cordon: &'static str,
    mirror: &'static str,
    idiomatic: &'static str,
    /// The result, as both print it.
    expect: &'static str,
}

const PROGRAMS: &[Bench] = &[
    Bench {
        name: "fold_sq_mod",
        cordon: "range(0, 200000).fold(0, |acc: Int, i: Int| acc + i * i % 7)",
        mirror: "
import functools
def run():
    return functools.reduce(lambda acc, i: acc + i * i % 7, list(range(0, 200000)), 0)
",
        idiomatic: "
def run():
    acc = 0
    for i in range(0, 200000):
        acc = acc + i * i % 7
    return acc
",
        expect: "399999",
    },
    Bench {
        name: "map_filter_sum",
        cordon: "range(0, 100000).map(|x: Int| x * 3 + 1).filter(|x: Int| x % 2 == 0).sum()",
        mirror: "
def run():
    xs = list(range(0, 100000))
    ys = list(map(lambda x: x * 3 + 1, xs))
    zs = list(filter(lambda x: x % 2 == 0, ys))
    return sum(zs)
",
        idiomatic: "
def run():
    return sum([y for y in [x * 3 + 1 for x in range(0, 100000)] if y % 2 == 0])
",
        expect: "7500050000",
    },
    Bench {
        name: "fib_22",
        cordon: "
fn fib(n: Int) -> Int { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }
fib(22)
",
        mirror: "
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def run():
    return fib(22)
",
        idiomatic: "
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
def run():
    return fib(22)
",
        expect: "17711",
    },
    Bench {
        name: "records",
        cordon: "
type Item = { id: Int, price: Int, active: Bool }
let items = range(0, 50000).map(|i: Int| Item { id: i, price: i * 7 % 100, active: i % 3 != 0 });
items.filter(|it: Item| it.active).fold(0, |acc: Int, it: Item| acc + it.price * it.id % 13)
",
        mirror: "
import functools
def run():
    items = list(map(lambda i: {'id': i, 'price': i * 7 % 100, 'active': i % 3 != 0}, list(range(0, 50000))))
    active = list(filter(lambda it: it['active'], items))
    return functools.reduce(lambda acc, it: acc + it['price'] * it['id'] % 13, active, 0)
",
        idiomatic: "
def run():
    items = [{'id': i, 'price': i * 7 % 100, 'active': i % 3 != 0} for i in range(0, 50000)]
    acc = 0
    for it in items:
        if it['active']:
            acc += it['price'] * it['id'] % 13
    return acc
",
        expect: "184009",
    },
    Bench {
        name: "string_join",
        cordon: "range(0, 50000).map(|i: Int| \"item\" + i.to_string()).join(\", \").len()",
        mirror: "
def run():
    return len(', '.join(list(map(lambda i: 'item' + str(i), list(range(0, 50000))))))
",
        idiomatic: "
def run():
    return len(', '.join(['item' + str(i) for i in range(0, 50000)]))
",
        expect: "538888",
    },
    Bench {
        name: "sort_by_take",
        cordon: "range(0, 100000).map(|i: Int| i * 7919 % 100003).sort_by(|x: Int| -x).take(3)",
        mirror: "
def run():
    xs = list(map(lambda i: i * 7919 % 100003, list(range(0, 100000))))
    return sorted(xs, key=lambda x: -x)[:3]
",
        idiomatic: "
def run():
    return sorted([i * 7919 % 100003 for i in range(0, 100000)], reverse=True)[:3]
",
        expect: "[100002, 100001, 100000]",
    },
    Bench {
        name: "count_by_map_get",
        cordon: "map_from(range(0, 100000).count_by(|i: Int| i * i % 97)).get(4).unwrap_or(0)",
        mirror: "
def run():
    counts = {}
    for k in map(lambda i: i * i % 97, list(range(0, 100000))):
        counts[k] = counts.get(k, 0) + 1
    return counts.get(4, 0)
",
        idiomatic: "
import collections
def run():
    return collections.Counter(i * i % 97 for i in range(0, 100000))[4]
",
        expect: "2061",
    },
];

/// The policy of the effect benchmarks: a refined parameter, a sink and a result label, like
/// the real policies, on a tool that does nothing.
const ECHO_POLICY: &str = "
/// A tool that does nothing.
capability Echo {
  /// How many calls to make.
  tool count() -> Int @label(returns = public())
  /// Answers at once.
  tool ping(tag: {t: String | t != \"\"}, n: Int) -> Int
    @label(returns = secret(user()).join(endorsed(user())), tag = endorsed(user()), n = endorsed(user()))
}
entry(e: Echo) -> ()
";

const ECHO_PLAN: &str = "
let k = e.count();
for i in range(0, k) { e.ping(\"x\", i); }
";

const ECHO_PLAN_100: &str = "for i in range(0, 100) { e.ping(\"x\", i); }";

/// Checks and compiles; a benchmark must measure an accepted program.
fn compile(name: &str, policy: Option<&str>, plan: &str) -> Program {
    let mut sources = SourceMap::new();
    let policies: Vec<_> = policy.map(|p| sources.add("policy.cord", p)).into_iter().collect();
    let plan = sources.add(format!("{name}.cord"), plan);
    let outcome = check(&sources, &policies, Some(plan), &CheckOptions::default());
    let errors: Vec<String> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {}", d.code.as_str(), d.message))
        .collect();
    let Some(checked) = outcome.program else { panic!("{name} must be accepted:\n{}", errors.join("\n")) };
    Program::new(&checked).unwrap_or_else(|e| panic!("{name} must compile: {}", e.message))
}

/// Runs a program without tool calls to its end; returns its result as text.
fn run_to_end(program: &Program, config: &Config) -> String {
    let mut run = Run::start(program, &Sessions::default(), config).expect("the run starts");
    match run.proceed() {
        Ok(Step::Done(v)) => v.value.to_string(),
        Ok(Step::Effect(e)) => panic!("unexpected tool call `{}`", e.tool),
        Ok(Step::Hole(_)) => panic!("unexpected hole"),
        Err(e) => panic!("the run failed: {}", e.message),
    }
}

/// The tool host of the effect benchmarks: answers at once.
struct Answer {
    count: i64,
}

impl ToolHost for Answer {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        match call.tool() {
            "count" => Ok(self.count.into()),
            _ => Ok(1.into()),
        }
    }
}

/// A run of [`ECHO_PLAN`] making `calls` pings, stopped at its first ping.
fn echo_run(program: &Program, config: &Config, host: &mut Answer, calls: u64) -> (Run, Effect) {
    host.count = calls as i64;
    let mut run = Run::start(program, &Sessions::default(), config).expect("the run starts");
    let Ok(Step::Effect(count)) = run.proceed() else { panic!("expected the call to `count`") };
    run.commit().expect("commits");
    let Ok(Step::Effect(ping)) = run.resume(host.perform(&ToolCall::new(&count))) else {
        panic!("expected the first ping")
    };
    (run, ping)
}

fn echo_config() -> Config {
    let mut config = Config::default();
    config.limits.max_tool_calls = u32::MAX;
    config.limits.max_list_len = usize::MAX;
    config.limits.fuel = u64::MAX;
    config.limits.wall_clock = Duration::from_secs(3600);
    config
}

fn bench_programs(c: &mut Criterion) {
    let config = Config::default();
    let mut group = c.benchmark_group("cordon");
    for b in PROGRAMS {
        // Checked and compiled only if the benchmark is selected.
        let mut program = None;
        group.bench_function(b.name, |bench| {
            let program = program.get_or_insert_with(|| {
                let program = compile(b.name, None, b.cordon);
                assert_eq!(run_to_end(&program, &config), b.expect, "{}", b.name);
                program
            });
            bench.iter(|| black_box(run_to_end(black_box(program), &config)))
        });
    }
    group.finish();
}

fn bench_effects(c: &mut Criterion) {
    let program = compile("echo", Some(ECHO_POLICY), ECHO_PLAN);
    let config = echo_config();
    let mut host = Answer { count: 0 };
    let mut group = c.benchmark_group("effect");
    group.bench_function("round_trip", |bench| {
        bench.iter_custom(|iters| {
            let (mut run, mut effect) = echo_run(&program, &config, &mut host, iters + 1);
            let started = Instant::now();
            for _ in 0..iters {
                run.commit().expect("commits");
                let answer = host.perform(&ToolCall::new(&effect));
                match run.resume(answer) {
                    Ok(Step::Effect(next)) => effect = next,
                    other => panic!("expected another ping, got {other:?}"),
                }
            }
            let elapsed = started.elapsed();
            drop(black_box(run));
            elapsed
        })
    });
    let program = compile("echo100", Some(ECHO_POLICY), ECHO_PLAN_100);
    group.throughput(Throughput::Elements(100));
    group.bench_function("plan_100_calls", |bench| {
        bench.iter(|| {
            let report = cordon_engine::run(&program, &Sessions::default(), &Config::default(), &mut host);
            assert!(report.result.is_ok());
            report
        })
    });
    group.finish();
}

/// How many rounds the ratio table takes of each program, and how long each side runs in one.
const ROUNDS: usize = 7;
const ROUND_BUDGET: Duration = Duration::from_millis(150);

/// The median of `xs` (the upper one of an even count), if there are any.
fn median<T: PartialOrd + Copy>(xs: &mut [T]) -> Option<T> {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    xs.get(xs.len() / 2).copied()
}

/// The median of `f`'s times, after a warm-up, over at least `min` runs and about `budget`.
fn median_time(min: usize, budget: Duration, mut f: impl FnMut()) -> Duration {
    f();
    let started = Instant::now();
    let mut times = Vec::new();
    while times.len() < min || (started.elapsed() < budget && times.len() < 10_000) {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// Each side runs a program at least this many times a round.
const ROUND_MIN_RUNS: usize = 3;

/// The CPython to compare with: `CORDON_PYTHON`, else the distribution's own (`/usr/bin/python3`:
/// built as the distribution builds it, with profile-guided optimisation on Debian), else the
/// first `python3` on the `PATH`.
fn python() -> String {
    std::env::var("CORDON_PYTHON").unwrap_or_else(|_| match Path::new(DISTRIBUTION_PYTHON).exists() {
        true => DISTRIBUTION_PYTHON.into(),
        false => "python3".into(),
    })
}

const DISTRIBUTION_PYTHON: &str = "/usr/bin/python3";

/// A peer interpreter timing one program, in a process of its own that waits between rounds.
struct Peer {
    child: std::process::Child,
    replies: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    /// What `run()` returned.
    result: String,
}

impl Peer {
    /// Starts `command`, which prints the result of `run()` first; `what` names it in errors.
    fn start(mut command: Command, what: String) -> Result<Peer, String> {
        use std::io::BufRead as _;
        let mut child = command
            .env("ROUND_MIN_RUNS", ROUND_MIN_RUNS.to_string())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {what}: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut replies = std::io::BufReader::new(stdout).lines();
        match replies.next() {
            Some(Ok(result)) => Ok(Peer { child, replies, result }),
            _ => {
                let out = child.wait_with_output().map_err(|e| e.to_string())?;
                Err(format!("{what} failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
            }
        }
    }

    /// `benches/time_python.py` run by `python` on `program`, in Monty if `monty`.
    fn python(python: &Path, program: &str, monty: bool) -> Result<Peer, String> {
        let dir = target_dir().join("tmp");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let file = dir.join(format!("bench-{}.py", std::process::id()));
        std::fs::write(&file, program).map_err(|e| e.to_string())?;
        let mut command = Command::new(python);
        command.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/time_python.py")).arg(&file);
        if monty {
            command.arg("--monty");
        }
        let peer = Peer::start(command, if monty { "Monty".to_string() } else { format!("`{}`", python.display()) });
        let _ = std::fs::remove_file(&file);
        peer
    }

    /// One round: the median time of `run()` over about `budget`.
    fn round(&mut self, budget: Duration) -> Result<Duration, String> {
        use std::io::Write as _;
        let stdin = self.child.stdin.as_mut().ok_or("no stdin")?;
        writeln!(stdin, "{}", budget.as_nanos()).map_err(|e| e.to_string())?;
        let line = self.replies.next().ok_or("no reply")?.map_err(|e| e.to_string())?;
        let ns: u64 = line.trim().parse().map_err(|_| format!("not a time: {line}"))?;
        Ok(Duration::from_nanos(ns))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // Closing its input ends the peer's loop.
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Where Monty's pinned version is: `benches/monty/`.
fn monty_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/monty")
}

/// The Python of a virtual environment under `<target>/tmp/py-monty` holding the pinned
/// pydantic-monty (`benches/monty/requirements.txt`), made on first use; why not, if it cannot
/// be (no `python3 -m venv`, or no build of Monty for this machine).
fn monty_python() -> Result<PathBuf, String> {
    let venv = target_dir().join("tmp/py-monty");
    let venv_python = venv.join("bin/python");
    let ready = venv.join("ready");
    if ready.exists() {
        return Ok(venv_python);
    }
    let run = |command: &mut Command, what: &str| -> Result<(), String> {
        let out = command.output().map_err(|e| format!("cannot run {what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{what} failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
        }
    };
    eprintln!("installing pydantic-monty into {} (once)", venv.display());
    let _ = std::fs::remove_dir_all(&venv);
    run(Command::new(python()).arg("-m").arg("venv").arg(&venv), "python -m venv")?;
    let requirements = monty_dir().join("requirements.txt");
    run(Command::new(&venv_python).args(["-m", "pip", "install", "-q", "-r"]).arg(&requirements), "pip install")?;
    std::fs::write(&ready, "").map_err(|e| e.to_string())?;
    Ok(venv_python)
}

fn python_available() -> Option<String> {
    let out = Command::new(python()).arg("--version").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn fmt_time(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// The table of Cordon's and CPython's medians, measured now on this machine.
fn ratio_table(filter: Option<&str>) {
    let selected: Vec<&Bench> = PROGRAMS.iter().filter(|b| filter.is_none_or(|f| b.name.contains(f))).collect();
    let effect = filter.is_none_or(|f| "effect/round_trip".contains(f));
    if selected.is_empty() && !effect {
        return;
    }
    // The round trip first, before the Python processes run.
    let mut effect_line = String::new();
    if effect {
        let program = compile("echo", Some(ECHO_POLICY), ECHO_PLAN);
        let config = echo_config();
        let mut host = Answer { count: 0 };
        let calls = 20_000;
        let (mut run, mut effect) = echo_run(&program, &config, &mut host, calls + 1);
        let mut times = Vec::with_capacity(calls as usize);
        for _ in 0..calls {
            let t = Instant::now();
            run.commit().expect("commits");
            let answer = host.perform(&ToolCall::new(&effect));
            match run.resume(answer) {
                Ok(Step::Effect(next)) => effect = next,
                other => panic!("expected another ping, got {other:?}"),
            }
            times.push(t.elapsed());
        }
        times.sort();
        let _ = writeln!(
            effect_line,
            "effect round trip (resume -> next Effect, over {calls} calls): median {}, p90 {}",
            fmt_time(times[times.len() / 2]),
            fmt_time(times[times.len() * 9 / 10])
        );
    }
    let version = python_available();
    let mut table = String::new();
    let _ = writeln!(table, "Cordon interpreter vs CPython (medians per run of the whole program)");
    match &version {
        Some(v) => {
            let _ = writeln!(table, "python: {v} (`{}`)", python());
        }
        None => {
            let _ = writeln!(table, "python: `{}` not found: the Python side is skipped", python());
        }
    }
    // Monty (pydantic-monty) runs the mirror, where it installs.
    let monty = match &version {
        Some(_) if !selected.is_empty() => monty_python(),
        Some(_) => Err("no program selected".to_string()),
        None => Err("no python".to_string()),
    };
    if let Err(e) = &monty {
        let _ = writeln!(table, "monty: skipped ({e})");
    }
    let _ = writeln!(
        table,
        "{:<16} {:>10} {:>16} {:>6} {:>19} {:>6} {:>14} {:>6}",
        "program", "cordon", "cpython(mirror)", "ratio", "cpython(idiomatic)", "ratio", "monty(mirror)", "ratio"
    );
    let config = Config::default();
    for b in &selected {
        let program = compile(b.name, None, b.cordon);
        let expect = run_to_end(&program, &config);
        // Each peer that starts and gives Cordon's result; the others are reported.
        let start = |peer: Result<Peer, String>, who: &str| match peer {
            Ok(peer) if peer.result == expect => Some(peer),
            Ok(peer) => {
                eprintln!("{}: {who} gave {}, cordon {expect}", b.name, peer.result);
                None
            }
            Err(e) => {
                eprintln!("{}: {e}", b.name);
                None
            }
        };
        let mut peers: [Option<Peer>; 3] = match (&version, &monty) {
            (None, _) => [None, None, None],
            (Some(_), monty) => {
                let cpython = PathBuf::from(python());
                [
                    start(Peer::python(&cpython, b.mirror, false), "python"),
                    start(Peer::python(&cpython, b.idiomatic, false), "python"),
                    monty.as_ref().ok().and_then(|venv| start(Peer::python(venv, b.mirror, true), "monty")),
                ]
            }
        };
        // Rounds in turn, Cordon then each peer, and each ratio taken within a round: the
        // machine's speed drifts between rounds much more than within one.
        let mut cordon_times = Vec::with_capacity(ROUNDS);
        let mut peer_times: [Vec<Duration>; 3] = Default::default();
        let mut ratios: [Vec<f64>; 3] = Default::default();
        for _ in 0..ROUNDS {
            let cordon = median_time(ROUND_MIN_RUNS, ROUND_BUDGET, || {
                black_box(run_to_end(black_box(&program), &config));
            });
            cordon_times.push(cordon);
            for (i, slot) in peers.iter_mut().enumerate() {
                let Some(peer) = slot else { continue };
                match peer.round(ROUND_BUDGET) {
                    Ok(t) => {
                        peer_times[i].push(t);
                        ratios[i].push(cordon.as_secs_f64() / t.as_secs_f64());
                    }
                    Err(e) => {
                        eprintln!("{}: {e}", b.name);
                        *slot = None;
                    }
                }
            }
        }
        let cells: Vec<(String, String)> = (0..3)
            .map(|i| match (&peers[i], median(&mut peer_times[i]), median(&mut ratios[i])) {
                (Some(_), Some(t), Some(r)) => (fmt_time(t), format!("{r:.2}")),
                _ => ("-".to_string(), "-".to_string()),
            })
            .collect();
        let cordon = median(&mut cordon_times).unwrap_or_default();
        let _ = writeln!(
            table,
            "{:<16} {:>10} {:>16} {:>6} {:>19} {:>6} {:>14} {:>6}",
            b.name,
            fmt_time(cordon),
            cells[0].0,
            cells[0].1,
            cells[1].0,
            cells[1].1,
            cells[2].0,
            cells[2].1
        );
    }
    let _ = writeln!(table, "ratio = cordon / the other: below 1 means Cordon is faster");
    table.push_str(&effect_line);
    if !selected.is_empty() {
        table.push('\n');
        table.push_str(&peak_table(&selected, version.is_some()));
    }
    println!("\n{table}");
    let dir = target_dir().join("criterion");
    let written = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join("cpython-ratio.txt"), &table));
    match written {
        Ok(()) => println!("written to {}", dir.join("cpython-ratio.txt").display()),
        Err(e) => eprintln!("cannot write {}: {e}", dir.display()),
    }
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d),
        // The workspace's: two levels above this crate.
        None => Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap_or(Path::new(".")).join("target"),
    }
}

/// The variable that makes the bench binary a child of [`peak_table`] running one program.
const PEAK_CHILD: &str = "CORDON_BENCH_PEAK_OF";

/// This process's peak resident memory so far, in KiB (Linux's `VmHWM`), if known.
fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Checks, compiles and runs the program `name` once, then prints its result and this
/// process's peak memory in KiB.
fn peak_child(name: &str) {
    let Some(b) = PROGRAMS.iter().find(|b| b.name == name) else { panic!("no program `{name}`") };
    let program = compile(b.name, None, b.cordon);
    let result = run_to_end(&program, &Config::default());
    println!("{result}");
    println!("{}", peak_kib().map_or("-".to_string(), |k| k.to_string()));
}

/// The Python script running `run()` once, printing its result and the process's peak memory
/// in KiB, read as [`peak_kib`] reads it.
fn python_peak_script(program: &str) -> String {
    format!(
        "{program}
result = run()
print(result)
peak = '-'
try:
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            peak = line.split()[1]
except OSError:
    pass
print(peak)
"
    )
}

/// Runs `command`, which prints a result and a peak in KiB; both, or why not.
fn peak_of(command: &mut Command) -> Result<(String, u64), String> {
    let out = command.output().map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{command:?} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let result = lines.next().unwrap_or_default().to_string();
    let peak = lines.next().and_then(|l| l.trim().parse::<u64>().ok()).ok_or("no peak printed")?;
    Ok((result, peak))
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Whole-process peak memory of each program: this binary re-run as a child that checks,
/// compiles and runs it once, against `python3` running the mirror once.
fn peak_table(selected: &[&Bench], with_python: bool) -> String {
    let mut table = String::new();
    let _ = writeln!(table, "Peak memory of a whole process running the program once (VmHWM)");
    let _ = writeln!(table, "{:<16} {:>12} {:>16} {:>8}", "program", "cordon", "cpython(mirror)", "ratio");
    let Ok(exe) = std::env::current_exe() else { return table };
    for b in selected {
        let cordon = peak_of(Command::new(&exe).env(PEAK_CHILD, b.name));
        let py = if with_python {
            peak_of(Command::new(python()).arg("-c").arg(python_peak_script(b.mirror)))
        } else {
            Err("skipped".into())
        };
        let cell = |r: &Result<(String, u64), String>| match r {
            Ok((_, kib)) => mib(*kib),
            Err(e) => {
                eprintln!("{}: {e}", b.name);
                "-".into()
            }
        };
        let ratio = match (&cordon, &py) {
            (Ok((rc, kc)), Ok((rp, kp))) if rc == rp => format!("{:.2}", *kc as f64 / *kp as f64),
            (Ok(_), Ok(_)) => "wrong".into(),
            _ => "-".into(),
        };
        let _ = writeln!(table, "{:<16} {:>12} {:>16} {:>8}", b.name, cell(&cordon), cell(&py), ratio);
    }
    table
}

/// Criterion's positional filter, if any: the argument that is neither an option nor an
/// option's value.
fn filter(args: &[String]) -> Option<&str> {
    const WITH_VALUE: &[&str] = &[
        "--color",
        "-c",
        "--save-baseline",
        "-s",
        "--baseline",
        "-b",
        "--baseline-lenient",
        "--load-baseline",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--plotting-backend",
        "--output-format",
        "--format",
        "--profile-time",
    ];
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if a.starts_with('-') {
            skip = WITH_VALUE.contains(&a.as_str());
            continue;
        }
        return Some(a);
    }
    None
}

fn main() {
    // A child of `peak_table`: runs one program once and reports the peak memory.
    if let Ok(name) = std::env::var(PEAK_CHILD) {
        peak_child(&name);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench_programs(&mut c);
    bench_effects(&mut c);
    c.final_summary();
    // The table only when benchmarking: not under `cargo test --benches` or `--list`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if has("--bench") && !has("--test") && !has("--list") && !args.iter().any(|a| a.starts_with("--profile-time")) {
        ratio_table(filter(&args));
    }
}
