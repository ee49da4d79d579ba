//! `cordon chat` end to end, offline: requests on standard input share one environment and
//! one session, so a session tainted by the first request is still tainted in the second.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

mod common;

#[test]
fn a_session_tainted_by_one_request_stays_tainted_in_the_next() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chat_taint.json");
    // A directory of its own: removing the group's would pull the others' from under them.
    let dir = common::workdir("cli-chat", "taint");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["chat", "--env", "github", "--max-attempts", "1", "--model"])
        .arg(format!("scripted:{}", fixture.display()))
        .arg("--store")
        .arg(dir.join("cordon.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = "How long is the roadmap?\n\nSay hello in a new issue on alice/website.\n/quit\n";
    child.stdin.take().unwrap().write_all(requests.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    // The first request reads the private roadmap and runs to the end; its label in words.
    assert!(stdout.contains("answer: The roadmap has"), "{stdout}");
    assert!(stdout.contains("label: secret to alice, vouched for by "), "{stdout}");
    // The second one's fill cannot check: the session it would post with is tainted, and the
    // checker was told so before it checked. Why is an error, on stderr.
    assert!(stderr.contains("error[hole-unfilled]") && stderr.contains("refinement-unproven"), "{stderr}");
    assert!(!stdout.contains("opened #") && !stdout.contains("error["), "{stdout}");
    assert_eq!(output.status.code(), Some(1), "{stdout}");
}

/// Runs `cordon chat` on `requests` with the scripted replies of `fixture`: stdout, stderr.
fn chat(test: &str, fixture: &str, requests: &str) -> (String, String) {
    let (stdout, stderr, _) = chat_with(test, fixture, requests, &[]);
    (stdout, stderr)
}

/// The prompts' user messages of a chat's transcript, in order.
fn prompts(transcript: &str) -> Vec<String> {
    transcript
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "hole_prompted")
        .map(|v| v["messages"][1]["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_follow_up_sees_the_earlier_answers_the_labels_allow() {
    let (_, _, transcript) =
        chat_with("history", "chat_history.json", "When is the meeting?\nWhen was that again?\n", &[]);
    let asked = prompts(&transcript);
    assert_eq!(asked.len(), 2, "{transcript}");
    assert!(!asked[0].contains("Earlier in this conversation"), "{}", asked[0]);
    assert!(
        asked[1].starts_with(
            "Earlier in this conversation (the user's requests and the answers they were shown):\n  1. request: \
             When is the meeting?\n     answer: The meeting is on Tuesday.\n"
        ),
        "{}",
        asked[1]
    );
    // Hostile: an answer secret to the user (from the private roadmap) is not shown to a model
    // cleared for public data, though the user saw it; with the user's clearance it is.
    let requests = "How long is the roadmap?\nSay hello in a new issue on alice/website.\n";
    let (_, _, transcript) = chat_with("history_secret", "chat_taint.json", requests, &[]);
    let second = &prompts(&transcript)[1];
    assert!(second.contains("  1. request: How long is the roadmap?\n     answer: <hidden>\n"), "{second}");
    assert!(!second.contains("The roadmap has"), "{second}");
    let (_, _, transcript) = chat_with("history_user", "chat_taint.json", requests, &["--clearance", "user"]);
    let second = &prompts(&transcript)[1];
    assert!(second.contains("     answer: The roadmap has "), "{second}");
}

/// [`chat`] with more arguments, also giving the transcript.
fn chat_with(test: &str, fixture: &str, requests: &str, more: &[&str]) -> (String, String, String) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(fixture);
    let dir = common::workdir("cli-chat", test);
    let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["chat", "--env", "github", "--max-attempts", "1", "--model"])
        .arg(format!("scripted:{}", fixture.display()))
        .arg("--store")
        .arg(dir.join("cordon.db"))
        .arg("--transcript")
        .arg(dir.join("transcript.jsonl"))
        .args(more)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(requests.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let transcript = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap_or_default();
    (String::from_utf8(output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap(), transcript)
}

#[test]
fn the_chat_says_how_to_stop_and_quit_words_never_reach_the_model() {
    let (stdout, stderr) = chat("hint", "chat_taint.json", "/help\nexit\nHow long is the roadmap?\n");
    assert!(stdout.starts_with("Type a request and press Enter; /help for commands, /quit"), "{stdout}");
    assert!(stdout.contains("  /quit   stop (so do `quit`, `exit` and Ctrl-D)"), "{stdout}");
    // `exit` stopped the chat: the model was never asked, not even for the line after it.
    assert!(!stderr.contains("asking "), "{stderr}");
    assert!(!stdout.contains("hole 0"), "{stdout}");
    for word in ["quit", "QUIT", "/exit"] {
        let (_, stderr) = chat("quit", "chat_taint.json", &format!("{word}\nHow long is the roadmap?\n"));
        assert!(!stderr.contains("asking "), "{word}: {stderr}");
    }
}

/// At a real terminal the chat reads its requests and the approver its answers from the same
/// standard input: neither may hold it locked while the other reads (that deadlocked: the
/// second card, or the second request, waited forever).
#[test]
fn a_chat_at_a_terminal_answers_cards_and_takes_the_next_request() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chat_two_issues.json");
    let dir = common::workdir("cli-chat", "pty");
    let model = format!("scripted:{}", fixture.display());
    let steps = serde_json::json!([
        ["expect", "> "],
        ["send", "Say hello in a new issue on alice/website.\n"],
        ["expect", "approve "],
        ["send", "n\n"],
        ["expect", "denied"],
        ["expect", "> "],
        ["send", "Say it again in a new issue on alice/website.\n"],
        ["expect", "approve "],
        ["send", "n\n"],
        ["expect", "denied"],
        ["expect", "> "],
        ["send", "/quit\n"],
    ]);
    let (shown, code) = chat_at_a_terminal(&dir, &model, &steps);
    assert_eq!(shown.matches("create issue").count(), 2, "two cards, each answered:\n{shown}");
    assert_eq!(code, Some(1), "both requests ran, and neither got its issue:\n{shown}");
}

/// At a terminal the requests are typed into a line editor: Ctrl-A goes to the line's start
/// (without an editor it would be a character of the request), and Up recalls the request
/// before. `help` with `/` put before it is `/help`; recalled, it is `/help` again. Neither goes
/// to the model, whose script is empty.
#[test]
fn a_chat_at_a_terminal_edits_the_line_and_recalls_earlier_requests() {
    let dir = common::workdir("cli-chat", "editing");
    let script = dir.join("no_replies.json");
    std::fs::write(&script, r#"{"replies": []}"#).unwrap();
    let model = format!("scripted:{}", script.display());
    let steps = serde_json::json!([
        ["expect", "> "],
        ["send", "help\u{1}/\r"],
        ["expect", "this list"],
        ["expect", "> "],
        ["send", "\u{1b}[A\r"],
        ["expect", "this list"],
        ["expect", "> "],
        ["send", "/quit\r"],
    ]);
    let (shown, code) = chat_at_a_terminal(&dir, &model, &steps);
    assert_eq!(shown.matches("/help   this list").count(), 2, "{shown}");
    assert_eq!(code, Some(0), "{shown}");
}

/// `cordon chat` with `model` (one attempt a hole) and its store in `dir`, at a pseudo-terminal
/// driven by `steps`: what the terminal showed, every step taken, and the exit code.
fn chat_at_a_terminal(dir: &Path, model: &str, steps: &serde_json::Value) -> (String, Option<i32>) {
    let store = dir.join("cordon.db");
    let flags = ["chat", "--env", "github", "--max-attempts", "1", "--model", model, "--store"];
    let args: Vec<&std::ffi::OsStr> = flags.iter().map(std::ffi::OsStr::new).chain([store.as_os_str()]).collect();
    let (shown, code) = common::at_a_terminal(steps, &args);
    assert!(!shown.contains("[pty_drive:"), "a step was not taken:\n{shown}");
    (shown, code)
}
