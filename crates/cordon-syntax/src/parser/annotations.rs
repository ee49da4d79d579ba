//! Annotations: `@name`, `@name(arg, key = arg, ..)`, before a declaration, after a field's
//! type, and after a tool's signature or a release.

use super::Parser;
use crate::ast::{Annotation, AnnotationArg};
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// Every annotation from here: before a tool, after a field's type
    /// (`body: String @label(untrusted())`).
    pub(super) fn annotations_here(&mut self) -> Vec<Annotation> {
        let mut annotations = Vec::new();
        while self.at(&TokenKind::At) {
            annotations.push(self.annotation());
        }
        annotations
    }

    /// The annotations after a declaration that starts at `start` (a tool's signature, a
    /// release), into `annotations`: each on the declaration's last line or indented deeper
    /// than it. One at its column or left of it leads the next declaration.
    pub(super) fn trailing_annotations(&mut self, start: u32, annotations: &mut Vec<Annotation>) {
        let column = self.byte_col(start);
        while self.at(&TokenKind::At) {
            let at = self.tok().span.start;
            let same_line = self.line_of(at) == self.line_of(self.prev_span.end);
            if !same_line && self.byte_col(at) <= column {
                break;
            }
            annotations.push(self.annotation());
        }
    }

    /// At `@`: `@name`, `@name(arg, key = arg, ..)`.
    fn annotation(&mut self) -> Annotation {
        let start = self.bump().start;
        let name = self.ident("an annotation name");
        let args = if self.at(&TokenKind::LParen) {
            let open = self.bump();
            self.comma_list(open, TokenKind::RParen, Self::annotation_arg)
        } else {
            Vec::new()
        };
        Annotation { name, args, span: self.span_from(start) }
    }

    fn annotation_arg(&mut self) -> AnnotationArg {
        let key = if *self.peek() == TokenKind::Ident && *self.nth(1) == TokenKind::Eq {
            let key = self.ident_token();
            self.bump();
            Some(key)
        } else {
            None
        };
        AnnotationArg { key, value: self.expr() }
    }
}
