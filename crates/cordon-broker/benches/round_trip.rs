//! What the broker adds: a GET to a loopback web server (the tests' `web.py`) sent directly with
//! `ureq` as the broker sends it (a new agent, a new connection), against the same GET sent
//! through a broker over its socket (aim: at most 1 ms more); and where the vault's secrets are
//! in a 2 KB text, asked of the broker against the same search in this process (what moving the
//! secrets out of the process that runs plans costs the outgoing-data check).
//!
//! `cargo bench -p cordon-broker --bench round_trip`
#![allow(clippy::unwrap_used, clippy::panic)] // a benchmark may fail loudly

#[path = "../../../tests/web/web.rs"]
mod web;

use std::hint::black_box;

use cordon_broker::{Broker, Outgoing};
use cordon_egress::{SecretFinder, SecretValue, VaultMatcher};
use cordon_vault::{Destination, Entry};
use criterion::{Criterion, criterion_group, criterion_main};
use web::Web;

fn bench(c: &mut Criterion) {
    let web = Web::start();
    let entry = Entry {
        name: "API_KEY".into(),
        destinations: vec![Destination::parse(&web.url("")).unwrap()],
        header: "X-Api-Key".into(),
        scheme: None,
        programs: Vec::new(),
    };
    let secret = SecretValue::from("cordon-canary-7Hq2xVp9Lm");
    let dir = tempfile::tempdir().unwrap();
    let client =
        Broker::with_secrets(vec![(entry, secret.clone())]).serve_on_thread(&dir.path().join("broker.sock")).unwrap();
    let url = web.url("/hi");

    let mut group = c.benchmark_group("get");
    group.bench_function("direct", |b| {
        b.iter(|| {
            let agent = ureq::AgentBuilder::new().redirects(0).max_idle_connections(0).build();
            let body = agent.get(&url).set("X-Api-Key", secret.expose()).call().unwrap().into_string().unwrap();
            black_box(body)
        })
    });
    let out = Outgoing {
        method: "GET".into(),
        url: url.clone(),
        headers: Vec::new(),
        body: None,
        credential: Some("API_KEY".into()),
        timeout_ms: 5_000,
        max_response_bytes: 1 << 20,
        local: true,
    };
    group.bench_function("through the broker", |b| b.iter(|| black_box(client.send(&out).unwrap().unwrap())));
    group.finish();

    let text: String = "Meeting notes: the deploy token rotates on Friday; ask ops. ".repeat(35);
    let text = &text[..2048];
    let matcher = VaultMatcher::new(&[secret]);
    let mut group = c.benchmark_group("find in 2 KB");
    group.bench_function("in this process", |b| b.iter(|| black_box(matcher.find(black_box(text)))));
    group.bench_function("asking the broker", |b| b.iter(|| black_box(SecretFinder::find(&client, black_box(text)))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
