//! Puts the commit the binary was built from into `cordon --version`: `cordon 0.1.0 (abc1234
//! 2026-12-06)`. It asks `git` when there is one and the sources are a checkout; anywhere else
//! (a source tarball, a machine without git) the version is the crate's alone. Nothing is
//! downloaded and nothing here fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = env!("CARGO_PKG_VERSION");
    let dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_default();
    let shown = match commit(&dir) {
        Some((hash, date)) => {
            watch(&dir);
            format!("{version} ({hash} {date})")
        }
        None => version.to_string(),
    };
    println!("cargo:rustc-env=CORDON_VERSION={shown}");
}

/// The short hash and the date (`YYYY-MM-DD`) of the commit checked out, if `git` knows one.
fn commit(dir: &Path) -> Option<(String, String)> {
    let hash = git(dir, &["rev-parse", "--short", "HEAD"])?;
    let date = git(dir, &["log", "-1", "--format=%cs"])?;
    let plain = |text: &str| !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    (plain(&hash) && plain(&date)).then_some((hash, date))
}

/// Builds again when the checked-out commit changes: `HEAD` (a new branch or a detached
/// commit), the branch's ref (a new commit on it; while the ref is only in `packed-refs`, the
/// folder where its own file would appear) and `packed-refs`. Only paths that exist are named:
/// Cargo reruns a script on every build when a named path is missing.
fn watch(dir: &Path) {
    let mut paths = Vec::new();
    for name in ["HEAD", "packed-refs"] {
        paths.extend(git(dir, &["rev-parse", "--git-path", name]).map(|path| dir.join(path)));
    }
    let branch = git(dir, &["symbolic-ref", "-q", "HEAD"]);
    if let Some(path) = branch.and_then(|branch| git(dir, &["rev-parse", "--git-path", &branch])) {
        let path = dir.join(path);
        let folder = path.parent().map(Path::to_path_buf);
        paths.push(if path.is_file() { path } else { folder.unwrap_or(path) });
    }
    for path in paths.into_iter().filter(|path| path.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// What `git ARGS` prints in `dir`, trimmed; `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    Some(text.trim().to_string())
}
