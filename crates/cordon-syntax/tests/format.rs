//! The formatter over every Cordon file in the repository and over scrambled copies of them:
//! it keeps every token, comment and declaration, formatting its result changes nothing, and
//! its result does not depend on how the lines were indented or spaced.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cordon_syntax::format::{FormatError, format};
use cordon_syntax::lexer::{TokenKind, lex};
use cordon_syntax::{FileId, parse};
use proptest::prelude::*;

/// Every `.cord` file under the repository's corpus, policies, examples and benchmark, with its
/// text.
fn repository_files() -> &'static [(PathBuf, String)] {
    static FILES: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    FILES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        let mut dirs: Vec<PathBuf> =
            ["tests/corpus", "policies", "examples", "bench"].iter().map(|d| root.join(d)).collect();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "cord") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    files.push((path, text));
                }
            }
        }
        files.sort();
        files
    })
}

/// The tree's `Debug` text without positions: what a file says, not where.
fn meaning(text: &str) -> String {
    let debug = format!("{:?}", parse(FileId(0), text).module);
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug.as_str();
    while let Some(at) = rest.find("Span {").or_else(|| rest.find("NodeId(")) {
        let at = [rest.find("Span {"), rest.find("NodeId(")].into_iter().flatten().min().unwrap_or(at);
        out.push_str(&rest[..at]);
        let close = if rest[at..].starts_with("Span {") { '}' } else { ')' };
        let end = rest[at..].find(close).unwrap();
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    out
}

/// The comments of `text`, in order (what lies between tokens, less the whitespace).
fn comments(text: &str) -> Vec<String> {
    let lexed = lex(FileId(0), text);
    let mut pos = 0;
    let mut found = Vec::new();
    for token in &lexed.tokens {
        let gap = &text[pos..token.span.start as usize];
        let trimmed: Vec<&str> = gap.split_whitespace().collect();
        if !trimmed.is_empty() {
            found.push(trimmed.join(" "));
        }
        pos = token.span.end as usize;
    }
    found
}

#[test]
fn every_file_in_the_repository_formats_to_the_same_meaning_and_formatting_again_changes_nothing() {
    let (mut formatted, mut refused) = (0, 0);
    for (path, text) in repository_files() {
        let shown = path.display();
        let result = match format(text) {
            Ok(result) => result,
            Err(FormatError::Syntax(errors)) => {
                assert!(parse(FileId(0), text).diagnostics.iter().any(|d| d.is_error()), "{shown}");
                assert!(!errors.is_empty());
                refused += 1;
                continue;
            }
            Err(e) => panic!("{shown}: {e}"),
        };
        formatted += 1;
        assert_eq!(meaning(&result), meaning(text), "{shown}: the tree changed");
        assert_eq!(comments(&result), comments(text), "{shown}: the comments changed");
        assert_eq!(format(&result).unwrap(), result, "{shown}: formatting twice changed it again");
        assert!(result.is_empty() || result.ends_with('\n'), "{shown}");
        assert!(!result.contains("\n\n\n") && !result.lines().any(|l| l.ends_with(' ')), "{shown}");
    }
    // The corpus's files that are meant not to parse are refused; all else is formatted.
    assert!(formatted > 1000 && refused < 100, "formatted {formatted}, refused {refused}");
}

#[test]
fn the_repositorys_policies_and_examples_are_formatted() {
    let unformatted: Vec<String> = repository_files()
        .iter()
        .filter(|(path, _)| !path.to_string_lossy().contains("tests/corpus"))
        .filter(|(_, text)| format(text).is_ok_and(|f| f != *text))
        .map(|(path, _)| path.display().to_string())
        .collect();
    assert!(unformatted.is_empty(), "run `cordon fmt` on: {unformatted:#?}");
}

/// `text` with each line's indentation and each space between two tokens on a line changed,
/// as `choices` says; nothing else (no token, comment or line break) changes.
fn scramble(text: &str, choices: &[u8]) -> String {
    let lexed = lex(FileId(0), text);
    let mut choice = choices.iter().cycle();
    let mut next = || usize::from(*choice.next().unwrap_or(&0));
    let mut out = String::new();
    let mut pos = 0;
    let mut prev: Option<&TokenKind> = None;
    for token in &lexed.tokens {
        let gap = &text[pos..token.span.start as usize];
        let fixed =
            matches!(prev, Some(TokenKind::FStrStart | TokenKind::Str(_) | TokenKind::Int(_) | TokenKind::Float(_)))
                || matches!(token.kind, TokenKind::FStrEnd | TokenKind::Str(_));
        if fixed || gap.contains("/*") {
            out.push_str(gap);
        } else if let Some(newline) = gap.rfind('\n') {
            // Where an annotation belongs depends on its column, so those lines keep theirs.
            let keeps_column = matches!(token.kind, TokenKind::At | TokenKind::Tool);
            out.push_str(if keeps_column { gap } else { gap[..=newline].trim_end_matches([' ', '\t']) });
            if !keeps_column {
                out.push_str(&" ".repeat(next() % 7));
            }
        } else if gap.is_empty() {
            // Tokens written together stay together: `letx` is not `let x`.
            let both_words = |k: &TokenKind| {
                matches!(k, TokenKind::Ident) || k.fixed_text().is_some_and(|t| t.chars().all(char::is_alphabetic))
            };
            if prev.is_some_and(|p| !both_words(p) || !both_words(&token.kind)) && next() % 2 == 0 {
                out.push(' ');
            }
        } else {
            out.push_str(&" ".repeat(1 + next() % 3));
        }
        out.push_str(&text[token.span.start as usize..token.span.end as usize]);
        pos = token.span.end as usize;
        prev = Some(&token.kind);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// However the lines are indented and the tokens on them spaced, the result is the same.
    #[test]
    fn the_result_does_not_depend_on_indentation_or_spacing(
        index in any::<prop::sample::Index>(),
        choices in prop::collection::vec(any::<u8>(), 1..64),
    ) {
        let formattable: Vec<&(PathBuf, String)> = repository_files().iter().filter(|(_, t)| format(t).is_ok()).collect();
        let (path, text) = index.get(&formattable);
        let scrambled = scramble(text, &choices);
        prop_assert_eq!(meaning(&scrambled), meaning(text), "the scramble changed {}", path.display());
        let expected = format(text).unwrap();
        let got = format(&scrambled).map_err(|e| TestCaseError::fail(format!("{}: {e}", path.display())))?;
        prop_assert_eq!(got, expected, "{}", path.display());
    }
}

#[test]
fn a_messy_plan_is_laid_out() {
    let messy = "\
// Who is on call.
   let   people=on_call . list( ) ;


let names = people.map( |p|p.name ).filter(|n| n!=\"\" ) ;
fn pick(xs:List[String],n:{v:Int|v>=0})->Option[String]{
xs.get( n )
}
let note = f\"{ names.len() } people\";    // a count
match pick(names,0){
Some(n)=>f\"ask {n}\",
None=>{
  -1 ;
  \"nobody\"
}
}
";
    let want = "\
// Who is on call.
let people = on_call.list();

let names = people.map(|p| p.name).filter(|n| n != \"\");
fn pick(xs: List[String], n: {v: Int | v >= 0}) -> Option[String] {
  xs.get(n)
}
let note = f\"{names.len()} people\"; // a count
match pick(names, 0) {
  Some(n) => f\"ask {n}\",
  None => {
    -1;
    \"nobody\"
  }
}
";
    assert_eq!(format(messy).unwrap(), want);
    assert_eq!(format(want).unwrap(), want);
}

#[test]
fn a_policy_keeps_its_doc_comments_and_its_annotations_stay_with_their_tools() {
    let messy = "\
/// The bank.
capability Bank {
/// Pays.
tool pay(to: String,
amount: {a: Decimal | a > 0d}) -> Result[(), String]
 @approval(ask_always)
      @label(to = public(),
  amount = public())
@card(action = \"balance\")
@label(returns = public())
  tool balance() -> Decimal
}
";
    let want = "\
/// The bank.
capability Bank {
  /// Pays.
  tool pay(to: String,
           amount: {a: Decimal | a > 0d}) -> Result[(), String]
    @approval(ask_always)
    @label(to = public(),
           amount = public())
  @card(action = \"balance\")
  @label(returns = public())
  tool balance() -> Decimal
}
";
    let got = format(messy).unwrap();
    assert_eq!(got, want);
    assert_eq!(meaning(&got), meaning(messy));
}

#[test]
fn tokens_that_would_read_as_others_together_are_kept_apart() {
    // `| |` is a closure's empty parameters written apart; together it is `||`.
    let text = "let f = | | 1;\nlet g = |x| -x;\nlet h = 1 - -2;\n";
    assert_eq!(format(text).unwrap(), text);
    // `2. 3` is the field `3` of `2`; written together it would be the number `2.3` (found by
    // the fuzz target `format`).
    let text = "let t = [1, 2. 3];\nlet u = t.0 .1;\nlet v = t.0.1;\n";
    assert_eq!(format(text).unwrap(), text);
}

#[test]
fn comments_lose_their_trailing_whitespace_and_nothing_else() {
    // Found by the fuzz target `format`: a doc comment with a space at its end.
    let text = "/// A tool. \n/// Its doc.\t\ncapability C {\n  tool t() // note  \n}\n";
    assert_eq!(format(text).unwrap(), "/// A tool.\n/// Its doc.\ncapability C {\n  tool t() // note\n}\n");
}

#[test]
fn a_file_with_syntax_errors_is_refused_with_them() {
    match format("let x = 1 +;\n") {
        Err(FormatError::Syntax(errors)) => assert_eq!(errors[0].code.as_str(), "syntax-error"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn blank_lines_are_kept_one_at_most_and_none_at_a_blocks_edges() {
    let text = "\n\nfn f() -> Int {\n\n  let a = 1;\n\n\n\n  a\n\n}\n\n\nf()\n\n";
    assert_eq!(format(text).unwrap(), "fn f() -> Int {\n  let a = 1;\n\n  a\n}\n\nf()\n");
}

#[test]
fn an_else_on_a_line_of_its_own_lines_up_with_its_if() {
    let text = "let x = if a { 1 }\n   else if b { 2 }\n else { 3 };\nif a {\n1\n}\nelse {\n2\n}\n";
    let want = "let x = if a { 1 }\n        else if b { 2 }\n        else { 3 };\nif a {\n  1\n}\nelse {\n  2\n}\n";
    assert_eq!(format(text).unwrap(), want);
}
