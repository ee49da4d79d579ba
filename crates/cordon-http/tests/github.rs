//! Every tool of `policies/github.cord` served by the REST host, against a loopback mock of
//! GitHub's API (`tests/web/github.py`, over the simulated GitHub's data), each request through a
//! real broker with the token put in by it: the answers are the policy's types, the same the
//! simulation gives; a path cannot leave the repository's contents; a token the API refuses or a
//! vault without one is an error before anything runs.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/mod.rs"]
mod common;
#[path = "../../../tests/web/web.rs"]
mod web;

use std::sync::Arc;

use common::Source;
use cordon_broker::{Broker, Client};
use cordon_http::github::GitHubRest;
use cordon_runtime::{Config, Sessions};
use cordon_vault::{Destination, Entry, SecretValue};
use web::Web;

const TOKEN: &str = "mock-token-Zq81LmX2vB7";

/// A broker holding `value` as `name`, bound to `api`, served on a socket in `dir`.
fn broker(api: &Web, name: &str, value: &str, dir: &std::path::Path) -> Arc<Client> {
    let entry = Entry {
        name: name.into(),
        destinations: vec![Destination::parse(&api.url("")).unwrap()],
        header: "Authorization".into(),
        scheme: Some("Bearer".into()),
        programs: Vec::new(),
    };
    let broker = Broker::with_secrets(vec![(entry, SecretValue::from(value))]);
    Arc::new(broker.serve_on_thread(&dir.join("broker.sock")).unwrap())
}

/// Checks and runs `plan` against the mock: how it ended.
fn run(api: &Web, plan: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut host = GitHubRest::open(broker(api, "GITHUB_TOKEN", TOKEN, dir.path()), &api.url("/")).unwrap();
    assert_eq!(host.login(), "alice");
    let program = Source::new(Some(cordon_http::github::POLICY), plan).check_with(None).unwrap();
    let config = Config { user: "alice".into(), ..Config::default() };
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut host);
    common::ending(&report)
}

#[test]
fn every_tool_answers_as_the_policy_declares() {
    let api = Web::github(TOKEN);
    let plan = r#"
let public = gh.list_repos().map(|r| r.name).join(",");
let private = gh.list_private_repos().map(|r| r.name).join(",");
let hidden = match gh.repo("carol", "infra") { Some(_) => "seen", None => "hidden" };
let internal = match gh.repo("acme", "billing") { Some(_) => "seen", None => "hidden" };
let org = gh.org_repos("acme").map(|r| f"{r.owner}/{r.name} {r.internal} {r.private}").join(",");
let mine = match gh.private_repo("secret-plans") { Some(r) => r.name, None => "none" };
match gh.repo("bob", "lib") {
  Some(lib) => if lib.private { ("private", s) } else {
    let (code, s) = gh.read_file(s, lib, "src/lib.rs");
    let (issues, s) = gh.list_issues(s, lib);
    let first = issues.first();
    let s = match first { Some(i) => gh.comment(s, lib, i, "Thanks, " + i.author + "."), None => s };
    let found = gh.search_code("make site").len();
    (public + " | " + private + " | " + hidden + " | " + internal + " | " + org + " | " + mine + " | " + to_string(code.len() > 0) + " | "
      + to_string(issues.len()) + " | " + to_string(found > 0), s)
  },
  None => ("no lib", s),
}"#;
    let ending = run(&api, plan);
    assert_eq!(
        ending,
        r#"("website,cordon-notes | secret-plans | hidden | hidden | acme/billing true false | secret-plans | true | 1 | true", <Session #11>)"#
    );
    let received = api.received();
    assert!(received.contains(r#""method": "POST", "path": "/repos/bob/lib/issues/1/comments""#), "{received}");
    assert!(received.contains(r#""path": "/repos/bob/lib/contents/src/lib.rs""#), "{received}");
}

#[test]
fn a_path_stays_inside_the_repositorys_contents() {
    let api = Web::github(TOKEN);
    let plan = r#"
match gh.repo("alice", "website") {
  Some(r) => {
    let (text, s) = gh.read_file(s, r, "../../../user");
    (text, s)
  },
  None => ("none", s),
}"#;
    // The tool fails (`has no file`), and what was asked for is a name under the contents.
    assert_eq!(run(&api, plan), "tool-failed");
    let received = api.received();
    let last = received.lines().last().unwrap();
    assert!(last.contains("/repos/alice/website/contents/"), "{last}");
}

#[test]
fn a_token_the_api_refuses_or_a_vault_without_one_stops_before_anything_runs() {
    let api = Web::github(TOKEN);
    let dir = tempfile::tempdir().unwrap();
    let wrong = GitHubRest::open(broker(&api, "GITHUB_TOKEN", "not-the-token-Xy9", dir.path()), &api.url("/"));
    assert!(wrong.unwrap_err().contains("GitHub answered 401"));
    let dir = tempfile::tempdir().unwrap();
    let missing = GitHubRest::open(broker(&api, "OTHER_TOKEN", TOKEN, dir.path()), &api.url("/"));
    assert!(missing.unwrap_err().contains("cordon secrets add GITHUB_TOKEN"));
}
