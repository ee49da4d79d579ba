//! The settings of one check ([`CheckOptions`]) and what a host says holds of the entry's
//! inputs ([`EntryFact`]). Low in the crate: the checker's state keeps them, and every pass may
//! read them.

use cordon_smt::Term;

/// Settings of one check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Time Z3 may spend on one refinement obligation before the obligation is rejected.
    pub solver_timeout_ms: u32,
    /// Wall-clock time the whole check may take, type checking and solver together. Once it is
    /// spent the solver is not asked (what only it could prove is `refinement-unknown`) and the
    /// check stops at the next statement with one `check-timeout` error that says where the
    /// time went, so no program can keep the checker busy for long. `0`: spent from the start.
    pub check_timeout_ms: u32,
    /// What holds of the entry's inputs when a plan is checked against the policy's `entry`.
    /// `None` (a plain `cordon check`): the inputs are as on a fresh session, so every measure
    /// with a default has that value on every host-made input. `Some`: exactly these facts
    /// (the host knows the real state of what it will pass); a fact that names no entry
    /// parameter or measure, or has a value of the wrong sort, is an error at the entry.
    pub entry_facts: Option<Vec<EntryFact>>,
    /// Keep each binding's type for [`Outcome::bindings`](crate::Outcome::bindings) (an
    /// editor's hover and completion); off, the check keeps nothing of them.
    pub record_bindings: bool,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions { solver_timeout_ms: 2000, check_timeout_ms: 20_000, entry_facts: None, record_bindings: false }
    }
}

/// `measure(param) == value`, about an input of the entry.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryFact {
    /// The entry parameter.
    pub param: String,
    /// A measure of one parameter, of the parameter's type.
    pub measure: String,
    pub value: FactValue,
}

/// The value of a measure.
#[derive(Clone, Debug, PartialEq)]
pub enum FactValue {
    Bool(bool),
    Int(i64),
    Str(String),
}

impl FactValue {
    /// The value as a literal term.
    pub(crate) fn term(&self) -> Term {
        match self {
            FactValue::Bool(b) => Term::Bool(*b),
            FactValue::Int(n) => Term::Int(*n),
            FactValue::Str(s) => Term::Str(s.clone()),
        }
    }
}
