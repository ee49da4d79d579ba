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
mod release;

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

    // ---- Expressions --------------------------------------------------------------------------

    fn expr(&mut self) -> Expr {
        let start = self.tok().span.start;
        if !self.enter() {
            return self.error_expr(start);
        }
        let e = self.binary(0);
        self.exit();
        e
    }

    /// An expression where `Name {` starts a block, not a record.
    fn cond(&mut self) -> Expr {
        if self.at(&TokenKind::LBrace) {
            self.error_expected("a condition");
            return self.error_expr(self.prev_span.end);
        }
        let no_record = mem::replace(&mut self.no_record, true);
        let e = self.expr();
        self.no_record = no_record;
        e
    }

    fn binary(&mut self, min_prec: u8) -> Expr {
        let saved_peak = mem::replace(&mut self.peak, self.depth);
        let lhs = self.unary();
        self.binary_rest(min_prec, lhs, saved_peak)
    }

    /// Precedence climbing: operators binding at least `min_prec`, applied to `lhs`. At the
    /// end, `peak` is at least `saved_peak` again.
    fn binary_rest(&mut self, min_prec: u8, mut lhs: Expr, saved_peak: usize) -> Expr {
        let mut after_comparison = false;
        loop {
            if self.at(&TokenKind::As) && CAST_PREC >= min_prec {
                if !self.deepen_chain() {
                    lhs = self.error_expr(lhs.span.start);
                    break;
                }
                lhs = self.cast(lhs);
                continue;
            }
            let Some((op, prec)) = binop(self.peek()) else { break };
            if prec < min_prec {
                break;
            }
            if prec == CMP_PREC && after_comparison {
                let span = self.tok().span;
                self.report(|_| {
                    syntax(span, "comparison operators cannot be chained")
                        .with_primary_label("second comparison")
                        .with_help("join two comparisons with `&&`: `a < b && b < c`")
                });
            }
            after_comparison = prec == CMP_PREC;
            if !self.deepen_chain() {
                lhs = self.error_expr(lhs.span.start);
                break;
            }
            lhs = self.binary_link(lhs, op, prec);
        }
        self.peak = self.peak.max(saved_peak);
        lhs
    }

    /// At `as` after `lhs`.
    fn cast(&mut self, lhs: Expr) -> Expr {
        self.bump();
        let in_cast = mem::replace(&mut self.in_cast, true);
        let ty = self.ty();
        self.in_cast = in_cast;
        let span = lhs.span.to(ty.span);
        self.mk(ExprKind::Cast { expr: Box::new(lhs), ty }, span)
    }

    /// At the operator `op` after `lhs`: `lhs op rhs`.
    fn binary_link(&mut self, lhs: Expr, op: BinOp, prec: u8) -> Expr {
        let op_span = self.bump();
        if self.at(&TokenKind::Eq) && self.tok().span.start == op_span.end {
            let span = op_span.to(self.tok().span);
            self.report(|p| {
                syntax(span, format!("there is no `{}` operator", p.text_of(span)))
                    .with_primary_label("not an operator")
                    .with_help("there is no mutation; bind a new name with `let`")
            });
            self.bump();
        }
        let rhs = if self.enter() {
            let rhs = self.binary(prec + 1);
            self.exit();
            rhs
        } else {
            self.error_expr(op_span.start)
        };
        let span = lhs.span.to(rhs.span);
        self.mk(ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span)
    }

    // The functions on the recursive paths are kept small, with few `Expr` locals: in a debug
    // build every local has its own stack slot, and the stack per level of nesting is the sum of
    // the frames on the path.

    fn unary(&mut self) -> Expr {
        match self.peek() {
            TokenKind::Minus => self.prefix(UnOp::Neg),
            TokenKind::Bang => self.prefix(UnOp::Not),
            _ => self.postfix_expr(),
        }
    }

    fn postfix_expr(&mut self) -> Expr {
        let saved_peak = mem::replace(&mut self.peak, self.depth);
        let e = self.primary();
        self.postfix_rest(e, saved_peak)
    }

    fn prefix(&mut self, op: UnOp) -> Expr {
        let start = self.tok().span.start;
        if !self.enter() {
            return self.error_expr(start);
        }
        self.bump();
        let operand = self.unary();
        self.exit();
        let span = self.span_from(start);
        self.mk(ExprKind::Unary { op, operand: Box::new(operand) }, span)
    }

    /// Field accesses, method calls, calls and indexing after `e`. At the end, `peak` is at
    /// least `saved_peak` again.
    fn postfix_rest(&mut self, mut e: Expr, saved_peak: usize) -> Expr {
        loop {
            let kind = self.peek();
            if !matches!(kind, TokenKind::Dot | TokenKind::LParen | TokenKind::LBracket) {
                break;
            }
            // A `(` or `[` that starts a line starts something new (a tuple, a list), as in
            // many languages: a statement before it that lacks its `;` is reported on its own
            // line, not read as a call or an index across lines.
            if matches!(kind, TokenKind::LParen | TokenKind::LBracket) && self.after_newline() {
                break;
            }
            if !self.deepen_chain() {
                e = self.error_expr(e.span.start);
                break;
            }
            e = match self.peek() {
                TokenKind::Dot if *self.nth(1) == TokenKind::Dot => self.no_range(e),
                TokenKind::Dot => self.after_dot(e),
                TokenKind::LParen => self.call(e),
                _ => self.index(e),
            };
        }
        self.peak = self.peak.max(saved_peak);
        e
    }

    /// At `..` after `e`: reported; `a..b` is an `Error`.
    fn no_range(&mut self, e: Expr) -> Expr {
        let span = self.tok().span;
        self.report(|_| {
            syntax(span, "there is no `..` range")
                .with_primary_label("not an operator")
                .with_help("iterate over `range(a, b)`, which counts from `a` up to `b - 1`")
        });
        self.bump();
        self.bump();
        if can_start_expr(self.peek()) {
            let _end = self.postfix_expr();
        }
        self.error_expr(e.span.start)
    }

    /// At `(` after `callee`.
    fn call(&mut self, callee: Expr) -> Expr {
        let open = self.bump();
        let args = self.comma_list(open, TokenKind::RParen, Self::expr);
        let span = self.span_from(callee.span.start);
        self.mk(ExprKind::Call { callee: Box::new(callee), args }, span)
    }

    /// At `[` after `base`.
    fn index(&mut self, base: Expr) -> Expr {
        let open = self.bump();
        let no_record = mem::replace(&mut self.no_record, false);
        let index = self.expr();
        self.no_record = no_record;
        self.close(TokenKind::RBracket, open);
        let span = self.span_from(base.span.start);
        self.mk(ExprKind::Index { base: Box::new(base), index: Box::new(index) }, span)
    }

    /// At `.` after `base`.
    fn after_dot(&mut self, base: Expr) -> Expr {
        self.bump();
        let start = base.span.start;
        match self.peek() {
            TokenKind::Ident => {
                let name = self.ident_token();
                if self.at(&TokenKind::LParen) {
                    self.method_call(base, name)
                } else {
                    let span = self.span_from(start);
                    self.mk(ExprKind::Field { base: Box::new(base), name }, span)
                }
            }
            TokenKind::Int(_) => {
                let index_span = self.bump();
                let index = self.tuple_index(index_span);
                let span = self.span_from(start);
                self.mk(ExprKind::TupleField { base: Box::new(base), index, index_span }, span)
            }
            // `p.0.1`: the lexer read `0.1` as a float.
            TokenKind::Float(_) => self.float_fields(base),
            _ => {
                self.error_expected_help(
                    "a field name, method or tuple index after `.`",
                    Some("write `x.field`, `x.method(..)` or `x.0`"),
                );
                self.error_expr(start)
            }
        }
    }

    /// At a float after `base.`: `p.0.1` is two tuple fields.
    fn float_fields(&mut self, base: Expr) -> Expr {
        let start = base.span.start;
        let float_span = self.bump();
        let text = self.text_of(float_span);
        let Some((first, _)) =
            text.split_once('.').filter(|(a, b)| a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit()))
        else {
            self.report(|_| {
                syntax(float_span, "expected a tuple index")
                    .with_primary_label("not a tuple index")
                    .with_help("tuple fields are numbered: `p.0`, `p.1`")
            });
            return self.error_expr(start);
        };
        let split = float_span.start.saturating_add(u32::try_from(first.len()).unwrap_or(u32::MAX));
        let first_span = Span::new(self.file, float_span.start, split);
        let second_span = Span::new(self.file, split.saturating_add(1), float_span.end);
        let first_index = self.tuple_index(first_span);
        let second_index = self.tuple_index(second_span);
        let inner_span = Span::new(self.file, start, split);
        let inner = self
            .mk(ExprKind::TupleField { base: Box::new(base), index: first_index, index_span: first_span }, inner_span);
        if !self.deepen_chain() {
            return self.error_expr(start);
        }
        let span = self.span_from(start);
        self.mk(ExprKind::TupleField { base: Box::new(inner), index: second_index, index_span: second_span }, span)
    }

    /// At `(` after `receiver.method`.
    fn method_call(&mut self, receiver: Expr, method: Ident) -> Expr {
        let open = self.bump();
        let args = self.comma_list(open, TokenKind::RParen, Self::expr);
        let span = self.span_from(receiver.span.start);
        self.mk(ExprKind::MethodCall { receiver: Box::new(receiver), method, args }, span)
    }

    fn tuple_index(&mut self, span: Span) -> u32 {
        match self.text_of(span).parse::<u32>() {
            Ok(index) => index,
            Err(_) => {
                self.report(|_| syntax(span, "tuple index too large").with_primary_label("not a tuple field"));
                0
            }
        }
    }

    fn primary(&mut self) -> Expr {
        use TokenKind as T;
        match self.peek() {
            T::Int(_) | T::Float(_) | T::Decimal(_) | T::Str(_) | T::True | T::False | T::Error => self.literal(),
            T::Ident => self.name_expr(),
            T::LParen => self.paren_expr(),
            T::LBracket => self.list_expr(),
            T::LBrace => self.block_expr(),
            T::If => self.if_expr(),
            T::Match => self.match_expr(),
            T::For => self.for_expr(),
            T::Agent => self.hole(),
            T::FStrStart => self.fstring(),
            T::Pipe | T::PipePipe => self.closure(),
            T::Amp | T::AmpAmp => self.reference(),
            _ => {
                self.error_expected("an expression");
                self.error_expr(self.prev_span.end)
            }
        }
    }

    /// A literal, or an `Error` token (which the lexer reported).
    fn literal(&mut self) -> Expr {
        let kind = match self.peek() {
            TokenKind::Int(v) => ExprKind::Int(*v),
            TokenKind::Float(v) => ExprKind::Float(*v),
            TokenKind::Decimal(v) => ExprKind::Decimal(*v),
            TokenKind::Str(s) => ExprKind::Str(s.clone()),
            TokenKind::True => ExprKind::Bool(true),
            TokenKind::False => ExprKind::Bool(false),
            _ => ExprKind::Error,
        };
        let span = self.bump();
        self.mk(kind, span)
    }

    /// `f"text {expr} text"`, read as `["text ", expr.to_string(), " text"].join("")`: one
    /// list however many parts, so a long f-string nests no deeper than a short one.
    fn fstring(&mut self) -> Expr {
        let start = self.bump().start;
        let mut parts = Vec::new();
        loop {
            match self.peek() {
                TokenKind::Str(s) => {
                    let s = s.clone();
                    let span = self.bump();
                    if !s.is_empty() {
                        parts.push(self.mk(ExprKind::Str(s), span));
                    }
                }
                TokenKind::LBrace => {
                    let open = self.bump();
                    let no_record = mem::replace(&mut self.no_record, false);
                    let e = self.expr();
                    self.no_record = no_record;
                    if self.at(&TokenKind::Colon) {
                        let at = self.tok().span;
                        self.report(|_| {
                            syntax(at, "an f-string has no format specs")
                                .with_primary_label("not a format spec")
                                .with_help("format the value first: `{to_string(x).pad_left(5, \" \")}`")
                        });
                        self.skip_to_close(&TokenKind::RBrace);
                    } else {
                        self.close(TokenKind::RBrace, open);
                    }
                    let method = Ident { name: "to_string".into(), span: e.span };
                    let span = e.span;
                    parts.push(self.mk(ExprKind::MethodCall { receiver: Box::new(e), method, args: vec![] }, span));
                }
                TokenKind::FStrEnd => {
                    self.bump();
                    break;
                }
                _ => {
                    self.error_expected("the rest of the f-string");
                    break;
                }
            }
        }
        let span = self.span_from(start);
        match parts.len() {
            0 => self.mk(ExprKind::Str(String::new()), span),
            1 if matches!(parts[0].kind, ExprKind::Str(_)) => Expr { span, ..parts.remove(0) },
            _ => {
                let list = self.mk(ExprKind::List(parts), span);
                let sep = self.mk(ExprKind::Str(String::new()), span);
                let method = Ident { name: "join".into(), span };
                self.mk(ExprKind::MethodCall { receiver: Box::new(list), method, args: vec![sep] }, span)
            }
        }
    }

    fn list_expr(&mut self) -> Expr {
        let open = self.bump();
        let items = self.comma_list(open, TokenKind::RBracket, Self::expr);
        let span = self.span_from(open.start);
        self.mk(ExprKind::List(items), span)
    }

    /// `&e`: reported; parsed as `e`.
    fn reference(&mut self) -> Expr {
        let start = self.tok().span.start;
        let span = self.tok().span;
        self.report(|_| {
            syntax(span, "there are no references")
                .with_primary_label("not an operator")
                .with_help("pass the value itself")
        });
        if !self.enter() {
            return self.error_expr(start);
        }
        self.bump();
        let e = self.unary();
        self.exit();
        e
    }

    fn name_expr(&mut self) -> Expr {
        match self.text_of(self.tok().span) {
            "return" => {
                return self.not_a_keyword("there is no `return`: the last expression of a block is its value", true);
            }
            "while" => return self.no_loop(),
            "loop" if *self.nth(1) == TokenKind::LBrace => return self.no_loop(),
            "null" => return self.not_a_keyword("there is no `null`: use `None`, an `Option`", false),
            _ => {}
        }
        if self.at_word("to_labeled") && *self.nth(1) == TokenKind::LBrace && !self.no_record {
            return self.labeled_block();
        }
        let name = self.ident_token();
        let bang = self.tok().span;
        if self.at(&TokenKind::Bang) && bang.start == name.span.end && *self.nth(1) == TokenKind::LParen {
            self.report(|_| {
                syntax(bang, "there are no macros")
                    .with_primary_label("not a macro call")
                    .with_help("call a function: `f(x)`")
            });
            self.bump();
        }
        if self.eat(&TokenKind::ColonColon) {
            let variant = self.ident("a variant name after `::`");
            let span = self.span_from(name.span.start);
            return self.mk(ExprKind::Path { ty: name, variant }, span);
        }
        if self.at(&TokenKind::LBrace) && self.record_follows(&name) {
            return self.record(name);
        }
        let span = name.span;
        self.mk(ExprKind::Name(name), span)
    }

    /// `to_labeled { .. }`, at the word `to_labeled` followed by `{`. In a condition (where `{`
    /// starts the body) the word is an ordinary name.
    fn labeled_block(&mut self) -> Expr {
        let start = self.bump().start;
        let block = self.block();
        let span = self.span_from(start);
        self.mk(ExprKind::ToLabeled(block), span)
    }

    /// A Rust word that Cordon lacks, in expression position. With `operand`, what follows is
    /// parsed as the expression (so `return x` still gives `x`).
    fn not_a_keyword(&mut self, help: &'static str, operand: bool) -> Expr {
        let span = self.tok().span;
        self.report(|p| {
            syntax(span, format!("expected an expression, found `{}`", p.text_of(span)))
                .with_primary_label("not a keyword")
                .with_help(help)
        });
        self.bump();
        if operand && can_start_expr(self.peek()) {
            return self.expr();
        }
        self.error_expr(span.start)
    }

    /// `while c { .. }` or `loop { .. }`: reported, parsed, an `Error`.
    fn no_loop(&mut self) -> Expr {
        let start = self.tok().span.start;
        let is_while = self.at_word("while");
        self.not_a_keyword(
            "there is no `while` or `loop`: iterate with `for x in xs { .. }` or `for i in range(a, b) { .. }`",
            false,
        );
        if is_while {
            let _cond = self.cond();
        }
        if self.at(&TokenKind::LBrace) {
            let _body = self.block();
        }
        self.error_expr(start)
    }

    /// After `Name` at `{`: whether a record literal follows.
    fn record_follows(&mut self, name: &Ident) -> bool {
        let upper = name.name.starts_with(|c: char| c.is_ascii_uppercase());
        let field_colon = *self.nth(1) == TokenKind::Ident && *self.nth(2) == TokenKind::Colon;
        if self.no_record {
            // `Name { f: ..` cannot be a block (a statement never starts with `f:`).
            if upper && field_colon {
                let span = name.span;
                self.report(|_| {
                    syntax(span, "a record literal is not allowed here")
                        .with_primary_label("a `{` here starts the block")
                        .with_help("put the record in parentheses: `(Name { .. })`")
                });
                return true;
            }
            return false;
        }
        if upper {
            return true;
        }
        if field_colon {
            let span = name.span;
            self.report(|_| {
                syntax(span, "a record literal's name starts with an uppercase letter")
                    .with_primary_label("lowercase")
                    .with_help("records are named by their type, such as `Repo { name: .. }`")
            });
            return true;
        }
        false
    }

    /// At `{` after the record's name.
    fn record(&mut self, name: Ident) -> Expr {
        let open = self.bump();
        let fields = self.comma_list(open, TokenKind::RBrace, Self::record_field);
        let span = self.span_from(name.span.start);
        self.mk(ExprKind::Record { name, fields }, span)
    }

    fn record_field(&mut self) -> (Ident, Expr) {
        let name = self.ident("a field name");
        if self.eat(&TokenKind::Colon) {
            let value = self.expr();
            return (name, value);
        }
        self.shorthand_field(name)
    }

    /// `Name { f }` means `Name { f: f }`.
    fn shorthand_field(&mut self, name: Ident) -> (Ident, Expr) {
        let value = if name.name.is_empty() {
            self.error_expr(self.prev_span.end)
        } else {
            self.mk(ExprKind::Name(name.clone()), name.span)
        };
        (name, value)
    }

    /// At `(`: `()`, `(e)` (which is `e`, its span widened to the parentheses), or a tuple.
    fn paren_expr(&mut self) -> Expr {
        let open = self.bump();
        if self.eat(&TokenKind::RParen) {
            let span = self.span_from(open.start);
            return self.mk(ExprKind::Unit, span);
        }
        let no_record = mem::replace(&mut self.no_record, false);
        let first = self.expr();
        let e = self.paren_rest(open, first);
        self.no_record = no_record;
        e
    }

    /// After `(first`.
    fn paren_rest(&mut self, open: Span, first: Expr) -> Expr {
        if !self.eat(&TokenKind::Comma) {
            self.close(TokenKind::RParen, open);
            return Expr { span: self.span_from(open.start), ..first };
        }
        let mut items = vec![first];
        items.extend(self.comma_list(open, TokenKind::RParen, Self::expr));
        let span = self.span_from(open.start);
        self.mk(ExprKind::Tuple(items), span)
    }

    fn block_expr(&mut self) -> Expr {
        let block = self.block();
        let span = block.span;
        self.mk(ExprKind::Block(block), span)
    }

    /// Elements separated by `,` up to `close` (a trailing `,` is allowed), after `open`.
    fn comma_list<T>(&mut self, open: Span, close: TokenKind, mut element: impl FnMut(&mut Self) -> T) -> Vec<T> {
        use TokenKind as K;
        let no_record = mem::replace(&mut self.no_record, false);
        let mut items = Vec::new();
        loop {
            if self.eat(&close) {
                break;
            }
            let stop = matches!(self.peek(), K::Eof | K::Semi | K::Let | K::RParen | K::RBracket | K::RBrace)
                || self.at_item_start();
            if stop {
                self.error_unclosed(&close, open, false);
                break;
            }
            items.push(element(self));
            if self.eat(&close) {
                break;
            }
            if self.eat(&K::Comma) {
                continue;
            }
            self.error_unclosed(&close, open, true);
            self.skip_to_close(&close);
            break;
        }
        self.no_record = no_record;
        items
    }

    fn if_expr(&mut self) -> Expr {
        let start = self.bump().start;
        if self.at(&TokenKind::Let) {
            return self.no_if_let(start);
        }
        let cond = self.cond();
        if !self.at(&TokenKind::LBrace) {
            let help = self.at(&TokenKind::Eq).then_some("compare with `==`");
            self.error_expected_help("`{` after the condition", help);
            return self.error_expr(start);
        }
        let then = self.block();
        let else_ = if self.eat(&TokenKind::Else) { Some(self.else_branch()) } else { None };
        let span = self.span_from(start);
        self.mk(ExprKind::If { cond: Box::new(cond), then, else_ }, span)
    }

    /// `if let P = e { .. } else { .. }`: reported, parsed, an `Error`.
    fn no_if_let(&mut self, start: u32) -> Expr {
        let span = self.tok().span;
        self.report(|_| {
            syntax(span, "there is no `if let`")
                .with_primary_label("not allowed here")
                .with_help("use `match`: `match x { Some(v) => .., None => .. }`")
        });
        self.bump();
        let _pat = self.pattern();
        if self.eat(&TokenKind::Eq) {
            let _value = self.cond();
        }
        if self.at(&TokenKind::LBrace) {
            let _then = self.block();
            if self.eat(&TokenKind::Else) {
                let _else = self.else_branch();
            }
        }
        self.error_expr(start)
    }

    /// After `else`.
    fn else_branch(&mut self) -> Box<Expr> {
        let start = self.tok().span.start;
        let e = match self.peek() {
            TokenKind::If => {
                if self.enter() {
                    let e = self.if_expr();
                    self.exit();
                    e
                } else {
                    self.error_expr(start)
                }
            }
            TokenKind::LBrace => self.block_expr(),
            _ => {
                self.error_expected("`{` or `if` after `else`");
                self.error_expr(start)
            }
        };
        Box::new(e)
    }

    fn match_expr(&mut self) -> Expr {
        let start = self.bump().start;
        let scrutinee = self.cond();
        if !self.at(&TokenKind::LBrace) {
            self.error_expected("`{` after the `match` scrutinee");
            return self.error_expr(start);
        }
        let arms = self.arms();
        let span = self.span_from(start);
        self.mk(ExprKind::Match { scrutinee: Box::new(scrutinee), arms }, span)
    }

    /// At the `{` of a `match`.
    fn arms(&mut self) -> Vec<Arm> {
        let open = self.bump();
        let no_record = mem::replace(&mut self.no_record, false);
        let mut arms = Vec::new();
        loop {
            match self.peek() {
                TokenKind::RBrace => {
                    self.bump();
                    break;
                }
                TokenKind::Eof | TokenKind::Let => {
                    self.error_unclosed(&TokenKind::RBrace, open, false);
                    break;
                }
                _ if self.at_item_start() => {
                    self.error_unclosed(&TokenKind::RBrace, open, false);
                    break;
                }
                _ => {}
            }
            let before = self.pos;
            arms.push(self.arm());
            let needs_comma = arms.last().is_some_and(|arm| !is_block_like(&arm.body));
            if !self.eat(&TokenKind::Comma) && !self.at(&TokenKind::RBrace) && needs_comma {
                let last = self.prev_span;
                self.error_missing_separator(last, "`,` or `}` after the match arm", "`,`");
                if !self.eat(&TokenKind::Semi) && !self.on_new_line() {
                    self.skip_arm();
                }
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.no_record = no_record;
        arms
    }

    /// Skips to the next arm: past a `,`, or up to the `}` of the `match`.
    fn skip_arm(&mut self) {
        use TokenKind as T;
        let mut depth = 0usize;
        loop {
            match self.peek() {
                T::Eof => return,
                T::Comma if depth == 0 => {
                    self.bump();
                    return;
                }
                T::RBrace if depth == 0 => return,
                T::LParen | T::LBracket | T::LBrace => depth += 1,
                T::RParen | T::RBracket | T::RBrace => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.bump();
        }
    }

    fn arm(&mut self) -> Arm {
        let pat = self.arm_pattern();
        let guard = if self.eat(&TokenKind::If) { Some(self.expr()) } else { None };
        let body = self.arm_body(pat.span.start);
        let span = pat.span.to(body.span);
        Arm { pat, guard, body, span }
    }

    fn arm_pattern(&mut self) -> Pattern {
        let pat = self.pattern();
        if self.at(&TokenKind::Pipe) {
            let span = self.tok().span;
            self.report(|_| {
                syntax(span, "there are no or-patterns")
                    .with_primary_label("not allowed in a pattern")
                    .with_help("write one arm per pattern")
            });
            while self.eat(&TokenKind::Pipe) {
                let _alternative = self.pattern();
            }
        }
        pat
    }

    /// At the `=>` of an arm starting at `start`.
    fn arm_body(&mut self, start: u32) -> Expr {
        if !self.eat(&TokenKind::FatArrow) {
            self.error_expected("`=>`");
            // `->` or `=` for `=>`: read on as if it were right.
            if !self.eat(&TokenKind::Arrow) && !self.eat(&TokenKind::Eq) {
                self.skip_arm();
                return self.error_expr(start);
            }
        }
        // As in Rust, a block body ends the arm: `A => { .. } (x, y) => ..` is two arms.
        if self.at(&TokenKind::LBrace) { self.block_expr() } else { self.expr() }
    }

    fn for_expr(&mut self) -> Expr {
        let start = self.bump().start;
        let pat = self.pattern();
        if !self.eat(&TokenKind::In) {
            self.error_expected("`in`");
            return self.error_expr(start);
        }
        let iter = self.cond();
        // `with s` threads a state; `with s: T` also names what holds of it on every iteration.
        let state = if self.at_word("with") {
            self.bump();
            let name = self.ident("the name of the value the loop threads after `with`");
            let invariant = if self.eat(&TokenKind::Colon) { Some(self.ty()) } else { None };
            Some((name, invariant))
        } else {
            None
        };
        if !self.at(&TokenKind::LBrace) {
            self.error_expected("`{` after the iterator");
            return self.error_expr(start);
        }
        let body = self.block();
        let span = self.span_from(start);
        match state {
            Some((state, invariant)) => self.threaded_for(pat, iter, state, invariant, body, span),
            None => self.mk(ExprKind::For { pat, iter: Box::new(iter), body }, span),
        }
    }

    /// `for pat in xs with s { body }`, whose value is the last `s`: read as
    /// `xs.fold(s, |s, item| { let pat = item; body })`, so the state (a linear session, say) is
    /// handed from each iteration to the next and checked as `fold`'s accumulator. With an
    /// invariant, `with s: T`, the closure is `|s: T, item| ..`: `fold` takes the type its
    /// function declares for the accumulator, so `s` must satisfy `T` before the loop, each
    /// iteration may assume it and must give it back, and it holds after the loop.
    fn threaded_for(
        &mut self,
        pat: Pattern,
        iter: Expr,
        state: Ident,
        invariant: Option<TypeExpr>,
        body: Block,
        span: Span,
    ) -> Expr {
        let item = Ident { name: "for_item".into(), span: pat.span };
        let value = self.mk(ExprKind::Name(item.clone()), pat.span);
        // The binding and the body cover the whole loop, so every span stays inside its parent's.
        let mut stmts = vec![Stmt::Let { pat, ty: None, value: Box::new(value), span }];
        stmts.extend(body.stmts);
        let block = Block { stmts, tail: body.tail, span };
        let body = self.mk(ExprKind::Block(block), span);
        let params = vec![ClosureParam { name: state.clone(), ty: invariant }, ClosureParam { name: item, ty: None }];
        let closure = self.mk(ExprKind::Closure { params, ret: None, body: Box::new(body) }, span);
        let init = self.mk(ExprKind::Name(state.clone()), state.span);
        let method = Ident { name: "fold".into(), span };
        self.mk(ExprKind::MethodCall { receiver: Box::new(iter), method, args: vec![init, closure] }, span)
    }

    /// `agent[T](task, args..)` or `agent(task, args..)`.
    fn hole(&mut self) -> Expr {
        let start = self.bump().start;
        let ty = if self.at(&TokenKind::LBracket) {
            let open = self.bump();
            let ty = self.ty();
            self.close(TokenKind::RBracket, open);
            Some(ty)
        } else {
            None
        };
        if !self.at(&TokenKind::LParen) {
            self.error_expected_help("`(`", Some("a hole is written `agent[T](\"task\", args..)`"));
            return self.error_expr(start);
        }
        let open = self.bump();
        let args = self.comma_list(open, TokenKind::RParen, Self::expr);
        let span = self.span_from(start);
        self.mk(ExprKind::Hole { ty, args }, span)
    }

    /// `|a, b: T| body`, `|| body`, `|x| -> T { .. }`; the body extends as far as possible.
    fn closure(&mut self) -> Expr {
        let start = self.tok().span.start;
        let Some(params) = self.closure_params() else {
            return self.error_expr(start);
        };
        let ret = if self.eat(&TokenKind::Arrow) { Some(self.ty()) } else { None };
        let body = if ret.is_none() {
            self.expr()
        } else if self.at(&TokenKind::LBrace) {
            self.block_expr()
        } else {
            self.error_expected_help(
                "`{`",
                Some("a closure with a result type has a block body: `|x: Int| -> Int { x + 1 }`"),
            );
            self.error_expr(start)
        };
        let span = self.span_from(start);
        self.mk(ExprKind::Closure { params, ret, body: Box::new(body) }, span)
    }

    /// At `|` or `||`; `None` after an error.
    fn closure_params(&mut self) -> Option<Vec<ClosureParam>> {
        let mut params = Vec::new();
        if self.eat(&TokenKind::PipePipe) {
            return Some(params);
        }
        self.bump();
        loop {
            if self.eat(&TokenKind::Pipe) {
                return Some(params);
            }
            if !matches!(self.peek(), TokenKind::Ident | TokenKind::Underscore) {
                self.error_expected_help(
                    "a parameter name",
                    Some("closure parameters are names, optionally typed: `|x, y: Int| ..`; destructure with `let` in the body"),
                );
                return None;
            }
            let name = self.binder("a parameter name");
            let ty = if self.eat(&TokenKind::Colon) { Some(self.ty()) } else { None };
            params.push(ClosureParam { name, ty });
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            if self.eat(&TokenKind::Pipe) {
                return Some(params);
            }
            self.error_expected("`,` or `|`");
            return None;
        }
    }

    // ---- Patterns -----------------------------------------------------------------------------

    fn pattern(&mut self) -> Pattern {
        let start = self.tok().span.start;
        if !self.enter() {
            return Pattern { kind: PatternKind::Error, span: self.span_from(start) };
        }
        let p = self.pattern_inner();
        self.exit();
        p
    }

    fn pattern_inner(&mut self) -> Pattern {
        use TokenKind as T;
        let span = self.tok().span;
        let kind = match self.peek() {
            T::Underscore => PatternKind::Wild,
            T::Int(v) => PatternKind::Int(*v),
            T::Str(s) => PatternKind::Str(s.clone()),
            T::True => PatternKind::Bool(true),
            T::False => PatternKind::Bool(false),
            T::Minus => return self.negative_pattern(),
            T::Ident => return self.name_pattern(),
            T::LParen => return self.paren_pattern(),
            T::LBracket => {
                self.report(|_| {
                    syntax(span, "there are no list patterns")
                        .with_primary_label("not a pattern")
                        .with_help("match on `xs.len()`, or use `first`, `last` or `get`")
                });
                self.skip_nested();
                return Pattern { kind: PatternKind::Error, span: self.span_from(span.start) };
            }
            T::Error => PatternKind::Error,
            _ => {
                self.error_expected("a pattern");
                return Pattern { kind: PatternKind::Error, span: self.here() };
            }
        };
        self.bump();
        Pattern { kind, span }
    }

    /// At `-`: a negative integer.
    fn negative_pattern(&mut self) -> Pattern {
        let start = self.bump().start;
        let kind = match self.peek() {
            TokenKind::Int(v) => {
                let v = v.checked_neg().unwrap_or(i64::MIN);
                self.bump();
                PatternKind::Int(v)
            }
            _ => {
                self.error_expected("an integer after `-`");
                PatternKind::Error
            }
        };
        Pattern { kind, span: self.span_from(start) }
    }

    fn name_pattern(&mut self) -> Pattern {
        if self.at_word("mut") && *self.nth(1) == TokenKind::Ident {
            let span = self.tok().span;
            self.report(|_| {
                syntax(span, "expected a pattern, found `mut`")
                    .with_primary_label("not a keyword")
                    .with_help("there is no mutation; bind a new name with `let`")
            });
            self.bump();
        }
        let name = self.ident_token();
        let start = name.span.start;
        let (enum_name, name) = if self.eat(&TokenKind::ColonColon) {
            (Some(name), self.ident("a variant name after `::`"))
        } else {
            (None, name)
        };
        if self.at(&TokenKind::LParen) {
            let open = self.bump();
            let args = self.comma_list(open, TokenKind::RParen, Self::pattern);
            let kind = PatternKind::Variant { enum_name, name, args };
            return Pattern { kind, span: self.span_from(start) };
        }
        if self.at(&TokenKind::LBrace) {
            let span = self.tok().span;
            self.report(|_| {
                syntax(span, "there are no record patterns")
                    .with_primary_label("not a pattern")
                    .with_help("bind the whole record and read its fields: `r => r.name`")
            });
            self.skip_nested();
            return Pattern { kind: PatternKind::Error, span: self.span_from(start) };
        }
        let kind = if enum_name.is_some() || name.name == "None" {
            PatternKind::Variant { enum_name, name, args: Vec::new() }
        } else {
            PatternKind::Bind(name)
        };
        Pattern { kind, span: self.span_from(start) }
    }

    /// At `(`: `()`, `(p)` (which is `p`), or a tuple.
    fn paren_pattern(&mut self) -> Pattern {
        let open = self.bump();
        if self.eat(&TokenKind::RParen) {
            return Pattern { kind: PatternKind::Unit, span: self.span_from(open.start) };
        }
        let first = self.pattern();
        if self.eat(&TokenKind::Comma) {
            let mut items = vec![first];
            items.extend(self.comma_list(open, TokenKind::RParen, Self::pattern));
            return Pattern { kind: PatternKind::Tuple(items), span: self.span_from(open.start) };
        }
        self.close(TokenKind::RParen, open);
        Pattern { span: self.span_from(open.start), ..first }
    }

    // ---- Types --------------------------------------------------------------------------------

    fn ty(&mut self) -> TypeExpr {
        let start = self.tok().span.start;
        if !self.enter() {
            return self.error_type(start);
        }
        let t = self.ty_inner();
        self.exit();
        t
    }

    fn ty_inner(&mut self) -> TypeExpr {
        use TokenKind as T;
        let start = self.tok().span.start;
        match self.peek() {
            T::Ident => self.named_ty(),
            T::LParen => self.paren_ty(),
            T::Fn => self.fn_ty(),
            T::LBrace => self.refined_ty(),
            T::LBracket => {
                let span = self.tok().span;
                self.report(|_| {
                    syntax(span, "expected a type, found `[`")
                        .with_primary_label("not a type")
                        .with_help("a list type is written `List[T]`")
                });
                let open = self.bump();
                let element = self.ty();
                self.close(T::RBracket, open);
                let name = Ident { name: "List".to_string(), span };
                TypeExpr { kind: TypeExprKind::Named { name, args: vec![element] }, span: self.span_from(start) }
            }
            T::Amp | T::AmpAmp => {
                let span = self.tok().span;
                self.report(|_| {
                    syntax(span, "there are no reference types")
                        .with_primary_label("not a type")
                        .with_help("use the type itself")
                });
                self.bump();
                self.ty()
            }
            T::Error => {
                self.bump();
                self.error_type(start)
            }
            _ => {
                self.error_expected("a type");
                TypeExpr { kind: TypeExprKind::Error, span: self.here() }
            }
        }
    }

    /// `Name` or `Name[T, ..]`.
    fn named_ty(&mut self) -> TypeExpr {
        let name = self.ident_token();
        let start = name.span.start;
        let mut args = Vec::new();
        if self.at(&TokenKind::LBracket) {
            let open = self.bump();
            args = self.comma_list(open, TokenKind::RBracket, Self::ty);
        } else if self.at(&TokenKind::Lt) && !self.in_cast {
            let span = self.tok().span;
            self.report(|_| {
                syntax(span, "type arguments are written in square brackets")
                    .with_primary_label("expected `[`")
                    .with_help("write `List[Int]`, `Result[T, E]`")
            });
            self.bump();
            loop {
                args.push(self.ty());
                if !self.eat(&TokenKind::Comma) {
                    self.eat(&TokenKind::Gt);
                    break;
                }
            }
        }
        TypeExpr { kind: TypeExprKind::Named { name, args }, span: self.span_from(start) }
    }

    /// At `(`: `()`, `(A)` (which is `A`), or a tuple type.
    fn paren_ty(&mut self) -> TypeExpr {
        let open = self.bump();
        if self.eat(&TokenKind::RParen) {
            return TypeExpr { kind: TypeExprKind::Tuple(Vec::new()), span: self.span_from(open.start) };
        }
        let first = self.ty();
        if self.eat(&TokenKind::Comma) {
            let mut items = vec![first];
            items.extend(self.comma_list(open, TokenKind::RParen, Self::ty));
            return TypeExpr { kind: TypeExprKind::Tuple(items), span: self.span_from(open.start) };
        }
        self.close(TokenKind::RParen, open);
        TypeExpr { span: self.span_from(open.start), ..first }
    }

    /// `fn(A, B) -> C`; without `-> C` the result is `()`.
    fn fn_ty(&mut self) -> TypeExpr {
        let start = self.bump().start;
        let params = if self.at(&TokenKind::LParen) {
            let open = self.bump();
            self.comma_list(open, TokenKind::RParen, Self::ty)
        } else {
            self.error_expected("`(`");
            return self.error_type(start);
        };
        let ret = if self.eat(&TokenKind::Arrow) {
            self.ty()
        } else {
            TypeExpr { kind: TypeExprKind::Tuple(Vec::new()), span: self.here() }
        };
        TypeExpr { kind: TypeExprKind::Fn { params, ret: Box::new(ret) }, span: self.span_from(start) }
    }

    /// At `{`: `{v: T | pred}`.
    fn refined_ty(&mut self) -> TypeExpr {
        let open = self.bump();
        let var = self.ident("a variable name, as in `{v: Int | v > 0}`");
        if !self.eat(&TokenKind::Colon) {
            self.error_expected("`:`");
            self.skip_to_close(&TokenKind::RBrace);
            return self.error_type(open.start);
        }
        let base = self.ty();
        self.refined_rest(open, var, base)
    }

    /// At the `|` of a refinement.
    fn refined_rest(&mut self, open: Span, var: Ident, base: TypeExpr) -> TypeExpr {
        if !self.eat(&TokenKind::Pipe) {
            self.error_expected_help("`|`", Some("a refinement is written `{v: Int | v > 0}`"));
            self.skip_to_close(&TokenKind::RBrace);
            return self.error_type(open.start);
        }
        let no_record = mem::replace(&mut self.no_record, false);
        let pred = self.expr();
        self.no_record = no_record;
        self.close(TokenKind::RBrace, open);
        let kind = TypeExprKind::Refined { var, base: Box::new(base), pred: Box::new(pred) };
        TypeExpr { kind, span: self.span_from(open.start) }
    }

    // ---- Declarations -------------------------------------------------------------------------

    /// At a declaration keyword. `None` for a `tool` outside a capability (reported).
    fn item(&mut self) -> Option<Item> {
        use TokenKind as T;
        let doc = self.doc_here();
        let start = self.tok().span.start;
        let kind = match self.peek() {
            _ if self.at_release() => self.release_item(),
            T::Type => self.type_item(),
            T::Enum => self.enum_item(),
            T::Linear => self.linear_item(),
            T::Opaque => self.opaque_item(),
            T::Measure => self.measure_item(),
            T::Capability => self.capability_item(),
            T::Fn => ItemKind::Fn(self.fn_decl()),
            T::Const => self.const_item(),
            T::Entry => self.entry_item(),
            _ => {
                let span = self.tok().span;
                self.report(|_| {
                    syntax(span, "a `tool` is declared inside a `capability`")
                        .with_primary_label("outside a capability")
                        .with_help("write `capability Name { tool .. }`")
                });
                let _tool = self.tool();
                return None;
            }
        };
        Some(Item { doc, kind, span: self.span_from(start) })
    }

    fn type_item(&mut self) -> ItemKind {
        self.bump();
        let name = self.ident("a type name");
        if !self.eat(&TokenKind::Eq) {
            self.error_expected_help("`=`", Some("a type is declared `type Name = ..`"));
            return ItemKind::TypeAlias { name, ty: self.error_type(self.prev_span.end) };
        }
        if !self.at(&TokenKind::LBrace) {
            let ty = self.ty();
            return ItemKind::TypeAlias { name, ty };
        }
        // `{ v: T | p }` is a refinement, `{ f: T, .. }` a record: look past the first `name: T`.
        if *self.nth(1) == TokenKind::Ident && *self.nth(2) == TokenKind::Colon {
            let first_doc = self.doc_at(self.pos + 1);
            let open = self.bump();
            let var = self.ident_token();
            self.bump();
            let ty = self.ty();
            if self.at(&TokenKind::Pipe) {
                let ty = self.refined_rest(open, var, ty);
                return ItemKind::TypeAlias { name, ty };
            }
            let annotations = self.annotations_here();
            let mut fields = vec![Field { doc: first_doc, name: var, ty, annotations }];
            if self.eat(&TokenKind::Comma) {
                fields.extend(self.comma_list(open, TokenKind::RBrace, Self::field));
            } else {
                self.close(TokenKind::RBrace, open);
            }
            return ItemKind::Record { name, fields, opaque: false };
        }
        let fields = self.record_body();
        ItemKind::Record { name, fields, opaque: false }
    }

    /// At `{`: `f: T, ..` up to `}`.
    fn record_body(&mut self) -> Vec<Field> {
        let open = self.bump();
        self.comma_list(open, TokenKind::RBrace, Self::field)
    }

    fn field(&mut self) -> Field {
        let doc = self.doc_here();
        let name = self.ident("a field name");
        if !self.eat(&TokenKind::Colon) {
            self.error_expected_help("`:` and a type", Some("a field is written `name: Type`"));
            let ty = TypeExpr { kind: TypeExprKind::Error, span: self.here() };
            return Field { doc, name, ty, annotations: Vec::new() };
        }
        let ty = self.ty();
        let annotations = self.annotations_here();
        Field { doc, name, ty, annotations }
    }

    fn enum_item(&mut self) -> ItemKind {
        self.bump();
        let name = self.ident("an enum name");
        if !self.at(&TokenKind::LBrace) {
            self.error_expected_help("`{`", Some("an enum is declared `enum Name { A, B(Int) }`"));
            return ItemKind::Enum { name, variants: Vec::new() };
        }
        let open = self.bump();
        let variants = self.comma_list(open, TokenKind::RBrace, Self::variant);
        ItemKind::Enum { name, variants }
    }

    fn variant(&mut self) -> Variant {
        let doc = self.doc_here();
        let start = self.tok().span.start;
        let name = self.ident("a variant name");
        let payload = if self.at(&TokenKind::LParen) {
            let open = self.bump();
            self.comma_list(open, TokenKind::RParen, Self::ty)
        } else {
            if self.at(&TokenKind::LBrace) {
                let span = self.tok().span;
                self.report(|_| {
                    syntax(span, "a variant's payload is a tuple of types")
                        .with_primary_label("not a payload")
                        .with_help("write `B(Int, String)`, or make a record type and use `B(Rec)`")
                });
                self.skip_nested();
            }
            Vec::new()
        };
        Variant { doc, name, payload, span: self.span_from(start) }
    }

    /// `linear type Name`
    fn linear_item(&mut self) -> ItemKind {
        self.bump();
        if !self.eat(&TokenKind::Type) {
            self.error_expected("`type`");
        }
        let name = self.ident("a type name");
        ItemKind::Linear { name }
    }

    /// `opaque type Name`, `opaque type Name[T, ..]` or `opaque type Name = { fields }`.
    fn opaque_item(&mut self) -> ItemKind {
        self.bump();
        if !self.eat(&TokenKind::Type) {
            self.error_expected("`type`");
        }
        let name = self.ident("a type name");
        let mut params = Vec::new();
        if self.at(&TokenKind::LBracket) {
            let open = self.bump();
            params = self.comma_list(open, TokenKind::RBracket, |p| p.ident("a type parameter"));
        }
        if !self.eat(&TokenKind::Eq) {
            return ItemKind::Opaque { name, params };
        }
        if let Some(first) = params.first() {
            let span = first.span;
            self.report(|_| {
                syntax(span, "an opaque record type takes no type parameters").with_primary_label("not allowed here")
            });
        }
        if !self.at(&TokenKind::LBrace) {
            self.error_expected_help(
                "`{`",
                Some("an opaque type is either abstract (`opaque type X`) or a record (`opaque type X = { f: T }`)"),
            );
            return ItemKind::Opaque { name, params };
        }
        let fields = self.record_body();
        ItemKind::Record { name, fields, opaque: true }
    }

    fn measure_item(&mut self) -> ItemKind {
        self.bump();
        let name = self.ident("a measure name");
        let params = self.params();
        let ret = self.required_ret("a measure is declared `measure m(x: T) -> U`");
        // `= literal`: the measure's value on a fresh host value (the checker checks the form).
        let default = if self.eat(&TokenKind::Eq) { Some(self.expr()) } else { None };
        ItemKind::Measure { name, params, ret, default }
    }

    fn required_ret(&mut self, help: &str) -> TypeExpr {
        if self.eat(&TokenKind::Arrow) {
            return self.ty();
        }
        self.error_expected_help("`->` and a result type", Some(help));
        TypeExpr { kind: TypeExprKind::Error, span: self.here() }
    }

    /// `(name: T, ..)`
    fn params(&mut self) -> Vec<Param> {
        if !self.at(&TokenKind::LParen) {
            self.error_expected("`(`");
            return Vec::new();
        }
        let open = self.bump();
        self.comma_list(open, TokenKind::RParen, Self::param)
    }

    fn param(&mut self) -> Param {
        let name = self.binder("a parameter name");
        if !self.eat(&TokenKind::Colon) {
            self.error_expected_help("`:` and a type", Some("parameters have types: `x: Int`"));
            return Param { name, ty: TypeExpr { kind: TypeExprKind::Error, span: self.here() } };
        }
        let ty = self.ty();
        Param { name, ty }
    }

    fn capability_item(&mut self) -> ItemKind {
        self.bump();
        let name = self.ident("a capability name");
        if !self.at(&TokenKind::LBrace) {
            self.error_expected_help("`{`", Some("a capability is declared `capability Name { tool .. }`"));
            return ItemKind::Capability { name, tools: Vec::new() };
        }
        let open = self.bump();
        let outer_error = self.stmt_error;
        let mut tools = Vec::new();
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
                TokenKind::Semi | TokenKind::Comma => {
                    self.bump();
                    continue;
                }
                _ if self.at_item_start() && !self.at(&TokenKind::Tool) && self.at_line_start() => {
                    self.error_unclosed(&TokenKind::RBrace, open, false);
                    break;
                }
                _ => {}
            }
            self.stmt_error = false;
            let before = self.pos;
            if matches!(self.peek(), TokenKind::Tool | TokenKind::At) {
                tools.push(self.tool());
            } else {
                self.error_expected_help("`tool` or `}`", Some("a capability holds tools: `tool name(x: T) -> U`"));
                self.skip_to_tool();
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.stmt_error |= outer_error;
        ItemKind::Capability { name, tools }
    }

    /// Inside a capability, after an error: skips to the next `tool` or annotation, or its `}`.
    fn skip_to_tool(&mut self) {
        use TokenKind as T;
        let mut depth = 0usize;
        loop {
            match self.peek() {
                T::Eof => return,
                T::Tool | T::At | T::RBrace if depth == 0 => return,
                T::LParen | T::LBracket | T::LBrace => depth += 1,
                T::RParen | T::RBracket | T::RBrace => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.bump();
        }
    }

    /// `@a(..) tool name(params) -> Ret @b(..)`
    fn tool(&mut self) -> Tool {
        let start = self.tok().span.start;
        let first = self.pos;
        let mut doc = self.doc_here();
        let mut annotations = self.annotations_here();
        if self.pos != first {
            doc = match (doc, self.doc_here()) {
                (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
                (a, b) => a.or(b),
            };
        }
        if !self.eat(&TokenKind::Tool) {
            self.error_expected("`tool`");
            let name = Ident { name: String::new(), span: self.here() };
            let span = self.span_from(start);
            return Tool { doc, name, params: Vec::new(), ret: None, annotations, span };
        }
        let name = self.ident("a tool name");
        let params = self.params();
        let ret = if self.eat(&TokenKind::Arrow) { Some(self.ty()) } else { None };
        // An annotation at the tool's column or left of it leads the next tool.
        self.trailing_annotations(start, &mut annotations);
        Tool { doc, name, params, ret, annotations, span: self.span_from(start) }
    }

    fn fn_decl(&mut self) -> FnDecl {
        self.bump();
        let name = self.ident("a function name");
        let params = self.params();
        let ret = if self.eat(&TokenKind::Arrow) { Some(self.ty()) } else { None };
        let body = if self.at(&TokenKind::LBrace) {
            self.block()
        } else {
            let help = self.at(&TokenKind::Colon).then_some("the result type is written `-> T`");
            self.error_expected_help("`{` and the function body", help);
            Block { stmts: Vec::new(), tail: None, span: self.here() }
        };
        FnDecl { name, params, ret, body }
    }

    fn const_item(&mut self) -> ItemKind {
        self.bump();
        let name = self.ident("a constant name");
        let ty = if self.eat(&TokenKind::Colon) {
            self.ty()
        } else {
            self.error_expected_help("`:` and a type", Some("a constant has a type: `const LIMIT: Int = 10;`"));
            TypeExpr { kind: TypeExprKind::Error, span: self.here() }
        };
        let value = if self.eat(&TokenKind::Eq) {
            self.expr()
        } else {
            self.error_expected("`=`");
            let here = self.here();
            self.mk(ExprKind::Error, here)
        };
        ItemKind::Const { name, ty, value }
    }

    fn entry_item(&mut self) -> ItemKind {
        self.bump();
        let params = self.params();
        let ret = self.required_ret("the entry is declared `entry(x: T) -> U`");
        ItemKind::Entry { params, ret }
    }
}
