//! Cards show the real values with their labels and where they came from, fit 80 columns,
//! show long content whole and escape what a terminal would hide or obey.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_engine::Engine;
use cordon_gate::{Gate, Scripted};
use cordon_runtime::{Config, Program, Run, Sessions};
use cordon_sim::Shop;
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

/// The cards `plan` shows on the shop, answered by `answers`, rendered at 80 columns.
fn cards(plan: &str, answers: &str, request: &str) -> Vec<String> {
    let mut sources = SourceMap::new();
    let policy = sources.add("shop.cord", cordon_sim::shop::POLICY);
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let Some(checked) = outcome.program else { panic!("{:#?}", outcome.diagnostics) };
    let program = Program::new(&checked).unwrap();
    let mut shop = Shop::builtin().unwrap();
    let mut approver = Scripted::parse(answers).unwrap();
    {
        let mut gate = Gate::new(&program, "ann", Box::new(&mut approver)).with_request(request);
        let config = Config { user: "ann".into(), ..Config::default() };
        let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
        let _ = Engine::new(&mut shop).with_stage(&mut gate).start(&mut run);
    }
    approver.shown.iter().map(|(card, _)| card.clone()).collect()
}

fn fits(cards: &[String]) {
    for card in cards {
        for line in card.lines() {
            assert!(line.chars().count() <= 80, "a line longer than 80 columns: {line:?}");
        }
    }
}

#[test]
fn a_payment_card_shows_the_real_values_and_labels() {
    let plan = r#"
match shop.accounts().first() {
  Some(a) => match shop.pay(a, "tea-house", 1200, "tea for the office\nsecond line") { Ok(_) => "paid", Err(r) => r.code },
  None => "no account",
}
"#;
    let shown = cards(plan, "yes", "pay tea-house 12.00 for the office tea");
    fits(&shown);
    insta::assert_snapshot!(shown.join("\n\n"));
}

#[test]
fn a_label_card_says_where_the_recipient_came_from_and_what_approving_means() {
    let plan = r#"
match shop.search("kettle").first() {
  Some(kettle) => {
    let warned = shop.reviews(kettle).any(|r| r.text.contains("refunds-desk"));
    let to = if warned { "refunds-desk" } else { "kitchenware" };
    match shop.message_merchant(to, "please send the warranty terms") { Ok(_) => "sent", Err(r) => r.code }
  }
  None => "no kettle",
}
"#;
    let shown = cards(plan, "no", "ask the kettle's seller about its warranty");
    fits(&shown);
    insta::assert_snapshot!(shown.join("\n\n"));
}

#[test]
fn long_and_hostile_content_is_shown_whole_and_escaped() {
    let long = "lorem ipsum dolor sit amet ".repeat(40);
    let plan = format!(
        r#"match shop.message_merchant("tea-house", "{long}\u{{1b}}[2J\u{{202e}}evil\u{{200b}} {}") {{ Ok(_) => "sent", Err(r) => r.code }}"#,
        "x".repeat(300)
    );
    let shown = cards(&plan, "no", "write to tea-house");
    fits(&shown);
    let card = &shown[0];
    assert!(card.contains("\\u{1b}[2J") && card.contains("\\u{202e}evil\\u{200b}"), "{card}");
    assert!(!card.contains('\u{1b}') && !card.contains('\u{202e}'), "a control character reached the card");
    // Nothing was cut: every character of the content is on the card, in order.
    let content: String =
        card.lines().filter_map(|l| l.strip_prefix("  | ")).collect::<Vec<_>>().join("").replace(' ', "");
    let expected = format!("{long}\\u{{1b}}[2J\\u{{202e}}evil\\u{{200b}} {}", "x".repeat(300)).replace(' ', "");
    assert_eq!(content, expected);
}

/// A payee the model wrote is the model's even when the plan chose it under a decision on the
/// host's facts: the card flags it, where it once called it a host's fact and let a hurried
/// `y` pay a merchant the request never named.
#[test]
fn a_literal_chosen_under_a_host_decision_is_still_the_models() {
    let plan = r#"
match shop.accounts().first() {
  Some(a) => match shop.pay(a, "kitchenware", 4500, "kettle") { Ok(_) => "paid", Err(r) => r.code },
  None => "no account",
}
"#;
    let shown = cards(plan, "no", "pay tea-house 12.00 for the office tea");
    assert_eq!(shown.len(), 1);
    assert!(shown[0].contains("!! FLAGGED"), "{}", shown[0]);
    assert!(shown[0].contains("the destination `kitchenware` came from the plan the model wrote"), "{}", shown[0]);
    let named = cards(plan, "no", "pay kitchenware 45.00 for the kettle");
    assert!(!named[0].contains("kitchenware` came from the plan the model wrote"), "{}", named[0]);
}

/// In a plan a model wrote, what the model chose besides the destination is checked against
/// the request too: a number it chose, a link in its text, and a destination the host made but
/// the model picked are flagged unless the request names them.
#[test]
fn a_models_numbers_links_and_picks_are_flagged_unless_the_request_names_them() {
    let flags = |plan: &str, request: &str| -> String {
        let shown = cards(plan, "no", request);
        assert_eq!(shown.len(), 1, "{shown:?}");
        shown[0].lines().filter(|l| l.starts_with("!! - ")).collect::<Vec<_>>().join("\n")
    };
    let buy = r#"
match (shop.search("green tea").first(), shop.accounts().first()) {
  (Some(p), Some(a)) => match shop.buy(p, 10, a) { Ok(_) => "bought", Err(r) => r.code },
  _ => "none",
}
"#;
    assert!(flags(buy, "buy one pack of green tea").contains("the quantity `10` is the model's"));
    assert!(!flags(buy, "buy 10 packs of green tea").contains("quantity"));
    let link = r#"match shop.message_merchant("tea-house", "Renew at https://sso-reset.example.net/renew") { Ok(_) => "sent", Err(r) => r.code }"#;
    assert!(flags(link, "tell tea-house there is no rush").contains("a link to `sso-reset.example.net`"));
    assert!(!flags(link, "send tea-house the link sso-reset.example.net").contains("link"));
    let picked = r#"
match shop.orders().filter(|o| o.id == "O-1").first() {
  Some(o) => match shop.message_merchant(o.merchant, "hello") { Ok(_) => "sent", Err(r) => r.code },
  None => "none",
}
"#;
    assert!(
        flags(picked, "say hello to kitchenware").contains("the recipient `tea-house` came from the host's own facts")
    );
    assert!(!flags(picked, "say hello to tea-house").contains("tea-house"));
}

/// The cards `plan` shows on the bank, in a plan a model wrote for `request`, answered no: each
/// rendered, and as the store records it (JSON).
fn bank_cards(plan: &str, request: &str) -> Vec<(String, String)> {
    let mut sources = SourceMap::new();
    let policy = sources.add("bank.cord", cordon_sim::bank::POLICY);
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let Some(checked) = outcome.program else { panic!("{:#?}", outcome.diagnostics) };
    let program = Program::new(&checked).unwrap();
    let mut bank = cordon_sim::Bank::builtin().unwrap();
    let user = bank.user().to_string();
    let mut approver = Scripted::parse("no").unwrap();
    let mut records = Vec::new();
    {
        let mut gate = Gate::new(&program, &user, Box::new(&mut approver)).with_request(request);
        let config = Config { user: user.clone(), ..Config::default() };
        let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
        let _ = Engine::new(&mut bank).with_stage(&mut gate).start(&mut run);
        records
            .extend(gate.records().iter().filter_map(|r| r.card.as_ref()).map(|c| serde_json::to_string(c).unwrap()));
    }
    approver.shown.iter().map(|(card, _)| card.clone()).zip(records).collect()
}

/// A value a card hides (`@card(hidden = new)`, a new password) is on no card and in no
/// record, even where the labels refused it; and since the person cannot check it, it is
/// flagged unless it is the user's own words.
#[test]
fn a_hidden_value_is_never_shown_and_is_flagged_unless_the_request_gives_it() {
    let plan = r#"match bank.change_password("Winter-Sunrise-7781") { Ok(_) => "changed", Err(r) => r.code }"#;
    let own = bank_cards(plan, "set my password to Winter-Sunrise-7781");
    let chosen = bank_cards(plan, "change my password to something strong");
    for (card, record) in own.iter().chain(&chosen) {
        assert!(!card.contains("Winter") && !card.contains("7781"), "{card}");
        assert!(!record.contains("Winter") && !record.contains("7781"), "{record}");
        assert!(card.contains("<hidden> (19 characters)"), "{card}");
    }
    assert!(!own[0].0.contains("FLAGGED"), "{}", own[0].0);
    assert!(
        chosen[0].0.contains("the value hidden on this card came from the plan the model wrote"),
        "{}",
        chosen[0].0
    );
    // Taken from a message someone else wrote: the labels refuse it, and the card that asks to
    // vouch for it shows the refused value hidden too.
    let from_message = r#"
match bank.inbox().first() {
  Some(m) => if len(m.text) >= 12 {
    match bank.change_password(m.text) { Ok(_) => "changed", Err(r) => r.code }
  } else { "short" },
  None => "none",
}
"#;
    for (card, record) in bank_cards(from_message, "change my password as the bank says") {
        assert!(card.contains("<hidden>") && card.contains("FLAGGED"), "{card}");
        assert!(!record.contains("lease renewal"), "{record}");
    }
}
