//! Runs the conformance corpus: every program under `tests/corpus/accept` must check without
//! errors, and every program under `tests/corpus/reject` must give exactly the errors marked on
//! its lines with `//~ ERROR code`. A case is checked as `cordon check` checks a plan: the
//! checker's rules, then the static label analysis's (`cordon_flow::check`), so every accept
//! case is also one the labels must not refuse before it runs. See `tests/corpus/README.md` for
//! the format.

#[path = "../../cordon-types/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{cord_files, repo_root, split_corpus_file};

use cordon_syntax::{Code, SourceMap};
use cordon_types::CheckOptions;

/// (line, code) pairs, counted.
type Expectations = BTreeMap<(u32, String), usize>;

fn expected_errors(text: &str) -> Result<Expectations, String> {
    let mut out = Expectations::new();
    for (i, line) in text.lines().enumerate() {
        for part in line.split("//~").skip(1) {
            let code = part.trim().strip_prefix("ERROR").map(str::trim).and_then(|c| c.split_whitespace().next());
            match code {
                Some(c) if Code::named(c).is_some() => *out.entry((i as u32 + 1, c.to_string())).or_default() += 1,
                _ => return Err(format!("line {}: malformed expectation `//~{part}`", i + 1)),
            }
        }
    }
    Ok(out)
}

/// Checks one corpus file; returns a description of every mismatch.
fn run_case(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let parts = split_corpus_file(&text);
    let name = path.strip_prefix(repo_root()).unwrap_or(path).display().to_string();
    let mut sources = SourceMap::new();
    let mut policies = Vec::new();
    for p in &parts.policy_paths {
        let policy_text = std::fs::read_to_string(repo_root().join(p)).map_err(|e| format!("policy {p}: {e}"))?;
        policies.push(sources.add(p.as_str(), policy_text));
    }
    if let Some(inline) = parts.inline_policy {
        policies.push(sources.add(format!("{name}#policy"), inline));
    }
    let plan = sources.add(name.clone(), parts.plan);
    let mut options = CheckOptions::default();
    if let Some(ms) = text.lines().find_map(|l| l.strip_prefix("//@ solver-timeout-ms:")) {
        options.solver_timeout_ms = ms.trim().parse().map_err(|e| format!("bad solver timeout: {e}"))?;
    }
    if let Some(ms) = text.lines().find_map(|l| l.strip_prefix("//@ check-timeout-ms:")) {
        options.check_timeout_ms = ms.trim().parse().map_err(|e| format!("bad check timeout: {e}"))?;
    }
    let user = text.lines().find_map(|l| l.strip_prefix("//@ user:")).map_or("user", str::trim);
    let (outcome, _) = cordon_flow::check(&sources, &policies, Some(plan), &options, user, false);
    let mut got = Expectations::new();
    let mut foreign = Vec::new();
    for d in outcome.diagnostics.iter().filter(|d| d.is_error()) {
        let span = d.span();
        let file = sources.file(span.file);
        if file.name != name && !file.name.ends_with("#policy") {
            foreign.push(format!("{}:{}: {} {}", file.name, file.line_col(span.start).0, d.code.as_str(), d.message));
            continue;
        }
        *got.entry((file.line_col(span.start).0, d.code.as_str().to_string())).or_default() += 1;
    }
    let expected = expected_errors(&text)?;
    if got == expected && foreign.is_empty() {
        return Ok(());
    }
    let mut report = Vec::new();
    for ((line, code), n) in &expected {
        let g = got.get(&(*line, code.clone())).copied().unwrap_or(0);
        if g < *n {
            report.push(format!("  line {line}: expected {code}, not reported"));
        }
    }
    for ((line, code), n) in &got {
        let e = expected.get(&(*line, code.clone())).copied().unwrap_or(0);
        if *n > e {
            let msg = outcome
                .diagnostics
                .iter()
                .find(|d| d.code.as_str() == code && sources.file(d.span().file).line_col(d.span().start).0 == *line)
                .map(|d| d.message.clone())
                .unwrap_or_default();
            report.push(format!("  line {line}: unexpected {code}: {msg}"));
        }
    }
    for f in foreign {
        report.push(format!("  in a policy: {f}"));
    }
    Err(report.join("\n"))
}

#[test]
fn corpus() {
    let root = repo_root().join("tests/corpus");
    let accept = cord_files(&root.join("accept"));
    let reject = cord_files(&root.join("reject"));
    let mut failures = Vec::new();
    for path in &reject {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if !text.contains("//~ ERROR") {
            failures.push(format!("{}: a reject case must mark an expected error", path.display()));
        }
    }
    for path in &accept {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains("//~") {
            failures.push(format!("{}: an accept case cannot expect errors", path.display()));
        }
    }
    let all: Vec<&PathBuf> = accept.iter().chain(&reject).collect();
    let results: Vec<(String, Result<(), String>)> = std::thread::scope(|s| {
        let workers = 2;
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let chunk: Vec<&PathBuf> = all.iter().skip(w).step_by(workers).copied().collect();
                s.spawn(move || chunk.into_iter().map(|p| (p.display().to_string(), run_case(p))).collect::<Vec<_>>())
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    for (path, r) in results {
        if let Err(e) = r {
            failures.push(format!("{path}:\n{e}"));
        }
    }
    println!("corpus: {} accept, {} reject", accept.len(), reject.len());
    assert!(
        accept.len() >= 180 && reject.len() >= 200,
        "the corpus shrank: {} accept, {} reject",
        accept.len(),
        reject.len()
    );
    assert!(failures.is_empty(), "{} corpus case(s) failed:\n{}", failures.len(), failures.join("\n"));
}
