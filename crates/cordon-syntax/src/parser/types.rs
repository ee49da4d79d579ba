//! Types: named, tuple, function and refined (`{v: Int | v > 0}`).

use super::*;

impl Parser<'_> {
    pub(super) fn ty(&mut self) -> TypeExpr {
        let start = self.tok().span.start;
        if !self.enter() {
            return self.error_type(start);
        }
        let t = self.ty_inner();
        self.exit();
        t
    }

    pub(super) fn ty_inner(&mut self) -> TypeExpr {
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
    pub(super) fn named_ty(&mut self) -> TypeExpr {
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
    pub(super) fn paren_ty(&mut self) -> TypeExpr {
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
    pub(super) fn fn_ty(&mut self) -> TypeExpr {
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
    pub(super) fn refined_ty(&mut self) -> TypeExpr {
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
    pub(super) fn refined_rest(&mut self, open: Span, var: Ident, base: TypeExpr) -> TypeExpr {
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
}
