//! `cordon serve` as a person and an attacker meet it: the real server, over real HTTP on
//! loopback. A request waits at its card until its principal answers it, on the page or over
//! the API; everything else is refused: no token, a cross-site form, a form without its CSRF
//! token, another person's run, a replayed answer, a flagged card approved without typing the
//! end of its value, a host name that is not loopback; and no value on the page is markup or
//! can forge a line.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{command, workdir};

/// A running `cordon serve`, stopped when dropped.
struct Served {
    child: Child,
    port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
#[derive(Debug)]
struct Got {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Got {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Lets `name` in; their token.
fn add_user(dir: &Path, name: &str) -> String {
    let out = command(dir, &["serve", "--add-user", name]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().last().unwrap().trim().to_string()
}

/// `cordon serve` in `dir` with a writable `out` directory and `args`, on a free port.
fn serve(dir: &Path, args: &[&str]) -> Served {
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let out = format!("out={}:rw", dir.join("out").display());
    let mut all = vec!["serve", "--listen", "127.0.0.1:0", "--dir", &out];
    all.extend_from_slice(args);
    let mut child = command(dir, &all).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let port = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the server says where it listens: {line:?}"));
    // The rest of its standard error is read so it never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Served { child, port }
}

/// One HTTP/1.1 request with `headers` (a `Host` of 127.0.0.1 unless one is given).
fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Got {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines.filter_map(|l| l.split_once(": ")).map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Got { status, headers, body: body.to_string() }
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// Queues `plan` for the token's person; the run's number.
fn submit(port: u16, token: &str, plan: &str) -> i64 {
    let body = serde_json::json!({ "plan": plan, "name": "plan.cord" }).to_string();
    let got = http(port, "POST", "/api/runs", &[("Authorization", &bearer(token))], &body);
    assert_eq!(got.status, 201, "{got:?}");
    got.json()["run"].as_i64().unwrap()
}

/// The run as the API shows it, once `ready` holds of it (within 30 s).
fn until(port: u16, token: &str, run: i64, ready: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let got = http(port, "GET", &format!("/api/runs/{run}"), &[("Authorization", &bearer(token))], "");
        let value = got.json();
        if ready(&value) {
            return value;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "the run never got there: {value}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn waiting(run: &serde_json::Value) -> bool {
    run["state"] == "waiting" && run["answer"].is_null()
}

fn ended(run: &serde_json::Value) -> bool {
    run["state"] == "done" || run["state"] == "failed"
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

/// Writes `name` holding `content` in `out`: one card.
fn write_plan(name: &str, content: &str) -> String {
    format!(
        "match fs.root(\"out\") {{ Some(out) => if out.writable {{ match fs.write(out, {}, {}) {{ Ok(_) => \"wrote\", \
         Err(e) => e.reason }} }} else {{ \"read-only\" }}, None => \"no out\" }}",
        serde_json::to_string(name).unwrap(),
        serde_json::to_string(content).unwrap()
    )
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

/// Twenty calls of the simulated GitHub, none of which asks.
const TWENTY_CALLS: &str = "let n = fold(range(0, 20), 0, |acc, i| acc + len(gh.list_repos()));\n(to_string(n), s)";

/// `cordon serve` over the simulated GitHub, with a lease of one second.
fn serve_github(dir: &Path) -> Served {
    let args = ["serve", "--listen", "127.0.0.1:0", "--env", "github", "--lease", "1", "--workers", "2"];
    let mut child = command(dir, &args).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let port = line.split("http://127.0.0.1:").nth(1).and_then(|r| r.split('/').next()).and_then(|p| p.parse().ok());
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Served { child, port: port.unwrap_or_else(|| panic!("{line:?}")) }
}

/// A server killed with SIGKILL at arbitrary points of its runs, and started again, several
/// times: every run ends, the chain verifies, and no effect is made twice: every request with
/// an effect is the one its run ended as, with at most the plan's twenty.
#[test]
fn a_server_killed_mid_run_and_started_again_makes_no_effect_twice() {
    let dir = workdir("serve", "killed");
    let alice_token = {
        // The simulated GitHub acts for its own user.
        let out = command(&dir, &["serve", "--add-user", "alice"]).output().unwrap();
        String::from_utf8(out.stdout).unwrap().lines().last().unwrap().trim().to_string()
    };
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
    use cordon_store::Store as _;
    assert!(matches!(store.verify().unwrap(), cordon_store::Verdict::Intact { .. }));
    let mut ended_as = std::collections::BTreeSet::new();
    let mut done = 0;
    for run in &runs {
        let queued = store.queued_run(cordon_store::RunId(*run)).unwrap().unwrap();
        done += usize::from(queued.state == cordon_store::RunState::Done);
        if queued.state == cordon_store::RunState::Failed {
            let error = queued.result.as_ref().and_then(|r| r["error"].as_str()).unwrap_or_default().to_string();
            assert!(error.contains("since it was last saved"), "run {run} failed otherwise: {error}");
        }
        if let Some(request) = queued.request {
            ended_as.insert(request);
        }
    }
    for request in store.requests(10_000).unwrap() {
        let effects = store.show(request.id).unwrap().entries.iter().filter(|e| e.kind == "effect").count();
        assert!(effects <= 20, "request {} made {effects} calls", request.id);
        assert!(
            effects == 0 || ended_as.contains(&request.id),
            "request {} made calls for a run that ran again",
            request.id
        );
    }
    let requests = store.requests(10_000).unwrap().len();
    eprintln!("{} runs: {done} done, {} failed, {requests} requests", runs.len(), runs.len() - done);
    assert!(done > 0, "some runs finished");
}
