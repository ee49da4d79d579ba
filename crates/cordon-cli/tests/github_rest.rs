//! `--env github-rest`: the GitHub example plans against GitHub's REST API, here a loopback mock
//! of the endpoints the host uses (`tests/web/github.py`, seeded with the simulated GitHub's data
//! file), through the credential broker with the vault's token. The same plans end the same way
//! as against the simulation: benign work runs and opens its issue; the lethal trifecta is a type
//! error, and a search's secrets or an injected issue's text are not published (no one at the gate
//! releases them); and the token reaches the API only in its `Authorization` header.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::path::{Path, PathBuf};

mod common;
#[path = "../../../tests/web/web.rs"]
mod web;

use common::{VAULT_KEY as KEY, add_secret, command, example, workdir, yes};
use web::Web as Api;

const TOKEN: &str = "mock-token-Zq81LmX2vB7";

/// A directory with the token in its vault, bound to `api`, and the mock running.
fn setup(name: &str) -> (PathBuf, Api) {
    let dir = workdir("cli-github-rest", name);
    let api = Api::github(TOKEN);
    let origin = format!("http://127.0.0.1:{}", api.port);
    add_secret(&dir, &["GITHUB_TOKEN", "--host", &origin, "--scheme", "Bearer"], TOKEN);
    (dir, api)
}

/// `cordon run --env github-rest PLAN` against the mock, answering yes to every card if `approve`
/// (else no one is asked, and cards are refused).
fn run(dir: &Path, api: &Api, plan: &str, approve: bool) -> (String, i32) {
    let answers = yes(dir);
    let mut args = vec!["run", "--env", "github-rest", plan];
    if approve {
        args.extend(["--approve", &answers]);
    }
    let output = command(dir, &args)
        .env("CORDON_VAULT_KEY", KEY)
        .env("CORDON_GITHUB_API", format!("http://127.0.0.1:{}/", api.port))
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (said, output.status.code().unwrap_or(-1))
}

#[test]
fn benign_work_runs_against_the_api() {
    let (dir, api) = setup("benign");
    let (said, code) = run(&dir, &api, &example("github/benign.cord"), true);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("ran to the end"), "{said}");
    let received = api.received();
    assert!(received.contains(r#""method": "POST", "path": "/repos/alice/website/issues""#), "{received}");
    // The token goes only in its header, with its scheme; no one sees it.
    let with_token: Vec<&str> = received.lines().filter(|l| l.contains(TOKEN)).collect();
    assert_eq!(with_token.len(), received.lines().count(), "every request carries the token");
    assert!(with_token.iter().all(|l| l.contains(&format!(r#"["authorization", "Bearer {TOKEN}"]"#))));
    assert!(!said.contains(TOKEN), "{said}");
    // A request's principal is the account the token is for.
    assert!(said.contains("alice"), "{said}");
}

#[test]
fn the_lethal_trifecta_posts_nothing() {
    let (dir, api) = setup("trifecta");
    for plan in ["github/exfiltrate_private.cord", "github/exfiltrate_via_search.cord", "github/injected_issue.cord"] {
        let (said, code) = run(&dir, &api, &example(plan), false);
        assert_ne!(code, 0, "{plan}: {said}");
    }
    let received = api.received();
    assert!(!received.contains(r#""method": "POST""#), "{received}");
}

#[test]
fn without_the_token_nothing_runs() {
    let dir = workdir("cli-github-rest", "no_token");
    let output = command(&dir, &["run", "--env", "github-rest", &example("github/benign.cord")]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cordon secrets add GITHUB_TOKEN"), "{stderr}");
}
