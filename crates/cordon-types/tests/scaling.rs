//! The regression guard for linear checking (issue 10): each plan shape of
//! `benches/shapes/mod.rs`, checked at two sizes four times apart, must have obligations, queries
//! to the solver, hypotheses sent to it, facts looked at to choose them and linear states looked
//! at where branches meet that grow at most linearly. An obligation that carried every fact connected to it (the quadratic behaviour this
//! guards against) sends sixteen times the hypotheses at four times the length. Counts, not
//! clocks: the same on every machine.

#[path = "../benches/shapes/mod.rs"]
mod shapes;

use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, Outcome, check};

fn check_shape(generate: fn(usize) -> String, github: bool, lines: usize) -> Outcome {
    let plan = generate(lines);
    assert_eq!(plan.lines().count(), lines, "the generator makes plans of the length asked");
    let mut sources = SourceMap::new();
    let policies: Vec<_> = github.then(|| sources.add("github.cord", shapes::GITHUB)).into_iter().collect();
    let file = sources.add("plan.cord", &plan);
    let outcome = check(&sources, &policies, Some(file), &CheckOptions::default());
    let errors: Vec<String> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {}", d.code.as_str(), d.message))
        .collect();
    assert!(errors.is_empty(), "the {lines}-line plan must be accepted:\n{}", errors.join("\n"));
    outcome
}

#[test]
fn every_shape_asks_the_solver_linearly_in_its_length() {
    const SMALL: usize = 150;
    const LARGE: usize = 4 * SMALL;
    for (name, generate, github) in shapes::SHAPES {
        let small = check_shape(generate, github, SMALL);
        let large = check_shape(generate, github, LARGE);
        let obligations = |o: &Outcome| o.solver_queries + o.folded;
        // Every shape has obligations on (nearly) every line, so the guard has something to see.
        assert!(obligations(&small) >= 20, "{name}: {} obligations at {SMALL} lines", obligations(&small));
        for (what, s, l) in [
            ("obligations", obligations(&small), obligations(&large)),
            ("queries handed to z3", small.solver_calls, large.solver_calls),
            ("hypotheses sent to z3", small.solver_hypotheses, large.solver_hypotheses),
            ("facts looked at", small.facts_examined, large.facts_examined),
            ("linear states looked at", small.linear_examined, large.linear_examined),
        ] {
            // Four times the lines, at most five times the work (the fixed part of a plan
            // makes the ratio a little under four for linear growth; quadratic would be 16).
            assert!(l <= 5 * s.max(1), "{name}: {what} grew from {s} at {SMALL} lines to {l} at {LARGE}: not linear");
        }
        // A shape with an `if` per line over linear values has joins for the guard to see (a
        // join that looked at every linear value in scope would make these grow sixteenfold).
        if name == "session_branches" {
            assert!(small.linear_examined >= SMALL as u64, "{name}: {} linear states looked at", small.linear_examined);
        }
        // A shape only the solver proves has queries for the guard to see: one per line, each
        // with the few facts nearest its goal, though every line's facts connect to all before it
        // (a query that carried every connected fact would send sixteen times the hypotheses).
        if name == "disjunctive" {
            assert!(small.solver_calls >= SMALL as u64 / 2, "{name}: {} queries to z3", small.solver_calls);
        }
        // And each query stays small: its facts are those near its goal, not the whole plan.
        if let Some(per_query) = large.solver_hypotheses.checked_div(large.solver_calls) {
            assert!(per_query <= 16, "{name}: {per_query} hypotheses per query at {LARGE} lines");
        }
    }
}
