//! The formatter's layout: the file's tokens and comments, in order, on the lines the author
//! broke them onto, each line indented by the brackets open around it (and whether it goes on
//! from the line before), each piece spaced from the one before.

use super::roles::{Role, roles};
use crate::lexer::{Lexed, Token, TokenKind, lex};
use crate::span::FileId;

/// How much deeper a block's lines and a continuation line are indented.
const STEP: usize = 2;

/// One line of the result.
struct Line {
    /// In columns.
    indent: usize,
    /// The indentation a block opened on this line is indented from: the line's own, or, on a
    /// line aligned inside a bracket, that of the line the bracket was opened on.
    block: usize,
    text: String,
    blank_before: bool,
    /// Whether the line ends with an opening bracket (no blank line follows it).
    opens_last: bool,
}

/// A piece of the file: a token (by index) or a comment (its text).
#[derive(Clone, Copy)]
enum Piece<'a> {
    Token(usize),
    Comment(&'a str),
}

/// A bracket still open.
#[derive(Clone, Copy)]
enum Open {
    /// Just opened: what follows it decides its style. `block` is its line's.
    Pending { block: usize },
    /// Lines inside start at `content` (one step in from the opening line's block for a bracket
    /// that ends its line; aligned with the first item for one that does not); a line starting
    /// with the closing bracket is at `closer`; `aligned` for the second kind.
    Ready { content: usize, closer: usize, aligned: bool },
}

struct Layout<'a> {
    text: &'a str,
    tokens: &'a [Token],
    roles: Vec<Role>,
    /// Sorted offsets where a line is never a continuation (see `unit_starts`).
    starts: &'a [u32],
    lines: Vec<Line>,
    /// Innermost last.
    open: Vec<Open>,
    /// Where each `if` still open to an `else` starts: how many brackets were open around it,
    /// and its column (the first of an `else if` chain). A line starting with `else` lines up
    /// with its `if`.
    ifs: Vec<(usize, usize)>,
    last: Option<Piece<'a>>,
    last_token: Option<usize>,
}

/// `text` (lexed as `lexed`, with declarations and statements starting at `starts`) laid out.
pub(super) fn lay_out(text: &str, lexed: &Lexed, starts: &[u32]) -> String {
    let tokens = &lexed.tokens;
    let mut layout = Layout {
        text,
        tokens,
        roles: roles(tokens, starts),
        starts,
        lines: Vec::new(),
        open: Vec::new(),
        ifs: Vec::new(),
        last: None,
        last_token: None,
    };
    let mut pos = if text.starts_with('\u{FEFF}') { '\u{FEFF}'.len_utf8() } else { 0 };
    for (i, token) in tokens.iter().enumerate() {
        let start = token.span.start as usize;
        let newlines = layout.gap(text.get(pos..start).unwrap_or(""));
        if token.kind == TokenKind::Eof {
            break;
        }
        layout.place(Piece::Token(i), newlines);
        pos = token.span.end as usize;
    }
    layout.finish()
}

impl<'a> Layout<'a> {
    /// Places the comments in `gap` (whitespace and comments between two tokens) and returns
    /// how many line breaks follow the last of them.
    fn gap(&mut self, gap: &'a str) -> usize {
        let bytes = gap.as_bytes();
        let (mut at, mut newlines) = (0, 0);
        while at < bytes.len() {
            let rest = &bytes[at..];
            let len = if rest.starts_with(b"//") {
                rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
            } else if rest.starts_with(b"/*") {
                block_comment_len(rest)
            } else {
                newlines += usize::from(rest[0] == b'\n');
                at += 1;
                continue;
            };
            let comment = gap.get(at..at + len).unwrap_or("");
            self.place(Piece::Comment(comment.trim_end()), newlines);
            newlines = 0;
            at += len;
        }
        newlines
    }

    /// Places `piece` after `newlines` line breaks (on the current line if none).
    fn place(&mut self, piece: Piece<'a>, newlines: usize) {
        let token = match piece {
            Piece::Token(i) => Some(i),
            Piece::Comment(_) => None,
        };
        if newlines > 0 || self.lines.is_empty() {
            self.settle(false);
            let (indent, block) = match token {
                Some(i) => self.line_start(i),
                None => (self.content(), self.inner_block()),
            };
            let after_open = self.lines.last().is_none_or(|l| l.opens_last);
            let closes_first = token.is_some_and(|i| self.closes(i));
            let blank_before = newlines >= 2 && !after_open && !closes_first;
            self.lines.push(Line { indent, block, text: String::new(), blank_before, opens_last: false });
        } else {
            if let Some(last) = self.last
                && self.spaced(last, piece)
            {
                self.push_text(" ");
            }
            self.settle(token.is_some());
        }
        if let Some(i) = token {
            let after_else = self.last_token.is_some_and(|p| self.tokens[p].kind == TokenKind::Else);
            if self.tokens[i].kind == TokenKind::If && !after_else {
                self.ifs.push((self.open.len(), self.column()));
            }
            if self.opens(i) {
                let block = self.lines.last().map_or(0, |l| l.block);
                self.open.push(Open::Pending { block });
            } else if self.closes(i) {
                self.open.pop();
                let depth = self.open.len();
                self.ifs.retain(|&(d, _)| d <= depth);
            }
            self.last_token = Some(i);
        }
        let text = match piece {
            Piece::Token(i) => self.token_text(i),
            Piece::Comment(text) => text,
        };
        self.push_text(text);
        let opens = token.is_some_and(|i| self.opens(i));
        if let Some(line) = self.lines.last_mut() {
            line.opens_last = opens;
        }
        self.last = Some(piece);
    }

    /// Decides the style of a bracket just opened, now that what follows it is known: aligned
    /// with a token that follows on its line, else a block.
    fn settle(&mut self, token_follows: bool) {
        let column = self.column();
        let Some(top) = self.open.last_mut() else { return };
        if let Open::Pending { block } = *top {
            *top = if token_follows {
                Open::Ready { content: column, closer: block, aligned: true }
            } else {
                Open::Ready { content: block + STEP, closer: block, aligned: false }
            };
        }
    }

    /// The column the next text on the current line starts at.
    fn column(&self) -> usize {
        let Some(line) = self.lines.last() else { return 0 };
        match line.text.rfind('\n') {
            Some(at) => line.text[at + 1..].chars().count(),
            None => line.indent + line.text.chars().count(),
        }
    }

    /// Where a line inside the innermost bracket starts.
    fn content(&self) -> usize {
        match self.open.last() {
            Some(Open::Ready { content, .. }) => *content,
            Some(Open::Pending { block }) => block + STEP,
            None => 0,
        }
    }

    /// The block indentation of a line that starts at `content()` (not a continuation).
    fn inner_block(&self) -> usize {
        match self.open.last() {
            Some(Open::Ready { closer, aligned: true, .. }) => *closer,
            _ => self.content(),
        }
    }

    /// The indentation and block indentation of a line that starts with token `i`.
    fn line_start(&self, i: usize) -> (usize, usize) {
        if self.closes(i) {
            let closer = match self.open.last() {
                Some(Open::Ready { closer, .. } | Open::Pending { block: closer }) => *closer,
                None => 0,
            };
            return (closer, closer);
        }
        if self.tokens[i].kind == TokenKind::Else
            && let Some(&(depth, column)) = self.ifs.last()
            && depth == self.open.len()
        {
            let block = match self.open.last() {
                Some(Open::Ready { closer, aligned: true, .. }) => *closer,
                _ => column,
            };
            return (column, block);
        }
        if !self.continues(i) {
            return (self.content(), self.inner_block());
        }
        let indent = self.content() + STEP;
        match self.open.last() {
            Some(Open::Ready { closer, aligned: true, .. }) => (indent, *closer),
            _ => (indent, indent),
        }
    }

    fn push_text(&mut self, text: &str) {
        if let Some(line) = self.lines.last_mut() {
            line.text.push_str(text);
        }
    }

    fn token_text(&self, i: usize) -> &'a str {
        let span = self.tokens[i].span;
        self.text.get(span.start as usize..span.end as usize).unwrap_or("")
    }

    fn opens(&self, i: usize) -> bool {
        let kind = &self.tokens[i].kind;
        matches!(kind, TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace) && self.roles[i] != Role::FString
    }

    fn closes(&self, i: usize) -> bool {
        let kind = &self.tokens[i].kind;
        matches!(kind, TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace) && self.roles[i] != Role::FString
    }

    /// Whether a line starting with token `i` continues the line before: it starts no
    /// declaration, statement or arm, and the token before it opens no bracket and separates
    /// nothing.
    fn continues(&self, i: usize) -> bool {
        use TokenKind::*;
        let Some(prev) = self.last_token else { return false };
        let token = &self.tokens[i];
        let declares = matches!(
            token.kind,
            Let | Fn | Type | Enum | Linear | Opaque | Measure | Capability | Tool | Const | Entry
        );
        if declares || self.starts.binary_search(&token.span.start).is_ok() {
            return false;
        }
        !(self.opens(prev) || matches!(self.tokens[prev].kind, Comma | Semi))
    }

    /// Whether a space goes between `a` and `b` on one line.
    fn spaced(&self, a: Piece<'_>, b: Piece<'_>) -> bool {
        match (a, b) {
            (Piece::Token(p), Piece::Comment(c)) => c.starts_with("//") || !self.opens(p),
            (Piece::Comment(_), Piece::Token(j)) => {
                !(self.closes(j) || matches!(self.tokens[j].kind, TokenKind::Comma | TokenKind::Semi))
            }
            (Piece::Comment(_), Piece::Comment(_)) => true,
            (Piece::Token(p), Piece::Token(j)) => self.token_spaced(p, j) || self.would_merge(p, j),
        }
    }

    /// Whether a space goes between tokens `p` and `j`, by their kinds and roles.
    fn token_spaced(&self, p: usize, j: usize) -> bool {
        use TokenKind::*;
        let (a, b) = (&self.tokens[p].kind, &self.tokens[j].kind);
        let (ra, rb) = (self.roles[p], self.roles[j]);
        if (ra == Role::FString && *a != FStrEnd) || (rb == Role::FString && *b != FStrStart) {
            return false;
        }
        match (a, b) {
            (_, Comma | Semi) | (LParen | LBracket, _) | (_, RParen | RBracket) | (LBrace, RBrace) => false,
            (Comma | Semi, _) => true,
            (LBrace, _) => ra != Role::Tight,
            (_, RBrace) => rb != Role::Tight,
            // `x.0 .1` and `x.0.1`, `2. 3` and `2.3` lex differently: keep what the author wrote
            // where a number is on both sides of the dot's gap.
            (Int(_) | Float(_) | Decimal(_), Dot) => self.tokens[j].span.start > self.tokens[p].span.end,
            (Dot, Int(_) | Float(_) | Decimal(_))
                if p.checked_sub(1).is_some_and(|q| matches!(self.tokens[q].kind, Int(_) | Float(_) | Decimal(_))) =>
            {
                self.tokens[j].span.start > self.tokens[p].span.end
            }
            (Dot | ColonColon | At, _) | (_, ColonColon | Colon) => false,
            (_, Dot) => false,
            _ if matches!(ra, Role::Unary | Role::ClosureOpen) || rb == Role::ClosureClose => false,
            (_, LParen | LBracket) => !matches!(a, Ident | RParen | RBracket | Agent | Fn | Entry | FStrEnd),
            _ => true,
        }
    }

    /// Whether tokens `p` and `j` written together would read as something else (`|` `|` as
    /// `||`, `/` `/` as a comment).
    fn would_merge(&self, p: usize, j: usize) -> bool {
        if self.roles[p] == Role::FString || self.roles[j] == Role::FString {
            return false;
        }
        let joined = format!("{}{}", self.token_text(p), self.token_text(j));
        let lexed = lex(FileId(0), &joined);
        let kinds: Vec<&TokenKind> = lexed.tokens.iter().map(|t| &t.kind).collect();
        kinds != [&self.tokens[p].kind, &self.tokens[j].kind, &TokenKind::Eof] || !lexed.errors.is_empty()
    }

    /// The lines as text.
    fn finish(self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            if line.blank_before {
                out.push('\n');
            }
            out.extend(std::iter::repeat_n(' ', line.indent));
            out.push_str(&line.text);
            out.push('\n');
        }
        out
    }
}

/// The length of the block comment at the start of `rest` (nested, as the lexer reads it).
fn block_comment_len(rest: &[u8]) -> usize {
    let (mut depth, mut at) = (0usize, 0);
    while at < rest.len() {
        if rest[at..].starts_with(b"/*") {
            depth += 1;
            at += 2;
        } else if rest[at..].starts_with(b"*/") {
            depth -= 1;
            at += 2;
            if depth == 0 {
                return at;
            }
        } else {
            at += 1;
        }
    }
    rest.len()
}
