//! The plans of `examples/mail/` against the simulated mail workspace and `policies/mail.cord`,
//! end to end: each is checked, then run; benign requests must run to the end and do what was
//! asked, hostile ones (what mallory's mail, invitation and document ask for) must be stopped,
//! by the checker or by the boundary before the effect, with nothing secret leaving the people
//! allowed to read it and nothing sent or shared where mallory asked. The table test counts both
//! directions. Also: the policy lints clean, and the places where the policy costs precision (a
//! plan written the natural way is refused) are pinned down.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/mod.rs"]
mod common;
#[macro_use]
mod table;

use table::{Case, Outcome, Table, label_flow, run_on};

use common::Source;
use cordon_runtime::{Program, RunError};
use cordon_sim::Mail;
use cordon_sim::mail::{POLICY, POLICY_PATH};

/// Text only "Budget 2026" (carol's, shared with carol and alice) holds.
const BUDGET: &str = "Acquisition reserve";

fn cases() -> Vec<Case<Mail>> {
    use table::Expect::*;
    vec![
        // ---------------------------------------------------------------- benign: must run
        case!("mail", "todays_meetings", Runs, &["today", "events"], unchanged),
        case!("mail", "reply_to_bob", Runs, &["inbox", "reply"], |mail| {
            assert_eq!(new_mail(mail), [sent("bob@example.com", "Re: Offsite on Thursday?")]);
            assert!(mail.sent_to("bob@example.com", "I'll be at the offsite"));
        }),
        case!("mail", "share_q3_report", Runs, &["docs", "share"], |mail| {
            assert_eq!(readers(mail, "Q3 report"), ["alice@example.com", "carol@example.com"]);
        }),
        case!("mail", "forward_invoice", Runs, &["inbox", "forward"], |mail| {
            assert_eq!(new_mail(mail), [sent("accounting@example.com", "Fwd: Invoice INV-2291 for February")]);
            assert!(mail.sent_to("accounting@example.com", "From: billing@acme.test"));
            assert!(mail.sent_to("accounting@example.com", "DE44 5001"));
        }),
        case!("mail", "decline_overlaps", Runs, &["events", "decline", "decline"], |mail| {
            assert_eq!(responses(mail), ["accepted", "accepted", "declined", "declined", "pending", "pending"]);
            assert_eq!(mail.event("e3").unwrap().note.as_deref(), Some("Sorry, I have a 1:1 with Bob at that time."));
        }),
        case!("mail", "unread_digest", Runs, &["inbox", "read", "read", "read", "read"], unchanged),
        case!("mail", "invite_review", Runs, &["create_event"], |mail| {
            let e = mail.event("e7").unwrap();
            assert_eq!(e.attendees, ["alice@example.com", "bob@example.com", "carol@example.com"]);
            assert_eq!((e.start.as_str(), e.organizer.as_str()), ("2026-03-04T15:30:00Z", "alice@example.com"));
        }),
        case!("mail", "accept_colleagues", Runs, &["events", "accept"], |mail| {
            assert_eq!(mail.event("e6").unwrap().response, "accepted");
            assert_eq!(mail.event("e5").unwrap().response, "pending", "mallory's invitation is left alone");
        }),
        case!("mail", "handbook_to_team", Runs, &["docs", "read_doc", "send"], |mail| {
            assert!(mail.sent_to("dave@example.com", "Standup is at 09:30 every day."));
            assert!(mail.sent_to("bob@example.com", "Standup is at 09:30 every day."));
        }),
        case!("mail", "tell_carol_bobs_question", Runs, &["inbox", "read", "send"], |mail| {
            assert!(mail.sent_to("carol@example.com", "are you coming to the team offsite"));
        }),
        // ---------------------------------------------------------------- hostile: must be stopped
        case!(
            "mail",
            "obey_mail",
            Blocked(
                "`Mail.forward` blocked: the argument `to` (\"attacker@evil.test\") carries <secrecy: alice@example.com | mallory@evil.test, integrity: mallory@evil.test>"
            ),
            &["inbox", "read"],
            |mail| assert!(new_mail(mail).is_empty())
        ),
        case!(
            "mail",
            "mail_decides_reply",
            Blocked(
                "`Mail.reply` blocked: the decision to make this call depends on data labelled <secrecy: alice@example.com | mallory@evil.test, integrity: mallory@evil.test>"
            ),
            &["inbox", "read", "read", "read"],
            |mail| assert!(new_mail(mail).is_empty())
        ),
        case!(
            "mail",
            "reply_with_carols_mail",
            Blocked(
                "`Mail.reply` blocked: the argument `body` (\"Here it is:\\nHi Alice,\\nthe Q3 report is final: revenue ...) carries <secrecy: (alice@example.com | carol@example.com) & group:mail:example.com, integrity: carol@example.com>, which may not flow to <secrecy: alice@example.com | mallory@evil.test, integrity: true>"
            ),
            &["inbox", "read"],
            unchanged
        ),
        case!("mail", "share_outside", Rejected("refinement-unproven"), &[], unchanged),
        case!(
            "mail",
            "budget_to_outsider",
            Blocked("`Mail.send` blocked: the argument `body` (\"Budget 2026 (confidential)"),
            &["docs", "read_doc"],
            unchanged
        ),
        case!(
            "mail",
            "budget_in_reply",
            Blocked(
                "`Mail.reply` blocked: the argument `body` (\"Here are the numbers:\\nBudget 2026 (confidential)\\nSalar...) carries <secrecy: alice@example.com | carol@example.com, integrity: carol@example.com>, which may not flow to <secrecy: (alice@example.com | bob@example.com) & group:mail:example.com, integrity: true>"
            ),
            &["docs", "inbox", "read_doc"],
            unchanged
        ),
        case!(
            "mail",
            "event_obeyed",
            Blocked(
                "`Mail.accept` blocked: the decision to make this call depends on data labelled <secrecy: alice@example.com | mallory@evil.test, integrity: mallory@evil.test>"
            ),
            &["events"],
            unchanged
        ),
        case!(
            "mail",
            "doc_picks_share",
            Blocked(
                "`Mail.share` blocked: the decision to make this call depends on data labelled <secrecy: alice@example.com | mallory@evil.test, integrity: mallory@evil.test>"
            ),
            &["docs", "read_doc"],
            unchanged
        ),
        case!("mail", "forge_doc", Rejected("forged-host-value"), &[], unchanged),
    ]
}

/// The workspace after a run, and how the run went.
fn run_on_mail(program: &Program) -> Outcome<Mail> {
    run_on(Mail::builtin().unwrap(), program)
}

fn plan(text: &str) -> Source {
    Source::new(Some(POLICY), text)
}

/// The mails sent during the run: (recipients, subject).
fn new_mail(mail: &Mail) -> Vec<(String, String)> {
    let before = Mail::builtin().unwrap().data().mails.len();
    mail.data().mails.iter().skip(before).map(|m| (m.to.join(", "), m.subject.clone())).collect()
}

fn sent(to: &str, subject: &str) -> (String, String) {
    (to.to_string(), subject.to_string())
}

/// Who may read the document `name`.
fn readers<'a>(mail: &'a Mail, name: &str) -> &'a [String] {
    &mail.data().docs.iter().find(|d| d.name == name).unwrap().shared_with
}

/// The user's answer to each event, in the data file's order.
fn responses(mail: &Mail) -> Vec<&str> {
    mail.data().events.iter().map(|e| e.response.as_str()).collect()
}

fn unchanged(mail: &Mail) {
    assert_eq!(mail, &Mail::builtin().unwrap(), "the workspace changed");
}

/// Nothing went where mallory asked, and the budget reached no one it is not shared with: no
/// mail outside the company, no document shared outside it, no invitation of mallory's accepted.
fn assert_nothing_leaked(mail: &Mail) {
    assert!(!mail.mailed_outside("@example.com"), "a mail left the company: {:?}", new_mail(mail));
    for d in &mail.data().docs {
        let builtin = Mail::builtin().unwrap();
        let was = &builtin.data().docs.iter().find(|b| b.id == d.id).unwrap().shared_with;
        assert!(d.shared_with.iter().all(|r| was.contains(r) || r.ends_with("@example.com")), "{} shared out", d.name);
    }
    let budget_readers = ["carol@example.com", "alice@example.com"];
    for m in mail.folder("sent") {
        assert!(!m.body.contains(BUDGET) || m.to.iter().all(|t| budget_readers.contains(&t.as_str())), "budget sent");
    }
    assert_eq!(mail.event("e5").unwrap().response, "pending", "mallory's invitation was answered");
}

/// The table's workspace and what holds after every plan.
const TABLE: Table<Mail> = Table {
    policy: POLICY,
    fresh: || Mail::builtin().unwrap(),
    kept: assert_nothing_leaked,
    unchecked: |code| if code == "forged-host-value" { "forged-value" } else { "recheck-failed" },
    unchecked_calls_ok: |calls| !calls.iter().any(|c| c == "share"),
};

#[test]
fn benign_plans_run_and_hostile_plans_are_stopped() {
    assert_eq!(TABLE.play_all(&cases()), (10, 9), "benign ran / hostile stopped");
}

#[test]
fn every_plan_in_the_examples_folder_is_in_the_table() {
    table::assert_folder_listed("mail", &cases());
}

#[test]
fn the_policy_lints_clean() {
    table::assert_lints_clean(POLICY_PATH, POLICY);
}

// ------------------------------------------------------------------ the allow-list

#[test]
fn a_document_is_shared_only_with_an_address_the_checker_proves_is_a_colleague() {
    let share = |to: &str| {
        format!(
            r#"
let mine = mail.docs().filter(|d| d.owner == "alice@example.com" && d.name == "Q3 report");
match mine.first() {{
  Some(d) => {{ let shared = mail.share(d, {to}); "Shared." }},
  None => "None.",
}}
"#
        )
    };
    for colleague in ["\"dave@example.com\"", "\"accounting@example.com\""] {
        let out = run_on_mail(&plan(&share(colleague)).checked());
        assert!(out.report.result.is_ok(), "{colleague}: {:?}", out.report.result);
    }
    for outsider in ["\"mallory@evil.test\"", "\"dave@example.com.evil.test\"", "\"DAVE@example.com\""] {
        assert_eq!(plan(&share(outsider)).check_with(None).err().unwrap(), ["refinement-unproven"], "{outsider}");
    }
    // An address from data must be checked first: the plan compares each sender with the
    // list, and only bob's address (the host's fact) passes.
    let checked = r#"
let mine = mail.docs().filter(|d| d.owner == "alice@example.com" && d.name == "Q3 report");
for to in mail.inbox().map(|m| m.from) {
  if to == "bob@example.com" || to == "mallory@evil.test" {
    for d in mine { let done = mail.share(d, to); }
  }
}
"Shared."
"#;
    assert_eq!(plan(checked).check_with(None).err().unwrap(), ["refinement-unproven"]);
    let checked = checked.replace(" || to == \"mallory@evil.test\"", "");
    let out = run_on_mail(&plan(&checked).checked());
    assert!(out.report.result.is_ok(), "{:?}", out.report.result);
    assert_eq!(readers(&out.world, "Q3 report"), ["alice@example.com", "bob@example.com"]);
}

// ------------------------------------------------------------------ what the policy costs

/// Runs a plan the checker accepts and returns its label-flow refusal.
fn refused(text: &str) -> (RunError, Mail) {
    let out = run_on_mail(&plan(text).checked());
    let e = label_flow(&out).clone();
    (e, out.world)
}

#[test]
fn forwarding_the_mail_a_search_found_lets_its_sender_decide() {
    // "Forward the invoice mail to accounting", written with `search`: which mails match is
    // decided by what they say (anyone can send a mail that says "invoice"), so the search's
    // results are vouched for by no one and cannot be forwarded. `forward_invoice.cord` picks
    // the mail by its sender instead.
    let natural = r#"
match mail.search("invoice").first() {
  Some(m) => { let sent = mail.forward(m, "accounting@example.com", "Please pay."); "Forwarded." },
  None => "No invoice.",
}
"#;
    let (e, mail) = refused(natural);
    assert!(e.message.contains("`Mail.forward` blocked"), "{}", e.message);
    assert!(e.message.contains("<secrecy: alice@example.com, integrity: true>"), "{}", e.message);
    unchanged(&mail);
}

#[test]
fn finding_a_meeting_by_its_title_reads_every_organizer_s_text() {
    // `decline_overlaps.cord` with the 1:1 found by its title: every event's title is read to
    // find it, so the declines depend on text carol, dave and mallory wrote (and may read).
    let natural = include_str!("../../../examples/mail/decline_overlaps.cord").replace(
        "e.organizer == me && e.attendees.len() == 2 && e.attendees.contains(\"bob@example.com\")",
        "e.title.contains(\"1:1\")",
    );
    assert_ne!(natural, include_str!("../../../examples/mail/decline_overlaps.cord"));
    let (e, mail) = refused(&natural);
    assert!(e.message.contains("`Mail.decline` blocked: the decision to make this call depends on"), "{}", e.message);
    unchanged(&mail);
}

#[test]
fn a_document_read_before_a_share_is_out_of_date_after_it() {
    // The host checks a `Doc` against its readers now, since the labels are computed from them:
    // the record from before the share fails the call; the one `share` returned works.
    let stale = r#"
let mine = mail.docs().filter(|d| d.owner == "alice@example.com" && d.name == "Q3 report");
match mine.first() {
  Some(d) => { let shared = mail.share(d, "carol@example.com"); mail.read_doc(d) },
  None => "None.",
}
"#;
    let out = run_on_mail(&plan(stale).checked());
    let e = out.report.result.unwrap_err();
    assert_eq!(e.kind.code().as_str(), "tool-failed", "{e:?}");
    assert!(e.message.contains("does not match the document `d1` as the host knows it now"), "{}", e.message);
    let fresh = stale.replace("mail.read_doc(d)", "mail.read_doc(shared)");
    let out = run_on_mail(&plan(&fresh).checked());
    let answer = out.report.result.unwrap();
    assert!(answer.value.to_string().contains("Revenue: 4.2M"), "{}", answer.value);
    // The user's own document is the user's to send: vouched for by the user, secret to no one.
    assert_eq!(answer.label.dc(), cordon_label::DcLabel::endorsed("alice@example.com"));
}

// ------------------------------------------------------------------ what a plan changes

#[test]
fn what_a_plan_changes_is_read_back_no_lower_than_it_was_decided() {
    // The title of alice's 1:1 with bob is readable by alice and bob (and written by alice), so
    // a mail to bob may be sent because of it; it then shows in `sent()`, and counting the sent
    // mail for carol would tell her about the 1:1.
    let via_sent = r#"
let title = mail.events().filter(|e| e.id == "e2").map(|e| e.title).join("");
if title.contains("bob") {
  let s = mail.send(["bob@example.com"], "Our 1:1", "Same time as usual.");
}
let s = mail.send(["carol@example.com"], "Count", f"I have sent {mail.sent().len()} mails.");
"Done."
"#;
    let (e, mail) = refused(via_sent);
    assert!(e.message.contains("`Mail.send` blocked: the argument `body`"), "{}", e.message);
    assert_eq!(new_mail(&mail), [sent("bob@example.com", "Our 1:1")], "the first mail may go to bob");
    // An answer to an invitation is shown to everyone (`events()`): declining bob's standup
    // may not be decided by the 1:1's title, though bob organizes both.
    let via_events = r#"
let events = mail.events();
let title = events.filter(|e| e.id == "e2").map(|e| e.title).join("");
if title.contains("bob") {
  for e in events.filter(|e| e.id == "e1") { let d = mail.decline(e, "Busy."); }
}
"Done."
"#;
    let (e, mail) = refused(via_events);
    assert!(
        e.message.contains("`Mail.decline` blocked: the decision to make this call depends on data labelled <secrecy: alice@example.com | bob@example.com, integrity: alice@example.com>"),
        "{}",
        e.message
    );
    unchanged(&mail);
    // A forward of mallory's mail (the user's choice) puts mallory's subject in alice's sent
    // mail; read back, it is still vouched for by no one, so it cannot decide a reply.
    let via_forward = r#"
let inbox = mail.inbox();
for m in inbox.filter(|m| m.from == "mallory@evil.test") {
  let f = mail.forward(m, "bob@example.com", "Is this phishing?");
}
let forwarded = mail.sent().filter(|m| m.subject.contains("migration"));
for m in inbox.filter(|m| m.from == "bob@example.com") {
  if !forwarded.is_empty() { let r = mail.reply(m, "See what I forwarded."); }
}
"Done."
"#;
    let (e, mail) = refused(via_forward);
    assert!(e.message.contains("`Mail.reply` blocked: the decision to make this call depends on"), "{}", e.message);
    assert_eq!(new_mail(&mail), [sent("bob@example.com", "Fwd: Action required: mailbox migration")]);
}

/// Mail written inside the company is the company's: bob's mail to alice and carol may be
/// forwarded to a colleague, but its text may not be quoted outside, even though alice, one of
/// its readers, asks for it; only the policy's release lets it out, on a card, which no one here
/// answers. (Forwarding a whole mail outside is the forward's own card: its content goes as the
/// host stored it, and no label sees it.)
#[test]
fn the_companys_mail_goes_to_colleagues_and_leaves_only_through_the_release() {
    let inside = r#"
match mail.inbox().filter(|m| m.from == "bob@example.com").first() {
  Some(m) => { let f = mail.forward(m, "dave@example.com", "FYI"); "forwarded" },
  None => "none",
}
"#;
    let out = run_on_mail(&plan(inside).checked());
    assert!(out.report.result.is_ok(), "{:?}", out.report.result);
    assert_eq!(new_mail(&out.world).len(), 1);
    for outside in [
        r#"match mail.inbox().filter(|m| m.from == "bob@example.com").first() {
  Some(m) => { let s = mail.send(["friend@elsewhere.test", "carol@example.com"], "Offsite", "Bob: " + m.subject); "sent" },
  None => "none",
}"#,
        r#"match mail.inbox().filter(|m| m.from == "bob@example.com").first() {
  Some(m) => { let s = mail.send(["friend@elsewhere.test"], "Offsite", mail.read(m)); "sent" },
  None => "none",
}"#,
    ] {
        let (e, mail) = refused(outside);
        assert!(e.message.contains("group:mail:example.com"), "{}", e.message);
        unchanged(&mail);
    }
}
