//! Compiles the generated C parser (`src/parser.c`, made by `tree-sitter generate` from
//! `grammar.js` and checked in) and the external scanner (`src/scanner.c`, written by hand).

fn main() {
    let src = std::path::Path::new("src");
    let mut build = cc::Build::new();
    build.std("c11").include(src).warnings(false);
    #[cfg(target_env = "msvc")]
    build.flag("-utf-8");
    for file in ["parser.c", "scanner.c"] {
        let path = src.join(file);
        build.file(&path);
        println!("cargo:rerun-if-changed={}", path.display());
    }
    build.compile("tree-sitter-cordon");
}
