//! The crates stand in layers, and a crate's code depends only on crates of lower layers
//! (its tests may reach higher: a dev-dependency builds no code a user runs). A front end
//! depends on the library alone, so whatever it does, the library does for every front end.

use std::collections::BTreeMap;

use crate::manifest::{DepKind, Manifest};

/// The problems with `manifests` against `layers` (each crate's name and its layer, lowest 0):
/// a workspace crate without a layer, a layer for no crate, and every `[dependencies]` or
/// `[build-dependencies]` entry naming a workspace crate that is not in a lower layer.
pub fn check(manifests: &[&Manifest], layers: &[(&str, u32)]) -> Vec<String> {
    let layer_of: BTreeMap<&str, u32> = layers.iter().copied().collect();
    let mut problems = Vec::new();
    for (name, _) in layers {
        if !manifests.iter().any(|m| m.name == *name) {
            problems.push(format!("{name} has a layer but no crate of that name is in the workspace"));
        }
    }
    for manifest in manifests {
        let Some(&own) = layer_of.get(manifest.name.as_str()) else {
            problems.push(format!("{} has no layer: add it to the table", manifest.name));
            continue;
        };
        for dep in manifest.deps_of(DepKind::Normal).chain(manifest.deps_of(DepKind::Build)) {
            match layer_of.get(dep) {
                Some(&theirs) if theirs >= own => problems.push(format!(
                    "{} (layer {own}) depends on {dep} (layer {theirs}): a crate depends only on lower layers",
                    manifest.name
                )),
                _ => {}
            }
        }
    }
    problems
}

/// The problems with `front_end`'s `[dependencies]`: any crate of the workspace but `library`.
pub fn front_end(manifests: &[&Manifest], front_end: &str, library: &str) -> Vec<String> {
    let Some(manifest) = manifests.iter().find(|m| m.name == front_end) else {
        return vec![format!("no crate {front_end} in the workspace")];
    };
    manifest
        .deps_of(DepKind::Normal)
        .chain(manifest.deps_of(DepKind::Build))
        .filter(|dep| *dep != library && manifests.iter().any(|m| m.name == *dep))
        .map(|dep| format!("{front_end} depends on {dep}: a front end reaches the workspace only through {library}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str, deps: &[(&str, DepKind)]) -> Manifest {
        Manifest { name: name.into(), deps: deps.iter().map(|(d, k)| (d.to_string(), *k)).collect() }
    }

    const LAYERS: &[(&str, u32)] = &[("syntax", 0), ("runtime", 1), ("engine", 1), ("lib", 2), ("cli", 3)];

    fn workspace() -> Vec<Manifest> {
        vec![
            manifest("syntax", &[("serde", DepKind::Normal)]),
            manifest("runtime", &[("syntax", DepKind::Normal), ("engine", DepKind::Dev)]),
            manifest("engine", &[("syntax", DepKind::Normal)]),
            manifest("lib", &[("runtime", DepKind::Normal), ("engine", DepKind::Normal)]),
            manifest("cli", &[("lib", DepKind::Normal), ("runtime", DepKind::Dev), ("clap", DepKind::Normal)]),
        ]
    }

    #[test]
    fn a_workspace_that_depends_downwards_holds() {
        let workspace = workspace();
        let manifests: Vec<_> = workspace.iter().collect();
        assert_eq!(check(&manifests, LAYERS), Vec::<String>::new());
        assert_eq!(front_end(&manifests, "cli", "lib"), Vec::<String>::new());
    }

    #[test]
    fn an_upward_or_sideways_dependency_breaks_the_layers() {
        let mut workspace = workspace();
        workspace[0].deps.push(("lib".into(), DepKind::Normal));
        workspace[2].deps.push(("runtime".into(), DepKind::Build));
        let manifests: Vec<_> = workspace.iter().collect();
        let problems = check(&manifests, LAYERS);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("syntax (layer 0) depends on lib (layer 2)"), "{problems:?}");
        assert!(problems[1].starts_with("engine (layer 1) depends on runtime (layer 1)"), "{problems:?}");
    }

    #[test]
    fn a_crate_without_a_layer_or_a_layer_without_a_crate_is_named() {
        let mut workspace = workspace();
        workspace.push(manifest("new", &[]));
        workspace.retain(|m| m.name != "engine");
        let manifests: Vec<_> = workspace.iter().collect();
        let problems = check(&manifests, LAYERS);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("engine has a layer")), "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("new has no layer")), "{problems:?}");
    }

    #[test]
    fn a_front_end_reaching_past_the_library_is_named() {
        let mut workspace = workspace();
        workspace[4].deps.push(("engine".into(), DepKind::Normal));
        let manifests: Vec<_> = workspace.iter().collect();
        let problems = front_end(&manifests, "cli", "lib");
        assert_eq!(problems, ["cli depends on engine: a front end reaches the workspace only through lib"]);
        assert_eq!(check(&manifests, LAYERS), Vec::<String>::new(), "downwards, so the layers alone allow it");
    }
}
