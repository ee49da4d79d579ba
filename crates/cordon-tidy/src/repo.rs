//! The repository as the checks see it: every crate's manifest and every Rust file under
//! `crates/` and `fuzz/`, read once from disk, or made in memory by a unit test.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::manifest::{self, Manifest};
use crate::scan::{self, ScanError, Token};

/// A Rust source file and the crate it belongs to, with its tokens once scanned (each check
/// reads them; the repository is scanned once).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// The package name of its crate (`cordon-runtime`); empty outside `crates/`.
    pub krate: String,
    /// Its path from the repository's root, with `/` between parts.
    pub path: String,
    pub text: String,
    tokens: OnceLock<Result<Vec<Token>, ScanError>>,
    code: OnceLock<Vec<Token>>,
}

impl SourceFile {
    pub fn new(krate: &str, path: &str, text: &str) -> SourceFile {
        SourceFile {
            krate: krate.into(),
            path: path.into(),
            text: text.into(),
            tokens: OnceLock::new(),
            code: OnceLock::new(),
        }
    }

    /// Its tokens, or where it cannot be scanned.
    pub fn tokens(&self) -> Result<&[Token], String> {
        match self.tokens.get_or_init(|| scan::tokens(&self.text)) {
            Ok(tokens) => Ok(tokens),
            Err(e) => Err(format!("{}: {e}", self.path)),
        }
    }

    /// Its tokens without its test items ([`scan::without_tests`]).
    pub fn code(&self) -> Result<&[Token], String> {
        let tokens = self.tokens()?;
        Ok(self.code.get_or_init(|| scan::without_tests(tokens)))
    }

    /// Its path inside its crate's `src/` (`machine.rs`, `builtins/mod.rs`), if it is there:
    /// the crate's own code, not its tests, benchmarks or examples.
    pub fn in_src(&self) -> Option<&str> {
        let mut parts = self.path.splitn(4, '/');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some("crates"), Some(_), Some("src"), Some(rest)) => Some(rest),
            _ => None,
        }
    }
}

/// Every manifest and source file of a repository.
#[derive(Clone, Debug, Default)]
pub struct Repo {
    /// Each crate's manifest and its directory's path from the root (`crates/cordon-flow`).
    pub manifests: Vec<(String, Manifest)>,
    pub files: Vec<SourceFile>,
}

impl Repo {
    /// The repository holding this crate (two directories above its manifest).
    pub fn this() -> Result<Repo, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        Repo::read(&root)
    }

    /// Reads the repository at `root`.
    pub fn read(root: &Path) -> Result<Repo, String> {
        let mut repo = Repo::default();
        let mut crates = list(&root.join("crates"))?;
        crates.sort();
        for dir in crates.into_iter().filter(|d| d.join("Cargo.toml").is_file()) {
            let rel = relative(root, &dir);
            let text = read(&dir.join("Cargo.toml"))?;
            let manifest = manifest::parse(&text).map_err(|e| format!("{rel}/Cargo.toml: {e}"))?;
            for path in rust_files(&dir)? {
                repo.files.push(SourceFile::new(&manifest.name, &relative(root, &path), &read(&path)?));
            }
            repo.manifests.push((rel, manifest));
        }
        for path in rust_files(&root.join("fuzz"))? {
            repo.files.push(SourceFile::new("", &relative(root, &path), &read(&path)?));
        }
        Ok(repo)
    }

    /// The manifests alone.
    pub fn manifests(&self) -> Vec<&Manifest> {
        self.manifests.iter().map(|(_, m)| m).collect()
    }
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn list(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    entries.map(|e| e.map(|e| e.path()).map_err(|e| format!("{}: {e}", dir.display()))).collect()
}

/// The `.rs` files under `dir`, sorted, skipping build output (`target`) and hidden
/// directories. No directory is no files.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for path in list(&next)? {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_crates_src_is_its_own_code() {
        assert_eq!(SourceFile::new("a", "crates/a/src/x/y.rs", "").in_src(), Some("x/y.rs"));
        assert_eq!(SourceFile::new("a", "crates/a/tests/src/y.rs", "").in_src(), None);
        assert_eq!(SourceFile::new("", "fuzz/fuzz_targets/run.rs", "").in_src(), None);
    }
}
