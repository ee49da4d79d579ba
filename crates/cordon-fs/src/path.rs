//! A plan's path, checked by its text before the operating system sees it: relative, `/`
//! between names, no `..`, no NUL, no name longer than the filesystem allows. This check
//! exists for clear diagnostics and is not what keeps a path inside its directory: cap-std's
//! resolution does that, symlinks included, and would refuse these paths too.

use std::path::PathBuf;

use crate::Refusal;

/// The longest name a component may have, in bytes (Linux's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// The longest path a plan may give, in bytes (Linux's `PATH_MAX` is 4096 with its NUL).
pub const MAX_PATH_BYTES: usize = 4095;

/// A checked relative path: its names, none empty, `.` or `..`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelPath {
    names: Vec<String>,
}

impl RelPath {
    /// Checks `text`: `a/b.txt`, `./a//b.txt` and `a/b/` are the same path; `""` and `.` are the
    /// directory itself.
    pub fn parse(text: &str) -> Result<RelPath, Refusal> {
        let bad = |why: String| Refusal::new("bad-path", format!("the path {text:?} {why}"));
        if text.len() > MAX_PATH_BYTES {
            return Err(bad(format!("is {} bytes long; a path may have at most {MAX_PATH_BYTES}", text.len())));
        }
        if text.contains('\0') {
            return Err(bad("contains a NUL character".into()));
        }
        if text.starts_with('/') {
            return Err(bad("is absolute; paths are relative to their `Dir`, with `/` between names".into()));
        }
        if text.contains('\\') {
            return Err(bad("contains `\\`; names are separated by `/`".into()));
        }
        let mut names = Vec::new();
        for name in text.split('/') {
            match name {
                "" | "." => {}
                ".." => return Err(bad("goes up with `..`; a `Dir` reaches only what is under it".into())),
                _ if name.len() > MAX_NAME_BYTES => {
                    return Err(bad(format!(
                        "has a name of {} bytes; a name may have at most {MAX_NAME_BYTES}",
                        name.len()
                    )));
                }
                _ => names.push(name.to_string()),
            }
        }
        Ok(RelPath { names })
    }

    /// Is this the directory itself?
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The directory holding the last name, and the last name; `None` for the directory itself.
    pub fn split_last(&self) -> Option<(RelPath, &str)> {
        let (last, parent) = self.names.split_last()?;
        Some((RelPath { names: parent.to_vec() }, last))
    }

    /// The path for the operating system, relative.
    pub fn to_path(&self) -> PathBuf {
        if self.names.is_empty() { PathBuf::from(".") } else { self.names.iter().collect() }
    }

    /// `self` under `base`, as text (`base/self`).
    pub fn under(&self, base: &str) -> String {
        let mut out = base.to_string();
        for name in &self.names {
            if !out.is_empty() {
                out.push('/');
            }
            out.push_str(name);
        }
        out
    }
}

impl std::fmt::Display for RelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.under(""))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly
mod tests {
    use super::*;

    fn check(text: &str, expect: Result<&str, &str>) {
        match (RelPath::parse(text), expect) {
            (Ok(p), Ok(shown)) => assert_eq!(p.to_string(), shown, "{text:?}"),
            (Err(r), Err(why)) => {
                assert_eq!(r.code, "bad-path", "{text:?}");
                assert!(r.reason.contains(why), "{text:?}: {}", r.reason);
            }
            (got, want) => panic!("{text:?}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn paths() {
        check("a.txt", Ok("a.txt"));
        check("./a//b/", Ok("a/b"));
        check("", Ok(""));
        check(".", Ok(""));
        check("..", Err("goes up"));
        check("a/../../b", Err("goes up"));
        check("a/..", Err("goes up"));
        check("/etc/passwd", Err("absolute"));
        check("/proc/self/root/etc/passwd", Err("absolute"));
        check("a\0b", Err("NUL"));
        check("a\\..\\b", Err("`\\`"));
        check(&"x".repeat(256), Err("at most 255"));
        check(&"x".repeat(255), Ok(&"x".repeat(255)));
        check(&"a/".repeat(3000), Err("at most 4095"));
    }

    #[test]
    fn split() {
        let p = RelPath::parse("a/b/c.txt").unwrap();
        let (parent, name) = p.split_last().unwrap();
        assert_eq!((parent.to_string().as_str(), name), ("a/b", "c.txt"));
        assert_eq!(parent.under("x"), "x/a/b");
        assert!(RelPath::parse("").unwrap().split_last().is_none());
    }
}
