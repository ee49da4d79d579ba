//! How precise the labels' static analysis is on the example plans: each plan the checker
//! accepts is summarised (`cordon_flow::analyze`) and run in its environment, every call it
//! proposes seen (`proposed`). For each call site the summary marks "may be refused" (neither
//! proved within its sinks nor refused on every path), the runs say whether it was in fact
//! allowed (a false alarm: a warning the run did not need), refused, or not reached. The table
//! is printed (`cargo test -p cordon-sim --test flow_precision -- --nocapture`) and pinned, so
//! the figures of `docs/guide/plans.md` cannot drift; no site the summary proved, or refused, may be judged
//! otherwise by the run; and every call each run proposes lies within the summary's count and
//! label bounds.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

#[path = "../../cordon-runtime/tests/common/proposed.rs"]
mod proposed;

use std::collections::BTreeMap;
use std::path::Path;

use cordon_flow::Verdict;
use cordon_runtime::{Limits, Program};
use cordon_syntax::SourceMap;
use cordon_types::CheckOptions;

/// What the runs made of the summary's sites, for one environment's examples.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    plans: u32,
    sites: u32,
    allowed: u32,
    must: u32,
    may: u32,
    /// "May" sites every run reaching them allowed.
    may_allowed: u32,
    /// "May" sites some run refused.
    may_refused: u32,
    may_unreached: u32,
}

fn tally(env: &str) -> Tally {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(env);
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut t = Tally::default();
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "cord")) {
        let mut host = cordon_sim::env(env).unwrap();
        let user = host.principal().unwrap_or_default().to_string();
        let mut sources = SourceMap::new();
        let policy = sources.add("policy.cord", host.policy().unwrap_or_default());
        let file = sources.add(path.display().to_string(), std::fs::read_to_string(path).unwrap());
        let outcome = cordon_types::check(&sources, &[policy], Some(file), &CheckOptions::default());
        let Some(checked) = outcome.program.as_ref() else { continue };
        t.plans += 1;
        let summary = cordon_flow::analyze(checked, &sources, &user);
        let program = Program::new(checked).unwrap();
        let effects = proposed::proposed(&program, host.as_mut(), &user, &Limits::default()).unwrap();
        // Sound on every example: each call within the summary's count and bounds.
        proposed::within(&summary, &effects).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Per site: was it reached, and did any run refuse it on labels?
        let mut runs: BTreeMap<(u32, u32), bool> = BTreeMap::new();
        for e in &effects {
            *runs.entry((e.span.start, e.span.end)).or_default() |= !e.flows.is_empty();
        }
        for site in &summary.calls {
            t.sites += 1;
            let refused = runs.get(&(site.span.start, site.span.end)).copied();
            let name = format!("{}: line {} {}", path.display(), site.line, site.name());
            match (site.verdict(), refused) {
                (Verdict::Allowed, Some(true)) => panic!("{name}: proved within its sinks, refused by the run"),
                (Verdict::Must, Some(false)) => panic!("{name}: refused on every path, allowed by the run"),
                (Verdict::Allowed, _) => t.allowed += 1,
                (Verdict::Must, _) => t.must += 1,
                (Verdict::May, r) => {
                    t.may += 1;
                    match r {
                        Some(false) => t.may_allowed += 1,
                        Some(true) => t.may_refused += 1,
                        None => t.may_unreached += 1,
                    }
                }
            }
        }
    }
    println!(
        "{env}: {} plans, {} call sites: {} proved within their sinks, {} refused on every path, {} left to the run \
         ({} allowed by it: false alarms; {} refused; {} not reached)",
        t.plans, t.sites, t.allowed, t.must, t.may, t.may_allowed, t.may_refused, t.may_unreached
    );
    t
}

#[test]
fn the_summary_on_the_examples() {
    let github = tally("github");
    let chat = tally("chat");
    let shop = tally("shop");
    let mail = tally("mail");
    // Pinned: a change in precision shows here and in the table of `docs/guide/plans.md`.
    let pinned = |plans, sites, allowed, must, may, may_allowed, may_refused, may_unreached| Tally {
        plans,
        sites,
        allowed,
        must,
        may,
        may_allowed,
        may_refused,
        may_unreached,
    };
    // github: a repository `org_repos(org)` returns is known to be `org`'s and internal, as its
    // declared result says, so calls on it are judged with the organisation's group.
    assert_eq!(github, pinned(11, 36, 32, 2, 2, 0, 2, 0), "github");
    // chat: the two fetches of a link posted in a public channel (the workspace's data) are refused
    // with no one to ask (the policy releases it on a card).
    assert_eq!(chat, pinned(15, 46, 29, 3, 14, 7, 7, 0), "chat");
    assert_eq!(shop, pinned(4, 9, 8, 0, 1, 0, 1, 0), "shop");
    assert_eq!(mail, pinned(17, 42, 33, 0, 9, 2, 7, 0), "mail");
}
