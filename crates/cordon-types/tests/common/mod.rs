//! What the test files share: where the repository is, and how a corpus file splits into
//! policy modules and a plan (the format of `tests/corpus/README.md`).

use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.cord` file below `dir`, sorted.
pub fn cord_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "cord") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// A corpus file's parts. `//@ policy: PATH` lines name policy modules (relative to the
/// repository root); the text before a `//@ plan` line is an inline policy. The plan keeps the
/// file's line numbers (the inline policy's lines are blank in it).
#[derive(Debug)]
pub struct CorpusParts {
    pub policy_paths: Vec<String>,
    pub inline_policy: Option<String>,
    pub plan: String,
}

pub fn split_corpus_file(text: &str) -> CorpusParts {
    let policy_paths =
        text.lines().filter_map(|l| l.strip_prefix("//@ policy:")).map(|p| p.trim().to_string()).collect();
    match text.lines().position(|l| l.trim_end() == "//@ plan") {
        Some(marker) => {
            let policy: Vec<&str> = text.lines().take(marker).collect();
            let rest: Vec<&str> = text.lines().skip(marker + 1).collect();
            CorpusParts {
                policy_paths,
                inline_policy: Some(policy.join("\n")),
                plan: format!("{}{}", "\n".repeat(marker + 1), rest.join("\n")),
            }
        }
        None => CorpusParts { policy_paths, inline_policy: None, plan: text.to_string() },
    }
}
