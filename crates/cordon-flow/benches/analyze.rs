//! How long the static label analysis takes, on a checked program (checking not counted):
//!
//! - `flow/50_lines`: the checker's 50-line benchmark plan against its shop policy;
//! - `flow/shapes/{session,let_chain,branches,blocks}/{20,200,2000,20000}`: the checker's
//!   generated shapes; the time per line must stay flat.
//!
//! ```text
//! cargo bench -p cordon-flow --bench analyze
//! ```

use std::hint::black_box;

use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

#[path = "../../cordon-types/benches/shapes/mod.rs"]
mod shapes;

const POLICY: &str = include_str!("../../cordon-types/benches/programs/shop.cord");
const PLAN50: &str = include_str!("../../cordon-types/benches/programs/plan50.cord");

/// Checks `plan` once and benchmarks analysing it.
fn bench(c: &mut Criterion, group: &str, id: BenchmarkId, policy: Option<&str>, plan: &str, lines: usize) {
    let mut sources = SourceMap::new();
    let policies: Vec<_> = policy.map(|p| sources.add("policy.cord", p)).into_iter().collect();
    let file = sources.add("plan.cord", plan);
    let outcome =
        check(&sources, &policies, Some(file), &CheckOptions { check_timeout_ms: 600_000, ..CheckOptions::default() });
    let checked = outcome.program.expect("the benchmark's plans check");
    let summary = cordon_flow::analyze(&checked, &sources, "alice");
    assert!(summary.complete);
    let mut g = c.benchmark_group(group);
    if lines >= 2000 {
        g.sample_size(10);
    }
    g.throughput(Throughput::Elements(lines as u64));
    g.bench_with_input(id, &checked, |b, checked| {
        b.iter(|| cordon_flow::analyze(black_box(checked), &sources, "alice"))
    });
    g.finish();
}

fn flow(c: &mut Criterion) {
    bench(c, "flow", BenchmarkId::from_parameter("50_lines"), Some(POLICY), PLAN50, 50);
    for (name, generate, github) in shapes::SHAPES {
        for lines in [20usize, 200, 2000, 20_000] {
            let plan = generate(lines);
            let policy = github.then_some(shapes::GITHUB);
            bench(c, &format!("flow/shapes/{name}"), BenchmarkId::from_parameter(lines), policy, &plan, lines);
        }
    }
}

criterion_group!(benches, flow);
criterion_main!(benches);
