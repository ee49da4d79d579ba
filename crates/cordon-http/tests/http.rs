//! Plans against `policies/http.cord` (its allow-list made the tests' own web servers), checked
//! and run by the engine with the HTTP host sending through a real broker: a request reaches an
//! allowed site with its credential in its slot only; an address inside the allow-list as text
//! but not in its normal form is not sent; redirects within a site are followed (with the
//! credential) and to another site answered; a redirect loop ends.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/mod.rs"]
mod common;
#[path = "../../../tests/web/web.rs"]
mod web;

use std::sync::Arc;

use common::Source;
use cordon_broker::{Broker, Client};
use cordon_http::{HttpHost, HttpOptions};
use cordon_runtime::{Config, Sessions};
use cordon_vault::{Destination, Entry, SecretValue};
use web::Web;

const CANARY: &str = "cordon-canary-7Hq2xVp9Lm";

/// The host's options for the tests' servers, which are on this machine.
fn local() -> HttpOptions {
    HttpOptions { local: true, ..HttpOptions::default() }
}

/// The template policy with its allow-lists replaced by `sites`.
fn policy(sites: &[&Web]) -> String {
    let allowed: Vec<String> = sites.iter().map(|w| format!("u.starts_with(\"{}\")", w.url("/"))).collect();
    let allowed = allowed.join(" || ");
    cordon_http::POLICY
        .replace(
            r#"u.starts_with("https://api.github.com/") || u.starts_with("https://en.wikipedia.org/wiki/")"#,
            &allowed,
        )
        .replace(r#"u.starts_with("https://api.github.com/repos/")"#, &allowed)
}

/// A broker whose one secret, the canary, goes in `X-Api-Key` to `web` only, served on a socket;
/// a client of it.
fn broker(web: &Web, dir: &std::path::Path) -> Arc<Client> {
    let entry = Entry {
        name: "API_KEY".into(),
        destinations: vec![Destination::parse(&web.url("")).unwrap()],
        header: "X-Api-Key".into(),
        scheme: None,
        programs: Vec::new(),
    };
    let broker = Broker::with_secrets(vec![(entry, SecretValue::from(CANARY))]);
    Arc::new(broker.serve_on_thread(&dir.join("broker.sock")).unwrap())
}

/// Checks and runs `plan` with `sites` allowed and `web`'s broker: how it ended.
fn run(sites: &[&Web], web: &Web, plan: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy(sites);
    let program = match Source::new(Some(&policy), plan).check_with(None) {
        Ok(p) => p,
        Err(codes) => return format!("rejected: {}", codes.join(", ")),
    };
    let mut host = HttpHost::open(broker(web, dir.path()), local()).unwrap();
    let config = Config { user: "ann".into(), ..Config::default() };
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut host);
    common::ending(&report)
}

/// A plan that GETs `url` (with the key if `auth`) and answers `status body`, or the error.
fn get(url: &str, auth: bool) -> String {
    let auth = if auth { "http.secret(\"API_KEY\")" } else { "None" };
    format!(
        r#"match http.get("{url}", [], {auth}) {{
  Ok(r) => to_string(r.status) + " " + r.body,
  Err(e) => e.code + ": " + e.reason,
}}"#
    )
}

#[test]
fn a_request_reaches_an_allowed_site_with_its_credential_in_its_slot_only() {
    let web = Web::start();
    let ending = run(&[&web], &web, &get(&web.url("/echo"), true));
    assert!(ending.starts_with("\"200 "), "{ending}");
    assert!(ending.contains(r#"x-api-key\", \"[vault secret]"#), "the echo is scrubbed: {ending}");
    assert!(!ending.contains(CANARY));
    assert!(web.received().contains(CANARY), "{}", web.received());
    // Without `auth`, no credential.
    let web = Web::start();
    let ending = run(&[&web], &web, &get(&web.url("/echo"), false));
    assert!(ending.starts_with("\"200 "), "{ending}");
    assert!(!web.received().contains(CANARY) && !web.received().contains("x-api-key"), "{}", web.received());
}

#[test]
fn the_vault_is_asked_which_secrets_it_has() {
    let web = Web::start();
    let plan = r#"match (http.secret("API_KEY"), http.secret("NOPE")) {
  (Some(k), None) => k.name,
  _ => "wrong",
}"#;
    assert_eq!(run(&[&web], &web, plan), "\"API_KEY\"");
}

#[test]
fn an_address_not_in_its_normal_form_is_not_sent() {
    // Each starts with the allowed prefix as text; as sent, it would be somewhere else.
    let web = Web::start();
    let base = web.url("/");
    for path in ["a/../../echo", "./echo", "%2e%2e/echo", "e cho", "ECHO/../echo", "x/%2E%2E%2Fecho", "a%2fb", "a%5Cb"]
    {
        let plan = format!(
            r#"let url = "{base}" + "{path}";
if url.starts_with("{base}") {{
  match http.get(url, [], None) {{
    Ok(r) => "sent " + to_string(r.status),
    Err(e) => e.code,
  }}
}} else {{ "outside" }}"#
        );
        let ending = run(&[&web], &web, &plan);
        assert_eq!(ending, "\"not-normal\"", "{path}");
    }
    assert_eq!(web.received(), "", "nothing was sent");
}

#[test]
fn redirects_are_followed_within_a_site_and_answered_across_sites() {
    let (web, other) = (Web::start(), Web::start());
    // Within the site: followed, the credential along.
    let ending = run(&[&web, &other], &web, &get(&web.url("/redirect?to=/echo"), true));
    assert!(ending.starts_with("\"200 {"), "{ending}");
    assert_eq!(web.received().matches(CANARY).count(), 2, "{}", web.received());
    // To another site: the redirect is the answer; nothing reaches the other site.
    let to = other.url("/echo");
    let ending = run(&[&web, &other], &web, &get(&web.url(&format!("/redirect?to={to}")), true));
    assert!(ending.starts_with("\"302 "), "{ending}");
    assert_eq!(other.received(), "");
}

#[test]
fn a_redirect_loop_ends_with_the_last_redirect() {
    let web = Web::start();
    let ending = run(&[&web], &web, &get(&web.url("/loop"), false));
    assert!(ending.starts_with("\"302 "), "{ending}");
    let hops = web.received().lines().count();
    assert_eq!(hops, HttpOptions::default().max_redirects + 1, "{}", web.received());
}

#[test]
fn a_post_sends_its_body_and_headers() {
    let web = Web::start();
    let plan = format!(
        r#"match http.post("{}", "hello there", [Header {{ name: "Content-Type", value: "text/plain" }}], None) {{
  Ok(r) => to_string(r.status),
  Err(e) => e.code,
}}"#,
        web.url("/echo")
    );
    assert_eq!(run(&[&web], &web, &plan), "\"200\"");
    assert!(web.received().contains(r#""body": "hello there""#), "{}", web.received());
}

#[test]
fn a_broker_that_dies_mid_request_ends_the_call_and_sends_nothing_twice() {
    // A broker that lists its secrets, then takes the request and goes away without an answer.
    use cordon_broker::protocol::{Answer, Ask, read_frame, write_frame};
    let web = Web::start();
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("broker.sock");
    let listener = cordon_broker::listen(&socket).unwrap();
    let asked = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let first: Ask = read_frame(&mut stream).unwrap().unwrap();
        write_frame(&mut stream, &Answer::Secrets { entries: Vec::new() }).unwrap();
        // A request comes on a connection of its own.
        let (mut stream, _) = listener.accept().unwrap();
        let second: Ask = read_frame(&mut stream).unwrap().unwrap();
        (first, second)
    });
    let client = Arc::new(Client::connect(&socket).unwrap());
    let mut host = HttpHost::open(client, local()).unwrap();
    let program = Source::new(Some(&policy(&[&web])), &get(&web.url("/echo"), false)).check_with(None).unwrap();
    let config = Config { user: "ann".into(), ..Config::default() };
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut host);
    assert_eq!(common::ending(&report), "tool-failed");
    let (first, second) = asked.join().unwrap();
    assert!(matches!(first, Ask::Secrets) && matches!(second, Ask::Send(_)));
    assert_eq!(web.received(), "", "the broker sent nothing, and nothing else did");
}

#[test]
fn a_posts_redirect_is_answered_not_followed_even_within_its_site() {
    // A 307 would send the body again, to a path the site chose: outside what the plan was
    // allowed to post to, perhaps.
    let web = Web::start();
    let plan = format!(
        r#"match http.post("{}", "the body", [], None) {{
  Ok(r) => to_string(r.status),
  Err(e) => e.code,
}}"#,
        web.url("/redirect?to=/echo&code=307")
    );
    assert_eq!(run(&[&web], &web, &plan), "\"307\"");
    assert_eq!(web.received().lines().count(), 1, "{}", web.received());
}
