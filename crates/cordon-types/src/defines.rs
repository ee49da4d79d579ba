//! Which conjuncts of a refinement define a measure of the refined value: `m(var) == e` (either
//! side), `m(var)` and `!m(var)`. A tool's result so refined tells the host the measure of the
//! value it made (`-> {s2: Session | tainted(s2) == tainted(s)}`), so the runtime records it;
//! found here, once, with the refinement's tree in hand, so no later stage reads the predicate's
//! syntax to find them.

use std::sync::Arc;

use cordon_syntax::ast::{BinOp, Expr, ExprKind, UnOp};

use crate::declared::MeasureDefinition;

/// The measures of `var` that the conjuncts of `pred` define, in the order written.
pub fn measure_definitions(var: &str, pred: &Expr) -> Vec<MeasureDefinition> {
    let mut out = Vec::new();
    for conjunct in conjuncts(pred) {
        if let Some((measure, value)) = definition(conjunct, var) {
            let value = match value {
                Definition::Expr(e) => e.clone(),
                Definition::Literal(b) => Expr { id: conjunct.id, kind: ExprKind::Bool(b), span: conjunct.span },
            };
            out.push(MeasureDefinition { measure: measure.to_string(), value: Arc::new(value) });
        }
    }
    out
}

/// The conjuncts of `e`, left to right (`e` itself if it is not a `&&`). The parser bounds the
/// nesting this recurses on.
fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary { op: BinOp::And, lhs, rhs } => {
            let mut v = conjuncts(lhs);
            v.extend(conjuncts(rhs));
            v
        }
        _ => vec![e],
    }
}

enum Definition<'e> {
    Expr(&'e Expr),
    Literal(bool),
}

/// `m(var) == e` (either side), `m(var)` or `!m(var)`: the measure `m` of the refined value.
fn definition<'e>(e: &'e Expr, var: &str) -> Option<(&'e str, Definition<'e>)> {
    let applied = |x: &'e Expr| -> Option<&'e str> {
        match &x.kind {
            ExprKind::Call { callee, args } => match (&callee.kind, args.as_slice()) {
                (ExprKind::Name(m), [a]) if matches!(&a.kind, ExprKind::Name(v) if v.name == var) => Some(&m.name),
                _ => None,
            },
            _ => None,
        }
    };
    match &e.kind {
        ExprKind::Binary { op: BinOp::Eq, lhs, rhs } => {
            if let Some(m) = applied(lhs) {
                return Some((m, Definition::Expr(rhs)));
            }
            applied(rhs).map(|m| (m, Definition::Expr(lhs)))
        }
        ExprKind::Unary { op: UnOp::Not, operand } => applied(operand).map(|m| (m, Definition::Literal(false))),
        _ => applied(e).map(|m| (m, Definition::Literal(true))),
    }
}
