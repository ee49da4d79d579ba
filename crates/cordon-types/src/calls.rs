//! What each call of a checked program calls, as the checker resolved it. A name in call
//! position becomes a function, a builtin, a measure, a constructor, a tool or a value exactly
//! once, here, with the scope and the types in hand; the compiler and the static analysis read
//! the answer for the call's node instead of resolving the name again (where they might answer
//! differently: a capability's tool called `filter` is not the builtin `filter`).

use std::collections::HashMap;

use cordon_syntax::ast::Expr;
use cordon_syntax::{Builtin, FileId};
use serde::{Deserialize, Serialize};

/// An expression: its file and its node in that file's parse, by which the checker's records
/// of what it resolved are kept (a call's callee here, a cast's target in `casts.rs`). A node,
/// not a span: the parser's desugaring makes calls that share a span (`f"{t.len()}"` calls
/// `to_string` on `t.len()`, over the same text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ExprSite(FileId, u32);

impl ExprSite {
    pub fn of(expr: &Expr) -> ExprSite {
        ExprSite(expr.span.file, expr.id.0)
    }
}

/// What a call `f(..)` or a method call `x.f(..)` calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Callee {
    /// A value: a closure or function value in scope, or any other expression in call position.
    Value,
    /// The function of that name that a policy, the plan or a fill declares.
    Function,
    /// The measure of that name (only in a refinement): the host's value for it.
    Measure,
    /// `Some`, `Ok` or `Err`.
    Constructor,
    /// A builtin; in a policy's `@label` values, the label functions too.
    Builtin(Builtin),
    /// The tool of that name of the capability the receiver holds.
    Tool,
}

/// The callee of every call the checker resolved.
pub type Calls = BySite<Callee>;

/// What the checker resolved at each expression of one kind (a call's callee, a cast's target),
/// by the expression's node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BySite<T>(HashMap<ExprSite, T>);

impl<T> Default for BySite<T> {
    fn default() -> BySite<T> {
        BySite(HashMap::new())
    }
}

impl<T> BySite<T> {
    /// What the checker resolved at `expr`, if it resolved it.
    pub fn get(&self, expr: &Expr) -> Option<&T> {
        self.0.get(&ExprSite::of(expr))
    }

    /// Records that the checker resolved `expr` to `resolved`.
    pub(crate) fn record(&mut self, expr: &Expr, resolved: T) {
        self.0.insert(ExprSite::of(expr), resolved);
    }
}

/// Written as a list in the order of the sites, so that the same record is always written the
/// same way.
impl<T: Serialize> Serialize for BySite<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut all: Vec<(&ExprSite, &T)> = self.0.iter().collect();
        all.sort_by_key(|(site, _)| **site);
        s.collect_seq(all)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for BySite<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<BySite<T>, D::Error> {
        Ok(BySite(Vec::<(ExprSite, T)>::deserialize(d)?.into_iter().collect()))
    }
}
