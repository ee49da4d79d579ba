//! The `files` environment: the real filesystem capability (`Fs`, cap-std) over a fixture tree
//! written into a fresh temporary directory for each case, so that a benchmark measures the
//! host users run, not a simulation of it.
//!
//! The data file says which directories are granted and what is on disk:
//!
//! ```json
//! { "roots": { "notes": "rw", "inbox": "ro" },
//!   "tree": { "notes": { "todo.md": "text" }, "inbox": {}, "home": { "key": "not granted" } },
//!   "symlinks": { "inbox/key": "../home/key" } }
//! ```
//!
//! `tree` is the disk: an object is a directory, a string a file's text. Only the directories
//! `roots` names are granted (read-only or read-write), each under its own name; the rest of the
//! tree is there to be reached for. `symlinks` places links (a path under the tree, and what it
//! points to, as written). After the run the state is the tree read back the same way, with
//! each link as `{ "symlink": TARGET }`.

use std::path::Path;

use cordon_engine::Hosts;
use cordon_fs::{Fs, FsLimits, Grant, Mode};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The name suites give this environment (`env = "files"`).
pub const ENV: &str = "files";

/// The data file of the `files` environment.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    roots: std::collections::BTreeMap<String, String>,
    tree: Map<String, Value>,
    #[serde(default)]
    symlinks: std::collections::BTreeMap<String, String>,
}

/// A fixture tree on disk, removed when dropped.
pub struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// Writes `data` (the data file's JSON) to a fresh directory, and opens the `Fs` host over
    /// the roots it grants, acting for `cordon_fs::DEFAULT_PRINCIPAL`.
    pub fn open(data: &str) -> Result<(Fixture, Hosts), String> {
        let data: Data = serde_json::from_str(data).map_err(|e| format!("the `files` data file: {e}"))?;
        let dir = tempfile::tempdir().map_err(|e| format!("cannot make a directory for the fixture: {e}"))?;
        write_tree(dir.path(), &data.tree)?;
        for (link, target) in &data.symlinks {
            let at = inside(dir.path(), link)?;
            std::os::unix::fs::symlink(target, &at).map_err(|e| format!("cannot link `{link}`: {e}"))?;
        }
        let mut grants = Vec::new();
        for (name, mode) in &data.roots {
            let mode = match mode.as_str() {
                "ro" => Mode::ReadOnly,
                "rw" => Mode::ReadWrite,
                other => return Err(format!("the root `{name}` is `{other}`: a root is \"ro\" or \"rw\"")),
            };
            let path = inside(dir.path(), name)?;
            if !path.is_dir() {
                return Err(format!("the root `{name}` is not a directory of the tree"));
            }
            grants.push(Grant { name: name.clone(), path, mode });
        }
        let fs = Fs::open(&grants, cordon_fs::DEFAULT_PRINCIPAL, FsLimits::default())?;
        let mut hosts = Hosts::new();
        hosts.add(Box::new(fs))?;
        Ok((Fixture { dir }, hosts))
    }

    /// The tree as it is now, as `{ "tree": .. }`.
    pub fn state(&self) -> Value {
        let mut state = Map::new();
        state.insert("tree".into(), read_tree(self.dir.path()));
        Value::Object(state)
    }
}

/// `rel` (a path of plain names, `/` between them) under `base`; anything else is refused, so
/// a data file cannot write outside its fixture.
fn inside(base: &Path, rel: &str) -> Result<std::path::PathBuf, String> {
    let plain = |name: &str| !name.is_empty() && name != "." && name != ".." && !name.contains('\\');
    if !rel.split('/').all(plain) {
        return Err(format!("`{rel}` is not a path of plain names in the fixture"));
    }
    Ok(base.join(rel))
}

fn write_tree(at: &Path, tree: &Map<String, Value>) -> Result<(), String> {
    std::fs::create_dir_all(at).map_err(|e| format!("cannot make {}: {e}", at.display()))?;
    for (name, node) in tree {
        let path = inside(at, name)?;
        match node {
            Value::String(text) => std::fs::write(&path, text).map_err(|e| format!("cannot write `{name}`: {e}"))?,
            Value::Object(sub) => write_tree(&path, sub)?,
            _ => return Err(format!("`{name}` in the tree is neither a file's text nor a directory")),
        }
    }
    Ok(())
}

/// A directory read back: files as their text (lossy, where not UTF-8), links as
/// `{ "symlink": TARGET }`, directories as objects.
fn read_tree(at: &Path) -> Value {
    let mut out = Map::new();
    let Ok(entries) = std::fs::read_dir(at) else { return Value::Object(out) };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let node = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&path).map(|t| t.display().to_string()).unwrap_or_default();
                Value::Object(Map::from_iter([("symlink".to_string(), Value::String(target))]))
            }
            Ok(m) if m.is_dir() => read_tree(&path),
            Ok(_) => Value::String(String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned()),
            Err(_) => continue,
        };
        out.insert(name, node);
    }
    Value::Object(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test may fail loudly
mod tests {
    use super::*;

    #[test]
    fn a_fixture_is_written_granted_and_read_back() {
        let data = r#"{ "roots": { "notes": "rw" },
            "tree": { "notes": { "a.txt": "hello", "sub": { "b.txt": "x" } }, "home": { "key": "k" } },
            "symlinks": { "notes/key": "../home/key" } }"#;
        let (fixture, hosts) = Fixture::open(data).unwrap();
        assert!(hosts.serves("Fs"));
        let state = fixture.state();
        assert_eq!(state.pointer("/tree/notes/a.txt"), Some(&Value::String("hello".into())));
        assert_eq!(state.pointer("/tree/notes/sub/b.txt"), Some(&Value::String("x".into())));
        assert_eq!(state.pointer("/tree/notes/key/symlink"), Some(&Value::String("../home/key".into())));
    }

    #[test]
    fn a_data_file_cannot_reach_outside_its_fixture() {
        for data in [
            r#"{ "roots": {}, "tree": { "..": { "x": "y" } } }"#,
            r#"{ "roots": {}, "tree": {}, "symlinks": { "../x": "y" } }"#,
            r#"{ "roots": { "../etc": "ro" }, "tree": {} }"#,
            r#"{ "roots": { "notes": "rwx" }, "tree": { "notes": {} } }"#,
            r#"{ "roots": { "notes": "ro" }, "tree": {} }"#,
        ] {
            assert!(Fixture::open(data).is_err(), "{data}");
        }
    }
}
