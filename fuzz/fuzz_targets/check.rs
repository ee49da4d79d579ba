//! Any bytes, read as (lossy) UTF-8, checked as a plan against `policies/github.cord` (the
//! checker, then the labels' static analysis), must give an outcome without a panic; so must
//! rendering its diagnostics and the effect summary.

#![no_main]

use cordon_syntax::{SourceMap, render};
use cordon_types::CheckOptions;
use libfuzzer_sys::fuzz_target;

const POLICY: &str = include_str!("../../policies/github.cord");

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut sources = SourceMap::new();
    let policy = sources.add("policies/github.cord", POLICY);
    let plan = sources.add("plan.cord", text.as_ref());
    // A short solver timeout keeps each run fast; a timeout is a rejection, never a crash.
    let options = CheckOptions { solver_timeout_ms: 200, ..CheckOptions::default() };
    let (outcome, summary) = cordon_flow::check(&sources, &[policy], Some(plan), &options, "alice", false);
    if let Some(summary) = summary {
        let _ = summary.render();
    }
    for d in &outcome.diagnostics {
        let _ = render::human(d, &sources);
        let _ = render::concise(d, &sources);
    }
    let _ = render::json(&outcome.diagnostics, &sources).to_string();
});
