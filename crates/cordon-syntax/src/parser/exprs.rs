//! Expressions: precedence climbing for binary operators, then prefixes, postfixes
//! (calls, fields, indexes) and the primary forms: literals, f-strings, names and records, blocks,
//! `if`, `match`, `for`, holes and closures.

use super::*;

impl Parser<'_> {
    pub(super) fn expr(&mut self) -> Expr {
        let start = self.tok().span.start;
        if !self.enter() {
            return self.error_expr(start);
        }
        let e = self.binary(0);
        self.exit();
        e
    }

    /// An expression where `Name {` starts a block, not a record.
    pub(super) fn cond(&mut self) -> Expr {
        if self.at(&TokenKind::LBrace) {
            self.error_expected("a condition");
            return self.error_expr(self.prev_span.end);
        }
        let no_record = mem::replace(&mut self.no_record, true);
        let e = self.expr();
        self.no_record = no_record;
        e
    }

    pub(super) fn binary(&mut self, min_prec: u8) -> Expr {
        let saved_peak = mem::replace(&mut self.peak, self.depth);
        let lhs = self.unary();
        self.binary_rest(min_prec, lhs, saved_peak)
    }

    /// Precedence climbing: operators binding at least `min_prec`, applied to `lhs`. At the
    /// end, `peak` is at least `saved_peak` again.
    pub(super) fn binary_rest(&mut self, min_prec: u8, mut lhs: Expr, saved_peak: usize) -> Expr {
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
    pub(super) fn cast(&mut self, lhs: Expr) -> Expr {
        self.bump();
        let in_cast = mem::replace(&mut self.in_cast, true);
        let ty = self.ty();
        self.in_cast = in_cast;
        let span = lhs.span.to(ty.span);
        self.mk(ExprKind::Cast { expr: Box::new(lhs), ty: Box::new(ty) }, span)
    }

    /// At the operator `op` after `lhs`: `lhs op rhs`.
    pub(super) fn binary_link(&mut self, lhs: Expr, op: BinOp, prec: u8) -> Expr {
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

    pub(super) fn unary(&mut self) -> Expr {
        match self.peek() {
            TokenKind::Minus => self.prefix(UnOp::Neg),
            TokenKind::Bang => self.prefix(UnOp::Not),
            _ => self.postfix_expr(),
        }
    }

    pub(super) fn postfix_expr(&mut self) -> Expr {
        let saved_peak = mem::replace(&mut self.peak, self.depth);
        let e = self.primary();
        self.postfix_rest(e, saved_peak)
    }

    pub(super) fn prefix(&mut self, op: UnOp) -> Expr {
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
    pub(super) fn postfix_rest(&mut self, mut e: Expr, saved_peak: usize) -> Expr {
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
    pub(super) fn no_range(&mut self, e: Expr) -> Expr {
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
    pub(super) fn call(&mut self, callee: Expr) -> Expr {
        let open = self.bump();
        let args = self.comma_list(open, TokenKind::RParen, Self::expr);
        let span = self.span_from(callee.span.start);
        self.mk(ExprKind::Call { callee: Box::new(callee), args }, span)
    }

    /// At `[` after `base`.
    pub(super) fn index(&mut self, base: Expr) -> Expr {
        let open = self.bump();
        let no_record = mem::replace(&mut self.no_record, false);
        let index = self.expr();
        self.no_record = no_record;
        self.close(TokenKind::RBracket, open);
        let span = self.span_from(base.span.start);
        self.mk(ExprKind::Index { base: Box::new(base), index: Box::new(index) }, span)
    }

    /// At `.` after `base`.
    pub(super) fn after_dot(&mut self, base: Expr) -> Expr {
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
    pub(super) fn float_fields(&mut self, base: Expr) -> Expr {
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
    pub(super) fn method_call(&mut self, receiver: Expr, method: Ident) -> Expr {
        let open = self.bump();
        let args = self.comma_list(open, TokenKind::RParen, Self::expr);
        let span = self.span_from(receiver.span.start);
        self.mk(ExprKind::MethodCall { receiver: Box::new(receiver), method: Box::new(method), args }, span)
    }

    pub(super) fn tuple_index(&mut self, span: Span) -> u32 {
        match self.text_of(span).parse::<u32>() {
            Ok(index) => index,
            Err(_) => {
                self.report(|_| syntax(span, "tuple index too large").with_primary_label("not a tuple field"));
                0
            }
        }
    }

    pub(super) fn primary(&mut self) -> Expr {
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
    pub(super) fn literal(&mut self) -> Expr {
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
    pub(super) fn fstring(&mut self) -> Expr {
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
                    let method = Box::new(Ident { name: "to_string".into(), span: e.span });
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
                let method = Box::new(Ident { name: "join".into(), span });
                self.mk(ExprKind::MethodCall { receiver: Box::new(list), method, args: vec![sep] }, span)
            }
        }
    }

    pub(super) fn list_expr(&mut self) -> Expr {
        let open = self.bump();
        let items = self.comma_list(open, TokenKind::RBracket, Self::expr);
        let span = self.span_from(open.start);
        self.mk(ExprKind::List(items), span)
    }

    /// `&e`: reported; parsed as `e`.
    pub(super) fn reference(&mut self) -> Expr {
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

    pub(super) fn name_expr(&mut self) -> Expr {
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
            return self.mk(ExprKind::Path { ty: Box::new(name), variant: Box::new(variant) }, span);
        }
        if self.at(&TokenKind::LBrace) && self.record_follows(&name) {
            return self.record(name);
        }
        let span = name.span;
        self.mk(ExprKind::Name(name), span)
    }

    /// `to_labeled { .. }`, at the word `to_labeled` followed by `{`. In a condition (where `{`
    /// starts the body) the word is an ordinary name.
    pub(super) fn labeled_block(&mut self) -> Expr {
        let start = self.bump().start;
        let block = self.block();
        let span = self.span_from(start);
        self.mk(ExprKind::ToLabeled(Box::new(block)), span)
    }

    /// A Rust word that Cordon lacks, in expression position. With `operand`, what follows is
    /// parsed as the expression (so `return x` still gives `x`).
    pub(super) fn not_a_keyword(&mut self, help: &'static str, operand: bool) -> Expr {
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
    pub(super) fn no_loop(&mut self) -> Expr {
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
    pub(super) fn record_follows(&mut self, name: &Ident) -> bool {
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
    pub(super) fn record(&mut self, name: Ident) -> Expr {
        let open = self.bump();
        let fields = self.comma_list(open, TokenKind::RBrace, Self::record_field);
        let span = self.span_from(name.span.start);
        self.mk(ExprKind::Record { name: Box::new(name), fields }, span)
    }

    pub(super) fn record_field(&mut self) -> (Ident, Expr) {
        let name = self.ident("a field name");
        if self.eat(&TokenKind::Colon) {
            let value = self.expr();
            return (name, value);
        }
        self.shorthand_field(name)
    }

    /// `Name { f }` means `Name { f: f }`.
    pub(super) fn shorthand_field(&mut self, name: Ident) -> (Ident, Expr) {
        let value = if name.name.is_empty() {
            self.error_expr(self.prev_span.end)
        } else {
            self.mk(ExprKind::Name(name.clone()), name.span)
        };
        (name, value)
    }

    /// At `(`: `()`, `(e)` (which is `e`, its span widened to the parentheses), or a tuple.
    pub(super) fn paren_expr(&mut self) -> Expr {
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
    pub(super) fn paren_rest(&mut self, open: Span, first: Expr) -> Expr {
        if !self.eat(&TokenKind::Comma) {
            self.close(TokenKind::RParen, open);
            return Expr { span: self.span_from(open.start), ..first };
        }
        let mut items = vec![first];
        items.extend(self.comma_list(open, TokenKind::RParen, Self::expr));
        let span = self.span_from(open.start);
        self.mk(ExprKind::Tuple(items), span)
    }

    pub(super) fn block_expr(&mut self) -> Expr {
        let block = self.block();
        let span = block.span;
        self.mk(ExprKind::Block(Box::new(block)), span)
    }

    /// Elements separated by `,` up to `close` (a trailing `,` is allowed), after `open`.
    pub(super) fn comma_list<T>(
        &mut self,
        open: Span,
        close: TokenKind,
        mut element: impl FnMut(&mut Self) -> T,
    ) -> Vec<T> {
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
        // The tree is kept while the plan is checked: a call has one or two arguments, and a
        // vector's first push makes room for four.
        items.shrink_to_fit();
        items
    }

    pub(super) fn if_expr(&mut self) -> Expr {
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
        self.mk(ExprKind::If { cond: Box::new(cond), then: Box::new(then), else_ }, span)
    }

    /// `if let P = e { .. } else { .. }`: reported, parsed, an `Error`.
    pub(super) fn no_if_let(&mut self, start: u32) -> Expr {
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
    pub(super) fn else_branch(&mut self) -> Box<Expr> {
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

    pub(super) fn match_expr(&mut self) -> Expr {
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
    pub(super) fn arms(&mut self) -> Vec<Arm> {
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
        arms.shrink_to_fit();
        arms
    }

    /// Skips to the next arm: past a `,`, or up to the `}` of the `match`.
    pub(super) fn skip_arm(&mut self) {
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

    pub(super) fn arm(&mut self) -> Arm {
        let pat = self.arm_pattern();
        let guard = if self.eat(&TokenKind::If) { Some(self.expr()) } else { None };
        let body = self.arm_body(pat.span.start);
        let span = pat.span.to(body.span);
        Arm { pat, guard, body, span }
    }

    pub(super) fn arm_pattern(&mut self) -> Pattern {
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
    pub(super) fn arm_body(&mut self, start: u32) -> Expr {
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

    pub(super) fn for_expr(&mut self) -> Expr {
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
            None => self.mk(ExprKind::For { pat: Box::new(pat), iter: Box::new(iter), body: Box::new(body) }, span),
        }
    }

    /// `for pat in xs with s { body }`, whose value is the last `s`: read as
    /// `xs.fold(s, |s, item| { let pat = item; body })`, so the state (a linear session, say) is
    /// handed from each iteration to the next and checked as `fold`'s accumulator. With an
    /// invariant, `with s: T`, the closure is `|s: T, item| ..`: `fold` takes the type its
    /// function declares for the accumulator, so `s` must satisfy `T` before the loop, each
    /// iteration may assume it and must give it back, and it holds after the loop.
    pub(super) fn threaded_for(
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
        let body = self.mk(ExprKind::Block(Box::new(block)), span);
        let params = vec![ClosureParam { name: state.clone(), ty: invariant }, ClosureParam { name: item, ty: None }];
        let closure = self.mk(ExprKind::Closure { params, ret: None, body: Box::new(body) }, span);
        let init = self.mk(ExprKind::Name(state.clone()), state.span);
        let method = Box::new(Ident { name: "fold".into(), span });
        self.mk(ExprKind::MethodCall { receiver: Box::new(iter), method, args: vec![init, closure] }, span)
    }

    /// `agent[T](task, args..)` or `agent(task, args..)`.
    pub(super) fn hole(&mut self) -> Expr {
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
        self.mk(ExprKind::Hole { ty: ty.map(Box::new), args }, span)
    }

    /// `|a, b: T| body`, `|| body`, `|x| -> T { .. }`; the body extends as far as possible.
    pub(super) fn closure(&mut self) -> Expr {
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
        self.mk(ExprKind::Closure { params, ret: ret.map(Box::new), body: Box::new(body) }, span)
    }

    /// At `|` or `||`; `None` after an error.
    pub(super) fn closure_params(&mut self) -> Option<Vec<ClosureParam>> {
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
}
