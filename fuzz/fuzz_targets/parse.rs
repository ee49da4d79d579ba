//! Any bytes, read as (lossy) UTF-8, must parse to a tree and diagnostics without a panic.

#![no_main]

use cordon_syntax::{SourceMap, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut sources = SourceMap::new();
    let file = sources.add("plan.cord", text.as_ref());
    let parsed = parse(file, &sources.file(file).text);
    // Rendering reads the spans the parser made: they must be valid for the text.
    for d in &parsed.diagnostics {
        let _ = cordon_syntax::render::human(d, &sources);
    }
});
