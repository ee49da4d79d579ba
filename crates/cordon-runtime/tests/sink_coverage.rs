//! Sink coverage, as properties over random plans: every argument of every effect and every
//! decision to call is checked against a sink, declared or default, and so neither a secret nor
//! an outsider's value can choose where something goes, what goes there, or whether a call
//! happens. The plans call tools whose parameters have declared sinks, no sinks (the default
//! applies), and no parameters at all (only the decision is guarded).
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "common/mod.rs"]
mod common;

use std::cell::Cell;

use common::{Recorder, Source, config, small_limits};
use cordon_runtime::{DcLabel, Effect, Json, Label, Sessions, deep_label};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::Config as ProptestConfig;

const POLICY: &str = r#"
capability Lab {
  tool secret() -> Int @label(returns = secret("alice"))
  tool outsider() -> Int @label(returns = untrusted())
  /// `body` may be anyone's public text; `to` has no sink: the default applies.
  tool send(to: Int, body: Int) @label(body = untrusted())
  /// No parameters: only the decision to call is guarded (by the default).
  tool ping()
  /// No sink at all.
  tool store(x: Int)
}
entry(lab: Lab) -> ()
"#;

/// The sink the policy gives each parameter of each tool, and the decision's: what the
/// boundary must have checked, computed here independently of it.
fn sinks(tool: &str) -> (Vec<DcLabel>, DcLabel) {
    let default = DcLabel::endorsed("user");
    match tool {
        "send" => (vec![default.clone(), DcLabel::untrusted()], default.meet(&DcLabel::untrusted())),
        "store" => (vec![default.clone()], default),
        _ => (vec![], default),
    }
}

/// Int expressions over the secret `s`, the outsider's `o` and the public `p`.
fn int(depth: u32) -> BoxedStrategy<String> {
    // Public leaves outweigh the others, so that most plans make some calls before one that
    // would reveal a secret or obey an outsider is refused.
    let leaf = prop_oneof![
        3 => (0i64..4).prop_map(|i| i.to_string()),
        2 => Just("p".into()),
        1 => Just("s".into()),
        1 => Just("o".into()),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let e = int(depth - 1);
    prop_oneof![
        leaf.clone(),
        leaf,
        (e.clone(), e.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
        (e.clone(), e.clone(), e.clone()).prop_map(|(c, a, b)| format!("(if {c} > 1 {{ {a} }} else {{ {b} }})")),
        (e.clone(), e.clone()).prop_map(|(a, b)| format!("([{a}, {b}].filter(|x| x > 1).first().unwrap_or(0))")),
        (e.clone(), e.clone()).prop_map(|(a, b)| format!("(match {a} {{ 1 => {b}, _ => 2 }})")),
    ]
    .boxed()
}

/// Statements: calls of every tool, alone and under branches and loops on any value.
fn stmts(depth: u32) -> BoxedStrategy<String> {
    let call = prop_oneof![
        (int(2), int(2)).prop_map(|(a, b)| format!("lab.send({a}, {b});")),
        Just("lab.ping();".to_string()),
        int(2).prop_map(|a| format!("lab.store({a});")),
    ];
    if depth == 0 {
        return prop::collection::vec(call, 1..3).prop_map(|s| s.join(" ")).boxed();
    }
    let body = stmts(depth - 1);
    let stmt = prop_oneof![
        call.clone(),
        call,
        (int(1), body.clone(), body.clone()).prop_map(|(c, a, b)| format!("if {c} > 1 {{ {a} }} else {{ {b} }};")),
        (int(1), body.clone()).prop_map(|(n, b)| format!("for i in range(0, min(max({n}, 0), 3)) {{ {b} }};")),
        (int(1), body).prop_map(|(a, b)| format!("let ys = [{a}, 1].map(|x| {{ {b} x }});")),
    ];
    prop::collection::vec(stmt, 1..4).prop_map(|s| s.join(" ")).boxed()
}

fn plan() -> impl Strategy<Value = String> {
    stmts(2).prop_map(|body| format!("let s = lab.secret(); let o = lab.outsider(); let p = 3;\n{body}\n()"))
}

/// Runs the plan with the secret and the outsider's value given; returns every call the host
/// performed, as `tool(args)` text, with the arguments an outsider may choose (`send`'s body)
/// as `_` when `mask_outsiders`. Asserts, at each call, that every argument joined with the pc
/// flows to its sink and the pc to the decision's sink, and counts the calls so checked.
fn calls(
    program: &cordon_runtime::Program,
    secret: i64,
    outsider: i64,
    mask_outsiders: bool,
    checked: &Cell<u32>,
) -> Vec<String> {
    let mut seen = Vec::new();
    let mut host = Recorder::new(|e: &Effect| {
        match &*e.tool {
            "secret" => return Ok(Json::from(secret)),
            "outsider" => return Ok(Json::from(outsider)),
            _ => {}
        }
        let (params, decision) = sinks(&e.tool);
        assert!(e.pc.flows_to(&decision), "`{}` called under {} past its decision sink {decision}", e.tool, e.pc);
        let mut shown = Vec::new();
        for ((name, arg), sink) in e.args.iter().zip(&params) {
            let carried: Label = deep_label(arg).join(&e.pc);
            assert!(carried.flows_to(sink), "`{}({name})` got {carried} past its sink {sink}", e.tool);
            let outsiders_may_choose = DcLabel::untrusted().flows_to(sink);
            shown.push(if mask_outsiders && outsiders_may_choose { "_".to_string() } else { arg.value.to_string() });
        }
        seen.push(format!("{}({})", e.tool, shown.join(", ")));
        checked.set(checked.get() + 1);
        Ok(Json::Null)
    });
    let _ = cordon_engine::run(program, &Sessions::default(), &config(small_limits()), &mut host);
    drop(host);
    seen
}

/// How many generated plans run; at least a third must perform a guarded call, so that the
/// property cannot pass because every run stopped before its first effect.
const CASES: u32 = 300;

#[test]
fn every_argument_and_every_decision_meets_its_sink() {
    let mut runner =
        proptest::test_runner::TestRunner::new(ProptestConfig { cases: CASES, ..ProptestConfig::default() });
    let (cases, reached) = (Cell::new(0u32), Cell::new(0u32));
    let inputs = (plan(), (0i64..4, 0i64..4), (0i64..4, 0i64..4));
    let result = runner.run(&inputs, |(plan, secrets, outsiders)| {
        let Ok(program) = Source::new(Some(POLICY), &plan).check_with(None) else {
            panic!("the generator makes only well-typed plans:\n{plan}");
        };
        let checked = Cell::new(0);
        // Two worlds differing only in the secret, then only in the outsider's value: the
        // calls the host performs (tool, every argument the differing party may not choose,
        // order) agree up to where one run stopped (a run stops at the first call that would
        // reveal what differs).
        for ((s1, o1), (s2, o2), mask) in
            [((secrets.0, 0), (secrets.1, 0), false), ((0, outsiders.0), (0, outsiders.1), true)]
        {
            let a = calls(&program, s1, o1, mask, &checked);
            let b = calls(&program, s2, o2, mask, &checked);
            let common = a.len().min(b.len());
            prop_assert_eq!(&a[..common], &b[..common], "\n{}", plan);
        }
        cases.set(cases.get() + 1);
        reached.set(reached.get() + u32::from(checked.get() > 0));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (cases, reached) = (cases.get(), reached.get());
    println!("{reached} of {cases} cases reached a guarded call");
    assert!(cases == CASES && reached * 3 >= cases, "{reached} of {cases} cases reached a guarded call");
}
