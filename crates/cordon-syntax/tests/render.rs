//! Snapshot tests of the diagnostic renderers over hand-built diagnostics. Each case renders one
//! diagnostic in all three forms (human, concise, JSON) into one snapshot, so a reviewer sees
//! them side by side; the snapshots live in `tests/snapshots/`.
#![allow(clippy::unwrap_used)]

use cordon_syntax::render::{concise, human, json, summary};
use cordon_syntax::{Code, Diagnostic, FileId, Severity, SourceMap, Span};

/// The span of the `nth` (0-based) occurrence of `needle` in file `file`.
fn find(sources: &SourceMap, file: FileId, needle: &str, nth: usize) -> Span {
    let text = &sources.file(file).text;
    let start = text.match_indices(needle).nth(nth).unwrap().0;
    Span::new(file, start as u32, (start + needle.len()) as u32)
}

/// All three renderings of `d`, as one snapshot.
fn render_all(d: &Diagnostic, sources: &SourceMap) -> String {
    let json = serde_json::to_string_pretty(&json(std::slice::from_ref(d), sources)).unwrap();
    format!("--- human ---\n{}--- concise ---\n{}--- json ---\n{json}\n", human(d, sources), concise(d, sources))
}

#[test]
fn single_line() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "let y = 2;\nlet x: Int = \"a\";\nx + y\n");
    let d = Diagnostic::error(Code::TypeMismatch, find(&sources, plan, "\"a\"", 0), "expected `Int`, found `String`")
        .with_primary_label("expected `Int`")
        .with_label(find(&sources, plan, "Int", 0), "expected because of this");
    insta::assert_snapshot!("single_line", render_all(&d, &sources));
}

#[test]
fn single_line_no_label_message() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "let x = foo(1);\n");
    let d = Diagnostic::error(Code::UndefinedName, find(&sources, plan, "foo", 0), "undefined name `foo`");
    insta::assert_snapshot!("single_line_no_label_message", render_all(&d, &sources));
}

#[test]
fn multi_line_span() {
    let mut sources = SourceMap::new();
    let text = "let r = Repo {\n  name: \"x\",\n  owner: \"y\",\n};\nr\n";
    let plan = sources.add("plan.cord", text);
    let start = text.find("Repo").unwrap() as u32;
    let end = text.find("};").unwrap() as u32 + 1;
    let d = Diagnostic::error(Code::MissingField, Span::new(plan, start, end), "missing field `private` in `Repo`")
        .with_primary_label("`private` not given")
        .with_help("add `private: false`");
    insta::assert_snapshot!("multi_line_span", render_all(&d, &sources));
}

#[test]
fn long_multi_line_span_is_elided() {
    let mut sources = SourceMap::new();
    let text = "let n = if ok {\n  1\n} else if maybe {\n  2\n} else {\n  \"three\"\n};\n";
    let plan = sources.add("plan.cord", text);
    let start = text.find("if ok").unwrap() as u32;
    // Ends with the line break after `}`: the marker stops at the `}`.
    let end = text.find("};").unwrap() as u32 + 1;
    let d = Diagnostic::error(Code::TypeMismatch, Span::new(plan, start, end), "`if` branches have different types")
        .with_primary_label("this `if` has branches of type `Int` and `String`")
        .with_label(find(&sources, plan, "\"three\"", 0), "`String` here");
    insta::assert_snapshot!("long_multi_line_span_is_elided", render_all(&d, &sources));
}

#[test]
fn secondary_label_in_another_file() {
    let mut sources = SourceMap::new();
    let policy = sources.add(
        "policies/github.cord",
        "linear type Session\ncapability GitHub {\n  tool create_issue(s: Session, title: {t: String | t != \"\"}) -> Session\n}\n",
    );
    let plan = sources.add("plan.cord", "let s2 = gh.create_issue(s, \"\");\ns2\n");
    let d = Diagnostic::error(
        Code::RefinementUnproven,
        find(&sources, plan, "\"\"", 0),
        "cannot prove `t != \"\"` for argument `title` of `create_issue`",
    )
    .with_primary_label("this is `\"\"`")
    .with_label(find(&sources, policy, "{t: String | t != \"\"}", 0), "required by this refinement")
    .with_label(find(&sources, plan, "gh.create_issue", 0), "in this call");
    insta::assert_snapshot!("secondary_label_in_another_file", render_all(&d, &sources));
}

#[test]
fn notes_and_help() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "fn pick(xs: List[Int], i: Int) -> Int { xs[i] }\n");
    let d = Diagnostic::error(Code::RefinementUnproven, find(&sources, plan, "xs[i]", 0), "index may be out of bounds")
        .with_primary_label("cannot prove `i < len(xs)`")
        .with_note("facts used: `0 <= len(xs)`")
        .with_note("counterexample:\n  xs = []\n  i = 0")
        .with_help("guard the access: `if i >= 0 && i < xs.len() { xs[i] } else { 0 }`, or use `xs.get(i)`");
    insta::assert_snapshot!("notes_and_help", render_all(&d, &sources));
}

#[test]
fn tab_and_non_ascii() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "let café = \"naïve ☕\";\n\tlet n: Int = café;\n");
    let d = Diagnostic::error(Code::TypeMismatch, find(&sources, plan, "café", 1), "expected `Int`, found `String`")
        .with_primary_label("expected `Int`")
        .with_label(find(&sources, plan, "Int", 0), "expected because of this");
    insta::assert_snapshot!("tab_and_non_ascii", render_all(&d, &sources));
}

#[test]
fn control_characters_are_not_printed() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "let s: Int = \"\u{1b}[31mred\u{202e}der\";\n");
    let d = Diagnostic::error(Code::TypeMismatch, find(&sources, plan, "\"", 0), "expected `Int`, found `String`")
        .with_primary_label("a string\u{1b}[0m");
    let all = render_all(&d, &sources);
    let (text, _) = all.split_once("--- json ---").unwrap();
    assert!(!text.contains(['\u{1b}', '\u{202e}']), "{text}");
    insta::assert_snapshot!("control_characters_are_not_printed", all);
}

/// Hidden characters before a span are written as `\u{hex}` and the caret still points at
/// the span: a fill cannot hide text from the reviewer, nor move the caret off its mistake.
#[test]
fn hidden_characters_are_shown_and_carets_stay_on_their_span() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "let s: Int = \"\u{2800}\u{e0041}\u{fe0f}\" + q;\n");
    let d = Diagnostic::error(Code::TypeMismatch, find(&sources, plan, "q", 0), "unknown name `q\u{200b}`")
        .with_primary_label("here");
    let text = human(&d, &sources);
    let lines: Vec<&str> = text.lines().collect();
    let source = lines.iter().find(|l| l.starts_with("1 |")).unwrap();
    assert!(source.contains("\"\\u{2800}\\u{e0041}\\u{fe0f}\""), "{text}");
    let caret = lines.iter().find(|l| l.contains('^')).unwrap();
    assert_eq!(caret.find('^'), source.find('q'), "{text}");
    assert!(text.contains("unknown name `q\\u{200b}`"), "{text}");
}

#[test]
fn empty_span_at_end_of_file() {
    let mut sources = SourceMap::new();
    let text = "fn f(x: Int) -> Int {\n  x + 1\n";
    let plan = sources.add("plan.cord", text);
    let end = text.len() as u32;
    let d = Diagnostic::error(Code::SyntaxError, Span::new(plan, end, end), "expected `}`, found end of file")
        .with_primary_label("expected `}`")
        .with_label(find(&sources, plan, "{", 0), "to close this block");
    insta::assert_snapshot!("empty_span_at_end_of_file", render_all(&d, &sources));
}

#[test]
fn empty_span_at_end_of_file_without_newline() {
    let mut sources = SourceMap::new();
    let text = "let x = 1 +";
    let plan = sources.add("plan.cord", text);
    let end = text.len() as u32;
    let d =
        Diagnostic::error(Code::SyntaxError, Span::new(plan, end, end), "expected an expression, found end of file");
    insta::assert_snapshot!("empty_span_at_end_of_file_without_newline", render_all(&d, &sources));
}

#[test]
fn span_past_end_of_text() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "let x = 1;\nx\n");
    let d = Diagnostic::error(Code::UndefinedName, Span::new(plan, 9, 400), "span runs past the end")
        .with_primary_label("here")
        .with_label(Span::new(plan, 300, 500), "entirely past the end");
    insta::assert_snapshot!("span_past_end_of_text", render_all(&d, &sources));
}

#[test]
fn odd_spans_do_not_panic() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "let é = 1;\n");
    // Reversed, inside a multi-byte character, in a file the map does not hold.
    let d = Diagnostic::error(Code::UndefinedName, Span::new(plan, 7, 2), "reversed span")
        .with_label(Span::new(plan, 5, 6), "inside `é`")
        .with_label(Span::new(FileId(7), 3, 4), "in a file the map does not hold");
    insta::assert_snapshot!("odd_spans_do_not_panic", render_all(&d, &sources));
}

#[test]
fn no_labels_and_empty_source_map() {
    let sources = SourceMap::new();
    let d = Diagnostic {
        code: Code::StatementInPolicy,
        severity: Severity::Warning,
        message: "no labels at all".to_string(),
        labels: Vec::new(),
        notes: vec!["a note".to_string()],
        help: None,
    };
    insta::assert_snapshot!("no_labels_and_empty_source_map", render_all(&d, &sources));
}

#[test]
fn three_labels_on_one_line() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "let t = f(a, b, c);\n");
    let d =
        Diagnostic::error(Code::WrongArgCount, find(&sources, plan, "c", 0), "`f` takes 2 arguments but 3 were given")
            .with_primary_label("unexpected argument")
            .with_label(find(&sources, plan, "a", 0), "first")
            .with_label(find(&sources, plan, "b", 0), "second");
    insta::assert_snapshot!("three_labels_on_one_line", render_all(&d, &sources));
}

#[test]
fn json_has_version_and_one_based_positions() {
    let mut sources = SourceMap::new();
    let plan = sources.add("plan.cord", "é\nlet x = y;\n");
    let d = Diagnostic::error(Code::UndefinedName, find(&sources, plan, "y", 0), "undefined name `y`");
    let v = json(&[d], &sources);
    assert_eq!(v["version"], 1);
    let d = &v["diagnostics"][0];
    assert_eq!(d["code"], "undefined-name");
    assert_eq!(d["severity"], "error");
    assert_eq!((d["line"].as_u64(), d["column"].as_u64()), (Some(2), Some(9)));
    assert_eq!((d["end_line"].as_u64(), d["end_column"].as_u64()), (Some(2), Some(10)));
    assert_eq!(d["labels"][0]["byte_start"], 11);
    assert_eq!(d["help"], serde_json::Value::Null);
}

#[test]
fn summaries() {
    let span = Span::new(FileId(0), 0, 0);
    let error = Diagnostic::error(Code::SyntaxError, span, "e");
    let warning = Diagnostic { severity: Severity::Warning, ..error.clone() };
    let cases: &[(&[&Diagnostic], &str)] = &[
        (&[], "accepted"),
        (&[&warning], "accepted with 1 warning"),
        (&[&warning, &warning], "accepted with 2 warnings"),
        (&[&error], "rejected: 1 error"),
        (&[&error, &error], "rejected: 2 errors"),
        (&[&error, &warning, &warning, &error], "rejected: 2 errors, 2 warnings"),
    ];
    for (diagnostics, expected) in cases {
        let diagnostics: Vec<Diagnostic> = diagnostics.iter().map(|d| (*d).clone()).collect();
        assert_eq!(summary(&diagnostics), *expected);
    }
}

#[test]
fn every_code_is_listed_in_the_diagnostics_doc() {
    let doc = include_str!("../../../docs/diagnostics.md");
    for code in Code::ALL {
        assert!(doc.contains(&format!("`{}`", code.as_str())), "docs/diagnostics.md does not list `{}`", code.as_str());
    }
}
