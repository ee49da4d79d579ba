//! Any bytes, read as (lossy) UTF-8, scanned by the outgoing-data check with a canary vault:
//! no panic, spans sorted, disjoint and on character boundaries, and the redacted text has no
//! never-tier finding left.

#![no_main]

use std::sync::OnceLock;

use cordon_egress::{Scanner, SecretValue, redact};
use libfuzzer_sys::fuzz_target;

fn scanner() -> &'static Scanner {
    static SCANNER: OnceLock<Scanner> = OnceLock::new();
    SCANNER.get_or_init(|| Scanner::new(&[SecretValue::from("cordon-canary-7Hq2xVp9Lm")]))
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let findings = scanner().scan(&text);
    for pair in findings.windows(2) {
        assert!(pair[0].span.end <= pair[1].span.start);
    }
    for f in &findings {
        assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end) && f.span.start < f.span.end);
    }
    let redacted = redact(&text, &findings);
    assert!(scanner().scan_never(&redacted).is_empty());
});
