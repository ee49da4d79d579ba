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

    /// The file the expression is written in.
    pub(crate) fn file(self) -> FileId {
        self.0
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<(ExprSite, Callee)>", into = "Vec<(ExprSite, Callee)>")]
pub struct Calls(HashMap<ExprSite, Callee>);

impl Calls {
    /// What the call expression `call` calls, if the checker resolved it.
    pub fn get(&self, call: &Expr) -> Option<Callee> {
        self.0.get(&ExprSite::of(call)).copied()
    }

    pub(crate) fn record(&mut self, call: &Expr, callee: Callee) {
        self.0.insert(ExprSite::of(call), callee);
    }

    /// The calls written in `file`.
    pub(crate) fn in_file(&self, file: FileId) -> Calls {
        Calls(self.0.iter().filter(|(site, _)| site.file() == file).map(|(site, c)| (*site, *c)).collect())
    }
}

impl From<Vec<(ExprSite, Callee)>> for Calls {
    fn from(calls: Vec<(ExprSite, Callee)>) -> Calls {
        Calls(calls.into_iter().collect())
    }
}

impl From<Calls> for Vec<(ExprSite, Callee)> {
    /// In order, so that the same calls are always written the same way.
    fn from(calls: Calls) -> Vec<(ExprSite, Callee)> {
        let mut all: Vec<(ExprSite, Callee)> = calls.0.into_iter().collect();
        all.sort_by_key(|(s, _)| *s);
        all
    }
}
