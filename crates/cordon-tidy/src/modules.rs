//! No circle of imports between the files of a crate. Each file of a crate's `src/` is a module;
//! a path it writes (`use crate::a::B`, `super::c()`, `d::e`) is an edge to the file of the
//! module that path leads to, through re-exports (`pub use x::B` in `a` leads `crate::a::B` on
//! to `x`; the re-export itself is a door, not a use, and no edge). A circle is a set of files
//! each of which reaches the others (a strongly connected component). A file's own test
//! modules (`#[cfg(test)] mod … { … }`) are left out, as is `src/bin/`, whose files are crates
//! of their own.

use std::collections::BTreeMap;

use crate::SourceFile;
use crate::uses::{self, Path, Written};

/// How many re-exports a path is followed through before the file that re-exports is taken.
const MAX_REEXPORTS: usize = 8;

/// A circle of imports: its files' paths, in order, and each import between two of them (the
/// importing file, the imported one, the line of the first path that leads there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circle {
    pub files: Vec<String>,
    pub imports: Vec<(String, String, usize)>,
}

/// Every circle of imports in `files`, or a file the scanner cannot read.
pub fn circles(files: &[SourceFile]) -> Result<Vec<Circle>, String> {
    let mut by_crate: BTreeMap<&str, Vec<&SourceFile>> = BTreeMap::new();
    for file in files {
        if file.in_src().is_some_and(|rest| !rest.starts_with("bin/")) {
            by_crate.entry(&file.krate).or_default().push(file);
        }
    }
    let mut found = Vec::new();
    for crate_files in by_crate.values() {
        let graph = Graph::of(crate_files)?;
        found.extend(graph.components());
    }
    Ok(found)
}

/// A crate's files and the paths each writes.
struct Graph<'f> {
    files: Vec<&'f SourceFile>,
    module_of: Vec<Vec<String>>,
    file_of: BTreeMap<Vec<String>, usize>,
    paths: Vec<Vec<Path>>,
}

/// A file's module path: `lib.rs` is the root, `a/mod.rs` and `a.rs` are `a`, `a/b.rs` is `a::b`.
fn module_path(in_src: &str) -> Vec<String> {
    let stem = in_src.strip_suffix(".rs").unwrap_or(in_src);
    let mut parts: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") || parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

impl<'f> Graph<'f> {
    fn of(files: &[&'f SourceFile]) -> Result<Graph<'f>, String> {
        let module_of: Vec<Vec<String>> = files.iter().map(|f| module_path(f.in_src().unwrap_or_default())).collect();
        let file_of = module_of.iter().enumerate().map(|(i, m)| (m.clone(), i)).collect();
        let mut paths = Vec::new();
        for file in files {
            paths.push(uses::paths(file.code()?));
        }
        Ok(Graph { files: files.to_vec(), module_of, file_of, paths })
    }

    /// The absolute module path `segments` names when written in `scope`, if it starts inside
    /// the crate.
    fn absolute(&self, scope: &[String], segments: &[String]) -> Option<Vec<String>> {
        let (first, rest) = segments.split_first()?;
        match first.as_str() {
            "crate" => Some(rest.to_vec()),
            "self" => Some([scope, rest].concat()),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let base = scope.get(..scope.len().checked_sub(ups)?)?;
                Some([base, &segments[ups..]].concat())
            }
            _ => {
                let child = [scope, &segments[..1]].concat();
                self.file_of.keys().any(|m| m.starts_with(&child)).then(|| [scope, segments].concat())
            }
        }
    }

    /// The file `absolute` leads to: the deepest module on it, or, where the rest names
    /// something that module imports, the file that import leads to.
    fn target(&self, absolute: &[String], hops: usize) -> Option<usize> {
        let (length, file) =
            (0..=absolute.len()).rev().find_map(|n| self.file_of.get(&absolute[..n]).map(|f| (n, *f)))?;
        let Some(name) = absolute.get(length) else { return Some(file) };
        if hops == MAX_REEXPORTS {
            return Some(file);
        }
        let imported = self.paths[file].iter().find(|p| {
            p.inline.is_empty()
                && matches!(&p.written, Written::Use { name: Some(n), module_level: true, .. } if n == name)
        });
        let Some(import) = imported else { return Some(file) };
        let Some(onward) = self.absolute(&self.module_of[file], &import.segments) else { return Some(file) };
        self.target(&[onward.as_slice(), &absolute[length + 1..]].concat(), hops + 1)
    }

    /// Each file's imports: the files it leads to, each with the line of the first path there.
    fn edges(&self) -> Vec<BTreeMap<usize, usize>> {
        let mut edges = vec![BTreeMap::new(); self.files.len()];
        for (from, paths) in self.paths.iter().enumerate() {
            // A re-export is a door, not a use: a path through it leads on to the file behind.
            for path in paths.iter().filter(|p| !matches!(p.written, Written::Use { public: true, .. })) {
                let scope = [self.module_of[from].as_slice(), &path.inline].concat();
                let to = self.absolute(&scope, &path.segments).and_then(|a| self.target(&a, 0));
                if let Some(to) = to.filter(|to| *to != from) {
                    edges[from].entry(to).or_insert(path.line);
                }
            }
        }
        edges
    }

    /// The strongly connected components of more than one file (Tarjan's algorithm).
    fn components(&self) -> Vec<Circle> {
        let edges = self.edges();
        let mut tarjan =
            Tarjan { edges: &edges, index: vec![None; edges.len()], low: vec![0; edges.len()], ..Tarjan::default() };
        for node in 0..edges.len() {
            if tarjan.index[node].is_none() {
                tarjan.visit(node);
            }
        }
        let path = |i: usize| self.files[i].path.clone();
        let mut found: Vec<Circle> = tarjan
            .components
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|mut members| {
                members.sort_by_key(|i| path(*i));
                let imports = members
                    .iter()
                    .flat_map(|from| {
                        edges[*from]
                            .iter()
                            .filter(|(to, _)| members.contains(to))
                            .map(|(to, line)| (path(*from), path(*to), *line))
                    })
                    .collect();
                Circle { files: members.into_iter().map(path).collect(), imports }
            })
            .collect();
        found.sort_by(|a, b| a.files.cmp(&b.files));
        found
    }
}

#[derive(Default)]
struct Tarjan<'e> {
    edges: &'e [BTreeMap<usize, usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    next: usize,
    stack: Vec<usize>,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    /// Visits `node`; the recursion is as deep as the longest chain of a crate's files.
    fn visit(&mut self, node: usize) {
        self.index[node] = Some(self.next);
        self.low[node] = self.next;
        self.next += 1;
        self.stack.push(node);
        for &to in self.edges[node].keys() {
            match self.index[to] {
                None => {
                    self.visit(to);
                    self.low[node] = self.low[node].min(self.low[to]);
                }
                Some(index) if self.stack.contains(&to) => self.low[node] = self.low[node].min(index),
                Some(_) => {}
            }
        }
        if Some(self.low[node]) == self.index[node] {
            let at = self.stack.iter().rposition(|n| *n == node).unwrap_or(0);
            self.components.push(self.stack.split_off(at));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use super::*;

    fn file(path: &str, text: &str) -> SourceFile {
        SourceFile::new("k", &format!("crates/k/src/{path}"), text)
    }

    fn names(found: Vec<Circle>) -> Vec<Vec<String>> {
        found
            .into_iter()
            .map(|c| c.files.into_iter().map(|p| p.trim_start_matches("crates/k/src/").to_owned()).collect())
            .collect()
    }

    #[test]
    fn a_tree_of_imports_has_no_circle() {
        let files = [
            file("lib.rs", "mod a; mod b; pub use a::A; pub use b::B;"),
            file("a.rs", "use crate::b::B; pub struct A(B);"),
            file("b.rs", "pub struct B; #[cfg(test)] mod tests { use crate::a::A; }"),
        ];
        assert_eq!(circles(&files).unwrap(), Vec::new());
    }

    #[test]
    fn a_circle_through_use_super_and_code_paths_is_found() {
        let files = [
            file("lib.rs", "mod m; mod solo;"),
            file("m/mod.rs", "mod x; mod y; pub fn f() { x::go() }"),
            file("m/x.rs", "pub fn go() { super::y::stop() }"),
            file("m/y.rs", "use super::f; pub fn stop() {}"),
            file("solo.rs", "pub fn s() { crate::solo::s() }"),
        ];
        let found = circles(&files).unwrap();
        let imports: Vec<_> = found[0].imports.iter().map(|(from, to, line)| format!("{from} {to} {line}")).collect();
        assert_eq!(
            imports,
            [
                "crates/k/src/m/mod.rs crates/k/src/m/x.rs 1",
                "crates/k/src/m/x.rs crates/k/src/m/y.rs 1",
                "crates/k/src/m/y.rs crates/k/src/m/mod.rs 1"
            ]
        );
        assert_eq!(names(found), [["m/mod.rs", "m/x.rs", "m/y.rs"]]);
    }

    #[test]
    fn a_re_export_leads_to_the_file_that_defines_the_item() {
        // `a` uses `crate::E`, which the root re-exports from `e`: the edge is to `e`, and
        // the root re-exporting `a` is no use of it, so there is no circle; the root calling
        // into `a`, which names the root's own item, is one.
        let holds = [
            file("lib.rs", "mod a; mod e; pub use a::A; pub use e::E;"),
            file("a.rs", "use crate::E;"),
            file("e.rs", ""),
        ];
        assert_eq!(circles(&holds).unwrap(), Vec::new());
        let breaks =
            [file("lib.rs", "mod a; pub use a::A; pub struct Own; fn f() { a::g() }"), file("a.rs", "use crate::Own;")];
        assert_eq!(names(circles(&breaks).unwrap()), [["a.rs", "lib.rs"]]);
    }

    #[test]
    fn files_of_different_crates_make_no_circle() {
        // p's root uses its `a`; q's `a` uses its crate's root: taken as one crate, p's root
        // and q's `a` would reach each other.
        let files = [
            SourceFile::new("p", "crates/p/src/lib.rs", "mod a; use a::f;"),
            SourceFile::new("p", "crates/p/src/a.rs", "pub fn f() {}"),
            SourceFile::new("q", "crates/q/src/a.rs", "use crate::z;"),
        ];
        assert_eq!(circles(&files).unwrap(), Vec::new());
        let one: Vec<_> = files.iter().map(|f| SourceFile::new("p", &f.path, &f.text)).collect();
        assert!(!circles(&one).unwrap().is_empty(), "the same files as one crate");
    }
}
