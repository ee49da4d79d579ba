//! `cordon serve` as a person and an attacker meet it: the real server, over real HTTP on
//! loopback. A request waits at its card until its principal answers it, on the page or over
//! the API; everything else is refused: no token, a cross-site form, a form without its CSRF
//! token, another person's run, a replayed answer, a flagged card approved without typing the
//! end of its value, a host name that is not loopback; and no value on the page is markup or
//! can forge a line.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::time::Duration;

use common::served::{
    Got, Served, TWENTY_CALLS, bearer, ended, http, made_no_effect_twice, serve, serve_with, submit, until, waiting,
    write_plan,
};
use common::{command, workdir};

/// Lets `name` in; their token.
fn add_user(dir: &std::path::Path, name: &str) -> String {
    common::served::add_user(dir, name, &[])
}

/// Signs in with `token` on the page: the session cookie and the CSRF token of its forms.
fn sign_in(port: u16, token: &str) -> (String, String) {
    let form = format!("token={token}");
    let got = http(port, "POST", "/sign-in", &[("Content-Type", "application/x-www-form-urlencoded")], &form);
    assert_eq!(got.status, 303, "{got:?}");
    let set = got.header("set-cookie").expect("a cookie").to_string();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set.contains(attribute), "{set}");
    }
    let cookie = set.split(';').next().unwrap().to_string();
    let home = http(port, "GET", "/", &[("Cookie", &cookie)], "");
    let csrf = home.body.split("name=\"csrf\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
    (cookie, csrf)
}

/// Posts a form as the page would.
fn post_form(port: u16, cookie: &str, path: &str, form: &str, origin: Option<&str>) -> Got {
    let own = format!("http://127.0.0.1:{port}");
    let mut headers = vec![("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded")];
    headers.push(("Origin", origin.unwrap_or(&own)));
    http(port, "POST", path, &headers, form)
}

#[test]
fn a_run_waits_at_its_card_until_its_principal_answers_it_over_the_api() {
    let dir = workdir("serve", "api");
    let (alice, bob) = (add_user(&dir, "alice"), add_user(&dir, "bob"));
    let server = serve(&dir, &[]);
    let port = server.port;
    let run = submit(port, &alice, &write_plan("a.txt", "hello"));
    let parked = until(port, &alice, run, waiting);
    assert!(!dir.join("out/a.txt").exists(), "nothing before the answer");
    assert!(parked["card"]["text"].as_str().unwrap().contains("a.txt"), "{parked}");
    let seal = parked["seal"].as_str().unwrap().to_string();
    let answer = serde_json::json!({ "seal": seal, "answer": "yes" }).to_string();

    // No token, a wrong one, and another person's: refused, and bob does not see alice's run.
    let path = format!("/api/runs/{run}/answer");
    assert_eq!(http(port, "POST", &path, &[], &answer).status, 401);
    assert_eq!(http(port, "POST", &path, &[("Authorization", "Bearer cordon_00")], &answer).status, 401);
    assert_eq!(http(port, "POST", &path, &[("Authorization", &bearer(&bob))], &answer).status, 404);
    assert_eq!(http(port, "GET", &format!("/api/runs/{run}"), &[("Authorization", &bearer(&bob))], "").status, 404);
    // A seal that is not the card's.
    let other = serde_json::json!({ "seal": "00".repeat(32), "answer": "yes" }).to_string();
    assert_eq!(http(port, "POST", &path, &[("Authorization", &bearer(&alice))], &other).status, 409);

    let got = http(port, "POST", &path, &[("Authorization", &bearer(&alice))], &answer);
    assert_eq!(got.status, 200, "{got:?}");
    let replayed = http(port, "POST", &path, &[("Authorization", &bearer(&alice))], &answer);
    assert_eq!(replayed.status, 409, "a replayed answer: {replayed:?}");
    let done = until(port, &alice, run, ended);
    assert_eq!(done["result"]["result"], "wrote", "{done}");
    assert_eq!(std::fs::read_to_string(dir.join("out/a.txt")).unwrap(), "hello");
}

#[test]
fn the_page_answers_only_its_own_signed_in_forms() {
    let dir = workdir("serve", "page");
    let alice = add_user(&dir, "alice");
    let server = serve(&dir, &[]);
    let port = server.port;
    let run = submit(port, &alice, &write_plan("a.txt", "hello"));
    let seal = until(port, &alice, run, waiting)["seal"].as_str().unwrap().to_string();
    let (cookie, csrf) = sign_in(port, &alice);
    let page = http(port, "GET", &format!("/runs/{run}"), &[("Cookie", &cookie)], "");
    assert_eq!(page.status, 200);
    assert!(page.body.contains(&seal), "the form names the card it shows");
    for header in ["content-security-policy", "x-frame-options", "cache-control"] {
        assert!(page.header(header).is_some(), "{header}: {:?}", page.headers);
    }
    assert!(!page.body.contains("<script"), "no script at all");

    let path = format!("/runs/{run}/answer");
    let form = format!("csrf={csrf}&seal={seal}&answer=yes");
    // From another site, without the token, with a wrong one, without the cookie.
    for origin in ["http://evil.example", "null", "http://127.0.0.1:1"] {
        let cross = post_form(port, &cookie, &path, &form, Some(origin));
        assert_eq!(cross.status, 403, "{origin}: {cross:?}");
    }
    assert_eq!(post_form(port, &cookie, &path, &format!("seal={seal}&answer=yes"), None).status, 403);
    assert_eq!(
        post_form(port, &cookie, &path, &format!("csrf={}&seal={seal}&answer=yes", "0".repeat(64)), None).status,
        403
    );
    assert_eq!(post_form(port, "cordon_session=forged", &path, &form, None).status, 401);
    // A page reached by a name that is not loopback (DNS rebinding) is refused.
    let rebound = http(port, "GET", "/", &[("Host", "evil.example"), ("Cookie", &cookie)], "");
    assert_eq!(rebound.status, 403);
    assert!(!dir.join("out/a.txt").exists(), "nothing was answered");

    let got = post_form(port, &cookie, &path, &form, None);
    assert_eq!(got.status, 303, "{got:?}");
    assert_eq!(post_form(port, &cookie, &path, &form, None).status, 409, "a second answer");
    assert_eq!(until(port, &alice, run, ended)["result"]["result"], "wrote");

    // Signed out, the cookie is nothing.
    assert_eq!(post_form(port, &cookie, "/sign-out", &format!("csrf={csrf}"), None).status, 303);
    assert!(http(port, "GET", "/", &[("Cookie", &cookie)], "").body.contains("Sign in"));
}

#[test]
fn no_value_on_the_page_is_markup_or_a_line_of_its_own() {
    let dir = workdir("serve", "escaping");
    let alice = add_user(&dir, "alice");
    let server = serve(&dir, &[]);
    let port = server.port;
    let name = "<img src=x onerror=alert(1)>\u{202e}txt.exe";
    let content = "<script>alert(1)</script>\napproved: yes\u{200b}";
    let run = submit(port, &alice, &write_plan(name, content));
    until(port, &alice, run, waiting);
    let (cookie, _) = sign_in(port, &alice);
    let page = http(port, "GET", &format!("/runs/{run}"), &[("Cookie", &cookie)], "").body;
    let home = http(port, "GET", "/", &[("Cookie", &cookie)], "").body;
    for shown in [&page, &home] {
        assert!(!shown.contains("<img") && !shown.contains("<script"), "{shown}");
        assert!(
            !shown.contains('\u{202e}') && !shown.contains('\u{200b}'),
            "invisible characters are shown as escapes"
        );
    }
    assert!(page.contains("\\u{202e}") && page.contains("&lt;img"), "{page}");
    // The content's second line is shown inside the card's content block, never as a line of
    // the card's own.
    assert!(!page.lines().any(|l| l.trim_start().starts_with("approved: yes")), "{page}");
}

#[test]
fn a_flagged_card_is_approved_only_by_typing_the_end_of_its_value() {
    let dir = workdir("serve", "flagged");
    let alice = add_user(&dir, "alice");
    let server = serve(&dir, &[]);
    let port = server.port;
    // A destination that mixes Latin and Cyrillic letters (the `а`) is flagged.
    let run = submit(port, &alice, &write_plan("pаypal.txt", "x"));
    let parked = until(port, &alice, run, waiting);
    let card = &parked["card"];
    assert!(card["confirm"]["tail"].is_string(), "{card}");
    assert_eq!(card["grantable"], false);
    let tail = card["confirm"]["tail"].as_str().unwrap().to_string();
    let seal = parked["seal"].as_str().unwrap().to_string();
    let path = format!("/api/runs/{run}/answer");
    let auth = bearer(&alice);
    for (answer, confirm) in [("yes", None), ("yes", Some("nope")), ("always", Some(tail.as_str()))] {
        let body = serde_json::json!({ "seal": seal, "answer": answer, "confirm": confirm }).to_string();
        let got = http(port, "POST", &path, &[("Authorization", &auth)], &body);
        assert_eq!(got.status, 409, "{answer} {confirm:?}: {got:?}");
    }
    let body = serde_json::json!({ "seal": seal, "answer": "yes", "confirm": tail }).to_string();
    assert_eq!(http(port, "POST", &path, &[("Authorization", &auth)], &body).status, 200);
    assert_eq!(until(port, &alice, run, ended)["result"]["result"], "wrote");
}

#[test]
fn a_card_no_one_answers_in_time_is_denied() {
    let dir = workdir("serve", "deadline");
    let alice = add_user(&dir, "alice");
    let server = serve(&dir, &["--card-timeout", "1"]);
    let port = server.port;
    let run = submit(port, &alice, &write_plan("a.txt", "late"));
    let done = until(port, &alice, run, ended);
    assert_eq!(done["answer"]["answer"], "no", "{done}");
    assert!(done["answer"]["by"].is_null(), "{done}");
    assert!(!dir.join("out/a.txt").exists());
}

#[test]
fn an_always_makes_a_grant_the_person_can_revoke_on_the_page() {
    let dir = workdir("serve", "grants");
    let alice = add_user(&dir, "alice");
    let server = serve(&dir, &[]);
    let port = server.port;
    let run = submit(port, &alice, &write_plan("a.txt", "one"));
    let seal = until(port, &alice, run, waiting)["seal"].as_str().unwrap().to_string();
    let body = serde_json::json!({ "seal": seal, "answer": "always" }).to_string();
    assert_eq!(
        http(port, "POST", &format!("/api/runs/{run}/answer"), &[("Authorization", &bearer(&alice))], &body).status,
        200
    );
    until(port, &alice, run, ended);
    // The same write again runs under the grant, with no card.
    let again = submit(port, &alice, &write_plan("a.txt", "two"));
    assert_eq!(until(port, &alice, again, ended)["result"]["result"], "wrote");
    let (cookie, csrf) = sign_in(port, &alice);
    let home = http(port, "GET", "/", &[("Cookie", &cookie)], "").body;
    let grant = home.split("action=\"/grants/").nth(1).expect("a grant listed").split('/').next().unwrap().to_string();
    let revoked = post_form(port, &cookie, &format!("/grants/{grant}/revoke"), &format!("csrf={csrf}"), None);
    assert_eq!(revoked.status, 303, "{revoked:?}");
    assert!(http(port, "GET", "/", &[("Cookie", &cookie)], "").body.contains("id=\"no-grants\""));
    // Without it, the next write asks again.
    let third = submit(port, &alice, &write_plan("a.txt", "three"));
    until(port, &alice, third, waiting);
}

#[test]
fn listening_beyond_loopback_needs_tls_in_front() {
    let dir = workdir("serve", "listen");
    let out = command(&dir, &["serve", "--listen", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--behind-tls-proxy"));
}

/// `cordon serve` over the simulated GitHub, with a lease of one second.
fn serve_github(dir: &std::path::Path) -> Served {
    serve_with(dir, &["--env", "github", "--lease", "1", "--workers", "2"], &[])
}

/// A server killed with SIGKILL at arbitrary points of its runs, and started again, several
/// times: every run ends, the chain verifies, and no effect is made twice: every request with
/// an effect is the one its run ended as, with at most the plan's twenty.
#[test]
fn a_server_killed_mid_run_and_started_again_makes_no_effect_twice() {
    let dir = workdir("serve", "killed");
    // The simulated GitHub acts for its own user.
    let alice_token = add_user(&dir, "alice");
    let mut runs = Vec::new();
    // Pseudo-random kill points, the same every run of the test.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..5 {
        let server = serve_github(&dir);
        for _ in 0..6 {
            runs.push(submit(server.port, &alice_token, TWENTY_CALLS));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(20 + seed % 300));
        drop(server); // SIGKILL
        eprintln!("round {round}: killed");
    }
    // The last server finishes what is left (a dead worker's lease runs out within a second).
    let server = serve_github(&dir);
    for run in &runs {
        until(server.port, &alice_token, *run, ended);
    }
    drop(server);
    let store =
        cordon_store::SqliteStore::open(&dir.join("cordon.db"), cordon_store::Durability::SurvivesCrash).unwrap();
    let done = made_no_effect_twice(&store, &runs);
    // With the store up all along, a run fails only where going on would make an effect again.
    for run in &runs {
        let queued = cordon_store::Store::queued_run(&store, cordon_store::RunId(*run)).unwrap().unwrap();
        if queued.state == cordon_store::RunState::Failed {
            let error = queued.result.as_ref().and_then(|r| r["error"].as_str()).unwrap_or_default().to_string();
            assert!(error.contains("since it was last saved"), "run {run} failed otherwise: {error}");
        }
    }
    eprintln!("{} runs: {done} done, {} failed", runs.len(), runs.len() - done);
    assert!(done > 0, "some runs finished");
}
