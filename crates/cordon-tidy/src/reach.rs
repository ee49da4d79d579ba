//! Who may name what. Each rule is a set of names and the crates whose code may use them; any
//! other crate's `src/` (its test modules left out) that names one breaks it:
//!
//! - [`forbidden`]: the steps of assembling a request (starting the engine on a plan, the
//!   static analysis, opening the audit record) are named only in the library, a builtin is
//!   looked up by its name only where the checker resolves a call, and only the CLI prints;
//! - [`variants`]: only the syntax and checker crates name the variants of the syntax tree's
//!   kinds (`ExprKind::Call`): every later stage reads what the checker made of it;
//! - [`string_dispatch`]: a builtin is told by its enum (`Builtin::Len`), never by its name
//!   (`"len" =>`), so each meaning of it sits in one exhaustive `match`.

use std::collections::BTreeMap;
use std::fmt;

use crate::SourceFile;
use crate::scan::{self, Kind, Token};
use crate::uses::{self, Written};

/// The code tokens of each file of `files`' `src/` outside the crates `exempt`, test items
/// left out.
fn code<'f>(files: &'f [SourceFile], exempt: &[&str]) -> Result<Vec<(&'f SourceFile, &'f [Token])>, String> {
    let outside = files.iter().filter(|f| f.in_src().is_some() && !exempt.contains(&f.krate.as_str()));
    outside.map(|file| Ok((file, file.code()?))).collect()
}

/// Whether `tokens` starts with the tokens `wanted`.
fn starts_with(tokens: &[Token], wanted: &[&str]) -> bool {
    wanted.len() <= tokens.len()
        && wanted.iter().zip(tokens).all(|(want, token)| token.is_punct(want) || token.is_ident(want))
}

/// A place in a file and what it writes there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub path: String,
    pub line: usize,
    pub what: String,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.what)
    }
}

/// Every place outside the crates `allowed` whose code writes one of `patterns` (tokens
/// separated by spaces: `"Recording :: begin"`, `". start_request ("`) or imports a path one of
/// the `::` patterns spells.
pub fn forbidden(files: &[SourceFile], allowed: &[&str], patterns: &[&str]) -> Result<Vec<Place>, String> {
    let split: Vec<Vec<&str>> = patterns.iter().map(|p| p.split_whitespace().collect()).collect();
    let mut found = Vec::new();
    for (file, tokens) in code(files, allowed)? {
        let at_line = |line: usize, what: String| Place { path: file.path.clone(), line, what };
        for (at, token) in tokens.iter().enumerate() {
            let written = patterns.iter().zip(&split).find(|(_, s)| starts_with(&tokens[at..], s));
            if let Some((pattern, _)) = written {
                found.push(at_line(token.line, format!("writes `{}`", pattern.replace(' ', ""))));
            }
        }
        for path in uses::paths(tokens).into_iter().filter(|p| matches!(p.written, Written::Use { .. })) {
            let spelled = path.segments.join("::");
            let imported =
                patterns.iter().map(|p| p.replace(' ', "")).find(|p| p.contains("::") && spelled.starts_with(p));
            let whole = imported.filter(|p| !spelled[p.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'));
            let seen = found.iter().any(|p: &Place| p.path == file.path && p.line == path.line);
            if let Some(pattern) = whole.filter(|_| !seen) {
                found.push(at_line(path.line, format!("imports `{pattern}`")));
            }
        }
    }
    Ok(found)
}

/// `found` by file: each file's path, where it first writes a pattern and how often.
pub fn by_file(found: &[Place]) -> BTreeMap<String, String> {
    let mut files: BTreeMap<String, (usize, usize, &str)> = BTreeMap::new();
    for place in found {
        files.entry(place.path.clone()).or_insert((place.line, 0, &place.what)).1 += 1;
    }
    files
        .into_iter()
        .map(|(path, (line, times, what))| (path, format!("{what} at line {line}, {}", in_all(times))))
        .collect()
}

/// The enums of `kinds` that no file of the crate `owner` declares (`enum ExprKind`): a rename
/// there would leave the rule checking nothing.
pub fn undeclared<'k>(files: &[SourceFile], owner: &str, kinds: &[&'k str]) -> Result<Vec<&'k str>, String> {
    let mut declared = Vec::new();
    for file in files.iter().filter(|f| f.krate == owner && f.in_src().is_some()) {
        let tokens = file.tokens()?;
        declared.extend(
            tokens.windows(2).filter(|w| w[0].is_ident("enum")).filter_map(|w| w[1].ident().map(str::to_owned)),
        );
    }
    Ok(kinds.iter().copied().filter(|k| !declared.iter().any(|d| d == k)).collect())
}

/// Each file outside the crates `allowed` that names a variant of one of the enums `kinds`
/// (`ExprKind::Int`, `ExprKind::{…}`, `ExprKind::*`), with where it first does and how often.
pub fn variants(files: &[SourceFile], allowed: &[&str], kinds: &[&str]) -> Result<BTreeMap<String, String>, String> {
    let mut found = BTreeMap::new();
    for (file, tokens) in code(files, allowed)? {
        let uses: Vec<(usize, &str)> = tokens
            .windows(3)
            .filter(|w| {
                w[1].is_punct("::")
                    && (w[2].is_punct("{") || w[2].is_punct("*") || w[2].ident().is_some_and(starts_upper))
            })
            .filter_map(|w| w[0].ident().filter(|k| kinds.contains(k)).map(|k| (w[0].line, k)))
            .collect();
        if let Some((line, kind)) = uses.first() {
            found.insert(
                file.path.clone(),
                format!("names {kind} variants, first at line {line}, {}", in_all(uses.len())),
            );
        }
    }
    Ok(found)
}

/// How often a file breaks a rule, as its message says it.
fn in_all(times: usize) -> String {
    if times == 1 { "once in all".into() } else { format!("{times} times in all") }
}

fn starts_upper(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
}

/// The names of the builtins, read from the file that declares them: each `Variant = "name"`
/// of the declaring macro and each `LabelFn::Variant => "name"`.
pub fn builtin_names(declaring: &str) -> Result<Vec<String>, String> {
    let tokens = scan::tokens(declaring).map_err(|e| e.to_string())?;
    let mut names = Vec::new();
    for (at, window) in tokens.windows(3).enumerate() {
        let declared = matches!(&window[0].kind, Kind::Ident(v) if starts_upper(v)) && window[1].is_punct("=");
        let label = window[1].is_punct("=>") && at >= 2 && tokens[at - 2].is_ident("LabelFn");
        if let (true, Kind::Str(name)) = (declared || label, &window[2].kind) {
            names.push(name.clone());
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// Every place outside the crates `exempt` where a string literal that is a builtin's name is
/// matched on or compared: followed by `=>`, `|`, `if`, `==` or `!=`, or after `==` or `!=`.
pub fn string_dispatch(files: &[SourceFile], exempt: &[&str], names: &[String]) -> Result<Vec<String>, String> {
    let mut problems = Vec::new();
    for (file, tokens) in code(files, exempt)? {
        for (at, token) in tokens.iter().enumerate() {
            let Kind::Str(text) = &token.kind else { continue };
            if !names.contains(text) {
                continue;
            }
            let next = tokens.get(at + 1);
            let before = at.checked_sub(1).and_then(|b| tokens.get(b));
            let matched = next
                .is_some_and(|n| ["=>", "|", "==", "!="].iter().any(|p| n.is_punct(p)) || n.is_ident("if"))
                || before.is_some_and(|b| b.is_punct("==") || b.is_punct("!="));
            if matched {
                problems.push(format!(
                    "{}:{}: dispatches on the builtin name \"{text}\": match on `Builtin`",
                    file.path, token.line
                ));
            }
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use super::*;

    const REQUEST: &[&str] = &[". start_request (", ":: start_request", "Recording :: begin", "cordon_flow :: check"];

    #[test]
    fn assembling_a_request_outside_the_library_is_named() {
        let files = [
            SourceFile::new(
                "lib",
                "crates/lib/src/run.rs",
                "fn f() { engine.start_request(&mut run, p); Recording::begin(s, r); }",
            ),
            SourceFile::new(
                "engine",
                "crates/engine/src/engine.rs",
                "/// `x.start_request(` here\npub fn start_request(&mut self) {}",
            ),
            SourceFile::new("engine", "crates/engine/tests/t.rs", "fn t() { e.start_request(&mut run, p); }"),
            SourceFile::new(
                "cli",
                "crates/cli/src/run.rs",
                "fn g() {\n let r = Engine::start_request(&mut e, &mut run, p);\n}",
            ),
            SourceFile::new(
                "cli",
                "crates/cli/src/ask.rs",
                "use cordon_flow::{self as flow, check};\nuse cordon_flow::check_all;\nuse cordon_flow::check;",
            ),
            SourceFile::new(
                "cli",
                "crates/cli/src/x.rs",
                "fn h() { cordon_flow::check(a) } #[cfg(test)] mod t { fn u() { Recording::begin(s, r); } }",
            ),
        ];
        let found = forbidden(&files, &["lib"], REQUEST).unwrap();
        let places: Vec<_> = found.iter().map(Place::to_string).collect();
        assert_eq!(
            places,
            [
                "crates/cli/src/run.rs:2: writes `::start_request`",
                "crates/cli/src/ask.rs:3: writes `cordon_flow::check`",
                "crates/cli/src/ask.rs:1: imports `cordon_flow::check`",
                "crates/cli/src/x.rs:1: writes `cordon_flow::check`",
            ]
        );
        let files: Vec<_> = by_file(&found).into_iter().map(|(p, w)| format!("{p}: {w}")).collect();
        assert_eq!(
            files,
            [
                "crates/cli/src/ask.rs: writes `cordon_flow::check` at line 3, 2 times in all",
                "crates/cli/src/run.rs: writes `::start_request` at line 2, once in all",
                "crates/cli/src/x.rs: writes `cordon_flow::check` at line 1, once in all",
            ]
        );
    }

    const KINDS: &[&str] = &["ExprKind", "ItemKind"];

    #[test]
    fn naming_a_syntax_kind_outside_the_syntax_and_checker_crates_is_found() {
        let files = [
            SourceFile::new("syntax", "crates/syntax/src/ast.rs", "pub enum ExprKind { Int } pub enum ItemKind { Fn }"),
            SourceFile::new("types", "crates/types/src/check.rs", "match e { ExprKind::Int => 1 }"),
            SourceFile::new(
                "runtime",
                "crates/runtime/src/compile.rs",
                "use syntax::ItemKind;\nfn f() {\n match e { ExprKind::Int => 1, ExprKind::Call { .. } => 2 } }",
            ),
            SourceFile::new("mcp", "crates/mcp/src/names.rs", "fn k() { ExprKind::keyword(x) }"),
            SourceFile::new("flow", "crates/flow/src/glob.rs", "use syntax::ItemKind::*;"),
            SourceFile::new("flow", "crates/flow/tests/t.rs", "ExprKind::Int"),
        ];
        let found = variants(&files, &["syntax", "types"], KINDS).unwrap();
        let places: Vec<_> = found.iter().map(|(p, w)| format!("{p}: {w}")).collect();
        assert_eq!(
            places,
            [
                "crates/flow/src/glob.rs: names ItemKind variants, first at line 1, once in all",
                "crates/runtime/src/compile.rs: names ExprKind variants, first at line 3, 2 times in all",
            ]
        );
        assert_eq!(undeclared(&files, "syntax", KINDS).unwrap(), Vec::<&str>::new());
        assert_eq!(undeclared(&files, "syntax", &["ExprKind", "StmtKind"]).unwrap(), ["StmtKind"]);
    }

    #[test]
    fn builtin_names_are_read_from_their_declaration() {
        let declaring = "builtins! { Len = \"len\", SortBy = \"sort_by\", }\nmatch self { LabelFn::Public => \"public\", }\nlet x = \"not\";";
        assert_eq!(builtin_names(declaring).unwrap(), ["len", "public", "sort_by"]);
    }

    #[test]
    fn a_match_or_comparison_on_a_builtin_name_is_named() {
        let names: Vec<String> = ["len", "sort_by", "public"].map(String::from).into();
        let files = [
            SourceFile::new("syntax", "crates/syntax/src/b.rs", "match n { \"len\" => Len }"),
            SourceFile::new("runtime", "crates/runtime/src/a.rs", "match n {\n \"len\" | \"sort_by\" => 1, _ => 2 }"),
            SourceFile::new(
                "flow",
                "crates/flow/src/a.rs",
                "if name == \"public\" {}\nlet m = \"len\";\nerror(\"sort_by\")",
            ),
        ];
        let problems = string_dispatch(&files, &["syntax"], &names).unwrap();
        assert_eq!(
            problems,
            [
                "crates/runtime/src/a.rs:2: dispatches on the builtin name \"len\": match on `Builtin`",
                "crates/runtime/src/a.rs:2: dispatches on the builtin name \"sort_by\": match on `Builtin`",
                "crates/flow/src/a.rs:1: dispatches on the builtin name \"public\": match on `Builtin`",
            ]
        );
    }
}
