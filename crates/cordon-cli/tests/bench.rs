//! `cordon bench` as a user runs it: the table, or the report as JSON; exit 0 when no attack
//! or over-reach succeeded; a mode or suite that does not exist is a usage error naming the
//! ones that do.
#![allow(clippy::unwrap_used)] // a test may fail loudly

use std::path::Path;

mod common;

fn suites() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench").display().to_string()
}

#[test]
fn the_bench_prints_its_table_or_its_report_as_json() {
    let dir = common::workdir("cli-bench", "table");
    let dirs = suites();
    let run = common::cordon(&dir, &["bench", "--suites-dir", &dirs, "--mode", "compromised-planner"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("suite ") && run.stdout.lines().next().unwrap().contains(" mode "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("attacks and over-reaches that succeeded: 0"), "{}", run.stdout);

    let run = common::cordon(&dir, &["bench", "--suites-dir", &dirs, "--task", "lunch", "--format", "json", "-v"]);
    assert_eq!(run.code, 0, "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["version"], 1);
    let cases = report["cases"].as_array().unwrap();
    assert!(!cases.is_empty() && cases.iter().all(|c| c["task"] == "lunch"), "{}", run.stdout);

    let run = common::cordon(&dir, &["bench", "--suites-dir", &dirs, "--task", "lunch", "-v"]);
    assert!(
        run.stdout.contains("chat oracle normal lunch: done; 0 card(s); utility yes\n    Up for lunch: dave, bob."),
        "{}",
        run.stdout
    );
}

#[test]
fn an_unknown_mode_or_suite_is_a_usage_error() {
    let dir = common::workdir("cli-bench", "unknown");
    let run = common::cordon(&dir, &["bench", "--suites-dir", &suites(), "--mode", "live"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("there is no mode `live`; the modes are: oracle, worst-case, compromised-planner"),
        "{}",
        run.stderr
    );
    let run = common::cordon(&dir, &["bench", "--suites-dir", &suites(), "--suite", "bank"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("there is no suite `bank`"), "{}", run.stderr);
}
