//! Every module says what it is for: each file of a crate's `src/` starts with a `//!` comment
//! (blank lines before it aside).

use crate::SourceFile;

/// Each file of `files`' `src/` whose first line that is not blank is not a `//!` comment.
pub fn undocumented(files: &[SourceFile]) -> Vec<String> {
    files
        .iter()
        .filter(|f| f.in_src().is_some())
        .filter(|f| !f.text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim_start().starts_with("//!")))
        .map(|f| format!("{}: does not start with a `//!` comment saying what the module is for", f.path))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_without_a_leading_doc_comment_is_named() {
        let files = [
            SourceFile::new("k", "crates/k/src/a.rs", "\n//! What a is for.\nfn f() {}"),
            SourceFile::new("k", "crates/k/src/b.rs", "// A plain comment.\n//! Too late.\n"),
            SourceFile::new("k", "crates/k/src/c.rs", "use x;\n"),
            SourceFile::new("k", "crates/k/src/d.rs", ""),
            SourceFile::new("k", "crates/k/tests/e.rs", "fn t() {}"),
        ];
        let named: Vec<_> =
            undocumented(&files).into_iter().map(|p| p.split(':').next().unwrap_or_default().to_owned()).collect();
        assert_eq!(named, ["crates/k/src/b.rs", "crates/k/src/c.rs", "crates/k/src/d.rs"]);
    }
}
