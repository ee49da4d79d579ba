//! What the outgoing-data check costs: throughput on the labelled data set's messages
//! concatenated (MB/s), and the time to scan one 2 KB message (aim: at most 20 µs): the data
//! set's first 2 KB (dense with findings), the same of its messages with no finding, and the
//! first with the never tier only. Each with a vault of four secrets. And what a new scanner
//! costs: made (its detectors are compiled at the first text that needs them), then its first
//! scan of that 2 KB message, which compiles them.
//!
//! `cargo bench -p cordon-egress --bench scan`
#![allow(clippy::unwrap_used, clippy::panic)] // a benchmark may fail loudly

use std::hint::black_box;

use cordon_egress::{Scanner, SecretValue};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const VAULT: &[&str] =
    &["cordon-canary-7Hq2xVp9Lm", "Tr0ub4dor&3-fakeVault", "vlt_9f2KxQ7mZpR4wT1s", "maple orbit velvet anchor 42"];

/// The data set's texts (all of them, or only those with no finding), a blank line between.
fn texts(only_clean: bool) -> String {
    let texts: Vec<String> = include_str!("../tests/data/messages.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|m| !only_clean || m["findings"].as_array().unwrap().is_empty())
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect();
    texts.join("\n\n")
}

/// A 2 KB message: the first 2,048 bytes of the corpus, cut at a character boundary.
fn first_2k(corpus: &str) -> &str {
    let mut end = 2048.min(corpus.len());
    while !corpus.is_char_boundary(end) {
        end -= 1;
    }
    &corpus[..end]
}

fn bench(c: &mut Criterion) {
    let vault: Vec<SecretValue> = VAULT.iter().map(|&v| SecretValue::from(v)).collect();
    let scanner = Scanner::new(&vault);
    let corpus = texts(false);
    let clean = texts(true);
    let clean = first_2k(&clean);
    let mut group = c.benchmark_group("scan");
    group.throughput(Throughput::Bytes(corpus.len() as u64));
    group.bench_function("data set", |b| b.iter(|| black_box(scanner.scan(black_box(&corpus)))));
    let message = first_2k(&corpus);
    group.throughput(Throughput::Bytes(message.len() as u64));
    group.bench_function("2 KB message", |b| b.iter(|| black_box(scanner.scan(black_box(message)))));
    group.bench_function("2 KB message with no finding", |b| b.iter(|| black_box(scanner.scan(black_box(clean)))));
    group.bench_function("2 KB message, never tier only", |b| {
        b.iter(|| black_box(scanner.scan_never(black_box(message))))
    });
    group.finish();
    let mut group = c.benchmark_group("new scanner");
    group.sample_size(10);
    group.bench_function("made", |b| b.iter(|| black_box(Scanner::new(&vault))));
    group.bench_function("made, then its first scan of the 2 KB message", |b| {
        b.iter(|| black_box(Scanner::new(&vault).scan(black_box(message))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
