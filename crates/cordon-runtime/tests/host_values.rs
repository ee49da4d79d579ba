//! Host-made values (opaque records and handles, linear sessions) survive round trips through
//! a plan unforged. The checker refuses every plan here; compiled without it, each one is
//! stopped at the boundary with `forged-value` before the tool runs.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recorder, Source, ending, run};
use cordon_runtime::{Json, Run, Sessions, Step, ToolCall, ToolHost};
use serde_json::json;

const POLICY: &str = r#"
opaque type Repo = { name: String, private: Bool }
opaque type Token
linear type Session
measure tainted(s: Session) -> Bool = false
capability Git {
  tool repo(name: String) -> Repo @label(name = untrusted(), returns = public())
  tool token() -> Token @label(pc = untrusted(), returns = public())
  tool spend(t: Token) -> Int @label(t = untrusted(), returns = public())
  tool read(s: Session, r: Repo) -> (String, {s2: Session | tainted(s2) == (r.private || tainted(s))})
    @label(s = untrusted(), r = untrusted(), returns = public())
  tool publish(s: {s: Session | !tainted(s)}, r: {r: Repo | !r.private}, text: String) -> Session
    @label(s = untrusted(), r = untrusted(), text = untrusted(), returns = public())
  tool merge(a: Session, b: Session) -> Session @label(a = untrusted(), b = untrusted(), returns = public())
  tool pair(a: {a: Session | tainted(a) == tainted(b)}, b: Session) -> Session
    @label(a = untrusted(), b = untrusted(), returns = public())
}
entry(git: Git, s: Session) -> (String, Session)
"#;

/// `secrets` is private, every other repository public.
fn git() -> Recorder<'static> {
    Recorder::new(|e| match &*e.tool {
        "repo" => {
            let name = e.arg("name").map_or(Json::Null, |n| n.to_json());
            Ok(json!({ "name": name, "private": name == "secrets" }))
        }
        "read" => Ok(json!(["content", null])),
        "spend" => Ok(Json::from(1)),
        _ => Ok(Json::Null),
    })
}

/// Runs `plan` without the checker (which must refuse it): it must end with `forged-value`,
/// and the host must have performed exactly `performed`.
fn assert_forged(plan: &str, performed: &[&str]) {
    let source = Source::new(Some(POLICY), plan);
    assert!(source.check_with(None).is_err(), "the checker accepts\n{plan}");
    let mut host = git();
    let report = run(&source.unchecked(), &mut host);
    assert_eq!(ending(&report), "forged-value", "{plan}\n{:?}", report.result);
    assert_eq!(host.seen(), performed, "{plan}");
}

#[test]
fn an_opaque_record_built_by_the_plan_is_forged() {
    assert_forged(r#"let r = Repo { name: "public", private: false }; let (x, s) = git.read(s, r); (x, s)"#, &[]);
}

#[test]
fn a_tool_made_record_rebuilt_with_a_field_changed_is_forged() {
    assert_forged(
        r#"let r = git.repo("secrets");
           let r2 = Repo { name: r.name, private: false };
           let s = git.publish(s, r2, "hello");
           ("done", s)"#,
        &[r#"repo("secrets")"#],
    );
}

#[test]
fn a_tool_made_record_rebuilt_unchanged_is_still_not_the_host_s() {
    assert_forged(
        r#"let r = git.repo("public");
           let r2 = Repo { name: r.name, private: r.private };
           let (x, s) = git.read(s, r2);
           (x, s)"#,
        &[r#"repo("public")"#],
    );
}

#[test]
fn a_linear_session_used_twice_is_forged_the_second_time() {
    assert_forged(
        r#"let r = git.repo("public");
           let (a, s2) = git.read(s, r);
           let (b, s3) = git.read(s, r);
           (a + b, s3)"#,
        &[r#"repo("public")"#, r#"read(<Session #1>, Repo { name: "public", private: false })"#],
    );
}

#[test]
fn one_session_passed_twice_to_one_call_is_forged() {
    assert_forged("let s2 = git.merge(s, s); (\"merged\", s2)", &[]);
}

#[test]
fn a_used_session_another_argument_s_refinement_reads_is_forged() {
    // `pair`'s first refinement reads its second argument's measure. The host forgets a used
    // session once its call is over; the second argument is found used before any refinement
    // is read, so the call is refused as forged, not as a refinement the host cannot confirm.
    assert_forged(
        r#"let r = git.repo("public");
           let (x, s2) = git.read(s, r);
           let (y, s3) = git.read(s2, r);
           let s4 = git.pair(s3, s2);
           (x, s4)"#,
        &[
            r#"repo("public")"#,
            r#"read(<Session #1>, Repo { name: "public", private: false })"#,
            r#"read(<Session #3>, Repo { name: "public", private: false })"#,
        ],
    );
}

#[test]
fn a_run_holds_nothing_of_the_sessions_it_used_up() {
    // A saved run holds what the host knows; after 500 calls threading one session it must be
    // as large as after 10 (give or take the digits of the counters), its trace taken as the
    // engine takes it.
    let plan = r#"let r = git.repo("public");
                  let s = range(0, 600).fold(s, |s, i| { let (x, s) = git.read(s, r); s });
                  ("read", s)"#;
    let source = Source::new(Some(POLICY), plan);
    let limits = cordon_runtime::Limits { max_tool_calls: 1_000, ..cordon_runtime::Limits::default() };
    let config = cordon_runtime::Config { limits, ..cordon_runtime::Config::default() };
    let mut run = Run::start(&source.checked(), &Sessions::default(), &config).unwrap();
    let mut host = git();
    let mut saved = Vec::new();
    let mut step = run.proceed().unwrap();
    let mut calls = 0;
    while let Step::Effect(effect) = step {
        calls += 1;
        // The engine takes each decision from the run as it tells its observers.
        run.take_trace();
        if calls == 10 || calls == 510 {
            saved.push(run.save(&source.sources, b"key").len());
        }
        run.commit().unwrap();
        step = run.resume(host.perform(&ToolCall::new(&effect))).unwrap();
    }
    assert!(matches!(step, Step::Done(_)));
    assert_eq!(calls, 601);
    assert!(saved[1] < saved[0] + 64, "the saved run grew from {} to {} bytes in 500 calls", saved[0], saved[1]);
}

#[test]
fn a_handle_the_host_never_made_is_forged() {
    assert_forged("let n = git.spend(Token {}); (\"spent\", s)", &[]);
    assert_forged(
        r#"let r = git.repo("public"); let (x, s2) = git.read(Session {}, r); (x, s)"#,
        &[r#"repo("public")"#],
    );
}

#[test]
fn a_handle_the_host_made_passes() {
    let source = Source::new(Some(POLICY), "let t = git.token(); let n = git.spend(t); (\"spent\", s)");
    let mut host = git();
    let report = run(&source.checked(), &mut host);
    assert_eq!(ending(&report), r#"("spent", <Session #1>)"#);
    assert_eq!(host.seen(), ["token()", "spend(<Token #2>)"]);
}

#[test]
fn a_stale_session_handed_back_by_the_plan_is_forged() {
    assert_forged(
        r#"let r = git.repo("public"); let (x, s2) = git.read(s, r); (x, s)"#,
        &[r#"repo("public")"#, r#"read(<Session #1>, Repo { name: "public", private: false })"#],
    );
}

#[test]
fn a_loop_threads_one_session_through_every_iteration() {
    let plan = r#"let repos = ["a", "b", "c"].map(|n| git.repo(n));
                  let s = for r in repos with s { let (x, s) = git.read(s, r); s };
                  ("read", s)"#;
    let source = Source::new(Some(POLICY), plan);
    let mut host = git();
    let report = run(&source.checked(), &mut host);
    assert_eq!(ending(&report), r#"("read", <Session #7>)"#);
    assert_eq!(host.calls_of("read").len(), 3, "{:?}", host.calls);
}

#[test]
fn a_loop_that_reuses_its_state_is_forged_at_run_time() {
    // Without the checker: every iteration reads with the session the loop started with.
    let plan = r#"let repos = ["a", "b"].map(|n| git.repo(n));
                  let first = s;
                  let s2 = for r in repos with s { let (x, t2) = git.read(first, r); t2 };
                  ("read", s2)"#;
    let source = Source::new(Some(POLICY), plan);
    assert!(source.check_with(None).is_err(), "the checker accepts\n{plan}");
    let mut host = git();
    let report = run(&source.unchecked(), &mut host);
    assert_eq!(ending(&report), "forged-value", "{:?}", report.result);
    assert_eq!(host.calls_of("read").len(), 1, "{:?}", host.calls);
}

#[test]
fn a_session_tainted_in_a_loop_is_refused_after_it() {
    // The checker knows nothing of the session after the loop; without it, the boundary sees
    // that the second iteration's private read tainted it.
    let plan = r#"let repos = ["a", "secrets"].map(|n| git.repo(n));
                  let s = for r in repos with s { let (x, s) = git.read(s, r); s };
                  let s = git.publish(s, git.repo("a"), "summary");
                  ("posted", s)"#;
    let source = Source::new(Some(POLICY), plan);
    let refused = source.check_with(None).err().unwrap_or_default();
    assert!(refused.contains(&"refinement-unproven".to_string()), "{refused:?}");
    let mut host = git();
    let report = run(&source.unchecked(), &mut host);
    assert_eq!(ending(&report), "recheck-failed");
    assert!(host.calls_of("publish").is_empty(), "{:?}", host.calls);
}

#[test]
fn a_refined_parameter_is_rechecked_on_the_real_values() {
    // The checker refuses to publish with a session tainted by a private read; without it, the
    // boundary evaluates `!tainted(s)` on the host's own record of the session.
    let plan = r#"let r = git.repo("secrets");
                  let (x, s) = git.read(s, r);
                  let p = git.repo("public");
                  let s = git.publish(s, p, x);
                  ("posted", s)"#;
    let source = Source::new(Some(POLICY), plan);
    let refused = source.check_with(None).err().unwrap_or_default();
    assert!(refused.contains(&"refinement-unproven".to_string()), "{refused:?}");
    let mut host = git();
    let report = run(&source.unchecked(), &mut host);
    assert_eq!(ending(&report), "recheck-failed");
    assert!(host.calls_of("publish").is_empty(), "{:?}", host.calls);
    let stored = &report.sessions.values["s"];
    assert_eq!(stored.measures["tainted"], cordon_runtime::Scalar::Bool(true));
}

#[test]
fn a_continued_session_has_no_measure_it_was_not_kept_with() {
    // A session kept without `tainted` (a run that failed while making it kept none) is not
    // fresh: the host does not know its taint, so publishing with it is refused, not allowed
    // on the measure's default.
    let kept = cordon_runtime::StoredValue {
        ty: "Session".into(),
        measures: Default::default(),
        label: cordon_label::DcLabel::bottom(),
    };
    let sessions = Sessions { values: [("s".to_string(), kept)].into() };
    let plan = r#"let p = git.repo("public");
                  if p.private { ("private", s) } else { let s = git.publish(s, p, "hello"); ("posted", s) }"#;
    let source = Source::new(Some(POLICY), plan);
    let mut host = git();
    let report = cordon_engine::run(&source.unchecked(), &sessions, &cordon_runtime::Config::default(), &mut host);
    assert_eq!(ending(&report), "recheck-failed", "{:?}", report.result);
    assert!(host.calls_of("publish").is_empty(), "{:?}", host.calls);
    // Fresh, it has the default, and the same plan publishes.
    let mut host = git();
    let report = run(&source.checked(), &mut host);
    assert_eq!(ending(&report), r#"("posted", <Session #3>)"#, "{:?}", report.result);
}

#[test]
fn plan_code_cannot_read_a_measure_even_unchecked() {
    // Branching on `tainted(s)` would tell a plan what it read without that decision carrying a
    // label; measures exist only in refinements, at run time too.
    let plan = r#"let r = git.repo("secrets"); let (x, s) = git.read(s, r);
        let t = if tainted(s) { "private" } else { "public" }; (t, s)"#;
    let source = Source::new(Some(POLICY), plan);
    assert!(source.check_with(None).is_err(), "the checker accepts\n{plan}");
    let mut host = git();
    let report = run(&source.unchecked(), &mut host);
    assert_eq!(ending(&report), "runtime-type-error", "{:?}", report.result);
}

/// An allow-list in a tool's refinement (`a.ends_with("@example.com")`) is checked again on the
/// real argument at the boundary: a program that skipped the checker cannot share outside it.
#[test]
fn an_allow_list_is_rechecked_at_the_boundary() {
    const DOCS: &str = r#"
capability Docs {
  tool share(to: {a: String | a.ends_with("@example.com") && !a.contains(" ")}) @label(to = untrusted())
}
entry(docs: Docs) -> ()
"#;
    let shares = |plan: &str| {
        let program = Source::new(Some(DOCS), plan).unchecked();
        let mut shared = Vec::new();
        let mut host = Recorder::new(|e: &cordon_runtime::Effect| {
            shared.push(e.arg("to").map(ToString::to_string).unwrap_or_default());
            Ok(Json::Null)
        });
        let report = run(&program, &mut host);
        drop(host);
        (ending(&report), shared)
    };
    assert_eq!(
        shares(r#"docs.share("carol@example.com")"#),
        ("()".to_string(), vec!["\"carol@example.com\"".to_string()])
    );
    for outside in ["mallory@evil.test", "a b@example.com", "example.com@evil.test"] {
        let (end, shared) = shares(&format!("docs.share({outside:?})"));
        assert_eq!(end, "recheck-failed", "{outside}");
        assert!(shared.is_empty(), "{outside}: {shared:?}");
    }
}
