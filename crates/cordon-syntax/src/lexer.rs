//! The lexer: source text to [`Token`]s, by hand, in one linear pass.
//!
//! It never fails. Text it cannot read (an unknown character, an unterminated string, an integer
//! that does not fit in `i64`) becomes one [`TokenKind::Error`] token and a [`LexError`]. The
//! parser turns a `LexError` into a diagnostic when it reaches its token, so a lexical mistake
//! obeys the parser's one-error-per-statement rule. Comments are dropped, except `///` doc
//! comments, which are kept in [`Lexed::docs`] keyed by the token they precede so the parser can
//! attach them to items, fields, enum variants and tools.

use crate::diagnostic::{Code, Diagnostic};
use crate::span::{FileId, Span};

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// An identifier; its name is the source text under the token's span.
    Ident,
    Int(i64),
    Float(f64),
    /// `12.50d`: an exact decimal (the `d` is not part of an identifier).
    Decimal(rust_decimal::Decimal),
    /// A string literal with its escapes resolved.
    Str(String),
    /// `f"`: an interpolated string begins. Its parts follow: a `Str` (the text, possibly
    /// empty), then any number of `{` expression-tokens `}` `Str`, then [`TokenKind::FStrEnd`].
    FStrStart,
    /// The `"` that ends an interpolated string.
    FStrEnd,

    // Keywords.
    Let,
    Fn,
    If,
    Else,
    Match,
    For,
    In,
    Type,
    Enum,
    Linear,
    Opaque,
    Measure,
    Capability,
    Tool,
    Const,
    Entry,
    True,
    False,
    As,
    Agent,

    // Punctuation.
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Colon,
    ColonColon,
    Dot,
    Arrow,
    FatArrow,
    Pipe,
    PipePipe,
    Amp,
    AmpAmp,
    Bang,
    BangEq,
    Eq,
    EqEq,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    At,
    Underscore,

    /// Text the lexer has already reported as a `syntax-error`.
    Error,
    /// The end of the text; always the last token.
    Eof,
}

impl TokenKind {
    /// The keyword spelled `word`, if it is one.
    pub fn keyword(word: &str) -> Option<TokenKind> {
        Some(match word {
            "let" => TokenKind::Let,
            "fn" => TokenKind::Fn,
            "if" => TokenKind::If,
            "else" => TokenKind::Else,
            "match" => TokenKind::Match,
            "for" => TokenKind::For,
            "in" => TokenKind::In,
            "type" => TokenKind::Type,
            "enum" => TokenKind::Enum,
            "linear" => TokenKind::Linear,
            "opaque" => TokenKind::Opaque,
            "measure" => TokenKind::Measure,
            "capability" => TokenKind::Capability,
            "tool" => TokenKind::Tool,
            "const" => TokenKind::Const,
            "entry" => TokenKind::Entry,
            "true" => TokenKind::True,
            "false" => TokenKind::False,
            "as" => TokenKind::As,
            "agent" => TokenKind::Agent,
            _ => return None,
        })
    }

    /// How a keyword or punctuation token is written; `None` for names, literals, `Error` and
    /// `Eof`, whose text varies.
    pub fn fixed_text(&self) -> Option<&'static str> {
        use TokenKind::*;
        Some(match self {
            Ident | Int(_) | Float(_) | Decimal(_) | Str(_) | Error | Eof => return None,
            FStrStart => "f\"",
            FStrEnd => "\"",
            Let => "let",
            Fn => "fn",
            If => "if",
            Else => "else",
            Match => "match",
            For => "for",
            In => "in",
            Type => "type",
            Enum => "enum",
            Linear => "linear",
            Opaque => "opaque",
            Measure => "measure",
            Capability => "capability",
            Tool => "tool",
            Const => "const",
            Entry => "entry",
            True => "true",
            False => "false",
            As => "as",
            Agent => "agent",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            ColonColon => "::",
            Dot => ".",
            Arrow => "->",
            FatArrow => "=>",
            Pipe => "|",
            PipePipe => "||",
            Amp => "&",
            AmpAmp => "&&",
            Bang => "!",
            BangEq => "!=",
            Eq => "=",
            EqEq => "==",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            At => "@",
            Underscore => "_",
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// The tokens of one file, its doc comments and the errors found while reading it.
#[derive(Debug)]
pub struct Lexed {
    /// Never empty: the last token is [`TokenKind::Eof`].
    pub tokens: Vec<Token>,
    /// `(index of the token after the comment, text)`, in token order. Consecutive `///` lines
    /// are joined with '\n'; the slashes and one leading space of each line are removed.
    pub docs: Vec<(usize, String)>,
    /// In source order.
    pub errors: Vec<LexError>,
}

/// Something the lexer could not read; small, so that garbage input costs little memory.
#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    /// Index of the token it belongs to (the `Error` token, the string with a bad escape, or the
    /// token after an unterminated comment).
    pub token: usize,
    pub span: Span,
    pub kind: LexErrorKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LexErrorKind {
    UnknownChar(char),
    UnterminatedString,
    UnterminatedComment,
    UnknownEscape(char),
    InvalidUnicodeEscape,
    IntTooLarge,
    InvalidFloat,
    DecimalTooLarge,
}

impl LexError {
    /// The `syntax-error` diagnostic for it.
    pub fn diagnostic(&self) -> Diagnostic {
        let (message, label, help) = match self.kind {
            LexErrorKind::UnknownChar(c) => (
                format!("unknown character `{}`", show_char(c)),
                "not part of the language",
                match c {
                    '\'' => Some("strings are written in double quotes: \"a\""),
                    '?' => Some("there is no `?` operator: use `match` on the `Option` or `Result`"),
                    '#' => Some("comments start with `//`"),
                    _ => None,
                },
            ),
            LexErrorKind::UnterminatedString => {
                ("unterminated string literal".to_string(), "string starts here", Some("close it with `\"`"))
            }
            LexErrorKind::UnterminatedComment => {
                ("unterminated block comment".to_string(), "comment starts here", Some("close it with `*/`"))
            }
            LexErrorKind::UnknownEscape(c) => (
                format!("unknown escape `\\{}` in string", show_char(c)),
                "unknown escape",
                Some(r#"the escapes are \n \t \r \" \\ \0 and \u{1F600}"#),
            ),
            LexErrorKind::InvalidUnicodeEscape => (
                "invalid unicode escape".to_string(),
                "invalid escape",
                Some(r"write `\u{` then one to six hex digits of a code point, then `}`"),
            ),
            LexErrorKind::IntTooLarge => (
                "integer literal too large".to_string(),
                "does not fit",
                Some("integers are 64-bit: at most 9223372036854775807"),
            ),
            LexErrorKind::InvalidFloat => ("invalid float literal".to_string(), "not a number", None),
            LexErrorKind::DecimalTooLarge => (
                "decimal literal too large or too precise".to_string(),
                "does not fit",
                Some("a `Decimal` has at most 28 digits after the point and 28 in all, without an exponent"),
            ),
        };
        let d = Diagnostic::error(Code::SyntaxError, self.span, message).with_primary_label(label);
        match help {
            Some(help) => d.with_help(help),
            None => d,
        }
    }
}

pub fn lex(file: FileId, text: &str) -> Lexed {
    let mut lexer = Lexer {
        file,
        text,
        bytes: text.as_bytes(),
        pos: 0,
        tokens: Vec::new(),
        docs: Vec::new(),
        pending_doc: None,
        errors: Vec::new(),
        holes: Vec::new(),
    };
    lexer.run();
    Lexed { tokens: lexer.tokens, docs: lexer.docs, errors: lexer.errors }
}

/// Offsets are kept as `u32` in spans; a text beyond 4 GiB gets saturated spans, never a panic.
fn offset(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// How a character is shown in a message: itself, or `\u{..}` when it would be invisible.
pub(crate) fn show_char(c: char) -> String {
    if c.is_whitespace() || c.is_control() || c == '\u{FEFF}' {
        format!("\\u{{{:x}}}", u32::from(c))
    } else {
        c.to_string()
    }
}

struct Lexer<'a> {
    file: FileId,
    text: &'a str,
    bytes: &'a [u8],
    /// Always on a char boundary between steps.
    pos: usize,
    tokens: Vec<Token>,
    docs: Vec<(usize, String)>,
    pending_doc: Option<String>,
    errors: Vec<LexError>,
    /// The interpolations `{..}` of f-strings being read, innermost last: where the f-string
    /// began, and how many `{` are open inside the interpolation (its `}` is the one at zero).
    holes: Vec<(usize, u32)>,
}

impl Lexer<'_> {
    fn run(&mut self) {
        if self.text.starts_with('\u{FEFF}') {
            self.pos = '\u{FEFF}'.len_utf8();
        }
        while let Some(b) = self.byte(0) {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0C' => self.pos += 1,
                b'/' if self.byte(1) == Some(b'/') => self.line_comment(),
                b'/' if self.byte(1) == Some(b'*') => self.block_comment(),
                b'"' => self.string(),
                b'{' if !self.holes.is_empty() => {
                    if let Some(top) = self.holes.last_mut() {
                        top.1 += 1;
                    }
                    self.punct_or_unknown();
                }
                b'}' if self.holes.last().is_some_and(|h| h.1 > 0) => {
                    if let Some(top) = self.holes.last_mut() {
                        top.1 -= 1;
                    }
                    self.punct_or_unknown();
                }
                b'}' if !self.holes.is_empty() => {
                    let start = self.pos;
                    self.pos += 1;
                    self.push(TokenKind::RBrace, start);
                    if let Some((fstart, _)) = self.holes.pop() {
                        self.fstring_text(fstart);
                    }
                }
                b'f' if self.byte(1) == Some(b'"') => self.fstring(),
                b'0'..=b'9' => self.number(),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.ident(),
                _ => self.punct_or_unknown(),
            }
        }
        if let Some(&(fstart, _)) = self.holes.first() {
            self.error(fstart, fstart + 2, LexErrorKind::UnterminatedString);
            self.push(TokenKind::Error, self.pos);
        }
        self.push(TokenKind::Eof, self.pos);
    }

    fn byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos.saturating_add(ahead)).copied()
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, offset(start), offset(end))
    }

    /// Pushes a token from `start` to the current position, with the pending doc comment.
    fn push(&mut self, kind: TokenKind, start: usize) {
        if let Some(doc) = self.pending_doc.take() {
            self.docs.push((self.tokens.len(), doc));
        }
        let span = self.span(start, self.pos.max(start));
        self.tokens.push(Token { kind, span });
    }

    /// An error belonging to the next token pushed.
    fn error(&mut self, start: usize, end: usize, kind: LexErrorKind) {
        let span = self.span(start, end);
        self.errors.push(LexError { token: self.tokens.len(), span, kind });
    }

    fn line_comment(&mut self) {
        let start = self.pos;
        let len = self.bytes.get(start..).map_or(0, |rest| rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len()));
        self.pos = start + len;
        // `///` is a doc comment, `////` (a ruler) is not, as in Rust.
        let is_doc = self.bytes.get(start + 2) == Some(&b'/') && self.bytes.get(start + 3) != Some(&b'/');
        if !is_doc {
            return;
        }
        let line = self.text.get(start + 3..self.pos).unwrap_or("");
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = line.strip_prefix(' ').unwrap_or(line);
        match &mut self.pending_doc {
            Some(doc) => {
                doc.push('\n');
                doc.push_str(line);
            }
            None => self.pending_doc = Some(line.to_string()),
        }
    }

    /// `/* .. */`, nested like Rust's.
    fn block_comment(&mut self) {
        let start = self.pos;
        self.pos += 2;
        let mut depth = 1usize;
        while let Some(b) = self.byte(0) {
            if b == b'/' && self.byte(1) == Some(b'*') {
                depth += 1;
                self.pos += 2;
            } else if b == b'*' && self.byte(1) == Some(b'/') {
                depth -= 1;
                self.pos += 2;
                if depth == 0 {
                    return;
                }
            } else {
                self.pos += 1;
            }
        }
        // Only ASCII bytes were compared, so stopping anywhere keeps `pos` on a char boundary.
        self.error(start, start + 2, LexErrorKind::UnterminatedComment);
    }

    fn string(&mut self) {
        let start = self.pos;
        self.pos += 1;
        let mut value = String::new();
        loop {
            match self.byte(0) {
                None => {
                    self.error(start, start + 1, LexErrorKind::UnterminatedString);
                    self.push(TokenKind::Error, start);
                    return;
                }
                Some(b'"') => {
                    self.pos += 1;
                    self.push(TokenKind::Str(value), start);
                    return;
                }
                Some(b'\\') => self.escape(&mut value),
                Some(_) => {
                    // Copy up to the next quote or backslash; both are ASCII, so the slice ends
                    // on a char boundary.
                    let run = self.pos;
                    while let Some(b) = self.byte(0) {
                        if b == b'"' || b == b'\\' {
                            break;
                        }
                        self.pos += 1;
                    }
                    value.push_str(self.text.get(run..self.pos).unwrap_or(""));
                }
            }
        }
    }

    /// At `f"`: an interpolated string.
    fn fstring(&mut self) {
        let start = self.pos;
        self.pos += 2;
        self.push(TokenKind::FStrStart, start);
        self.fstring_text(start);
    }

    /// Reads an f-string's text up to its end (pushing `Str`, `FStrEnd`) or to an
    /// interpolation's `{` (pushing `Str`, `{`; the main loop reads the expression and comes
    /// back at its `}`). `{{` and `}}` are a literal brace.
    fn fstring_text(&mut self, fstart: usize) {
        let start = self.pos;
        let mut value = String::new();
        loop {
            match self.byte(0) {
                None => {
                    self.error(fstart, fstart + 2, LexErrorKind::UnterminatedString);
                    self.push(TokenKind::Error, start);
                    return;
                }
                Some(b'"') => {
                    self.push(TokenKind::Str(value), start);
                    let end = self.pos;
                    self.pos += 1;
                    self.push(TokenKind::FStrEnd, end);
                    return;
                }
                Some(b'\\') => self.escape(&mut value),
                Some(b'{') if self.byte(1) == Some(b'{') => {
                    value.push('{');
                    self.pos += 2;
                }
                Some(b'}') if self.byte(1) == Some(b'}') => {
                    value.push('}');
                    self.pos += 2;
                }
                Some(b'{') => {
                    self.push(TokenKind::Str(value), start);
                    let open = self.pos;
                    self.pos += 1;
                    self.push(TokenKind::LBrace, open);
                    self.holes.push((fstart, 0));
                    return;
                }
                Some(_) => {
                    // Up to the next ASCII quote, backslash or brace: a char boundary.
                    let run = self.pos;
                    while let Some(b) = self.byte(0) {
                        if matches!(b, b'"' | b'\\' | b'{' | b'}') && self.pos > run {
                            break;
                        }
                        self.pos += 1;
                    }
                    value.push_str(self.text.get(run..self.pos).unwrap_or(""));
                }
            }
        }
    }

    /// At a backslash inside a string.
    fn escape(&mut self, value: &mut String) {
        let start = self.pos;
        let simple = match self.byte(1) {
            Some(b'n') => Some('\n'),
            Some(b't') => Some('\t'),
            Some(b'r') => Some('\r'),
            Some(b'"') => Some('"'),
            Some(b'\\') => Some('\\'),
            Some(b'0') => Some('\0'),
            _ => None,
        };
        if let Some(c) = simple {
            value.push(c);
            self.pos += 2;
            return;
        }
        match self.byte(1) {
            // The string is unterminated; the caller reports that.
            None => self.pos += 1,
            Some(b'u') => self.unicode_escape(value),
            Some(_) => {
                let c = self.text.get(start + 1..).and_then(|s| s.chars().next()).unwrap_or('?');
                self.pos = start + 1 + c.len_utf8();
                self.error(start, self.pos, LexErrorKind::UnknownEscape(c));
            }
        }
    }

    /// At `\u`: expects `{`, one to six hex digits naming a char, and `}`.
    fn unicode_escape(&mut self, value: &mut String) {
        let start = self.pos;
        self.pos += 2;
        let mut code: u32 = 0;
        let mut digits = 0usize;
        let mut well_formed = self.byte(0) == Some(b'{');
        if well_formed {
            self.pos += 1;
            while let Some(d) = self.byte(0).and_then(|b| char::from(b).to_digit(16)) {
                // Six digits at most, so `code` stays below 2^24.
                if digits < 6 {
                    code = code * 16 + d;
                }
                digits += 1;
                self.pos += 1;
            }
            well_formed = self.byte(0) == Some(b'}') && (1..=6).contains(&digits);
            if self.byte(0) == Some(b'}') {
                self.pos += 1;
            }
        }
        match char::from_u32(code).filter(|_| well_formed) {
            Some(c) => value.push(c),
            None => self.error(start, self.pos, LexErrorKind::InvalidUnicodeEscape),
        }
    }

    fn number(&mut self) {
        let start = self.pos;
        self.skip_digits();
        let mut float = false;
        if self.byte(0) == Some(b'.') && self.byte(1).is_some_and(|b| b.is_ascii_digit()) {
            float = true;
            self.pos += 1;
            self.skip_digits();
        }
        if matches!(self.byte(0), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.byte(1), Some(b'+' | b'-')));
            if self.byte(1 + sign).is_some_and(|b| b.is_ascii_digit()) {
                float = true;
                self.pos += 1 + sign;
                self.skip_digits();
            }
        }
        let text = self.text.get(start..self.pos).unwrap_or("");
        // `12.50d`: a `d` right after the digits (and not starting a name) makes a decimal.
        if self.byte(0) == Some(b'd')
            && !self.byte(1).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !text.contains(['e', 'E'])
        {
            self.pos += 1;
            match rust_decimal::Decimal::from_str_exact(text) {
                Ok(d) => self.push(TokenKind::Decimal(d), start),
                Err(_) => {
                    self.error(start, self.pos, LexErrorKind::DecimalTooLarge);
                    self.push(TokenKind::Error, start);
                }
            }
            return;
        }
        let kind = if float {
            // Digits, a dot and an exponent always parse; a huge exponent gives infinity.
            text.parse::<f64>().map(TokenKind::Float).ok()
        } else {
            text.parse::<i64>().map(TokenKind::Int).ok()
        };
        match kind {
            Some(kind) => self.push(kind, start),
            None => {
                let kind = if float { LexErrorKind::InvalidFloat } else { LexErrorKind::IntTooLarge };
                self.error(start, self.pos, kind);
                self.push(TokenKind::Error, start);
            }
        }
    }

    fn skip_digits(&mut self) {
        while self.byte(0).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
    }

    fn ident(&mut self) {
        let start = self.pos;
        while self.byte(0).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
            self.pos += 1;
        }
        let word = self.text.get(start..self.pos).unwrap_or("");
        let kind = match word {
            "_" => TokenKind::Underscore,
            _ => TokenKind::keyword(word).unwrap_or(TokenKind::Ident),
        };
        self.push(kind, start);
    }

    fn punct_or_unknown(&mut self) {
        use TokenKind::*;
        let start = self.pos;
        let pair = match (self.byte(0), self.byte(1)) {
            (Some(b':'), Some(b':')) => Some(ColonColon),
            (Some(b'-'), Some(b'>')) => Some(Arrow),
            (Some(b'='), Some(b'>')) => Some(FatArrow),
            (Some(b'|'), Some(b'|')) => Some(PipePipe),
            (Some(b'&'), Some(b'&')) => Some(AmpAmp),
            (Some(b'!'), Some(b'=')) => Some(BangEq),
            (Some(b'='), Some(b'=')) => Some(EqEq),
            (Some(b'<'), Some(b'=')) => Some(Le),
            (Some(b'>'), Some(b'=')) => Some(Ge),
            _ => None,
        };
        if let Some(kind) = pair {
            self.pos += 2;
            self.push(kind, start);
            return;
        }
        let single = self.byte(0).and_then(single_punct);
        if let Some(kind) = single {
            self.pos += 1;
            self.push(kind, start);
            return;
        }
        self.unknown();
    }

    /// A run of characters that start no token: one error, one `Error` token.
    fn unknown(&mut self) {
        let start = self.pos;
        let rest = self.text.get(start..).unwrap_or("");
        let mut chars = rest.chars();
        let Some(first) = chars.next() else {
            // Not on a char boundary: cannot happen, but never loop.
            self.pos = self.bytes.len();
            return;
        };
        self.pos += first.len_utf8();
        for c in chars {
            if !is_unknown(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
        self.error(start, self.pos, LexErrorKind::UnknownChar(first));
        self.push(TokenKind::Error, start);
    }
}

fn single_punct(b: u8) -> Option<TokenKind> {
    use TokenKind::*;
    Some(match b {
        b'(' => LParen,
        b')' => RParen,
        b'[' => LBracket,
        b']' => RBracket,
        b'{' => LBrace,
        b'}' => RBrace,
        b',' => Comma,
        b';' => Semi,
        b':' => Colon,
        b'.' => Dot,
        b'|' => Pipe,
        b'&' => Amp,
        b'!' => Bang,
        b'=' => Eq,
        b'<' => Lt,
        b'>' => Gt,
        b'+' => Plus,
        b'-' => Minus,
        b'*' => Star,
        b'/' => Slash,
        b'%' => Percent,
        b'@' => At,
        _ => return None,
    })
}

/// Characters that start no token (so a run of them is one error).
fn is_unknown(c: char) -> bool {
    if !c.is_ascii() {
        return true;
    }
    let b = c as u8;
    !(b.is_ascii_whitespace() || b.is_ascii_alphanumeric() || b == b'_' || b == b'"' || single_punct(b).is_some())
}
