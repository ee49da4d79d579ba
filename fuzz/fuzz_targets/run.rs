//! Any bytes, read as (lossy) UTF-8, checked as a plan against `policies/github.cord`; if the
//! checker accepts it, it runs against the simulated GitHub with small limits. Whatever it
//! does, the host must not panic, hang or overflow its stack, and nothing secret may be
//! published.

#![no_main]

use std::time::Duration;

use cordon_envs::GitHub;
use cordon_runtime::{Config, Limits, Program, Sessions};
use cordon_syntax::{SourceMap, render};
use cordon_types::{CheckOptions, check};
use libfuzzer_sys::fuzz_target;

const POLICY: &str = include_str!("../../policies/github.cord");

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut sources = SourceMap::new();
    let policy = sources.add("policies/github.cord", POLICY);
    let plan = sources.add("plan.cord", text.as_ref());
    let options = CheckOptions { solver_timeout_ms: 200, ..CheckOptions::default() };
    let outcome = check(&sources, &[policy], Some(plan), &options);
    let Some(checked) = outcome.program.as_ref() else { return };
    let Ok(program) = Program::new(checked) else { return };
    let Ok(mut gh) = GitHub::builtin() else { return };
    let limits = Limits {
        fuel: 100_000,
        max_call_depth: 1_000,
        max_value_depth: 200,
        max_string_bytes: 1 << 16,
        max_list_len: 10_000,
        max_memory_bytes: 1 << 24,
        wall_clock: Duration::from_secs(2),
        max_tool_calls: 20,
    };
    let config = Config { limits, user: gh.user().to_string() };
    let report = cordon_runtime::run(&program, &Sessions::default(), &config, &mut gh);
    if let Err(e) = &report.result {
        let _ = render::human(&e.to_diagnostic(), &sources);
    }
    let _ = report.sessions.to_json();
    assert!(!gh.published("CONFIDENTIAL"), "a secret was published by\n{text}");
});
