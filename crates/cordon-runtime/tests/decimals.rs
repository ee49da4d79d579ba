//! Decimals at the boundary: a tool receives a `Decimal` as a JSON string (never a binary
//! float), and its answer is decoded from a string or an integer, exactly; a refinement over a
//! decimal is re-checked on the real value; and every decimal operation's result carries the
//! labels of its operands.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recorder, Source, config, ending, small_limits};
use cordon_runtime::{Json, Sessions};
use serde_json::json;

const POLICY: &str = r#"
capability Wallet {
  tool price() -> Decimal @label(pc = untrusted(), returns = public())
  tool limit() -> {l: Decimal | l > 0d} @label(pc = untrusted(), returns = public())
  tool secret_balance() -> Decimal @label(pc = untrusted())
  tool pay(amount: {a: Decimal | a > 0d && a <= 1000.00d}) -> () @label(pc = untrusted(), amount = public())
}
entry(w: Wallet) -> String
"#;

fn run_with(program: &cordon_runtime::Program, answer: Json) -> (String, Vec<String>) {
    let mut host = Recorder::new(move |e| Ok(if &*e.tool == "pay" { Json::Null } else { answer.clone() }));
    let report = cordon_engine::run(program, &Sessions::default(), &config(small_limits()), &mut host);
    let end = match &report.result {
        Ok(v) => v.value.to_string(),
        Err(e) => format!("{}: {}", e.kind.code().as_str(), e.message),
    };
    (end, host.calls.iter().map(|c| format!("{}({})", c.tool, c.args.join(", "))).collect())
}

fn answered(plan: &str, answer: Json) -> String {
    run_with(&Source::new(Some(POLICY), plan).checked(), answer).0
}

#[test]
fn answers_are_decoded_exactly_from_strings_integers_and_short_numbers() {
    assert_eq!(answered("to_string(w.price())", json!("12.50")), r#""12.50""#);
    assert_eq!(
        answered("to_string(w.price())", json!("-0.0000000000000000000000000001")),
        r#""-0.0000000000000000000000000001""#
    );
    assert_eq!(answered("to_string(w.price())", json!(12)), r#""12""#);
    // A JSON fraction has been through a binary float: taken where its text is exactly the
    // decimal (at most 15 significant digits), refused where that cannot be known.
    assert_eq!(answered("to_string(w.price())", json!(12.5)), r#""12.5""#);
    for bad in [
        json!(0.1 + 0.2),
        json!(1234567.890123456),
        json!("12,50"),
        json!("1e3"),
        json!(""),
        json!("79228162514264337593543950336"),
        json!(true),
        json!(null),
    ] {
        let got = answered("to_string(w.price())", bad.clone());
        assert!(
            got.starts_with("tool-contract") && got.contains("expected a Decimal") || got.contains("expected Decimal"),
            "{bad}: {got}"
        );
    }
    // The declared refinement is checked on what the tool returned.
    assert!(answered("to_string(w.limit())", json!("0.00")).starts_with("tool-contract"));
    assert_eq!(answered("to_string(w.limit())", json!("0.01")), r#""0.01""#);
}

#[test]
fn a_decimal_is_sent_as_a_string_and_its_refinement_is_rechecked_at_the_boundary() {
    let program = Source::new(Some(POLICY), "w.pay(1000.00d); \"paid\"").checked();
    let (end, calls) = run_with(&program, json!(null));
    assert_eq!((end.as_str(), calls), (r#""paid""#, vec!["pay(1000.00d)".to_string()]));
    let effect_json = cordon_runtime::value::Value::decimal("1000.00".parse().unwrap()).to_json();
    assert_eq!(effect_json, json!("1000.00"));
    // One cent over the limit: the checker refuses it, and a program it never saw stops at
    // the boundary's re-check before the host is asked.
    let plan = "w.pay(1000.01d); \"paid\"";
    assert!(Source::new(Some(POLICY), plan).check_with(None).is_err());
    let (end, calls) = run_with(&Source::new(Some(POLICY), plan).unchecked(), json!(null));
    assert!(end.starts_with("recheck-failed"), "{end}");
    assert!(calls.is_empty(), "{calls:?}");
}

#[test]
fn results_carry_the_labels_of_their_operands() {
    let flows = |plan: &str| {
        let program = Source::new(Some(POLICY), plan).checked();
        let mut host = Recorder::new(|e| Ok(if &*e.tool == "pay" { Json::Null } else { json!("5.00") }));
        ending(&cordon_engine::run(&program, &Sessions::default(), &config(small_limits()), &mut host))
    };
    let guard = |e: &str| format!("let x = {e}; if x > 0d && x <= 1000d {{ w.pay(x); }}; \"done\"");
    assert_eq!(flows(&guard("w.price() + 1d")), r#""done""#);
    for secret in [
        "w.secret_balance() + 1d",
        "1d * w.secret_balance()",
        "round(w.secret_balance(), 1)",
        "div_round(10d, max(w.secret_balance(), 1d), 2)",
        "abs(w.secret_balance())",
        "parse_decimal(to_string(w.secret_balance())).unwrap_or(1d)",
        "[w.secret_balance(), 2d].sort()[0]",
        "[w.secret_balance(), 2d].fold(0d, |t, x| t + x)",
    ] {
        assert_eq!(flows(&guard(secret)), "label-flow", "{secret}");
    }
}
