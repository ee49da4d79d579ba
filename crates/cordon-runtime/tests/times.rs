//! Dates, instants and durations at run time: what the builtins compute, how tools send and
//! receive them (ISO 8601 strings), that the refinements over them are re-checked on the real
//! values, that the clock is only a tool (a host answers it, here with a fixed time), and that
//! every result carries the labels of its operands.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recorder, Source, config, ending, no_tools, run, small_limits};
use cordon_runtime::{Json, Sessions};
use serde_json::json;

fn value_of(plan: &str) -> String {
    ending(&run(&Source::new(None, plan).checked(), &mut no_tools()))
}

#[test]
fn builtins_compute_exactly_or_stop() {
    let rows = [
        (r#"parse_datetime("2026-12-01T10:30:00+01:00").map(|t| to_string(t))"#, r#"Some("2026-12-01T09:30:00Z")"#),
        (r#"parse_datetime("2026-12-01T10:30:00").is_none()"#, "true"),
        (r#"parse_date("2026-02-29").is_none() && parse_date("2028-02-29").is_some()"#, "true"),
        (
            r#"parse_datetime("2026-12-01T23:30:00Z").map(|t| to_string(t + hours(1)))"#,
            r#"Some("2026-12-02T00:30:00Z")"#,
        ),
        (
            r#"match (parse_datetime("2026-12-01T09:00:00Z"), parse_datetime("2026-12-03T10:30:00Z")) { (Some(a), Some(b)) => to_string(b - a), _ => "" }"#,
            r#""PT49H30M""#,
        ),
        ("to_string(minutes(90) - hours(2))", r#""-PT30M""#),
        ("to_string(hours(1) + minutes(1))", r#""PT1H1M""#),
        ("days(1) == hours(24) && minutes(60) == hours(1)", "true"),
        ("[hours(2), minutes(5)].sort()[0] < hours(1)", "true"),
        (r#"parse_date("2028-02-28").map(|d| to_string(add_days(d, 1)))"#, r#"Some("2028-02-29")"#),
        (r#"parse_date("2026-12-01").map(|d| days_between(add_days(d, -40), d))"#, "Some(40)"),
        (r#"parse_date("9999-12-31").map(|d| add_days(d, 1))"#, "arithmetic-error"),
        // Out of range: an error, never a wrapped or saturated value.
        ("seconds(9223372036854775807) + seconds(1)", "arithmetic-error"),
        ("days(9223372036854775807)", "arithmetic-error"),
        (r#"parse_datetime("9999-12-30T00:00:00Z").map(|t| t + days(2))"#, "arithmetic-error"),
    ];
    let mut wrong = Vec::new();
    for (plan, want) in rows {
        let got = value_of(plan);
        if got != want {
            wrong.push(format!("{plan}\n    expected {want}\n    got      {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

const POLICY: &str = r#"
capability Clock {
  tool now() -> DateTime @label(pc = untrusted(), returns = public())
}
capability Calendar {
  tool next() -> (DateTime, Duration, Date) @label(pc = untrusted(), returns = public())
  tool secret_time() -> DateTime @label(pc = untrusted())
  tool book(now: DateTime, start: {s: DateTime | s > now}, length: {d: Duration | d <= hours(8)}) -> ()
    @label(pc = untrusted(), now = public(), start = public(), length = public())
}
entry(clock: Clock, cal: Calendar) -> String
"#;

/// The fixed time the test clock gives.
const NOW: &str = "2026-12-01T09:30:00Z";

fn host(next: Json) -> Recorder<'static> {
    Recorder::new(move |e| match &*e.tool {
        "now" | "secret_time" => Ok(json!(NOW)),
        "next" => Ok(next.clone()),
        _ => Ok(Json::Null),
    })
}

fn ends(program: &cordon_runtime::Program, next: Json) -> (String, Vec<String>) {
    let mut h = host(next);
    let report = cordon_engine::run(program, &Sessions::default(), &config(small_limits()), &mut h);
    let end = match &report.result {
        Ok(v) => v.value.to_string(),
        Err(e) => format!("{}: {}", e.kind.code().as_str(), e.message),
    };
    (end, h.calls_of("book"))
}

#[test]
fn tools_send_and_receive_iso_8601_strings() {
    let next = json!(["2026-12-02T08:00:00+01:00", "PT45M", "2026-12-02"]);
    let plan = "let (t, d, day) = cal.next(); let now = clock.now(); f\"{to_string(t)} {to_string(d)} {to_string(day)} {to_string(now)}\"";
    let program = Source::new(Some(POLICY), plan).checked();
    assert_eq!(ends(&program, next).0, r#""2026-12-02T07:00:00Z PT45M 2026-12-02 2026-12-01T09:30:00Z""#);
    for bad in [
        json!(["2026-12-02T08:00:00", "PT45M", "2026-12-02"]),
        json!([1764667200, "PT45M", "2026-12-02"]),
        json!(["2026-12-02T08:00:00Z", "45 minutes", "2026-12-02"]),
        json!(["2026-12-02T08:00:00Z", "PT45M", "02/12/2026"]),
    ] {
        let (end, _) = ends(&program, bad.clone());
        assert!(end.starts_with("tool-contract"), "{bad}: {end}");
    }
    let effect = cordon_runtime::value::Value::time(cordon_runtime::time::parse_datetime(NOW).unwrap()).to_json();
    assert_eq!(effect, json!(NOW));
}

#[test]
fn refinements_over_times_are_rechecked_on_the_real_values() {
    let ok = "let now = clock.now(); cal.book(now, now + minutes(1), hours(8)); \"booked\"";
    let (end, calls) = ends(&Source::new(Some(POLICY), ok).checked(), Json::Null);
    assert_eq!(end, r#""booked""#);
    assert_eq!(calls, vec![format!("{NOW}, 2026-12-01T09:31:00Z, PT8H")]);
    // A start that is not after `now`, or a length over eight hours: refused by the checker,
    // and stopped by the boundary when the checker never saw the plan.
    for bad in [
        "let now = clock.now(); cal.book(now, now, hours(1)); \"booked\"",
        "let now = clock.now(); cal.book(now, now + minutes(1), hours(8) + seconds(1)); \"booked\"",
    ] {
        assert!(Source::new(Some(POLICY), bad).check_with(None).is_err(), "{bad}");
        let (end, calls) = ends(&Source::new(Some(POLICY), bad).unchecked(), Json::Null);
        assert!(end.starts_with("recheck-failed"), "{bad}: {end}");
        assert!(calls.is_empty());
    }
}

#[test]
fn results_carry_the_labels_of_their_operands() {
    let plan =
        |e: &str| format!("let now = clock.now(); let s = {e}; if s > now {{ cal.book(now, s, hours(1)); }}; \"done\"");
    let run_plan = |e: &str| ends(&Source::new(Some(POLICY), &plan(e)).checked(), Json::Null).0;
    assert_eq!(run_plan("now + days(1)"), r#""done""#);
    for secret in [
        "cal.secret_time() + days(1)",
        "now + (cal.secret_time() - now) + days(1)",
        "parse_datetime(to_string(cal.secret_time())).unwrap_or(now) + days(1)",
        "[cal.secret_time(), now].sort()[1] + days(1)",
    ] {
        assert!(run_plan(secret).starts_with("label-flow"), "{secret}: {}", run_plan(secret));
    }
}

#[test]
fn a_run_holding_decimals_and_times_is_saved_and_loaded_unchanged() {
    use cordon_runtime::{Run, Step};
    let plan = "let d = 12.50d * 2d; let h = hours(1); let t = clock.now(); f\"{d} {to_string(t + h)} {to_string(h)}\"";
    let source = Source::new(Some(POLICY), plan);
    let program = source.checked();
    let mut run = Run::start(&program, &Sessions::default(), &config(small_limits())).unwrap();
    let Ok(Step::Effect(_)) = run.proceed() else { panic!("the clock is asked first") };
    let bytes = run.save(&source.sources, b"key");
    drop(run);
    let (mut run, _) = Run::load(&bytes, b"key").unwrap();
    run.commit().unwrap();
    let Ok(Step::Done(v)) = run.resume(Ok(json!(NOW))) else { panic!("the plan ends after the clock") };
    assert_eq!(v.value.to_string(), r#""25.00 2026-12-01T10:30:00Z PT1H""#);
}
