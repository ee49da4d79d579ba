#![allow(clippy::unwrap_used)]
use cordon_syntax::parser::{stack_probe_min, stack_probe_reset};
use cordon_syntax::{FileId, parse};

#[test]
fn probe() {
    let n = 100;
    let inputs = vec![
        ("paren", format!("let x = {}1{};", "(".repeat(n), ")".repeat(n))),
        ("list", format!("let x = {}1{};", "[".repeat(n), "]".repeat(n))),
        ("block stmt", format!("{}1{}", "{".repeat(n), "}".repeat(n))),
        ("block expr", format!("let x = {}1{};", "{".repeat(n), "}".repeat(n))),
        ("refined", format!("let x: {}Int{} = 1;", "{v: ".repeat(n), " | true}".repeat(n))),
        ("neg", format!("let x = {}1;", "-".repeat(n))),
        ("tuple pat", format!("let {}x{} = 1;", "(".repeat(n), ",)".repeat(n))),
        ("list ty", format!("let x: {}Int{} = 1;", "List[".repeat(n), "]".repeat(n))),
        ("closure", format!("let x = {}1;", "|a| ".repeat(n))),
        ("call", format!("let x = {}1{};", "f(".repeat(n), ")".repeat(n))),
        ("if", format!("let x = {}1{};", "if c { ".repeat(n), " }".repeat(n))),
        ("elseif", format!("let x = if a {{ 1 }}{} else {{ 2 }};", " else if a { 1 }".repeat(n))),
        ("match", format!("let x = {}1{};", "match c { _ => ".repeat(n), " }".repeat(n))),
        ("record", format!("let x = {}1{};", "A { f: ".repeat(n), " }".repeat(n))),
        ("rhs", format!("let x = {}1;", "1 + ".repeat(n))),
        ("agent", format!("let x = {}1{};", "agent(".repeat(n), ")".repeat(n))),
    ];
    for (name, src) in inputs {
        let top = stack_probe_reset();
        let p = parse(FileId(0), &src);
        let min = stack_probe_min();
        eprintln!("{name:12}: {:4} bytes/level  diags={}", (top - min) / n, p.diagnostics.len());
    }
}
