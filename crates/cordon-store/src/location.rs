//! Where the store lives: a path given by the user, else `CORDON_STORE`, else
//! `$XDG_DATA_HOME/cordon/cordon.db`, else `~/.local/share/cordon/cordon.db`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::StoreError;

/// The store's path: `explicit` (a `--store` argument) if given, else from the environment.
pub fn location(explicit: Option<&Path>) -> Result<PathBuf, StoreError> {
    resolve(explicit, |name| std::env::var_os(name))
}

fn resolve(explicit: Option<&Path>, env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, StoreError> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    let set = |name| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(path) = set("CORDON_STORE") {
        return Ok(path);
    }
    // The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
    let data = set("XDG_DATA_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| set("HOME").map(|home| home.join(".local/share")))
        .ok_or(StoreError::NoLocation)?;
    Ok(data.join("cordon").join("cordon.db"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(explicit: Option<&str>, vars: &[(&str, &str)], expect: Option<&str>) {
        let env = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v));
        let got = resolve(explicit.map(Path::new), env).ok();
        assert_eq!(got, expect.map(PathBuf::from), "{explicit:?} {vars:?}");
    }

    #[test]
    fn the_first_that_is_set_wins() {
        let all = [("CORDON_STORE", "/s.db"), ("XDG_DATA_HOME", "/xdg"), ("HOME", "/home/u")];
        check(Some("a.db"), &all, Some("a.db"));
        check(None, &all, Some("/s.db"));
        check(None, &all[1..], Some("/xdg/cordon/cordon.db"));
        check(None, &all[2..], Some("/home/u/.local/share/cordon/cordon.db"));
        check(None, &[], None);
    }

    #[test]
    fn empty_and_relative_values_are_ignored() {
        check(None, &[("CORDON_STORE", ""), ("HOME", "/h")], Some("/h/.local/share/cordon/cordon.db"));
        check(None, &[("XDG_DATA_HOME", "rel"), ("HOME", "/h")], Some("/h/.local/share/cordon/cordon.db"));
        check(None, &[("XDG_DATA_HOME", "rel")], None);
    }
}
