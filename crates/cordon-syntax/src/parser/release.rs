//! The `release` item: `release "group" to L @approval(..)`. `release` is a word, not a
//! keyword, so that anything else may still be called `release`.

use super::Parser;
use crate::ast::ItemKind;
use crate::lexer::TokenKind;

impl Parser<'_> {
    /// At `release "..`.
    pub(super) fn at_release(&self) -> bool {
        self.at_word("release") && matches!(self.nth(1), TokenKind::Str(_))
    }

    /// At `release "group"`: `release "group" to L @approval(..)`.
    pub(super) fn release_item(&mut self) -> ItemKind {
        let start = self.tok().span.start;
        self.bump();
        let group_span = self.tok().span;
        let group = match self.peek() {
            TokenKind::Str(name) => name.clone(),
            _ => String::new(),
        };
        self.bump();
        if self.at_word("to") {
            self.bump();
        } else {
            self.error_expected_help(
                "`to` and a label",
                Some("a release is declared `release \"group\" to untrusted()`"),
            );
        }
        let to = self.expr();
        let mut annotations = Vec::new();
        self.trailing_annotations(start, &mut annotations);
        ItemKind::Release { group, group_span, to, annotations }
    }
}
