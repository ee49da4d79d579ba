//! No file over 1,000 lines and no function over 150: past that a reader cannot hold it. A
//! function's length runs from the line of its `fn` to the line of its closing brace; a
//! function inside another counts for both.

use std::collections::BTreeMap;

use crate::SourceFile;
use crate::scan::{Kind, Token};

/// Each file of `files` longer than `limit` lines, with its length.
pub fn long_files(files: &[SourceFile], limit: usize) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|f| (f, f.text.lines().count()))
        .filter(|(_, lines)| *lines > limit)
        .map(|(f, lines)| (f.path.clone(), format!("{lines} lines, over {limit}")))
        .collect()
}

/// A function: its name and the lines its `fn` and its closing brace stand on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub first: usize,
    pub last: usize,
}

impl Function {
    pub fn lines(&self) -> usize {
        self.last - self.first + 1
    }
}

/// The functions with a body in `tokens` (a `fn` in a trait without a body, a `fn(…)` type
/// and a macro's `fn $name` are not).
pub fn functions(tokens: &[Token]) -> Vec<Function> {
    let mut found = Vec::new();
    for (at, window) in tokens.windows(2).enumerate() {
        let (true, Some(name)) = (window[0].is_ident("fn"), window[1].ident()) else { continue };
        if let Some(last) = body_end(tokens, at + 2) {
            found.push(Function { name: name.to_string(), first: window[0].line, last });
        }
    }
    found
}

/// The line of the brace that closes the body of the function whose signature starts at
/// `tokens[start]`, if it has one.
fn body_end(tokens: &[Token], start: usize) -> Option<usize> {
    let mut brackets = 0usize;
    let mut braces = 0usize;
    for token in &tokens[start..] {
        match token.kind {
            Kind::Punct("(" | "[") => brackets += 1,
            Kind::Punct(")" | "]") => brackets = brackets.saturating_sub(1),
            Kind::Punct(";") if brackets == 0 && braces == 0 => return None,
            Kind::Punct("{") => braces += 1,
            Kind::Punct("}") if braces == 1 => return Some(token.line),
            Kind::Punct("}") => braces = braces.checked_sub(1)?,
            _ => {}
        }
    }
    None
}

/// Each function of `files` longer than `limit` lines, as `path::name`, with its length.
pub fn long_functions(files: &[SourceFile], limit: usize) -> Result<BTreeMap<String, String>, String> {
    let mut found = BTreeMap::new();
    for file in files {
        for function in functions(file.tokens()?).into_iter().filter(|f| f.lines() > limit) {
            found.insert(
                format!("{}::{}", file.path, function.name),
                format!("{} lines from line {}, over {limit}", function.lines(), function.first),
            );
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use super::*;

    #[test]
    fn functions_are_measured_from_fn_to_closing_brace() {
        let text = "trait T { fn decl(&self) -> [u8; 2]; }\nfn outer(f: fn(u8) -> u8) -> [u8; 2] {\n let s = \"}\";\n fn inner() {\n }\n}\nmacro_rules! m { ($n:ident) => { fn $n() {} } }";
        let found = functions(&crate::scan::tokens(text).unwrap());
        let seen: Vec<_> = found.iter().map(|f| (f.name.as_str(), f.first, f.last)).collect();
        assert_eq!(seen, [("outer", 2, 6), ("inner", 4, 5)]);
    }

    #[test]
    fn a_long_function_and_a_long_file_are_named() {
        let body = "    step();\n".repeat(8);
        let text = format!("//! A module.\nfn short() {{}}\nfn long() {{\n{body}}}\n");
        let files = [SourceFile::new("k", "crates/k/src/a.rs", &text)];
        let functions = long_functions(&files, 9).unwrap();
        assert_eq!(functions.keys().collect::<Vec<_>>(), ["crates/k/src/a.rs::long"]);
        assert_eq!(functions["crates/k/src/a.rs::long"], "10 lines from line 3, over 9");
        assert!(long_functions(&files, 10).unwrap().is_empty());
        assert_eq!(long_files(&files, 11).len(), 1);
        assert!(long_files(&files, 12).is_empty());
    }
}
