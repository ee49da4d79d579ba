//! An organisation's internal repositories (`acme/billing` in the built-in data): visible to its
//! members only, their content the group `github:acme`'s, which may go into acme's internal
//! issues and nowhere else. Every way out a plan could try (a public issue's body or title, a
//! comment on the organisation's own public repository, a code search) is refused at run time
//! with the checker bypassed, before GitHub sees it; the internal work runs.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/mod.rs"]
mod common;

use common::{Recorder, Source, ending};
use cordon_engine::Report;
use cordon_runtime::{Config, Program, Sessions};
use cordon_sim::GitHub;
use cordon_sim::github::POLICY;

/// Text of acme's internal files and issues in the built-in data.
const INTERNAL: [&str; 3] = ["48 EUR per seat", "Globex", "VAT is rounded on each line"];

/// The environment after a run, how the run went and the tools it called.
fn run(program: &Program) -> (GitHub, Report, Vec<String>) {
    let mut gh = GitHub::builtin().unwrap();
    let config = Config { user: gh.user().to_string(), ..Config::default() };
    let mut host = Recorder::around(&mut gh);
    let report = cordon_engine::run(program, &Sessions::default(), &config, &mut host);
    let calls = host.calls.iter().map(|c| c.tool.clone()).collect();
    drop(host);
    (gh, report, calls)
}

fn plan(text: &str) -> Source {
    Source::new(Some(POLICY), text)
}

fn assert_nothing_internal_published(name: &str, gh: &GitHub) {
    for text in INTERNAL {
        assert!(!gh.published(text), "{name}: `{text}` was published");
    }
}

/// The built-in data with `user` as the account.
fn acting_for(user: &str) -> GitHub {
    let mut data = GitHub::builtin().unwrap().data().clone();
    data.user = user.into();
    GitHub::from_json(&serde_json::to_string(&data).unwrap()).unwrap()
}

#[test]
fn an_internal_repository_is_seen_by_the_organisations_members_only() {
    let alice = GitHub::builtin().unwrap();
    assert!(alice.repo("acme", "billing").is_some_and(|r| r.internal && !r.private));
    let dave = acting_for("dave");
    assert!(dave.repo("acme", "billing").is_none(), "dave is not in acme");
    assert!(dave.repo("acme", "sdk").is_some(), "acme/sdk is public");
    assert!(!dave.visible_repos().any(|r| r.internal));
}

#[test]
fn what_is_posted_on_an_internal_repository_is_not_published() {
    let mut gh = GitHub::builtin().unwrap();
    gh.open_issue("acme", "billing", "bob", "Internal only", "between us").unwrap();
    assert!(!gh.published("between us"));
    gh.open_issue("acme", "sdk", "bob", "Public", "for everyone").unwrap();
    assert!(gh.published("for everyone"));
}

#[test]
fn a_data_file_with_a_malformed_organisation_is_refused_saying_why() {
    let base: serde_json::Value = serde_json::from_str(cordon_sim::github::DATA).unwrap();
    let with = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut data = base.clone();
        change(&mut data);
        GitHub::from_json(&data.to_string()).unwrap_err()
    };
    let billing = |d: &mut serde_json::Value| {
        let repos = d["repos"].as_array_mut().unwrap();
        repos.iter_mut().find(|r| r["name"] == "billing").unwrap().clone()
    };
    let private_and_internal = with(&|d| {
        let mut r = billing(d);
        (r["name"], r["private"]) = ("books".into(), true.into());
        d["repos"].as_array_mut().unwrap().push(r);
    });
    assert!(private_and_internal.contains("`acme/books` is internal"), "{private_and_internal}");
    let not_an_org = with(&|d| {
        let mut r = billing(d);
        r["owner"] = "bob".into();
        d["repos"].as_array_mut().unwrap().push(r);
    });
    assert!(not_an_org.contains("`bob/billing` is internal"), "{not_an_org}");
    let twice = with(&|d| {
        let org = d["orgs"][0].clone();
        d["orgs"].as_array_mut().unwrap().push(org);
    });
    assert!(twice.contains("the organisation `acme` is listed twice"), "{twice}");
}

#[test]
fn the_internal_work_runs_and_stays_inside() {
    let summary = include_str!("../../../examples/github/org_summary.cord");
    let (gh, report, calls) = run(&plan(summary).checked());
    let answer = ending(&report);
    assert!(answer.contains("Acme's invoicing service") && answer.contains("#2 Release checklist"), "{answer}");
    assert_eq!(calls, ["org_repos", "read_file", "list_issues"]);
    assert_nothing_internal_published("org_summary", &gh);

    let followup = include_str!("../../../examples/github/org_followup.cord");
    let (gh, report, _) = run(&plan(followup).checked());
    let answer = ending(&report);
    assert!(answer.starts_with("(\"Opened #3 in acme/billing.\""), "{answer}");
    let billing = gh.repo("acme", "billing").unwrap();
    assert!(billing.issues.iter().any(|i| i.body.contains("Follow-up to #1 by @bob")));
    assert!(!gh.published("Follow-up"));
}

/// What comes back from an internal repository is acme's: by the label `org_repos` gives the
/// repository (a call's result carries the labels of what chose it) and by the one the read
/// declares, either of which keeps it inside.
#[test]
fn what_is_read_from_an_internal_repository_is_the_organisations() {
    let reads = [
        ("the repository", "(b.name, s)"),
        ("a file", "gh.read_file(s, b, \"docs/pricing.md\")"),
        ("the issues", "{ let (issues, s) = gh.list_issues(s, b); (issues.map(|i| i.title).join(\", \"), s) }"),
    ];
    for (what, read) in reads {
        let text = format!(
            "match gh.org_repos(\"acme\").filter(|r| r.name == \"billing\").first() {{\n  Some(b) => {read},\n  None => (\"none\", s),\n}}"
        );
        let (_, report, _) = run(&plan(&text).checked());
        let answer = report.result.as_ref().unwrap_or_else(|e| panic!("{what}: {e}"));
        let cordon_runtime::value::Value::Tuple(parts) = &answer.value else { panic!("{what}: {}", answer.value) };
        let secrecy = cordon_runtime::deep_label(&parts[0]).dc().secrecy_in_words();
        assert_eq!(secrecy, "secret to the group github:acme", "{what}");
    }
}

/// Plans that take acme's internal text out, each with the call that must be refused.
const EXFILTRATIONS: [(&str, &str, &str); 4] = [
    ("pricing_in_a_public_issue", include_str!("../../../examples/github/org_pricing_to_public.cord"), "create_issue"),
    (
        "pricing_as_a_public_title",
        r#"match gh.repo("alice", "website") {
  Some(site) => if site.private { ("private", s) } else {
    match gh.org_repos("acme").filter(|r| r.name == "billing").first() {
      Some(b) => {
        let (pricing, s) = gh.read_file(s, b, "docs/pricing.md");
        let (i, s) = gh.create_issue(s, site, "Prices: " + pricing, "see the title");
        ("posted", s)
      },
      None => ("none", s),
    }
  },
  None => ("none", s),
}"#,
        "create_issue",
    ),
    (
        "internal_issue_on_the_orgs_public_repo",
        r#"match gh.repo("acme", "sdk") {
  Some(sdk) => if sdk.private { ("private", s) } else {
    let (public, s) = gh.list_issues(s, sdk);
    match (public.first(), gh.org_repos("acme").filter(|r| r.name == "billing").first()) {
      (Some(first), Some(b)) => {
        let (internal, s) = gh.list_issues(s, b);
        let s = gh.comment(s, sdk, first, internal.map(|i| i.body).join("\n"));
        ("commented", s)
      },
      _ => ("none", s),
    }
  },
  None => ("none", s),
}"#,
        "comment",
    ),
    (
        "pricing_as_a_search",
        r#"match gh.org_repos("acme").filter(|r| r.name == "billing").first() {
  Some(b) => {
    let (pricing, s) = gh.read_file(s, b, "docs/pricing.md");
    (gh.search_code(pricing + " ").join("\n"), s)
  },
  None => ("none", s),
}"#,
        "search_code",
    ),
];

#[test]
fn no_plan_takes_an_organisations_data_out_even_without_the_checker() {
    for (name, text, sink) in EXFILTRATIONS {
        let (gh, report, calls) = run(&plan(text).unchecked());
        let e = report.result.as_ref().err().unwrap_or_else(|| panic!("{name} ran: {calls:?}"));
        assert_eq!(e.kind.code().as_str(), "label-flow", "{name}: {e}");
        assert!(e.message.contains(sink), "{name}: refused elsewhere: {}", e.message);
        assert!(!calls.iter().any(|c| c == sink), "{name}: GitHub saw the `{sink}` call");
        assert_nothing_internal_published(name, &gh);
    }
}
