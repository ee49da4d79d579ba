//! The channels beyond data flow, each run in two worlds that differ only in a secret (what
//! alice's private roadmap says): state kept between requests, and failures. For each, what a
//! watcher of public effects may learn is exactly what `docs/security.md` states:
//!
//! - State between requests: nothing. A session whose state depended on a secret is kept with
//!   that secret's label, and the checker is not told its facts, so whether the next request's
//!   plan checks (and so whether its public post happens) is the same in both worlds.
//! - Failures (termination-insensitive noninterference): the public effects of a run that
//!   stopped are a prefix of those of the run that did not; nothing else differs. The state a
//!   failed run leaves carries the label of what the failure may have depended on.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/mod.rs"]
mod common;

use common::{Recorder, Source};
use cordon_engine::Report;
use cordon_label::DcLabel;
use cordon_runtime::{Config, Limits, Sessions};
use cordon_sim::GitHub;
use cordon_sim::github::{DATA, POLICY};

/// The two worlds: the built-in data, where alice's roadmap mentions Initech, and the same data
/// where it does not.
fn worlds() -> [GitHub; 2] {
    let without = DATA.replace("Initech", "Globex");
    assert_ne!(without, DATA);
    [GitHub::from_json(DATA).unwrap(), GitHub::from_json(&without).unwrap()]
}

/// A run's report and the public effects it made (the tools that publish, with their
/// arguments), in order.
fn run(gh: &mut GitHub, plan: &str, sessions: &Sessions, limits: Limits) -> (Report, Vec<String>) {
    let config = Config { user: gh.user().to_string(), limits };
    let program = Source::new(Some(POLICY), plan).checked();
    let mut host = Recorder::around(gh);
    let report = cordon_engine::run(&program, sessions, &config, &mut host);
    let public = host.calls.iter().filter(|c| c.tool == "create_issue" || c.tool == "comment").map(|c| c.to_string());
    (report, public.collect())
}

/// Whether the plan `next` checks after a request that left `sessions`.
fn checks_next(next: &str, sessions: &Sessions) -> bool {
    let src = Source::new(Some(POLICY), next);
    let facts = sessions.entry_facts("alice");
    src.check_with(facts).is_ok()
}

/// Posts a triage issue on alice/website: needs an untainted session.
const POST: &str = r#"match gh.repo("alice", "website") {
  Some(r) => if r.private { ("private", s) } else {
    let (i, s) = gh.create_issue(s, r, "Weekly triage", "Go through the open issues.");
    ("opened #" + to_string(i.number), s)
  },
  None => ("none", s),
}"#;

#[test]
fn state_kept_between_requests_does_not_carry_a_secret_bit() {
    // Reads the private roadmap only if the secret says Initech: the session is tainted or not
    // depending on the secret.
    let first = r#"if gh.search_code("Initech").is_empty() { ("nothing", s) } else {
  match gh.private_repo("secret-plans") {
    Some(p) => { let (t, s) = gh.read_file(s, p, "roadmap.md"); ("read", s) },
    None => ("none", s),
  }
}"#;
    let mut outcomes = Vec::new();
    for mut gh in worlds() {
        let (report, _) = run(&mut gh, first, &Sessions::default(), Limits::default());
        assert!(report.result.is_ok(), "{:?}", report.result);
        let stored = &report.sessions.values["s"];
        assert!(!stored.label.flows_to(&DcLabel::endorsed("alice")), "the session's state is secret: {stored:?}");
        let sessions = Sessions::from_json(&report.sessions.to_json()).unwrap();
        outcomes.push(checks_next(POST, &sessions));
    }
    // Tainted in one world and not in the other, yet the next request is judged the same way:
    // the checker was told nothing it could reveal.
    assert_eq!(outcomes, [false, false]);

    // A session whose state no secret decided keeps its facts: a read of a public file leaves
    // it untainted and known to be, and the next post checks.
    let public_read = r#"match gh.repo("alice", "website") {
  Some(r) => { let (t, s) = gh.read_file(s, r, "README.md"); ("read", s) },
  None => ("none", s),
}"#;
    let [mut gh, _] = worlds();
    let (report, _) = run(&mut gh, public_read, &Sessions::default(), Limits::default());
    assert!(report.result.is_ok(), "{:?}", report.result);
    assert!(checks_next(POST, &report.sessions));
}

/// Runs `plan` in both worlds; the public effects of a run that failed must be a prefix of
/// those of the other, and the state it left must carry a secret label. Returns how each ended.
fn terminates_insensitively(plan: &str, limits: Limits) -> [bool; 2] {
    let mut ended = Vec::new();
    let mut effects = Vec::new();
    for mut gh in worlds() {
        let (report, public) = run(&mut gh, plan, &Sessions::default(), limits.clone());
        if report.result.is_err() {
            let stored = &report.sessions.values["s"];
            assert!(!stored.label.flows_to(&DcLabel::endorsed("alice")), "a failure under a secret labels the state");
        }
        ended.push(report.result.is_ok());
        effects.push(public);
    }
    let (short, long) =
        if effects[0].len() <= effects[1].len() { (&effects[0], &effects[1]) } else { (&effects[1], &effects[0]) };
    assert_eq!(short[..], long[..short.len()], "public effects differ beyond a prefix:\n{effects:?}");
    [ended[0], ended[1]]
}

#[test]
fn an_overflow_under_a_secret_stops_the_run_and_reveals_no_more_than_that() {
    let plan = format!(
        r#"let big = if gh.search_code("Initech").is_empty() {{ 0 }} else {{ 9223372036854775807 }};
let more = big + 1;
{POST}"#
    );
    assert_eq!(terminates_insensitively(&plan, Limits::default()), [false, true]);
}

#[test]
fn a_missing_file_under_a_secret_stops_the_run_and_reveals_no_more_than_that() {
    let plan = r#"let path = if gh.search_code("Initech").is_empty() { "README.md" } else { "no-such-file.md" };
match gh.repo("alice", "website") {
  Some(r) => if r.private { ("private", s) } else {
    let (t, s) = gh.read_file(s, r, path);
    let (i, s) = gh.create_issue(s, r, "Weekly triage", "Go through the open issues.");
    ("opened #" + to_string(i.number), s)
  },
  None => ("none", s),
}"#;
    assert_eq!(terminates_insensitively(plan, Limits::default()), [false, true]);
}

#[test]
fn limits_reached_under_a_secret_reveal_no_more_than_where_the_run_stopped() {
    // Tool calls made under a secret still count toward the limit.
    let calls = format!(
        r#"let n = if gh.search_code("Initech").is_empty() {{ 1 }} else {{ 5 }};
let found = range(0, n).map(|i| gh.repo("alice", "website").is_some()).all(|x| x);
{POST}"#
    );
    let limits = Limits { max_tool_calls: 6, ..Limits::default() };
    assert_eq!(terminates_insensitively(&calls, limits), [false, true]);
    // So does fuel.
    let fuel = format!(
        r#"let n = if gh.search_code("Initech").is_empty() {{ 10 }} else {{ 100000 }};
let total = range(0, n).fold(0, |a, i| a + i);
{POST}"#
    );
    let limits = Limits { fuel: 50_000, ..Limits::default() };
    assert_eq!(terminates_insensitively(&fuel, limits), [false, true]);
}
