//! The parser and checker take text written by a model, so no input may make them panic, hang
//! or overflow the stack: whatever the text, the answer is diagnostics (or acceptance).
//!
//! - Property tests feed arbitrary strings, arbitrary bytes, token soup and mutated corpus
//!   programs to `check` and render every diagnostic in the three formats. They run forked
//!   (proptest's `timeout`), so a crash or a hang fails the case and is shrunk like a panic.
//! - Deep-nesting tests build programs 10 000 and 100 000 levels deep (and chains of 100 000
//!   operands), and every depth up to just past the parser's `MAX_NESTING`, and check them on an
//!   ordinary test thread's stack, each shape in a child process of this test binary, so that a
//!   stack overflow, which aborts the process, fails that test only.
//! - The last tests are problems these found, reduced to small inputs; they fail until fixed.
//!
//! Every check must finish within [`HANG_LIMIT`] of the checking thread's CPU time: that is a
//! hang detector, not a timing test (CPU time, so that other processes on the machine do not
//! stretch it).
//! Case counts keep the file under a minute in a debug build; `PROPTEST_CASES=N` runs more
//! (40 000 cases of each property found nothing more in a release build).

#![allow(clippy::panic, clippy::unwrap_used)] // a test may fail loudly

mod common;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{cord_files, repo_root, split_corpus_file};
use cordon_syntax::{Code, MAX_NESTING, SourceMap, render};
use cordon_types::{CheckOptions, Outcome, check};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::ValueTree;
use proptest::test_runner::RngSeed;

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

/// Longer than any check may take.
const HANG_LIMIT: Duration = Duration::from_secs(10);

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn github_policy() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| read(&repo_root().join("policies/github.cord")))
}

/// A program to check: policy modules (name, text) and an optional plan.
#[derive(Clone, Debug, Default)]
struct Program {
    policies: Vec<(String, String)>,
    plan: Option<String>,
}

impl Program {
    fn plan(text: impl Into<String>) -> Program {
        Program { policies: Vec::new(), plan: Some(text.into()) }
    }

    fn with_policy(mut self, name: &str, text: impl Into<String>) -> Program {
        self.policies.push((name.to_string(), text.into()));
        self
    }
}

/// Parses, checks and renders `program` as `cordon check` would, and fails if that took longer
/// than [`HANG_LIMIT`]. A panic inside propagates to the caller.
fn check_program(program: &Program) -> Outcome {
    let start = cpu_time();
    let mut sources = SourceMap::new();
    let policies: Vec<_> =
        program.policies.iter().map(|(name, text)| sources.add(name.clone(), text.clone())).collect();
    let plan = program.plan.as_ref().map(|text| sources.add("plan.cord", text.clone()));
    let outcome = check(&sources, &policies, plan, &CheckOptions::default());
    for d in &outcome.diagnostics {
        black_box_len(render::human(d, &sources).len());
        black_box_len(render::concise(d, &sources).len());
    }
    black_box_len(render::json(&outcome.diagnostics, &sources).to_string().len());
    black_box_len(render::summary(&outcome.diagnostics).len());
    let elapsed = cpu_time().saturating_sub(start);
    assert!(elapsed < HANG_LIMIT, "checking took {elapsed:?} of CPU time (limit {HANG_LIMIT:?})");
    outcome
}

/// The CPU time the process `pid` has used, user and system, from `/proc/PID/stat`.
fn child_cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: fields are counted after its `)`; utime and
    // stime are fields 14 and 15.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let ticks: u64 = fields.next()?.parse::<u64>().ok()? + fields.next()?.parse::<u64>().ok()?;
    let per_second = rustix::param::clock_ticks_per_second();
    Some(Duration::from_millis(ticks.saturating_mul(1000) / per_second.max(1)))
}

/// The CPU time this thread has used.
fn cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(u64::try_from(t.tv_sec).unwrap_or(0), u32::try_from(t.tv_nsec).unwrap_or(0))
}

fn black_box_len(n: usize) {
    std::hint::black_box(n);
}

// ---------------------------------------------------------------------------------------------
// Inputs for the property tests.

/// Every keyword and punctuation token, and literals and fragments that stress the lexer.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "let", "fn", "if", "else", "match", "for", "in", "type", "enum", "linear", "opaque", "measure",
    "capability", "tool", "const", "entry", "true", "false", "as", "agent", "(", ")", "[", "]",
    "{", "}", ",", ";", ":", "::", ".", "->", "=>", "|", "||", "&", "&&", "!", "!=", "=", "==",
    "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "@", "_", "x", "xs", "s", "v", "Int", "Bool",
    "String", "Float", "List", "Option", "Result", "Some", "None", "Ok", "Err", "Session", "Repo",
    "gh", "len", "map", "fold", "to_string", "0", "1", "-1", "2.5", "1e3", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "99999999999999999999999", "\"\"", "\"a\"",
    "\"\\n\\u{1F600}\"", "\"unterminated", "\"\\q\"", "//", "///", "/*", "*/", "\n", "\t", "\u{FEFF}",
    "\u{e9}", "\u{202E}", "\0", "'", "#", "$", "`", "~", "\\", "@approval(ask)", "@card(", "v > 0",
    "{v: Int | v > 0}", "xs[0]", "p.0", "|n: Int| n", "Shape::Rect", "match x { _ => 0 }",
];

fn token_soup() -> impl Strategy<Value = String> {
    let token = (any::<Index>(), prop_oneof![Just(""), Just(" "), Just("\n")])
        .prop_map(|(i, sep)| format!("{}{sep}", TOKENS[i.index(TOKENS.len())]));
    proptest::collection::vec(token, 0..200).prop_map(|tokens| tokens.concat())
}

/// A corpus file, split as `tests/corpus/README.md` says: `//@ policy: PATH` lines name policy
/// modules (relative to the repository root), and text before a `//@ plan` line is an inline
/// policy. Files under a `policies/` folder are policy modules themselves.
#[derive(Debug)]
struct CorpusFile {
    name: String,
    text: String,
    policies: Vec<(String, String)>,
    is_policy: bool,
}

fn corpus() -> &'static [CorpusFile] {
    static FILES: OnceLock<Vec<CorpusFile>> = OnceLock::new();
    FILES.get_or_init(|| {
        let root = repo_root();
        let paths = cord_files(&root.join("tests/corpus"));
        let files: Vec<CorpusFile> = paths
            .iter()
            .map(|path| {
                let text = read(path);
                let name = path.strip_prefix(&root).unwrap_or(path).display().to_string();
                let policies = split_corpus_file(&text)
                    .policy_paths
                    .into_iter()
                    .map(|p| {
                        let policy = read(&root.join(&p));
                        (p, policy)
                    })
                    .collect();
                let is_policy = path.parent().is_some_and(|d| d.ends_with("policies"));
                CorpusFile { name, text, policies, is_policy }
            })
            .collect();
        assert!(files.len() >= 100, "the corpus has only {} files", files.len());
        files
    })
}

/// The program a (possibly mutated) corpus text stands for.
fn corpus_program(file: &CorpusFile, text: &str) -> Program {
    if file.is_policy {
        return Program { policies: vec![(file.name.clone(), text.to_string())], plan: None };
    }
    let parts = split_corpus_file(text);
    let mut policies = file.policies.clone();
    if let Some(inline) = parts.inline_policy {
        policies.push((format!("{}#policy", file.name), inline));
    }
    Program { policies, plan: Some(parts.plan) }
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Deletes `len` bytes at a position.
    Delete(Index, usize),
    /// Repeats `len` bytes at a position.
    Duplicate(Index, usize),
    /// Swaps two ranges of `len` bytes.
    Swap(Index, Index, usize),
    /// Inserts a token from [`TOKENS`], with spaces around it or not.
    Insert(Index, Index, bool),
    /// Replaces an identifier with another identifier of the text.
    Rename(Index, Index),
    /// Deletes an identifier, a number or an operator.
    DeleteToken(Index),
    /// Replaces a binary operator with another one from [`OPERATORS`].
    Operator(Index, Index),
    /// Replaces an integer literal with one from [`NUMBERS`].
    Number(Index, Index),
}

/// Mutations that keep the text parsing more often come first in weight: a text with a syntax
/// error gets no further than the parser's recovery.
fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => (any::<Index>(), 1..24usize).prop_map(|(i, n)| Mutation::Delete(i, n)),
        1 => (any::<Index>(), 1..24usize).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
        1 => (any::<Index>(), any::<Index>(), 1..16usize).prop_map(|(a, b, n)| Mutation::Swap(a, b, n)),
        2 => (any::<Index>(), any::<Index>(), any::<bool>()).prop_map(|(i, t, s)| Mutation::Insert(i, t, s)),
        2 => any::<Index>().prop_map(Mutation::DeleteToken),
        3 => (any::<Index>(), any::<Index>()).prop_map(|(i, j)| Mutation::Rename(i, j)),
        3 => (any::<Index>(), any::<Index>()).prop_map(|(i, j)| Mutation::Operator(i, j)),
        3 => (any::<Index>(), any::<Index>()).prop_map(|(i, j)| Mutation::Number(i, j)),
    ]
}

const OPERATORS: &[&str] = &["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"];

const NUMBERS: &[&str] =
    &["0", "1", "2", "-1", "10", "100000", "2147483648", "9223372036854775807", "-9223372036854775807", "0.5", "1e308"];

/// Byte ranges of `text` that are one of [`OPERATORS`] on their own (not part of `->`, `=>`).
fn operators(text: &[u8]) -> Vec<(usize, usize)> {
    let is_op = |b: u8| b"+-*/%<>=!&|".contains(&b);
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if is_op(text[i]) {
            let start = i;
            while i < text.len() && is_op(text[i]) {
                i += 1;
            }
            if OPERATORS.iter().any(|op| op.as_bytes() == &text[start..i]) {
                out.push((start, i));
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Byte ranges of the integer literals of `text`.
fn numbers(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b.is_ascii_alphabetic() || b == b'_' {
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
        } else if b.is_ascii_digit() {
            let start = i;
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

/// Replaces the `at`-th of `ranges` with `with`; does nothing if there is none.
fn replace_one(text: &mut Vec<u8>, ranges: &[(usize, usize)], at: &Index, with: &[u8]) {
    if ranges.is_empty() {
        return;
    }
    let (s, e) = ranges[at.index(ranges.len())];
    text.splice(s..e, with.iter().copied());
}

/// Byte ranges of the identifiers (and keywords) in `text`.
fn identifiers(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            out.push((start, i));
        } else if b.is_ascii_digit() {
            while i < text.len() && text[i].is_ascii_alphanumeric() {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

fn mutate(text: &mut Vec<u8>, m: &Mutation) {
    let len = text.len();
    match m {
        Mutation::Delete(at, n) if len > 0 => {
            let start = at.index(len);
            text.drain(start..(start + n).min(len));
        }
        Mutation::Duplicate(at, n) if len > 0 => {
            let start = at.index(len);
            let piece = text[start..(start + n).min(len)].to_vec();
            text.splice(start..start, piece);
        }
        Mutation::Swap(a, b, n) if len >= 2 * n => {
            // Two ranges that do not overlap: [x, x+n) and [y, y+n) with x + n <= y.
            let x = a.index(len - 2 * n + 1);
            let y = x + n + b.index(len - x - 2 * n + 1);
            let first = text[x..x + n].to_vec();
            let second = text[y..y + n].to_vec();
            text.splice(y..y + n, first);
            text.splice(x..x + n, second);
        }
        Mutation::Insert(at, token, spaced) => {
            let pos = if len == 0 { 0 } else { at.index(len + 1) };
            let token = TOKENS[token.index(TOKENS.len())];
            let piece = if *spaced { format!(" {token} ") } else { token.to_string() };
            text.splice(pos..pos, piece.into_bytes());
        }
        Mutation::Rename(at, with) => {
            let ids = identifiers(text);
            if ids.is_empty() {
                return;
            }
            let names: Vec<Vec<u8>> =
                ids.iter().map(|&(s, e)| text[s..e].to_vec()).collect::<BTreeSet<_>>().into_iter().collect();
            let name = names[with.index(names.len())].clone();
            replace_one(text, &ids, at, &name);
        }
        Mutation::DeleteToken(at) => {
            let mut tokens = identifiers(text);
            tokens.extend(numbers(text));
            tokens.extend(operators(text));
            replace_one(text, &tokens, at, b"");
        }
        Mutation::Operator(at, with) => {
            let op = OPERATORS[with.index(OPERATORS.len())];
            replace_one(text, &operators(text), at, op.as_bytes());
        }
        Mutation::Number(at, with) => {
            let n = NUMBERS[with.index(NUMBERS.len())];
            replace_one(text, &numbers(text), at, n.as_bytes());
        }
        _ => {}
    }
}

/// Forked, so that a crash fails the case, and a case that runs past the timeout fails too.
/// `PROPTEST_CASES` overrides `cases`. Failures are not persisted: a failure found here becomes
/// a plain `#[test]` with the shrunk input.
fn forked(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(cases),
        timeout: HANG_LIMIT.as_millis() as u32,
        max_shrink_time: 120_000,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(SEED),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(forked(256))]

    #[test]
    fn arbitrary_strings(text in any::<String>(), with_policy in any::<bool>()) {
        let mut program = Program::plan(text);
        if with_policy {
            program = program.with_policy("policies/github.cord", github_policy());
        }
        check_program(&program);
    }

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check_program(&Program::plan(String::from_utf8_lossy(&bytes)));
    }

    #[test]
    fn token_soup_plans(text in token_soup(), with_policy in any::<bool>()) {
        let mut program = Program::plan(text);
        if with_policy {
            program = program.with_policy("policies/github.cord", github_policy());
        }
        check_program(&program);
    }

    #[test]
    fn token_soup_policies(text in token_soup()) {
        check_program(&Program { policies: vec![("policy.cord".into(), text)], plan: None });
    }
}

/// A corpus file with up to three mutations applied.
fn mutated_corpus_case() -> impl Strategy<Value = (Index, Vec<Mutation>)> {
    (any::<Index>(), proptest::collection::vec(mutation(), 1..4))
}

fn mutated_program(file: &Index, mutations: &[Mutation]) -> Program {
    let file = &corpus()[file.index(corpus().len())];
    let mut bytes = file.text.clone().into_bytes();
    for m in mutations {
        mutate(&mut bytes, m);
    }
    corpus_program(file, &String::from_utf8_lossy(&bytes))
}

proptest! {
    #![proptest_config(forked(512))]

    #[test]
    fn mutated_corpus((file, mutations) in mutated_corpus_case()) {
        check_program(&mutated_program(&file, &mutations));
    }
}

/// `mutated_corpus` runs forked, so it cannot count its own cases. This draws cases from the
/// same generator and counts how many get past the parser: a program with a syntax error is
/// not type checked, so mutations that mostly broke the syntax would leave the checker, the
/// part that property is mostly about, untested.
#[test]
fn mutated_corpus_programs_mostly_reach_the_checker() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let cases = 200;
    let mut parsed = 0;
    for _ in 0..cases {
        let (file, mutations) = mutated_corpus_case().new_tree(&mut runner).unwrap().current();
        let outcome = check_program(&mutated_program(&file, &mutations));
        if !outcome.diagnostics.iter().any(|d| matches!(d.code, Code::SyntaxError | Code::NestingTooDeep)) {
            parsed += 1;
        }
    }
    println!("{parsed} of {cases} mutated programs parse");
    // Mutations that keep the text parsing are weighted up (see `mutation`): at least 40% of
    // the mutated programs must parse (104 of these 200 did when this floor was set; the draw is
    // deterministic).
    assert!(parsed * 100 >= 40 * cases, "only {parsed} of {cases} mutated programs parse (the floor is 40%)");
}

// ---------------------------------------------------------------------------------------------
// Deep nesting and long chains.

/// Every shape is checked at these depths, and at every depth up to a little past the parser's
/// limit, so that the deepest tree the parser lets through goes through the checker (a level
/// of a shape may count for more than one level of nesting).
const DEPTHS: [usize; 2] = [10_000, 100_000];

fn depths() -> impl Iterator<Item = usize> {
    (1..=MAX_NESTING + 8).chain(DEPTHS)
}

/// What a deep program must give besides not crashing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// Nested in the syntax: beyond `MAX_NESTING`, so `nesting-too-deep` must be reported.
    TooDeep,
    /// Long but flat in the syntax: any diagnostics, or acceptance.
    Anything,
}

/// The environment variable that tells a child process which test it runs.
const CHILD: &str = "CORDON_ROBUSTNESS_CHILD";

/// Runs `body` in a child process of this test binary that runs test `name` alone, on a normal
/// test thread: the test is the same, only the process around it is new. A panic, a stack
/// overflow (which aborts the process) or a child that does not finish in time fails `name`.
fn isolated(name: &str, deadline: Duration, body: impl FnOnce()) {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        body();
        return;
    }
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("no test executable: {e}"));
    let mut child = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start a child test process: {e}"));
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut out = String::new();
            if let Some(mut pipe) = pipe {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                out = String::from_utf8_lossy(&bytes).into_owned();
            }
            out
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let limit = deadline;
    // The child's CPU time against the limit, so a loaded machine does not stretch it; its wall
    // time against a far larger one, should its CPU time be unreadable or the child be stopped.
    let backstop = Instant::now() + 20 * limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if child_cpu_time(child.id()).is_some_and(|t| t > limit) || Instant::now() > backstop => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("cannot wait for the child test process: {e}"),
        }
    };
    let out = format!("{}{}", stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
    let tail: String = {
        let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    };
    match status {
        None => panic!("{name}: still running after {limit:?}: a hang\n{tail}"),
        Some(s) if s.success() => {
            // Show what the child found (depths, times, codes) with `--nocapture`.
            for line in out.lines().filter_map(|l| l.find("deep: ").map(|i| &l[i..])) {
                println!("{line}");
            }
        }
        Some(s) if out.contains("has overflowed its stack") => panic!("{name}: stack overflow ({s})\n{tail}"),
        Some(s) if s.code().is_none() => panic!("{name}: the process crashed ({s})\n{tail}"),
        Some(s) => panic!("{name}: failed ({s})\n{tail}"),
    }
}

/// Checks `make(depth)` for each of [`depths`].
fn check_deep(name: &str, expect: Expect, make: fn(usize) -> Program) {
    for depth in depths() {
        let program = make(depth);
        let start = Instant::now();
        let outcome = check_program(&program);
        let codes: BTreeSet<&str> = outcome.diagnostics.iter().map(|d| d.code.as_str()).collect();
        if depth >= DEPTHS[0] {
            println!("deep: {name} {depth}: {:?}, {:?}", start.elapsed(), codes);
        }
        if expect == Expect::TooDeep && depth >= DEPTHS[0] {
            assert!(
                outcome.diagnostics.iter().any(|d| d.code == Code::NestingTooDeep),
                "{name} {depth}: expected nesting-too-deep, got {codes:?}"
            );
        }
        // Dropping the tree (and the outcome) is part of the test: it recurses too.
        drop(outcome);
        drop(program);
    }
}

fn repeat(s: &str, n: usize) -> String {
    s.repeat(n)
}

/// `prefix` n times, `middle`, `suffix` n times.
fn nest(prefix: &str, middle: &str, suffix: &str, n: usize) -> String {
    format!("{}{middle}{}", repeat(prefix, n), repeat(suffix, n))
}

/// `first op first op ...` with `n` operands.
fn chain(first: &str, op: &str, n: usize) -> String {
    let mut s = String::with_capacity(n * (first.len() + op.len()));
    s.push_str(first);
    for _ in 1..n {
        s.push_str(op);
        s.push_str(first);
    }
    s
}

macro_rules! deep_tests {
    ($($name:ident: $expect:ident, $make:expr;)*) => {$(
        #[test]
        fn $name() {
            // Each check is under HANG_LIMIT; the two large ones dominate.
            isolated(stringify!($name), 4 * HANG_LIMIT, || check_deep(stringify!($name), Expect::$expect, $make));
        }
    )*};
}

deep_tests! {
    deep_parentheses: TooDeep, |n| Program::plan(nest("(", "1", ")", n));
    deep_blocks: TooDeep, |n| Program::plan(nest("{ ", "1", " }", n));
    deep_ifs: TooDeep, |n| Program::plan(nest("if true { ", "1", " } else { 0 }", n));
    deep_closures: TooDeep, |n| Program::plan(nest("|x: Int| ", "x", "", n));
    deep_closure_blocks: TooDeep, |n| Program::plan(nest("|x: Int| { ", "x", " }", n));
    deep_lists: TooDeep, |n| Program::plan(nest("[", "1", "]", n));
    deep_tuples: TooDeep, |n| Program::plan(nest("(1, ", "1", ")", n));
    deep_unary_minus: TooDeep, |n| Program::plan(nest("-", "1", "", n));
    deep_unary_not: TooDeep, |n| Program::plan(nest("!", "true", "", n));
    deep_calls_in_arguments: TooDeep, |n| Program::plan(format!("fn f(x: Int) -> Int {{ x }}\n{}", nest("f(", "1", ")", n)));
    deep_matches: TooDeep, |n| Program::plan(nest("match 1 { _ => ", "1", " }", n));
    deep_fors: TooDeep, |n| Program::plan(format!("let xs = [1];\n{}", nest("for i in xs { ", "", " }", n)));
    deep_records: TooDeep, |n| Program::plan(nest("P { x: ", "1", " }", n));
    deep_holes: TooDeep, |n| Program::plan(nest("agent[Int](\"q\", ", "1", ")", n));
    deep_types: TooDeep, |n| Program::plan(format!("let x: {} = None;\nx", nest("Option[", "Int", "]", n)));
    deep_fn_types: TooDeep, |n| Program::plan(format!("fn f(g: {}) -> Int {{ 0 }}", nest("fn(Int) -> ", "Int", "", n)));
    deep_refinements: TooDeep, |n| Program::plan(format!("let x: {} = 1;", nest("{v: ", "Int", " | v > 0}", n)));
    deep_tuple_patterns: TooDeep, |n| Program::plan(format!("let {} = 1;", nest("(", "a", ")", n)));
    deep_variant_patterns: TooDeep, |n| Program::plan(format!("let x = None;\nmatch x {{ {} => 1, _ => 0 }}", nest("Some(", "v", ")", n)));
    deep_policy_types: TooDeep, |n| Program::default().with_policy("policy.cord", format!("capability C {{\n  tool t(x: {})\n}}", nest("List[", "Int", "]", n)));
    deep_block_comments: Anything, |n| Program::plan(format!("{}1", nest("/* ", "", " */", n)));
    chain_of_additions: Anything, |n| Program::plan(format!("let a = 1;\n{}", chain("a", " + ", n)));
    chain_of_subtractions: Anything, |n| Program::plan(format!("let a = 1;\n{}", chain("a", " - ", n)));
    chain_of_ands: Anything, |n| Program::plan(format!("let a = true;\n{}", chain("a", " && ", n)));
    chain_of_string_joins: Anything, |n| Program::plan(format!("let a = \"x\";\n{}", chain("a", " + ", n)));
    chain_of_mixed_operators: Anything, |n| Program::plan(format!("let a = 2;\n{} > 0", chain("a", " * 2 + a - ", n)));
    chain_of_comparisons: Anything, |n| Program::plan(format!("let a = 1;\n{}", chain("a", " < ", n)));
    chain_of_else_ifs: Anything, |n| Program::plan(format!("let x = 1;\nif x == 0 {{ 0 }}{} else {{ 1 }}", (1..n).map(|i| format!(" else if x == {i} {{ {i} }}")).collect::<String>()));
    // `.abs()` would do, but see `exponential_term_for_chained_abs`.
    chain_of_methods: Anything, |n| Program::plan(format!("let x = -1;\nx{}", repeat(".to_string().len()", n / 2)));
    chain_of_fields: Anything, |n| Program::plan(format!("let p = (1, 2);\np{}", repeat(".0", n)));
    chain_of_indexes: Anything, |n| Program::plan(format!("let xs = [1];\nxs{}", repeat("[0]", n)));
    chain_of_calls: Anything, |n| Program::plan(format!("fn f(x: Int) -> Int {{ x }}\nf{}", repeat("(1)", n)));
    chain_of_casts: Anything, |n| Program::plan(format!("1{}", repeat(" as Int", n)));
    many_statements: Anything, |n| Program::plan((0..n).map(|i| format!("let x{i} = {i};\n")).collect::<String>());
    many_shadowing_lets: Anything, |n| Program::plan(format!("let x = 0;\n{}x", repeat("let x = x + 1;\n", n)));
    deep_mixed: TooDeep, |n| Program::plan(mixed(n));
}

/// Nesting of every kind in turn, `n` levels in all, each level an expression of type `Int`,
/// so that a tree just under the limit is well typed and goes through the whole checker.
fn mixed(n: usize) -> String {
    const LEVELS: [(&str, &str); 9] = [
        ("(", ")"),
        ("{ let y = 1; ", " }"),
        ("if y > 0 { ", " } else { 0 }"),
        ("(|z: Int| ", ")(1)"),
        ("[", "][0]"),
        ("-", ""),
        ("match Some(1) { Some(w) => ", ", None => 0 }"),
        ("f(", ")"),
        ("(1, ", ").1"),
    ];
    let mut open = String::from("fn f(x: {v: Int | v > 0 || v <= 0}) -> Int { x }\nlet y = 1;\n");
    let mut close = String::new();
    for i in 0..n {
        let (o, c) = LEVELS[i % LEVELS.len()];
        open.push_str(o);
        close.insert_str(0, c);
    }
    format!("{open}y{close}")
}

// ---------------------------------------------------------------------------------------------
// Problems the tests above once found, each reduced to a small input and kept as a regression
// test; each runs in a child process that is stopped at the deadline.

/// Checks `plan` in a child process and fails if it takes longer than [`HANG_LIMIT`].
fn finishes_in_time(name: &str, plan: String) {
    isolated(name, HANG_LIMIT + Duration::from_secs(5), || {
        let start = Instant::now();
        let outcome = check_program(&Program::plan(plan));
        println!("deep: {name}: {:?}, accepted: {}", start.elapsed(), outcome.accepted());
    });
}

/// `abs` is `ite(0 <= a, a, -a)`, three copies of its argument: unless each result is named,
/// 16 chained calls make a term of 3^16 nodes (more than a minute). The parser allows 128.
#[test]
fn exponential_term_for_chained_abs() {
    finishes_in_time("exponential_term_for_chained_abs", format!("let x = -1;\nx{}", ".abs()".repeat(16)));
}

/// The same for `min` and `max`, two copies of each argument.
#[test]
fn exponential_term_for_chained_max() {
    finishes_in_time("exponential_term_for_chained_max", format!("let x = -1;\nx{}", ".max(1)".repeat(24)));
}

/// Choosing the facts relevant to an obligation must not be quadratic: a chain of 30,000 `let`s
/// before one obligation once took about 20 s, when each pass over the facts added one link.
#[test]
fn quadratic_fact_selection_on_long_let_chain() {
    let lets = "let x = x + 1;\n".repeat(30_000);
    finishes_in_time(
        "quadratic_fact_selection_on_long_let_chain",
        format!("let x = 0;\n{lets}let y: {{v: Int | v > 0}} = x;\ny"),
    );
}

/// A long chain of aliases is cut at the nesting limit instead of recursing down all of it
/// (2,000 aliases once overflowed the stack).
#[test]
fn long_alias_chain() {
    let n = 2_000;
    let aliases: String = (0..n).map(|i| format!("type A{i:06} = Option[A{:06}]\n", i + 1)).collect();
    finishes_in_time("long_alias_chain", format!("{aliases}type A{n:06} = Int\n1"));
}

/// A long chain of records, each holding the next: whether they are linear is computed without
/// following the chain recursively (60,000 records once overflowed the stack).
#[test]
fn long_record_chain() {
    let n = 60_000;
    let records: String = (0..n).map(|i| format!("type R{i} = {{ f: R{} }}\n", i + 1)).collect();
    finishes_in_time("long_record_chain", format!("{records}type R{n} = {{ f: Int }}\nlet x: Option[R0] = None;\n1"));
}

/// Aliases that double in size with each line are stopped by a size limit.
#[test]
fn doubling_aliases() {
    let aliases: String = (1..40).map(|i| format!("type A{i} = (A{0}, A{0})\n", i - 1)).collect();
    finishes_in_time("doubling_aliases", format!("type A0 = Int\n{aliases}1"));
}
