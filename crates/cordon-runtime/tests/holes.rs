//! Holes at run time: a run stops at `agent[T](..)` with the hole's task, arguments and scope;
//! the fill runs in that scope, with the program-counter label raised by what the model was
//! shown, and its result carries it. Fills here skip the checker (`fill_unchecked`): these
//! tests are about what the runtime does with a fill, whatever it is.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recorder, Source};
use cordon_label::{DcLabel, Label};
use cordon_runtime::{Config, Json, Run, Sessions, Step};

const POLICY: &str = r#"
capability Lab {
  tool post(text: String) @label(text = endorsed(user()))
  tool note(text: String) @label(text = untrusted())
  tool secret() -> Int @label(returns = secret(user()))
}
entry(lab: Lab) -> String
"#;

/// Runs `plan` to its first hole and fills it with `fill` shown a prompt labelled `label`;
/// performs tool calls with `host`; returns how the run ended.
fn run_with_fill(plan: &str, fill: &str, label: &Label, host: &mut Recorder<'_>) -> Result<String, String> {
    let mut source = Source::new(Some(POLICY), plan);
    let program = source.checked();
    let config = Config { user: "alice".into(), ..Config::default() };
    let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
    let mut step = run.proceed();
    let fill = source.add_fill(fill);
    loop {
        match step {
            // Back at the hole after a refusal: this host does not ask again.
            Ok(Step::Hole(h)) if h.again.is_some() => {
                let refusal = h.again.map(|again| again.error).unwrap();
                return Err(run.end_at_hole(refusal).kind.code().as_str().to_string());
            }
            Ok(Step::Hole(h)) => {
                let names: Vec<String> = h.args.iter().enumerate().map(|(i, _)| format!("arg{}", i + 1)).collect();
                step = run.fill_unchecked(&source.sources, fill, &names, label);
            }
            Ok(Step::Effect(e)) => {
                step = run.commit().and_then(|()| {
                    run.resume(cordon_runtime::ToolHost::perform(host, &cordon_runtime::ToolCall::new(&e)))
                });
            }
            Ok(Step::Done(v)) => return Ok(v.value.to_string()),
            Err(e) => return Err(e.kind.code().as_str().to_string()),
        }
    }
}

fn untrusted() -> Label {
    Label::new(DcLabel::untrusted(), cordon_label::Source { what: "the prompt".into(), span: Default::default() })
}

#[test]
fn a_fill_sees_the_bindings_in_scope_and_its_arguments() {
    let plan = r#"let base = 40; let n: Int = agent[Int]("add the argument to base", 2); to_string(n)"#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    assert_eq!(run_with_fill(plan, "base + arg1", &Label::bottom(), &mut host), Ok("\"42\"".into()));
}

#[test]
fn a_hole_in_a_closure_sees_what_the_closure_sees() {
    let plan = r#"let k = 3; let f = |x: Int| -> Int { agent[Int]("multiply x by k") }; to_string(f(5))"#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    assert_eq!(run_with_fill(plan, "x * k", &Label::bottom(), &mut host), Ok("\"15\"".into()));
}

#[test]
fn a_fill_from_a_trusted_prompt_may_post() {
    let plan = r#"let done: () = agent[()]("post a greeting"); "ok""#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    assert_eq!(run_with_fill(plan, r#"lab.post("hello")"#, &Label::bottom(), &mut host), Ok("\"ok\"".into()));
    assert_eq!(host.seen(), [r#"post("hello")"#]);
}

#[test]
fn a_fill_written_after_reading_untrusted_text_cannot_act_for_the_user() {
    // The code type-checks; the model that wrote it was shown untrusted text, so the fill runs
    // with untrusted integrity and the sink that needs the user's word refuses it.
    let plan = r#"let done: () = agent[()]("post a greeting"); "ok""#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    assert_eq!(run_with_fill(plan, r#"lab.post("hello")"#, &untrusted(), &mut host), Err("label-flow".into()));
    assert!(host.seen().is_empty());
    // A sink without a requirement still works from the same fill.
    let mut host = Recorder::new(|_| Ok(Json::Null));
    assert_eq!(run_with_fill(plan, r#"lab.note("hello")"#, &untrusted(), &mut host), Ok("\"ok\"".into()));
}

#[test]
fn a_fills_result_carries_the_prompts_label_into_the_caller() {
    // The caller posts what the untrusted fill returned: blocked, although the caller itself
    // read nothing untrusted.
    let plan = r#"let text: String = agent[String]("write a greeting"); lab.post(text); "ok""#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    assert_eq!(run_with_fill(plan, r#""hello""#, &untrusted(), &mut host), Err("label-flow".into()));
    assert!(host.seen().is_empty());
}

#[test]
fn the_callers_label_is_restored_after_the_fill() {
    let plan = r#"let text: String = agent[String]("write a greeting"); lab.post("from the plan"); text"#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    assert_eq!(run_with_fill(plan, r#""hello""#, &untrusted(), &mut host), Ok("\"hello\"".into()));
    assert_eq!(host.seen(), [r#"post("from the plan")"#]);
}

#[test]
fn a_hole_without_a_model_ends_the_run_cleanly() {
    let source = Source::new(Some(POLICY), r#"let n: Int = agent[Int]("count"); to_string(n)"#);
    let program = source.checked();
    let mut host = Recorder::new(|_| Ok(Json::Null));
    let report = cordon_engine::run(&program, &Sessions::default(), &Config::default(), &mut host);
    assert_eq!(report.result.unwrap_err().kind.code().as_str(), "hole-unfilled");
}

#[test]
fn a_checked_fill_runs_in_its_hole() {
    use cordon_types::{CheckOptions, check, check_fill};
    let mut sources = cordon_syntax::SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let plan = sources.add("plan.cord", r#"let base = 40; let n: Int = agent[Int]("add 2 to base"); to_string(n)"#);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let checked = outcome.program.expect("accepted");
    let program = cordon_runtime::Program::new(&checked).unwrap();
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let Ok(Step::Hole(hole)) = run.proceed() else { panic!("the run stops at the hole") };
    let site = checked.holes().iter().position(|h| h.span == hole.span).expect("the checker knows the hole");
    let rejected = sources.add("fill1.cord", r#""forty-two""#);
    assert!(!check_fill(&sources, &checked, site, rejected, &CheckOptions::default()).accepted());
    let fill = sources.add("fill2.cord", "base + 2");
    let outcome = check_fill(&sources, &checked, site, fill, &CheckOptions::default());
    let fill = outcome.fill.expect("the fill checks");
    let Ok(Step::Done(v)) = run.fill(&fill, &Label::bottom()) else { panic!("the run ends") };
    assert_eq!(v.value.to_string(), "\"42\"");
}

/// Whatever checks as a fill runs as one: a fill may declare constants and functions, as a
/// plan may, and uses them; a run saved inside such a fill goes on with them after loading.
#[test]
fn a_fill_that_declares_constants_and_functions_runs() {
    use cordon_types::{CheckOptions, check, check_fill};
    let mut sources = cordon_syntax::SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let plan = r#"let n: Int = agent[Int]("compute"); let m: Int = agent[Int]("again"); to_string(n + m)"#;
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let checked = outcome.program.expect("accepted");
    let program = cordon_runtime::Program::new(&checked).unwrap();
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let text = "const A: Int = 40\nconst B: Int = A + 1\nfn twice(x: Int) -> Int { x * 2 }\ntwice(A) - B - 39";
    let check_at = |sources: &mut cordon_syntax::SourceMap, hole: &cordon_runtime::HoleRequest, name: &str| {
        let site = checked.holes().iter().position(|h| h.span == hole.span).expect("the checker knows the hole");
        let file = sources.add(name, text);
        let outcome = check_fill(sources, &checked, site, file, &CheckOptions::default());
        assert!(outcome.accepted(), "{:?}", outcome.diagnostics);
        outcome.fill.expect("the fill checks")
    };
    // The first fill gives 0 (80 - 41 - 39); the run then waits at the second hole, is saved
    // there and loaded, and the same fill runs again in the loaded run.
    let Ok(Step::Hole(hole)) = run.proceed() else { panic!("the run stops at the first hole") };
    let first = check_at(&mut sources, &hole, "fill1.cord");
    let Ok(Step::Hole(hole)) = run.fill(&first, &Label::bottom()) else { panic!("at the second hole") };
    let saved = run.save(&sources, b"key");
    // A fill's record keeps what the checker resolved as the fields it always had (the saved
    // form's version did not change when they became one value).
    let body: serde_json::Value = serde_json::from_slice(&saved[32..]).unwrap();
    let record = body["fills"][0].as_object().unwrap();
    let mut keys: Vec<&str> = record.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["arg_names", "calls", "casts", "file", "site"]);
    let (mut run, mut sources) = Run::load(&saved, b"key").unwrap();
    let second = check_at(&mut sources, &hole, "fill2.cord");
    let Ok(Step::Done(v)) = run.fill(&second, &Label::bottom()) else { panic!("the run ends") };
    assert_eq!(v.value.to_string(), "\"0\"");
}

/// Runs `plan` to its first hole and fills it with `fill`, shown a prompt labelled `label`,
/// performing every call with `host`: the step after the fill's last call or refusal.
fn first_fill(
    plan: &str,
    fill: &str,
    label: &Label,
    host: &mut Recorder<'_>,
) -> (Run, Source, Result<Step, cordon_runtime::RunError>) {
    let mut source = Source::new(Some(POLICY), plan);
    let program = source.checked();
    let config = Config { user: "alice".into(), ..Config::default() };
    let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
    let Ok(Step::Hole(hole)) = run.proceed() else { panic!("the run stops at the hole") };
    let fill = source.add_fill(fill);
    let names: Vec<String> = hole.args.iter().enumerate().map(|(i, _)| format!("arg{}", i + 1)).collect();
    let mut step = run.fill_unchecked(&source.sources, fill, &names, label);
    while let Ok(Step::Effect(e)) = step {
        step = run
            .commit()
            .and_then(|()| run.resume(cordon_runtime::ToolHost::perform(host, &cordon_runtime::ToolCall::new(&e))));
    }
    (run, source, step)
}

#[test]
fn a_refused_fill_that_performed_nothing_sends_the_run_back_to_its_hole() {
    let plan = r#"let secret = "s3cret"; let done: () = agent[()]("post a greeting"); "ok""#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    let (mut run, mut source, step) = first_fill(plan, r#"lab.post("hello " + secret)"#, &untrusted(), &mut host);
    let Ok(Step::Hole(hole)) = step else { panic!("back at the hole: {step:?}") };
    let again = hole.again.as_ref().expect("says why");
    assert_eq!(again.error.kind.code().as_str(), "label-flow");
    assert_eq!(source.sources.file(again.fill).text, r#"lab.post("hello " + secret)"#);
    // What the refusal depends on: what chose the call, here the untrusted prompt the fill was
    // written from.
    assert!(!again.label.dc().flows_to(&DcLabel::endorsed("alice")), "{}", again.label);
    assert!(host.seen().is_empty(), "nothing performed");
    assert!(run.waiting_hole().is_some_and(|h| h.span == hole.span), "the run waits at the same hole");
    // A second fill goes on from the hole as the first found it.
    let fill = source.add_fill(r#"lab.note("hello")"#);
    let mut step = run.fill_unchecked(&source.sources, fill, &[], &untrusted());
    while let Ok(Step::Effect(e)) = step {
        step = run.commit().and_then(|()| {
            run.resume(cordon_runtime::ToolHost::perform(&mut host, &cordon_runtime::ToolCall::new(&e)))
        });
    }
    assert!(matches!(&step, Ok(Step::Done(v)) if v.value.to_string() == "\"ok\""), "{step:?}");
    assert_eq!(host.seen(), [r#"note("hello")"#]);
}

#[test]
fn a_refused_fill_that_performed_an_effect_ends_the_run() {
    let plan = r#"let done: () = agent[()]("post a greeting"); "ok""#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    let (_, _, step) = first_fill(plan, r#"lab.note("first"); lab.post("hello")"#, &untrusted(), &mut host);
    assert!(matches!(&step, Err(e) if e.kind.code().as_str() == "label-flow"), "{step:?}");
    assert_eq!(host.seen(), [r#"note("first")"#]);
}

#[test]
fn a_refusal_after_the_fill_returned_ends_the_run() {
    // The plan's own call, after the fill returned, is the plan's: there is no fill to go back
    // to, even though nothing was performed since the fill started.
    let plan = r#"let text: String = agent[String]("write a greeting"); lab.post(text); "ok""#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    let (_, _, step) = first_fill(plan, r#""hello""#, &untrusted(), &mut host);
    assert!(matches!(&step, Err(e) if e.kind.code().as_str() == "label-flow"), "{step:?}");
    // The same with a hole reached at the same depth again: both fills have returned.
    let plan =
        r#"let words = [1, 2].map(|i: Int| -> String { agent[String]("a word") }); lab.post(words.join(" ")); "ok""#;
    let mut source = Source::new(Some(POLICY), plan);
    let program = source.checked();
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let fill = source.add_fill(r#""w""#);
    let mut step = run.proceed();
    let mut filled = 0;
    while let Ok(Step::Hole(hole)) = step {
        assert!(hole.again.is_none(), "went back to a fill that returned");
        filled += 1;
        step = run.fill_unchecked(&source.sources, fill, &[], &untrusted());
    }
    assert_eq!(filled, 2);
    assert!(matches!(&step, Err(e) if e.kind.code().as_str() == "label-flow"), "{step:?}");
}

#[test]
fn other_failures_in_a_fill_end_the_run() {
    // Only the labels' refusals send a run back: an overflow is the fill's own doing.
    let plan = r#"let n: Int = agent[Int]("a number"); to_string(n)"#;
    let mut host = Recorder::new(|_| Ok(Json::Null));
    let (_, _, step) = first_fill(plan, "9223372036854775807 + 1", &Label::bottom(), &mut host);
    assert!(matches!(&step, Err(e) if e.kind.code().as_str() == "arithmetic-error"), "{step:?}");
}

#[test]
fn a_saved_run_keeps_the_fill_it_may_go_back_from() {
    // A stage holds the fill's call (its label checks failed, to be put to a person); the run
    // is saved, loaded elsewhere, and the person says no: the run goes back to the hole.
    let mut source = Source::new(Some(POLICY), r#"let done: () = agent[()]("post a greeting"); "ok""#);
    let program = source.checked();
    let file = source.add_fill(r#"lab.post("hello")"#);
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    run.defer_label_flows(true);
    let Ok(Step::Hole(_)) = run.proceed() else { panic!("the run stops at the hole") };
    let Ok(Step::Effect(effect)) = run.fill_unchecked(&source.sources, file, &[], &untrusted()) else {
        panic!("proposed")
    };
    assert!(!effect.flows.is_empty(), "its label checks failed");
    let bytes = run.save(&source.sources, b"key");
    drop(run);
    let (mut run, _) = Run::load(&bytes, b"key").unwrap();
    let refusal = run.unapproved_flows().expect("no one approved");
    let Ok(Step::Hole(hole)) = run.refuse(refusal) else { panic!("back at the hole") };
    assert_eq!(hole.again.map(|again| again.fill), Some(file));
}

#[test]
fn that_a_refused_call_was_reached_depends_on_the_fills_decisions_before_it() {
    // A branch on alice's secret before the refused call: the call is reached whichever way it
    // goes here, but a branch that could fail or loop would make reaching it tell the secret.
    // So the refusal depends on the secret, and a model not cleared for it may not be told.
    let plan = r#"let n = lab.secret(); let done: () = agent[()]("post a greeting", n); "ok""#;
    let refusal = |fill: &str| {
        let mut host = Recorder::new(|_| Ok(serde_json::json!(7)));
        let mut source = Source::new(Some(POLICY), plan);
        let program = source.checked();
        let config = Config { user: "alice".into(), ..Config::default() };
        let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
        let mut step = run.proceed();
        while let Ok(Step::Effect(e)) = step {
            step = run.commit().and_then(|()| {
                run.resume(cordon_runtime::ToolHost::perform(&mut host, &cordon_runtime::ToolCall::new(&e)))
            });
        }
        let Ok(Step::Hole(_)) = step else { panic!("the run stops at the hole: {step:?}") };
        let fill = source.add_fill(fill);
        let Ok(Step::Hole(hole)) = run.fill_unchecked(&source.sources, fill, &["arg1".into()], &untrusted()) else {
            panic!("back at the hole")
        };
        hole.again.unwrap().label
    };
    let public = DcLabel::untrusted();
    assert!(refusal(r#"lab.post("hello")"#).dc().flows_to(&public));
    let after_branch = refusal(r#"let t = if arg1 > 5 { 1 } else { 2 }; lab.post("hello")"#);
    assert!(!after_branch.dc().flows_to(&public), "{after_branch}");
}
