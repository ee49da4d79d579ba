//! One MCP tool call, side by side in one run against the same server (the pinned npm
//! `server-everything`'s `echo`): `direct`, the SDK's call with no Cordon in between (what any
//! MCP client pays), and `through_cordon`, a checked plan's call as Cordon makes it (a run
//! started, the boundary's label checks, arguments encoded to JSON, the call, the result
//! decoded against the declared type and labelled), then `direct_again`, the SDK's call once
//! more. The difference is Cordon's overhead; the two `direct` figures show the server's drift.
//!
//! `cargo bench -p cordon-mcp --bench round_trip`
#![allow(clippy::unwrap_used, clippy::panic)] // a benchmark may fail loudly

use std::path::Path;

use cordon_engine::Engine;
use cordon_mcp::{Config, Connection, McpHost};
use cordon_runtime::{Config as RunConfig, Program, Run, Sessions};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};
use criterion::{Criterion, criterion_group, criterion_main};

#[path = "../tests/common/servers.rs"]
mod servers;

const POLICY: &str = r#"
capability Everything {
  tool echo(message: String) -> String
    @label(message = untrusted(), returns = public())
}
entry(everything: Everything) -> String
"#;

fn server() -> cordon_mcp::Server {
    let tmp = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tmp");
    let bin = servers::npm_server(&tmp, "mcp-server-everything");
    let text = format!("[servers.everything]\ncommand = {:?}\n", bin.display().to_string());
    Config::parse(&text).unwrap().servers.remove("everything").unwrap()
}

fn round_trip(c: &mut Criterion) {
    let server = server();
    let mut group = c.benchmark_group("mcp_round_trip");
    // One server for both, warmed up first (Node's JIT): the two differ only in Cordon.
    let mut connection = Connection::start("everything", &server, None).unwrap();
    let call = |connection: &mut Connection| {
        let args = serde_json::json!({"message": "hi"}).as_object().cloned().unwrap();
        connection.call("echo", args).unwrap()
    };
    for _ in 0..5000 {
        call(&mut connection);
    }
    group.bench_function("direct", |b| b.iter(|| call(&mut connection)));

    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let plan = sources.add("plan.cord", r#"everything.echo("hi")"#);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let checked = outcome.program.unwrap();
    let program = Program::new(&checked).unwrap();
    let mut host = McpHost::bind(connection, &["Everything"], checked.declarations()).unwrap().remove(0);
    let config = RunConfig { user: "ann".into(), ..RunConfig::default() };
    group.bench_function("through_cordon", |b| {
        b.iter(|| {
            let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
            Engine::new(&mut host).start(&mut run).into_result().unwrap()
        })
    });
    // The direct call once more, after: the server's own drift shows as a difference between
    // the two `direct` figures.
    let mut connection = host.into_connection().expect("the only host of its server");
    group.bench_function("direct_again", |b| b.iter(|| call(&mut connection)));
    group.finish();
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
