//! What every shipped policy (`policies/*.cord`) must say, read from its tree: a tool whose
//! card shows content or recipients sends something in the user's name, so it asks first
//! (`@approval` other than `none`). A plan's own text is vouched for by the plan, so without
//! the card a plan an attacker wrote could say anything as the user (the benchmark's
//! `phishing_in_general`).
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_syntax::SourceMap;
use cordon_syntax::ast::{Expr, ExprKind, ItemKind, release_asks};

#[test]
fn every_tool_that_speaks_for_the_user_asks_first() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut speaking = 0;
    let mut silent = Vec::new();
    for path in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "cord")) {
        let text = std::fs::read_to_string(path).unwrap();
        let mut sources = SourceMap::default();
        let file = sources.add(path.display().to_string(), text.clone());
        let parsed = cordon_syntax::parse(file, &text);
        assert!(parsed.diagnostics.is_empty(), "{}: {:?}", path.display(), parsed.diagnostics);
        for item in &parsed.module.items {
            let ItemKind::Capability { name, tools } = &item.kind else { continue };
            for tool in tools {
                let card = tool.annotations.iter().find(|a| a.name.name == "card");
                let shows = |key: &str| {
                    card.is_some_and(|c| c.args.iter().any(|a| a.key.as_ref().is_some_and(|k| k.name == key)))
                };
                if !(shows("content") || shows("recipients")) {
                    continue;
                }
                speaking += 1;
                // `@approval(none)` read the way every stage reads it, and an `@approval(if ..)`
                // with a branch that says `none` (the filesystem's writes outside `public` wrote
                // over the user's notes without a card).
                let approval = tool.annotations.iter().find(|a| a.name.name == "approval");
                let silent_branch = approval.is_some_and(|a| a.args.iter().any(|arg| says_none(&arg.value)));
                if silent_branch || approval.is_none_or(|a| !release_asks(std::slice::from_ref(a))) {
                    silent.push(format!(
                        "{}: {}.{}",
                        path.file_name().unwrap().to_string_lossy(),
                        name.name,
                        tool.name.name
                    ));
                }
            }
        }
    }
    assert!(speaking >= 15, "only {speaking} tools found: the test reads less than it should");
    assert!(silent.is_empty(), "tools that speak for the user without asking:\n{}", silent.join("\n"));
}

/// Whether an approval's expression says `none` on some branch.
fn says_none(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(id) => id.name == "none",
        ExprKind::If { then, else_, .. } => {
            then.tail.as_deref().is_some_and(says_none) || else_.as_deref().is_some_and(says_none)
        }
        ExprKind::Block(b) => b.tail.as_deref().is_some_and(says_none),
        _ => false,
    }
}

/// Every shipped policy, unguarded (`cordon_syntax::unguarded`: the benchmark's policy-off
/// rows), still checks: the same tools, types and entry, with nothing refused and nothing asked.
#[test]
fn every_shipped_policy_unguarded_still_checks() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    for path in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "cord")) {
        let text = cordon_syntax::unguarded::unguarded(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut sources = SourceMap::default();
        let file = sources.add(path.display().to_string(), text.clone());
        for item in &cordon_syntax::parse(file, &text).module.items {
            let ItemKind::Capability { tools, .. } = &item.kind else { continue };
            let asking = tools.iter().find(|t| t.annotations.iter().any(|a| a.name.name == "approval"));
            assert!(asking.is_none(), "{}: {:?} still asks", path.display(), asking.map(|t| &t.name.name));
        }
        let outcome = cordon_types::check(&sources, &[file], None, &cordon_types::CheckOptions::default());
        let errors: Vec<_> = outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.message.clone()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}\n{text}", path.display());
    }
}
