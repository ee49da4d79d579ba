//! The labelled data set (`tests/data/messages.jsonl`): short messages written for this
//! project, each with its findings given as the exact text they cover. The scanner's findings
//! are compared with the labels: a finding counts when its category is the label's and their
//! spans overlap. Precision and recall, per tier and per category, must reach the floors below.
//!
//! `cargo test -p cordon-egress --test dataset -- --nocapture` prints the table.

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::collections::BTreeMap;
use std::ops::Range;

use cordon_egress::{Category, Finding, Scanner, SecretValue, Tier};
use serde::Deserialize;

/// The canary vault the data set's `vault-secret` messages refer to (synthetic values).
const VAULT: &[&str] =
    &["cordon-canary-7Hq2xVp9Lm", "Tr0ub4dor&3-fakeVault", "vlt_9f2KxQ7mZpR4wT1s", "maple orbit velvet anchor 42"];

/// The floors: (tier, least recall, least precision).
const FLOORS: &[(Tier, f64, f64)] = &[(Tier::Never, 0.99, 0.97), (Tier::Consent, 0.90, 0.85)];

/// The fewest messages the set must have, and the fewest labels of each tier: a floor on
/// what the rates are measured over.
const MIN_MESSAGES: usize = 500;
const MIN_LABELS: usize = 100;

#[derive(Deserialize)]
struct Message {
    kind: String,
    text: String,
    findings: Vec<Label>,
}

#[derive(Deserialize)]
struct Label {
    category: String,
    text: String,
}

fn messages() -> Vec<Message> {
    include_str!("data/messages.jsonl")
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", n + 1)))
        .collect()
}

/// The labels of `message` as findings: each label's text located in the message (a second
/// label with the same text takes its next occurrence).
fn labels(line: usize, message: &Message) -> Vec<Finding> {
    let mut taken: Vec<Range<usize>> = Vec::new();
    message
        .findings
        .iter()
        .map(|label| {
            let category: Category = label.category.parse().unwrap_or_else(|e| panic!("line {line}: {e}"));
            let mut from = 0;
            let span = loop {
                let at = message.text[from..].find(&label.text).map(|i| from + i);
                let at = at.unwrap_or_else(|| panic!("line {line}: {:?} is not in the text", label.text));
                let span = at..at + label.text.len();
                if !taken.contains(&span) {
                    break span;
                }
                from = at + 1;
            };
            taken.push(span.clone());
            Finding::new(category, span)
        })
        .collect()
}

#[derive(Default, Clone, Copy)]
struct Counts {
    labels: usize,
    labels_found: usize,
    findings: usize,
    findings_right: usize,
}

impl Counts {
    fn recall(&self) -> f64 {
        if self.labels == 0 { 1.0 } else { self.labels_found as f64 / self.labels as f64 }
    }
    fn precision(&self) -> f64 {
        if self.findings == 0 { 1.0 } else { self.findings_right as f64 / self.findings as f64 }
    }
    fn add(&mut self, other: Counts) {
        self.labels += other.labels;
        self.labels_found += other.labels_found;
        self.findings += other.findings;
        self.findings_right += other.findings_right;
    }
}

fn matches(a: &Finding, b: &Finding) -> bool {
    a.category == b.category && a.overlaps(b)
}

#[test]
fn the_scanner_reaches_the_floors_on_the_labelled_messages() {
    let vault: Vec<SecretValue> = VAULT.iter().map(|&v| SecretValue::from(v)).collect();
    let scanner = Scanner::new(&vault);
    let messages = messages();
    let mut by_category: BTreeMap<Category, Counts> = BTreeMap::new();
    let mut misses = Vec::new();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, message) in messages.iter().enumerate() {
        let line = i + 1;
        *kinds.entry(message.kind.as_str()).or_default() += 1;
        let expected = labels(line, message);
        let found = scanner.scan(&message.text);
        for label in &expected {
            let counts = by_category.entry(label.category).or_default();
            counts.labels += 1;
            if found.iter().any(|f| matches(f, label)) {
                counts.labels_found += 1;
            } else {
                misses.push(format!("line {line}: missed {} {:?}", label.category, &message.text[label.span.clone()]));
            }
        }
        for finding in &found {
            let counts = by_category.entry(finding.category).or_default();
            counts.findings += 1;
            if expected.iter().any(|l| matches(l, finding)) {
                counts.findings_right += 1;
            } else {
                misses.push(format!(
                    "line {line}: false {} {:?}",
                    finding.category,
                    &message.text[finding.span.clone()]
                ));
            }
        }
    }
    let mut by_tier: BTreeMap<Tier, Counts> = BTreeMap::new();
    for (category, counts) in &by_category {
        by_tier.entry(category.tier()).or_default().add(*counts);
    }
    println!("{}", table(&by_tier, &by_category, messages.len(), &kinds));
    println!("{}", misses.join("\n"));
    assert!(messages.len() >= MIN_MESSAGES, "only {} messages", messages.len());
    for &(tier, recall, precision) in FLOORS {
        let counts = by_tier.get(&tier).copied().unwrap_or_default();
        assert!(counts.labels >= MIN_LABELS, "only {} {} labels", counts.labels, tier.name());
        assert!(counts.recall() >= recall, "{} tier recall {:.3} < {recall}", tier.name(), counts.recall());
        assert!(
            counts.precision() >= precision,
            "{} tier precision {:.3} < {precision}",
            tier.name(),
            counts.precision()
        );
    }
}

fn table(
    by_tier: &BTreeMap<Tier, Counts>,
    by_category: &BTreeMap<Category, Counts>,
    messages: usize,
    kinds: &BTreeMap<&str, usize>,
) -> String {
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let mut out = format!("{messages} messages ({})\n\n", kinds.join(", "));
    out.push_str("| tier / category | labels | found | findings | right | recall | precision |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
    let row = |name: String, c: &Counts| {
        format!(
            "| {name} | {} | {} | {} | {} | {:.3} | {:.3} |\n",
            c.labels,
            c.labels_found,
            c.findings,
            c.findings_right,
            c.recall(),
            c.precision()
        )
    };
    for (tier, counts) in by_tier {
        out.push_str(&row(format!("**{} tier**", tier.name()), counts));
        for (category, counts) in by_category.iter().filter(|(c, _)| c.tier() == *tier) {
            out.push_str(&row(category.name().to_owned(), counts));
        }
    }
    out
}
