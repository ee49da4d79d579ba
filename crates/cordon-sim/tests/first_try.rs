//! The first-try measurement of issue 12: requests written as a model would write them from the
//! prompt alone (`cordon ask`'s prompt for the environment: the language reference and the
//! policy), each on the first try and never fixed afterwards, in `tests/first_try/ENV/` with the
//! request on the first line. Each is checked and run under the shipped policy on the built-in
//! data, and what it comes to (ran, blocked by a label, rejected by the checker) must be what
//! `expected.txt` records, with a one-line cause for each that did not run. The shares are
//! printed (`cargo test -p cordon-sim --test first_try -- --nocapture`) and must be the ones
//! the table of `docs/guide/agents.md` quotes, so neither can drift.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{Recorder, Source};
use cordon_runtime::{Config, Sessions};
use cordon_sim::env;

/// What one plan came to, as `expected.txt` writes it.
fn outcome(world: &str, plan: &str) -> String {
    let mut environment = env(world).unwrap();
    let source = Source::new(environment.policy(), plan);
    let program = match source.check_with(None) {
        Ok(program) => program,
        Err(codes) => return format!("rejected {}", codes.first().map_or("?", String::as_str)),
    };
    let config = Config { user: environment.principal().unwrap_or_default().to_string(), ..Config::default() };
    let mut host = Recorder::around(environment.as_mut());
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut host);
    match report.result {
        Ok(_) => "ran".into(),
        Err(e) if e.kind.code().as_str() == "label-flow" => {
            let tool = e.message.split('`').nth(1).unwrap_or("?");
            format!("blocked {tool}")
        }
        Err(e) => format!("failed {}", e.kind.code().as_str()),
    }
}

/// `expected.txt`: each plan's outcome and, for one that did not run, why.
fn expected(dir: &Path) -> BTreeMap<String, (String, Option<String>)> {
    let text = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    let mut lines = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (name, rest) = line.split_once(": ").unwrap_or_else(|| panic!("not `NAME: OUTCOME`: {line}"));
        let (outcome, why) = match rest.split_once("; ") {
            Some((o, w)) => (o.to_string(), Some(w.to_string())),
            None => (rest.to_string(), None),
        };
        assert!(lines.insert(name.to_string(), (outcome, why)).is_none(), "{name} is listed twice");
    }
    lines
}

/// Checks every plan of `tests/first_try/ENV/` against its recorded outcome; returns the row of
/// the table in `docs/guide/agents.md`: `| ENV | plans | checked on the first try | ran to the end |`.
fn measure(world: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/first_try").join(world);
    let expected = expected(&dir);
    let mut plans: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cord"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    plans.sort();
    let names: Vec<&String> = plans.iter().map(|(n, _)| n).collect();
    assert_eq!(names, expected.keys().collect::<Vec<_>>(), "{world}: expected.txt lists exactly the plans");
    assert!(plans.len() >= 20, "{world}: only {} requests", plans.len());
    let (mut checked, mut ran) = (0, 0);
    for (name, plan) in &plans {
        assert!(plan.starts_with("// request: "), "{world}/{name}: the request is the first line");
        let got = outcome(world, plan);
        let (want, why) = &expected[name];
        assert_eq!(&got, want, "{world}/{name}");
        assert_eq!(why.is_some(), got != "ran", "{world}/{name}: a cause for each plan that did not run, only those");
        checked += usize::from(!got.starts_with("rejected"));
        ran += usize::from(got == "ran");
        if let Some(why) = why {
            println!("{world}/{name}: {got}: {why}");
        }
    }
    let share = |n: usize| format!("{n} ({}%)", n * 100 / plans.len());
    format!("| {world} | {} | {} | {} |", plans.len(), share(checked), share(ran))
}

#[test]
fn first_try_requests_come_to_what_is_recorded_and_the_guide_quotes_the_shares() {
    let guide = include_str!("../../../docs/guide/agents.md");
    for world in ["chat", "mail"] {
        let row = measure(world);
        println!("{row}");
        assert!(guide.contains(&row), "the table of docs/guide/agents.md has no row `{row}`");
    }
}
