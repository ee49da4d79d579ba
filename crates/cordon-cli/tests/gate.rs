//! The approval gate through the CLI, on the shop environment: `--approve none|all|FILE`, a
//! hard deny no answer overrides, a grant made by "always", used, listed and revoked; and on the
//! mail workspace, a label card a person may answer.
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
    // The policy denies `transfer` whoever approves: the plan is refused before anything runs
    // (the labels' static analysis), with every answer a person could give.
    let dir = workdir("transfer");
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--approve", "all", &example("move_savings.cord")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[approval-denied]: `Shop.transfer` is never performed"), "{out}");
    assert!(out.contains("rejected: 1 error; nothing ran"), "{out}");
    assert!(!out.contains("Shop.accounts("), "nothing ran: {out}");
    let always = answers(&dir, "always\n");
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &always, &example("move_savings.cord")]);
    assert_eq!(code, 1, "{out}");
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

#[test]
fn a_grant_may_expire_and_the_list_says_when() {
    let dir = workdir("expiry");
    let always = answers(&dir, "always\n");
    let plan = example("message_tea_house.cord");
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &always, "--grants-expire-after", "2h", &plan]);
    assert!(out.contains("grant 1 made"), "{out}");
    let (_, out) = cordon(&dir, &["approvals", "list"]);
    assert!(out.contains("(until revoked, expires 20") && out.contains(" UTC)"), "{out}");
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--grants-expire-after", "2 hours", &plan]);
    assert_eq!(code, 2, "a duration it cannot read is a usage error: {out}");
}

#[test]
fn the_trace_shows_each_decision_after_its_call() {
    let dir = workdir("trace");
    let yes = answers(&dir, "yes\n");
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &yes, &example("pay_tea_house.cord")]);
    let performed = out.find("allowed  Shop.pay(").unwrap();
    let decided = out.find("gate     card 1 approved by scripted").unwrap();
    assert!(performed < decided, "{out}");
}

#[test]
fn a_payee_an_outsider_chose_is_a_flagged_card_and_no_grant() {
    let dir = workdir("flagged");
    let plan = example("warranty_from_review.cord");
    // No one to ask: the labels' refusal stands.
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--approve", "none", &plan]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("BLOCKED  Shop.pay(") && out.contains("[label-flow]"), "{out}");
    assert!(!out.contains("allowed  Shop.pay("), "{out}");
    // A person is asked, the card is flagged; "always" is a yes for this call only.
    let always = answers(&dir, "always\n");
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &always, "--format", "json", &plan]);
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let pay = &json["approvals"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(pay["tool"], "Shop.pay");
    assert_eq!(pay["outcome"], "approved");
    assert!(pay["grants_made"].as_array().unwrap().is_empty(), "{pay}");
    let flags = pay["card"]["flags"].as_array().unwrap();
    assert!(
        flags.iter().any(|f| f["says"].as_str().unwrap().contains("`refunds-desk` came from data written by mallory")
            && f["value"] == "refunds-desk")
    );
    assert_eq!(json["result"], "Paid refunds-desk for the warranty.");
    let (_, out) = cordon(&dir, &["approvals", "list"]);
    assert!(out.contains("no grants"), "{out}");
}

#[test]
fn an_intent_model_flag_overrides_a_grant() {
    let dir = workdir("intent-model");
    let plan = example("message_tea_house.cord");
    let always = answers(&dir, "always\n");
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &always, &plan]);
    assert!(out.contains("grant 1 made"), "{out}");
    let script = dir.join("checker.json");
    std::fs::write(&script, r#"{"replies": [{"text": "FLAG: the request asked for no message"}]}"#).unwrap();
    let model = format!("scripted:{}", script.display());
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", "none", "--intent-model", &model, &plan]);
    assert!(out.contains("result: \"Not sent: approval-denied.\""), "the grant no longer answers: {out}");
    assert!(out.contains("flagged it: the request asked for no message"), "{out}");
    assert!(out.contains("card 1 refused: no one to ask (`--approve none`)"), "{out}");
    let (code, out) = cordon(&dir, &["run", "--env", "shop", "--intent-model", "nonsense", &plan]);
    assert_eq!(code, 2, "{out}");
}

#[test]
fn approving_the_whole_plan_asks_once_for_its_bounded_safe_calls() {
    let dir = workdir("whole_plan");
    let plan = common::example("github/weekly_triage.cord");
    let one = answers(&dir, "yes\n");
    let (code, out) = cordon(&dir, &["run", "--env", "github", "--approve-plan", "--approve", &one, &plan]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("gate     card 1, the plan (4 call(s) without their own card), approved by scripted"),
        "{out}"
    );
    assert_eq!(out.matches("gate     performed under the plan's approval").count(), 4, "{out}");
    assert!(out.contains("approvals: 1 card(s), 1 approved, 0 refused, 0 denied by policy, 0 grant(s) used, 4 call(s) under the plan's approval"), "{out}");
    // Without it, a card a call; with the plan's card refused, the same.
    let four = answers(&dir, "yes\nyes\nyes\nyes\n");
    let (_, out) = cordon(&dir, &["run", "--env", "github", "--approve", &four, &plan]);
    assert!(out.contains("approvals: 4 card(s), 4 approved"), "{out}");
    let no_then_four = answers(&dir, "no\nyes\nyes\nyes\nyes\n");
    let (_, out) = cordon(&dir, &["run", "--env", "github", "--approve-plan", "--approve", &no_then_four, &plan]);
    assert!(out.contains("the plan (4 call(s) without their own card), refused by scripted"), "{out}");
    assert!(out.contains("approvals: 5 card(s), 4 approved, 1 refused"), "{out}");
}

#[test]
fn in_the_mail_workspace_a_person_may_vouch_for_a_forward_the_labels_refused() {
    // "Forward the invoice mail to accounting", written with `search`: which mails match is
    // decided by their text, so the labels refuse the forward; a person at the gate sees the
    // card (the recipient the user named, the mail mallory could have written) and may vouch.
    let dir = workdir("mail-forward");
    let plan = dir.join("forward_found.cord");
    let text = r#"
match mail.search("invoice").first() {
  Some(m) => { let sent = mail.forward(m, "accounting@example.com", "Please pay."); "Forwarded." },
  None => "No invoice.",
}
"#;
    std::fs::write(&plan, text).unwrap();
    let plan = plan.display().to_string();
    // With no one to ask, the labels refuse it before anything runs: every path to the forward
    // is decided by what the mails say.
    let (code, out) = cordon(&dir, &["run", "--env", "mail", "--approve", "none", &plan]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[label-flow]: `Mail.forward` would be blocked"), "{out}");
    assert!(out.contains("nothing ran"), "{out}");
    // With a person to ask, the same is a warning, and the person is shown a card.
    let yes = answers(&dir, "yes\n");
    let (code, out) = cordon(&dir, &["run", "--env", "mail", "--approve", &yes, &plan]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("warning[label-flow]: `Mail.forward` will need your approval"), "{out}");
    assert!(out.contains("allowed  Mail.forward("), "{out}");
    assert!(out.contains("flagged  the labels refused this call"), "{out}");
    assert!(!out.contains("came from data written by"), "the recipient is the user's: {out}");
    // mallory's mail naming the recipient: the card is flagged with where it came from, and a
    // person who answers no forwards nothing.
    let no = answers(&dir, "no\n");
    let (code, out) =
        cordon(&dir, &["run", "--env", "mail", "--approve", &no, &common::example("mail/obey_mail.cord")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("flagged  the recipient `attacker@evil.test` came from data written by mallory@evil.test"),
        "{out}"
    );
    assert!(out.contains("stopped at run time (approval-denied)"), "{out}");
    assert!(!out.contains("allowed  Mail.forward("), "{out}");
}

/// Another local user, or a plan, with write access to the store file adds a grant with raw
/// SQL, or widens one: the gate asks as if it were not there, and `audit verify` names it. And
/// every decision is in the log: the card answered "always", the grant made, the grant used.
#[test]
fn a_grant_written_into_the_store_by_hand_is_not_honoured_and_verify_says_so() {
    let dir = workdir("forged");
    let always = answers(&dir, "always\n");
    let plan = example("message_tea_house.cord");
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", &always, &plan]);
    assert!(out.contains("result: \"Sent.\""), "{out}");
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", "none", &plan]);
    assert!(out.contains("1 grant(s) used"), "{out}");
    let (_, shown) = cordon(&dir, &["audit", "show", "--request", "1"]);
    assert!(shown.contains("answered always by scripted") && shown.contains("made grant 1"), "{shown}");
    let (_, shown) = cordon(&dir, &["audit", "show", "--request", "2"]);
    assert!(shown.contains("Shop.message_merchant granted by the gate") && shown.contains("under grant 1"), "{shown}");

    let db = rusqlite::Connection::open(dir.join("cordon.db")).unwrap();
    db.execute("UPDATE grants SET destination = '*' WHERE id = 1", []).unwrap();
    drop(db);
    let (_, out) = cordon(&dir, &["run", "--env", "shop", "--approve", "none", &plan]);
    assert!(out.contains("result: \"Not sent: approval-denied.\""), "the widened grant is not honoured: {out}");
    let (code, out) = cordon(&dir, &["audit", "verify"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("BROKEN: grant 1 is not as the audit log recorded it"), "{out}");
    let (_, listed) = cordon(&dir, &["approvals", "list"]);
    assert!(listed.contains("no grants"), "{listed}");
}

/// "Send carol the gist of the article bob linked in #general": the link is the workspace's
/// (said in a public channel), so fetching its page lets the workspace's data out to the site.
/// The chat policy's release allows that on one card naming the group and the address (the
/// direct message to carol is a second card, as every message sent in the user's name is);
/// with no one to ask the plan is refused before anything runs, and a no fetches nothing.
#[test]
fn the_workspace_data_goes_to_the_web_only_on_a_yes_to_one_card() {
    let dir = workdir("chat-release");
    let plan = common::example("chat/forward_article.cord");
    let yes = answers(&dir, "yes\nyes\n");
    let (code, out) = cordon(&dir, &["run", "--env", "chat", "--approve", &yes, &plan]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("`url` is secret to the group workspace"), "{out}");
    assert!(
        out.contains("allowed  Chat.get_webpage(url: \"https://blog.example.com/blameless-postmortems\")"),
        "{out}"
    );
    assert!(out.contains("gate     card 1 approved by scripted"), "{out}");
    assert!(out.contains("approvals: 2 card(s), 2 approved"), "{out}");
    assert!(out.contains("allowed  Chat.send_dm(to: \"carol\""), "{out}");
    // The card says which group's data goes where, and to which address.
    let yes = answers(&dir, "yes\nyes\n");
    let (_, json) = cordon(&dir, &["run", "--env", "chat", "--approve", &yes, "--format", "json", &plan]);
    let run: serde_json::Value = serde_json::from_str(&json).unwrap();
    let cards: Vec<_> = run["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["card"].is_object() && a["card"]["tool"] == "Chat.get_webpage")
        .collect();
    assert_eq!(cards.len(), 1, "{json}");
    let card = &cards[0]["card"];
    assert_eq!(card["tool"], "Chat.get_webpage");
    assert_eq!(card["destination"]["text"], "https://blog.example.com/blameless-postmortems");
    assert_eq!(
        card["flows"][0]["meaning"],
        "you let the data of the group `workspace` out to anyone, as the policy's release allows: this text, word for word as it was received"
    );
    // The channel's text put into the address is not the link bob posted: its card says so.
    let leak = dir.join("leak.cord");
    let text = r#"
let general = chat.list_channels().filter(|c| !c.private && c.name == "general");
let said = general.map(|c| chat.read_channel(c).map(|m| m.text).join(" | ")).join(" ");
chat.get_webpage("https://blog.example.com/blameless-postmortems?ref=" + said)
"#;
    std::fs::write(&leak, text).unwrap();
    let no = answers(&dir, "no\n");
    let (_, json) =
        cordon(&dir, &["run", "--env", "chat", "--approve", &no, "--format", "json", &leak.display().to_string()]);
    let run: serde_json::Value = serde_json::from_str(&json).unwrap();
    let card = run["approvals"].as_array().unwrap().iter().find_map(|a| a["card"].as_object()).unwrap();
    let flags = serde_json::to_string(&card["flags"]).unwrap();
    assert!(
        flags.contains("the destination is built from the data of the group `workspace`, not received as it is"),
        "{flags}"
    );

    let (code, out) = cordon(&dir, &["run", "--env", "chat", "--approve", "none", &plan]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[label-flow]: `Chat.get_webpage` would be blocked"), "{out}");
    assert!(out.contains("nothing ran"), "{out}");

    let no = answers(&dir, "no\n");
    let (code, out) = cordon(&dir, &["run", "--env", "chat", "--approve", &no, &plan]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("approval-denied"), "{out}");
    assert!(!out.contains("allowed  Chat.get_webpage("), "{out}");
    assert!(!out.contains("allowed  Chat.send_dm("), "{out}");
}

/// A value the card hides (`@card(hidden = new)`: the bank's new password) reaches the bank,
/// and nothing written down: not the card, the trace, the JSON report, nor the audit log.
#[test]
fn a_hidden_value_reaches_the_host_and_is_written_down_nowhere() {
    let dir = workdir("hidden");
    let plan = dir.join("password.cord");
    let secret = "Quiet-Harbour-Lamp-2026";
    std::fs::write(
        &plan,
        format!("match bank.change_password({secret:?}) {{ Ok(_) => \"changed\", Err(r) => r.code }}"),
    )
    .unwrap();
    let yes = answers(&dir, "yes\nyes\n");
    for format in ["human", "json"] {
        let (code, out) =
            cordon(&dir, &["run", "--env", "bank", "--approve", &yes, "--format", format, plan.to_str().unwrap()]);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("changed") && out.contains("<hidden>"), "{out}");
        assert!(!out.contains(secret), "{format}: {out}");
    }
    for args in [&["audit", "show"][..], &["audit", "show", "--format", "json"]] {
        let (code, out) = cordon(&dir, args);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("Bank.change_password"), "{out}");
        assert!(!out.contains(secret), "{args:?}: {out}");
    }
}
