//! The grammar against Cordon's own parser: every program of the repository (the conformance
//! corpus, the shipped policies, the examples, the benchmark's plans and the docs' ```` ```cordon
//! ```` blocks) that Cordon parses without a syntax error parses here without an `ERROR` or
//! `MISSING` node, and operators group as Cordon groups them. And the queries editors use compile
//! against the grammar and name what they should on a small program.

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use tree_sitter::{Language, Node, Parser, Query, QueryCursor, StreamingIterator, Tree};

/// The directories of `.cord` files, from the repository's root.
const PROGRAMS: &[&str] = &["tests/corpus", "policies", "examples", "bench"];

/// The Markdown files and directories whose ```` ```cordon ```` blocks are programs too.
const DOCS: &[&str] = &["README.md", "ARCHITECTURE.md", "docs"];

/// The fewest programs Cordon's parser must accept for the comparison to count (there are about
/// 1,390, and all but a few dozen parse): fewer means the files were not found or not read.
const AT_LEAST_PARSED: usize = 1200;

fn language() -> Language {
    Language::new(tree_sitter_cordon::LANGUAGE)
}

fn parse(text: &str) -> Tree {
    let mut parser = Parser::new();
    parser.set_language(&language()).unwrap();
    parser.parse(text, None).unwrap()
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files under `path` (or `path` itself) whose names end in `.extension`, sorted.
fn files(path: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(next) = pending.pop() {
        if next.is_file() {
            found.push(next);
            continue;
        }
        for entry in fs::read_dir(&next).unwrap_or_else(|e| panic!("{}: {e}", next.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() || path.extension().is_some_and(|e| e == extension) {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The ```` ```cordon ```` blocks of a Markdown text, each with the line of its opening fence
/// (1-based); a fence may be indented, and its lines lose that indentation.
fn cordon_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, usize, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match open.take() {
            Some((at, _, text)) if trimmed.starts_with("```") => blocks.push((at, text)),
            Some((at, fence, mut text)) => {
                text.push_str(line.get(fence.min(indent)..).unwrap_or(""));
                text.push('\n');
                open = Some((at, fence, text));
            }
            None if trimmed.strip_prefix("```").and_then(|info| info.split_whitespace().next()) == Some("cordon") => {
                open = Some((i + 1, indent, String::new()));
            }
            None => {}
        }
    }
    blocks
}

/// Every program of the repository, with where it is: the `.cord` files, then the docs' blocks.
fn programs(root: &Path) -> Vec<(String, String)> {
    let mut programs = Vec::new();
    let name = |path: &Path| path.strip_prefix(root).unwrap_or(path).display().to_string();
    for dir in PROGRAMS {
        for path in files(&root.join(dir), "cord") {
            let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            programs.push((name(&path), text));
        }
    }
    for doc in DOCS {
        for path in files(&root.join(doc), "md") {
            let markdown = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for (line, text) in cordon_blocks(&markdown) {
                programs.push((format!("{}:{line}", name(&path)), text));
            }
        }
    }
    programs
}

/// Whether Cordon's parser reads `text` without an error.
fn cordon_accepts(name: &str, text: &str) -> bool {
    let mut sources = cordon_syntax::SourceMap::new();
    let file = sources.add(name, text);
    let parsed = cordon_syntax::parse(file, &sources.file(file).text);
    !parsed.diagnostics.iter().any(|d| d.is_error())
}

/// The first `ERROR` or `MISSING` node of `node`'s tree, in the order of the text.
fn first_error(node: Node) -> Option<Node> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    if !node.has_error() {
        return None;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).find_map(first_error)
}

/// Where `node` is (1-based line and column) and the text around it.
fn describe(text: &str, node: Node) -> String {
    let at = node.start_position();
    let what = if node.is_missing() { format!("MISSING {}", node.kind()) } else { "ERROR".to_string() };
    let start = node.start_byte().saturating_sub(30);
    let end = (node.end_byte().max(node.start_byte() + 1) + 30).min(text.len());
    let around: String = text.get(start..end).unwrap_or("").escape_debug().collect();
    format!("{what} at {}:{}, in `{around}`", at.row + 1, at.column + 1)
}

#[test]
fn every_program_cordon_parses_parses_without_an_error() {
    let root = root();
    let mut parsed = 0;
    let mut rejected = 0;
    let mut failures = Vec::new();
    for (name, text) in programs(&root) {
        if !cordon_accepts(&name, &text) {
            rejected += 1;
            continue;
        }
        parsed += 1;
        let tree = parse(&text);
        if let Some(error) = first_error(tree.root_node()) {
            failures.push(format!("{name}: {}", describe(&text, error)));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of the {parsed} programs Cordon parses do not parse with the grammar:\n{}\n",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        parsed >= AT_LEAST_PARSED,
        "only {parsed} programs compared ({rejected} skipped as Cordon rejects them); expected at least {AT_LEAST_PARSED}"
    );
}

#[test]
fn a_syntax_error_is_an_error_node() {
    for text in ["let x = 1 +;", "fn f( { }", "match x { A => }", "let s = \"unterminated;", "let fn = 1;", "a.type"] {
        let tree = parse(text);
        assert!(tree.root_node().has_error(), "{text:?} parsed as {}", tree.root_node().to_sexp());
    }
}

/// The kinds of node `text` parses to, as an S-expression (fields and all).
fn sexp(text: &str) -> String {
    let tree = parse(text);
    assert!(!tree.root_node().has_error(), "{text:?}: {}", tree.root_node().to_sexp());
    tree.root_node().to_sexp()
}

#[test]
fn operators_bind_as_in_cordon() {
    // `*` over `+` over comparisons over `&&` over `||`, all to the left; `as` over all of them,
    // prefixes over `as`, postfixes over prefixes.
    let cases = [
        ("a || b && c", "(binary_expression left: (identifier) right: (binary_expression"),
        ("a + b * c", "(binary_expression left: (identifier) right: (binary_expression"),
        ("a - b - c", "(binary_expression left: (binary_expression"),
        ("a == b + c", "(binary_expression left: (identifier) right: (binary_expression"),
        ("a + b as Float", "(binary_expression left: (identifier) right: (cast_expression"),
        ("-a as Float", "(cast_expression value: (unary_expression"),
        ("-a.b", "(unary_expression operand: (field_expression"),
        ("!f(x)", "(unary_expression operand: (call_expression"),
        (
            "|x| x + 1",
            "(closure_expression parameters: (closure_parameters (closure_parameter name: (identifier))) body: (binary_expression",
        ),
        ("x.f(1)", "(method_call_expression receiver: (identifier) method: (identifier) arguments:"),
        (
            "p.0.1",
            "(field_expression value: (field_expression value: (identifier) field: (field_index)) field: (field_index))",
        ),
    ];
    for (text, expected) in cases {
        let tree = sexp(text);
        assert!(tree.contains(expected), "{text:?} parsed as\n{tree}\nnot as\n{expected}");
    }
}

/// The operators of Cordon, as parser.rs reads them.
const OPERATORS: &[&str] = &["||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%"];

/// An expression of the grammar's tree written as `cordon_syntax::print::expr` writes Cordon's:
/// every operand that is an operation in parentheses, and the source's own parentheses dropped.
fn grouped(node: Node, text: &str) -> String {
    let field = |name: &str| node.child_by_field_name(name).unwrap();
    let operand = |child: Node| {
        let mut inner = child;
        while inner.kind() == "parenthesized_expression" {
            inner = inner.named_child(0).unwrap();
        }
        let written = grouped(inner, text);
        match inner.kind() {
            "binary_expression" | "unary_expression" => format!("({written})"),
            _ => written,
        }
    };
    let source = |n: Node| text[n.byte_range()].to_string();
    match node.kind() {
        "binary_expression" => {
            format!("{} {} {}", operand(field("left")), source(field("operator")), operand(field("right")))
        }
        "unary_expression" => format!("{}{}", source(field("operator")), operand(field("operand"))),
        "parenthesized_expression" => grouped(node.named_child(0).unwrap(), text),
        _ => source(node),
    }
}

#[test]
fn binary_operators_group_as_cordon_groups_them() {
    // Every chain of three operators, with and without prefixes: Cordon's tree, printed with all
    // its parentheses, against the grammar's. Chained comparisons, which Cordon rejects, are
    // skipped; the rest are counted.
    let mut compared = 0;
    let mut differ = Vec::new();
    for (i, first) in OPERATORS.iter().enumerate() {
        for second in OPERATORS {
            for third in OPERATORS {
                let prefix = if i % 2 == 0 { ["-", "!", ""] } else { ["", "-", "!"] };
                for text in [
                    format!("a {first} b {second} c {third} d"),
                    format!("{}a {first} {}b {second} ({}c {third} d)", prefix[0], prefix[1], prefix[2]),
                ] {
                    let mut sources = cordon_syntax::SourceMap::new();
                    let file = sources.add("expr.cord", text.as_str());
                    let parsed = cordon_syntax::parse(file, &sources.file(file).text);
                    if parsed.diagnostics.iter().any(|d| d.is_error()) {
                        continue;
                    }
                    let cordon = cordon_syntax::print::expr(parsed.module.body.tail.as_deref().unwrap()).unwrap();
                    let tree = parse(&text);
                    let grammar = grouped(tree.root_node().child_by_field_name("value").unwrap(), &text);
                    compared += 1;
                    if cordon != grammar {
                        differ.push(format!("{text}: Cordon reads {cordon}, the grammar {grammar}"));
                    }
                }
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(compared > 2000, "only {compared} expressions compared");
}

#[test]
fn a_statement_that_ends_with_a_block_ends_there() {
    // As in Cordon, a `(` after `if .. { } else { }` starts a new statement; a `.` continues it.
    let two = sexp("if c { 1 } else { 2 }\n(a, b)");
    assert!(two.contains("(expression_statement (if_expression") && two.contains("value: (tuple_expression"), "{two}");
    let one = sexp("match x { _ => [1] }.len();");
    assert!(one.contains("(expression_statement (method_call_expression receiver: (match_expression"), "{one}");
    // A match arm whose value ends with a block needs no `,`, whatever starts the next one.
    let arms = sexp("match x { A => if c { 1 } else { 2 }\n(a, b) => 3, -1 => { 4 } _ => 5 }");
    assert_eq!(arms.matches("(match_arm").count(), 4, "{arms}");
    // After `if`, a name before `{` is the condition, not a record.
    let cond = sexp("if ok { x } else { y }");
    assert!(!cond.contains("record_expression"), "{cond}");
    let record = sexp("let r = Repo { name: n, private };");
    assert!(record.contains("(record_expression name: (type_identifier)"), "{record}");
    // Where a statement may follow, as after a constant, `Name {` is still a record.
    let constants = sexp("const R: Repo = Repo {}\nconst L: Labeled[Int] = to_labeled { 1 }\n{ 2 }");
    assert!(
        constants.contains("value: (record_expression") && constants.contains("value: (labeled_block"),
        "{constants}"
    );
}

#[test]
fn comments_nest_and_strings_keep_their_text() {
    let tree = sexp("/* a /* b */ c */ /// doc\n//// ruler\nlet s = \"/* // \\u{1F600}\";");
    assert!(tree.starts_with("(source_file (block_comment) (doc_comment) (line_comment)"), "{tree}");
    assert!(tree.contains("(string (string_content) (escape_sequence))"), "{tree}");
    let f = sexp("f\"{n} in {r.name} {{x}}\"");
    assert!(f.contains("(format_string (interpolation value: (identifier)) (string_content)"), "{f}");
}

/// Every capture of `query` in `text`, as `(capture name, text)`.
fn captures(query_source: &str, text: &str) -> BTreeSet<(String, String)> {
    let query = Query::new(&language(), query_source).unwrap();
    let tree = parse(text);
    assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&query, tree.root_node(), text.as_bytes());
    let mut found = BTreeSet::new();
    while let Some(m) = matches.next() {
        for capture in m.captures {
            let name = query.capture_names()[capture.index as usize].to_string();
            let span = text.get(capture.node.byte_range()).unwrap_or("").to_string();
            found.insert((name, span));
        }
    }
    found
}

const SAMPLE: &str = r#"/// A session, used once.
linear type Session
capability GitHub {
  tool read_file(s: Session, path: String) -> (String, Session)
    @approval(ask) @label(returns = public())
}
enum Shape { Dot, Rect(Int, Int) }
const LIMIT: Int = 10;
// Sums the areas.
fn area(s: Shape) -> Int { match s { Shape::Dot => 0, Shape::Rect(w, h) => w * h } }
let total = [Shape::Dot].map(|s| area(s)).len() as Float;
let price = 12.50d;
let name = f"{total} \n";
if total > 1.5 { Some("yes") } else { None }
"#;

#[test]
fn the_highlights_name_what_they_should() {
    let found = captures(tree_sitter_cordon::HIGHLIGHTS_QUERY, SAMPLE);
    let expected = [
        ("keyword", "let"),
        ("keyword", "linear"),
        ("keyword", "capability"),
        ("keyword.function", "tool"),
        ("keyword.conditional", "match"),
        ("keyword.operator", "as"),
        ("comment", "// Sums the areas."),
        ("comment.documentation", "/// A session, used once."),
        ("string", "\"yes\""),
        ("string.escape", "\\n"),
        ("number", "10"),
        ("number", "12.50d"),
        ("number.float", "1.5"),
        ("function", "read_file"),
        ("function", "area"),
        ("function.call", "area"),
        ("function.method.call", "map"),
        ("type", "Session"),
        ("type", "Shape"),
        ("attribute", "approval"),
        ("variable.parameter", "path"),
        ("constant", "LIMIT"),
        ("constructor", "Rect"),
        ("constructor", "Some"),
        ("operator", "*"),
        ("punctuation.special", "{"),
    ];
    let missing: Vec<_> =
        expected.iter().filter(|(name, text)| !found.contains(&(name.to_string(), text.to_string()))).collect();
    assert!(missing.is_empty(), "not captured: {missing:?}\ncaptured: {found:?}");
}

#[test]
fn the_locals_name_definitions_and_scopes() {
    let found = captures(tree_sitter_cordon::LOCALS_QUERY, SAMPLE);
    for (name, text) in [("local.definition", "total"), ("local.definition", "w"), ("local.reference", "total")] {
        assert!(found.contains(&(name.to_string(), text.to_string())), "{name} {text} not captured: {found:?}");
    }
    assert!(found.iter().any(|(name, _)| name == "local.scope"), "{found:?}");
}

#[test]
fn the_node_types_list_every_kind() {
    let language = language();
    for kind in ["source_file", "capability_item", "tool_declaration", "hole_expression", "refined_type"] {
        assert!(language.id_for_node_kind(kind, true) != 0, "{kind}");
        assert!(tree_sitter_cordon::NODE_TYPES.contains(&format!("\"{kind}\"")), "{kind}");
    }
}
