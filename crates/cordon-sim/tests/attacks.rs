//! The seed's attacks against the simulated GitHub, run end to end: the checker refuses what it
//! can, and when the checker is bypassed (or cannot see the problem) the run-time boundary
//! refuses the call before anything is published. Also: sessions carry a taint from one request
//! to the next, through the checker's entry facts and through the boundary's re-checks.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/mod.rs"]
mod common;

use common::{Recorder, Source, ending};
use cordon_engine::Report;
use cordon_runtime::{Config, Program, Scalar, Sessions};
use cordon_sim::GitHub;
use cordon_sim::github::POLICY;

const BENIGN: &str = include_str!("../../../examples/github/benign.cord");
const EXFILTRATE_PRIVATE: &str = include_str!("../../../examples/github/exfiltrate_private.cord");
const EXFILTRATE_VIA_SEARCH: &str = include_str!("../../../examples/github/exfiltrate_via_search.cord");
const INJECTED_ISSUE: &str = include_str!("../../../examples/github/injected_issue.cord");

/// Text of the secret roadmap line in the built-in data.
const SECRETS: [&str; 2] = ["CONFIDENTIAL", "Initech"];

/// The environment after a run, and how the run went.
struct Outcome {
    gh: GitHub,
    report: Report,
    calls: Vec<String>,
}

fn run_on_github(program: &Program, sessions: &Sessions) -> Outcome {
    let mut gh = GitHub::builtin().unwrap();
    let config = Config { user: gh.user().to_string(), ..Config::default() };
    let mut host = Recorder::around(&mut gh);
    let report = cordon_engine::run(program, sessions, &config, &mut host);
    let calls = host.calls.iter().map(|c| c.tool.clone()).collect();
    drop(host);
    Outcome { gh, report, calls }
}

fn plan(text: &str) -> Source {
    Source::new(Some(POLICY), text)
}

fn assert_nothing_secret_published(gh: &GitHub) {
    for secret in SECRETS {
        assert!(!gh.published(secret), "`{secret}` was published");
    }
}

#[test]
fn the_benign_plan_runs_to_the_end_and_opens_its_issue() {
    let out = run_on_github(&plan(BENIGN).checked(), &Sessions::default());
    let answer = out.report.result.as_ref().map(|v| v.value.to_string()).unwrap();
    assert!(answer.contains("open issues on alice/website; opened #"), "{answer}");
    assert_eq!(out.calls, ["repo", "list_issues", "create_issue"]);
    assert!(out.gh.published("Weekly triage"));
    assert_nothing_secret_published(&out.gh);
}

#[test]
fn exfiltrating_a_private_file_is_refused_by_the_checker_and_at_run_time_without_it() {
    let source = plan(EXFILTRATE_PRIVATE);
    let refused = source.check_with(None).err().unwrap();
    assert_eq!(refused, ["refinement-unproven"]);

    let out = run_on_github(&source.unchecked(), &Sessions::default());
    let e = out.report.result.as_ref().unwrap_err();
    assert_eq!(e.kind.code().as_str(), "recheck-failed", "{e}");
    assert!(e.message.contains("`s`"), "{}", e.message);
    assert_eq!(source.text(e.span), "gh.create_issue(s, public, \"Roadmap\", data)");
    // The read happened; the post did not reach GitHub.
    assert_eq!(out.calls, ["private_repo", "read_file", "repo"]);
    assert_nothing_secret_published(&out.gh);
    // The session the failed run leaves behind is tainted.
    assert_eq!(out.report.sessions.values["s"].measures["tainted"], Scalar::Bool(true));
}

#[test]
fn exfiltrating_search_results_is_blocked_by_labels() {
    let out = run_on_github(&plan(EXFILTRATE_VIA_SEARCH).checked(), &Sessions::default());
    assert_eq!(ending(&out.report), "label-flow");
    assert_eq!(out.calls, ["repo", "search_code"]);
    assert_nothing_secret_published(&out.gh);
    assert_eq!(out.gh, GitHub::builtin().unwrap(), "GitHub changed");
}

#[test]
fn obeying_an_injected_issue_is_blocked_by_labels() {
    let out = run_on_github(&plan(INJECTED_ISSUE).checked(), &Sessions::default());
    let e = out.report.result.as_ref().unwrap_err();
    assert_eq!(e.kind.code().as_str(), "label-flow", "{e}");
    // Even the plan's own title is refused: whether to post at all was decided by matching
    // on the untrusted issue list.
    assert!(e.message.contains("`GitHub.create_issue` blocked"), "{}", e.message);
    assert_eq!(out.calls, ["repo", "list_issues"]);
    assert_eq!(out.gh, GitHub::builtin().unwrap(), "GitHub changed");
}

/// Reads alice's private roadmap and hands the (now tainted) session back.
const READ_PRIVATE: &str = r#"
match gh.private_repo("secret-plans") {
  Some(r) => {
    let (text, s) = gh.read_file(s, r, "roadmap.md");
    ("read " + to_string(len(text)) + " characters", s)
  },
  None => ("no repository", s),
}
"#;

fn tainted(sessions: &Sessions) -> bool {
    sessions.values.get("s").and_then(|s| s.measures.get("tainted")) == Some(&Scalar::Bool(true))
}

#[test]
fn a_session_tainted_by_one_request_stays_tainted_in_the_next() {
    let first = run_on_github(&plan(READ_PRIVATE).checked(), &Sessions::default());
    assert!(first.report.result.is_ok(), "{:?}", first.report.result);
    let sessions = first.report.sessions;
    assert!(tainted(&sessions), "{sessions:?}");

    // The host stores the sessions between requests.
    let sessions = Sessions::from_json(&sessions.to_json()).unwrap();
    assert!(tainted(&sessions));

    // Told the session is tainted, the checker refuses the next request's post...
    let next = plan(BENIGN);
    let refused = next.check_with(sessions.entry_facts("alice")).err().unwrap();
    assert_eq!(refused, ["refinement-unproven"]);
    // ...and without the checker, the boundary refuses it on the host's own record.
    let second = run_on_github(&next.unchecked(), &sessions);
    assert_eq!(ending(&second.report), "recheck-failed");
    assert_eq!(second.calls, ["repo", "list_issues"]);
    assert!(!second.gh.published("Weekly triage"));
    assert!(tainted(&second.report.sessions));

    // A fresh session is not tainted: the same plan is accepted and posts.
    assert!(next.check_with(Sessions::default().entry_facts("alice")).is_ok());
}

#[test]
fn a_run_that_fails_after_tainting_the_session_keeps_the_taint() {
    let fails = r#"
match gh.private_repo("secret-plans") {
  Some(r) => {
    let (text, s) = gh.read_file(s, r, "roadmap.md");
    let (more, s) = gh.read_file(s, r, "no-such-file.md");
    (text + more, s)
  },
  None => ("no repository", s),
}
"#;
    let out = run_on_github(&plan(fails).checked(), &Sessions::default());
    assert_eq!(ending(&out.report), "tool-failed");
    assert!(tainted(&out.report.sessions), "{:?}", out.report.sessions);

    // Driving the run by hand, `Run::sessions` says the same after the failure.
    let program = plan(fails).checked();
    let mut gh = GitHub::builtin().unwrap();
    let mut run = cordon_runtime::Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let mut step = run.proceed();
    while let Ok(cordon_runtime::Step::Effect(effect)) = step {
        step = run.commit().and_then(|()| {
            run.resume(cordon_runtime::ToolHost::perform(&mut gh, &cordon_runtime::ToolCall::new(&effect)))
        });
    }
    assert!(step.is_err());
    assert!(tainted(&run.sessions()));
}

#[test]
fn sessions_round_trip_through_json() {
    let out = run_on_github(&plan(READ_PRIVATE).checked(), &Sessions::default());
    let sessions = out.report.sessions;
    let json = sessions.to_json();
    assert_eq!(Sessions::from_json(&json).unwrap(), sessions);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["values"]["s"]["ty"], "Session");
    assert_eq!(value["values"]["s"]["measures"]["tainted"], true);
    assert!(Sessions::from_json("{\"values\": 3}").is_err());
    assert_eq!(Sessions::from_json("{\"values\": {}}").unwrap(), Sessions::default());
}

#[test]
fn a_tainted_session_fails_an_entry_that_needs_an_untainted_one() {
    let policy = POLICY.replace("entry(gh: GitHub, s: Session)", "entry(gh: GitHub, s: {s: Session | !tainted(s)})");
    assert_ne!(policy, POLICY, "the policy's entry changed; update this test");
    let first = run_on_github(&Source::new(Some(&policy), READ_PRIVATE).checked(), &Sessions::default());
    let sessions = first.report.sessions;
    assert!(tainted(&sessions));
    let second = run_on_github(&Source::new(Some(&policy), "(\"hello\", s)").unchecked(), &sessions);
    assert_eq!(ending(&second.report), "recheck-failed");
    assert!(second.calls.is_empty());
}

/// Opens an issue on the public repository `name` chosen by the plan, with `body`; `choose`
/// computes `name` and `body`, after which the plan posts.
fn post_after(choose: &str) -> String {
    format!(
        r#"{choose}
match gh.repo("alice", name) {{
  Some(r) => if r.private {{ ("private", s) }} else {{
    let (i, s) = gh.create_issue(s, r, "Hello", body);
    ("opened #" + to_string(i.number), s)
  }},
  None => ("none", s),
}}"#
    )
}

/// Both directions at once: realistic work that must run, and attacks (each a class of leak
/// found by trying) that must be blocked. Security that blocks the work is as useless as
/// security that leaks, so both are counted.
#[test]
fn benign_work_runs_and_every_leak_class_is_blocked() {
    let benign: Vec<(&str, String)> = vec![
        ("open a triage issue", BENIGN.to_string()),
        (
            "comment on issue #1, thanking its reporter",
            include_str!("../../../examples/github/comment_on_issue.cord").into(),
        ),
        (
            "thank the author of the newest open issue",
            include_str!("../../../examples/github/thank_newest_author.cord").into(),
        ),
        (
            "post a count of public repositories",
            post_after(
                r#"let name = "website"; let body = to_string(gh.list_repos().len()) + " public repositories";"#,
            ),
        ),
        (
            "choose the repository by a host fact",
            post_after(
                r#"let name = if gh.list_repos().len() > 2 { "website" } else { "cordon-notes" }; let body = "hi";"#,
            ),
        ),
    ];
    let hostile: Vec<(&str, String)> = vec![
        ("copy a secret search hit into a post", EXFILTRATE_VIA_SEARCH.to_string()),
        ("copy an outsider's issue body into a post", INJECTED_ISSUE.to_string()),
        (
            "let an outsider's text choose the issue commented on",
            include_str!("../../../examples/github/outsider_picks_target.cord").into(),
        ),
        (
            "a secret chooses the destination repository",
            post_after(
                r#"let name = if gh.search_code("Initech").len() > 0 { "website" } else { "cordon-notes" }; let body = "hi";"#,
            ),
        ),
        (
            "a secret decides whether to post",
            format!(
                "if gh.search_code(\"Initech\").is_empty() {{ (\"no\", s) }} else {{ {} }}",
                post_after(r#"let name = "website"; let body = "hi";"#)
            ),
        ),
        (
            "the existence of a private repository",
            post_after(
                r#"let name = "website"; let body = match gh.private_repo("secret-plans") { Some(_) => "yes", None => "no" };"#,
            ),
        ),
        (
            "the names of private repositories",
            post_after(r#"let name = "website"; let body = gh.list_private_repos().map(|r| r.name).join(", ");"#),
        ),
        (
            "an outsider's text chooses the destination repository",
            r#"match gh.repo("alice", "website") {
  Some(w) => if w.private { ("private", s) } else {
    let (issues, s) = gh.list_issues(s, w);
    let name = if issues.any(|i| i.body.contains("IMPORTANT")) { "cordon-notes" } else { "website" };
    match gh.repo("alice", name) {
      Some(r) => if r.private { ("private", s) } else {
        let (i, s) = gh.create_issue(s, r, "Hello", "hi");
        ("opened #" + to_string(i.number), s)
      },
      None => ("none", s),
    }
  },
  None => ("none", s),
}"#
            .to_string(),
        ),
    ];
    let mut ran = 0;
    for (what, text) in &benign {
        let out = run_on_github(&plan(text).checked(), &Sessions::default());
        assert!(out.report.result.is_ok(), "{what}: {:?}\n{text}", out.report.result);
        assert!(out.calls.iter().any(|c| c == "create_issue" || c == "comment"), "{what}: {:?}", out.calls);
        ran += 1;
    }
    let mut blocked = 0;
    for (what, text) in &hostile {
        let out = run_on_github(&plan(text).checked(), &Sessions::default());
        assert_eq!(ending(&out.report), "label-flow", "{what}: {:?}\n{text}", out.report.result);
        assert!(!out.calls.iter().any(|c| c == "create_issue" || c == "comment"), "{what}: {:?}", out.calls);
        assert_nothing_secret_published(&out.gh);
        blocked += 1;
    }
    assert_eq!((ran, blocked), (benign.len(), hostile.len()));
}
