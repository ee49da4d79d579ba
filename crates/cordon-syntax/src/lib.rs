//! The Cordon language's front end: source files and spans, the lexer, the parser (which never
//! fails: it returns a tree and every error it found), the syntax tree, its printer (declarations
//! back to source), the formatter (a file's layout made canonical), and the [`Diagnostic`] type
//! with its renderers.
//!
//! ```
//! use cordon_syntax::{SourceMap, parse};
//! let mut sources = SourceMap::new();
//! let file = sources.add("plan.cord", "let x = 1 +;");
//! let parsed = parse(file, &sources.file(file).text);
//! assert_eq!(parsed.diagnostics[0].code.as_str(), "syntax-error");
//! ```

pub mod ast;
pub mod builtins;
pub mod diagnostic;
pub mod entry;
pub mod format;
pub mod lexer;
pub mod navigate;
pub mod parser;
pub mod pattern;
pub mod print;
pub mod render;
pub mod span;
pub mod unguarded;
pub mod variants;

pub use builtins::{Builtin, LabelFn};
pub use diagnostic::{Code, Diagnostic, Label, Severity};
pub use parser::{MAX_NESTING, Parsed, parse};
pub use span::{FileId, SourceFile, SourceMap, Span};
