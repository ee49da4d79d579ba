//! Every limit ends a runaway plan with `limit-reached`, quickly, and the host survives: no
//! panic, no overflow of its own stack, no allocation of what the limit forbids.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::time::{Duration, Instant};

use common::{Recorder, checked, checked_with, config, no_tools};
use cordon_runtime::{Config, Json, Limits, Program, Run, Sessions, Step, Value};

/// Runs `program` with `limits`; it must end with `limit-reached` whose message contains
/// `says`, in well under a second or two.
fn assert_limit(program: &Program, limits: Limits, says: &str) {
    let started = Instant::now();
    let report = cordon_engine::run(program, &Sessions::default(), &config(limits), &mut no_tools());
    let elapsed = started.elapsed();
    let Err(e) = report.result else { panic!("ran to the end: {:?}", report.result) };
    assert_eq!(e.kind.code().as_str(), "limit-reached", "{e}");
    assert!(e.message.contains(says), "`{says}` not in: {}", e.message);
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

const ENDLESS_RECURSION: &str = "fn f(n: Int) -> Int { f(n + 1) }\nf(0)";

#[test]
fn endless_recursion_runs_out_of_fuel_when_depth_is_no_object() {
    let limits = Limits { fuel: 100_000, max_call_depth: usize::MAX, ..Limits::default() };
    assert_limit(&checked(ENDLESS_RECURSION), limits, "fuel");
}

#[test]
fn endless_recursion_reaches_the_depth_limit_first_by_default() {
    assert_limit(&checked(ENDLESS_RECURSION), Limits::default(), "nested deeper");
}

#[test]
fn a_long_loop_runs_out_of_fuel() {
    let plan = "for i in range(0, 1000) { for j in range(0, 1000) { () } }";
    assert_limit(&checked(plan), Limits { fuel: 10_000, ..Limits::default() }, "fuel");
    let plan = "range(0, 1000).fold(0, |a, i| range(0, 1000).fold(a, |b, j| b + 1))";
    assert_limit(&checked(plan), Limits { fuel: 10_000, ..Limits::default() }, "fuel");
}

#[test]
fn deep_recursion_reaches_the_depth_limit_with_plenty_of_fuel() {
    let plan = "fn down(n: Int) -> Int { if n == 0 { 0 } else { 1 + down(n - 1) } }\ndown(1000000)";
    let limits = Limits { fuel: u64::MAX, max_call_depth: 10_000, ..Limits::default() };
    assert_limit(&checked(plan), limits, "nested deeper than the limit of 10000");
}

#[test]
fn deep_recursion_within_the_limits_does_not_use_the_host_stack() {
    // A test thread has a small stack; the interpreter's frames live on the heap.
    let plan = "fn down(n: Int) -> Int { if n == 0 { 0 } else { 1 + down(n - 1) } }\ndown(200000)";
    let limits = Limits { max_call_depth: 300_000, ..Limits::default() };
    let report = cordon_engine::run(&checked(plan), &Sessions::default(), &config(limits), &mut no_tools());
    assert_eq!(report.result.map(|v| v.value), Ok(Value::Int(200_000)));
}

#[test]
fn doubling_a_string_reaches_the_memory_limits() {
    let plan = r#"range(0, 64).fold("x", |acc, i| acc + acc)"#;
    assert_limit(&checked(plan), Limits::default(), "over the limit of");
    let small = Limits { max_memory_bytes: 1 << 20, ..Limits::default() };
    assert_limit(&checked(plan), small, "memory limit");
    let plan = r#"range(0, 64).fold(["x"], |acc, i| acc.concat(acc))"#;
    assert_limit(&checked(plan), Limits::default(), "over the limit of");
}

#[test]
fn a_huge_range_is_refused_before_it_is_allocated() {
    assert_limit(&checked("range(0, 1000000000).len()"), Limits::default(), "a list of 1000000000 elements");
    let plan = "range(-9223372036854775807 - 1, 9223372036854775807).len()";
    assert_limit(&checked(plan), Limits::default(), "over the limit");
}

#[test]
fn string_builtins_refuse_huge_results_before_building_them() {
    let huge = [
        r#""ab".repeat(9223372036854775807)"#,
        r#""ab".repeat(100000000)"#,
        r#""x".pad_left(9223372036854775807, " ")"#,
        r#""x".pad_right(100000000, "é")"#,
        r#""aaaa".repeat(1000000).replace("a", "bbbbbbbbbb")"#,
        r#""abc".repeat(1000000).replace("", "xxxxxx")"#,
    ];
    for plan in huge {
        assert_limit(&checked(plan), Limits::default(), "over the limit of");
    }
    // Within the size limit, the memory limit still counts what was built.
    let small = Limits { max_memory_bytes: 1 << 20, ..Limits::default() };
    assert_limit(&checked(r#""ab".repeat(1000000)"#), small, "memory limit");
}

#[test]
fn regular_expressions_refuse_huge_inputs_and_match_lists() {
    assert_limit(&checked(r#""a".repeat(2000000).matches("b")"#), Limits::default(), "at most 1048576 bytes");
    let few = Limits { max_list_len: 1000, ..Limits::default() };
    assert_limit(&checked(r#""ab".repeat(10000).find_all("")"#), few, "over the limit of 1000");
}

#[test]
fn deeply_nested_values_are_refused_before_they_can_overflow_the_host_stack() {
    let plan =
        "enum Chain { End, Link(Chain) }\nrange(0, 100000).fold(Chain::End, |c, i| Chain::Link(c)) == Chain::End";
    assert_limit(&checked(plan), Limits::default(), "nested deeper");
}

#[test]
fn a_slow_loop_reaches_the_wall_clock_limit() {
    let plan = "range(0, 100000).fold(0, |a, i| range(0, 100000).fold(a, |b, j| b + 1))";
    let limits = Limits { wall_clock: Duration::from_millis(50), ..Limits::default() };
    assert_limit(&checked(plan), limits, "time limit");
}

#[test]
fn a_loop_of_tool_calls_reaches_the_tool_call_limit() {
    let policy = "capability Log { tool log(n: Int) }\nentry(l: Log) -> ()";
    let program = checked_with(policy, "for i in range(0, 1000) { l.log(i) }");
    let limits = Limits { max_tool_calls: 5, ..Limits::default() };
    let mut host = Recorder::new(|_| Ok(Json::Null));
    let report = cordon_engine::run(&program, &Sessions::default(), &config(limits), &mut host);
    let e = report.result.expect_err("the loop must be stopped");
    assert_eq!(e.kind.code().as_str(), "limit-reached");
    assert_eq!(host.seen(), ["log(0)", "log(1)", "log(2)", "log(3)", "log(4)"]);
}

#[test]
fn limits_apply_to_constants_too() {
    let plan = "const BIG: List[Int] = range(0, 1000000000);\nBIG.len()";
    assert_limit(&checked(plan), Limits::default(), "over the limit");
}

#[test]
fn a_closure_written_in_place_computes_and_costs_what_one_passed_by_name_does() {
    // A higher-order builtin runs a literal closure in its own loop rather than calling it;
    // the result, its label and the fuel (a unit per call) must not tell the two apart.
    let rows = [
        ("xs.map(|x: Int| x * s)", "xs.map(f1)"),
        ("xs.filter(|x: Int| x % s == 0)", "xs.filter(f2)"),
        ("xs.fold(s, |a: Int, x: Int| a + x * s)", "xs.fold(s, f3)"),
        ("xs.any(|x: Int| x == s)", "xs.any(f2)"),
        ("xs.all(|x: Int| x == s)", "xs.all(f2)"),
        ("xs.sort_by(|x: Int| x % s)", "xs.sort_by(f4)"),
        ("xs.count_by(|x: Int| x % s)", "xs.count_by(f4)"),
    ];
    let prelude = "
let xs = range(0, 20);
let s = 3;
let f1 = |x: Int| x * s;
let f2 = |x: Int| x % s == 0;
let f3 = |a: Int, x: Int| a + x * s;
let f4 = |x: Int| x % s;
";
    let outcome = |expr: &str| {
        let program = checked(&format!("{prelude}{expr}"));
        let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
        let Ok(Step::Done(v)) = run.proceed() else { panic!("{expr} must run to its end") };
        (v.value.to_string(), v.label.dc(), run.fuel_used())
    };
    for (in_place, by_name) in rows {
        assert_eq!(outcome(in_place), outcome(by_name), "{in_place} against {by_name}");
    }
}

/// Runs `plan` with `max_memory_bytes` of memory (and `fuel`): its value, or the error.
fn run_with_memory(plan: &str, max_memory_bytes: u64, fuel: u64) -> Result<Value, String> {
    let limits = Limits { max_memory_bytes, fuel, ..Limits::default() };
    let report = cordon_engine::run(&checked(plan), &Sessions::default(), &config(limits), &mut no_tools());
    report.result.map(|v| v.value).map_err(|e| e.message)
}

#[test]
fn memory_the_run_let_go_does_not_count_against_the_limit() {
    // Each inner list is 400 KB and dropped at once: 40 MB allocated in all, under 1 MB held.
    let plan = "range(0, 100).fold(0, |a, i| a + range(0, 10000).len())";
    assert_eq!(run_with_memory(plan, 1 << 20, 50_000_000), Ok(Value::Int(1_000_000)));
    // A string grown a character at a time: each step allocates its whole length again.
    let plan = r#"range(0, 20000).fold("", |s, i| s + "x").len()"#;
    assert_eq!(run_with_memory(plan, 1 << 20, 50_000_000), Ok(Value::Int(20_000)));
    // The issue's nested fold, 10,000 × 10,000 small values, in the default limit of 1 GiB.
    let plan = "range(0, 10000).fold(0, |a, i| a + range(0, 10000).len())";
    let limits = Limits::default();
    assert_eq!(run_with_memory(plan, limits.max_memory_bytes, limits.fuel), Ok(Value::Int(100_000_000)));
}

#[test]
fn memory_the_run_keeps_counts_against_the_limit() {
    // 100 lists of 400 KB, all kept.
    let plan = "range(0, 100).map(|i| range(0, 10000)).len()";
    let error = run_with_memory(plan, 1 << 20, 50_000_000).unwrap_err();
    assert!(error.contains("holds more than the memory limit of 1048576 bytes"), "{error}");
    // Kept in a closure's captures, or in a labeled box, it is found there too.
    let plan = "let kept = range(0, 100).map(|i| (i, range(0, 10000)));\nlet f = |x: Int| kept.len() + x;\nrange(0, 100).fold(0, |a, i| a + range(0, 10000).len()) + f(1)";
    assert!(run_with_memory(plan, 1 << 20, 50_000_000).unwrap_err().contains("memory limit"));
}

#[test]
fn counting_what_the_run_holds_costs_it_fuel() {
    // 900 KB kept while 40 KB lists come and go: near the limit, each count finds the 22,500
    // values kept. The counts are paid in fuel, so the run cannot spend unbounded time on them.
    let plan = "let kept = range(0, 22500);\nrange(0, 400).fold(0, |a, i| a + range(0, 1000).len()) + kept.len()";
    assert_eq!(run_with_memory(plan, 1 << 20, 50_000_000), Ok(Value::Int(422_500)));
    let error = run_with_memory(plan, 1 << 20, 200_000).unwrap_err();
    assert!(error.contains("fuel"), "{error}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// `k` lists of `n` elements kept, in a list rebuilt at every step (the old one let go),
    /// while a list of `m` is made and dropped at every step: the run fails exactly when what
    /// it keeps does not fit the limit, however much it allocated along the way.
    #[test]
    fn a_run_fails_when_what_it_holds_does_not_fit_and_only_then(
        k in 1u64..40,
        n in 1u64..3000,
        m in 1000u64..20000,
        limit in (64u64 << 10)..(4u64 << 20),
    ) {
        let plan = format!(
            "range(0, {k}).fold([], |acc, i| {{ let dropped = range(0, {m}).len(); acc.concat([range(0, {n})]) }}).len()"
        );
        let kept = k * n * 40;
        let result = run_with_memory(&plan, limit, 50_000_000);
        if kept > limit {
            proptest::prop_assert!(result.is_err(), "held {kept} in a limit of {limit}: {result:?}");
        }
        // What else it holds at a time: the list being dropped, the list being rebuilt and its
        // copy, the newest list and its one-element wrapper, and the machine's own few values.
        if kept + m * 40 + 4 * k * 40 + 2 * n * 40 + 4096 <= limit {
            proptest::prop_assert_eq!(result, Ok(Value::Int(k as i64)));
        }
    }
}

#[test]
fn allocating_costs_fuel_so_the_work_of_copying_is_bounded() {
    // Each step puts a character before the whole text, moving it: 5 GB moved in all, never
    // more than 100 KB held.
    let plan = r#"range(0, 100000).fold("", |s, i| "x" + s).len()"#;
    let error = run_with_memory(plan, 1 << 30, 1_000_000).unwrap_err();
    assert!(error.contains("fuel"), "{error}");
    assert_eq!(run_with_memory(plan, 1 << 30, 50_000_000), Ok(Value::Int(100_000)));
}

#[test]
fn a_fold_that_reads_its_accumulator_once_extends_it_in_place() {
    // Appended to, the text is extended where it is: the run's work, fuel included, grows with
    // the number of steps, not with their square (the fuel above would not do for copies).
    for plan in [
        r#"range(0, 100000).fold("", |s, i| s + "x").len()"#,
        r#"range(0, 100000).fold("", |s, i| s + (i % 10).to_string()).len()"#,
        r#"range(0, 100000).fold("", |s, i| { let c = if i > 0 { "x" } else { "y" }; s + c }).len()"#,
    ] {
        assert_eq!(run_with_memory(plan, 1 << 30, 1_000_000), Ok(Value::Int(100_000)), "{plan}");
    }
    // Read twice, or inside a closure, it is not moved: the value is the same, the work not.
    let twice = r#"range(0, 3000).fold("", |s, i| if s.len() > 5000000 { s } else { s + "x" }).len()"#;
    assert_eq!(run_with_memory(twice, 1 << 30, 50_000_000), Ok(Value::Int(3000)));
    let inside = r#"range(0, 3000).fold("", |s, i| [1].map(|k| s + "x").first().unwrap_or(s)).len()"#;
    assert_eq!(run_with_memory(inside, 1 << 30, 50_000_000), Ok(Value::Int(3000)));
}

#[test]
fn sort_by_lets_its_keys_go_before_it_makes_the_sorted_list() {
    // The list and the sorted list are 400 KB each, and so are the keys: held with the keys the
    // sort would need 1.2 MB; without them it fits in 1 MiB (kept, as a copy on the machine's
    // stack, this run fails).
    let list = "let xs = range(0, 10000).map(|x| x * 7 % 10000);";
    let sorted = format!("{list}\nxs.sort_by(|x| 10000 - x).len()");
    assert_eq!(run_with_memory(&sorted, 1 << 20, 50_000_000), Ok(Value::Int(10_000)));
    // With the list kept twice over, the sorted list does not fit.
    let held = format!("{list}\nlet ys = xs.map(|x| x + 1);\nxs.sort_by(|x| 10000 - x).len() + ys.len()");
    assert!(run_with_memory(&held, 1 << 20, 50_000_000).unwrap_err().contains("memory limit"));
}
