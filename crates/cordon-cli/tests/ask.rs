//! `cordon ask` end to end, offline: a scripted model whose first reply is rejected and whose
//! second runs; a sub-agent that read untrusted issue text blocked at run time.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// What one run of `cordon` did.
#[derive(Debug)]
struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A fresh directory for one test.
fn workdir(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-ask").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `--model` spec of a scripted fixture.
fn scripted(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    format!("scripted:{}", path.display())
}

/// Runs `cordon` in `dir`, with the store there (never the user's).
fn cordon(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(args)
        .current_dir(dir)
        .env("CORDON_STORE", dir.join("cordon.db"))
        .output()
        .unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

#[test]
fn a_request_is_answered_after_one_retry() {
    let dir = workdir("count_issues");
    let model = scripted("ask_count_issues.json");
    let args = [
        "ask",
        "How many open issues does alice/website have?",
        "--model",
        &model,
        "--session",
        "session.json",
        "--transcript",
        "transcript.jsonl",
    ];
    let run = cordon(&dir, &args);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("allowed  GitHub.list_issues("), "{}", run.stdout);
    assert!(run.stdout.contains("hole 0: filled after 2 attempts"), "{}", run.stdout);
    assert!(run.stdout.contains("result: (\"3 open issues on alice/website.\""), "{}", run.stdout);
    assert!(run.stdout.contains("ran to the end"), "{}", run.stdout);
    assert!(run.stderr.contains("for hole 0 (attempt 2/3)"), "{}", run.stderr);
    let transcript = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap();
    assert!(transcript.contains("error[type-mismatch]"), "{transcript}");
    assert!(transcript.contains("\"event\":\"fill_accepted\""), "{transcript}");
    let session = std::fs::read_to_string(dir.join("session.json")).unwrap();
    assert!(session.contains("\"tainted\": false"), "{session}");

    // The transcript replays offline to the same answer.
    let replay = format!("replay:{}", dir.join("transcript.jsonl").display());
    let again = cordon(&dir, &["ask", "How many open issues does alice/website have?", "--model", &replay]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.contains("3 open issues"), "{}", again.stdout);
}

#[test]
fn a_sub_agent_that_read_issue_text_cannot_open_an_issue() {
    let dir = workdir("sub_agent");
    let model = scripted("ask_sub_agent.json");
    let run = cordon(&dir, &["ask", "Triage alice/website", "--model", &model]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("BLOCKED  GitHub.create_issue("), "{}", run.stdout);
    assert!(run.stdout.contains("request: stopped (label-flow)"), "{}", run.stdout);
    assert!(run.stdout.contains("hole 0.0: filled after 1 attempt "), "{}", run.stdout);
}

#[test]
fn a_hole_in_a_branch_on_the_users_secrets_is_not_asked_of_a_public_model() {
    let dir = workdir("secret_branch");
    let model = scripted("ask_secret_branch.json");
    let args = ["ask", "Does Initech come up anywhere?", "--model", &model, "--transcript", "transcript.jsonl"];
    let run = cordon(&dir, &args);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("error[label-flow]: the hole is reached under a decision"), "{}", run.stdout);
    assert!(run.stdout.contains("is cleared for `public`"), "{}", run.stdout);
    assert!(run.stdout.contains("it would need clearance `user`"), "{}", run.stdout);
    assert!(run.stdout.contains("GitHub.search_code"), "the decision's source is shown: {}", run.stdout);
    assert!(run.stdout.contains("hole 0.0: not asked"), "{}", run.stdout);
    assert!(run.stdout.contains("request: stopped (label-flow)"), "{}", run.stdout);
    assert!(!run.stderr.contains("for hole 0.0"), "the model was asked: {}", run.stderr);
    let transcript = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap();
    let abandoned: Vec<&str> = transcript.lines().filter(|l| l.contains("\"event\":\"hole_abandoned\"")).collect();
    assert_eq!(abandoned.len(), 1, "{transcript}");
    assert!(abandoned[0].contains(r#""hole":"0.0","attempts":0,"code":"label-flow""#), "not asked: {transcript}");
    let prompts: Vec<&str> = transcript.lines().filter(|l| l.contains("\"event\":\"hole_prompted\"")).collect();
    assert_eq!(prompts.len(), 1, "only the root hole was asked: {transcript}");
    assert!(prompts[0].contains("\"hole\":\"0\","), "{transcript}");

    // With the user's clearance the sub-agent is asked and answers.
    let run = cordon(&dir, &[&args[..4], &["--clearance", "user"]].concat());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("Initech comes up in your private plans."), "{}", run.stdout);
    assert!(run.stdout.contains("hole 0.0: filled after 1 attempt "), "{}", run.stdout);
}

#[test]
fn a_bad_model_spec_is_a_usage_error() {
    let run = cordon(&workdir("bad_spec"), &["ask", "hi", "--model", "nonsense"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("model spec"), "{}", run.stderr);
}
