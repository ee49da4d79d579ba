//! `sort_by`, `min_by` and `max_by` order integer keys three ways (packed with their positions
//! when they span less than 2³², as (key, position) pairs when they span more, and by
//! comparison for any other key), and let the keys go before the sorted list is made. Each way
//! must give what a reference stable sort gives: the same elements with the same labels, in the
//! same order, and a result whose label carries the list's and every key's.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recorder, Source, run};
use cordon_label::DcLabel;
use cordon_runtime::{Json, Val, Value};
use proptest::prelude::*;

const POLICY: &str = r#"
/// Gives numbers back with a label.
capability Lab {
  /// Its argument, as alice's secret.
  tool alice(x: Int) -> Int @label(returns = secret("alice"))
  /// Its argument, as bob's secret.
  tool bob(x: Int) -> Int @label(returns = secret("bob"))
}
entry(lab: Lab) -> (List[Int], List[Int], Option[Int], Option[Int])
"#;

/// Answers each tool with its argument.
fn lab() -> Recorder<'static> {
    Recorder::new(|e| Ok(e.arg("x").map_or(Json::Null, Value::to_json)))
}

/// The key each plan orders by, in Cordon and in Rust (`None`: a key that is not an `Int`,
/// compared as the text of the number).
const KEYS: &[&str] = &["x", "x % 3", "x.to_string()"];

fn key_of(key: &str, x: i64) -> Result<i64, String> {
    match key {
        "x" => Ok(x),
        "x % 3" => Ok(x % 3),
        _ => Err(x.to_string()),
    }
}

fn int(v: &Val) -> i64 {
    match v.value {
        Value::Int(i) => i,
        _ => panic!("not an Int: {v:?}"),
    }
}

fn list(v: &Val) -> Vec<Val> {
    match &v.value {
        Value::List(xs) => xs.to_vec(),
        _ => panic!("not a List: {v:?}"),
    }
}

/// The element of an `Option` result, with the label it carries.
fn some(v: &Val) -> Option<Val> {
    match &v.value {
        Value::Variant(variant) if variant.name.as_ref() == "Some" => {
            variant.payload.first().map(|x| Val { value: x.value.clone(), label: v.label.clone() })
        }
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn ordering_by_keys_is_a_stable_sort_that_keeps_every_label(
        xs in prop::collection::vec(
            (prop_oneof![-4i64..4, Just(i64::MIN + 1), Just(i64::MAX), Just(1i64 << 40)], 0u8..3),
            0..24,
        ),
        which in 0..KEYS.len(),
    ) {
        let key = KEYS[which];
        let element = |&(x, owner): &(i64, u8)| match owner {
            0 => format!("({x})"),
            1 => format!("lab.alice({x})"),
            _ => format!("lab.bob({x})"),
        };
        let elements = xs.iter().map(element).collect::<Vec<_>>().join(", ");
        let plan = format!(
            "let xs: List[Int] = [{elements}];
             (xs, xs.sort_by(|x: Int| {key}), xs.min_by(|x: Int| {key}), xs.max_by(|x: Int| {key}))"
        );
        let report = run(&Source::new(Some(POLICY), &plan).checked(), &mut lab());
        let result = report.result.unwrap();
        let Value::Tuple(parts) = &result.value else { panic!("not a tuple: {result:?}") };
        let [given, sorted, min, max] = &parts[..] else { panic!("not four parts: {parts:?}") };
        let given = list(given);

        // The reference: a stable sort of the elements (values and labels) by key.
        let mut expected = given.clone();
        expected.sort_by_key(|v| key_of(key, int(v)));
        prop_assert_eq!(&list(sorted), &expected);
        let first = expected.first().cloned();
        let largest = expected.last().map(|v| key_of(key, int(v)));
        let last = given.iter().find(|v| Some(key_of(key, int(v))) == largest).cloned();
        prop_assert_eq!(some(min).map(|v| v.value), first.as_ref().map(|v| v.value.clone()));
        prop_assert_eq!(some(max).map(|v| v.value), last.as_ref().map(|v| v.value.clone()));

        // The order depends on every key: each key carries its element's label.
        let keys = given.iter().fold(DcLabel::bottom(), |l, v| l.join(&v.label.dc()));
        prop_assert_eq!(sorted.label.dc(), keys.clone());
        // The element picked carries its own label too.
        let picked = |v: &Option<Val>| v.as_ref().map_or(keys.clone(), |v| keys.join(&v.label.dc()));
        prop_assert_eq!(min.label.dc(), picked(&first));
        prop_assert_eq!(max.label.dc(), picked(&last));
    }
}
