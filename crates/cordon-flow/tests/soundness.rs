//! The static summary against the run time, on random plans over the lab policy (the
//! runtime's sink-coverage generator: secrets and an outsider's values through arithmetic,
//! branches, matches, loops, closures and boxes): every call a run proposes is a site of the
//! summary, made no more often than it says, with its decision's and arguments' own labels
//! within the site's bounds, and judged by the boundary as the summary said wherever it said
//! "allowed" or "refused". Each plan runs with several secrets and outsiders' values; a floor
//! on the calls seen keeps the property from passing without testing.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/lab.rs"]
mod lab;
#[path = "../../cordon-runtime/tests/common/proposed.rs"]
mod proposed;

use std::cell::Cell;

use cordon_runtime::{Json, Limits, Program, ToolCall, ToolHost};
use cordon_syntax::SourceMap;
use cordon_types::CheckOptions;
use proptest::test_runner::RngSeed;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

/// The lab's host: the secret and the outsider's value it was given, nothing for the rest.
struct Lab {
    secret: i64,
    outsider: i64,
}

impl ToolHost for Lab {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        Ok(match call.tool() {
            "secret" => Json::from(self.secret),
            "outsider" => Json::from(self.outsider),
            _ => Json::Null,
        })
    }
}

const CASES: u32 = 400;

#[test]
fn the_summary_bounds_every_call_of_random_lab_plans() {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(CASES);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(SEED),
        ..Config::default()
    });
    let (seen, refused) = (Cell::new(0u64), Cell::new(0u64));
    let result = runner.run(&lab::plan(), |plan| {
        let mut sources = SourceMap::new();
        let policy = sources.add("lab.cord", lab::POLICY);
        let file = sources.add("plan.cord", plan.as_str());
        let outcome = cordon_types::check(&sources, &[policy], Some(file), &CheckOptions::default());
        let Some(checked) = outcome.program.as_ref() else {
            panic!("the generator makes only well-typed plans:\n{plan}")
        };
        let summary = cordon_flow::analyze(checked, &sources, "user");
        let program = Program::new(checked).unwrap();
        let limits = Limits { fuel: 100_000, max_tool_calls: 60, ..Limits::default() };
        for (secret, outsider) in [(0, 0), (2, 0), (0, 2), (3, 3)] {
            let effects = proposed::proposed(&program, &mut Lab { secret, outsider }, "user", &limits)
                .map_err(TestCaseError::fail)?;
            seen.set(seen.get() + effects.len() as u64);
            refused.set(refused.get() + effects.iter().filter(|e| !e.flows.is_empty()).count() as u64);
            proposed::within(&summary, &effects).map_err(|e| TestCaseError::fail(format!("{e}\n{plan}")))?;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    println!("{} calls seen, {} of them refused on labels", seen.get(), refused.get());
    assert!(seen.get() >= u64::from(cases) * 4, "only {} calls seen in {cases} plans", seen.get());
    assert!(refused.get() >= u64::from(cases) / 4, "only {} refused calls seen", refused.get());
}

/// A capability's tool may have a builtin's name (`filter`, `len`, `map`): a call of it on the
/// capability is the tool's for the checker, the analysis and the run alike, because both later
/// stages read what the checker resolved the call to. For every builtin a plan may call, the run
/// performs the tool call, and the summary has it.
#[test]
fn a_tool_named_as_a_builtin_is_the_tool_for_every_stage() {
    let mut wrong = Vec::new();
    for builtin in cordon_syntax::Builtin::PLAN {
        let name = builtin.name();
        let policy = format!("capability Lab {{\n  tool {name}(n: Int) -> Int\n}}\nentry(lab: Lab) -> Int\n");
        let mut sources = SourceMap::new();
        let policy = sources.add("lab.cord", policy);
        let plan = sources.add("plan.cord", format!("lab.{name}(1) + 1"));
        let outcome = cordon_types::check(&sources, &[policy], Some(plan), &CheckOptions::default());
        let Some(checked) = outcome.program.as_ref() else {
            wrong.push(format!("`lab.{name}(1)` does not check: {:?}", outcome.diagnostics));
            continue;
        };
        let summary = cordon_flow::analyze(checked, &sources, "user");
        if summary.calls.iter().map(|s| &*s.tool).collect::<Vec<_>>() != [name] {
            wrong.push(format!("the summary of `lab.{name}(1)` has {:?}", summary.calls));
        }
        let program = Program::new(checked).unwrap();
        struct Answers;
        impl ToolHost for Answers {
            fn perform(&mut self, _: &ToolCall<'_>) -> Result<Json, String> {
                Ok(Json::from(41))
            }
        }
        match proposed::proposed(&program, &mut Answers, "user", &Limits::default()) {
            Ok(effects) if effects.len() == 1 && effects[0].tool.as_ref() == name => {
                if let Err(e) = proposed::within(&summary, &effects) {
                    wrong.push(format!("`lab.{name}(1)`: {e}"));
                }
            }
            other => wrong.push(format!("`lab.{name}(1)` proposed {other:?}")),
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} builtins' names:\n{}",
        wrong.len(),
        cordon_syntax::Builtin::PLAN.len(),
        wrong.join("\n")
    );
}
