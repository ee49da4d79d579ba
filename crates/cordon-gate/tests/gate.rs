//! The gate's rules, hostile cases first: deny beats every approval and grant; `ask_always`
//! ignores grants; grants are keyed by tool, destination and label class; an injected
//! recipient is flagged even under a grant; nothing is performed when the approver denies or
//! the grant store fails; a call the labels refused is put to the user only where the user may
//! approve it.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_engine::{Ending, Engine};
use cordon_gate::{Answer, ApproveAll, Approver, Card, DenyAll, Gate, Grants, MemoryGrants, Reply, Scripted, rule};
use cordon_gate::{Decision, ProvenanceRules};
use cordon_label::Tier;
use cordon_runtime::{Config, ErrorKind, Json, Program, Run, Sessions, ToolCall, ToolHost};
use cordon_sim::Shop;
use cordon_store::{Grant, GrantQuery, NewGrant, Scope, StoreError};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

/// `policy` and `plan` checked and compiled.
fn program(policy: &str, plan: &str) -> Program {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", policy);
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let Some(checked) = outcome.program else { panic!("the plan does not check: {:#?}", outcome.diagnostics) };
    Program::new(&checked).unwrap()
}

fn shop_program(plan: &str) -> Program {
    program(cordon_sim::shop::POLICY, plan)
}

/// Runs `program` against `host` through the engine with `gate` as its one stage.
fn drive(program: &Program, user: &str, host: &mut dyn ToolHost, gate: &mut Gate<'_>) -> Ending {
    let config = Config { user: user.into(), ..Config::default() };
    let mut run = Run::start(program, &Sessions::default(), &config).unwrap();
    Engine::new(host).with_stage(gate).start(&mut run)
}

fn done(ending: Ending) -> String {
    match ending {
        Ending::Done(v) => v.value.to_string(),
        other => panic!("expected the run to finish, got {other:?}"),
    }
}

fn failed(ending: Ending) -> cordon_runtime::RunError {
    match ending {
        Ending::Failed(e) => e,
        other => panic!("expected the run to fail, got {other:?}"),
    }
}

/// A grant for `tool` to `destination` with `class` data, until revoked.
fn grant(tool: &str, destination: &str, class: &str) -> NewGrant {
    NewGrant {
        tool: tool.into(),
        destination: destination.into(),
        label_class: class.into(),
        scope: Scope::UntilRevoked,
        expires_ms: None,
        instance: None,
        principal: None,
    }
}

/// Grants over every tool, destination and class the tests use.
fn grants_for_everything(tools: &[&str]) -> MemoryGrants {
    let grants = MemoryGrants::new();
    for tool in tools {
        for class in ["public", "secret:ann"] {
            grants.add(&grant(tool, "*", class)).unwrap();
        }
    }
    grants
}

const TRANSFER: &str = r#"
let accounts = shop.accounts();
match (accounts.get(1), accounts.get(0)) {
  (Some(from), Some(to)) => match shop.transfer(from, to, 50000) { Ok(_) => "moved", Err(r) => r.code },
  _ => "no accounts",
}
"#;

#[test]
fn deny_beats_every_approval_and_every_grant() {
    let program = shop_program(TRANSFER);
    let mut shop = Shop::builtin().unwrap();
    let mut approver = Scripted::parse("always\nyes\nyes").unwrap();
    let grants = grants_for_everything(&["Shop.transfer"]);
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_grants(Box::new(&grants));
    let result = done(drive(&program, "ann", &mut shop, &mut gate));
    assert_eq!(result, "\"approval-denied\"");
    assert!(shop.data().transfers.is_empty(), "a deny tool was performed");
    assert_eq!(gate.stats().denied, 1);
    assert_eq!(gate.stats().cards, 0, "a deny tool shows no card: nothing anyone answers matters");
    let reason = gate.records()[1].reason.clone().unwrap();
    assert!(reason.contains("@approval(deny)"), "{reason}");
    drop(gate);
    assert_eq!(approver.remaining(), 3, "the approver was never asked");
    // Even an approver that approves everything.
    let mut gate = Gate::new(&program, "ann", Box::new(ApproveAll));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"approval-denied\"");
    assert!(shop.data().transfers.is_empty());
}

#[test]
fn the_rules_are_three_valued_and_deny_wins() {
    for flows in [false, true] {
        for flagged in [false, true] {
            for consent in [false, true] {
                for granted in [false, true] {
                    assert_eq!(rule(Tier::Deny, flows, flagged, consent, granted), Decision::Deny);
                    assert_eq!(
                        rule(Tier::AskAlways, flows, flagged, consent, granted),
                        Decision::NeedsApproval { grantable: false }
                    );
                    // What needs consent needs a card under every other tier and grant, and
                    // never makes a grant.
                    if consent {
                        for tier in [Tier::Ask, Tier::None] {
                            let decision = rule(tier, flows, flagged, consent, granted);
                            assert_eq!(decision, Decision::NeedsApproval { grantable: false });
                        }
                    }
                }
            }
        }
    }
    assert_eq!(rule(Tier::Ask, false, false, false, true), Decision::Allow);
    assert_eq!(rule(Tier::Ask, false, true, false, true), Decision::NeedsApproval { grantable: false });
    assert_eq!(rule(Tier::Ask, true, false, false, true), Decision::NeedsApproval { grantable: false });
    assert_eq!(rule(Tier::Ask, false, false, false, false), Decision::NeedsApproval { grantable: true });
    assert_eq!(rule(Tier::None, false, false, false, false), Decision::Allow);
    assert_eq!(rule(Tier::None, true, false, false, false), Decision::NeedsApproval { grantable: false });
}

const PAY: &str = r#"
match shop.accounts().first() {
  Some(a) => match shop.pay(a, "tea-house", 1200, "tea for the office") { Ok(_) => "paid", Err(r) => r.code },
  None => "no account",
}
"#;

#[test]
fn ask_always_ignores_grants_and_never_makes_one() {
    let program = shop_program(PAY);
    let mut shop = Shop::builtin().unwrap();
    let grants = grants_for_everything(&["Shop.pay"]);
    let mut approver = Scripted::parse("no").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_grants(Box::new(&grants));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"approval-denied\"");
    assert!(shop.data().payments.is_empty(), "a denied payment was made");
    assert_eq!((gate.stats().cards, gate.stats().refused, gate.stats().grants_used), (1, 1, 0));
    drop(gate);
    // "always" on an ask_always card is a yes for this call only: no grant.
    let fresh = MemoryGrants::new();
    let mut approver = Scripted::parse("always\nno").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_grants(Box::new(&fresh));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"paid\"");
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"approval-denied\"");
    assert_eq!(gate.stats().cards, 2, "asked again the second time");
    drop(gate);
    assert!(fresh.all().is_empty(), "an ask_always answer made a grant: {:?}", fresh.all());
    assert_eq!(shop.data().payments.len(), 1);
}

/// Messages `merchant` with `text` (a plan expression).
fn message(merchant: &str, text: &str) -> String {
    format!(r#"match shop.message_merchant("{merchant}", {text}) {{ Ok(_) => "sent", Err(r) => r.code }}"#)
}

#[test]
fn grants_are_keyed_by_tool_destination_and_label_class() {
    let grants = MemoryGrants::new();
    grants.add(&grant("Shop.message_merchant", "tea-house", "public")).unwrap();
    let mut shop = Shop::builtin().unwrap();
    let cases = [
        // Covered: same tool, destination, class.
        (message("tea-house", "\"hello\""), 0),
        // Another destination.
        (message("kitchenware", "\"hello\""), 1),
    ];
    for (plan, cards) in cases {
        let program = shop_program(&plan);
        let mut gate = Gate::new(&program, "ann", Box::new(DenyAll)).with_grants(Box::new(&grants));
        let result = done(drive(&program, "ann", &mut shop, &mut gate));
        assert_eq!(gate.stats().cards, cards, "{plan}: {:#?}", gate.records());
        assert_eq!(result, if cards == 0 { "\"sent\"" } else { "\"approval-denied\"" }, "{plan}");
    }
    // The user's secret data: no grant covers it, and the merchant may not read it unless the
    // user releases it on a card (which no one here is asked).
    let secret =
        format!("match shop.accounts().first() {{ Some(a) => {}, None => \"none\" }}", message("tea-house", "a.name"));
    let program = shop_program(&secret);
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll)).with_grants(Box::new(&grants));
    let e = failed(drive(&program, "ann", &mut shop, &mut gate));
    assert_eq!(e.kind.code().as_str(), "label-flow", "{e}");
    assert_eq!(gate.stats().grants_used, 0);
    assert_eq!(shop.data().sent.len(), 1);
    // Another tool with the same destination and class is not covered either.
    let program = shop_program(
        r#"match shop.orders().first() { Some(o) => match shop.request_refund(o, "stale") { Ok(_) => "asked", Err(r) => r.code }, None => "none" }"#,
    );
    let tea = MemoryGrants::new();
    tea.add(&grant("Shop.message_merchant", "*", "secret:ann")).unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll)).with_grants(Box::new(&tea));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"approval-denied\"");
    assert_eq!(gate.stats().cards, 1);
}

#[test]
fn always_makes_a_grant_that_the_next_call_uses() {
    let plan =
        format!("let a = {}; let b = {}; a + b", message("tea-house", "\"hi\""), message("tea-house", "\"again\""));
    let program = shop_program(&plan);
    let mut shop = Shop::builtin().unwrap();
    let grants = MemoryGrants::new();
    let mut approver = Scripted::parse("Shop.message_merchant always").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_grants(Box::new(&grants));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"sentsent\"");
    assert_eq!((gate.stats().cards, gate.stats().grants_made, gate.stats().grants_used), (1, 1, 1));
    drop(gate);
    let made = grants.all();
    assert_eq!(made.len(), 1);
    assert_eq!(
        (made[0].grant.tool.as_str(), made[0].grant.destination.as_str(), made[0].grant.label_class.as_str()),
        ("Shop.message_merchant", "tea-house", "public")
    );
}

/// A grant is bound to what served its tool when it was made: the same capability served by
/// another server (another command, or the same one listing other tools) asks again.
#[test]
fn a_grant_covers_its_tool_only_as_served_by_the_same_server() {
    let program = shop_program(&message("tea-house", "\"hi\""));
    let grants = MemoryGrants::new();
    let served_by = |instance: &str| [("Shop".to_string(), instance.to_string())];
    let mut approver = Scripted::parse("always").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver))
        .with_grants(Box::new(&grants))
        .with_instances(served_by("mcp shop sha256:aa"));
    assert_eq!(done(drive(&program, "ann", &mut Shop::builtin().unwrap(), &mut gate)), "\"sent\"");
    drop(gate);
    assert_eq!(grants.all()[0].grant.instance.as_deref(), Some("mcp shop sha256:aa"));
    // The same server: the grant answers.
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll))
        .with_grants(Box::new(&grants))
        .with_instances(served_by("mcp shop sha256:aa"));
    assert_eq!(done(drive(&program, "ann", &mut Shop::builtin().unwrap(), &mut gate)), "\"sent\"");
    assert_eq!(gate.stats().grants_used, 1);
    // Another one, or none named: a card, which no one approves.
    for other in [Some("mcp shop sha256:bb"), None] {
        let mut gate = Gate::new(&program, "ann", Box::new(DenyAll)).with_grants(Box::new(&grants));
        if let Some(other) = other {
            gate = gate.with_instances(served_by(other));
        }
        drive(&program, "ann", &mut Shop::builtin().unwrap(), &mut gate);
        assert_eq!((gate.stats().grants_used, gate.stats().cards), (0, 1), "{other:?}");
    }
}

/// A mail tool whose recipient's sink takes anyone's text: only the intent check stands
/// between an injected address and the send.
const MAIL: &str = r#"
type Refused = { code: String, reason: String }
capability Mail {
  tool inbox() -> String @label(pc = public(), returns = untrusted())
  tool send(to: String, body: String) -> Result[(), Refused]
    @approval(ask) @card(action = "send mail", recipients = [to], content = body)
    @label(to = untrusted(), body = untrusted(), pc = untrusted(), returns = public())
}
entry(mail: Mail) -> String
"#;

/// Answers `inbox` with an injected address and records what was sent.
#[derive(Default)]
struct MailHost {
    sent: Vec<String>,
}

impl ToolHost for MailHost {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        match call.tool() {
            "inbox" => Ok(Json::from("mallory@evil.example")),
            _ => {
                self.sent.push(call.arg("to").map(Json::to_string).unwrap_or_default());
                Ok(serde_json::json!({ "Ok": null }))
            }
        }
    }
}

#[test]
fn an_injected_recipient_is_flagged_and_shown_even_under_a_grant() {
    let plan = r#"match mail.send(mail.inbox(), "the report") { Ok(_) => "sent", Err(r) => r.code }"#;
    let program = self::program(MAIL, plan);
    let grants = MemoryGrants::new();
    grants.add(&grant("Mail.send", "*", "public")).unwrap();
    let mut host = MailHost::default();
    let mut approver = Scripted::parse("always").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver))
        .with_grants(Box::new(&grants))
        .with_request("send the report to bob@example.com");
    assert_eq!(done(drive(&program, "ann", &mut host, &mut gate)), "\"sent\"");
    assert_eq!((gate.stats().cards, gate.stats().flagged, gate.stats().grants_made), (1, 1, 0));
    let card = gate.records()[1].card.clone().unwrap();
    assert_eq!(
        card.flags.iter().map(|f| (f.says.as_str(), f.value.as_deref())).collect::<Vec<_>>(),
        [(
            "the recipient `mallory@evil.example` came from data no one vouches for (the result of `Mail.inbox`)",
            Some("mallory@evil.example")
        )]
    );
    assert!(!card.grantable, "a flagged card cannot make a grant");
    drop(gate);
    assert_eq!(grants.all().len(), 1, "no grant was made for the flagged recipient");
    // The same address named in the request is the user's own choice: no flag, and the grant
    // covers it.
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll))
        .with_grants(Box::new(&grants))
        .with_request("forward it to mallory@evil.example please");
    assert_eq!(done(drive(&program, "ann", &mut host, &mut gate)), "\"sent\"");
    assert_eq!((gate.stats().cards, gate.stats().grants_used), (0, 1));
    // A trusted contact likewise.
    let rules = ProvenanceRules::new().contact("mallory@evil.example");
    let mut gate =
        Gate::new(&program, "ann", Box::new(DenyAll)).with_grants(Box::new(&grants)).with_intent(Box::new(rules));
    assert_eq!(done(drive(&program, "ann", &mut host, &mut gate)), "\"sent\"");
    assert_eq!(gate.stats().cards, 0);
}

/// Grants that cannot be read or written: a damaged store.
struct BrokenGrants;

impl Grants for BrokenGrants {
    fn find(&self, _query: &GrantQuery<'_>) -> Result<Option<Grant>, StoreError> {
        Err(StoreError::Corrupt { detail: "database disk image is malformed".into() })
    }

    fn add(&self, _grant: &NewGrant) -> Result<Grant, StoreError> {
        Err(StoreError::Corrupt { detail: "database disk image is malformed".into() })
    }
}

#[test]
fn nothing_is_performed_when_the_grant_store_is_corrupt() {
    let program = shop_program(&message("tea-house", "\"hello\""));
    let mut shop = Shop::builtin().unwrap();
    let mut approver = Scripted::parse("yes").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_grants(Box::new(BrokenGrants));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"approval-denied\"");
    let reason = gate.records()[0].reason.clone().unwrap();
    assert!(reason.contains("the grant store could not be read") && reason.contains("malformed"), "{reason}");
    assert_eq!((gate.stats().errors, gate.stats().cards), (1, 0), "no card is shown on a broken store");
    drop(gate);
    assert!(shop.data().sent.is_empty());
    // Remembering "always" fails too: the call is not performed either.
    let program = shop_program(&message("tea-house", "\"hello\""));
    struct Empty;
    impl Grants for Empty {
        fn find(&self, _: &GrantQuery<'_>) -> Result<Option<Grant>, StoreError> {
            Ok(None)
        }
        fn add(&self, _: &NewGrant) -> Result<Grant, StoreError> {
            Err(StoreError::Corrupt { detail: "read-only".into() })
        }
    }
    let mut approver = Scripted::parse("always").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_grants(Box::new(Empty));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"approval-denied\"");
    drop(gate);
    assert!(shop.data().sent.is_empty());
}

#[test]
fn a_real_store_that_is_damaged_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cordon.db");
    std::fs::write(&path, b"this is not a database, it is garbage".repeat(200)).unwrap();
    let Err(e) = cordon_store::SqliteStore::open(&path, cordon_store::Durability::SurvivesCrash) else {
        panic!("a garbage store opened")
    };
    assert!(e.to_string().contains("not an SQLite database") || e.to_string().contains("cannot open"), "{e}");
}

#[test]
fn grants_in_a_real_store_persist_across_gates() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        cordon_store::SqliteStore::open(&dir.path().join("c.db"), cordon_store::Durability::SurvivesCrash).unwrap();
    let program = shop_program(&message("tea-house", "\"hi\""));
    let mut shop = Shop::builtin().unwrap();
    let mut approver = Scripted::parse("always").unwrap();
    let mut gate =
        Gate::new(&program, "ann", Box::new(&mut approver)).with_grants(Box::new(cordon_gate::StoreGrants(&store)));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"sent\"");
    drop(gate);
    let mut gate =
        Gate::new(&program, "ann", Box::new(DenyAll)).with_grants(Box::new(cordon_gate::StoreGrants(&store)));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"sent\"");
    assert_eq!((gate.stats().cards, gate.stats().grants_used), (0, 1));
}

#[test]
fn a_denied_call_whose_tool_cannot_be_refused_ends_the_run_pointing_at_it() {
    let policy = r#"
capability Mail {
  tool send(to: String) -> Int @approval(ask_always) @label(to = public(), returns = public())
}
entry(mail: Mail) -> Int
"#;
    let plan = "let n = 1;\nmail.send(\"bob\") + n";
    let program = self::program(policy, plan);
    struct Never;
    impl ToolHost for Never {
        fn perform(&mut self, _: &ToolCall<'_>) -> Result<Json, String> {
            panic!("performed a denied call")
        }
    }
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll));
    let e = failed(drive(&program, "ann", &mut Never, &mut gate));
    assert_eq!(e.kind, ErrorKind::ApprovalDenied);
    assert_eq!(e.kind.code().as_str(), "approval-denied");
    assert_eq!((e.span.start, e.span.end), (11, 27), "points at the call: {e:?}");
    assert!(e.message.contains("none answered no"), "{}", e.message);
}

#[test]
fn a_tier_is_chosen_on_the_real_values() {
    // O-1 is 12.00 (ask), O-3 is 90.00 (ask_always).
    let plan = r#"
let orders = shop.orders();
let a = match orders.get(0) {
  Some(o) => match shop.request_refund(o, "late") { Ok(_) => "asked", Err(r) => r.code },
  None => "none",
};
let b = match orders.get(2) {
  Some(o) => match shop.request_refund(o, "broken") { Ok(_) => "asked", Err(r) => r.code },
  None => "none",
};
a + " " + b
"#;
    let program = shop_program(plan);
    let mut shop = Shop::builtin().unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(DenyAll));
    done(drive(&program, "ann", &mut shop, &mut gate));
    let tiers: Vec<Option<Tier>> = gate.records().iter().map(|r| r.tier).collect();
    assert_eq!(tiers, [Some(Tier::None), Some(Tier::Ask), Some(Tier::AskAlways)]);
}

/// Answers every card later: a phone, a web page.
struct Later(Vec<u64>);

impl Approver for Later {
    fn name(&self) -> &str {
        "later"
    }

    fn review(&mut self, card: &Card) -> Reply {
        self.0.push(card.id);
        Reply::Later
    }
}

#[test]
fn an_answer_that_comes_later_holds_the_run_until_it_is_given() {
    let program = shop_program(PAY);
    let mut shop = Shop::builtin().unwrap();
    let mut approver = Later(Vec::new());
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver));
    let config = Config { user: "ann".into(), ..Config::default() };
    let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
    {
        let Ending::Held(held) = Engine::new(&mut shop).with_stage(&mut gate).start(&mut run) else {
            panic!("expected the run to be held")
        };
        assert!(held.needs.contains("card 1"), "{}", held.needs);
    }
    assert!(shop.data().payments.is_empty(), "nothing is performed while the card waits");
    assert!(gate.answer(2, Answer::Yes).is_err(), "an answer to another card is refused");
    gate.answer(1, Answer::Yes).unwrap();
    let ending = Engine::new(&mut shop).with_stage(&mut gate).resume(&mut run);
    assert_eq!(done(ending), "\"paid\"");
    assert_eq!((gate.stats().held, gate.stats().approved, gate.stats().cards), (1, 1, 1));
    drop(gate);
    assert_eq!(approver.0, [1], "the card was shown once");
}

/// The recipient is chosen by what a review says: the labels refuse it (the merchant's sink
/// needs the user's integrity), and the gate offers the user a card instead.
const CHOSEN_BY_REVIEW: &str = r#"
match shop.search("kettle").first() {
  Some(kettle) => {
    let warned = shop.reviews(kettle).any(|r| r.text.contains("refunds-desk"));
    let to = if warned { "refunds-desk" } else { "kitchenware" };
    match shop.message_merchant(to, "please send the warranty terms") { Ok(_) => "sent", Err(r) => r.code }
  }
  None => "no kettle",
}
"#;

#[test]
fn without_a_gate_a_call_the_labels_refuse_ends_the_run_as_before() {
    let program = shop_program(CHOSEN_BY_REVIEW);
    let mut shop = Shop::builtin().unwrap();
    let config = Config { user: "ann".into(), ..Config::default() };
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut shop);
    let e = report.result.unwrap_err();
    assert_eq!(e.kind, ErrorKind::LabelFlow, "{e}");
    // A gate whose approver does not speak for the user changes nothing either.
    for approver in [Box::new(ApproveAll) as Box<dyn Approver>, Box::new(DenyAll)] {
        let mut gate = Gate::new(&program, "ann", approver);
        let same = failed(drive(&program, "ann", &mut shop, &mut gate));
        assert_eq!((same.kind, &same.message, same.span), (e.kind, &e.message, e.span));
        assert_eq!(gate.stats().cards, 0);
    }
    assert!(shop.data().sent.is_empty());
}

#[test]
fn a_call_the_labels_refuse_becomes_a_flagged_card_the_user_may_approve_once() {
    let program = shop_program(CHOSEN_BY_REVIEW);
    let mut shop = Shop::builtin().unwrap();
    let mut approver = Scripted::parse("no").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver));
    let e = failed(drive(&program, "ann", &mut shop, &mut gate));
    assert_eq!(e.kind, ErrorKind::ApprovalDenied, "{e}");
    assert_eq!(gate.stats().label_cards, 1);
    assert!(shop.data().sent.is_empty(), "a refused label card performed the call");
    let card = gate.records().iter().find_map(|r| r.card.as_deref().cloned()).unwrap();
    assert!(card.flags.iter().any(|f| f.says.contains("the labels refused this call")), "{:?}", card.flags);
    assert!(
        card.flows.iter().any(|f| f.meaning.contains("you vouch for data vouched for by mallory")),
        "{:#?}",
        card.flows
    );
    drop(gate);
    // Approved: performed this once; "always" makes no grant.
    let grants = MemoryGrants::new();
    let mut approver = Scripted::parse("always").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_grants(Box::new(&grants));
    assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"sent\"");
    assert_eq!((gate.stats().label_cards, gate.stats().approved, gate.stats().grants_made), (1, 1, 0));
    drop(gate);
    assert!(grants.all().is_empty());
    assert_eq!(shop.data().sent.len(), 1);
}

#[test]
fn only_the_owner_releases_a_secret() {
    let policy = r#"
capability Notes {
  tool bobs_note() -> String @label(pc = public(), returns = secret("bob"))
  tool mine() -> String @label(pc = public(), returns = secret(user()))
  tool post(body: String) @label(body = public(), pc = public(), returns = public())
}
entry(n: Notes) -> ()
"#;
    #[derive(Default)]
    struct Notes(Vec<String>);
    impl ToolHost for Notes {
        fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
            match call.tool() {
                "post" => {
                    self.0.push(call.arg("body").map(Json::to_string).unwrap_or_default());
                    Ok(Json::Null)
                }
                _ => Ok(Json::from("a note")),
            }
        }
    }
    // Bob's secret: the user may not release it, so no card is shown; the labels refuse it.
    let bobs = program(policy, "n.post(n.bobs_note())");
    let program = bobs;
    let mut approver = Scripted::parse("yes").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver));
    let mut host = Notes::default();
    let e = failed(drive(&program, "ann", &mut host, &mut gate));
    assert_eq!(e.kind, ErrorKind::LabelFlow, "{e}");
    assert_eq!(gate.stats().cards, 0);
    drop(gate);
    assert_eq!(approver.remaining(), 1, "never asked");
    // The user's own secret: the user may release it, for this call.
    let program = self::program(policy, "n.post(n.mine())");
    let mut approver = Scripted::parse("yes").unwrap();
    let mut gate = Gate::new(&program, "ann", Box::new(&mut approver));
    let ended = drive(&program, "ann", &mut host, &mut gate);
    assert!(matches!(ended, Ending::Done(_)), "{ended:?}");
    assert_eq!(gate.stats().label_cards, 1);
    let card = gate.records().iter().find_map(|r| r.card.as_deref().cloned()).unwrap();
    assert!(card.flows[0].meaning.contains("you release data that is secret to ann to anyone"), "{:#?}", card.flows);
    assert_eq!(host.0, ["\"a note\""]);
}

/// A messaging tool with no approval tier, whose card names the recipient and the text.
const MESSAGES: &str = r#"
capability Messages {
  tool send(to: String, text: String)
    @label(to = untrusted(), text = untrusted())
    @card(destination = to, content = text)
}
entry(messages: Messages) -> ()
"#;

/// Records every card it is shown and answers each with `answer`.
struct Watching {
    answer: Answer,
    seen: Vec<Card>,
}

impl Approver for Watching {
    fn name(&self) -> &str {
        "watching"
    }

    fn review(&mut self, card: &Card) -> Reply {
        self.seen.push(card.clone());
        Reply::Answer(self.answer)
    }

    fn speaks_for_user(&self) -> bool {
        true
    }
}

/// Every message sent, as `to: text`.
#[derive(Default)]
struct Outbox(Vec<String>);

impl ToolHost for Outbox {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        self.0.push(format!(
            "{}: {}",
            call.args["to"].as_str().unwrap_or(""),
            call.args["text"].as_str().unwrap_or("")
        ));
        Ok(Json::Null)
    }
}

/// Sends `text` to `to` with a gate that asks consent against `own_words`, answering `answer`:
/// what was sent, the cards shown, the gate's records and how the run ended.
fn send_with_consent(
    to: &str,
    text: &str,
    own_words: &str,
    answer: Answer,
) -> (Vec<String>, Vec<Card>, String, Ending) {
    let program = program(MESSAGES, &format!("messages.send({to:?}, {text:?})"));
    let scanner = std::sync::Arc::new(cordon_egress::Scanner::new(&[]));
    let mut approver = Watching { answer, seen: Vec::new() };
    let mut outbox = Outbox::default();
    let (records, ending) = {
        let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_consent(scanner, own_words);
        let ending = drive(&program, "ann", &mut outbox, &mut gate);
        (serde_json::to_string(gate.records()).unwrap(), ending)
    };
    (outbox.0, approver.seen, records, ending)
}

#[test]
fn what_needs_consent_is_sent_only_with_a_yes_on_a_card_that_shows_it_masked() {
    let (to, text) = ("dentist@clinic.example", "my tooth hurts, can I come tomorrow?");
    // Nothing in the user's words: a card, whatever the tier; no answers no, nothing sent.
    let (sent, cards, records, ending) = send_with_consent(to, text, "", Answer::No);
    assert!(sent.is_empty(), "{sent:?}");
    // The refusal gives the plan (and the model) the text rewritten, never the data.
    let refusal = failed(ending);
    let notes = refusal.notes.join("\n");
    assert!(
        notes.contains(r#"`text` holds health detail; rewritten: "[health detail], can I come tomorrow?""#),
        "{notes}"
    );
    assert!(!format!("{refusal:?}").contains("tooth hurts"), "{refusal:?}");
    let [card] = cards.as_slice() else { panic!("one card: {cards:?}") };
    assert_eq!(card.sensitive.len(), 1, "{card:?}");
    assert_eq!(
        (card.sensitive[0].at.as_str(), card.sensitive[0].kinds.as_slice()),
        ("text", &["health detail".to_string()][..])
    );
    assert!(!card.grantable, "consent is for this call only");
    let shown = card.render(100);
    assert!(shown.contains("!! SENSITIVE") && shown.contains("`text` holds health detail"), "{shown}");
    for what in [&shown, &records] {
        assert!(!what.contains("tooth hurts"), "the health detail is shown masked and recorded masked: {what}");
    }
    assert!(shown.contains("[health detail], can I come tomorrow?"), "{shown}");
    // Yes sends it as it is.
    let (sent, _, _, _) = send_with_consent(to, text, "", Answer::Yes);
    assert_eq!(sent, [format!("{to}: {text}")]);
}

#[test]
fn the_users_own_words_consent_to_that_kind_of_data_for_whom_they_name() {
    let (to, text) = ("dentist@clinic.example", "my tooth hurts, can I come tomorrow?");
    // "Tell my dentist my tooth hurts": health, to the dentist, no card.
    let own = "tell dentist@clinic.example that my tooth hurts";
    let (sent, cards, _, _) = send_with_consent(to, text, own, Answer::No);
    assert!(cards.is_empty(), "{cards:?}");
    assert_eq!(sent.len(), 1);
    // The same words do not cover another recipient ..
    let (sent, cards, _, _) = send_with_consent("boss@work.example", text, own, Answer::No);
    assert!(sent.is_empty() && cards.len() == 1, "{sent:?} {cards:?}");
    // .. nor another kind of data for the dentist.
    let (sent, cards, _, _) = send_with_consent(
        to,
        "I was diagnosed with depression last year",
        "tell dentist@clinic.example hello",
        Answer::No,
    );
    assert!(sent.is_empty() && cards.len() == 1, "{sent:?} {cards:?}");
    // A message with nothing of the kind needs no card.
    let (sent, cards, _, _) = send_with_consent(to, "can I come tomorrow at 10?", "", Answer::No);
    assert!(cards.is_empty() && sent.len() == 1, "{sent:?} {cards:?}");
}

/// A note secret to the user, and the messaging tool.
const NOTE_AND_MESSAGES: &str = r#"
capability Notes {
  tool note() -> String
    @label(returns = secret(user()))
}
capability Messages {
  tool send(to: String, text: String)
    @label(to = untrusted(), text = untrusted())
    @card(destination = to, content = text)
}
entry(notes: Notes, messages: Messages) -> ()
"#;

/// Answers `note` with a note, and records every message sent.
#[derive(Default)]
struct NotesAndOutbox(Vec<String>);

impl ToolHost for NotesAndOutbox {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        match call.tool() {
            "note" => Ok(Json::String("see you at 10".into())),
            _ => {
                self.0.push(call.args["text"].as_str().unwrap_or("").to_string());
                Ok(Json::Null)
            }
        }
    }
}

#[test]
fn a_card_that_releases_a_secret_and_needs_consent_shows_every_value_masked() {
    // The text both carries the user's secret note (a label card: the user releases it) and a
    // health detail: every value the card shows, its flows' included, is masked.
    let plan = r#"messages.send("dentist@clinic.example", "my tooth hurts; " + notes.note())"#;
    let program = program(NOTE_AND_MESSAGES, plan);
    let scanner = std::sync::Arc::new(cordon_egress::Scanner::new(&[]));
    let mut approver = Watching { answer: Answer::Yes, seen: Vec::new() };
    let mut host = NotesAndOutbox::default();
    let records = {
        let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_consent(scanner, "");
        drive(&program, "ann", &mut host, &mut gate);
        serde_json::to_string(gate.records()).unwrap()
    };
    let [card] = approver.seen.as_slice() else { panic!("one card: {:?}", approver.seen) };
    assert!(!card.flows.is_empty() && !card.sensitive.is_empty(), "{card:#?}");
    let shown = serde_json::to_string(card).unwrap();
    for what in [&shown, &records] {
        assert!(!what.contains("tooth hurts"), "{what}");
    }
    assert_eq!(host.0, ["my tooth hurts; see you at 10"], "a yes sends it as it is");
}

/// A workspace whose data goes to the web only through a release, with `release` in the policy.
fn workspace_policy(release: &str) -> String {
    format!(
        r#"
capability Chat {{
  tool read() -> String
    @label(returns = group("workspace", ["ann", "bob", "carol"]))
  tool fetch(url: String)
    @label(url = untrusted(), pc = untrusted())
    @card(destination = url)
  tool dm(to: String, text: String)
    @label(to = endorsed(user()), text = readers([user(), to]), pc = endorsed(user()))
}}
{release}
entry(chat: Chat) -> ()
"#
    )
}

/// Answers `read` with the workspace's news, and records every other call's arguments.
#[derive(Default)]
struct Workspace(Vec<String>);

impl ToolHost for Workspace {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        match call.tool() {
            "read" => Ok(Json::String("launch on friday, see https://example.com/launch.".into())),
            tool => {
                self.0.push(format!("{tool} {}", serde_json::to_string(&call.args).unwrap()));
                Ok(Json::Null)
            }
        }
    }
}

/// Runs `plan` under `release`, the approver answering `answer`: what was performed, the cards
/// shown, and how the run ended.
fn in_workspace(release: &str, plan: &str, answer: Answer) -> (Vec<String>, Vec<Card>, Ending) {
    let program = program(&workspace_policy(release), plan);
    let mut approver = Watching { answer, seen: Vec::new() };
    let mut host = Workspace::default();
    let ending = {
        let mut gate = Gate::new(&program, "ann", Box::new(&mut approver));
        drive(&program, "ann", &mut host, &mut gate)
    };
    (host.0, approver.seen, ending)
}

const LEAK: &str = r#"chat.fetch("https://example.com/?q=" + chat.read())"#;

#[test]
fn a_groups_data_reaches_its_members_and_no_one_else_whoever_approves() {
    let (sent, cards, _) = in_workspace("", r#"chat.dm("bob", chat.read())"#, Answer::Yes);
    assert_eq!((sent.len(), cards.len()), (1, 0), "a member reads it: no card");
    // A member's yes does not release it: no card is even shown.
    for plan in [LEAK, r#"chat.dm("eve", chat.read())"#] {
        let (sent, cards, ending) = in_workspace("", plan, Answer::Yes);
        assert!(sent.is_empty() && cards.is_empty(), "{plan}: {sent:?} {cards:?}");
        assert_eq!(failed(ending).kind.code().as_str(), "label-flow", "{plan}");
    }
}

#[test]
fn a_release_with_a_card_lets_the_groups_data_out_on_the_users_yes_for_that_call() {
    let release = r#"release "workspace" to untrusted()"#;
    let (sent, cards, _) = in_workspace(release, LEAK, Answer::Yes);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let [card] = cards.as_slice() else { panic!("one card: {cards:?}") };
    assert!(!card.grantable, "a release is for this call only");
    let meaning: Vec<&str> = card.flows.iter().map(|f| f.meaning.as_str()).collect();
    assert!(
        meaning.iter().any(|m| m.contains("you let the data of the group `workspace` out to anyone")),
        "{meaning:?}"
    );
    let (sent, cards, ending) = in_workspace(release, LEAK, Answer::No);
    assert!(sent.is_empty() && cards.len() == 1, "{sent:?}");
    assert_eq!(failed(ending).kind.code().as_str(), "approval-denied");
    // Another group's data, or the group's to where the release does not say, stays in.
    let elsewhere = r#"release "workspace" to secret("ci")"#;
    let (sent, cards, _) = in_workspace(elsewhere, LEAK, Answer::Yes);
    assert!(sent.is_empty() && cards.is_empty(), "{sent:?} {cards:?}");
    let other = r#"release "hr" to untrusted()"#;
    let (sent, cards, _) = in_workspace(other, LEAK, Answer::Yes);
    assert!(sent.is_empty() && cards.is_empty(), "{sent:?} {cards:?}");
}

#[test]
fn a_release_no_one_need_agree_to_lets_it_out_without_a_card() {
    let (sent, cards, _) = in_workspace(r#"release "workspace" to untrusted() @approval(none)"#, LEAK, Answer::No);
    assert_eq!((sent.len(), cards.len()), (1, 0), "{sent:?} {cards:?}");
}

/// A release lets out what the request named, or a text as the run received it (a link as it
/// was posted); a text built from the group's data may carry any of it, and its card says so in
/// a flag: "fetch `site?q=<the channel>`" is not shown like "fetch the link".
#[test]
fn a_release_card_tells_a_text_received_as_it_is_from_one_built_from_the_groups_data() {
    let release = r#"release "workspace" to untrusted()"#;
    let built_from = "is built from the data of the group `workspace`, not received as it is";
    let link = r#"chat.fetch(chat.read().words().filter(|w| w.starts_with("https://")).first().unwrap_or(""))"#;
    let (sent, cards, _) = in_workspace(release, link, Answer::Yes);
    assert_eq!(sent, [r#"fetch {"url":"https://example.com/launch."}"#]);
    let [card] = cards.as_slice() else { panic!("one card: {cards:?}") };
    let flow = &card.flows[0];
    assert!(flow.as_received && flow.let_out == ["workspace"], "{flow:?}");
    assert!(flow.meaning.ends_with("this text, word for word as it was received"), "{}", flow.meaning);
    assert!(!card.flags.iter().any(|f| f.says.contains(built_from)), "{:?}", card.flags);
    // Whatever builds the text (around a link, changing it, the whole of the news), it is built.
    let built = [
        LEAK,
        r#"chat.fetch("https://example.com/launch?more=" + chat.read().words().first().unwrap_or(""))"#,
        r#"chat.fetch(chat.read().to_upper())"#,
        r#"chat.fetch(chat.read().replace(" ", "+"))"#,
        r#"chat.fetch(chat.read().words().join(""))"#,
    ];
    for plan in built {
        let (_, cards, _) = in_workspace(release, plan, Answer::Yes);
        let [card] = cards.as_slice() else { panic!("{plan}: one card: {cards:?}") };
        assert!(!card.flows[0].as_received, "{plan}: {:?}", card.flows[0]);
        assert!(card.flows[0].meaning.ends_with("a text built from that data, which may carry any of it"), "{plan}");
        assert!(card.flags.iter().any(|f| f.says.contains(built_from)), "{plan}: {:?}", card.flags);
        // What it marks as the group's is the group's, word for word.
        let news = "launch on friday, see https://example.com/launch.";
        assert!(card.flows[0].received.iter().all(|p| news.contains(p.as_str())), "{plan}: {:?}", card.flows[0]);
    }
    let (_, cards, _) = in_workspace(release, LEAK, Answer::No);
    assert!(cards[0].flows[0].received.contains(&"launch on friday, see https://example.com/launch.".to_string()));
    assert!(cards[0].render(100).contains("the group's data in it, word for word:"), "{}", cards[0].render(100));
}

/// Answers `read` with news that holds a health detail.
struct SickNews;

impl ToolHost for SickNews {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        match call.tool() {
            "read" => Ok(Json::String("my tooth hurts since the launch on friday".into())),
            _ => Ok(Json::Null),
        }
    }
}

/// A part cut out of a value could hold a piece of what the card masks in it: a release card
/// that masks a value marks no part of it.
#[test]
fn a_release_card_marks_no_part_of_a_value_it_masks() {
    let program = program(&workspace_policy(r#"release "workspace" to untrusted()"#), LEAK);
    let scanner = std::sync::Arc::new(cordon_egress::Scanner::new(&[]));
    let mut approver = Watching { answer: Answer::No, seen: Vec::new() };
    {
        let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_consent(scanner, "");
        drive(&program, "ann", &mut SickNews, &mut gate);
    }
    let [card] = approver.seen.as_slice() else { panic!("one card: {:?}", approver.seen) };
    assert!(!card.sensitive.is_empty(), "{card:#?}");
    assert!(card.flows[0].received.is_empty(), "{:?}", card.flows[0]);
    let shown = serde_json::to_string(card).unwrap() + &card.render(100);
    assert!(!shown.contains("tooth hurts"), "{shown}");
}

#[test]
fn a_gate_keeping_only_decisions_counts_the_calls_it_simply_allowed() {
    let plan = format!("let n = range(0, 50).fold(0, |n, i| n + shop.accounts().len());\n{PAY}");
    let program = shop_program(&plan);
    for keep_all in [true, false] {
        let mut shop = Shop::builtin().unwrap();
        let mut approver = Scripted::parse("no").unwrap();
        let mut gate = Gate::new(&program, "ann", Box::new(&mut approver));
        if !keep_all {
            gate = gate.keeping_only_decisions();
        }
        assert_eq!(done(drive(&program, "ann", &mut shop, &mut gate)), "\"approval-denied\"");
        // 51 lookups allowed by the policy, one payment refused on its card.
        assert_eq!((gate.stats().decided, gate.stats().allowed, gate.stats().refused), (52, 51, 1));
        let outcomes: Vec<&str> = gate.records().iter().map(|r| r.outcome).collect();
        match keep_all {
            true => assert_eq!(outcomes.len(), 52),
            false => assert_eq!(outcomes, ["refused"], "only the call that took a decision is kept"),
        }
    }
}
