//! Patterns: in `match` arms, `let` and closure parameters.

use super::*;

impl Parser<'_> {
    pub(super) fn pattern(&mut self) -> Pattern {
        let start = self.tok().span.start;
        if !self.enter() {
            return Pattern { kind: PatternKind::Error, span: self.span_from(start) };
        }
        let p = self.pattern_inner();
        self.exit();
        p
    }

    pub(super) fn pattern_inner(&mut self) -> Pattern {
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
    pub(super) fn negative_pattern(&mut self) -> Pattern {
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

    pub(super) fn name_pattern(&mut self) -> Pattern {
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
            (Some(Box::new(name)), self.ident("a variant name after `::`"))
        } else {
            (None, name)
        };
        if self.at(&TokenKind::LParen) {
            let open = self.bump();
            let args = self.comma_list(open, TokenKind::RParen, Self::pattern);
            let kind = PatternKind::Variant { enum_name, name: Box::new(name), args };
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
            PatternKind::Variant { enum_name, name: Box::new(name), args: Vec::new() }
        } else {
            PatternKind::Bind(name)
        };
        Pattern { kind, span: self.span_from(start) }
    }

    /// At `(`: `()`, `(p)` (which is `p`), or a tuple.
    pub(super) fn paren_pattern(&mut self) -> Pattern {
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
}
