//! Differential noninterference on the simulated GitHub of `policies/github.cord`.
//!
//! Random plans read the user's secrets (`search_code`, the private repository), read what
//! outsiders wrote (issue titles and bodies, bob's files), compute with them (branches,
//! `filter`, `first`, `unwrap_or`, `map`, `fold`), choose from them which repository or issue to
//! post to and whether to post, and post issues and comments (one at a time, or in loops). Each
//! plan the checker accepts runs against the built-in state and against every variation of it
//! that changes only secret data, then only outsider-written data
//! (`cordon_sim::noninterference`): what reached the public (`create_issue` and `comment`
//! calls the host performed: tool, every argument, order) must not change.
//!
//! Each property counts the plans the checker accepted and the plans that published something
//! in some run, and fails below a stated floor: a suite where every plan is rejected or blocked
//! would pass without testing anything.
//!
//! The leaks these properties found before every argument had a sink, and before private
//! repositories were answered by their own tools, each have a test below that they stay closed.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/mod.rs"]
mod common;
#[path = "../../cordon-runtime/tests/common/proposed.rs"]
mod proposed;

use std::cell::Cell;
use std::time::Duration;

use common::Source;
use cordon_runtime::{Limits, Program};
use cordon_sim::GitHub;
use cordon_sim::github::POLICY;
use cordon_sim::noninterference::{EXTRA_PRIVATE_REPO, Observation, Protected, VARIANTS, differential, vary};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::RngSeed;
use proptest::test_runner::{TestCaseResult, TestRunner};

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

// ---------------------------------------------------------------- running a plan differentially

/// Small enough that a runaway plan stops in milliseconds; a run that hits a limit just stops
/// (the comparison is termination-insensitive).
fn limits() -> Limits {
    Limits {
        fuel: 200_000,
        max_string_bytes: 1 << 16,
        max_list_len: 10_000,
        max_memory_bytes: 1 << 22,
        wall_clock: Duration::from_secs(5),
        max_tool_calls: 40,
        ..Limits::default()
    }
}

fn builtin() -> GitHub {
    GitHub::builtin().unwrap()
}

/// The plan checked against the GitHub policy, or the codes of its errors.
fn accept(plan: &str) -> Result<Program, Vec<String>> {
    Source::new(Some(POLICY), plan).check_with(None)
}

/// Runs `program` against the built-in state and each variation of its `what` data; the first
/// difference in what was published, or every run's observation.
fn compare_variants(program: &Program, what: Protected) -> Result<Vec<Observation>, String> {
    let base = builtin();
    let mut seen = Vec::new();
    for v in 0..VARIANTS {
        let other = vary(&base, what, v).unwrap();
        let (a, b, verdict) = differential(program, &base, &other, &limits());
        verdict.map_err(|e| format!("{what:?} variant {v}: {e}\n  (runs ended {:?} and {:?})", a.ending, b.ending))?;
        seen.extend([a, b]);
    }
    Ok(seen)
}

/// The differential property for one plan: rejected by the checker, or no variation of either
/// kind of protected data changes what it publishes.
fn check_differential(plan: &str) -> Result<(), String> {
    let Ok(program) = accept(plan) else { return Ok(()) };
    for what in [Protected::Secret, Protected::Outsider] {
        compare_variants(&program, what)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- a grammar of GitHub plans

/// Declarations every plan starts with: helpers that post conditionally or in a loop (the
/// session is linear, so a loop of posts is a recursion that threads it). `Clean` is an
/// untainted session; a public repository's refinement is written out in each signature,
/// because an alias `{r: Repo | !r.private}` is refused (`undefined-field`) today.
const HELPERS: &str = r#"
type Clean = {s: Session | !tainted(s)}

fn maybe_issue(gh: GitHub, s: Clean, r: {r: Repo | !r.private}, c: Bool, t: String, b: String) -> Clean {
  if c { let (i, s) = gh.create_issue(s, r, "Re: " + t, b); s } else { s }
}

fn maybe_comment(gh: GitHub, s: Clean, r: {r: Repo | !r.private}, on: Issue, c: Bool, b: String) -> Clean {
  if c { gh.comment(s, r, on, "> " + b) } else { s }
}

fn comment_each(gh: GitHub, s: Clean, r: {r: Repo | !r.private}, on: Issue, xs: List[String], k: Int) -> Clean {
  if k >= 0 && k < xs.len() {
    let s = gh.comment(s, r, on, "- " + xs[k]);
    comment_each(gh, s, r, on, xs, k + 1)
  } else { s }
}

fn issue_each(gh: GitHub, s: Clean, r: {r: Repo | !r.private}, xs: List[String], k: Int) -> Clean {
  if k >= 0 && k < xs.len() {
    let (i, s) = gh.create_issue(s, r, "Item: " + xs[k], "from a list");
    issue_each(gh, s, r, xs, k + 1)
  } else { s }
}
"#;

/// Words the generated filters look for: each occurs in some built-in or varied text.
const WORDS: &[&str] = &["\"build\"", "\"Initech\"", "\"Q1\"", "\"link\"", "\"the\"", "\"x\""];

fn word() -> BoxedStrategy<String> {
    prop::sample::select(WORDS).prop_map(String::from).boxed()
}

/// Names bound by every plan before its steps (see [`sources`]):
/// - `hits: List[String]`: `search_code`, secret to alice;
/// - `repos: List[Repo]`: `list_repos`;
/// - `issues: List[Issue]`: one repository's issues, written by outsiders (mostly);
/// - `readme: String`: a file of alice's public repositories, hers to publish;
/// - `theirs: String`: bob's README, his text;
/// - `mine: Issue`: the newest issue the plan opened;
/// - `web`, `notes`, `lib`: the public repositories alice/website, alice/cordon-notes, bob/lib.
fn text(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        3 => prop::sample::select(vec!["\"ok\"", "\"Weekly triage\"", "\"\"", "\"see #1\""]).prop_map(String::from),
        1 => Just("readme".to_string()),
        1 => Just("theirs".to_string()),
        1 => Just("hits.first().unwrap_or(\"none\")".to_string()),
        1 => Just("issues.map(|i| i.title).first().unwrap_or(\"none\")".to_string()),
        1 => Just("mine.title".to_string()),
        1 => Just("to_string(repos.len())".to_string()),
        1 => Just("to_string(hits.len())".to_string()),
        1 => Just("to_string(issues.filter(|i| i.open).len())".to_string()),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let (t, c, l) = (text(depth - 1), cond(depth - 1), list(depth - 1));
    prop_oneof![
        3 => leaf,
        1 => (t.clone(), t.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
        1 => (c, t.clone(), t.clone()).prop_map(|(c, a, b)| format!("(if {c} {{ {a} }} else {{ {b} }})")),
        1 => l.prop_map(|l| format!("{l}.join(\", \")")),
        1 => t.prop_map(|a| format!("{a}.to_upper()")),
    ]
    .boxed()
}

fn cond(depth: u32) -> BoxedStrategy<String> {
    // Mostly conditions on protected data: what decides a choice is what may leak through it.
    let leaf = prop_oneof![
        1 => Just("true".to_string()),
        1 => Just("false".to_string()),
        2 => Just("(hits.len() > 0)".to_string()),
        2 => word().prop_map(|w| format!("hits.any(|h| h.contains({w}))")),
        2 => word().prop_map(|w| format!("issues.any(|i| i.title.contains({w}))")),
        1 => word().prop_map(|w| format!("issues.any(|i| i.body.contains({w}))")),
        1 => Just("issues.all(|i| i.open)".to_string()),
        1 => Just("gh.list_private_repos().any(|r| r.name != \"secret-plans\")".to_string()),
        1 => Just(format!("gh.private_repo(\"{EXTRA_PRIVATE_REPO}\").is_some()")),
        1 => word().prop_map(|w| format!("readme.contains({w})")),
        1 => word().prop_map(|w| format!("theirs.contains({w})")),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let (t, c) = (text(depth - 1), cond(depth - 1));
    prop_oneof![
        3 => leaf,
        1 => c.clone().prop_map(|a| format!("!{a}")),
        1 => (c.clone(), prop::sample::select(vec!["&&", "||"]), c).prop_map(|(a, op, b)| format!("({a} {op} {b})")),
        1 => (t.clone(), word()).prop_map(|(a, w)| format!("{a}.contains({w})")),
        1 => (t.clone(), prop::sample::select(vec!["<", "==", ">="]), t).prop_map(|(a, op, b)| format!("({a} {op} {b})")),
    ]
    .boxed()
}

fn list(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop::sample::select(vec![
        "hits",
        "issues.map(|i| i.title)",
        "issues.map(|i| i.body)",
        "repos.map(|r| r.name)",
        "[\"a\", \"b\"]",
        "readme.split(\"\\n\")",
    ])
    .prop_map(String::from);
    if depth == 0 {
        return leaf.boxed();
    }
    let (t, c, l) = (text(depth - 1), cond(depth - 1), list(depth - 1));
    prop_oneof![
        3 => leaf,
        1 => (l.clone(), word()).prop_map(|(l, w)| format!("{l}.filter(|x| x.contains({w}))")),
        1 => (t.clone(), t).prop_map(|(a, b)| format!("[{a}, {b}]")),
        1 => l.clone().prop_map(|l| format!("{l}.map(|x| x.to_upper())")),
        1 => (c, l.clone(), l).prop_map(|(c, a, b)| format!("(if {c} {{ {a} }} else {{ {b} }})")),
    ]
    .boxed()
}

/// A repository the checker knows is public: one of the three, or a choice between them.
fn repo(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop::sample::select(vec!["web", "notes", "lib"]).prop_map(String::from);
    if depth == 0 {
        return leaf.boxed();
    }
    let (c, r) = (cond(depth - 1), repo(depth - 1));
    prop_oneof![
        2 => leaf,
        1 => (c, r.clone(), r).prop_map(|(c, a, b)| format!("(if {c} {{ {a} }} else {{ {b} }})")),
    ]
    .boxed()
}

/// A condition on one issue `i`; mostly on its text, which outsiders write.
fn issue_cond() -> BoxedStrategy<String> {
    prop_oneof![
        2 => word().prop_map(|w| format!("i.title.contains({w})")),
        2 => word().prop_map(|w| format!("i.body.contains({w})")),
        1 => Just("i.open".to_string()),
        1 => Just("i.number > 2".to_string()),
        1 => Just("i.author == \"mallory\"".to_string()),
    ]
    .boxed()
}

/// An issue: the plan's own, or one picked from `issues` without branching on the list
/// (`first`/`last`/`filter` with `unwrap_or`, `fold`), or a choice between two.
fn issue(depth: u32) -> BoxedStrategy<String> {
    let leaf = Just("mine".to_string());
    if depth == 0 {
        return leaf.boxed();
    }
    let (c, i) = (cond(depth - 1), issue(depth - 1));
    prop_oneof![
        2 => leaf,
        1 => (issue_cond(), i.clone()).prop_map(|(p, d)| format!("issues.filter(|i| {p}).first().unwrap_or({d})")),
        1 => i.clone().prop_map(|d| format!("issues.last().unwrap_or({d})")),
        1 => (issue_cond(), i.clone()).prop_map(|(p, d)| format!("issues.fold({d}, |acc, i| if {p} {{ i }} else {{ acc }})")),
        1 => (c, i.clone(), i).prop_map(|(c, a, b)| format!("(if {c} {{ {a} }} else {{ {b} }})")),
    ]
    .boxed()
}

/// A title or comment the checker can prove non-empty: mostly the plan's own text (derived
/// text is often blocked, which ends the run).
fn nonempty() -> BoxedStrategy<String> {
    prop_oneof![
        2 => prop::sample::select(vec!["\"Weekly triage\"", "\"Build\"", "\"Thanks!\""]).prop_map(String::from),
        1 => text(1).prop_map(|t| format!("\"Re: \" + {t}")),
    ]
    .boxed()
}

/// One step of the plan; each posts (or may post) and threads the session.
fn step() -> BoxedStrategy<String> {
    prop_oneof![
        2 => (repo(2), nonempty(), text(2)).prop_map(|(r, t, b)| format!("let (mine, s) = gh.create_issue(s, {r}, {t}, {b});")),
        3 => (repo(2), issue(2), nonempty()).prop_map(|(r, i, b)| format!("let s = gh.comment(s, {r}, {i}, {b});")),
        1 => (repo(1), cond(2), text(1), text(1))
            .prop_map(|(r, c, t, b)| format!("let s = maybe_issue(gh, s, {r}, {c}, {t}, {b});")),
        1 => (repo(1), issue(1), cond(2), text(1))
            .prop_map(|(r, i, c, b)| format!("let s = maybe_comment(gh, s, {r}, {i}, {c}, {b});")),
        1 => (repo(1), issue(1), list(2)).prop_map(|(r, i, l)| format!("let s = comment_each(gh, s, {r}, {i}, {l}, 0);")),
        1 => (repo(1), list(2)).prop_map(|(r, l)| format!("let s = issue_each(gh, s, {r}, {l}, 0);")),
    ]
    .boxed()
}

/// The reads every plan makes, in a random order.
fn sources() -> BoxedStrategy<Vec<String>> {
    let query = prop::sample::select(vec!["\"initech\"", "\"roadmap\"", "\"q1\"", "\"build\"", "\"sandbox\""]);
    let readme = prop::sample::select(vec!["web, \"README.md\"", "notes, \"notes.md\"", "web, \"index.html\""]);
    // alice/website has most of the issues outsiders wrote.
    let listed = prop::sample::select(vec!["web", "web", "web", "notes", "lib"]);
    (query, listed, readme)
        .prop_map(|(q, listed, readme)| {
            vec![
                format!("let hits = gh.search_code({q});"),
                "let repos = gh.list_repos();".to_string(),
                format!("let (issues, s) = gh.list_issues(s, {listed});"),
                format!("let (readme, s) = gh.read_file(s, {readme});"),
                "let (theirs, s) = gh.read_file(s, lib, \"README.md\");".to_string(),
            ]
        })
        .prop_shuffle()
        .boxed()
}

/// The plan's first post, which gives `mine`: its arguments cannot name `mine` yet.
fn first_post() -> BoxedStrategy<String> {
    // Mostly text alice may publish, so that most runs get past their first post (a blocked
    // call ends the run, and the steps after it compare nothing).
    let body = prop_oneof![
        4 => prop::sample::select(vec!["\"\"", "\"Go through the open issues.\"", "readme"]),
        1 => prop::sample::select(vec![
            "theirs",
            "hits.join(\", \")",
            "issues.map(|i| i.title).join(\", \")",
            "to_string(repos.len())",
        ]),
    ];
    (prop::sample::select(vec!["web", "notes", "lib"]), body)
        .prop_map(|(r, b)| format!("let (mine, s) = gh.create_issue(s, {r}, \"Weekly triage\", {b});"))
        .boxed()
}

/// The plan's result: an answer for the user (anything may go into it), after reading the
/// private roadmap or not (the checker refuses a post after that read: it taints the session),
/// or reading it only if a condition on protected data holds: then whether the session the
/// next request gets is tainted depends on that data, and what its checker is told must not.
fn ending() -> BoxedStrategy<String> {
    let read = |t: &str| {
        format!(
            "match gh.private_repo(\"secret-plans\") {{\n  Some(vault) => {{ let (plan, s) = gh.read_file(s, vault, \"roadmap.md\"); ({t} + plan, s) }},\n  None => ({t}, s),\n}}"
        )
    };
    prop_oneof![
        text(1).prop_map(|t| format!("({t}, s)")),
        text(1).prop_map(move |t| read(&t)),
        (cond(1), text(1)).prop_map(move |(c, t)| format!("if {c} {{ {} }} else {{ ({t}, s) }}", read(&t))),
    ]
    .boxed()
}

/// A generated plan. Shown (in a failure) without [`HELPERS`], which every plan starts with.
#[derive(Clone)]
struct Plan(String);

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<the helpers>{}", self.0.strip_prefix(HELPERS).unwrap_or(&self.0))
    }
}

/// A whole plan: the helpers; the three public repositories, each checked to be public; the
/// reads; a first post; one to four more steps; the answer.
fn plan() -> impl Strategy<Value = Plan> {
    (sources(), first_post(), prop::collection::vec(step(), 1..5), ending()).prop_map(|(sources, first, steps, end)| {
        let body = [sources.join("\n"), first, steps.join("\n"), end].join("\n");
        Plan(format!(
            "{HELPERS}
match gh.repo(\"alice\", \"website\") {{
  Some(web) => if web.private {{ (\"alice/website is private\", s) }} else {{
  match gh.repo(\"alice\", \"cordon-notes\") {{
  Some(notes) => if notes.private {{ (\"alice/cordon-notes is private\", s) }} else {{
  match gh.repo(\"bob\", \"lib\") {{
  Some(lib) => if lib.private {{ (\"bob/lib is private\", s) }} else {{
{body}
  }},
  None => (\"no bob/lib\", s),
  }} }},
  None => (\"no alice/cordon-notes\", s),
  }} }},
  None => (\"no alice/website\", s),
}}
"
        ))
    })
}

// ---------------------------------------------------------------- counting cases

/// How many plans were generated, accepted by the checker, and published something in at
/// least one run.
#[derive(Default)]
struct Counts {
    cases: Cell<u32>,
    accepted: Cell<u32>,
    published: Cell<u32>,
}

fn bump(c: &Cell<u32>) {
    c.set(c.get() + 1);
}

/// Plans per property (about 5 s in a debug build); `PROPTEST_CASES` overrides.
const CASES: u32 = 300;

/// Runs the `what` property on generated plans, shrinking a failure to a small plan.
fn run_property(what: Protected) -> Counts {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(CASES);
    let config = ProptestConfig {
        cases,
        max_shrink_iters: 400,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(SEED),
        ..ProptestConfig::default()
    };
    let counts = Counts::default();
    let result = TestRunner::new(config).run(&plan(), |Plan(plan)| -> TestCaseResult {
        bump(&counts.cases);
        let Ok(program) = accept(&plan) else { return Ok(()) };
        bump(&counts.accepted);
        let seen = compare_variants(&program, what).map_err(TestCaseError::fail)?;
        if seen.iter().any(|o| !o.effects.is_empty()) {
            bump(&counts.published);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    counts
}

/// The floors every property must reach. 80% of the plans accepted: the grammar builds only
/// plans it expects the checker to accept (all 300 of 300 were, when this was written). 50% of
/// them publishing something in some run: a post of derived text is often blocked, and a
/// blocked call ends the run, but the first post mostly carries the plan's own text (83-87%
/// published something, when this was written).
fn assert_floors(counts: &Counts) {
    let (cases, accepted, published) = (counts.cases.get(), counts.accepted.get(), counts.published.get());
    println!("{cases} plans, {accepted} accepted, {published} published something");
    assert!(accepted * 100 >= 80 * cases, "only {accepted} of {cases} plans were accepted (the floor is 80%)");
    assert!(published * 100 >= 50 * cases, "only {published} of {cases} plans published anything (the floor is 50%)");
}

#[test]
fn secrets_never_change_what_is_published() {
    assert_floors(&run_property(Protected::Secret));
}

#[test]
fn outsiders_never_change_what_the_user_publishes() {
    assert_floors(&run_property(Protected::Outsider));
}

// ---------------------------------------------------------------- the harness itself

/// Wraps a body in the lookups of alice/website and bob/lib, both checked to be public.
fn on_public_repos(body: &str) -> String {
    format!(
        "match gh.repo(\"alice\", \"website\") {{
  Some(web) => if web.private {{ (\"private\", s) }} else {{
  match gh.repo(\"bob\", \"lib\") {{
    Some(lib) => if lib.private {{ (\"private\", s) }} else {{
{body}
    }},
    None => (\"no bob/lib\", s),
  }} }},
  None => (\"no alice/website\", s),
}}"
    )
}

/// Every public effect of `plan` against the built-in state.
fn published(plan: &str) -> Vec<String> {
    let program = accept(plan).unwrap_or_else(|e| panic!("rejected: {e:?}\n{plan}"));
    cordon_sim::noninterference::observe(&program, &builtin(), &limits())
        .effects
        .iter()
        .map(|e| e.to_string())
        .collect()
}

#[test]
fn a_plan_that_publishes_only_its_own_text_passes_and_is_seen_publishing() {
    let plan = on_public_repos(
        r#"      let hits = gh.search_code("initech");
      let (issues, s) = gh.list_issues(s, web);
      let (mine, s) = gh.create_issue(s, web, "Weekly triage", "Go through the open issues.");
      let s = gh.comment(s, web, mine, "Thanks");
      (to_string(hits.len()) + " hits, " + to_string(issues.len()) + " issues", s)"#,
    );
    assert_eq!(
        published(&plan),
        [
            r#"create_issue(s: <Session>, r: Repo alice/website, title: "Weekly triage", body: "Go through the open issues.")"#,
            r#"comment(s: <Session>, r: Repo alice/website, issue: Issue #5, body: "Thanks")"#,
        ]
    );
    assert_eq!(check_differential(&plan), Ok(()));
}

#[test]
fn the_seed_attacks_are_blocked_so_nothing_differs() {
    for plan in [
        include_str!("../../../examples/github/benign.cord"),
        include_str!("../../../examples/github/exfiltrate_via_search.cord"),
        include_str!("../../../examples/github/injected_issue.cord"),
    ] {
        assert_eq!(check_differential(plan), Ok(()), "{plan}");
    }
}

#[test]
fn a_secret_in_a_published_argument_with_a_sink_is_blocked_in_every_variant() {
    // The body has a sink: a secret there is refused, and nothing is published in any run.
    let plan = on_public_repos(
        r#"      let hits = gh.search_code("initech");
      let (mine, s) = gh.create_issue(s, web, "Build log", hits.join(", "));
      ("posted", s)"#,
    );
    assert_eq!(check_differential(&plan), Ok(()));
    let program = accept(&plan).unwrap();
    for o in compare_variants(&program, Protected::Secret).unwrap() {
        assert!(o.effects.is_empty() && o.ending.as_ref().is_err_and(|e| e.starts_with("label-flow")), "{o:?}");
    }
}

// ---------------------------------------------------------------- the leaks found, closed

/// Asserts that `plan`, which once leaked `what` data, publishes the same in every variation:
/// its publishing call is refused in every run (`label-flow`), whatever the variation.
fn assert_closed(plan: &str, what: Protected) {
    let program = accept(plan).unwrap_or_else(|e| panic!("rejected: {e:?}\n{plan}"));
    let outcomes = compare_variants(&program, what).unwrap_or_else(|e| panic!("{e}\n{plan}"));
    for o in outcomes {
        assert!(o.ending.as_ref().is_err_and(|e| e.starts_with("label-flow")), "not refused: {o:?}\n{plan}");
    }
    assert_eq!(check_differential(plan), Ok(()));
}

/// Found by the secret property when `create_issue`'s repository had no sink: a repository
/// chosen by a secret was posted to. Every argument has a sink now.
#[test]
fn a_repository_chosen_by_a_secret_is_refused() {
    assert_closed(
        &on_public_repos(
            r#"      let hits = gh.search_code("initech");
      let (i, s) = gh.create_issue(s, if hits.len() > 0 { web } else { lib }, "Hello", "");
      ("done", s)"#,
        ),
        Protected::Secret,
    );
}

/// Found when `comment`'s `issue` had no sink: an issue chosen by a secret was commented on.
#[test]
fn an_issue_chosen_by_a_secret_is_refused() {
    assert_closed(
        &on_public_repos(
            r#"      let hits = gh.search_code("initech");
      let (mine, s) = gh.create_issue(s, web, "Hello", "");
      let (issues, s) = gh.list_issues(s, web);
      let s = gh.comment(s, web, if hits.len() > 0 { mine } else { issues.first().unwrap_or(mine) }, "Thanks");
      ("done", s)"#,
        ),
        Protected::Secret,
    );
}

/// The same for integrity: an outsider's issue title decided which repository alice posts to.
#[test]
fn a_repository_chosen_by_an_outsider_is_refused() {
    assert_closed(
        &on_public_repos(
            r#"      let (issues, s) = gh.list_issues(s, web);
      let (i, s) = gh.create_issue(s, if issues.any(|i| i.title.contains("Typo")) { web } else { lib }, "Hello", "");
      ("done", s)"#,
        ),
        Protected::Outsider,
    );
}

/// An outsider's issue title decided which issue alice comments on.
#[test]
fn an_issue_chosen_by_an_outsider_is_refused() {
    assert_closed(
        &on_public_repos(
            r#"      let (mine, s) = gh.create_issue(s, web, "Hello", "");
      let (issues, s) = gh.list_issues(s, web);
      let s = gh.comment(s, web, issues.filter(|i| i.title.contains("Typo")).first().unwrap_or(mine), "Thanks");
      ("done", s)"#,
        ),
        Protected::Outsider,
    );
}

/// How many private repositories alice has was publishable when `list_repos` listed them
/// unlabelled. They are listed by `list_private_repos` now, secret to the user.
#[test]
fn how_many_private_repositories_exist_is_refused() {
    assert_closed(
        &on_public_repos(
            r#"      let n = gh.list_private_repos().len();
      let (i, s) = gh.create_issue(s, web, "Hello", to_string(n));
      ("done", s)"#,
        ),
        Protected::Secret,
    );
}

/// Whether alice has a private repository of a given name: `private_repo`'s answer, even
/// `None`, is secret to the user.
#[test]
fn whether_a_private_repository_exists_is_refused() {
    assert_closed(
        &on_public_repos(
            r#"      let found = match gh.private_repo("acquisition") { Some(r) => "yes", None => "no" };
      let (i, s) = gh.create_issue(s, web, "Hello", found);
      ("done", s)"#,
        ),
        Protected::Secret,
    );
}

// ---------------------------------------------------------------- the static summary is sound

/// Runs `plan` and holds every call the boundary proposes (label failures deferred, so the
/// calls it would refuse are seen too) against the static summary (`cordon_flow::analyze`):
/// the call is one the summary lists, made no more often than it says; its decision label and
/// each argument's own label lie within the summary's bounds; an argument or decision the
/// summary calls within its sink fails no check, and one it says must fail does fail. A call
/// that fails a check is then refused, as the boundary would have.
fn check_summary(plan: &str) -> Result<bool, String> {
    use cordon_syntax::SourceMap;

    let mut sources = SourceMap::new();
    let policy = sources.add("github.cord", POLICY);
    let file = sources.add("plan.cord", plan);
    let outcome = cordon_types::check(&sources, &[policy], Some(file), &cordon_types::CheckOptions::default());
    let Some(checked) = outcome.program.as_ref() else { return Ok(false) };
    let mut gh = builtin();
    let summary = cordon_flow::analyze(checked, &sources, gh.user());
    if !summary.complete {
        return Err("the summary gave up on a generated plan".into());
    }
    let program = Program::new(checked).map_err(|e| e.message)?;
    let user = gh.user().to_string();
    proposed::within(&summary, &proposed::proposed(&program, &mut gh, &user, &limits())?)?;
    Ok(true)
}

/// Soundness of the static label analysis against the run time, on the same random plans.
#[test]
fn the_static_summary_bounds_every_call_the_run_makes() {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(CASES);
    let config = ProptestConfig {
        cases,
        max_shrink_iters: 400,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(SEED),
        ..ProptestConfig::default()
    };
    let checked = Cell::new(0u32);
    let result = TestRunner::new(config).run(&plan(), |Plan(plan)| -> TestCaseResult {
        if check_summary(&plan).map_err(TestCaseError::fail)? {
            bump(&checked);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(checked.get() * 100 >= 80 * cases, "only {} of {cases} plans were checked", checked.get());
}
