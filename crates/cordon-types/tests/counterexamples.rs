//! Counterexamples are faithful: the values a `refinement-unproven` diagnostic offers satisfy
//! every fact it lists. A guard on `x % c` or `x / c` (negative operands included) holds of the
//! `x` offered, with `%` and `/` computed as the runtime computes them (rounding toward zero), and
//! the obligation fails on it.

use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

/// The obligation `x > bound` under the guard `x OP c == k`; the counterexample offered, if any.
fn counterexample(op: &str, c: i64, k: i64, bound: i64) -> Option<Option<i64>> {
    let plan = format!(
        "fn need(v: {{v: Int | v > {bound}}}) -> Int {{ v }}\n\
         fn f(x: Int) -> Int {{ if x {op} {c} == {k} {{ need(x) }} else {{ 0 }} }}\n\
         f(1)\n"
    );
    let mut sources = SourceMap::new();
    let file = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[], Some(file), &CheckOptions::default());
    let error = outcome.diagnostics.iter().find(|d| d.is_error())?;
    assert_eq!(error.code.as_str(), "refinement-unproven", "{error:?}");
    let shown = error.notes.iter().find_map(|n| n.strip_prefix("counterexample: "));
    Some(shown.map(|s| {
        let value = s.strip_prefix("x = ").expect("a counterexample names x alone");
        value.parse().expect("x is an integer")
    }))
}

fn apply(op: &str, x: i64, c: i64) -> i64 {
    match op {
        "%" => x.checked_rem(c).expect("c is not 0"),
        _ => x.checked_div(c).expect("c is not 0"),
    }
}

#[test]
fn guards_on_remainders_and_quotients_hold_of_their_counterexamples() {
    let offered = std::cell::Cell::new(0);
    let cases = std::cell::Cell::new(0);
    proptest!(ProptestConfig { rng_seed: RngSeed::Fixed(SEED), ..ProptestConfig::with_cases(96) }, |(
        op in prop::sample::select(vec!["%", "/"]),
        c in prop_oneof![-9i64..=-1, 1i64..=9, Just(97)],
        k in -12i64..=12,
        bound in -50i64..=50,
    )| {
        cases.set(cases.get() + 1);
        if let Some(Some(x)) = counterexample(op, c, k, bound) {
            offered.set(offered.get() + 1);
            prop_assert_eq!(apply(op, x, c), k, "x = {} breaks the guard x {} {} == {}", x, op, c, k);
            prop_assert!(x <= bound, "x = {} satisfies x > {}", x, bound);
        }
    });
    // The case: a guard `x % 97 == 3` once offered x = 87.
    let x = counterexample("%", 97, 3, 1000).flatten().expect("a counterexample");
    assert_eq!(x % 97, 3, "x = {x}");
    // The property means something only if counterexamples were offered often.
    let (offered, cases) = (offered.get(), cases.get());
    assert!(offered * 3 >= cases, "only {offered} of {cases} cases offered a counterexample");
}

#[test]
fn no_counterexample_rests_on_an_unmodelled_value() {
    let plan = "fn need(v: {v: Int | v > 5}) -> Int { v }\n\
                fn f(x: Int, y: Int) -> Int { if x * y == 12 { need(x) } else { 0 } }\n\
                f(1, 2)\n";
    let mut sources = SourceMap::new();
    let file = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[], Some(file), &CheckOptions::default());
    let error = outcome.diagnostics.iter().find(|d| d.is_error()).expect("rejected");
    assert!(!error.notes.iter().any(|n| n.starts_with("counterexample")), "{:?}", error.notes);
    assert!(error.notes.iter().any(|n| n.starts_with("no counterexample shown")), "{:?}", error.notes);
}
