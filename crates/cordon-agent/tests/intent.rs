//! The intent model: it is sent only the user's request and the card; only exactly `ALLOW`
//! leaves a card unflagged; every other answer, and a model that cannot be reached, flags it;
//! it adds to the deterministic rules' flags and never removes one; a flagged card is shown
//! even where a grant covers the call.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_agent::intent::read;
use cordon_agent::{Completion, ModelIntent, Provider, ProviderError, Request, Usage};
use cordon_engine::Engine;
use cordon_gate::{Flag, Gate, Grants, IntentCheck, MemoryGrants, ProvenanceRules, Scripted};
use cordon_runtime::{Config, Program, Run, Sessions};
use cordon_sim::Shop;
use cordon_store::{NewGrant, Scope};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};
use proptest::prelude::*;

/// A hosted model stands in here: it answers from a list and keeps every request it was sent.
struct Checker {
    answers: Vec<Result<String, ProviderError>>,
    asked: Vec<Request>,
}

impl Provider for &mut Checker {
    fn name(&self) -> &str {
        "checker"
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        self.asked.push(request.clone());
        let answer = if self.answers.is_empty() {
            Err(ProviderError::Malformed("no answer".into()))
        } else {
            self.answers.remove(0)
        };
        answer.map(|text| Completion { text, usage: Usage::default() })
    }
}

const PLAN: &str = r#"
// A plan comment the checking model must never see.
match shop.message_merchant("tea-house", "No rush on my order, thank you.") {
  Ok(_) => "Sent.",
  Err(r) => "Not sent: " + r.code + ".",
}
"#;

/// It names the merchant as the plan writes it: a destination the model wrote that the request
/// does not name is flagged by the rules themselves (`crates/cordon-gate/tests/shown.rs`).
const REQUEST: &str = "Tell tea-house my order can wait.";

/// Runs the plan on the shop through a gate whose intent check asks `checker`, with a grant
/// for the message in place and a person answering `answers`: the gate's flags and cards.
fn run(checker: &mut Checker, answers: &str) -> (u64, Vec<String>, Vec<Vec<String>>) {
    let mut sources = SourceMap::new();
    let policy = sources.add("shop.cord", cordon_sim::shop::POLICY);
    let plan = sources.add("plan.cord", PLAN);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let Some(checked) = outcome.program else { panic!("{:#?}", outcome.diagnostics) };
    let program = Program::new(&checked).unwrap();
    let grants = MemoryGrants::new();
    let grant = NewGrant {
        tool: "Shop.message_merchant".into(),
        destination: "tea-house".into(),
        label_class: "public".into(),
        scope: Scope::UntilRevoked,
        expires_ms: None,
        instance: None,
        principal: None,
    };
    grants.add(&grant).unwrap();
    let mut shop = Shop::builtin().unwrap();
    let mut person = Scripted::parse(answers).unwrap();
    let (cards, flags) = {
        let intent = ModelIntent::new(&mut *checker, ProvenanceRules::new());
        let mut gate = Gate::new(&program, "ann", Box::new(&mut person))
            .with_request(REQUEST)
            .with_grants(Box::new(&grants))
            .with_intent(Box::new(intent));
        let config = Config { user: "ann".into(), ..Config::default() };
        let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
        let _ = Engine::new(&mut shop).with_stage(&mut gate).start(&mut run);
        let says = |c: &cordon_gate::Card| c.flags.iter().map(|f| f.says.clone()).collect();
        let flags = gate.records().iter().map(|r| r.card.as_deref().map_or(Vec::new(), says)).collect();
        (gate.stats().cards, flags)
    };
    (cards, person.shown.into_iter().map(|(card, _)| card).collect(), flags)
}

#[test]
fn allow_keeps_the_grant_and_the_model_sees_only_the_request_and_the_card() {
    let mut checker = Checker { answers: vec![Ok("ALLOW".into())], asked: Vec::new() };
    let (cards, _, flags) = run(&mut checker, "");
    assert_eq!(cards, 0, "the grant answers when nothing is flagged");
    assert_eq!(flags, [Vec::<String>::new()]);
    assert_eq!(checker.asked.len(), 1);
    let sent: String = checker.asked[0].messages.iter().map(|m| m.content.as_str()).collect();
    assert!(sent.contains(REQUEST), "{sent}");
    assert!(sent.contains("Shop.message_merchant") && sent.contains("tea-house"), "the card: {sent}");
    assert!(!sent.contains("never see") && !sent.contains("match shop."), "no plan text: {sent}");
}

#[test]
fn a_flag_needs_a_card_even_under_a_grant_and_makes_no_grant() {
    let mut checker =
        Checker { answers: vec![Ok("FLAG: the user did not ask to write to anyone".into())], asked: Vec::new() };
    let (cards, shown, flags) = run(&mut checker, "always");
    assert_eq!(cards, 1, "{flags:?}");
    assert!(shown[0].contains("the intent model checker flagged it: the user did not ask"), "{}", shown[0]);
    assert!(!shown[0].contains("always = yes"), "a flagged card cannot make a grant: {}", shown[0]);
}

#[test]
fn hostile_or_broken_answers_flag_the_card() {
    for answer in ["", "allow", "ALLOW.", "ALLOW\nALLOW", "I think ALLOW", "FLAG:", "FLAG: a\nALLOW", "```ALLOW```"] {
        let mut checker = Checker { answers: vec![Ok(answer.into())], asked: Vec::new() };
        let (cards, _, flags) = run(&mut checker, "no");
        assert_eq!(cards, 1, "{answer:?} must flag: {flags:?}");
        assert!(flags[0].iter().any(|f| f.contains("intent model checker")), "{answer:?}: {flags:?}");
    }
    let mut unreachable =
        Checker { answers: vec![Err(ProviderError::Malformed("no answer".into()))], asked: Vec::new() };
    let (cards, _, flags) = run(&mut unreachable, "no");
    assert_eq!(cards, 1);
    assert!(flags[0][0].contains("could not be asked"), "{flags:?}");
}

#[test]
fn the_model_never_removes_a_flag_of_the_rules() {
    /// Rules that flag everything.
    struct Wary;
    impl IntentCheck for Wary {
        fn name(&self) -> &str {
            "wary"
        }
        fn check(&mut self, _: &str, _: &cordon_gate::Card) -> Vec<Flag> {
            vec![Flag::about_call("the rules flag this".into())]
        }
    }
    let mut checker = Checker { answers: vec![Ok("ALLOW".into())], asked: Vec::new() };
    let mut intent = ModelIntent::new(&mut checker, Wary);
    assert_eq!(intent.name(), "wary and the model checker");
    let card = cordon_gate::Card {
        id: 1,
        tool: "Shop.message_merchant".into(),
        tier: cordon_label::Tier::Ask,
        action: "message a merchant".into(),
        destination: None,
        recipients: Vec::new(),
        content: None,
        fields: Vec::new(),
        decided_by: Vec::new(),
        flows: Vec::new(),
        flags: Vec::new(),
        sensitive: Vec::new(),
        grantable: true,
        label_class: "public".into(),
        by_model: false,
    };
    assert_eq!(intent.check(REQUEST, &card), [Flag::about_call("the rules flag this".into())]);
}

#[test]
fn the_intent_model_is_shown_the_card_under_its_own_clearance() {
    let shown = |text: &str, label: cordon_label::DcLabel| cordon_gate::Shown {
        text: text.into(),
        label,
        origin: cordon_gate::Origin::Request,
        sources: Vec::new(),
        hidden: None,
    };
    let card = cordon_gate::Card {
        id: 1,
        tool: "Shop.message_merchant".into(),
        tier: cordon_label::Tier::Ask,
        action: "message a merchant".into(),
        destination: Some(shown("tea-house", cordon_label::DcLabel::bottom())),
        recipients: Vec::new(),
        content: Some(shown("my card number is 4111 1111 1111 1111", cordon_label::DcLabel::secret("ann"))),
        fields: Vec::new(),
        decided_by: Vec::new(),
        // A release of the group's text built into an address, with its parts marked.
        flows: vec![cordon_gate::FlowShown {
            param: Some("url".into()),
            value: shown(
                "https://x.test/?q=the launch moves to friday",
                cordon_label::DcLabel::group("staff", &["ann"]),
            ),
            sink: cordon_label::DcLabel::untrusted(),
            meaning: "you let the data of the group `staff` out to anyone".into(),
            let_out: vec!["staff".into()],
            as_received: false,
            received: vec!["the launch moves to friday".into()],
        }],
        flags: vec![cordon_gate::Flag {
            says: "the content `my card number is 4111 1111 1111 1111` came from a tool".into(),
            value: Some("my card number is 4111 1111 1111 1111".into()),
        }],
        sensitive: Vec::new(),
        grantable: true,
        label_class: "secret".into(),
        by_model: false,
    };
    // What the checking model was sent, cleared for `clearance` (public without one).
    let sent = |clearance: Option<cordon_label::DcLabel>| {
        let mut checker = Checker { answers: vec![Ok("ALLOW".into())], asked: Vec::new() };
        let mut intent = ModelIntent::new(&mut checker, ProvenanceRules::new());
        if let Some(clearance) = clearance {
            intent = intent.with_clearance(clearance);
        }
        intent.check(REQUEST, &card);
        drop(intent);
        checker.asked[0].messages.iter().map(|m| m.content.clone()).collect::<String>()
    };
    let public = sent(None);
    assert!(public.contains("tea-house") && public.contains("<hidden>"), "{public}");
    assert!(!public.contains("4111"), "a secret value reached a public intent model: {public}");
    assert!(!public.contains("launch moves"), "a group's text reached a public intent model: {public}");
    let clearance = cordon_label::DcLabel::secret("ann").join(&cordon_label::DcLabel::untrusted());
    assert!(sent(Some(clearance)).contains("4111"), "a model cleared for ann's data sees it");
}

proptest! {
    /// Only exactly `ALLOW` (around spaces) allows; a flag's reason is one escaped line.
    #[test]
    fn only_allow_allows(reply in ".{0,80}") {
        let flag = read("m", &reply);
        prop_assert_eq!(flag.is_none(), reply.trim() == "ALLOW");
        if let Some(flag) = flag {
            prop_assert!(!flag.contains('\n') && !flag.contains('\u{1b}'), "{:?}", flag);
        }
    }
}
