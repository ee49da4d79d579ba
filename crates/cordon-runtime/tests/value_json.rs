//! A value written as JSON straight to a serializer (`Value::as_json`, how transcripts write
//! every call's arguments) is the JSON `Value::to_json` builds, byte for byte: checked against
//! the mapping written out as a tree here, on generated values of every kind.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use cordon_label::{DcLabel, Label};
use cordon_runtime::{Val, Value};
use proptest::prelude::*;
use serde_json::{Value as J, json};

/// The mapping as a JSON tree: an object's keys kept in byte order, as `serde_json::Map` keeps them.
fn tree(v: &Value) -> J {
    match v {
        Value::Unit => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => json!(i),
        Value::Float(x) => json!(x),
        Value::Decimal(d) => J::String(d.to_string()),
        Value::Time(t) => J::String(t.to_string()),
        Value::Str(s) => J::String(s.to_string()),
        Value::Tuple(items) | Value::List(items) => J::Array(items.iter().map(|v| tree(&v.value)).collect()),
        Value::Record(r) => J::Object(r.fields().map(|(n, v)| (n.to_string(), tree(&v.value))).collect()),
        Value::Variant(v) => match v.payload.as_slice() {
            [] if &*v.enum_name == "Option" => J::Null,
            [entries] if &*v.enum_name == "Map" => tree(&entries.value),
            [some] if &*v.enum_name == "Option" => tree(&some.value),
            [] => J::String(v.name.to_string()),
            [one] => json!({ v.name.to_string(): tree(&one.value) }),
            many => json!({ v.name.to_string(): many.iter().map(|p| tree(&p.value)).collect::<Vec<_>>() }),
        },
        Value::Func(_) => J::String("<function>".into()),
        Value::Handle(h) => J::String(format!("<{} #{}>", h.ty, h.id)),
        Value::Capability(c) => J::String(format!("<capability {c}>")),
        Value::Labeled(inner) => json!({ "labeled": inner.label.to_string() }),
        Value::Label(l) => J::String(l.to_string()),
    }
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z]{1,6}", "[A-Za-z_\u{e9}\u{4e2d}]{1,4}", Just("Some".to_string()), Just("Map".to_string())]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Unit),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        prop_oneof![any::<f64>(), Just(f64::NAN), Just(f64::INFINITY), Just(-0.0)].prop_map(Value::Float),
        any::<String>().prop_map(|s| Value::str(&s)),
        (any::<i64>(), 0u32..10).prop_map(|(n, scale)| Value::decimal(rust_decimal::Decimal::new(n, scale))),
        (name(), any::<u64>()).prop_map(|(ty, id)| Value::handle(ty.into(), id)),
        Just(Value::Label(Arc::new(DcLabel::secret("alice")))),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::list),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::tuple),
            // Field names unique, in any order: the JSON keys are sorted.
            proptest::collection::btree_map(name(), inner.clone(), 0..5).prop_map(|fields| {
                let mut fields: Vec<(String, Value)> = fields.into_iter().collect();
                fields.reverse();
                Value::record("R", fields.iter().map(|(n, v)| (n.as_str(), v.clone())).collect())
            }),
            (prop_oneof![Just("Option"), Just("Map"), Just("E")], name(), proptest::collection::vec(inner, 0..3))
                .prop_map(|(e, n, payload)| Value::variant(e, &n, payload)),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(41),
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_value_written_as_json_is_the_tree_to_json_builds(v in value()) {
        let expected = tree(&v);
        prop_assert_eq!(serde_json::to_string(&v.as_json()).unwrap(), expected.to_string());
        prop_assert_eq!(v.to_json(), expected);
        let nested = Value::tuple(vec![v.clone(), Value::list(vec![v])]);
        prop_assert_eq!(serde_json::to_string(&nested.as_json()).unwrap(), tree(&nested).to_string());
    }
}

#[test]
fn values_that_mean_nothing_outside_a_run_are_described() {
    let v = Value::tuple(vec![Value::handle(Arc::from("Session"), 7), Value::Capability("github".into())]);
    assert_eq!(serde_json::to_string(&v.as_json()).unwrap(), r#"["<Session #7>","<capability github>"]"#);
    let boxed =
        Value::Labeled(Arc::new(Val { value: Value::str("x"), label: Label::new(DcLabel::secret("alice"), source()) }));
    assert_eq!(serde_json::to_string(&boxed.as_json()).unwrap(), tree(&boxed).to_string());
    assert!(serde_json::to_string(&boxed.as_json()).unwrap().starts_with(r#"{"labeled":"#));
}

fn source() -> cordon_label::Source {
    cordon_label::Source { what: "a test".into(), span: Default::default() }
}
