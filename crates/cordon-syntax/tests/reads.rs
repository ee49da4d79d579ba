//! `Expr::reads_once`: how many times an expression reads a local, where a compiler may move
//! the local's value out at a single read; nothing where a read could run more than once or a
//! hole could show the local.
#![allow(clippy::unwrap_used, clippy::panic)]

use cordon_syntax::ast::ExprKind;
use cordon_syntax::{FileId, parse};

/// `reads_once("s")` of the closure body in `let f = |s, i| BODY;`.
fn reads(body: &str) -> Option<usize> {
    let parsed = parse(FileId(0), &format!("let f = |s, i| {body};"));
    assert!(parsed.diagnostics.is_empty(), "{body}: {:?}", parsed.diagnostics);
    let cordon_syntax::ast::Stmt::Let { value, .. } = &parsed.module.body.stmts[0] else { panic!() };
    let ExprKind::Closure { body, .. } = &value.kind else { panic!() };
    body.reads_once("s")
}

#[test]
fn reads_are_counted_where_each_runs_at_most_once() {
    assert_eq!(reads("s + \"x\""), Some(1));
    assert_eq!(reads("i + 1"), Some(0));
    assert_eq!(reads("{ let c = i.to_string(); s + c }"), Some(1));
    assert_eq!(reads("if i > 0 { s } else { \"\" }"), Some(1));
    assert_eq!(reads("match i { 0 => s, _ => s + \"x\" }"), Some(2));
    assert_eq!(reads("s + s"), Some(2));
    // A read that may run again, or a name bound again, or a hole that shows every local.
    assert_eq!(reads("[1, 2].map(|k| s + \"x\").len()"), None);
    assert_eq!(reads("{ for k in [1] { s.len(); } s }"), None);
    assert_eq!(reads("{ let s = \"y\"; s }"), None);
    assert_eq!(reads("match i { s => s }"), None);
    assert_eq!(reads("agent[String](\"go on\") + s"), None);
    // A closure or a loop that does not mention it is no obstacle.
    assert_eq!(reads("[1].map(|k| k + 1).len().to_string() + s"), Some(1));
}
