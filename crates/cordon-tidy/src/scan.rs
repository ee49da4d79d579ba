//! A small scanner of Rust source: the tokens the checks read (identifiers, punctuation, string
//! literals), with comments and the insides of other literals dropped and each token's line
//! kept. It is not a Rust lexer: it knows just enough (nested block comments, raw strings, char
//! literals against lifetimes) that no brace or name inside a comment or a string is ever taken
//! for code.

use std::fmt;

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An identifier or keyword (`r#` dropped from a raw identifier).
    Ident(String),
    /// A string literal's contents, escapes left as written.
    Str(String),
    /// Punctuation: one character, or one of `::`, `=>`, `==`, `!=`, `->`.
    Punct(&'static str),
    /// A number, a char literal or a lifetime: present so neighbours stay apart.
    Other,
}

/// A token and the line (from 1) it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub line: usize,
}

impl Token {
    /// Whether the token is the identifier `name`.
    pub fn is_ident(&self, name: &str) -> bool {
        matches!(&self.kind, Kind::Ident(i) if i == name)
    }

    /// Whether the token is the punctuation `punct`.
    pub fn is_punct(&self, punct: &str) -> bool {
        matches!(self.kind, Kind::Punct(p) if p == punct)
    }

    /// The identifier, if the token is one.
    pub fn ident(&self) -> Option<&str> {
        match &self.kind {
            Kind::Ident(i) => Some(i),
            _ => None,
        }
    }
}

/// Source the scanner cannot read: a comment or literal left open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanError {
    pub line: usize,
    pub what: &'static str,
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {} never closed", self.line, self.what)
    }
}

const MULTI: [&str; 5] = ["::", "=>", "==", "!=", "->"];
const SINGLE: &str = "{}()[]<>;,.:=!|&+-*/%^?#@$~";

/// The tokens of `text`, or where it has a comment or literal that never closes.
pub fn tokens(text: &str) -> Result<Vec<Token>, ScanError> {
    let mut scanner = Scanner { chars: text.chars().collect(), at: 0, line: 1, out: Vec::new() };
    scanner.run()?;
    Ok(scanner.out)
}

struct Scanner {
    chars: Vec<char>,
    at: usize,
    line: usize,
    out: Vec<Token>,
}

impl Scanner {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Steps over one character, counting lines.
    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn push(&mut self, kind: Kind, line: usize) {
        self.out.push(Token { kind, line });
    }

    fn run(&mut self) -> Result<(), ScanError> {
        while let Some(c) = self.peek(0) {
            let line = self.line;
            match c {
                c if c.is_whitespace() => {
                    self.bump();
                }
                '/' if self.peek(1) == Some('/') => self.line_comment(),
                '/' if self.peek(1) == Some('*') => self.block_comment()?,
                '"' => {
                    let text = self.quoted(0)?;
                    self.push(Kind::Str(text), line);
                }
                '\'' => self.quote_or_lifetime()?,
                c if c.is_ascii_digit() => self.number(),
                c if c == '_' || c.is_alphabetic() => self.word()?,
                _ => self.punct(),
            }
        }
        Ok(())
    }

    fn line_comment(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                return;
            }
            self.bump();
        }
    }

    fn block_comment(&mut self) -> Result<(), ScanError> {
        let line = self.line;
        let mut depth = 0usize;
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some('/'), Some('*')) => {
                    depth += 1;
                    self.at += 2;
                }
                (Some('*'), Some('/')) => {
                    depth -= 1;
                    self.at += 2;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                (Some(_), _) => {
                    self.bump();
                }
                (None, _) => return Err(ScanError { line, what: "a block comment" }),
            }
        }
    }

    /// A string from its opening quote, ended by a quote followed by `hashes` `#`s (a raw
    /// string when `hashes` is not zero: escapes mean nothing in one).
    fn quoted(&mut self, hashes: usize) -> Result<String, ScanError> {
        let line = self.line;
        self.bump();
        let mut text = String::new();
        loop {
            let Some(c) = self.bump() else { return Err(ScanError { line, what: "a string" }) };
            if c == '\\' && hashes == 0 {
                text.push(c);
                if let Some(escaped) = self.bump() {
                    text.push(escaped);
                }
                continue;
            }
            if c == '"' && (0..hashes).all(|i| self.peek(i) == Some('#')) {
                self.at += hashes;
                return Ok(text);
            }
            text.push(c);
        }
    }

    /// `'x'`, `'\n'` (a char) or `'a` (a lifetime or a loop label).
    fn quote_or_lifetime(&mut self) -> Result<(), ScanError> {
        let line = self.line;
        let is_char = self.peek(1) == Some('\\') || self.peek(2) == Some('\'');
        self.bump();
        if is_char {
            if self.peek(0) == Some('\\') {
                self.bump();
            }
            self.bump();
            while self.peek(0) != Some('\'') {
                if self.bump().is_none_or(|c| c == '\n') {
                    return Err(ScanError { line, what: "a char literal" });
                }
            }
            self.bump();
        } else {
            while self.peek(0).is_some_and(|c| c == '_' || c.is_alphanumeric()) {
                self.bump();
            }
        }
        self.push(Kind::Other, line);
        Ok(())
    }

    fn number(&mut self) {
        let line = self.line;
        while let Some(c) = self.peek(0) {
            let fraction = c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit());
            if !(c == '_' || c.is_alphanumeric() || fraction) {
                break;
            }
            self.bump();
        }
        self.push(Kind::Other, line);
    }

    /// An identifier, or the prefix of a literal: `r"…"`, `r#"…"#`, `b"…"`, `br"…"`, `c"…"`,
    /// `b'x'`, or a raw identifier `r#name`.
    fn word(&mut self) -> Result<(), ScanError> {
        let line = self.line;
        let start = self.at;
        while self.peek(0).is_some_and(|c| c == '_' || c.is_alphanumeric()) {
            self.bump();
        }
        let word: String = self.chars[start..self.at].iter().collect();
        let prefix = matches!(word.as_str(), "r" | "b" | "br" | "c" | "cr");
        let raw = word.ends_with('r');
        match self.peek(0) {
            Some('"') if prefix => {
                let text = self.quoted(0)?;
                self.push(Kind::Str(text), line);
            }
            Some('#') if prefix && raw => {
                let hashes = (0..).take_while(|&i| self.peek(i) == Some('#')).count();
                if self.peek(hashes) == Some('"') {
                    self.at += hashes;
                    let text = self.quoted(hashes)?;
                    self.push(Kind::Str(text), line);
                } else if word == "r" && hashes == 1 {
                    self.bump();
                    let start = self.at;
                    while self.peek(0).is_some_and(|c| c == '_' || c.is_alphanumeric()) {
                        self.bump();
                    }
                    let name: String = self.chars[start..self.at].iter().collect();
                    self.push(Kind::Ident(name), line);
                } else {
                    self.push(Kind::Ident(word), line);
                }
            }
            Some('\'') if word == "b" => self.quote_or_lifetime()?,
            _ => self.push(Kind::Ident(word), line),
        }
        Ok(())
    }

    fn punct(&mut self) {
        let line = self.line;
        let pair = (self.peek(0), self.peek(1));
        let spells = |m: &str| {
            let mut chars = m.chars();
            (chars.next(), chars.next()) == pair
        };
        if let Some(multi) = MULTI.into_iter().find(|m| spells(m)) {
            self.at += 2;
            self.push(Kind::Punct(multi), line);
            return;
        }
        let c = self.bump();
        let single = c.and_then(|c| SINGLE.find(c)).map(|i| &SINGLE[i..i + 1]);
        // A character the checks never look for (`\`, a stray non-ASCII symbol) still separates.
        self.push(single.map_or(Kind::Other, Kind::Punct), line);
    }
}

/// `tokens` without the items marked `#[cfg(test)]` (a test module, a test helper): what a
/// crate's code is built from, tests left out.
pub fn without_tests(tokens: &[Token]) -> Vec<Token> {
    let mut kept = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if is_cfg_test(&tokens[i..]) {
            i = item_end(tokens, i + CFG_TEST.len());
        } else {
            kept.push(tokens[i].clone());
            i += 1;
        }
    }
    kept
}

const CFG_TEST: [&str; 7] = ["#", "[", "cfg", "(", "test", ")", "]"];

fn is_cfg_test(tokens: &[Token]) -> bool {
    tokens.len() >= CFG_TEST.len() && CFG_TEST.iter().zip(tokens).all(|(want, t)| t.is_punct(want) || t.is_ident(want))
}

/// Where the item starting at `tokens[start]` (after its `#[cfg(test)]`) ends: past its
/// closing brace, or its `;` outside any bracket, whichever comes first.
fn item_end(tokens: &[Token], start: usize) -> usize {
    let mut depth = 0usize;
    for (offset, token) in tokens[start..].iter().enumerate() {
        let at = start + offset;
        match &token.kind {
            Kind::Punct("{" | "(" | "[") => depth += 1,
            Kind::Punct("}") if depth == 1 => return at + 1,
            Kind::Punct("}" | ")" | "]") => depth = depth.saturating_sub(1),
            Kind::Punct(";") if depth == 0 => return at + 1,
            _ => {}
        }
    }
    tokens.len()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use super::*;

    fn idents(text: &str) -> Vec<String> {
        tokens(text).unwrap().into_iter().filter_map(|t| t.ident().map(str::to_owned)).collect()
    }

    #[test]
    fn comments_and_strings_hide_their_contents() {
        let text = "a // b {\n/* c /* d */ e */ f \"g { h\" r#\"i \" j\"# k";
        assert_eq!(idents(text), ["a", "f", "k"]);
        let strings: Vec<_> = tokens(text).unwrap().into_iter().filter(|t| matches!(t.kind, Kind::Str(_))).collect();
        assert_eq!(strings.len(), 2);
        assert_eq!(strings[1].kind, Kind::Str("i \" j".into()));
    }

    #[test]
    fn chars_and_lifetimes_are_told_apart() {
        assert_eq!(idents("fn f<'a>(x: &'a str) { '{'; '\\''; b'}'; g }"), ["fn", "f", "x", "str", "g"]);
        let braces = tokens("'{' { '}' }").unwrap().iter().filter(|t| t.is_punct("{") || t.is_punct("}")).count();
        assert_eq!(braces, 2);
    }

    #[test]
    fn lines_are_counted_through_comments_and_strings() {
        let toks = tokens("a\n/*\n\n*/ b \"\n\" c").unwrap();
        let lines: Vec<_> = toks.iter().map(|t| t.line).collect();
        assert_eq!(lines, [1, 4, 4, 5]);
    }

    #[test]
    fn multi_character_punctuation_is_one_token() {
        let toks = tokens("a::b => c == d != e -> f || g").unwrap();
        let puncts: Vec<_> =
            toks.iter().filter_map(|t| if let Kind::Punct(p) = t.kind { Some(p) } else { None }).collect();
        assert_eq!(puncts, ["::", "=>", "==", "!=", "->", "|", "|"]);
    }

    #[test]
    fn an_unclosed_comment_or_string_is_an_error() {
        assert_eq!(tokens("a /* b").unwrap_err(), ScanError { line: 1, what: "a block comment" });
        assert_eq!(tokens("\n\"open").unwrap_err(), ScanError { line: 2, what: "a string" });
        assert_eq!(tokens("r#\"open\"").unwrap_err().what, "a string");
    }

    #[test]
    fn raw_identifiers_lose_their_prefix() {
        assert_eq!(idents("r#type r#match"), ["type", "match"]);
    }
    #[test]
    fn test_items_are_left_out() {
        let text = "a #[cfg(test)] mod tests { fn b() { c } } d #[cfg(test)] #[allow(x)] fn e(x: [u8; 2]) {} f #[cfg(test)] use g; h";
        let kept: Vec<_> =
            without_tests(&tokens(text).unwrap()).into_iter().filter_map(|t| t.ident().map(str::to_owned)).collect();
        assert_eq!(kept, ["a", "d", "f", "h"]);
    }
}
