//! The parser: tokens to [`Module`]. It never fails. (To be written.)

use crate::ast::Module;
use crate::diagnostic::Diagnostic;
use crate::span::FileId;

/// Deepest nesting of expressions, blocks, patterns and types the parser accepts; deeper input
/// gets a `nesting-too-deep` error instead of exhausting the stack of any later stage.
pub const MAX_NESTING: usize = 128;

/// A syntax tree and every error found while building it.
#[derive(Debug)]
pub struct Parsed {
    pub module: Module,
    pub diagnostics: Vec<Diagnostic>,
}

pub fn parse(file: FileId, text: &str) -> Parsed {
    let _ = (file, text);
    unimplemented!()
}
