//! A [tree-sitter] grammar for the Cordon language, for editors: highlighting, folding,
//! navigation. The parser is generated from `grammar.js` into `src/parser.c`; this crate builds it
//! and hands it out as [`LANGUAGE`], with the queries editors use.
//!
//! ```
//! let code = r#"let greeting = "hello";"#;
//! let mut parser = tree_sitter::Parser::new();
//! let language = tree_sitter::Language::new(tree_sitter_cordon::LANGUAGE);
//! parser.set_language(&language).expect("the grammar's ABI is one the runtime reads");
//! let tree = parser.parse(code, None).expect("a parse with no timeout or cancellation");
//! assert!(!tree.root_node().has_error());
//! ```
//!
//! [tree-sitter]: https://tree-sitter.github.io/

use tree_sitter_language::LanguageFn;

#[expect(unsafe_code, reason = "the parser is written in C")]
unsafe extern "C" {
    /// Defined in `src/parser.c`.
    fn tree_sitter_cordon() -> *const ();
}

/// The tree-sitter [`LanguageFn`] of this grammar.
#[expect(unsafe_code, reason = "the one way to hand tree-sitter a parser written in C")]
// SAFETY: `tree_sitter_cordon` is the function `tree-sitter generate` wrote in `src/parser.c`,
// which the build script compiles and links; it returns a pointer to a static `TSLanguage`.
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_cordon) };

/// The content of `src/node-types.json`: every kind of node and the fields of each.
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

/// The syntax highlighting query (`queries/highlights.scm`).
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");

/// The local-variable query (`queries/locals.scm`): scopes, definitions and references.
pub const LOCALS_QUERY: &str = include_str!("../../queries/locals.scm");

#[cfg(test)]
mod tests {
    #[test]
    fn the_runtime_loads_the_grammar() {
        let mut parser = tree_sitter::Parser::new();
        let loaded = parser.set_language(&super::LANGUAGE.into());
        assert!(loaded.is_ok(), "{loaded:?}");
    }
}
