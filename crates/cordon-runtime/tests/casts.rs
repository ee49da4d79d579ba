//! A cast converts to the number type its target names, however it is named: a builtin, an alias
//! the policy or the plan declares (as the checker resolved it), or an alias a fill declares
//! itself, which the program's declarations do not hold. A saved run, compiled again from its
//! sources and the record of what each cast converts to, casts as the run did.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Source, checked_with, ending, no_tools, run};
use cordon_label::Label;
use cordon_runtime::{Config, Program, Run, RunError, Sessions, Step};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check, check_fill};
use serde_json::json;

const POLICY: &str = "type Money = Decimal\n";

#[test]
fn a_cast_to_an_alias_converts_to_what_the_alias_stands_for() {
    let cases = [
        ("to_string((3 as Money) * 2d)", "\"6\""),
        ("type Half = Float\n(1 as Half) / 2.0", "0.5"),
        ("type Cash = Money\nto_string(7 as Cash)", "\"7\""),
    ];
    for (plan, expected) in cases {
        assert_eq!(ending(&run(&checked_with(POLICY, plan), &mut no_tools())), expected, "{plan}");
    }
}

/// How a run of `plan` against `POLICY` ends once its hole is filled with `fill`, unchecked.
fn filled(plan: &str, fill: &str) -> String {
    let mut source = Source::new(Some(POLICY), plan);
    let program = source.checked();
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let Ok(Step::Hole(_)) = run.proceed() else { panic!("the run stops at the hole") };
    let fill = source.add_fill(fill);
    match run.fill_unchecked(&source.sources, fill, &[], &Label::bottom()) {
        Ok(Step::Done(v)) => v.value.to_string(),
        Ok(other) => panic!("the fill ends the run: {other:?}"),
        Err(e) => e.message,
    }
}

#[test]
fn a_fill_casts_to_its_own_aliases_and_the_programs() {
    let plan = r#"let x: Float = agent[Float]("halve one"); x"#;
    assert_eq!(filled(plan, "type Half = Float\n(1 as Half) / 2.0"), "0.5");
    assert_eq!(filled(plan, "type Money = Float\n(1 as Money) / 2.0"), "0.5", "the fill's own name first");
    let plan = r#"let x: Decimal = agent[Decimal]("one"); x"#;
    assert_eq!(filled(plan, "1 as Money"), "1d");
    assert_eq!(filled(plan, "1 as Nope"), "the fill does not compile: the type `Nope` is not defined");
}

/// A policy with a tool to stop at: a run is saved at its call.
const LOG: &str = "type Money = Decimal
capability Log {
  tool note(text: String) -> String
}
entry(log: Log) -> String
";

/// Saves `run`, which waits at a tool call, loads it, and performs the call (answering "ok"):
/// how the loaded run ends.
fn saved_and_resumed(run: &Run, sources: &SourceMap) -> Result<String, RunError> {
    let bytes = run.save(sources, b"key");
    let (mut run, _) = Run::load(&bytes, b"key").unwrap();
    run.commit()?;
    match run.resume(Ok(json!("ok")))? {
        Step::Done(v) => Ok(v.value.to_string()),
        other => panic!("the run ends after the call: {other:?}"),
    }
}

/// `run`'s next step, which must be a tool call.
fn at_call(step: Result<Step, RunError>) {
    let Ok(Step::Effect(_)) = step else { panic!("the run stops at the call: {step:?}") };
}

#[test]
fn a_saved_run_casts_as_the_checker_resolved_when_it_was_made() {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", LOG);
    let plan = "type Half = Float
let said = log.note(\"start\");
let x: String = agent[String](\"say more\");
said + to_string(3 as Money) + to_string((1 as Half) / 2.0) + x";
    let plan = sources.add("plan.cord", plan);
    let checked = check(&sources, &[policy], Some(plan), &CheckOptions::default()).program.unwrap();
    let program = Program::new(&checked).unwrap();
    // Saved at the plan's call, the plan's casts compile again from the saved record.
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    at_call(run.proceed());
    let bytes = run.save(&sources, b"key");
    let (mut loaded, mut sources) = Run::load(&bytes, b"key").unwrap();
    loaded.commit().unwrap();
    let Ok(Step::Hole(_)) = loaded.resume(Ok(json!("ok"))) else { panic!("the run stops at the hole") };
    // Saved at the call of a checked fill, the fill's casts (to its own alias and the policy's)
    // compile again from the fill's record.
    let fill = sources
        .add("fill.cord", "type Cents = Int\nlet n = log.note(\"more\");\nn + to_string((250 as Cents) as Money)");
    let outcome = check_fill(&sources, &checked, 0, fill, &CheckOptions::default());
    let fill = outcome.fill.unwrap_or_else(|| panic!("the fill checks: {:?}", outcome.diagnostics));
    at_call(loaded.fill(&fill, &Label::bottom()));
    assert_eq!(saved_and_resumed(&loaded, &sources).unwrap(), "\"ok30.5ok250\"");
}

/// A fill no check resolved names its own type first; resolved as written, its casts are kept
/// in its record as the checker's would be, and a saved run compiles them again from there. A
/// refined target (which only code the checker rejects has) is saved with its predicate, and
/// fails at run time after loading as it does before: `as` converts numbers only.
#[test]
fn a_saved_run_casts_as_it_did_in_code_no_check_resolved() {
    let mut source = Source::new(Some(LOG), "let x: Float = agent[Float](\"halve one\"); to_string(x)");
    let program = source.checked();
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let Ok(Step::Hole(_)) = run.proceed() else { panic!("the run stops at the hole") };
    let fill = source.add_fill("type Money = Float\nlet n = log.note(\"halving\");\n(1 as Money) / 2.0");
    at_call(run.fill_unchecked(&source.sources, fill, &[], &Label::bottom()));
    assert_eq!(saved_and_resumed(&run, &source.sources).unwrap(), "\"0.5\"");
    let refined = "let n = log.note(\"hi\");\nto_string(1 as {v: Int | v > 0})";
    let source = Source::new(Some(LOG), refined);
    let unsaved = {
        let mut run = Run::start(&source.unchecked(), &Sessions::default(), &Config::default()).unwrap();
        at_call(run.proceed());
        run.commit().and_then(|()| run.resume(Ok(json!("ok")))).map(|_| ()).unwrap_err()
    };
    let mut run = Run::start(&source.unchecked(), &Sessions::default(), &Config::default()).unwrap();
    at_call(run.proceed());
    let saved = saved_and_resumed(&run, &source.sources).unwrap_err();
    assert_eq!((saved.kind.code().as_str(), &saved.message), ("runtime-type-error", &unsaved.message));
}
