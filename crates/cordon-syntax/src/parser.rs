//! The parser: tokens to a [`Module`], by recursive descent with precedence climbing for binary
//! operators. It never fails: it returns a tree, with `Error` nodes where it recovered, and every
//! error it found.
//!
//! Recovery. The first error of a statement (or declaration, match arm list, tool) is reported;
//! later ones in the same statement are taken to be consequences and dropped. A bracketed list
//! whose element fails skips to its closing bracket; a statement that fails skips to its `;`, to
//! the `}` of its block, or to the next `let` or declaration. When a statement only lacks its `;`
//! and the next line starts a new one, parsing resumes there without skipping anything.
//!
//! Nesting. `depth` counts the constructs being parsed inside each other (expressions, blocks,
//! types, patterns); a construct that would go beyond [`MAX_NESTING`] is reported once as
//! `nesting-too-deep` and skipped. Left-nested chains (`a + b + c`, `x.f.g`, `f(a)(b)`) are built
//! by loops, not recursion, but they deepen the tree all the same, so `peak` tracks the depth the
//! tree under construction reaches and each link of a chain counts one more level. Every level of
//! nesting costs a handful of small stack frames (at most about 4 KiB in a debug build), so the
//! limit also bounds the parser's stack.
//!
//! Invariant: every loop either consumes a token or ends, so parsing is linear in the input.

mod annotations;
mod exprs;
mod items;
mod patterns;
mod release;
mod types;

use std::mem;

use crate::ast::{
    Arm, BinOp, Block, ClosureParam, Expr, ExprKind, Field, FnDecl, Ident, Item, ItemKind, Module, NodeId, Param,
    Pattern, PatternKind, Stmt, Tool, TypeExpr, TypeExprKind, UnOp, Variant,
};
use crate::diagnostic::{Code, Diagnostic};
use crate::lexer::{LexError, Lexed, Token, TokenKind, lex};
use crate::span::{FileId, Span};

/// Deepest nesting of expressions, blocks, patterns and types the parser accepts; deeper input
/// gets a `nesting-too-deep` error instead of exhausting the stack of any later stage.
pub const MAX_NESTING: usize = 128;

/// The most diagnostics one file reports (lexer and parser together); the first ones in source
/// order are kept.
pub const MAX_DIAGNOSTICS: usize = 50;

/// A syntax tree and every error found while building it.
#[derive(Debug)]
pub struct Parsed {
    pub module: Module,
    /// Sorted by position; at most [`MAX_DIAGNOSTICS`].
    pub diagnostics: Vec<Diagnostic>,
}

pub fn parse(file: FileId, text: &str) -> Parsed {
    let lexed = lex(file, text);
    let mut parser = Parser::new(file, text, lexed);
    let module = parser.module();
    let mut diagnostics = parser.diagnostics;
    diagnostics.sort_by_key(|d| d.span().start);
    diagnostics.truncate(MAX_DIAGNOSTICS);
    Parsed { module, diagnostics }
}

/// Binding power of `as`, above every binary operator.
const CAST_PREC: u8 = 6;
const CMP_PREC: u8 = 3;

fn binop(kind: &TokenKind) -> Option<(BinOp, u8)> {
    use TokenKind as T;
    Some(match kind {
        T::PipePipe => (BinOp::Or, 1),
        T::AmpAmp => (BinOp::And, 2),
        T::EqEq => (BinOp::Eq, CMP_PREC),
        T::BangEq => (BinOp::Ne, CMP_PREC),
        T::Lt => (BinOp::Lt, CMP_PREC),
        T::Le => (BinOp::Le, CMP_PREC),
        T::Gt => (BinOp::Gt, CMP_PREC),
        T::Ge => (BinOp::Ge, CMP_PREC),
        T::Plus => (BinOp::Add, 4),
        T::Minus => (BinOp::Sub, 4),
        T::Star => (BinOp::Mul, 5),
        T::Slash => (BinOp::Div, 5),
        T::Percent => (BinOp::Rem, 5),
        _ => return None,
    })
}

fn can_start_expr(kind: &TokenKind) -> bool {
    use TokenKind as T;
    matches!(
        kind,
        T::Ident
            | T::Int(_)
            | T::Float(_)
            | T::Decimal(_)
            | T::Str(_)
            | T::True
            | T::False
            | T::LParen
            | T::LBracket
            | T::LBrace
            | T::Minus
            | T::Bang
            | T::Pipe
            | T::PipePipe
            | T::If
            | T::Match
            | T::For
            | T::Agent
    )
}

fn is_item_start(first: &TokenKind, second: &TokenKind) -> bool {
    use TokenKind as T;
    match first {
        T::Type | T::Enum | T::Linear | T::Opaque | T::Measure | T::Capability | T::Const => true,
        T::Entry | T::Tool => true,
        // `fn(A) -> B` is a type; `fn name` a declaration.
        T::Fn => *second == T::Ident,
        _ => false,
    }
}

/// Expressions that end with a block and need no `;` as statements.
fn is_block_like(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::If { .. } | ExprKind::Match { .. } | ExprKind::For { .. } | ExprKind::Block(_))
}

/// (Out of line: a `Stmt` is large, and the callers are on recursive paths.)
fn push_expr_stmt(stmts: &mut Vec<Stmt>, e: Expr) {
    stmts.push(Stmt::Expr(e));
}

fn syntax(span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error(Code::SyntaxError, span, message)
}

/// Where a statement sequence is: a block ends at `}`, the file at its end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seq {
    Top,
    Block,
}

struct Parser<'a> {
    file: FileId,
    text: &'a str,
    tokens: Vec<Token>,
    docs: Vec<(usize, String)>,
    /// Reported when the parser reaches their token (see [`Parser::lex_errors_up_to`]).
    lex_errors: Vec<LexError>,
    next_lex_error: usize,
    /// Returned when reading past the end (the last token is an `Eof` too).
    eof: Token,
    pos: usize,
    prev_span: Span,
    line_starts: Vec<u32>,
    next_id: u32,
    depth: usize,
    peak: usize,
    /// In an `if` condition, `match` scrutinee or `for` iterator, where `Name {` starts a block.
    no_record: bool,
    /// Parsing the type after `as`, where `<` is a comparison, never a misspelt `[`.
    in_cast: bool,
    /// The current statement has had an error; further ones are follow-ons and not reported.
    stmt_error: bool,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> Parser<'a> {
    fn new(file: FileId, text: &'a str, lexed: Lexed) -> Self {
        let end = u32::try_from(text.len()).unwrap_or(u32::MAX);
        let eof = Token { kind: TokenKind::Eof, span: Span::new(file, end, end) };
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
            }
        }
        Parser {
            file,
            text,
            tokens: lexed.tokens,
            docs: lexed.docs,
            lex_errors: lexed.errors,
            next_lex_error: 0,
            eof,
            pos: 0,
            prev_span: Span::new(file, 0, 0),
            line_starts,
            next_id: 0,
            depth: 0,
            peak: 0,
            no_record: false,
            in_cast: false,
            stmt_error: false,
            diagnostics: Vec::new(),
        }
    }

    // ---- Tokens -------------------------------------------------------------------------------

    fn tok(&self) -> &Token {
        self.tokens.get(self.pos).unwrap_or(&self.eof)
    }

    fn peek(&self) -> &TokenKind {
        &self.tok().kind
    }

    fn nth(&self, n: usize) -> &TokenKind {
        self.tokens.get(self.pos.saturating_add(n)).map_or(&self.eof.kind, |t| &t.kind)
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.peek() == kind
    }

    /// Whether the current token is the identifier `word`.
    fn at_word(&self, word: &str) -> bool {
        self.at(&TokenKind::Ident) && self.text_of(self.tok().span) == word
    }

    fn at_item_start(&self) -> bool {
        is_item_start(self.peek(), self.nth(1)) || self.at_release()
    }

    /// Consumes the current token (never the final `Eof`) and returns its span.
    fn bump(&mut self) -> Span {
        self.lex_errors_up_to(self.pos);
        let tok = self.tok();
        let span = tok.span;
        if tok.kind != TokenKind::Eof {
            self.pos += 1;
            self.prev_span = span;
        }
        span
    }

    /// Reports the lexer's errors for the tokens up to `index`, as errors of the statement
    /// being parsed.
    fn lex_errors_up_to(&mut self, index: usize) {
        while let Some(e) = self.lex_errors.get(self.next_lex_error) {
            if e.token > index {
                return;
            }
            let d = (!self.stmt_error && self.diagnostics.len() < MAX_DIAGNOSTICS).then(|| e.diagnostic());
            self.next_lex_error += 1;
            self.stmt_error = true;
            self.diagnostics.extend(d);
        }
    }

    /// At an `Error` token, whose problem the lexer found: that is the error to report.
    fn at_lex_error(&mut self) -> bool {
        let at = self.at(&TokenKind::Error);
        if at {
            self.lex_errors_up_to(self.pos);
            self.stmt_error = true;
        }
        at
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = self.at(kind);
        if found {
            self.bump();
        }
        found
    }

    fn text_of(&self, span: Span) -> &'a str {
        self.text.get(span.start as usize..span.end as usize).unwrap_or("")
    }

    /// From `start` to the end of the last consumed token.
    /// (Empty, after the last consumed token, if nothing was consumed since `start`.)
    fn span_from(&self, start: u32) -> Span {
        let end = self.prev_span.end;
        Span::new(self.file, start.min(end), end)
    }

    /// An empty span after the last consumed token, for nodes that have no text.
    fn here(&self) -> Span {
        Span::new(self.file, self.prev_span.end, self.prev_span.end)
    }

    fn line_of(&self, offset: u32) -> usize {
        self.line_starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }

    fn byte_col(&self, offset: u32) -> u32 {
        let start = self.line_starts.get(self.line_of(offset)).copied().unwrap_or(0);
        offset.saturating_sub(start)
    }

    /// 1-based line and column (in characters), for messages.
    fn line_col(&self, offset: u32) -> (usize, usize) {
        let line = self.line_of(offset);
        let start = self.line_starts.get(line).copied().unwrap_or(0) as usize;
        let end = (offset as usize).min(self.text.len());
        let col = self.text.get(start..end).map_or(end.saturating_sub(start), |s| s.chars().count());
        (line + 1, col + 1)
    }

    /// Whether the current token is on a later line than the previous one.
    fn on_new_line(&self) -> bool {
        self.line_of(self.tok().span.start) > self.line_of(self.prev_span.end)
    }

    /// Whether the current token is the first character of its line (not indented).
    /// Whether a line ends between the previous token and this one.
    fn after_newline(&self) -> bool {
        let (end, start) = (self.prev_span.end as usize, self.tok().span.start as usize);
        self.text.get(end..start).is_some_and(|gap| gap.contains('\n'))
    }

    fn at_line_start(&self) -> bool {
        self.line_starts.binary_search(&self.tok().span.start).is_ok()
    }

    fn doc_at(&self, index: usize) -> Option<String> {
        let i = self.docs.binary_search_by_key(&index, |(i, _)| *i).ok()?;
        self.docs.get(i).map(|(_, doc)| doc.clone())
    }

    fn doc_here(&self) -> Option<String> {
        self.doc_at(self.pos)
    }

    // ---- Nodes --------------------------------------------------------------------------------

    fn mk(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = NodeId(self.next_id);
        self.next_id = self.next_id.saturating_add(1);
        Expr { id, kind, span }
    }

    /// An `Error` expression over everything consumed since `start`.
    fn error_expr(&mut self, start: u32) -> Expr {
        let span = self.span_from(start);
        self.mk(ExprKind::Error, span)
    }

    fn error_type(&self, start: u32) -> TypeExpr {
        TypeExpr { kind: TypeExprKind::Error, span: self.span_from(start) }
    }

    fn ident_token(&mut self) -> Ident {
        let span = self.bump();
        Ident { name: self.text_of(span).to_string(), span }
    }

    /// A name, or (after reporting) an empty one.
    fn ident(&mut self, what: &str) -> Ident {
        if self.at(&TokenKind::Ident) {
            return self.ident_token();
        }
        self.error_expected(what);
        Ident { name: String::new(), span: self.here() }
    }

    /// A name or `_`.
    fn binder(&mut self, what: &str) -> Ident {
        if self.at(&TokenKind::Underscore) {
            let span = self.bump();
            return Ident { name: "_".to_string(), span };
        }
        self.ident(what)
    }

    // ---- Errors -------------------------------------------------------------------------------

    /// Marks the statement as erroneous; true if this is its first error and under the cap.
    fn begin_error(&mut self) -> bool {
        let report = !self.stmt_error && self.diagnostics.len() < MAX_DIAGNOSTICS;
        self.stmt_error = true;
        report
    }

    /// Reports the diagnostic `make` builds, unless it is a follow-on error (then `make` is not
    /// even called, so a suppressed error costs nothing).
    fn report(&mut self, make: impl FnOnce(&Self) -> Diagnostic) {
        if self.begin_error() {
            let d = make(self);
            self.diagnostics.push(d);
        }
    }

    /// How a token is named in messages.
    fn describe(&self, tok: &Token) -> String {
        if tok.kind == TokenKind::Eof {
            return "end of file".to_string();
        }
        let text = tok.kind.fixed_text().unwrap_or_else(|| self.text_of(tok.span));
        let mut shown: String = text.chars().take(24).collect();
        if text.chars().nth(24).is_some() {
            shown.push('…');
        }
        format!("`{shown}`")
    }

    /// `expected {what}, found ..` at the current token. The lexer already reported an `Error`
    /// token, so that one is passed over in silence.
    fn error_expected(&mut self, what: &str) {
        self.error_expected_help(what, None);
    }

    fn error_expected_help(&mut self, what: &str, help: Option<&str>) {
        if self.at_lex_error() {
            return;
        }
        self.report(|p| {
            let tok = p.tok();
            let d = syntax(tok.span, format!("expected {what}, found {}", p.describe(tok)))
                .with_primary_label(format!("expected {what}"));
            match help {
                Some(help) => d.with_help(help),
                None => d,
            }
        });
    }

    /// The bracket opened at `open` is not closed by the current token. `after_element` says a
    /// list element was just parsed, so a missing `,` is as likely as a missing bracket.
    fn error_unclosed(&mut self, close: &TokenKind, open: Span, after_element: bool) {
        if self.at_lex_error() {
            return;
        }
        self.report(|p| {
            let tok = p.tok();
            let close = close.fixed_text().unwrap_or("?");
            let opener = p.text_of(open);
            let found = p.describe(tok);
            let likely_unclosed = !after_element
                || p.at_item_start()
                || matches!(
                    tok.kind,
                    TokenKind::Semi
                        | TokenKind::RBrace
                        | TokenKind::RParen
                        | TokenKind::RBracket
                        | TokenKind::Eof
                        | TokenKind::Let
                );
            let (message, label) = if likely_unclosed {
                let (line, col) = p.line_col(open.start);
                (
                    format!("expected `{close}` to close `{opener}` at {line}:{col}, found {found}"),
                    format!("expected `{close}`"),
                )
            } else {
                (format!("expected `,` or `{close}`, found {found}"), format!("expected `,` or `{close}`"))
            };
            syntax(tok.span, message).with_primary_label(label).with_label(open, format!("`{opener}` opened here"))
        });
    }

    /// After the statement that ends with the token at `last`, something other than `;`.
    fn error_missing_semi(&mut self, last: Span) {
        self.error_missing_separator(last, "`;`", "`;`");
    }

    /// `expected {what}, found ..`, marked after the token at `last` (a forgotten separator
    /// belongs to the line before the next thing).
    fn error_missing_separator(&mut self, last: Span, what: &str, separator: &str) {
        if self.at_lex_error() {
            return;
        }
        self.report(|p| {
            let tok = p.tok();
            syntax(last, format!("expected {what}, found {}", p.describe(tok)))
                .with_primary_label(format!("expected {separator} after this"))
                .with_label(tok.span, "unexpected here")
        });
    }

    fn prev_is(&self, kind: &TokenKind) -> bool {
        self.pos.checked_sub(1).and_then(|i| self.tokens.get(i)).is_some_and(|t| t.kind == *kind)
    }

    /// Expects the `close` of the bracket at `open`; otherwise reports and skips to it.
    fn close(&mut self, close: TokenKind, open: Span) {
        if !self.eat(&close) {
            self.error_unclosed(&close, open, true);
            self.skip_to_close(&close);
        }
    }

    // ---- Skipping -----------------------------------------------------------------------------

    /// After a failed list element: skips to the list's `close` and consumes it. Stops before a
    /// `;`, a `let`, a declaration, or a bracket closing something outside the list.
    fn skip_to_close(&mut self, close: &TokenKind) {
        use TokenKind as T;
        let mut depth = 0usize;
        loop {
            match self.peek() {
                T::Eof => return,
                T::LParen | T::LBracket | T::LBrace => depth += 1,
                T::RParen | T::RBracket | T::RBrace if depth == 0 => {
                    self.eat(close);
                    return;
                }
                T::RParen | T::RBracket | T::RBrace => depth -= 1,
                T::Semi | T::Let if depth == 0 => return,
                _ if depth == 0 && self.at_item_start() => return,
                _ => {}
            }
            self.bump();
        }
    }

    /// After a too-deep construct: skips the rest of it, up to a `,`, `;`, `|`, `=>`, `let`,
    /// declaration or closing bracket outside the brackets it opened.
    fn skip_nested(&mut self) {
        use TokenKind as T;
        let mut depth = 0usize;
        loop {
            match self.peek() {
                T::Eof => return,
                T::LParen | T::LBracket | T::LBrace => depth += 1,
                T::RParen | T::RBracket | T::RBrace if depth == 0 => return,
                T::RParen | T::RBracket | T::RBrace => depth -= 1,
                T::Comma | T::Semi | T::Pipe | T::FatArrow | T::Let if depth == 0 => return,
                _ if depth == 0 && self.at_item_start() => return,
                _ => {}
            }
            self.bump();
        }
    }

    /// After a failed statement: skips to its `;` (consumed), the `}` of the block, or a `let` or
    /// declaration that starts the next statement.
    fn sync_stmt(&mut self, seq: Seq) {
        use TokenKind as T;
        let mut depth = 0usize;
        loop {
            match self.peek() {
                T::Eof => return,
                T::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                T::RBrace if depth == 0 && seq == Seq::Block => return,
                T::Let if depth == 0 => return,
                _ if depth == 0 && self.at_item_start() && (seq == Seq::Top || self.at_line_start()) => {
                    return;
                }
                T::LParen | T::LBracket | T::LBrace => depth += 1,
                T::RParen | T::RBracket | T::RBrace => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.bump();
        }
    }

    /// Whether parsing can resume at the current token after an error: a `let`, a declaration,
    /// or an expression at the start of a new line.
    fn at_fresh_stmt(&self) -> bool {
        match self.peek() {
            TokenKind::Let | TokenKind::Eof => true,
            _ if self.at_item_start() => true,
            kind => can_start_expr(kind) && self.on_new_line(),
        }
    }

    // ---- Nesting ------------------------------------------------------------------------------

    /// Enters one level of nesting; beyond the limit, reports, skips the construct and returns
    /// false (the caller then returns an `Error` node and must not call [`Parser::exit`]).
    fn enter(&mut self) -> bool {
        if self.depth >= MAX_NESTING {
            self.too_deep();
            return false;
        }
        self.depth += 1;
        self.peak = self.peak.max(self.depth);
        true
    }

    fn exit(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// A chain (`a + b`, `x.f`, `f(a)`, `e as T`) is about to wrap everything parsed so far in
    /// one more node; false (after reporting and skipping) if that is too deep.
    fn deepen_chain(&mut self) -> bool {
        self.peak += 1;
        if self.peak > MAX_NESTING {
            self.too_deep();
            return false;
        }
        true
    }

    fn too_deep(&mut self) {
        self.report(|p| {
            Diagnostic::error(Code::NestingTooDeep, p.tok().span, format!("nesting deeper than {MAX_NESTING} levels"))
                .with_primary_label("too deep")
                .with_help("split it up with `let` bindings or helper functions")
        });
        self.skip_nested();
    }

    // ---- Module and statements ----------------------------------------------------------------

    fn module(&mut self) -> Module {
        let mut items = Vec::new();
        let mut stmts = Vec::new();
        // An expression without `;`: the plan's result if only declarations follow it.
        // (With the span of its last token, and whether its statement had an error.)
        let mut open: Option<(Expr, Span, bool)> = None;
        loop {
            self.stmt_error = false;
            self.peak = self.depth;
            let before = self.pos;
            match self.peek() {
                TokenKind::Eof => break,
                TokenKind::Semi => {
                    self.bump();
                }
                TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket => self.stray_closers(),
                _ if self.at_word("pub") && is_item_start(self.nth(1), self.nth(2)) => {
                    self.no_pub();
                }
                _ if self.at_item_start() => {
                    items.extend(self.item());
                    if !self.eat(&TokenKind::Semi) && self.stmt_error && !self.at_fresh_stmt() {
                        self.sync_stmt(Seq::Top);
                    }
                }
                _ => {
                    if let Some((e, last, had_error)) = open.take() {
                        if !is_block_like(&e) && !had_error {
                            self.error_missing_semi(last);
                        }
                        stmts.push(Stmt::Expr(e));
                        self.stmt_error = false;
                    }
                    if let Some(e) = self.stmt(Seq::Top, &mut stmts) {
                        open = Some((e, self.prev_span, self.stmt_error));
                    }
                }
            }
            if self.pos == before {
                self.bump();
            }
        }
        // An unterminated comment at the end belongs to the `Eof` token.
        self.stmt_error = false;
        self.lex_errors_up_to(usize::MAX);
        let end = u32::try_from(self.text.len()).unwrap_or(u32::MAX);
        // As in `block`: the tree is kept, its vectors need no room to grow.
        items.shrink_to_fit();
        stmts.shrink_to_fit();
        let body = Block { stmts, tail: open.map(|(e, ..)| Box::new(e)), span: Span::new(self.file, 0, end) };
        Module { file: self.file, items, body }
    }

    /// Closing brackets at the top level, with nothing to close: one error for the run.
    fn stray_closers(&mut self) {
        self.report(|p| {
            let tok = p.tok();
            syntax(tok.span, format!("unexpected {}", p.describe(tok))).with_primary_label("nothing to close here")
        });
        while matches!(self.peek(), TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket) {
            self.bump();
        }
    }

    fn no_pub(&mut self) {
        let span = self.tok().span;
        self.report(|_| {
            syntax(span, "there is no `pub`")
                .with_primary_label("not a keyword")
                .with_help("remove it: every declaration is visible in the whole program")
        });
        self.bump();
    }

    /// At `{`: the statements up to the matching `}`.
    fn block(&mut self) -> Block {
        let open = self.tok().span;
        if !self.enter() {
            return Block { stmts: Vec::new(), tail: None, span: self.span_from(open.start) };
        }
        self.bump();
        let outer_error = self.stmt_error;
        let outer_peak = self.peak;
        let no_record = mem::replace(&mut self.no_record, false);
        let mut block_peak = self.depth;
        let mut stmts = Vec::new();
        let mut tail: Option<Box<Expr>> = None;
        loop {
            match self.peek() {
                TokenKind::RBrace => {
                    self.bump();
                    break;
                }
                TokenKind::Eof => {
                    self.error_unclosed(&TokenKind::RBrace, open, false);
                    break;
                }
                TokenKind::Semi => {
                    self.bump();
                    continue;
                }
                // A declaration at the start of a line: this block was most likely never closed.
                _ if self.at_item_start() && self.at_line_start() => {
                    self.error_unclosed(&TokenKind::RBrace, open, false);
                    break;
                }
                _ => {}
            }
            self.stmt_error = false;
            self.peak = self.depth;
            let before = self.pos;
            self.block_stmt(&mut stmts, &mut tail);
            block_peak = block_peak.max(self.peak);
            if self.pos == before {
                self.bump();
            }
        }
        self.no_record = no_record;
        self.stmt_error |= outer_error;
        self.peak = outer_peak.max(block_peak);
        self.exit();
        // A checker keeps the tree while it checks: its vectors need no room to grow.
        stmts.shrink_to_fit();
        Block { stmts, tail, span: self.span_from(open.start) }
    }

    fn block_stmt(&mut self, stmts: &mut Vec<Stmt>, tail: &mut Option<Box<Expr>>) {
        if let Some(t) = tail.take() {
            push_expr_stmt(stmts, *t);
        }
        if self.at_item_start() {
            self.item_in_block();
        } else if self.at_word("pub") && is_item_start(self.nth(1), self.nth(2)) {
            self.no_pub();
        } else {
            *tail = self.stmt(Seq::Block, stmts).map(Box::new);
        }
    }

    /// A declaration inside a block: reported, parsed (to skip it exactly), dropped.
    fn item_in_block(&mut self) {
        let span = self.tok().span;
        let is_fn = self.at(&TokenKind::Fn);
        self.report(|p| {
            let keyword = p.text_of(span);
            let d = syntax(span, format!("`{keyword}` declarations are only allowed at the top level"))
                .with_primary_label("inside a block");
            if is_fn {
                d.with_help("use a closure: `let f = |x: Int| x + 1;`")
            } else {
                d.with_help("move it to the top level of the file")
            }
        });
        let _dropped = self.item();
        self.eat(&TokenKind::Semi);
    }

    /// One statement, pushed to `stmts`; or, for an expression without `;` that ends the
    /// sequence, that expression (the value of the block).
    fn stmt(&mut self, seq: Seq, stmts: &mut Vec<Stmt>) -> Option<Expr> {
        if self.at(&TokenKind::Let) {
            self.let_stmt(seq, stmts);
            return None;
        }
        if let Some(help) = self.rust_declaration() {
            self.not_a_declaration(seq, stmts, help);
            return None;
        }
        if matches!(self.peek(), TokenKind::If | TokenKind::Match | TokenKind::For | TokenKind::LBrace) {
            return self.block_like_stmt(seq, stmts);
        }
        let e = self.expr();
        self.expr_stmt_end(seq, stmts, e)
    }

    /// As in Rust, a statement that starts with a block-like expression ends with it, unless a
    /// method call or field access follows.
    fn block_like_stmt(&mut self, seq: Seq, stmts: &mut Vec<Stmt>) -> Option<Expr> {
        let e = self.block_like();
        if self.at(&TokenKind::Dot) {
            return self.continued_stmt(seq, stmts, e);
        }
        if self.eat(&TokenKind::Semi) {
            push_expr_stmt(stmts, e);
            return None;
        }
        if self.at_seq_end(seq) {
            return Some(e);
        }
        // It failed before its final `}`: skip the rest of it.
        if self.stmt_error && !self.prev_is(&TokenKind::RBrace) && !self.at_fresh_stmt() {
            self.sync_stmt(seq);
        }
        push_expr_stmt(stmts, e);
        None
    }

    /// `match x { .. }.len() + 1;`
    fn continued_stmt(&mut self, seq: Seq, stmts: &mut Vec<Stmt>, e: Expr) -> Option<Expr> {
        let e = self.postfix_rest(e, self.peak);
        let e = self.binary_rest(0, e, self.peak);
        self.expr_stmt_end(seq, stmts, e)
    }

    /// After the expression `e` of a statement.
    fn expr_stmt_end(&mut self, seq: Seq, stmts: &mut Vec<Stmt>, e: Expr) -> Option<Expr> {
        let e = self.no_assignment(e);
        if self.eat(&TokenKind::Semi) {
            push_expr_stmt(stmts, e);
            return None;
        }
        if self.at_seq_end(seq) {
            return Some(e);
        }
        self.end_stmt(seq);
        push_expr_stmt(stmts, e);
        None
    }

    /// At a Rust declaration keyword (which Cordon lacks) followed by a name: what to say.
    fn rust_declaration(&self) -> Option<&'static str> {
        if *self.peek() != TokenKind::Ident || *self.nth(1) != TokenKind::Ident {
            return None;
        }
        match self.text_of(self.tok().span) {
            "struct" => Some("declare a record type with `type Name = { field: Type, .. }`"),
            "use" | "import" => Some("there are no imports: builtins and declarations are always in scope"),
            "impl" | "trait" => Some("there are no traits or impls: write functions; `x.f(a)` calls `f(x, a)`"),
            _ => None,
        }
    }

    fn not_a_declaration(&mut self, seq: Seq, stmts: &mut Vec<Stmt>, help: &'static str) {
        let start = self.tok().span.start;
        let span = self.tok().span;
        self.report(|p| {
            syntax(span, format!("expected an expression, found `{}`", p.text_of(span)))
                .with_primary_label("not a keyword")
                .with_help(help)
        });
        self.sync_stmt(seq);
        let e = self.error_expr(start);
        stmts.push(Stmt::Expr(e));
    }

    fn let_stmt(&mut self, seq: Seq, stmts: &mut Vec<Stmt>) {
        let start = self.bump().start;
        let pat = self.pattern();
        let ty = if self.eat(&TokenKind::Colon) { Some(self.ty()) } else { None };
        let value = if self.eat(&TokenKind::Eq) {
            self.expr()
        } else {
            self.error_expected_help("`=`", Some("a `let` always binds a value: `let x = ..;`"));
            let here = self.here();
            self.mk(ExprKind::Error, here)
        };
        self.end_stmt(seq);
        stmts.push(Stmt::Let { pat, ty: ty.map(Box::new), value: Box::new(value), span: self.span_from(start) });
    }

    /// After a statement that needs its `;`.
    fn end_stmt(&mut self, seq: Seq) {
        if self.eat(&TokenKind::Semi) {
            return;
        }
        self.error_missing_semi(self.prev_span);
        if !self.at_fresh_stmt() {
            self.sync_stmt(seq);
        }
    }

    /// Whether an expression statement without `;` ends its sequence (and is its value).
    fn at_seq_end(&self, seq: Seq) -> bool {
        match seq {
            Seq::Block => {
                matches!(self.peek(), TokenKind::RBrace | TokenKind::Eof)
                    || (self.at_item_start() && self.at_line_start())
            }
            Seq::Top => matches!(self.peek(), TokenKind::RBrace | TokenKind::Eof) || self.at_item_start(),
        }
    }

    /// `x = e` as a statement: reported; the whole is an `Error`.
    fn no_assignment(&mut self, e: Expr) -> Expr {
        if !self.at(&TokenKind::Eq) {
            return e;
        }
        let span = self.tok().span;
        self.report(|_| {
            syntax(span, "there is no assignment")
                .with_primary_label("not an operator")
                .with_help("there is no mutation; bind a new name with `let`")
        });
        self.bump();
        let _value = self.expr();
        self.error_expr(e.span.start)
    }

    fn block_like(&mut self) -> Expr {
        match self.peek() {
            TokenKind::If => self.if_expr(),
            TokenKind::Match => self.match_expr(),
            TokenKind::For => self.for_expr(),
            _ => self.block_expr(),
        }
    }
}
