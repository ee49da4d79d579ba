//! The parser's work grows linearly with its input: for large, broken inputs of many shapes, four
//! times the input may take at most five times the heap allocations (dhat's counts: the same on
//! every machine, unlike a clock). Quadratic behaviour would take sixteen times. This file holds
//! one test, because the counting allocator is the whole test binary's.

use cordon_syntax::{FileId, parse};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// A unit of input and how often it is repeated in the smaller input.
const SHAPES: &[(&str, usize)] = &[
    ("let x = f(1, 2) + [a, b].len() * 3;\n", 2_000),
    ("x", 40_000),
    (")", 20_000),
    ("} let", 5_000),
    ("( ; ", 10_000),
    ("fn f( ", 5_000),
    ("capability C { @ ", 3_000),
    ("match x { 1 2 ", 3_000),
    ("\"", 10_001),
    ("/*", 10_000),
    ("a.0.1", 10_000),
    ("tool t() @a ", 5_000),
    ("if a { b } else ", 3_000),
    ("let (a, b): {v: Int | v > 0} = ", 3_000),
];

fn allocations(src: &str) -> u64 {
    let before = dhat::HeapStats::get().total_blocks;
    let parsed = parse(FileId(0), src);
    let after = dhat::HeapStats::get().total_blocks;
    drop(parsed);
    after - before
}

#[test]
fn big_inputs_parse_in_linearly_many_allocations() {
    let _profiler = dhat::Profiler::builder().testing().build();
    for &(unit, n) in SHAPES {
        let (small, large) = (unit.repeat(n), unit.repeat(4 * n));
        let (a, b) = (allocations(&small), allocations(&large));
        assert!(b <= 5 * a.max(1), "{unit:?}: {a} allocations for {n} repeats, {b} for {}: not linear", 4 * n);
    }
}
