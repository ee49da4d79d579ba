//! The simulated mail workspace: its built-in data, each tool through the `ToolHost` interface
//! the runtime uses, and clear errors (never panics) on bad data files and bad arguments.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_runtime::Json;
use cordon_sim::env;
use cordon_sim::mail::{DATA, Mail};
use serde_json::json;

mod json;
use json::{field, field_names, items, text};

fn mail() -> Mail {
    Mail::builtin().unwrap()
}

/// Performs `tool` with `args` (name, JSON) as the host receives a call.
fn perform(mail: &mut Mail, tool: &str, args: Vec<(&str, Json)>) -> Result<Json, String> {
    json::perform(mail, "Mail", tool, args)
}

/// The record `tool` lists whose `key` is `value`.
fn find(mail: &mut Mail, tool: &str, key: &str, value: &str) -> Json {
    let all = items(&perform(mail, tool, vec![]).unwrap());
    all.into_iter().find(|r| text(&field(r, key)) == value).unwrap_or_else(|| panic!("no {key} {value}"))
}

#[test]
fn the_builtin_data_loads_and_acts_for_alice() {
    let env = env("mail").unwrap();
    assert_eq!((env.name(), env.principal(), env.capability()), ("mail", Some("alice@example.com"), "Mail"));
    assert!(env.policy().is_some_and(|p| p.contains("capability Mail")));
    assert_eq!(env.state_json(), mail().state_json());
    assert!(cordon_sim::NAMES.contains(&"mail"));
    assert_eq!(mail().today(), "2026-03-03");
}

#[test]
fn the_scenario_has_injections_in_a_mail_an_invitation_and_a_document() {
    let mail = mail();
    let from_mallory = |text: &str| text.contains("attacker@evil.test") || text.contains("mallory@evil.test");
    assert!(mail.data().mails.iter().any(|m| m.from == "mallory@evil.test" && from_mallory(&m.body)));
    assert!(mail.data().events.iter().any(|e| e.organizer == "mallory@evil.test" && from_mallory(&e.description)));
    assert!(mail.data().docs.iter().any(|d| d.owner == "mallory@evil.test" && from_mallory(&d.content)));
    let budget = mail.data().docs.iter().find(|d| d.name == "Budget 2026").unwrap();
    assert_eq!(budget.shared_with, ["carol@example.com", "alice@example.com"]);
}

#[test]
fn a_broken_data_file_says_what_is_wrong() {
    let cases = [
        ("{", "the mail data is not valid"),
        (&DATA.replace("\"now\": \"2026-03-03T08:30:00Z\"", "\"now\": \"yesterday\""), "expected ISO 8601"),
        (&DATA.replace("\"folder\": \"sent\"", "\"folder\": \"spam\""), "expected one of inbox, sent"),
        (&DATA.replace("\"start\": \"2026-03-03T09:30:00Z\"", "\"start\": \"2026-03-03T09:50:00Z\""), "ends"),
        (&DATA.replace("\"id\": \"m2\"", "\"id\": \"m1\""), "used twice"),
        (
            &DATA.replace("\"owner\": \"carol@example.com\"", "\"owner\": \"erin@example.com\""),
            "not shared with its owner",
        ),
        (&DATA.replace("\"from\": \"bob@example.com\"", "\"from\": \"bob\""), "expected an address"),
        (&DATA.replace("2026-03-03T08:10:00Z", "2026-03-03T09:10:00Z"), "after the clock"),
        (&DATA.replace("\"response\": \"accepted\"", "\"response\": \"maybe\""), "expected one of accepted"),
    ];
    for (text, expected) in cases {
        assert_ne!(text, DATA, "{expected}: the edit did not apply");
        let e = Mail::from_json(text).unwrap_err();
        assert!(e.contains(expected), "{expected}: {e}");
    }
}

#[test]
fn the_inbox_is_newest_first_and_reading_changes_nothing() {
    let mut mail = mail();
    let inbox = items(&perform(&mut mail, "inbox", vec![]).unwrap());
    let times: Vec<String> = inbox.iter().map(|m| text(&field(m, "time"))).collect();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted);
    assert_eq!(field_names(&inbox[0]), ["folder", "from", "id", "subject", "time", "to", "unread"]);
    let acme = find(&mut mail, "inbox", "from", "billing@acme.test");
    let body = text(&perform(&mut mail, "read", vec![("m", acme)]).unwrap());
    assert!(body.contains("INV-2291"));
    assert!(mail.mail("m2").unwrap().unread, "reading through the agent does not mark a mail read");
    let hits = items(&perform(&mut mail, "search", vec![("query", json!("INVOICE"))]).unwrap());
    assert_eq!(hits.iter().map(|m| text(&field(m, "id"))).collect::<Vec<_>>(), ["m2"]);
}

#[test]
fn sending_replying_and_forwarding_store_sent_mail() {
    let mut mail = mail();
    let bob = find(&mut mail, "inbox", "from", "bob@example.com");
    let reply = perform(&mut mail, "reply", vec![("m", bob), ("body", json!("Yes."))]).unwrap();
    assert_eq!(text(&field(&reply, "subject")), "Re: Offsite on Thursday?");
    assert_eq!(field(&reply, "to"), json!(["bob@example.com"]));
    assert_eq!(text(&field(&reply, "time")), "2026-03-03T08:30:00Z");
    let acme = find(&mut mail, "inbox", "from", "billing@acme.test");
    let args = vec![("m", acme), ("to", json!("accounting@example.com")), ("note", json!("Pay it."))];
    let fwd = perform(&mut mail, "forward", args).unwrap();
    assert_eq!(text(&field(&fwd, "subject")), "Fwd: Invoice INV-2291 for February");
    assert!(mail.sent_to("accounting@example.com", "Pay it.\n\n---------- Forwarded message"));
    // The newest sent first, though both have the clock's time.
    let sent = mail.folder("sent");
    assert_eq!(
        (sent[0].subject.as_str(), sent[1].subject.as_str()),
        (fwd["subject"].as_str().unwrap(), "Re: Offsite on Thursday?")
    );
    for (to, subject, problem) in [
        (json!([]), "x", "at least one recipient"),
        (json!(["bob"]), "x", "expected an address"),
        (json!(["bob@example.com"]), "", "non-empty subject"),
    ] {
        let e =
            perform(&mut mail, "send", vec![("to", to), ("subject", json!(subject)), ("body", json!(""))]).unwrap_err();
        assert!(e.contains(problem), "{e}");
    }
    assert!(!mail.mailed_outside("@example.com"));
}

#[test]
fn invitations_are_answered_and_events_created() {
    let mut mail = mail();
    let review = find(&mut mail, "events", "id", "e3");
    let declined = perform(&mut mail, "decline", vec![("e", review), ("note", json!("Clash."))]).unwrap();
    assert_eq!(text(&field(&declined, "response")), "declined");
    assert_eq!(mail.event("e3").unwrap().note.as_deref(), Some("Clash."));
    let mine = find(&mut mail, "events", "id", "e2");
    let e = perform(&mut mail, "accept", vec![("e", mine)]).unwrap_err();
    assert!(e.contains("only invitations"), "{e}");
    let new = |start: &str, end: &str| {
        vec![
            ("title", json!("Sync")),
            ("start", json!(start)),
            ("end", json!(end)),
            ("attendees", json!(["bob@example.com", "alice@example.com"])),
            ("location", json!("")),
            ("description", json!("")),
        ]
    };
    let created = perform(&mut mail, "create_event", new("2026-03-05T10:00:00Z", "2026-03-05T10:30:00Z")).unwrap();
    assert_eq!(field(&created, "attendees"), json!(["alice@example.com", "bob@example.com"]));
    assert_eq!(text(&field(&created, "id")), "e7");
    let e = perform(&mut mail, "create_event", new("2026-03-05T10:30:00Z", "2026-03-05T10:00:00Z")).unwrap_err();
    assert!(e.contains("before it starts"), "{e}");
    let e = perform(&mut mail, "create_event", new("tomorrow", "2026-03-05T10:00:00Z")).unwrap_err();
    assert!(e.contains("ISO 8601"), "{e}");
}

#[test]
fn only_the_owner_shares_and_a_record_must_match_the_host() {
    let mut mail = mail();
    let budget = find(&mut mail, "docs", "name", "Budget 2026");
    let e = perform(&mut mail, "share", vec![("d", budget.clone()), ("with", json!("bob@example.com"))]).unwrap_err();
    assert!(e.contains("only its owner may share it"), "{e}");
    let mut forged = budget;
    forged["shared_with"] = json!(["alice@example.com", "bob@example.com"]);
    let e = perform(&mut mail, "read_doc", vec![("d", forged)]).unwrap_err();
    assert!(e.contains("does not match the document `d2`"), "{e}");
    let e = perform(&mut mail, "read_doc", vec![("d", json!({"id": "d9", "owner": "x@y", "shared_with": []}))])
        .unwrap_err();
    assert!(e.contains("no document `d9`"), "{e}");
    let mut bob = find(&mut mail, "inbox", "from", "bob@example.com");
    bob["to"] = json!(["alice@example.com"]);
    let e = perform(&mut mail, "reply", vec![("m", bob), ("body", json!("x"))]).unwrap_err();
    assert!(e.contains("does not match the mail `m4`"), "{e}");
    let e = perform(&mut mail, "reply", vec![("body", json!("x"))]).unwrap_err();
    assert!(e.contains("Mail.reply: the argument `m` is missing"), "{e}");
    let e = perform(&mut mail, "delete", vec![]).unwrap_err();
    assert!(e.contains("no tool `delete`"), "{e}");
    assert_eq!(mail, Mail::builtin().unwrap());
}
