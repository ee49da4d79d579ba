//! The paths a file names: each `use` tree spelled out into whole paths (with the name each
//! binds), and each path written in the code (`crate::x::f()`, `super::y`, `module::z`), with
//! the inline module (`mod tests { … }`) it is written in. What [`crate::modules`] builds its
//! graph from and [`crate::reach`] looks for forbidden names in.

use crate::scan::{Kind, Token};

/// How a path was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Written {
    /// In a `use` that binds `name` (`None` for a glob `*`); `module_level` when it stands
    /// among the items of its module, not inside a function; `public` when it re-exports
    /// (`pub use`, `pub(crate) use`).
    Use { name: Option<String>, module_level: bool, public: bool },
    /// In the code.
    Code,
}

/// A path and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub segments: Vec<String>,
    pub written: Written,
    pub line: usize,
    /// The inline modules around it, outermost first (empty at the file's own level).
    pub inline: Vec<String>,
}

/// Every path in `tokens`.
pub fn paths(tokens: &[Token]) -> Vec<Path> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    // Each open inline module and the brace depth inside it.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while let Some(token) = tokens.get(i) {
        let next = tokens.get(i + 1);
        if token.is_ident("mod")
            && let (Some(name), Some(open)) = (next.and_then(Token::ident), tokens.get(i + 2))
            && open.is_punct("{")
        {
            inline.push((name.to_string(), depth + 1));
            i += 2;
            continue;
        }
        if token.is_punct("{") {
            depth += 1;
        } else if token.is_punct("}") {
            depth = depth.saturating_sub(1);
            if inline.last().is_some_and(|(_, d)| *d > depth) {
                inline.pop();
            }
        }
        let around = || inline.iter().map(|(n, _)| n.clone()).collect::<Vec<String>>();
        if token.is_ident("use") {
            let module_level = depth == inline.last().map_or(0, |(_, d)| *d);
            let public = is_public(&tokens[..i]);
            let mut trees = Vec::new();
            i += 1;
            tree(tokens, &mut i, &[], &mut trees);
            for (segments, name) in trees {
                out.push(Path {
                    segments,
                    written: Written::Use { name, module_level, public },
                    line: token.line,
                    inline: around(),
                });
            }
            while tokens.get(i).is_some_and(|t| !t.is_punct(";")) {
                i += 1;
            }
            continue;
        }
        let starts_path = token.ident().is_some()
            && next.is_some_and(|n| n.is_punct("::"))
            && !i
                .checked_sub(1)
                .and_then(|p| tokens.get(p))
                .is_some_and(|p| p.is_punct("::") || p.is_punct("$") || p.is_ident("in"));
        if starts_path {
            let line = token.line;
            let mut segments = Vec::new();
            while let Some(name) = tokens.get(i).and_then(Token::ident) {
                segments.push(name.to_string());
                if !tokens.get(i + 1).is_some_and(|t| t.is_punct("::")) {
                    break;
                }
                i += 2;
            }
            out.push(Path { segments, written: Written::Code, line, inline: around() });
        }
        i += 1;
    }
    out
}

/// Whether the item that follows `before` is declared `pub` or `pub(…)`.
fn is_public(before: &[Token]) -> bool {
    match before.split_last() {
        Some((last, _)) if last.is_ident("pub") => true,
        Some((last, rest)) if last.is_punct(")") => {
            let open = rest.iter().rposition(|t| t.is_punct("("));
            open.is_some_and(|o| o > 0 && rest[o - 1].is_ident("pub"))
        }
        _ => false,
    }
}

/// One `use` tree from `tokens[*i]`, its paths (each after `prefix`) and the names they bind
/// pushed onto `out`. Stops, without a path, where the tree is not well formed.
fn tree(tokens: &[Token], i: &mut usize, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
    let mut path = prefix.to_vec();
    if tokens.get(*i).is_some_and(|t| t.is_punct("::")) {
        *i += 1;
    }
    while let Some(token) = tokens.get(*i) {
        match &token.kind {
            Kind::Punct("{") => {
                *i += 1;
                while tokens.get(*i).is_some_and(|t| !t.is_punct("}")) {
                    let before = *i;
                    tree(tokens, i, &path, out);
                    if tokens.get(*i).is_some_and(|t| t.is_punct(",")) {
                        *i += 1;
                    } else if *i == before || !tokens.get(*i).is_some_and(|t| t.is_punct("}")) {
                        return;
                    }
                }
                *i += 1;
                return;
            }
            Kind::Punct("*") => {
                *i += 1;
                out.push((path, None));
                return;
            }
            Kind::Ident(name) => {
                path.push(name.clone());
                *i += 1;
                if tokens.get(*i).is_some_and(|t| t.is_punct("::")) {
                    *i += 1;
                    continue;
                }
                // `a::{self}` is the path `a`, and binds `a` unless renamed.
                if name == "self" {
                    path.pop();
                }
                let name = if tokens.get(*i).is_some_and(|t| t.is_ident("as")) {
                    *i += 2;
                    tokens.get(*i - 1).and_then(Token::ident).map(str::to_owned)
                } else {
                    path.last().cloned()
                };
                out.push((path, name));
                return;
            }
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use super::*;
    use crate::scan::tokens;

    fn spelled(text: &str) -> Vec<(String, Written)> {
        paths(&tokens(text).unwrap()).into_iter().map(|p| (p.segments.join("::"), p.written)).collect()
    }

    fn used(name: Option<&str>) -> Written {
        Written::Use { name: name.map(str::to_owned), module_level: true, public: false }
    }

    #[test]
    fn use_trees_are_spelled_out() {
        let found = spelled("use crate::{a::{self, B as C}, d::*, e};\nuse ::x::y;\nuse z::{self as w};");
        assert_eq!(
            found,
            [
                ("crate::a".to_string(), used(Some("a"))),
                ("crate::a::B".into(), used(Some("C"))),
                ("crate::d".into(), used(None)),
                ("crate::e".into(), used(Some("e"))),
                ("x::y".into(), used(Some("y"))),
                ("z".into(), used(Some("w"))),
            ]
        );
    }

    #[test]
    fn paths_in_code_are_found_whole() {
        let found = spelled("fn f() { use super::g; crate::a::b(x::Y, $crate::z, pub(in crate::q) w); }");
        assert_eq!(
            found,
            [
                ("super::g".to_string(), Written::Use { name: Some("g".into()), module_level: false, public: false }),
                ("crate::a::b".into(), Written::Code),
                ("x::Y".into(), Written::Code),
            ]
        );
    }

    #[test]
    fn inline_modules_are_tracked() {
        let found = paths(&tokens("mod a { mod b { use super::x; } fn f() {} use y::z; } use w::v;").unwrap());
        let scopes: Vec<_> = found.iter().map(|p| (p.segments.join("::"), p.inline.join("::"))).collect();
        assert_eq!(
            scopes,
            [("super::x".to_string(), "a::b".to_string()), ("y::z".into(), "a".into()), ("w::v".into(), "".into())]
        );
    }

    #[test]
    fn a_re_export_is_told_from_a_use() {
        let public = |text: &str| {
            paths(&tokens(text).unwrap())
                .into_iter()
                .map(|p| matches!(p.written, Written::Use { public: true, .. }))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            public("pub use a::b; pub(crate) use c::d; pub(in crate::x) use e::f; use g::h; f(x) use"),
            [true, true, true, false]
        );
    }

    #[test]
    fn a_broken_use_tree_ends_without_looping() {
        assert_eq!(spelled("use a::{b c};"), [("a::b".to_string(), used(Some("b")))]);
        assert_eq!(spelled("use a::{;"), Vec::new());
    }
}
