//! Checks each generated plan shape of `benches/shapes/mod.rs` once per size and prints the time,
//! the time per line, the solver's counters and the process's peak memory so far:
//!
//! ```text
//! cargo run --release -p cordon-types --example shapes -- 20 200 2000 20000
//! ```
//!
//! A shape whose check takes longer than `CORDON_SHAPES_CAP_S` seconds (default 60) is not run
//! at larger sizes. The criterion benchmark (`benches/check.rs`, `check/shapes`) gives medians;
//! this gives one-shot figures for sizes too slow to benchmark.

#[path = "../benches/shapes/mod.rs"]
mod shapes;

use std::time::{Duration, Instant};

use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![20, 200, 2000] } else { sizes };
    let only = std::env::var("CORDON_SHAPES").ok();
    let cap = Duration::from_secs(std::env::var("CORDON_SHAPES_CAP_S").ok().and_then(|s| s.parse().ok()).unwrap_or(60));
    let options = CheckOptions { check_timeout_ms: u32::MAX, ..CheckOptions::default() };
    for (name, generate, github) in shapes::SHAPES {
        if only.as_deref().is_some_and(|o| !o.split(',').any(|s| s == name)) {
            continue;
        }
        for &lines in &sizes {
            let plan = generate(lines);
            let mut sources = SourceMap::new();
            let policies: Vec<_> = github.then(|| sources.add("github.cord", shapes::GITHUB)).into_iter().collect();
            let file = sources.add("plan.cord", &plan);
            let start = Instant::now();
            let outcome = check(&sources, &policies, Some(file), &options);
            let took = start.elapsed();
            let errors = outcome.diagnostics.iter().filter(|d| d.is_error()).count();
            println!(
                "{name:>16} {lines:>6} lines: {:>10.2} ms, {:>7.2} µs/line, {} queries ({} folded, {} to z3, {} hypotheses sent), {} linear states looked at, {} errors, peak {:.0} MiB",
                took.as_secs_f64() * 1e3,
                took.as_secs_f64() * 1e6 / lines as f64,
                outcome.solver_queries,
                outcome.folded,
                outcome.solver_calls,
                outcome.solver_hypotheses,
                outcome.linear_examined,
                errors,
                peak_rss_mib()
            );
            for d in outcome.diagnostics.iter().filter(|d| d.is_error()).take(2) {
                eprintln!("  {}: {} {:?}", d.code.as_str(), d.message, d.notes);
            }
            if took > cap {
                break;
            }
        }
    }
}
