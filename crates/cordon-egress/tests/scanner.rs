//! The scanner's contract, case by case: the attacks first (a vault secret dressed up, a
//! finding that must not echo its text), then the API a pipeline stage uses (categories by
//! name, redaction, a classifier plugged in).

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_egress::{Category, Classifier, Finding, Scanner, SecretValue, Tier, redact};

const SECRET: &str = "cordon-canary-7Hq2xVp9Lm";

fn scanner() -> Scanner {
    Scanner::new(&[SecretValue::from(SECRET)])
}

/// The categories `text` is found to hold, in order.
fn found(text: &str) -> Vec<Category> {
    scanner().scan(text).iter().map(|f| f.category).collect()
}

#[test]
fn a_vault_secret_is_found_in_every_form() {
    let forms = [
        SECRET.to_owned(),
        "Y29yZG9uLWNhbmFyeS03SHEyeFZwOUxt".to_owned(), // base64, offset 0
        "YWRtaW46Y29yZG9uLWNhbmFyeS03SHEyeFZwOUxt".to_owned(), // base64 after "admin:"
        "dTpjb3Jkb24tY2FuYXJ5LTdIcTJ4VnA5TG0=".to_owned(), // base64 after "u:"
        "YWJjb3Jkb24tY2FuYXJ5LTdIcTJ4VnA5TG0_eA==".to_owned(), // url-safe, after "ab"
        "636f72646f6e2d63616e6172792d37487132785670394c6d".to_owned(),
        "636F72646F6E2D63616E6172792D37487132785670394C6D".to_owned(),
        "%63%6F%72%64%6F%6E%2D%63%61%6E%61%72%79%2D%37%48%71%32%78%56%70%39%4C%6D".to_owned(),
        SECRET.chars().map(String::from).collect::<Vec<_>>().join(" "),
        SECRET.chars().map(String::from).collect::<Vec<_>>().join("."),
        "cordon-canary-\n7Hq2x\nVp9Lm".to_owned(),
    ];
    for form in forms {
        let text = format!("here it is: {form} (thanks)");
        assert_eq!(found(&text), [Category::VaultSecret], "{form}");
    }
}

#[test]
fn a_near_miss_of_a_vault_secret_is_not_it() {
    assert!(found("the old one was cordon-canary-7Hq2xVp9 but it was rotated").is_empty());
}

#[test]
fn a_finding_and_a_secret_value_never_print_the_text() {
    let text = format!("token {SECRET} and card 4539 1488 0343 6467");
    let findings = scanner().scan(&text);
    let printed = format!("{findings:?} {:?} {:?}", SecretValue::from(SECRET), scanner());
    assert!(!printed.contains(SECRET) && !printed.contains("4539"), "{printed}");
    assert!(printed.contains("SecretValue(..)"), "{printed}");
}

#[test]
fn the_never_tier_wins_an_overlap_with_the_consent_tier() {
    // A random-looking string (consent: high entropy) that is a vault secret (never).
    let scanner = Scanner::new(&[SecretValue::from("uGVNPVdpJv9l1T3jq56ZK3qUddOhISyA")]);
    let findings = scanner.scan("API_KEY=uGVNPVdpJv9l1T3jq56ZK3qUddOhISyA");
    assert_eq!(findings.iter().map(|f| f.category).collect::<Vec<_>>(), [Category::VaultSecret]);
}

#[test]
fn documented_test_values_are_not_findings() {
    for text in [
        "use 4242 4242 4242 4242 in the sandbox",
        "Visa 4111 1111 1111 1111",
        "AKIAIOSFODNN7EXAMPLE",
        "Example IBAN: GB82 WEST 1234 5698 7654 32",
        "a National Insurance number looks like QQ 12 34 56 C",
    ] {
        assert!(found(text).is_empty(), "{text}: {:?}", found(text));
    }
}

#[test]
fn each_never_tier_format_is_found() {
    let cases: &[(&str, Category)] = &[
        ("card 4539-1488-0343-6467", Category::CardNumber),
        ("IBAN DE35 7344 7227 8292 7803 31.", Category::Iban),
        ("SSN 214-35-9012", Category::UsSsn),
        ("NI number PM 42 81 87 C", Category::UkNino),
        ("DNI 46248112B", Category::EsDni),
        ("DB_PASSWORD=Qx7!mPz2rL", Category::Password),
        ("xoxb-94059590768-095162925618-Dlq762RoLh6jAlrNiW1LFiIr", Category::SlackToken),
        ("AKIAPZHENNCLPW7E28WH", Category::AwsAccessKey),
        ("sk_live_mftZvpqKhrivKX8fuIKibYe9", Category::StripeKey),
    ];
    for &(text, category) in cases {
        assert_eq!(found(text), [category], "{text}");
    }
}

#[test]
fn prose_about_passwords_and_order_numbers_are_not_findings() {
    for text in [
        "Enter your password and click Sign in.",
        "the wifi password is on the fridge",
        "password: ${DB_PASSWORD}",
        "fn login(user: &str, password: &str)",
        "order 5130811033128201 has shipped",
        "IMEI 490154203237518",
        "call 555-12-3456",
        "I went to the doctor's website but it was down",
    ] {
        assert!(found(text).is_empty(), "{text}: {:?}", found(text));
    }
}

#[test]
fn redaction_replaces_each_finding_by_its_placeholder() {
    let text = "card 4539 1488 0343 6467, I was diagnosed with diabetes, password: h7#Kd92!vQe";
    let findings = scanner().scan(text);
    assert_eq!(redact(text, &findings), "card [card number], I was [health detail], password: [password]");
    let tiers: Vec<Tier> = findings.iter().map(|f| f.category.tier()).collect();
    assert_eq!(tiers, [Tier::Never, Tier::Consent, Tier::Never]);
}

#[test]
fn redaction_skips_findings_that_do_not_fit_the_text() {
    let bad = [
        Finding::new(Category::Health, std::ops::Range { start: 3, end: 1 }),
        Finding::new(Category::Health, 2..99),
        Finding::new(Category::Jwt, 1..2),
    ];
    assert_eq!(redact("héllo", &bad), "héllo");
}

#[test]
fn every_category_has_a_stable_name_that_parses_back() {
    for category in Category::ALL {
        assert_eq!(category.name().parse::<Category>(), Ok(category));
        assert!(category.placeholder().starts_with('[') && category.placeholder().ends_with(']'));
    }
    assert!("credit-card".parse::<Category>().unwrap_err().to_string().contains("credit-card"));
}

/// A classifier from outside: everything between the first and the last `*` is politics.
#[derive(Debug)]
struct Stars;

impl Classifier for Stars {
    fn classify(&self, text: &str) -> Vec<Finding> {
        match (text.find('*'), text.rfind('*')) {
            (Some(a), Some(b)) if a < b => vec![Finding::new(Category::Politics, a..b + 1)],
            _ => Vec::new(),
        }
    }
}

/// One that returns what it should not: a never-tier category, spans off the text.
#[derive(Debug)]
struct Broken;

impl Classifier for Broken {
    fn classify(&self, _: &str) -> Vec<Finding> {
        vec![
            Finding::new(Category::CardNumber, 0..4),
            Finding::new(Category::Health, 1..2),
            Finding::new(Category::Religion, 0..500),
        ]
    }
}

#[test]
fn a_classifier_plugged_in_replaces_the_lexicon() {
    let scanner = scanner().with_classifier(Box::new(Stars));
    assert_eq!(
        scanner.scan("I'm diabetic, *vote*").iter().map(|f| f.category).collect::<Vec<_>>(),
        [Category::Politics]
    );
}

#[test]
fn a_classifier_cannot_claim_the_never_tier_or_spans_off_the_text() {
    let scanner = scanner().with_classifier(Box::new(Broken));
    let findings = scanner.scan("é text");
    assert!(findings.iter().all(|f| f.category.tier() == Tier::Consent && f.span.end <= 7), "{findings:?}");
}

#[test]
fn a_new_scanner_used_first_by_many_threads_at_once_finds_what_one_thread_finds() {
    // The detectors are compiled at the first text: threads racing to be first must all get
    // the same detectors, and each its full findings.
    let text = format!("my card 4539 1488 0343 6467, {SECRET}, and I have been diagnosed with diabetes");
    let alone = scanner().scan(&text);
    assert_eq!(alone.len(), 3, "{alone:?}");
    let shared = scanner();
    std::thread::scope(|threads| {
        let each: Vec<_> = (0..8).map(|_| threads.spawn(|| shared.scan(&text))).collect();
        for found in each {
            assert_eq!(found.join().unwrap(), alone);
        }
    });
    assert_eq!(shared.scan_never(&text).len(), 2);
}
