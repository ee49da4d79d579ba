//! Any bytes, read as (lossy) UTF-8, checked as a plan against `policies/github.cord`; if the
//! checker accepts it, it runs against the simulated GitHub with small limits. Whatever it
//! does, the host must not panic, hang or overflow its stack.
//!
//! The oracle is differential (`cordon_sim::noninterference`): the plan also runs against a
//! state that differs only in secret data (alice's private repositories, so what `search_code`
//! finds) and one that differs only in what outsiders wrote (issue titles and bodies, others'
//! files), and every public effect (each `create_issue` and `comment` the host performed: the
//! tool, every argument, the order) must be the same as against the built-in state, up to
//! where a run stopped with an error. So a leak through which repository or issue is posted
//! to, or through whether a post happens, is found, not only a secret copied into a body; and
//! a plan that posts the word "CONFIDENTIAL" of its own is not a false alarm. Every variation
//! of each kind is tried: a run takes milliseconds, less than the check before it.

#![no_main]

use std::time::Duration;

use cordon_sim::GitHub;
use cordon_sim::noninterference::{Protected, VARIANTS, compare, observe, vary};
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
    let Ok(base) = GitHub::builtin() else { return };
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

    // The run itself, with its error rendered and its sessions saved as a host would.
    let config = Config { limits: limits.clone(), user: base.user().to_string() };
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut base.clone());
    if let Err(e) = &report.result {
        let _ = render::human(&e.to_diagnostic(), &sources);
    }
    let _ = report.sessions.to_json();

    // The differential oracle.
    let seen = observe(&program, &base, &limits);
    for what in [Protected::Secret, Protected::Outsider] {
        for variant in 0..VARIANTS {
            let Ok(other) = vary(&base, what, variant) else { return };
            if let Err(leak) = compare(&seen, &observe(&program, &other, &limits)) {
                panic!("{what:?} data (variant {variant}) changed what was published: {leak}\nby\n{text}");
            }
        }
    }
});
