//! The outgoing-data stage on its own: whatever a call sends to readers other than the user is
//! scanned, however deep in its arguments, and what is never sent is refused with the text
//! rewritten, the sensitive text in no message; what stays with the user is not judged.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::sync::{Arc, OnceLock};

use cordon_egress::{Scanner, SecretValue};
use cordon_engine::{Stage, Verdict};
use cordon_gate::Egress;
use cordon_label::DcLabel;
use cordon_runtime::effect::Effect;
use cordon_runtime::value::{Record, Variant};
use cordon_runtime::{Val, Value};
use proptest::prelude::*;

const CARD: &str = "4539 1488 0343 6467";
const CANARY: &str = "cordon-canary-7Hq2xVp9Lm";

/// The stage for `ann`, its scanner (slow to build in a debug build) made once for every test.
fn stage() -> Egress {
    static SCANNER: OnceLock<Arc<Scanner>> = OnceLock::new();
    let scanner = SCANNER.get_or_init(|| Arc::new(Scanner::new(&[SecretValue::from(CANARY)])));
    Egress::new(scanner.clone(), "ann")
}

fn text(s: &str) -> Val {
    Val::plain(Value::str(s))
}

/// A call of `Chat.post` sending `value` as `text` to `sink`.
fn post(value: Val, sink: DcLabel) -> Effect {
    let mut effect = Effect::outside_a_run("Chat", "post", vec![("text".into(), value)]);
    effect.sinks = vec![sink];
    effect
}

/// Everything a refusal says, as one text.
fn said(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Withhold { error, shown } => {
            format!("{} | {} | {:?}", error.message, error.notes.join(" | "), shown)
        }
        other => panic!("not withheld: {other:?}"),
    }
}

#[test]
fn a_card_number_for_the_public_is_refused_with_the_text_rewritten() {
    let verdict = stage().decide(&post(text(&format!("pay with {CARD} today")), DcLabel::untrusted()));
    let Verdict::Withhold { error, shown } = &verdict else { panic!("{verdict:?}") };
    assert_eq!(error.kind.code().as_str(), "sensitive-data");
    assert!(error.message.contains("(card number)") && error.message.contains("whoever approves"), "{error:?}");
    assert!(error.notes.iter().any(|n| n.contains("\"pay with [card number] today\"")), "{error:?}");
    assert!(error.notes.iter().any(|n| n.contains("card-number at bytes 9..28")), "{error:?}");
    assert_eq!(shown[0].1.value, Value::str("pay with [card number] today"));
    assert!(!said(&verdict).contains("4539"), "{}", said(&verdict));
}

#[test]
fn what_stays_with_the_user_is_not_judged() {
    let mine = post(text(&format!("my card is {CARD}")), DcLabel::secret("ann"));
    assert!(matches!(stage().decide(&mine), Verdict::Proceed));
    // A group that includes someone else is readers other than the user.
    let shared = post(text(&format!("my card is {CARD}")), DcLabel::readers(&["ann", "bob"]));
    assert!(matches!(stage().decide(&shared), Verdict::Withhold { .. }));
}

#[test]
fn the_vaults_secret_is_refused_however_it_is_dressed() {
    let base64 = "Y29yZG9uLWNhbmFyeS03SHEyeFZwOUxt";
    let hex = CANARY.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    let split: String = CANARY.chars().map(|c| format!("{c} ")).collect();
    for dressed in [CANARY.to_string(), base64.to_string(), hex, split, CANARY.replace('-', "%2D")] {
        let verdict = stage().decide(&post(text(&format!("token: {dressed}")), DcLabel::untrusted()));
        let all = said(&verdict);
        assert!(all.contains("vault-secret"), "{dressed}: {all}");
        assert!(!all.contains(&dressed) && !all.contains("7Hq2xVp9Lm"), "{dressed}: {all}");
    }
}

#[test]
fn a_number_is_judged_as_the_digits_it_is_sent_as() {
    let verdict = stage().decide(&post(Val::plain(Value::Int(4539148803436467)), DcLabel::untrusted()));
    assert!(said(&verdict).contains("card-number"), "{}", said(&verdict));
}

/// Where in an argument the sensitive text is put.
#[derive(Clone, Debug)]
enum Nest {
    Bare,
    Field,
    Element(usize),
    Payload,
    Labeled,
}

fn nest(inner: Val, how: &Nest) -> Val {
    let value = match how {
        Nest::Bare => return inner,
        Nest::Field => Value::Record(Arc::new(Record::new(
            "Msg".into(),
            vec![("to".into(), text("bob")), ("body".into(), inner)],
            None,
        ))),
        Nest::Element(at) => {
            let mut items: Vec<Val> = (0..3).map(|i| text(&format!("line {i}"))).collect();
            items.insert(*at % 4, inner);
            Value::List(Arc::new(items))
        }
        Nest::Payload => Value::Variant(Arc::new(Variant::new("Option".into(), "Some".into(), vec![inner]))),
        Nest::Labeled => Value::Labeled(Arc::new(inner)),
    };
    Val::plain(value)
}

fn sinks() -> impl Strategy<Value = (DcLabel, bool)> {
    prop_oneof![
        Just((DcLabel::untrusted(), true)),
        Just((DcLabel::endorsed("ann"), true)),
        Just((DcLabel::readers(&["ann", "bob"]), true)),
        Just((DcLabel::secret("ann"), false)),
        Just((DcLabel::readers(&["ann"]), false)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(26), ..ProptestConfig::default() })]

    /// Nothing leaves unscanned: a card number anywhere in any argument, nested any way, with
    /// any text around it, is refused exactly when the argument's sink may be read by someone
    /// other than the user; and no refusal, nor what observers are told of the call, repeats it.
    #[test]
    fn nothing_leaves_unscanned(
        before in "[a-z ]{0,20}",
        after in "[a-z ]{0,20}",
        hows in prop::collection::vec(prop_oneof![
            Just(Nest::Bare), Just(Nest::Field), (0usize..4).prop_map(Nest::Element), Just(Nest::Payload), Just(Nest::Labeled),
        ], 0..4),
        (sink, leaves) in sinks(),
        position in 0usize..3,
    ) {
        let mut value = text(&format!("{before} {CARD} {after}"));
        for how in &hows {
            value = nest(value, how);
        }
        let mut args: Vec<(Arc<str>, Val)> = (0..3).map(|i| (Arc::from(format!("a{i}")), text("hello"))).collect();
        args[position].1 = value;
        let mut effect = Effect::outside_a_run("Chat", "post", args);
        effect.sinks = (0..3).map(|i| if i == position { sink.clone() } else { DcLabel::untrusted() }).collect();
        let verdict = stage().decide(&effect);
        prop_assert_eq!(matches!(verdict, Verdict::Withhold { .. }), leaves, "{:?}", verdict);
        if leaves {
            prop_assert!(!said(&verdict).contains("4539"));
        }
        // Observers are told of the call screened exactly when it is withheld, and never see
        // the number.
        let screened = stage().screen(&effect);
        prop_assert_eq!(screened.is_some(), leaves);
        if let Some(screened) = screened {
            prop_assert!(!format!("{:?}", screened.args).contains("4539"), "{:?}", screened.args);
            prop_assert_eq!((screened.capability, screened.tool, screened.span), (effect.capability, effect.tool, effect.span));
        }
    }
}
