//! `cordon ask` end to end, offline: a scripted model whose first reply is rejected and whose
//! second runs; a sub-agent that read untrusted issue text blocked at run time; a sub-agent
//! whose call the labels refuse at run time told why, when it is cleared for it.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

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
    // The answer as text, the session on a line of its own.
    assert!(
        run.stdout.contains("\nanswer: 3 open issues on alice/website.\nkept for the next request: <Session #"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("result: ("), "{}", run.stdout);
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
    // With the recorded token counts, not estimates of its own.
    let tokens = |out: &str| out.lines().find(|l| l.starts_with("tokens: ")).map(str::to_string);
    assert_eq!(tokens(&again.stdout), tokens(&run.stdout));

    // Hostile: the same transcript for another request is refused, not replayed.
    let other = cordon(&dir, &["ask", "Delete alice/website", "--model", &replay]);
    assert_eq!(other.code, 2, "{other:?}");
    assert!(other.stderr.contains("error[hole-unfilled]"), "{}", other.stderr);
    assert!(other.stderr.contains("was recorded for another request"), "{}", other.stderr);
    assert!(other.stderr.contains("now `Task: Delete alice/website`"), "{}", other.stderr);
    assert!(!other.stdout.contains("answer:") && !other.stdout.contains("error["), "{}", other.stdout);

    // A transcript with replies this run never asked for (recorded twice over) is refused too.
    let twice = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap().repeat(2);
    std::fs::write(dir.join("twice.jsonl"), twice).unwrap();
    let replay_twice = format!("replay:{}", dir.join("twice.jsonl").display());
    let leftover = cordon(&dir, &["ask", "How many open issues does alice/website have?", "--model", &replay_twice]);
    assert_eq!(leftover.code, 2, "{leftover:?}");
    assert!(leftover.stderr.contains("2 recorded replies were never asked for"), "{}", leftover.stderr);
}

#[test]
fn a_model_that_cannot_be_reached_is_an_error_with_its_own_exit_code() {
    let dir = workdir("unreachable");
    // Nothing listens on port 1 of this machine.
    let run = cordon(&dir, &["ask", "hi", "--model", "openai:m@http://127.0.0.1:1/v1"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("error[hole-unfilled]") && run.stderr.contains("the model gave no answer"), "{run:?}");
    assert!(!run.stdout.contains("error["), "errors go to stderr: {}", run.stdout);
    assert!(run.stdout.contains("request: stopped (hole-unfilled)"), "{}", run.stdout);
}

#[test]
fn fills_that_never_check_are_an_error_on_stderr_and_exit_1() {
    let dir = workdir("never_checks");
    let model = scripted("ask_count_issues.json");
    let run = cordon(&dir, &["ask", "How many?", "--model", &model, "--max-attempts", "1"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("no fill checked in 1 attempt (last:"), "{}", run.stderr);
    // The error points into the fill the model wrote, where its checker said it was wrong.
    assert!(run.stderr.contains(" --> <fill 0 attempt 1>:2:2\n"), "{}", run.stderr);
    assert!(run.stderr.contains("2 | (n, s)\n  |  - where the last fill was rejected\n"), "{}", run.stderr);
    assert!(!run.stdout.contains("error["), "{}", run.stdout);
    let shown = cordon(&dir, &["audit", "show"]);
    assert!(shown.stdout.contains("hole 0 after 1 attempt [hole-unfilled]"), "{}", shown.stdout);
}

#[test]
fn a_key_is_not_sent_over_plain_http_to_another_machine() {
    let dir = workdir("insecure_http");
    // Hostile first: a base URL that looks local but names another host.
    for base in ["http://10.1.2.3:8000/v1", "http://127.0.0.1@example.com/v1"] {
        let model = format!("openai:m@{base}");
        let run = cordon(&dir, &["ask", "hi", "--model", &model]);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(run.stderr.contains("plain http") && run.stderr.contains("--allow-insecure-http"), "{}", run.stderr);
        assert!(!run.stderr.contains("asking "), "nothing was sent: {}", run.stderr);
    }
    // It can be asked for in so many words (the provider's tests show it then connects).
    let parsed = cordon(&dir, &["ask", "--help"]);
    assert!(parsed.stdout.contains("--allow-insecure-http"), "{}", parsed.stdout);
}

#[test]
fn a_sub_agent_that_read_issue_text_cannot_open_an_issue() {
    let dir = workdir("sub_agent");
    let model = scripted("ask_sub_agent.json");
    let run = cordon(&dir, &["ask", "Triage alice/website", "--model", &model]);
    // Its fill checks, but the labels' analysis of the fill refuses the post before it runs
    // (it was shown outsiders' text); the model is told, and its next fill only answers.
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("GitHub.create_issue("), "no post was attempted: {}", run.stdout);
    assert!(run.stdout.contains("hole 0.0: filled after 2 attempts"), "{}", run.stdout);
    assert!(run.stdout.contains("I have not"), "{}", run.stdout);
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

#[test]
fn a_sub_agent_refused_at_run_time_is_told_when_cleared_and_answers_instead() {
    // The sub-agent DMs #general's newest member the names of alice's private channels: only the
    // run can tell whether they may read them. Nothing was performed, so the run goes back to
    // its hole; a model cleared for alice's data is told why and answers alice instead.
    let request = "Tell the newest member of #general the names of my private channels";
    let model = scripted("ask_refused_dm.json");
    let dir = workdir("refused_dm_cleared");
    let run = cordon(&dir, &["ask", request, "--env", "chat", "--clearance", "user", "--model", &model]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("BLOCKED  Chat.send_dm("), "{}", run.stdout);
    assert!(run.stdout.contains("hole 0.0: filled after 2 attempts"), "{}", run.stdout);
    assert!(run.stdout.contains("answer: I did not message them"), "{}", run.stdout);
    assert!(
        run.stderr.contains("hole 0.0: the labels refused a call of fill 1 before it did anything"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("for hole 0.0 (attempt 2/3)"), "{}", run.stderr);

    // A public model may not learn what the refusal depends on: the refusal stands.
    let dir = workdir("refused_dm_public");
    let run = cordon(&dir, &["ask", request, "--env", "chat", "--model", &model]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("hole 0.0: not filled after 1 attempt"), "{}", run.stdout);
    assert!(run.stdout.contains("was not told of this refusal and not asked again"), "{}", run.stdout);
    assert!(run.stdout.contains("cleared for `public`"), "{}", run.stdout);
    assert!(!run.stderr.contains("attempt 2/3"), "{}", run.stderr);
}

/// `--format json` is the report `cordon run --format json` prints, so a driver reads the
/// calls, the cards and their flags, the holes and the answer without parsing the trace; the
/// trace is not written around it.
#[test]
fn a_request_answers_in_json_as_run_does() {
    let dir = workdir("json");
    let model = scripted("chat_two_issues.json");
    let yes = dir.join("yes.txt");
    std::fs::write(&yes, "yes\n").unwrap();
    let args = ["ask", "--env", "github", "--model", &model, "--format", "json", "--approve"];
    let mut args = args.to_vec();
    let yes = yes.display().to_string();
    args.extend([yes.as_str(), "Say hello in a new issue on alice/website."]);
    let out = cordon(&dir, &args);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(report["status"], "done", "{report}");
    let trace = report["trace"].as_array().unwrap();
    assert!(trace.iter().any(|row| row["tool"] == "GitHub.create_issue" && row["decision"] == "allowed"), "{report}");
    let records = report["approvals"].as_array().unwrap();
    let card = records.iter().find(|r| r["tool"] == "GitHub.create_issue").unwrap();
    assert_eq!(
        (&card["outcome"], &card["answer"]),
        (&serde_json::json!("approved"), &serde_json::json!("yes")),
        "{card}"
    );
    assert_eq!(card["card"]["action"], "create issue", "{card}");
    assert!(report["holes"].as_array().is_some_and(|h| !h.is_empty()), "{report}");
    assert!(!out.stdout.contains("  1. allowed"), "no trace lines around the JSON: {}", out.stdout);
}

/// A model is a reader other than the user: what is never sent (here a card number in the
/// request itself) reaches it as a placeholder, in every prompt, and so in the transcript.
#[test]
fn what_is_never_sent_reaches_the_model_as_a_placeholder() {
    let dir = workdir("never_to_the_model");
    let model = scripted("ask_count_issues.json");
    let transcript = dir.join("transcript.jsonl");
    let request = "How many open issues does alice/website have? My card is 4539 1488 0343 6467.";
    let out = cordon(
        &dir,
        &["ask", "--env", "github", "--model", &model, "--transcript", transcript.to_str().unwrap(), request],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let written = std::fs::read_to_string(&transcript).unwrap();
    let prompts: Vec<serde_json::Value> = written
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "hole_prompted")
        .collect();
    assert!(!prompts.is_empty(), "{written}");
    for prompt in &prompts {
        let text = prompt["messages"].to_string();
        assert!(text.contains("My card is [card number]."), "{text}");
        assert!(!text.contains("4539") && !text.contains("6467"), "{text}");
    }
}

/// `ask` takes the run's limits as `run` does: the fill that counts the issues runs out of
/// fuel under `--fuel 5`.
#[test]
fn the_limits_of_a_request_put_to_a_model_are_flags() {
    let dir = workdir("limits");
    let model = scripted("ask_count_issues.json");
    let args = ["ask", "How many open issues does alice/website have?", "--model", &model];
    let run = cordon(&dir, &[&args[..], &["--fuel", "5"]].concat());
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("error[limit-reached]: the run used all its fuel (5 calls"), "{run:?}");
    let run = cordon(&dir, &args);
    assert_eq!(run.code, 0, "{run:?}");
}
