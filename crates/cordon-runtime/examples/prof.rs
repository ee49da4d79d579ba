//! Temporary profiling harness (not to be committed): runs one bench program N times.
#![allow(clippy::panic, clippy::unwrap_used)]
use cordon_runtime::{Config, Program, Run, Sessions, Step};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args[1].as_str();
    let n: usize = args.get(2).map_or(1, |s| s.parse().unwrap());
    let src = match name {
        "fold_sq_mod" => "range(0, 200000).fold(0, |acc: Int, i: Int| acc + i * i % 7)",
        "map_filter_sum" => "range(0, 100000).map(|x: Int| x * 3 + 1).filter(|x: Int| x % 2 == 0).sum()",
        "fib_22" => "fn fib(n: Int) -> Int { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }\nfib(22)",
        "records" => {
            "type Item = { id: Int, price: Int, active: Bool }\nlet items = range(0, 50000).map(|i: Int| Item { id: i, price: i * 7 % 100, active: i % 3 != 0 });\nitems.filter(|it: Item| it.active).fold(0, |acc: Int, it: Item| acc + it.price * it.id % 13)"
        }
        "string_join" => "range(0, 50000).map(|i: Int| \"item\" + i.to_string()).join(\", \").len()",
        _ => panic!("unknown"),
    };
    let mut sources = SourceMap::new();
    let plan = sources.add("p.cord", src);
    let outcome = check(&sources, &[], Some(plan), &CheckOptions::default());
    let program = Program::new(outcome.program.as_ref().unwrap()).unwrap();
    let config = Config::default();
    for _ in 0..n {
        let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
        match run.proceed() {
            Ok(Step::Done(v)) => std::hint::black_box(v),
            _ => panic!(),
        };
    }
}
