//! Whole requests through the library alone, as a new front end would drive them: no set-up of
//! its own, only a workspace, a model, an approver and an observer. Each request is checked,
//! gated, audited and recorded; its sessions carry to the next and are locked while it runs.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon::{Ended, SessionAt, Settings, Source, Storage, ToolChoice, Tools, Workspace};
use cordon_agent::{Scripted, ScriptedReply};
use cordon_engine::{Event, Observer};
use cordon_gate::{DenyAll, Scripted as Answers};
use cordon_store::{Status, Verdict};

/// A workspace on a fresh simulated GitHub, recording in `storage`.
fn github(storage: &Storage) -> Workspace {
    let tools = Tools::open(&ToolChoice { envs: vec!["github".into()], ..ToolChoice::default() }, Vec::new()).unwrap();
    Workspace::new(tools, storage.clone(), Settings::default())
}

/// The names of the events it heard, in order.
#[derive(Default)]
struct Heard(Vec<String>);

impl Observer for Heard {
    fn event(&mut self, event: &Event<'_>) {
        let json = serde_json::to_value(event).unwrap();
        self.0.push(json["event"].as_str().unwrap().to_string());
    }
}

const TRIAGE: &str = include_str!("../../../examples/agent/triage.json");

#[test]
fn a_request_put_to_a_model_is_checked_gated_run_and_recorded() {
    let storage = Storage::in_memory().unwrap();
    let mut workspace = github(&storage);
    let mut model = Scripted::from_json(TRIAGE).unwrap();
    let mut yes = Answers::parse("yes").unwrap();
    let mut heard = Heard::default();
    let request = "How many open issues does alice/website have? Open a triage issue for them.";
    let report = workspace.ask(request, &mut model, &mut yes, &mut heard).unwrap();

    let Ended::Done(v) = &report.ended else { panic!("{:?}", report.diagnostics) };
    assert!(v.value.to_string().contains("opened #5"), "{}", v.value);
    assert_eq!(report.holes.len(), 1);
    assert!(report.holes[0].filled);
    // The gate asked once, for the new issue, and the person said yes.
    assert_eq!((report.approvals.stats.cards, report.approvals.stats.approved), (1, 1));
    assert_eq!(heard.0.first().map(String::as_str), Some("request_started"));
    assert_eq!(heard.0.last().map(String::as_str), Some("run_ended"));
    assert!(heard.0.iter().any(|e| e == "fill_accepted") && heard.0.iter().any(|e| e == "effect_performed"));

    // The store has the request, done, its rows intact.
    let id = report.request.unwrap();
    let log = storage.store().show(id).unwrap();
    assert_eq!(log.request.status, Some(Status::Done));
    assert_eq!(log.request.text, request);
    assert!(matches!(storage.store().verify().unwrap(), Verdict::Intact { .. }));
    // What a front end prints as JSON is the report itself.
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["status"], "done");
    assert_eq!(json["request"], serde_json::json!(id));
    assert_eq!(json["holes"][0]["filled"], true);

    // The environment is the workspace's: the issue the model opened is there.
    let gh = workspace.hosts().get::<cordon_sim::GitHub>().unwrap();
    assert!(gh.data().repos.iter().flat_map(|r| &r.issues).any(|i| i.title == "Triage"));
}

/// Reads the private roadmap and hands the session back: tainted from then on.
const TAINT: &str = r#"match gh.private_repo("secret-plans") {
  Some(secret) => {
    let (data, s) = gh.read_file(s, secret, "roadmap.md");
    ("Read it.", s)
  },
  None => ("No secret-plans repository.", s),
}"#;

const PUBLISH: &str = r#"match gh.repo("alice", "website") {
  Some(r) => if r.private { ("private", s) } else {
    let (issue, s) = gh.create_issue(s, r, "Hello", "Hello.");
    ("Opened #" + to_string(issue.number), s)
  },
  None => ("none", s),
}"#;

#[test]
fn a_session_tainted_by_one_request_stays_tainted_in_the_next_whoever_runs_it() {
    let storage = Storage::in_memory().unwrap();
    let at = SessionAt::Store("work".into());
    let mut first = github(&storage).with_session(at.clone());
    let report = first.run(&Source::new("taint.cord", TAINT), &mut DenyAll, &mut Heard::default()).unwrap();
    assert_eq!(report.status(), "done", "{:?}", report.diagnostics);

    // Another workspace (another front end, another process) on the same store and session:
    // the check already knows, and the run is refused before anything runs.
    let mut second = github(&storage).with_session(at);
    let checked = second.check(&Source::new("publish.cord", PUBLISH), &DenyAll).unwrap();
    assert!(!checked.accepted());
    assert!(checked.diagnostics.iter().any(|d| d.code.as_str() == "refinement-unproven"), "{:?}", checked.diagnostics);
    let mut heard = Heard::default();
    let report = second.run(&Source::new("publish.cord", PUBLISH), &mut DenyAll, &mut heard).unwrap();
    assert!(matches!(report.ended, Ended::Rejected));
    assert!(heard.0.is_empty(), "nothing ran: {:?}", heard.0);
    assert_eq!(report.request, None, "a rejected plan is not a request");
}

#[test]
fn a_session_another_request_holds_stops_a_run_before_anything_runs() {
    let storage = Storage::in_memory().unwrap();
    let lock = storage.store().lock_session("busy").unwrap();
    // The lock names a live process (this one), so the session is in use.
    let mut workspace = github(&storage).with_session(SessionAt::Store("busy".into()));
    let mut heard = Heard::default();
    let error = workspace.run(&Source::new("taint.cord", TAINT), &mut DenyAll, &mut heard).unwrap_err();
    assert!(error.to_string().contains("in use"), "{error}");
    assert!(heard.0.is_empty());
    assert!(storage.store().requests(10).unwrap().is_empty(), "nothing was recorded");
    storage.store().unlock_session(lock).unwrap();
    // Given back, the session can be taken, and is given back after the run.
    let report = workspace.run(&Source::new("taint.cord", TAINT), &mut DenyAll, &mut heard).unwrap();
    assert_eq!(report.status(), "done");
    storage.store().unlock_session(storage.store().lock_session("busy").unwrap()).unwrap();
}

#[test]
fn requests_put_to_a_model_are_numbered_and_recorded_one_after_another() {
    let storage = Storage::in_memory().unwrap();
    let mut workspace = github(&storage);
    let answer = "```cordon\n(\"Nothing to do.\", s)\n```";
    let mut model = Scripted::new(vec![ScriptedReply::next(answer), ScriptedReply::next(answer)]);
    let first = workspace.ask("Anything to do?", &mut model, &mut DenyAll, &mut Heard::default()).unwrap();
    assert_eq!(first.plan, "<request 1>");
    assert_eq!(first.status(), "done");
    let second = workspace.ask("And now?", &mut model, &mut DenyAll, &mut Heard::default()).unwrap();
    assert_eq!(second.plan, "<request 2>");
    assert_eq!(second.usage.completion_tokens, second.holes[0].usage.completion_tokens);
    assert_eq!(storage.store().requests(10).unwrap().len(), 2);
}

/// `calls` lists of alice's issues, each answer let go as soon as it came.
fn many_calls(calls: usize) -> Source {
    Source::new(
        "many.cord",
        format!(
            "match gh.repo(\"alice\", \"website\") {{ Some(r) => {{ let s = range(0, {calls}).fold(s, |s, i| {{ \
             let (issues, s) = gh.list_issues(s, r); s }}); (\"done\", s) }}, None => (\"none\", s), }}"
        ),
    )
}

#[test]
fn a_long_run_holds_no_answer_it_let_go() {
    // 3,000 answers of four issues each are over a megabyte: held to the end (by the trace, or
    // by the host, as the records it made), they would pass the run's memory limit.
    let tools = Tools::open(&ToolChoice { envs: vec!["github".into()], ..ToolChoice::default() }, Vec::new()).unwrap();
    let limits =
        cordon::api::values::Limits { max_memory_bytes: 1 << 20, max_tool_calls: 10_000, ..Default::default() };
    let settings = Settings { limits, ..Settings::default() };
    let mut workspace = Workspace::new(tools, Storage::in_memory().unwrap(), settings);
    let plan = many_calls(3_000);
    let mut no = DenyAll;
    let prepared = workspace.prepare(cordon::Request::Plan(&plan), &mut no).unwrap().without_trace();
    let report = prepared.run(&mut cordon_engine::Observers::new()).unwrap();
    assert!(matches!(report.ended, Ended::Done(_)), "{:?}", report.diagnostics);
    assert_eq!(report.performed, 3_001);
    assert!(report.trace.is_empty(), "the report lists no call when its front end showed them");

    // Listed, every call is in the report, which the library holds, not the run.
    let plan = many_calls(20);
    let report = workspace.run(&plan, &mut DenyAll, &mut cordon_engine::Observers::new()).unwrap();
    assert_eq!(report.performed, 21);
    let allowed = report.trace.iter().filter(|c| c.decision == cordon::api::values::Decision::Allowed).count();
    assert_eq!(allowed, 21);
}
