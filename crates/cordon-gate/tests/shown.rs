//! What a person reads is exactly what will happen, hostile cases first: text with terminal
//! escapes, invisible characters and fake card lines in every part of a card is shown escaped;
//! provenance is computed (a destination the model wrote is the model's, and flagged); and a
//! flagged card is not answered by reflex (`y` and "always" are refused at the terminal).
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::io::Cursor;
use std::sync::Arc;

use cordon_engine::Engine;
use cordon_gate::{Answer, Approver, Card, DenyAll, Flag, FlowShown, Gate, Origin, Reply, Shown, Terminal};
use cordon_label::{DcLabel, Formula, Label, Source, Tier};
use cordon_runtime::{Config, Json, Program, Run, Sessions, ToolCall, ToolHost};
use cordon_syntax::{SourceMap, Span};
use cordon_types::{CheckOptions, check};

/// Terminal escapes of every kind an attacker reaches for: erase the line, move up, set the
/// window title, write the clipboard (OSC 52), a C1 CSI, a carriage return, bidi overrides.
const HOSTILE: &str = "ok\u{1b}[2K\u{1b}[1A\u{1b}]0;title\u{7}\u{1b}]52;c;c2VjcmV0\u{7}\u{9b}31m\rfrom: the user's request\u{202e}lap\u{2066}";

/// Whether a terminal could show `line` as anything but its characters: a control, format or
/// other hidden character, or a combining mark with nothing under it.
fn hides_something(line: &str) -> Option<char> {
    let mut after_base = false;
    for c in line.chars() {
        if cordon_text::is_hidden(c) || (cordon_text::is_mark(c) && !after_base) {
            return Some(c);
        }
        after_base = !c.is_whitespace() && !cordon_text::is_mark(c);
    }
    None
}

fn hostile_label() -> Label {
    let principal = "mallory\u{1b}]52;c;eA==\u{7}";
    let dc = DcLabel { secrecy: Formula::principal(principal), integrity: Formula::principal(principal) };
    Label::new(dc, Source { what: Arc::from(format!("the result of `Evil.tool{HOSTILE}`")), span: Span::default() })
}

fn hostile_card() -> Card {
    let shown = |text: &str| Shown::labelled(text.into(), &hostile_label(), "ann");
    Card {
        id: 1,
        tool: format!("Evil.pay{HOSTILE}"),
        tier: Tier::Ask,
        action: format!("pay{HOSTILE}"),
        destination: Some(shown(&format!("shop{HOSTILE}"))),
        recipients: vec![shown(HOSTILE), shown("bob\n             from: the user's request")],
        content: Some(shown(&format!("line one\n{HOSTILE}\nline three\u{2028}still three"))),
        fields: vec![(format!("amount{HOSTILE}"), shown(HOSTILE))],
        decided_by: vec![format!("the result of `Evil.list{HOSTILE}`")],
        flows: vec![FlowShown {
            param: Some(format!("to{HOSTILE}")),
            value: shown(HOSTILE),
            sink: DcLabel::bottom(),
            meaning: format!("you vouch for {HOSTILE}"),
            let_out: vec![format!("group{HOSTILE}")],
            as_received: false,
            received: vec![format!("part{HOSTILE}")],
        }],
        flags: vec![Flag { says: format!("the recipient came from {HOSTILE}"), value: Some(format!("x{HOSTILE}")) }],
        sensitive: Vec::new(),
        grantable: true,
        label_class: format!("secret:{HOSTILE}"),
        by_model: false,
    }
}

#[test]
fn hostile_text_in_every_line_of_a_card_is_shown_escaped() {
    let card = hostile_card();
    for width in [40, 80, 200] {
        let text = card.render(width);
        for line in text.lines() {
            assert_eq!(hides_something(line), None, "a hidden character on the card line {line:?}");
            assert!(line.chars().count() <= width, "{line:?} is wider than {width}");
        }
        // The only "from: the user's request" is none: no value came from the request, and
        // the ones written into values stay inside their lines, escaped.
        let claims = text.lines().filter(|l| l.trim_start().starts_with("from: the user's request")).count();
        assert_eq!(claims, 0, "{text}");
        assert!(text.contains("\\u{1b}]52;c;"), "the clipboard write is shown: {text}");
        // Escaped once, exactly: the title, a value and a principal's name read back as sent.
        if width == 200 {
            assert!(text.starts_with("== approve? Evil.payok\\u{1b}[2K\\u{1b}[1A"), "{text}");
        }
        assert!(!text.contains("\\\\u{"), "escaped twice: {text}");
        assert!(text.contains("mallory\\u{1b}]52;c;eA==\\u{7}"), "the principal's name is escaped: {text}");
        assert!(text.contains("\\u{202e}"), "{text}");
    }
}

#[test]
fn secret_text_hidden_in_tag_characters_is_visible_on_the_card() {
    let tags: String = "IBAN DE99".chars().map(|c| char::from_u32(0xE0000 + c as u32).unwrap()).collect();
    let mut card = hostile_card();
    card.destination = Some(Shown::labelled(format!("innocent{tags}"), &Label::default(), "ann"));
    let text = card.render(80);
    assert!(text.contains("innocent\\u{e0049}\\u{e0042}\\u{e0041}\\u{e004e}"), "{text}");
}

/// A mail tool whose recipient's sink takes anyone's text: only the intent check stands
/// between an address the model chose and the send.
const MAIL: &str = r#"
type Refused = { code: String, reason: String }
capability Mail {
  tool send(to: String, body: String) -> Result[(), Refused]
    @approval(ask) @card(action = "send mail", recipients = [to], content = body)
    @label(to = untrusted(), body = untrusted(), pc = untrusted(), returns = public())
}
entry(mail: Mail) -> String
"#;

struct MailHost;

impl ToolHost for MailHost {
    fn perform(&mut self, _call: &ToolCall<'_>) -> Result<Json, String> {
        Ok(serde_json::json!({ "Ok": null }))
    }
}

/// The card the gate shows for sending `body` to `to`, written in the plan as literals, for a
/// plan a model wrote from `request` (or the user's own plan, with `None`).
fn card_for_literals(to: &str, body: &str, request: Option<&str>) -> Card {
    let plan = format!(r#"match mail.send("{to}", "{body}") {{ Ok(_) => "sent", Err(r) => r.code }}"#);
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", MAIL);
    let plan = sources.add("plan.cord", &plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let program = Program::new(&outcome.program.expect("the plan checks")).unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll));
    if let Some(request) = request {
        gate = gate.with_request(request);
    }
    let config = Config { user: "ann".into(), ..Config::default() };
    let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
    Engine::new(&mut MailHost).with_stage(&mut gate).start(&mut run);
    gate.records().iter().find_map(|r| r.card.as_deref().cloned()).expect("a card was shown")
}

#[test]
fn a_recipient_the_model_wrote_is_not_from_the_request_and_is_flagged() {
    let card = card_for_literals("mallory@evil.example", "the report", Some("send the report to bob@example.com"));
    let recipient = &card.recipients[0];
    assert_eq!(recipient.origin, Origin::Model);
    assert!(recipient.origin_words().contains("the model wrote"), "{}", recipient.origin_words());
    assert_eq!(card.flags.len(), 1, "{:?}", card.flags);
    assert_eq!(card.flags[0].value.as_deref(), Some("mallory@evil.example"));
    assert!(card.flags[0].says.contains("the plan the model wrote"), "{}", card.flags[0].says);
    assert_eq!(card.content.as_ref().unwrap().origin, Origin::Request, "the body is the request's words");
    let text = card.render(80);
    assert!(text.starts_with("== approve?") && text.lines().nth(1).unwrap().starts_with("!! FLAGGED"), "{text}");
    assert!(!text.contains("always"), "a flagged card offers no always: {text}");
}

#[test]
fn a_recipient_copied_from_the_request_is_from_the_request_and_not_flagged() {
    let card = card_for_literals("bob@example.com", "the report", Some("send the report to bob@example.com"));
    assert_eq!(card.recipients[0].origin, Origin::Request);
    assert!(card.flags.is_empty(), "{:?}", card.flags);
    assert!(card.render(80).contains("from: the user's request"));
    // A plan the user wrote (`cordon run`): its text is the user's own.
    let card = card_for_literals("carol@example.com", "a note", None);
    assert_eq!(card.recipients[0].origin, Origin::Request);
    assert!(card.flags.is_empty(), "{:?}", card.flags);
}

#[test]
fn a_recipient_with_look_alike_letters_is_flagged_even_when_the_request_names_it() {
    let lookalike = "bob@p\u{430}ypal.example";
    let card = card_for_literals(lookalike, "the report", Some(&format!("send the report to {lookalike}")));
    assert_eq!(card.recipients[0].origin, Origin::Request);
    assert_eq!(card.flags.len(), 1, "{:?}", card.flags);
    assert!(card.flags[0].says.contains("mixes Latin and Cyrillic letters"), "{}", card.flags[0].says);
}

/// A card flagged about `recipient`, as the gate would show it.
fn flagged_card(recipient: &str) -> Card {
    let shown = |text: &str| Shown::labelled(text.into(), &Label::default(), "ann");
    Card {
        id: 1,
        tool: "Mail.send".into(),
        tier: Tier::Ask,
        action: "send mail".into(),
        destination: None,
        recipients: vec![shown(recipient)],
        content: Some(shown("the report")),
        fields: Vec::new(),
        decided_by: Vec::new(),
        flows: Vec::new(),
        flags: vec![Flag {
            says: format!("the recipient `{recipient}` came from the plan"),
            value: Some(recipient.into()),
        }],
        sensitive: Vec::new(),
        grantable: false,
        label_class: "public".into(),
        by_model: false,
    }
}

/// What the terminal approver answers to `card` when the person types `typed`, and what it
/// wrote.
fn answer_at_terminal(card: &Card, typed: &str) -> (Answer, String) {
    let mut output = Vec::new();
    let mut terminal = Terminal::new(Cursor::new(typed.as_bytes().to_vec()), &mut output);
    let Reply::Answer(answer) = terminal.review(card) else { panic!("a terminal answers at once") };
    drop(terminal);
    (answer, String::from_utf8(output).unwrap())
}

#[test]
fn y_alone_does_not_approve_a_flagged_card() {
    let card = flagged_card("mallory@evil.example");
    let (answer, shown) = answer_at_terminal(&card, "y\nyes\nalways\n");
    assert_eq!(answer, Answer::No, "{shown}");
    assert_eq!(shown.matches("a flagged card is not approved by y or always").count(), 3, "{shown}");
    assert!(!shown.contains("[a]lways") && !shown.contains("always = yes"), "always is offered: {shown}");
    // Refused, then asked again: `n` denies at once.
    let (answer, shown) = answer_at_terminal(&card, "y\nn\n");
    assert_eq!(answer, Answer::No);
    assert_eq!(shown.matches("FLAGGED: approve Mail.send?").count(), 2, "{shown}");
    // The end of another value is not the end of this one.
    let (answer, _) = answer_at_terminal(&card, ".com\n\n\n");
    assert_eq!(answer, Answer::No);
}

#[test]
fn the_flagged_values_last_characters_approve_it_once() {
    let card = flagged_card("mallory@evil.example");
    let (answer, shown) = answer_at_terminal(&card, "y\nmple\n");
    assert_eq!(answer, Answer::Yes, "{shown}");
    assert!(shown.contains("type the last 4 characters of `mallory@evil.example`"), "{shown}");
    // A value ending in invisible characters: the person types what the card shows.
    let card = flagged_card("bob@example.com\u{200b}");
    assert_eq!(card.confirmation().unwrap().1, "00b}");
    let (answer, _) = answer_at_terminal(&card, ".com\n");
    assert_eq!(answer, Answer::No, "the hidden character is part of what must be read");
    let (answer, _) = answer_at_terminal(&card, "00b}\n");
    assert_eq!(answer, Answer::Yes);
    // A card with no flag is still answered with y, and offers always where a grant may be made.
    let mut plain = flagged_card("bob@example.com");
    plain.flags.clear();
    plain.grantable = true;
    let (answer, shown) = answer_at_terminal(&plain, "always\n");
    assert_eq!(answer, Answer::Always, "{shown}");
    assert!(shown.contains("[a]lways"), "{shown}");
}
