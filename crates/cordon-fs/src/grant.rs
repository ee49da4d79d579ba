//! What the user grants on the command line: `--dir NAME=PATH` (read-only), `--dir
//! NAME=PATH:rw` (read and write), `--dir NAME=PATH:ro`. This is the one place a path from
//! outside a directory handle is used: the root is opened once, with the ambient authority of
//! the user who typed it, and every later open is relative to it.

use std::path::PathBuf;

/// A directory the user grants a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The name plans find it by (`fs.root("reports")`), and which the policy's labels read.
    pub name: String,
    /// Where it is, as the user wrote it.
    pub path: PathBuf,
    pub mode: Mode,
}

/// Whether a plan may change anything under a root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    ReadOnly,
    ReadWrite,
}

impl Grant {
    /// Parses `NAME=PATH`, `NAME=PATH:ro` or `NAME=PATH:rw`. A name is letters, digits, `-` and
    /// `_`; without a suffix the directory is read-only.
    pub fn parse(text: &str) -> Result<Grant, String> {
        let usage = "give a directory as NAME=PATH (read-only), NAME=PATH:ro or NAME=PATH:rw";
        let Some((name, rest)) = text.split_once('=') else {
            return Err(format!("`--dir {text}`: {usage}"));
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(format!("`--dir {text}`: the name {name:?} must be letters, digits, `-` and `_`; {usage}"));
        }
        let (path, mode) = match rest.rsplit_once(':') {
            Some((path, "ro")) => (path, Mode::ReadOnly),
            Some((path, "rw")) => (path, Mode::ReadWrite),
            _ => (rest, Mode::ReadOnly),
        };
        if path.is_empty() {
            return Err(format!("`--dir {text}`: the path is empty; {usage}"));
        }
        Ok(Grant { name: name.to_string(), path: PathBuf::from(path), mode })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly
mod tests {
    use super::*;

    fn grant(name: &str, path: &str, mode: Mode) -> Result<Grant, String> {
        Ok(Grant { name: name.into(), path: path.into(), mode })
    }

    #[test]
    fn grants() {
        assert_eq!(Grant::parse("reports=./reports:ro"), grant("reports", "./reports", Mode::ReadOnly));
        assert_eq!(Grant::parse("out=/tmp/out:rw"), grant("out", "/tmp/out", Mode::ReadWrite));
        assert_eq!(Grant::parse("notes=notes"), grant("notes", "notes", Mode::ReadOnly));
        assert_eq!(Grant::parse("a=x:y:rw"), grant("a", "x:y", Mode::ReadWrite));
        assert_eq!(Grant::parse("a=x:y"), grant("a", "x:y", Mode::ReadOnly));
        for bad in ["reports", "=x", "a b=x", "a/b=x", "a=", "a=:rw"] {
            assert!(Grant::parse(bad).is_err(), "{bad}");
        }
    }
}
