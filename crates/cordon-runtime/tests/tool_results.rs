//! What a tool host answers is JSON, decoded against the tool's declared result type by the
//! boundary. A hostile or broken host (an MCP server that lies, a bug) gets a `tool-contract`
//! error that says where its answer went wrong, never a wrong value in the plan: every shape of
//! wrong answer is tried here. And the one mapping is its own inverse: a value the plan sends is
//! decoded back to the same value (a property test over random values of every declared kind).
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recorder, Source, config, ending, small_limits};
use cordon_runtime::{Json, Sessions};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::json;

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

const POLICY: &str = r#"
type Item = { id: Int, name: String, tags: List[String], score: Float, ok: Bool }
enum Shape { Dot, Circle(Int), Rect(Int, Int) }
enum Nest { End, More(Nest) }
type Small = { n: {n: Int | n >= 0 && n < 10} }
opaque type Ticket = { id: Int }
capability Api {
  tool item() -> Item @label(pc = untrusted(), returns = public())
  tool shape() -> Shape @label(pc = untrusted(), returns = public())
  tool maybe() -> Option[Int] @label(pc = untrusted(), returns = public())
  tool outcome() -> Result[Int, String] @label(pc = untrusted(), returns = public())
  tool small() -> Small @label(pc = untrusted(), returns = public())
  tool pair() -> (Int, String) @label(pc = untrusted(), returns = public())
  tool nums() -> List[Int] @label(pc = untrusted(), returns = public())
  tool ticket() -> Ticket @label(pc = untrusted(), returns = public())
  tool nest() -> Nest @label(pc = untrusted(), returns = public())
  tool nothing() -> () @label(pc = untrusted(), returns = public())
  tool echo(x: Item, s: Shape, o: Option[Int], r: Result[Int, String], p: (Int, String)) -> (Item, Shape, Option[Int], Result[Int, String], (Int, String))
    @label(x = untrusted(), s = untrusted(), o = untrusted(), r = untrusted(), p = untrusted(), returns = public())
}
entry(api: Api) -> String
"#;

/// Runs `plan` against a host that answers every call with `answer`: how it ends (the plan's
/// value, or the error's code and message).
fn answered(plan: &str, answer: Json) -> String {
    let program = Source::new(Some(POLICY), plan).checked();
    let mut host = Recorder::new(move |_| Ok(answer.clone()));
    let report = cordon_engine::run(&program, &Sessions::default(), &config(small_limits()), &mut host);
    match &report.result {
        Ok(v) => v.value.to_string(),
        Err(e) => format!("{}: {}", e.kind.code().as_str(), e.message),
    }
}

#[test]
fn answers_that_fit_are_decoded() {
    let item = json!({ "id": 1, "name": "n", "tags": ["a", "b"], "score": 0.5, "ok": true, "extra": "ignored" });
    assert_eq!(answered("api.item().tags.len().to_string()", item), r#""2""#);
    assert_eq!(
        answered(
            "match api.shape() { Shape::Rect(w, h) => (w * h).to_string(), _ => \"?\" }",
            json!({ "Rect": [2, 3] })
        ),
        r#""6""#
    );
    assert_eq!(
        answered("match api.shape() { Shape::Circle(r) => r.to_string(), _ => \"?\" }", json!({ "Circle": 4 })),
        r#""4""#
    );
    assert_eq!(answered("match api.shape() { Shape::Dot => \"dot\", _ => \"?\" }", json!("Dot")), r#""dot""#);
    assert_eq!(answered("api.maybe().unwrap_or(7).to_string()", Json::Null), r#""7""#);
    assert_eq!(answered("api.maybe().unwrap_or(7).to_string()", json!(3)), r#""3""#);
    let outcome = "match api.outcome() { Ok(n) => n.to_string(), Err(e) => e }";
    assert_eq!(answered(outcome, json!({ "Ok": 5 })), r#""5""#);
    assert_eq!(answered(outcome, json!({ "Err": "no" })), r#""no""#);
    assert_eq!(answered("api.small().n.to_string()", json!({ "n": 9 })), r#""9""#);
    assert_eq!(answered("let (a, b) = api.pair(); b + a.to_string()", json!([1, "x"])), r#""x1""#);
    assert_eq!(answered("api.ticket().id.to_string()", json!({ "id": 12 })), r#""12""#);
    assert_eq!(answered("api.nothing(); \"done\"", Json::Null), r#""done""#);
}

#[test]
fn answers_that_do_not_fit_are_contract_errors_that_say_where() {
    let item = |field: &str, value: Json| {
        let mut ok = json!({ "id": 1, "name": "n", "tags": ["a"], "score": 0.5, "ok": true });
        ok[field] = value;
        ok
    };
    let cases: Vec<(&str, Json, &str)> = vec![
        ("api.item().name", json!("not an object"), "expected a `Item`, found a string"),
        ("api.item().name", item("id", json!("1")), "at `.id`: expected Int, found a string"),
        ("api.item().name", item("id", json!(1.5)), "at `.id`: expected an Int, found a number"),
        ("api.item().name", item("tags", json!(["a", 2])), "at `.tags[1]`: expected String, found a number"),
        ("api.item().name", item("ok", Json::Null), "at `.ok`: expected Bool, found null"),
        ("api.item().name", json!({ "id": 1 }), "expected a `Item` with the field `name`"),
        ("match api.shape() { _ => \"\" }", json!("Square"), "`Shape` has no variant `Square`"),
        ("match api.shape() { _ => \"\" }", json!({ "Rect": [1] }), "`Shape::Rect` takes 2 values, found 1"),
        ("match api.shape() { _ => \"\" }", json!("Circle"), "`Shape::Circle` takes 1 values, found 0"),
        ("match api.shape() { _ => \"\" }", json!({ "Dot": 1 }), "`Shape::Dot` takes 0 values, found 1"),
        ("match api.shape() { _ => \"\" }", json!({ "Circle": 1, "Dot": 2 }), "expected a `Shape`, found an object"),
        ("match api.outcome() { _ => \"\" }", json!({ "Maybe": 1 }), "`{\"Ok\": ..}` or `{\"Err\": ..}`"),
        ("match api.outcome() { _ => \"\" }", json!({ "Ok": "five" }), "at `.Ok`: expected Int, found a string"),
        ("api.small().n.to_string()", json!({ "n": 10 }), "at `.n`: the refinement on `n` does not hold"),
        ("let (a, b) = api.pair(); b", json!([1]), "expected (Int, String), found an array"),
        ("api.nums().len().to_string()", json!([1, [2]]), "at `[1]`: expected Int, found an array"),
        ("api.nothing(); \"\"", json!(0), "expected (), found a number"),
    ];
    for (plan, answer, expected) in cases {
        let got = answered(plan, answer.clone());
        assert!(got.starts_with("tool-contract: "), "{plan} answered {answer}: {got}");
        assert!(got.contains(expected), "{plan} answered {answer}: expected `{expected}` in\n{got}");
    }
}

#[test]
fn an_answer_over_the_limits_is_refused_before_it_is_built() {
    let long = "x".repeat(small_limits().max_string_bytes + 1);
    let got = answered("api.item().name", json!({ "id": 1, "name": long, "tags": [], "score": 0, "ok": true }));
    assert!(
        got.starts_with("limit-reached: `Api.item` returned more than the run may hold: at `.name`: a string of"),
        "{got}"
    );
    let many: Vec<i64> = (0..=small_limits().max_list_len as i64).collect();
    let got = answered("api.nums().len().to_string()", json!(many));
    assert!(got.starts_with("limit-reached: `Api.nums` returned more than the run may hold: a list of"), "{got}");
}

#[test]
fn a_deeply_nested_answer_is_refused() {
    let mut deep = json!(1);
    for _ in 0..500 {
        deep = json!({ "More": deep });
    }
    let got = answered("match api.nest() { _ => \"\" }", deep);
    assert!(got.starts_with("tool-contract: ") && got.contains("nests deeper than 128"), "{got}");
}

/// A value of each kind the `echo` tool takes, written as the plan writes it.
fn echo_args() -> impl Strategy<Value = String> {
    let text = "[a-z \"\\\\]{0,8}".prop_map(|s| format!("{s:?}"));
    let int = any::<i32>().prop_map(|i| i.to_string());
    let item = (int.clone(), text.clone(), prop::collection::vec(text.clone(), 0..3), -1e6f64..1e6, any::<bool>())
        .prop_map(|(id, name, tags, score, ok)| {
            format!("Item {{ id: {id}, name: {name}, tags: [{}], score: {score:?}, ok: {ok} }}", tags.join(", "))
        });
    let shape = prop_oneof![
        Just("Shape::Dot".to_string()),
        int.clone().prop_map(|r| format!("Shape::Circle({r})")),
        (int.clone(), int.clone()).prop_map(|(w, h)| format!("Shape::Rect({w}, {h})")),
    ];
    let option = prop_oneof![Just("None".to_string()), int.clone().prop_map(|i| format!("Some({i})"))];
    let result =
        prop_oneof![int.clone().prop_map(|i| format!("Ok({i})")), text.clone().prop_map(|t| format!("Err({t})"))];
    (item, shape, option, result, int, text).prop_map(|(x, s, o, r, i, t)| format!("{x}, {s}, {o}, {r}, ({i}, {t})"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, rng_seed: RngSeed::Fixed(SEED), ..ProptestConfig::default() })]

    /// Whatever the plan sends, a host that answers with the arguments it received gives the
    /// plan back the same values.
    #[test]
    fn what_a_plan_sends_decodes_back_to_the_same_values(args in echo_args()) {
        let plan = format!("let sent = ({args});\nlet (x, s, o, r, p) = sent;\nlet back = api.echo(x, s, o, r, p);\nif back == sent {{ \"same\" }} else {{ \"different\" }}");
        let program = Source::new(Some(POLICY), &plan).checked();
        let mut host = Recorder::new(|e| {
            let args: Vec<Json> = e.args.iter().map(|(_, v)| v.value.to_json()).collect();
            Ok(Json::Array(args))
        });
        let report = cordon_engine::run(&program, &Sessions::default(), &config(small_limits()), &mut host);
        let ended = ending(&report);
        prop_assert_eq!(ended, r#""same""#, "{}", plan);
    }
}
