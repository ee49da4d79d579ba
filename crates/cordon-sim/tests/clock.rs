//! The clock environment: its policy checks and lints clean, it joins a world of any
//! principal, and a plan that reads it gets the same instant every run.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_runtime::{Config, Program, Sessions};
use cordon_sim::{Clock, env, hosts};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check, lint};

#[test]
fn the_policy_checks_and_relies_on_no_default_label() {
    let mut sources = SourceMap::new();
    let policy = sources.add(cordon_sim::clock::POLICY_PATH, cordon_sim::clock::POLICY);
    let outcome = check(&sources, &[policy], None, &CheckOptions::default());
    assert!(outcome.diagnostics.is_empty(), "{:#?}", outcome.diagnostics);
    assert!(lint(&sources, &[policy]).is_empty(), "{:#?}", lint(&sources, &[policy]));
}

#[test]
fn the_clock_is_fixed_and_joins_any_world() {
    let clock = env("clock").unwrap();
    assert_eq!((clock.name(), clock.capability(), clock.principal()), ("clock", "Clock", None));
    assert_eq!(Clock::fixed("2026-12-01T10:00:00+01:00").unwrap().now(), cordon_sim::clock::NOW);
    assert!(Clock::fixed("2026-12-01T10:00:00").is_err(), "an instant needs its offset");
    for names in [["clock", "shop"], ["shop", "clock"]] {
        assert_eq!(hosts(&names).unwrap().principal(), Some("ann"), "{names:?}");
    }
    assert!(hosts(&["clock", "clock"]).is_err());
}

/// Runs `plan` in a world of `names` (their policies composed): the answer, or the error.
fn answer(names: &[&str], plan: &str) -> String {
    let mut world = hosts(names).unwrap();
    let mut sources = SourceMap::new();
    let policies: Vec<_> = world.policies().into_iter().map(|(name, text)| sources.add(name, text)).collect();
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &policies, Some(plan), &CheckOptions::default());
    let Some(checked) = &outcome.program else { return format!("rejected: {:?}", outcome.diagnostics) };
    let program = Program::new(checked).unwrap();
    let config = Config { user: world.principal().unwrap_or_default().to_string(), ..Config::default() };
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut world);
    match report.result {
        Ok(v) => v.value.to_string(),
        Err(e) => format!("{}: {}", e.kind.code().as_str(), e.message),
    }
}

#[test]
fn a_plan_learns_the_time_only_from_the_clock_and_it_is_the_same_every_run() {
    let plan = "let t = clock.now() + hours(1); f\"{to_string(t)}\"";
    let first = answer(&["clock"], plan);
    assert_eq!(first, r#""2026-12-01T10:00:00Z""#);
    assert_eq!(answer(&["clock"], plan), first);
    // With the shop, the composed entry hands back the answer alone.
    let with_shop = "let t = clock.now(); let found = shop.search(\"tea\"); f\"{len(found)} at {to_string(t)}\"";
    assert!(answer(&["shop", "clock"], with_shop).ends_with(r#" at 2026-12-01T09:00:00Z""#));
    // Without the clock in the world, there is no `clock` to ask.
    assert!(answer(&["shop"], with_shop).starts_with("rejected"), "{}", answer(&["shop"], with_shop));
}
