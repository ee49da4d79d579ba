//! The broker as an attacker would try it, against a real web server (Python's http.server,
//! `tests/web/web.py`) that writes down every request it receives: a secret goes only into its
//! slot, only to where it is bound; a vault secret anywhere else in a request, however encoded,
//! is refused before anything is sent; names that lead into this machine or its network are
//! refused, and a name is resolved once; redirects are answered, not followed; answers are
//! bounded and scrubbed.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cordon_broker::protocol::{Answer, Ask};
use cordon_broker::{Broker, Client, Code, Incoming, Outgoing, Refusal, Resolve};
use cordon_vault::{Destination, Entry, SecretValue};

#[path = "../../../tests/web/web.rs"]
mod web;
use web::Web;

const CANARY: &str = "cordon-canary-7Hq2xVp9Lm";
/// The canary in base64 and in hex.
const CANARY_BASE64: &str = "Y29yZG9uLWNhbmFyeS03SHEyeFZwOUxt";
const CANARY_HEX: &str = "636f72646f6e2d63616e6172792d37487132785670394c6d";

/// A broker whose one secret, the canary, goes in `X-Api-Key` to `web` only.
fn broker_for(web: &Web) -> Broker {
    let entry = Entry {
        name: "API_KEY".into(),
        destinations: vec![Destination::parse(&format!("http://127.0.0.1:{}", web.port)).unwrap()],
        header: "X-Api-Key".into(),
        scheme: None,
        programs: Vec::new(),
    };
    Broker::with_secrets(vec![(entry, SecretValue::from(CANARY))])
}

fn get(url: &str) -> Outgoing {
    Outgoing {
        method: "GET".into(),
        url: url.into(),
        headers: Vec::new(),
        body: None,
        credential: None,
        timeout_ms: 5_000,
        max_response_bytes: 1 << 20,
        // The tests' servers are on this machine.
        local: true,
    }
}

fn with_key(mut out: Outgoing) -> Outgoing {
    out.credential = Some("API_KEY".into());
    out
}

fn sent(broker: &Broker, out: &Outgoing) -> Incoming {
    match broker.answer(&Ask::Send(out.clone())) {
        Answer::Sent(incoming) => incoming,
        other => panic!("expected a response to {out:?}, got {other:?}"),
    }
}

fn refused(broker: &Broker, out: &Outgoing) -> Refusal {
    match broker.answer(&Ask::Send(out.clone())) {
        Answer::Refused(refusal) => {
            assert!(!refusal.reason.contains(CANARY), "{refusal:?}");
            refusal
        }
        other => panic!("expected {out:?} refused, got {other:?}"),
    }
}

#[test]
fn a_secret_goes_only_into_its_slot_and_never_comes_back() {
    let web = Web::start();
    let broker = broker_for(&web);
    let answer = sent(&broker, &with_key(get(&web.url("/echo"))));
    assert_eq!(answer.status, 200);
    // The server got it in the slot ..
    let received = web.received();
    assert!(received.contains(&format!(r#"["x-api-key", "{CANARY}"]"#)), "{received}");
    // .. and what it sent back (its echo of the request) reaches no one with it.
    assert!(answer.body.contains(r#"["x-api-key", "[vault secret]"]"#), "{}", answer.body);
    assert!(!answer.body.contains(CANARY));
    // A server that echoes it in a header and in its body, however dressed, is scrubbed too.
    let answer = sent(&broker, &with_key(get(&web.url("/leak?header=x-api-key"))));
    assert_eq!(answer.body, "you sent me: [vault secret]");
    assert_eq!(answer.header("x-echo"), Some("[vault secret]"));
    // The agent says what it is.
    assert!(web.received().contains("cordon-broker/"), "{}", web.received());
}

#[test]
fn a_secret_bound_elsewhere_is_refused_and_nothing_is_sent() {
    let (web, other) = (Web::start(), Web::start());
    let broker = broker_for(&web);
    // Another port, another host name for the same machine, another scheme.
    for url in [
        other.url("/echo"),
        format!("http://localhost:{}/echo", web.port),
        format!("https://127.0.0.1:{}/echo", web.port),
        format!("http://127.0.0.2:{}/echo", web.port),
    ] {
        let refusal = refused(&broker, &with_key(get(&url)));
        assert_eq!(refusal.code, Code::NotAllowed, "{url}: {refusal:?}");
        assert!(refusal.reason.contains("is not bound to"), "{url}: {refusal:?}");
    }
    // A secret the vault does not have.
    let mut out = get(&web.url("/echo"));
    out.credential = Some("OTHER".into());
    assert_eq!(refused(&broker, &out).code, Code::NotAllowed);
    assert_eq!(web.received(), "");
    assert_eq!(other.received(), "");
}

#[test]
fn a_vault_secret_anywhere_but_its_slot_is_refused_however_it_is_dressed() {
    let web = Web::start();
    let broker = broker_for(&web);
    let split: String = CANARY.chars().map(|c| format!("{c} ")).collect();
    let mut attempts = Vec::new();
    for text in [CANARY, CANARY_BASE64, CANARY_HEX, &split, "cordon%2Dcanary%2D7Hq2xVp9Lm"] {
        let mut body = with_key(get(&web.url("/echo")));
        body.method = "POST".into();
        body.body = Some(format!("here: {text}"));
        attempts.push(body);
        let mut header = get(&web.url("/echo"));
        header.headers.push(("X-Note".into(), text.into()));
        attempts.push(header);
        attempts.push(get(&web.url(&format!("/echo?q={}", text.replace(' ', "+")))));
    }
    for out in &attempts {
        let refusal = refused(&broker, out);
        assert_eq!(refusal.code, Code::NotAllowed, "{out:?}");
        assert!(refusal.reason.contains("outside a credential slot"), "{refusal:?}");
    }
    // The slot itself may not be written by the request.
    let mut slot = with_key(get(&web.url("/echo")));
    slot.headers.push(("x-api-key".into(), "mine".into()));
    assert_eq!(refused(&broker, &slot).code, Code::BadRequest);
    assert_eq!(web.received(), "", "nothing reached the server");
}

#[test]
fn requests_that_cannot_be_sent_as_they_are_are_refused() {
    let web = Web::start();
    let broker = broker_for(&web);
    let mut bad = Vec::new();
    let mut method = get(&web.url("/"));
    method.method = "CONNECT".into();
    bad.push(method);
    for (name, value) in [
        ("X-Split", "a\r\nX-Injected: yes"),
        ("Host", "evil.example"),
        ("Transfer-Encoding", "chunked"),
        ("Content-Length", "0"),
        ("Bad Name", "x"),
    ] {
        let mut out = get(&web.url("/"));
        out.headers.push((name.into(), value.into()));
        bad.push(out);
    }
    for url in
        ["ftp://127.0.0.1/x", &format!("http://user:pw@127.0.0.1:{}/", web.port), "not a url", "file:///etc/passwd"]
    {
        bad.push(get(url));
    }
    for out in &bad {
        assert_eq!(refused(&broker, out).code, Code::BadRequest, "{out:?}");
    }
    assert_eq!(web.received(), "");
}

/// A resolver that answers from a list, and counts how often it is asked.
struct Scripted {
    answers: Vec<Vec<SocketAddr>>,
    asked: AtomicUsize,
}

impl Resolve for Scripted {
    fn resolve(&self, _host: &str, _port: u16) -> std::io::Result<Vec<SocketAddr>> {
        let i = self.asked.fetch_add(1, Ordering::SeqCst);
        Ok(self.answers.get(i).or(self.answers.last()).cloned().unwrap_or_default())
    }
}

#[test]
fn a_name_that_leads_into_this_machine_or_its_network_is_refused() {
    let web = Web::start();
    // The system's resolver: localhost is this machine.
    let broker = broker_for(&web);
    let refusal = refused(&broker, &get(&format!("http://localhost:{}/echo", web.port)));
    assert_eq!(refusal.code, Code::NotAllowed);
    assert!(refusal.reason.contains("127.0.0.1") || refusal.reason.contains("::1"), "{refusal:?}");
    // A name whose answers include one private address, among public ones.
    for private in ["169.254.169.254", "10.0.0.7", "192.168.1.1", "127.0.0.1", "::ffff:127.0.0.1", "fd00::1"] {
        let answers = vec![vec![
            SocketAddr::new("93.184.216.34".parse().unwrap(), web.port),
            SocketAddr::new(private.parse().unwrap(), web.port),
        ]];
        let resolver = Arc::new(Scripted { answers, asked: AtomicUsize::new(0) });
        let broker = broker_for(&web).with_resolver(resolver);
        let refusal = refused(&broker, &get(&format!("http://metadata.example:{}/echo", web.port)));
        assert_eq!(refusal.code, Code::NotAllowed, "{private}");
    }
    assert_eq!(web.received(), "");
}

#[test]
fn a_name_is_resolved_once_and_the_connection_goes_where_it_was_checked() {
    // DNS rebinding: the first answer is public, every later one this machine. The broker asks
    // once and connects to the public address (unreachable here), never to this machine.
    let web = Web::start();
    let public = SocketAddr::new("192.0.43.9".parse().unwrap(), web.port);
    let local = SocketAddr::new("127.0.0.1".parse().unwrap(), web.port);
    let resolver = Arc::new(Scripted { answers: vec![vec![public], vec![local]], asked: AtomicUsize::new(0) });
    let broker = broker_for(&web).with_resolver(resolver.clone());
    let mut out = get(&format!("http://rebind.example:{}/echo", web.port));
    out.timeout_ms = 1_000;
    let refusal = refused(&broker, &out);
    assert!(matches!(refusal.code, Code::Unreachable | Code::Timeout), "{refusal:?}");
    assert_eq!(resolver.asked.load(Ordering::SeqCst), 1);
    assert_eq!(web.received(), "");
}

#[test]
fn an_address_on_this_machine_is_reached_only_where_the_deployer_allows() {
    let web = Web::start();
    let broker = broker_for(&web);
    // However it is written: dotted, as one number, in hexadecimal, mapped into IPv6; the cloud
    // metadata service; this machine's every address.
    let port = web.port;
    for url in [
        web.url("/echo"),
        format!("http://2130706433:{port}/echo"),
        format!("http://0x7f.0.0.1:{port}/echo"),
        format!("http://[::ffff:127.0.0.1]:{port}/echo"),
        format!("http://0.0.0.0:{port}/echo"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
    ] {
        let mut out = get(&url);
        out.local = false;
        let refusal = refused(&broker, &out);
        assert_eq!(refusal.code, Code::NotAllowed, "{url}: {refusal:?}");
        assert!(refusal.reason.contains("--web-local"), "{refusal:?}");
    }
    assert_eq!(web.received(), "");
}

#[test]
fn redirects_are_answered_not_followed() {
    let (web, other) = (Web::start(), Web::start());
    let broker = broker_for(&web);
    let to = other.url("/echo");
    let answer = sent(&broker, &with_key(get(&web.url(&format!("/redirect?to={to}")))));
    assert_eq!(answer.status, 302);
    assert_eq!(answer.header("location"), Some(to.as_str()));
    assert_eq!(other.received(), "", "the broker followed the redirect");
}

#[test]
fn answers_are_bounded_in_size_and_time_and_must_be_text() {
    let web = Web::start();
    let broker = broker_for(&web);
    let mut big = get(&web.url("/big?bytes=5000"));
    big.max_response_bytes = 4096;
    assert_eq!(refused(&broker, &big).code, Code::TooLarge);
    big.max_response_bytes = 5000;
    assert_eq!(sent(&broker, &big).body.len(), 5000);
    let mut slow = get(&web.url("/slow?ms=5000"));
    slow.timeout_ms = 300;
    let started = Instant::now();
    assert_eq!(refused(&broker, &slow).code, Code::Timeout);
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(refused(&broker, &get(&web.url("/binary"))).code, Code::NotText);
    // Statuses are answers, not failures.
    assert_eq!(sent(&broker, &get(&web.url("/status/404"))).status, 404);
    assert_eq!(sent(&broker, &get(&web.url("/status/500"))).status, 500);
    // Nothing listens: unreachable, at once.
    let closed = format!("http://127.0.0.1:{}/", free_port());
    assert_eq!(refused(&broker, &get(&closed)).code, Code::Unreachable);
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn the_outgoing_data_check_asks_the_broker_where_the_secrets_are() {
    let web = Web::start();
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("broker.sock");
    let listener = cordon_broker::listen(&socket).unwrap();
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&socket).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let broker = Arc::new(broker_for(&web));
    std::thread::spawn(move || broker.serve(listener));
    let client = Client::connect(&socket).unwrap();
    let scanner = cordon_egress::Scanner::with_secret_finder(Arc::new(client));
    let text = format!("card 4539 1488 0343 6467, token {CANARY_BASE64}");
    let findings: Vec<_> = scanner.scan(&text).iter().map(|f| f.category).collect();
    assert_eq!(findings, [cordon_egress::Category::CardNumber, cordon_egress::Category::VaultSecret]);
    // The same connection performs requests and lists the secrets, never their values.
    let client = Client::connect(&socket).unwrap();
    let entries = client.secrets().unwrap();
    assert_eq!(entries.len(), 1);
    assert!(!format!("{entries:?}").contains(CANARY));
    assert_eq!(client.send(&get(&web.url("/hi"))).unwrap().unwrap().body, "hello from /hi");
}

#[test]
fn a_broker_that_is_gone_has_found_a_secret_in_everything() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("broker.sock");
    let listener = cordon_broker::listen(&socket).unwrap();
    let client = Client::connect(&socket).unwrap();
    drop(listener);
    let finder: &dyn cordon_egress::SecretFinder = &client;
    assert_eq!(finder.find("hello"), vec![std::ops::Range { start: 0, end: 5 }]);
    // And it says so when asked directly, from then on.
    assert!(client.secrets().is_err());
    assert!(Client::connect(&dir.path().join("nothing.sock")).is_err());
}

#[test]
fn the_log_names_each_request_without_its_secret_or_its_query() {
    let web = Web::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("broker.log");
    let broker = broker_for(&web).with_log(std::fs::File::create(&log).unwrap());
    sent(&broker, &with_key(get(&web.url("/echo?page=2"))));
    refused(&broker, &with_key(get(&format!("http://127.0.0.1:{}/x", free_port()))));
    let mut body = get(&web.url("/echo"));
    body.body = Some(CANARY.into());
    refused(&broker, &body);
    let logged = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = logged.lines().collect();
    assert_eq!(lines.len(), 3, "{logged}");
    assert!(lines[0].contains(r#""credential":"API_KEY""#) && lines[0].contains(r#""status":200"#), "{logged}");
    assert!(lines[1].contains("not-allowed") && lines[2].contains("not-allowed"), "{logged}");
    assert!(!logged.contains(CANARY) && !logged.contains("page=2"), "{logged}");
}

#[test]
fn a_scheme_goes_before_the_secret_in_its_header() {
    let web = Web::start();
    let entry = Entry {
        name: "GITHUB_TOKEN".into(),
        destinations: vec![Destination::parse(&web.url("")).unwrap()],
        header: "Authorization".into(),
        scheme: Some("Bearer".into()),
        programs: Vec::new(),
    };
    let broker = Broker::with_secrets(vec![(entry, SecretValue::from(CANARY))]);
    let mut out = get(&web.url("/echo"));
    out.credential = Some("GITHUB_TOKEN".into());
    let answer = sent(&broker, &out);
    assert!(web.received().contains(&format!(r#"["authorization", "Bearer {CANARY}"]"#)), "{}", web.received());
    assert!(answer.body.contains(r#"["authorization", "Bearer [vault secret]"]"#), "{}", answer.body);
}

/// An address the broker could be asked to send the secret to: a scheme, a way of writing a
/// host, a port (the bound one or another), a path.
fn address(web_port: u16) -> impl proptest::strategy::Strategy<Value = (String, bool)> {
    use proptest::prelude::*;
    let schemes = prop_oneof![Just("http"), Just("https"), Just("HTTP")];
    let hosts = prop_oneof![
        Just(("127.0.0.1", true)),
        Just(("127.0.0.1.", true)),
        Just(("0x7f.0.0.1", true)),
        Just(("2130706433", true)),
        Just(("127.0.0.2", false)),
        Just(("localhost", false)),
        Just(("LOCALHOST", false)),
        Just(("[::1]", false)),
        Just(("[::ffff:127.0.0.1]", false)),
        Just(("api.example.com", false)),
    ];
    let ports = prop_oneof![Just(web_port), Just(web_port + 1), Just(80), Just(443)];
    (schemes, hosts, ports, "[a-z/.%]{0,12}").prop_map(move |(scheme, (host, same), port, path)| {
        let bound = same && port == web_port && scheme.eq_ignore_ascii_case("http");
        (format!("{scheme}://{host}:{port}/{path}"), bound)
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 64,
        rng_seed: proptest::test_runner::RngSeed::Fixed(26),
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// However the address is written, the secret is sent exactly when it names the bound
    /// scheme, host and port (`127.0.0.1.`, `0x7f.0.0.1` and `2130706433` are that address).
    #[test]
    fn a_secret_is_sent_exactly_where_it_is_bound((url, bound) in address(PORT.with(|p| *p))) {
        let web = WEB.with(|w| w.url(""));
        let broker = BROKER.with(|b| b.clone());
        let out = with_key(get(&url));
        match broker.answer(&Ask::Send(out)) {
            Answer::Sent(_) => proptest::prop_assert!(bound, "sent to {url} ({web})"),
            Answer::Refused(r) => proptest::prop_assert!(
                !bound || r.code != Code::NotAllowed,
                "refused {url}: {r:?}"
            ),
            other => proptest::prop_assert!(false, "{other:?}"),
        }
    }
}

thread_local! {
    /// One web server and its broker for the property's cases.
    static WEB: Web = Web::start();
    static PORT: u16 = WEB.with(|w| w.port);
    static BROKER: Arc<Broker> = WEB.with(|w| Arc::new(broker_for(w)));
}
