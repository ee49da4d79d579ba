//! Analyses the checker's generated plan shapes once each at the sizes given, printing the time
//! per line: `cargo run --release -p cordon-flow --example flow_shapes -- 200 2000 20000`.

use std::time::Instant;

use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

#[path = "../../cordon-types/benches/shapes/mod.rs"]
mod shapes;

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    for (name, generate, github) in shapes::SHAPES {
        for &lines in &sizes {
            let plan = generate(lines);
            let mut sources = SourceMap::new();
            let policies: Vec<_> = github.then(|| sources.add("github.cord", shapes::GITHUB)).into_iter().collect();
            let file = sources.add("plan.cord", plan);
            let options = CheckOptions { check_timeout_ms: 600_000, ..CheckOptions::default() };
            let Some(checked) = check(&sources, &policies, Some(file), &options).program else {
                println!("{name}/{lines}: does not check");
                continue;
            };
            let start = Instant::now();
            let summary = cordon_flow::analyze(&checked, &sources, "alice");
            let took = start.elapsed();
            println!(
                "{name}/{lines}: {:.1} ms, {:.1} µs a line, {} call sites",
                took.as_secs_f64() * 1e3,
                took.as_secs_f64() * 1e6 / lines as f64,
                summary.calls.len()
            );
        }
    }
}
