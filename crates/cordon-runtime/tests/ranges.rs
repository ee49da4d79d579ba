//! A loop over `range(a, b)` as written (a `for`, or `map`, `filter`, `fold`, `any`, `all` or
//! `count_by` on it) steps over the integers without building the list, and `count_by` orders
//! keys without the elements. Neither may be seen: each loop must end exactly as the same loop
//! over the list `range(a, b)` makes, bound to a name first (which is never stepped over in
//! place). Same value, same label, same error (a list over the length limit, an overflow, fuel
//! running out, at the same amount of fuel) and the same tool calls.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recorder, Source, config, small_limits};
use cordon_runtime::{Json, Limits, Sessions};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

/// A secret number and a sink that records each number it is given; the entry returns
/// `RESULT`.
const POLICY: &str = r#"
/// Numbers to loop over.
capability Lab {
  /// A number only alice may release.
  tool secret() -> Int @label(returns = secret("alice"))
  /// Keeps a number for alice.
  tool note(x: Int) @label(x = secret("alice"))
}
entry(lab: Lab) -> RESULT
"#;

/// Each loop form, over `XS`, and its type.
const FORMS: &[(&str, &str)] = &[
    ("XS.map(|i: Int| i * 3)", "List[Int]"),
    ("XS.map(|i: Int| i + s)", "List[Int]"),
    ("XS.map(|i: Int| i * 3 + 9223372036854775000)", "List[Int]"),
    ("XS.filter(|i: Int| i % 2 == 0)", "List[Int]"),
    ("XS.fold(0, |acc: Int, i: Int| acc + i * i)", "Int"),
    ("XS.any(|i: Int| i > 5)", "Bool"),
    ("XS.all(|i: Int| i < 7)", "Bool"),
    ("XS.count_by(|i: Int| i % 3)", "List[(Int, Int)]"),
    ("XS.count_by(|i: Int| if i > s { 1 } else { 0 })", "List[(Int, Int)]"),
    ("XS.sort_by(|i: Int| -i).take(3)", "List[Int]"),
    ("XS.map(|i: Int| range(0, i).fold(0, |a: Int, j: Int| a + j))", "List[Int]"),
    // The function is made after `XS`, as on the other side, where `xs` is bound first: a
    // memory limit then stops both at the same allocation.
    ("XS.map({ let f = |i: Int| i - s; f })", "List[Int]"),
    ("{ for i in XS { lab.note(i) }; 0 }", "Int"),
    ("{ for i in XS { if i == s { lab.note(i) } }; 0 }", "Int"),
];

/// The bounds: small, empty, reversed, around the secret, and at the ends of `Int`.
fn bound() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (-4i64..14).prop_map(|i| i.to_string()),
        1 => Just("s".to_string()),
        1 => Just("s + 3".to_string()),
        1 => (9_990i64..10_010).prop_map(|i| i.to_string()),
        1 => Just("9223372036854775800".to_string()),
        1 => Just("9223372036854775807".to_string()),
        1 => Just("-9223372036854775807".to_string()),
    ]
}

/// How a plan returning a `ty` ended under these limits: what it returned with which label, or
/// its error and the code the error points at; and what the sink was given.
fn outcome(plan: &str, ty: &str, (fuel, memory): (u64, u64)) -> String {
    let source = Source::new(Some(&POLICY.replace("RESULT", ty)), plan);
    let program = source.checked();
    let mut host = Recorder::new(|e| match &*e.tool {
        "secret" => Ok(Json::from(4)),
        _ => Ok(Json::Null),
    });
    let config = config(Limits { fuel, max_memory_bytes: memory, ..small_limits() });
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut host);
    let end = match &report.result {
        Ok(v) => format!("{} labelled {}", v.value, v.label.dc()),
        Err(e) => format!("{}: {} at `{}`", e.kind.code().as_str(), e.message, source.text(e.span)),
    };
    format!("{end}; noted {:?}", host.calls_of("note"))
}

/// Enough fuel and memory for every form.
const AMPLE: (u64, u64) = (200_000, 1 << 22);

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, rng_seed: RngSeed::Fixed(SEED), ..ProptestConfig::default() })]

    #[test]
    fn a_loop_over_a_range_ends_as_the_loop_over_its_list(
        (form, ty) in prop::sample::select(FORMS),
        from in bound(),
        to in bound(),
        fuel in prop_oneof![Just(AMPLE.0), 0u64..300],
        memory in prop_oneof![Just(AMPLE.1), 0u64..1500],
    ) {
        let range = format!("range({from}, {to})");
        let stepped = format!("let s = lab.secret();\n{}", form.replace("XS", &range));
        let listed = format!("let s = lab.secret();\nlet xs = {range};\n{}", form.replace("XS", "xs"));
        // An error points at the same code: the loop, or the call of `range` (its text
        // written `xs` on both sides, where the other side has a name).
        let (limits, named) = ((fuel, memory), |o: String| o.replace(&range, "xs"));
        prop_assert_eq!(named(outcome(&stepped, ty, limits)), named(outcome(&listed, ty, limits)), "{}", stepped);
    }
}

/// The cases the property must reach, whatever the generator does: a range over the secret
/// labels the result, one too long fails as its list would, an empty one loops no time.
#[test]
fn ranges_keep_their_label_their_limit_and_their_emptiness() {
    let secret = outcome("let s = lab.secret();\nrange(0, s).map(|i: Int| i)", "List[Int]", AMPLE);
    assert!(secret.starts_with("[0, 1, 2, 3] labelled") && secret.contains("alice"), "{secret}");
    let too_long = outcome("range(0, 10001).fold(0, |a: Int, i: Int| a + i)", "Int", AMPLE);
    assert!(too_long.starts_with("limit-reached: a list of 10001 elements"), "{too_long}");
    let sum = outcome("range(0, 10000).fold(0, |a: Int, i: Int| a + i)", "Int", AMPLE);
    assert!(sum.starts_with("49995000 labelled"), "{sum}");
    let empty = outcome("range(3, -3).count_by(|i: Int| i)", "List[(Int, Int)]", AMPLE);
    assert!(empty.starts_with("[] labelled"), "{empty}");
    let counted = outcome("range(0, 7).count_by(|i: Int| i % 3)", "List[(Int, Int)]", AMPLE);
    assert!(counted.starts_with("[(0, 3), (1, 2), (2, 2)]"), "{counted}");
}

/// A closure the plan binds to the name `range` is called, not stepped over.
#[test]
fn a_closure_named_range_is_called() {
    let plan = "let range = |a: Int, b: Int| [b, a];\nrange(1, 5).map(|i: Int| i * 10)";
    let program = Source::new(None, plan).checked();
    let report = common::run(&program, &mut common::no_tools());
    assert_eq!(common::ending(&report), "[50, 10]");
}

/// Code the checker never saw fails in a range loop as `range` itself would.
#[test]
fn a_range_of_anything_else_fails_as_range_does() {
    let end = |plan: &str| common::ending(&common::run(&common::unchecked(None, plan), &mut common::no_tools()));
    let message = |plan: &str| {
        let report = common::run(&common::unchecked(None, plan), &mut common::no_tools());
        report.result.err().map(|e| e.message).unwrap_or_default()
    };
    let stepped = "for i in range(\"a\", 3) { () }";
    let listed = "let xs = range(\"a\", 3); for i in xs { () }";
    assert_eq!(end(stepped), "runtime-type-error");
    assert_eq!(message(stepped), message(listed));
}
