//! What the checks read from a `Cargo.toml`: the package's name and the names of its
//! dependencies, by kind. A reader of the few forms this workspace writes (`name.workspace =
//! true`, `name = "1"`, `name = { … }`, `[dependencies.name]`), not of all TOML: a line in a
//! dependency table it cannot read is an error, so nothing slips past it unread.

use std::fmt;

/// Which table a dependency is listed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DepKind {
    /// `[dependencies]` (or a target's): what the crate's own code is built with.
    Normal,
    /// `[build-dependencies]`: what its build script is built with.
    Build,
    /// `[dev-dependencies]`: what only its tests, benchmarks and examples are built with.
    Dev,
}

/// A crate's manifest, as far as the checks need it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The package's name.
    pub name: String,
    /// Each dependency's name (as `package = "…"` renames it, the real one) and table.
    pub deps: Vec<(String, DepKind)>,
}

impl Manifest {
    /// The names it depends on in table `kind`.
    pub fn deps_of(&self, kind: DepKind) -> impl Iterator<Item = &str> {
        self.deps.iter().filter(move |(_, k)| *k == kind).map(|(name, _)| name.as_str())
    }
}

/// A manifest the reader cannot read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The table a header opens: a dependency table (and, for `[dependencies.name]`, the one
/// dependency it is about), `[package]`, or another.
enum Table {
    Deps(DepKind, Option<String>),
    Package,
    Other,
}

fn table(header: &str) -> Table {
    let path: Vec<&str> = header.split('.').map(str::trim).collect();
    // `target.'cfg(…)'.dependencies` names a target's table; its key may itself hold dots.
    let tail = match path.first() {
        Some(&"target") => path.iter().rposition(|p| p.ends_with("dependencies")).map_or(&path[..0], |i| &path[i..]),
        _ => &path[..],
    };
    let kind = match tail.first() {
        Some(&"dependencies") => DepKind::Normal,
        Some(&"build-dependencies") => DepKind::Build,
        Some(&"dev-dependencies") => DepKind::Dev,
        Some(&"package") if tail.len() == 1 => return Table::Package,
        _ => return Table::Other,
    };
    Table::Deps(kind, tail.get(1).map(|s| s.to_string()))
}

/// The manifest `text` describes.
pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
    let mut name = None;
    let mut deps = Vec::new();
    let mut current = Table::Other;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.split(" #").next().unwrap_or(raw).trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if let Some(header) = content.strip_prefix('[') {
            let header = header.trim_start_matches('[').trim_end_matches(']');
            current = table(header);
            if let Table::Deps(kind, Some(dep)) = &current {
                deps.push((dep.clone(), *kind));
            }
            continue;
        }
        let Some((key, value)) = content.split_once('=') else {
            if matches!(current, Table::Deps(..)) {
                return Err(ManifestError { line, message: format!("a dependency line without `=`: {content}") });
            }
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match &mut current {
            Table::Package if key == "name" => name = Some(value.trim_matches('"').to_string()),
            Table::Deps(kind, None) => {
                let listed = key.split('.').next().unwrap_or(key).trim_matches('"');
                let package = renamed(value).unwrap_or(listed);
                deps.push((package.to_string(), *kind));
            }
            Table::Deps(_, Some(dep)) if key == "package" => {
                let package = value.trim_matches('"').to_string();
                if let Some(last) = deps.last_mut() {
                    last.0 = package.clone();
                }
                *dep = package;
            }
            _ => {}
        }
    }
    let name = name.ok_or_else(|| ManifestError { line: 0, message: "no `[package]` name".into() })?;
    Ok(Manifest { name, deps })
}

/// The package an inline table names with `package = "…"`.
fn renamed(value: &str) -> Option<&str> {
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    inner.split(',').find_map(|field| {
        let (key, value) = field.split_once('=')?;
        (key.trim() == "package").then(|| value.trim().trim_matches('"'))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use super::*;

    #[test]
    fn every_form_of_dependency_is_read() {
        let text = r#"
[package]
name = "demo"
version.workspace = true

[dependencies]
cordon-syntax.workspace = true
serde = { version = "1", features = ["derive"] } # a comment
engine = { package = "cordon-engine", path = "../x" }

[dependencies.cordon-flow]
workspace = true

[target.'cfg(unix)'.dependencies]
cordon-store = "1"

[build-dependencies]
cc = "1"

[dev-dependencies]
cordon-sim.workspace = true

[[bench]]
name = "not-a-dependency"
"#;
        let manifest = parse(text).unwrap();
        assert_eq!(manifest.name, "demo");
        let normal: Vec<_> = manifest.deps_of(DepKind::Normal).collect();
        assert_eq!(normal, ["cordon-syntax", "serde", "cordon-engine", "cordon-flow", "cordon-store"]);
        assert_eq!(manifest.deps_of(DepKind::Build).collect::<Vec<_>>(), ["cc"]);
        assert_eq!(manifest.deps_of(DepKind::Dev).collect::<Vec<_>>(), ["cordon-sim"]);
    }

    #[test]
    fn a_line_it_cannot_read_is_an_error() {
        let error = parse("[package]\nname = \"x\"\n[dependencies]\ncordon-engine\n").unwrap_err();
        assert_eq!(error.line, 4);
        assert!(parse("[dependencies]\na = \"1\"\n").is_err(), "no package name");
    }
}
