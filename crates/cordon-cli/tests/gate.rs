//! The approval gate through the CLI, on the shop environment: `--approve none|all|FILE`, a
//! hard deny no answer overrides, a grant made by "always", used, listed and revoked.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

mod common;

use common::answers;

/// A fresh directory for one test, with its own store.
fn workdir(test: &str) -> PathBuf {
    common::workdir("cli-gate", test)
}

/// Runs `cordon` in `dir`: the exit code, and stdout then stderr.
fn cordon(dir: &Path, args: &[&str]) -> (i32, String) {
    let run = common::cordon(dir, args);
    (run.code, run.stdout + &run.stderr)
}

fn example(name: &str) -> String {
    common::example(&format!("shop/{name}"))
}

#[test]
fn a_payment_is_performed_only_when_a_person_says_yes() {
    let dir = workdir("pay");
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--approve", "none", &example("pay_tea_house.cord")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("result: \"Not paid: approval-denied.\""), "{out}");
    assert!(!out.contains("allowed  Shop.pay("), "{out}");
    let yes = answers(&dir, "yes\n");
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &yes, &example("pay_tea_house.cord")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("allowed  Shop.pay("), "{out}");
    assert!(out.contains("approvals: 1 card(s), 1 approved"), "{out}");
}

#[test]
fn a_transfer_is_denied_whoever_approves() {
    let dir = workdir("transfer");
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--approve", "all", &example("move_savings.cord")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("result: \"Not moved: approval-denied.\""), "{out}");
    assert!(out.contains("1 denied by policy"), "{out}");
    assert!(out.contains("--approve all approves every card"), "the warning is printed: {out}");
    let always = answers(&dir, "always\n");
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &always, &example("move_savings.cord")]);
    assert!(out.contains("Not moved: approval-denied."), "{out}");
    let (_, out) = cordon(&dir, &["approvals", "list"]);
    assert!(out.contains("no grants"), "a deny tool never gets a grant: {out}");
}

#[test]
fn always_makes_a_grant_that_is_used_listed_and_revoked() {
    let dir = workdir("grant");
    let always = answers(&dir, "always\n");
    let plan = example("message_tea_house.cord");
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &always, &plan]);
    assert!(out.contains("result: \"Sent.\""), "{out}");
    let (code, out) = cordon(&dir, &["approvals", "list"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Shop.message_merchant  to tea-house  for public data  (until revoked)"), "{out}");
    // The grant answers for the next run, with no one to ask.
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", "none", &plan]);
    assert!(out.contains("result: \"Sent.\""), "{out}");
    assert!(out.contains("1 grant(s) used"), "{out}");
    let (code, out) = cordon(&dir, &["approvals", "revoke", "1"]);
    assert_eq!(code, 0, "{out}");
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", "none", &plan]);
    assert!(out.contains("result: \"Not sent: approval-denied.\""), "{out}");
}

#[test]
fn a_broken_answer_file_is_a_usage_error_and_nothing_runs() {
    let dir = workdir("broken");
    let bad = answers(&dir, "perhaps\n");
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &bad, &example("pay_tea_house.cord")]);
    assert_eq!(code, 2, "{out}");
    assert!(!out.contains("allowed"), "{out}");
}
