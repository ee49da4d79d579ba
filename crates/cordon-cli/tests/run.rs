//! `cordon run` end to end on the GitHub examples: exit codes, the trace, JSON output, and a
//! session file that keeps a taint from one run to the next.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::{cordon, workdir as dir_of, yes};

/// A fresh directory for one test.
fn workdir(test: &str) -> std::path::PathBuf {
    dir_of("cli-run", test)
}

/// The path of a GitHub example plan.
fn example(name: &str) -> String {
    common::example(&format!("github/{name}"))
}

#[test]
fn the_benign_example_runs_to_the_end() {
    let dir = workdir("benign");
    let run = cordon(&dir, &["run", "--approve", &yes(&dir), &example("benign.cord")]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("allowed  GitHub.create_issue("), "{}", run.stdout);
    assert!(run.stdout.contains("ran to the end"), "{}", run.stdout);
}

#[test]
fn exfiltrating_a_private_file_is_rejected_before_anything_runs() {
    let run = cordon(&workdir("exfiltrate_private"), &["run", &example("exfiltrate_private.cord")]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("refinement-unproven"), "{}", run.stdout);
    assert!(run.stdout.contains("nothing ran"), "{}", run.stdout);
    assert!(!run.stdout.contains("allowed"), "{}", run.stdout);
}

#[test]
fn exfiltrating_search_results_is_rejected_before_anything_runs() {
    // Every path that reaches the post carries the search's secret: the labels' static
    // analysis refuses the plan before its reads run.
    let run = cordon(&workdir("exfiltrate_via_search"), &["run", &example("exfiltrate_via_search.cord")]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("error[label-flow]: `GitHub.create_issue` would be blocked: the argument `body`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("comes from the plan's text and the result of `GitHub.search_code` (line 14)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("nothing ran"), "{}", run.stdout);
    assert!(!run.stdout.contains("allowed"), "{}", run.stdout);
}

#[test]
fn copying_an_outsiders_issue_is_blocked_at_run_time() {
    // Whether the newest issue is the user's own is known only at run time: the boundary
    // decides, with the real labels.
    let run = cordon(&workdir("injected_issue"), &["run", &example("injected_issue.cord")]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("BLOCKED  GitHub.create_issue("), "{}", run.stdout);
    assert!(run.stdout.contains("[label-flow]"), "{}", run.stdout);
    assert!(run.stdout.contains("stopped at run time (label-flow) after 2 tool calls"), "{}", run.stdout);
    // Labels in words for people.
    assert!(run.stdout.contains("  (public, vouched for by bob or carol or dave or mallory)\n"), "{}", run.stdout);
    assert!(!run.stdout.contains("label <secrecy"), "{}", run.stdout);
}

#[test]
fn json_output_is_one_document_with_status_trace_and_diagnostics() {
    let dir = workdir("json");
    let run = cordon(&dir, &["run", "--format", "json", &example("injected_issue.cord")]);
    assert_eq!(run.code, 1, "{run:?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["status"], "failed");
    let decisions: Vec<&str> =
        json["trace"].as_array().unwrap().iter().map(|e| e["decision"].as_str().unwrap()).collect();
    assert_eq!(decisions, ["allowed", "returned", "allowed", "returned", "blocked"]);
    assert_eq!(json["trace"][4]["code"], "label-flow");
    // JSON keeps the formula.
    assert_eq!(json["trace"][3]["label"], "<secrecy: true, integrity: bob | carol | dave | mallory>");
    assert_eq!(json["diagnostics"]["diagnostics"][0]["code"], "label-flow");

    let run = cordon(&dir, &["run", "--format", "json", "--approve", &yes(&dir), &example("benign.cord")]);
    assert_eq!(run.code, 0, "{run:?}");
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["status"], "done");
    assert!(json["result"][0].as_str().unwrap().contains("open issues"), "{json}");
}

const READ_PRIVATE: &str = r#"match gh.private_repo("secret-plans") {
  Some(r) => {
    let (text, s) = gh.read_file(s, r, "roadmap.md");
    ("read it", s)
  },
  None => ("no repository", s),
}
"#;

#[test]
fn a_session_file_keeps_the_taint_between_runs() {
    let dir = workdir("session");
    std::fs::write(dir.join("read.cord"), READ_PRIVATE).unwrap();
    let first = cordon(&dir, &["run", "--session", "session.json", "read.cord"]);
    assert_eq!(first.code, 0, "{first:?}");
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("session.json")).unwrap()).unwrap();
    assert_eq!(stored["values"]["s"]["measures"]["tainted"], true, "{stored}");

    // The next request, with the tainted session, may not open an issue: refused before it runs.
    let second = cordon(&dir, &["run", "--session", "session.json", &example("benign.cord")]);
    assert_eq!(second.code, 1, "{second:?}");
    assert!(
        second.stdout.contains("refinement-unproven") && second.stdout.contains("nothing ran"),
        "{}",
        second.stdout
    );

    // Without the session file the same plan runs.
    let fresh = cordon(&dir, &["run", "--approve", &yes(&dir), &example("benign.cord")]);
    assert_eq!(fresh.code, 0, "{fresh:?}");
}

#[test]
fn the_effect_summary_comes_before_anything_runs() {
    let dir = workdir("effects");
    // `check --effects`: for people, and in JSON with every call's bounds as formulas.
    let policy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/github.cord");
    let policy = policy.display().to_string();
    let plan = example("injected_issue.cord");
    let check = cordon(&dir, &["check", "--effects", "--user", "alice", "--policy", &policy, &plan]);
    assert_eq!(check.code, 0, "{check:?}");
    assert!(check.stdout.starts_with("line 9: GitHub.repo, at most once\n"), "{}", check.stdout);
    assert!(
        check.stdout.contains("  body: from the result of `GitHub.list_issues` (line 13) (may be refused)\n"),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains("3 call sites: 2 within every sink, 1 decided at run time, 0 refused\n"),
        "{}",
        check.stdout
    );
    // The summary (before the verdict line, which names the plan's path) fits 80 columns.
    let summary = check.stdout.split("\n\n").next().unwrap();
    assert!(summary.lines().all(|l| l.chars().count() <= 80), "{}", check.stdout);
    let json = cordon(&dir, &["check", "--effects", "--format", "json", "--user", "alice", "--policy", &policy, &plan]);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let calls = json["effects"]["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[2]["tool"], "create_issue");
    assert_eq!(calls[2]["params"][3]["verdict"], "may");
    assert_eq!(calls[2]["params"][3]["carried"]["hi"], "<secrecy: true, integrity: true>");
    // `run --effects`: the summary, then the trace.
    let run = cordon(&dir, &["run", "--effects", &plan]);
    let summary = run.stdout.find("3 call sites:").unwrap();
    let first_call = run.stdout.find("  1. allowed  GitHub.repo(").unwrap();
    assert!(summary < first_call, "{}", run.stdout);
}

/// A plan with holes runs with a model filling them (`--model`, as `cordon ask` takes it),
/// its fills checked before they run; without one, a hole ends the run cleanly.
#[test]
fn a_plan_with_holes_runs_with_the_model_given() {
    let dir = workdir("holes_with_a_model");
    let plan = dir.join("plan.cord");
    std::fs::write(&plan, "agent[(String, Session)](\"How long is the roadmap?\", s)\n").unwrap();
    let plan = plan.display().to_string();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chat_taint.json");
    let model = format!("scripted:{}", fixture.display());
    let run = cordon(&dir, &["run", "--model", &model, &plan]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("result: (\"The roadmap has 172 characters.\", <Session #3>)"), "{}", run.stdout);
    let json = cordon(&dir, &["run", "--format", "json", "--model", &model, &plan]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["status"], "done", "{report}");
    let without = cordon(&dir, &["run", &plan]);
    assert_eq!(without.code, 1, "{without:?}");
    assert!(without.stdout.contains("hole-unfilled"), "{without:?}");
    let bad = cordon(&dir, &["run", "--model", "nonsense", &plan]);
    assert_eq!(bad.code, 2, "{bad:?}");
}

/// The run's limits are flags: the memory its values may take (`--max-memory`, with a unit),
/// its calls and loop iterations (`--fuel`); the same plan runs under the defaults.
#[test]
fn the_limits_are_set_per_run() {
    let dir = workdir("limits");
    let plan = dir.join("big.cord");
    let text = "let xs = range(0, 100000).map(|i: Int| i.to_string());\n(to_string(xs.len()), s)\n";
    std::fs::write(&plan, text).unwrap();
    let plan = plan.display().to_string();
    let under_defaults = cordon(&dir, &["run", &plan]);
    assert_eq!(under_defaults.code, 0, "{under_defaults:?}");
    let memory = cordon(&dir, &["run", "--max-memory", "1M", &plan]);
    assert_ne!(memory.code, 0, "{memory:?}");
    assert!(memory.stdout.contains("the memory limit of 1048576 bytes"), "{memory:?}");
    let fuel = cordon(&dir, &["run", "--fuel", "1000", &plan]);
    assert_ne!(fuel.code, 0, "{fuel:?}");
    assert!(fuel.stdout.contains("error[limit-reached]: the run used all its fuel (1000"), "{fuel:?}");
    let unreadable = cordon(&dir, &["run", "--max-memory", "lots", &plan]);
    assert_eq!(unreadable.code, 2, "{unreadable:?}");
    assert!(unreadable.stderr.contains("`lots` is not a size"), "{unreadable:?}");
}
