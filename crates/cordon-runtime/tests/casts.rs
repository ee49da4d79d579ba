//! A cast converts to the number type its target names, however it is named: a builtin, an alias
//! the policy or the plan declares (as the checker resolved it), or an alias a fill declares
//! itself, which the program's declarations do not hold.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Source, checked_with, ending, no_tools, run};
use cordon_label::Label;
use cordon_runtime::{Config, Run, Sessions, Step};

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
