//! `cordon run` in several environments at once (`--env github --env chat`): each serves its
//! own capability, the policies' entries are composed into one, and a mistaken combination is a
//! clear usage error.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

mod common;

/// A fresh directory for one test.
fn workdir(test: &str) -> PathBuf {
    common::workdir("cli-world", test)
}

/// Runs `cordon` in `dir` (with its store there): the exit code, stdout and stderr.
fn cordon(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let run = common::cordon(dir, args);
    (run.code, run.stdout, run.stderr)
}

fn example() -> String {
    common::example("world/issues_to_general.cord")
}

#[test]
fn a_plan_acts_in_two_environments_in_one_run() {
    let dir = workdir("two");
    let yes = dir.join("answers.txt");
    std::fs::write(&yes, "yes\n").unwrap();
    let args = ["run", "--env", "github", "--env", "chat", "--approve", &yes.display().to_string(), &example()];
    let (code, stdout, stderr) = cordon(&dir, &args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("allowed  GitHub.list_issues("), "{stdout}");
    assert!(stdout.contains("allowed  Chat.post_message("), "{stdout}");
    assert!(stdout.contains("result: (\"Posted the count to #general.\", <Session"), "{stdout}");
}

#[test]
fn a_plan_for_two_environments_does_not_check_against_one() {
    let (code, stdout, _) = cordon(&workdir("one"), &["run", "--env", "github", &example()]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("error[undefined-name]"), "{stdout}");
    assert!(stdout.contains("nothing ran"), "{stdout}");
}

#[test]
fn an_environment_named_twice_or_unknown_is_a_usage_error() {
    let dir = workdir("twice");
    let (code, _, stderr) = cordon(&dir, &["run", "--env", "chat", "--env", "chat", &example()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("the environment `chat` is named twice"), "{stderr}");
    let (code, _, stderr) = cordon(&dir, &["run", "--env", "github", "--env", "slack", &example()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("there is no environment `slack`"), "{stderr}");
}

#[test]
fn the_mail_workspace_runs_alone_and_acts_for_an_address() {
    let dir = workdir("mail");
    let plan = common::example("mail/reply_to_bob.cord");
    let yes = common::yes(&dir);
    let (code, stdout, stderr) = cordon(&dir, &["run", "--env", "mail", "--approve", &yes, &plan]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("allowed  Mail.reply("), "{stdout}");
    let (code, stdout, _) = cordon(&dir, &["run", "--env", "mail", &common::example("mail/obey_mail.cord")]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("BLOCKED  Mail.forward("), "{stdout}");
    // Its principal is alice@example.com (a mail's readers are addresses), the chat
    // workspace's is alice: one run acts for one principal.
    let (code, _, stderr) = cordon(&dir, &["run", "--env", "chat", "--env", "mail", &plan]);
    assert_eq!(code, 2);
    assert!(stderr.contains("`chat` acts for alice and `mail` for alice@example.com"), "{stderr}");
}
