//! Sink coverage, as properties over random plans: every argument of every effect and every
//! decision to call is checked against a sink, declared or default, and so neither a secret nor
//! an outsider's value can choose where something goes, what goes there, or whether a call
//! happens. The plans call tools whose parameters have declared sinks, no sinks (the default
//! applies), and no parameters at all (only the decision is guarded).
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "common/mod.rs"]
mod common;
#[path = "common/lab.rs"]
mod lab;

use std::cell::Cell;

use common::{Recorder, Source, config, small_limits};
use cordon_label::{DcLabel, Label};
use cordon_runtime::{Effect, Json, Sessions, deep_label};
use lab::{POLICY, plan};
use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use proptest::test_runner::RngSeed;

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

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
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: CASES,
        rng_seed: RngSeed::Fixed(SEED),
        ..ProptestConfig::default()
    });
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
