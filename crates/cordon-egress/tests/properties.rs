//! Properties of the scanner on hostile and arbitrary text: it never panics, its spans are on
//! character boundaries, sorted and disjoint; redacting removes every never-tier finding's
//! text, and the redacted text has no never-tier finding left.

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::sync::OnceLock;

use cordon_egress::{Finding, Scanner, SecretValue, Tier, redact};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

const VAULT: &[&str] = &["cordon-canary-7Hq2xVp9Lm", "Tr0ub4dor&3-fakeVault", "maple orbit velvet anchor 42"];

fn scanner() -> &'static Scanner {
    static SCANNER: OnceLock<Scanner> = OnceLock::new();
    SCANNER.get_or_init(|| Scanner::new(&VAULT.iter().map(|&v| SecretValue::from(v)).collect::<Vec<_>>()))
}

/// Pieces hostile text is made of: secrets and their near misses, digit runs, separators,
/// multi-byte characters, the starts of every format.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("4539 1488 0343 6467".to_owned()),
        Just("DE35 7344 7227 8292 7803 31".to_owned()),
        Just("password: h7#Kd92!vQe".to_owned()),
        Just("ghp_xuENYxnzXW4GiFBkiu9GnfuDeWWxqexBodxE".to_owned()),
        Just("-----BEGIN RSA PRIVATE KEY-----\n".to_owned()),
        Just("-----END RSA PRIVATE KEY-----".to_owned()),
        Just("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln".to_owned()),
        Just("cordon-canary-7Hq2xVp9Lm".to_owned()),
        Just("Y29yZG9uLWNhbmFyeS03SHEyeFZwOUxt".to_owned()),
        Just("%63%6F%72".to_owned()),
        Just("routing 021000021 account 12345678".to_owned()),
        Just("214-35-9012".to_owned()),
        Just("I'm diabetic and my salary is $54,000".to_owned()),
        Just("14 Larchfield Road".to_owned()),
        Just("48.85837, 2.29448".to_owned()),
        "[0-9 -]{0,60}",
        "[A-Za-z0-9+/=_-]{0,60}",
        "\\PC{0,20}",
        "[éß€😀\u{200b}\u{301}%]{0,8}",
        Just(" ".to_owned()),
        Just("\n".to_owned()),
    ]
}

fn hostile_text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..12).prop_map(|pieces| pieces.concat())
}

fn well_formed(text: &str, findings: &[Finding]) {
    for f in findings {
        assert!(f.span.start < f.span.end && f.span.end <= text.len(), "{f:?} in {} bytes", text.len());
        assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end), "{f:?}");
    }
    for pair in findings.windows(2) {
        assert!(pair[0].span.end <= pair[1].span.start, "{:?} and {:?} overlap or are out of order", pair[0], pair[1]);
    }
}

const CASES: u32 = 600;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn any_text_scans_without_panic_to_disjoint_spans_on_char_boundaries(text in "\\PC{0,300}") {
        well_formed(&text, &scanner().scan(&text));
    }

    #[test]
    fn hostile_text_scans_to_disjoint_spans_and_redacts_clean(text in hostile_text()) {
        let findings = scanner().scan(&text);
        well_formed(&text, &findings);
        let never: Vec<&Finding> = findings.iter().filter(|f| f.category.tier() == Tier::Never).collect();
        let redacted = redact(&text, &findings);
        for f in &never {
            let original = &text[f.span.clone()];
            prop_assert!(!redacted.contains(original), "{:?} still in {redacted:?}", f.category);
        }
        let again = scanner().scan_never(&redacted);
        prop_assert!(again.is_empty(), "never-tier findings {again:?} left in {redacted:?}");
    }
}

/// The redaction properties are only worth something if the hostile texts meet the never
/// tier: the same generator, counted.
#[test]
fn the_hostile_texts_meet_the_never_tier() {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(CASES));
    let mut with_never = 0;
    for _ in 0..CASES {
        let text = hostile_text().new_tree(&mut runner).unwrap().current();
        if scanner().scan(&text).iter().any(|f| f.category.tier() == Tier::Never) {
            with_never += 1;
        }
    }
    assert!(with_never >= CASES as usize / 4, "only {with_never} of {CASES} hostile texts had a never-tier finding");
}

#[test]
fn huge_digit_runs_and_repeated_starts_scan_in_time_proportional_to_length() {
    // Each shape repeated to 200 KB: a scan quadratic in it (a value read to the end of the
    // text, a bounded repetition that sends the regex to its slow engine) would not finish.
    // In a release build each shape scans at 10 to 50 MB/s.
    let shapes = ["1 ", "4", "-----BEGIN PRIVATE KEY-----\n", "eyJ", "DE89 ", "password=", "%63", "ghp_", "a1B2"];
    for shape in shapes {
        let text = shape.repeat(200_000 / shape.len());
        let findings = scanner().scan(&text);
        well_formed(&text, &findings);
    }
}
