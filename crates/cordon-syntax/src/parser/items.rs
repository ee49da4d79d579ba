//! Declarations: types, enums, linear and opaque types, measures, capabilities and their tools,
//! functions, constants and the entry.

use super::*;

impl Parser<'_> {
    /// At a declaration keyword. `None` for a `tool` outside a capability (reported).
    pub(super) fn item(&mut self) -> Option<Item> {
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

    pub(super) fn type_item(&mut self) -> ItemKind {
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
    pub(super) fn record_body(&mut self) -> Vec<Field> {
        let open = self.bump();
        self.comma_list(open, TokenKind::RBrace, Self::field)
    }

    pub(super) fn field(&mut self) -> Field {
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

    pub(super) fn enum_item(&mut self) -> ItemKind {
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

    pub(super) fn variant(&mut self) -> Variant {
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
    pub(super) fn linear_item(&mut self) -> ItemKind {
        self.bump();
        if !self.eat(&TokenKind::Type) {
            self.error_expected("`type`");
        }
        let name = self.ident("a type name");
        ItemKind::Linear { name }
    }

    /// `opaque type Name`, `opaque type Name[T, ..]` or `opaque type Name = { fields }`.
    pub(super) fn opaque_item(&mut self) -> ItemKind {
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

    pub(super) fn measure_item(&mut self) -> ItemKind {
        self.bump();
        let name = self.ident("a measure name");
        let params = self.params();
        let ret = self.required_ret("a measure is declared `measure m(x: T) -> U`");
        // `= literal`: the measure's value on a fresh host value (the checker checks the form).
        let default = if self.eat(&TokenKind::Eq) { Some(self.expr()) } else { None };
        ItemKind::Measure { name, params, ret, default }
    }

    pub(super) fn required_ret(&mut self, help: &str) -> TypeExpr {
        if self.eat(&TokenKind::Arrow) {
            return self.ty();
        }
        self.error_expected_help("`->` and a result type", Some(help));
        TypeExpr { kind: TypeExprKind::Error, span: self.here() }
    }

    /// `(name: T, ..)`
    pub(super) fn params(&mut self) -> Vec<Param> {
        if !self.at(&TokenKind::LParen) {
            self.error_expected("`(`");
            return Vec::new();
        }
        let open = self.bump();
        self.comma_list(open, TokenKind::RParen, Self::param)
    }

    pub(super) fn param(&mut self) -> Param {
        let name = self.binder("a parameter name");
        if !self.eat(&TokenKind::Colon) {
            self.error_expected_help("`:` and a type", Some("parameters have types: `x: Int`"));
            return Param { name, ty: TypeExpr { kind: TypeExprKind::Error, span: self.here() } };
        }
        let ty = self.ty();
        Param { name, ty }
    }

    pub(super) fn capability_item(&mut self) -> ItemKind {
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
    pub(super) fn skip_to_tool(&mut self) {
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
    pub(super) fn tool(&mut self) -> Tool {
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

    pub(super) fn fn_decl(&mut self) -> FnDecl {
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

    pub(super) fn const_item(&mut self) -> ItemKind {
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

    pub(super) fn entry_item(&mut self) -> ItemKind {
        self.bump();
        let params = self.params();
        let ret = self.required_ret("the entry is declared `entry(x: T) -> U`");
        ItemKind::Entry { params, ret }
    }
}
