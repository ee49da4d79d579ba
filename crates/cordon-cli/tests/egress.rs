//! The outgoing-data check end to end, as an attacker would try it: a plan that opens a public
//! issue holding a card number, or the vault's own secret base64-encoded, is refused with the
//! text rewritten even when the person at the gate says yes to everything; nothing the binary
//! prints or records (the store's transcript and audit rows included) repeats the data; the same
//! issue without it is opened.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::path::Path;

mod common;

use common::{VAULT_KEY as KEY, add_secret, command, cordon, workdir, yes};

const CANARY: &str = "cordon-canary-7Hq2xVp9Lm";
/// The canary in base64, as a plan that tried to smuggle it would write it.
const CANARY_BASE64: &str = "Y29yZG9uLWNhbmFyeS03SHEyeFZwOUxt";

/// A plan opening a triage issue on alice's public website with `body`.
fn plan(dir: &Path, body: &str) -> String {
    let text = format!(
        r#"match gh.repo("alice", "website") {{
  Some(r) => if r.private {{ ("private", s) }} else {{
    let (issue, s) = gh.create_issue(s, r, "Payment", "{body}");
    ("opened #" + to_string(issue.number), s)
  }},
  None => ("no repository", s),
}}"#
    );
    let path = dir.join("plan.cord");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Adds the canary to the vault beside the test's store.
fn add_canary(dir: &Path) {
    add_secret(dir, &["API_TOKEN", "--host", "api.example.com"], CANARY);
}

/// What the binary said, without the lines that quote the plan's own source (a diagnostic's
/// excerpt shows the plan as its author wrote it).
fn said(stdout: &[u8], stderr: &[u8]) -> String {
    let text = format!("{}{}", String::from_utf8_lossy(stdout), String::from_utf8_lossy(stderr));
    let quotes_source = |line: &str| {
        let line = line.trim_start();
        line.split_once(" |").is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    text.lines().filter(|l| !quotes_source(l)).collect::<Vec<_>>().join("\n")
}

/// Every file the run left in `dir`, as text.
fn written(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    all
}

#[test]
fn a_card_number_for_a_public_issue_is_refused_whoever_approves() {
    let dir = workdir("cli-egress", "card");
    let run =
        command(&dir, &["run", "--approve", &yes(&dir), &plan(&dir, "Charge 4539 1488 0343 6467 for the hosting.")])
            .output()
            .unwrap();
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let both = said(&run.stdout, &run.stderr);
    assert!(both.contains("error[sensitive-data]") && both.contains("(card number)"), "{both}");
    assert!(both.contains("Charge [card number] for the hosting."), "the rewrite is offered: {both}");
    assert!(!both.contains("4539") && !both.contains("6467"), "the number is repeated: {both}");
    assert!(!both.contains("opened #"), "{both}");
}

#[test]
fn a_card_number_made_at_run_time_is_written_down_nowhere() {
    // The plan's source holds the number in two pieces; only the call's argument holds it whole.
    // Every event about the call (its proposal, each stage's decision) shows it rewritten, so
    // the store's transcript and audit rows never hold it.
    let dir = workdir("cli-egress", "made");
    let body = r#"Charge 4539 1488 " + "0343 6467 for the hosting."#;
    let run = command(&dir, &["run", "--approve", &yes(&dir), &plan(&dir, body)]).output().unwrap();
    let both = said(&run.stdout, &run.stderr);
    assert_eq!(run.status.code(), Some(1), "{both}");
    assert!(both.contains("Charge [card number] for the hosting."), "the rewrite is offered: {both}");
    let whole = "4539 1488 0343 6467";
    assert!(!both.contains(whole), "{both}");
    let files = written(&dir);
    assert!(files.contains("[card number]"), "the store records the refused call");
    assert!(!files.contains(whole), "a file in the store's directory holds the card number");
}

#[test]
fn the_vaults_secret_encoded_is_refused_and_repeated_nowhere() {
    let dir = workdir("cli-egress", "canary");
    add_canary(&dir);
    let run = command(&dir, &["run", "--approve", &yes(&dir), &plan(&dir, &format!("token {CANARY_BASE64}"))])
        .env("CORDON_VAULT_KEY", KEY)
        .output()
        .unwrap();
    let both = said(&run.stdout, &run.stderr);
    assert_eq!(run.status.code(), Some(1), "{both}");
    assert!(both.contains("(vault secret)") && both.contains("token [vault secret]"), "{both}");
    assert!(!both.contains(CANARY) && !both.contains(CANARY_BASE64), "{both}");
    assert!(!written(&dir).contains(CANARY), "a file in the store's directory holds the canary");
}

#[test]
fn a_vault_that_does_not_open_stops_the_run_before_anything_is_sent() {
    let dir = workdir("cli-egress", "no_key");
    add_canary(&dir);
    // Without the key, the check could not look for the vault's secrets: nothing runs.
    let run = command(&dir, &["run", "--approve", &yes(&dir), &plan(&dir, "hello")])
        .env_remove("CORDON_VAULT_KEY")
        .env("HOME", &dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no key for it"), "{stderr}");
    assert!(!String::from_utf8_lossy(&run.stdout).contains("opened #"));
}

#[test]
fn the_same_issue_without_the_data_is_opened() {
    let dir = workdir("cli-egress", "clean");
    let run = cordon(&dir, &["run", "--approve", &yes(&dir), &plan(&dir, "Charge the card on file for the hosting.")]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("opened #"), "{run:?}");
}

#[test]
fn a_health_detail_for_a_public_issue_needs_the_users_yes_on_a_masked_card() {
    // The detail is made at run time: the plan's source (which the store keeps as the request)
    // holds it in two pieces, so that only what the run records about the call could hold it.
    let body = r#"My tooth " + "hurts since Monday, so I am slow this week."#;
    let whole = "tooth hurts";
    let dir = workdir("cli-egress", "consent_no");
    let run = command(&dir, &["run", "--approve", &common::answers(&dir, "n\n"), &plan(&dir, body)]).output().unwrap();
    let both = said(&run.stdout, &run.stderr);
    assert_ne!(run.status.code(), Some(0), "{both}");
    assert!(!both.contains("opened #"), "{both}");
    assert!(both.contains("`body` holds health detail"), "{both}");
    assert!(both.contains("\"[health detail] since Monday"), "the trace and the refusal show it masked: {both}");
    assert!(!both.contains(whole), "{both}");
    let files = written(&dir);
    assert!(files.contains("health detail"), "the card the store records says what it held");
    assert!(!files.contains(whole), "a file in the store's directory holds the health detail");
    // A yes sends it as it is, for this call only; the store still records it masked.
    let dir = workdir("cli-egress", "consent_yes");
    let run = command(&dir, &["run", "--approve", &common::answers(&dir, "y\n"), &plan(&dir, body)]).output().unwrap();
    let both = said(&run.stdout, &run.stderr);
    assert_eq!(run.status.code(), Some(0), "{both}");
    assert!(both.contains("opened #"), "{both}");
    // The audit log says a health detail went out, not which; the tool's answer (the issue it
    // opened, which quotes it) is the user's own record of what they agreed to send.
    let audit = command(&dir, &["audit", "show", "--request", "1"]).output().unwrap();
    let audit = said(&audit.stdout, &audit.stderr);
    assert!(audit.contains("[health detail] since Monday") && !audit.contains(whole), "{audit}");
}
