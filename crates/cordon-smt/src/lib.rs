//! Predicate logic as plain data, and the Z3 backend that decides it.
//!
//! The type checker builds a [`Query`] (declarations, hypotheses and a goal) for each
//! refinement obligation and asks [`Solver::check`] whether the hypotheses imply the goal. The
//! query is hashable data, so answers are cached: asking the same question twice costs a lookup.
//! A timeout or an `unknown` from Z3 is reported as [`Answer::Unknown`], which callers must treat
//! as a rejection.
//!
//! ```
//! use cordon_smt::{Answer, FuncDecl, Query, Solver, Sort, Term};
//!
//! let i = || Term::Var("i".into(), Sort::Int);
//! let xs = Term::Var("xs".into(), Sort::Named("List".into()));
//! let len_xs = Term::App("len".into(), vec![xs]);
//! // 0 <= i && i < len(xs)  ⇒  i + 1 <= len(xs)
//! let query = Query {
//!     funcs: vec![FuncDecl { name: "len".into(), params: vec![Sort::Named("List".into())], ret: Sort::Int }],
//!     hypotheses: vec![
//!         Term::Le(Box::new(Term::Int(0)), Box::new(i())),
//!         Term::Lt(Box::new(i()), Box::new(len_xs.clone())),
//!     ],
//!     goal: Term::Le(Box::new(Term::Add(vec![i(), Term::Int(1)])), Box::new(len_xs)),
//! };
//! let mut solver = Solver::new(1_000);
//! assert_eq!(solver.check(&query), Answer::Valid);
//!
//! // i < len(xs)  ⇒  i < 3 is not valid; the counterexample names every constant and the
//! // function applications of the query.
//! let query = Query {
//!     hypotheses: vec![query.hypotheses[1].clone()],
//!     goal: Term::Lt(Box::new(i()), Box::new(Term::Int(3))),
//!     ..query
//! };
//! let Answer::Invalid { counterexample } = solver.check(&query) else { panic!() };
//! let names: Vec<&str> = counterexample.iter().map(|(name, _)| name.as_str()).collect();
//! assert_eq!(names, ["i", "len(xs)", "xs"]);
//! ```
//!
//! Modules: `sortcheck` refuses ill-sorted queries before anything reaches Z3, `encode` turns a
//! well-sorted query into Z3 terms, `backend` decides it (cache, choice of logic, time limit),
//! `counterexample` reads a model back, and `display` prints terms for people.

mod backend;
mod counterexample;
mod display;
mod encode;
mod sortcheck;

use std::sync::Arc;

pub use backend::{DEFAULT_TIMEOUT_MS, Solver, SolverStats};

/// The sort of a term.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sort {
    Bool,
    Int,
    Real,
    String,
    /// An uninterpreted sort, by name (records, tuples, lists, host types).
    Named(String),
}

/// An uninterpreted function: a measure, a record field selector, a list's length.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FuncDecl {
    pub name: String,
    pub params: Vec<Sort>,
    pub ret: Sort,
}

/// A term. A checker keeps the facts of every line of a long plan, so a term is small (48
/// bytes): names are shared (`Arc<str>`, cloned without copying, as a constant occurs in many
/// facts) and the rare wide literal is boxed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// A free constant (a program variable or a fresh value).
    Var(Arc<str>, Sort),
    Bool(bool),
    Int(i64),
    Real(Box<Rational>),
    Str(String),
    /// Application of a function declared in [`Query::funcs`].
    App(Arc<str>, Vec<Term>),
    Not(Box<Term>),
    And(Vec<Term>),
    Or(Vec<Term>),
    Implies(Box<Term>, Box<Term>),
    Eq(Box<Term>, Box<Term>),
    Ite(Box<Term>, Box<Term>, Box<Term>),
    Lt(Box<Term>, Box<Term>),
    Le(Box<Term>, Box<Term>),
    Add(Vec<Term>),
    Sub(Box<Term>, Box<Term>),
    /// Multiplication; the checker only emits it with a constant operand (linear arithmetic).
    Mul(Box<Term>, Box<Term>),
    Neg(Box<Term>),
    /// Length of a string.
    StrLen(Box<Term>),
    /// Concatenation of strings.
    StrConcat(Vec<Term>),
    /// Whether the first string starts with, ends with, or contains the second.
    StrTest(StrTest, Box<Term>, Box<Term>),
}

// A checker keeps a term tree for every fact of a plan: a term that grew would grow them all.
const _: () = assert!(std::mem::size_of::<Term>() <= 48);

/// `num / den` (den != 0): wide enough for any `Decimal` (a 96-bit integer over `10^28`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rational {
    pub num: i128,
    pub den: i128,
}

/// What [`Term::StrTest`] asks of two strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StrTest {
    StartsWith,
    EndsWith,
    Contains,
}

impl StrTest {
    /// The method the language writes it as.
    pub fn name(self) -> &'static str {
        match self {
            StrTest::StartsWith => "starts_with",
            StrTest::EndsWith => "ends_with",
            StrTest::Contains => "contains",
        }
    }

    /// Decides it on two known strings.
    pub fn holds(self, s: &str, t: &str) -> bool {
        match self {
            StrTest::StartsWith => s.starts_with(t),
            StrTest::EndsWith => s.ends_with(t),
            StrTest::Contains => s.contains(t),
        }
    }
}

impl Term {
    /// The real `num / den` (den != 0).
    pub fn real(num: i128, den: i128) -> Term {
        Term::Real(Box::new(Rational { num, den }))
    }

    /// Calls `f` on each direct subterm, in order.
    pub fn each_child<'t>(&'t self, mut f: impl FnMut(&'t Term)) {
        match self {
            Term::Var(..) | Term::Bool(_) | Term::Int(_) | Term::Real(..) | Term::Str(_) => {}
            Term::App(_, args) | Term::And(args) | Term::Or(args) | Term::Add(args) | Term::StrConcat(args) => {
                args.iter().for_each(f);
            }
            Term::Not(a) | Term::Neg(a) | Term::StrLen(a) => f(a),
            Term::Implies(a, b)
            | Term::Eq(a, b)
            | Term::Lt(a, b)
            | Term::Le(a, b)
            | Term::Sub(a, b)
            | Term::Mul(a, b)
            | Term::StrTest(_, a, b) => {
                f(a);
                f(b);
            }
            Term::Ite(a, b, c) => {
                f(a);
                f(b);
                f(c);
            }
        }
    }

    /// The direct subterms, in order.
    pub fn children(&self) -> Vec<&Term> {
        let mut children = Vec::new();
        self.each_child(|c| children.push(c));
        children
    }

    /// Calls `f` on this term and every subterm, parents before children (allocating nothing).
    pub fn walk<'t>(&'t self, f: &mut impl FnMut(&'t Term)) {
        f(self);
        self.each_child(|c| c.walk(f));
    }
}

/// Is `hypotheses ⇒ goal` valid? Plain data: hash it, cache it, log it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Query {
    pub funcs: Vec<FuncDecl>,
    pub hypotheses: Vec<Term>,
    pub goal: Term,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The goal holds whenever the hypotheses do.
    Valid,
    /// A model of the hypotheses where the goal is false: each free constant that occurs in
    /// the query with its value, sorted by name.
    Invalid { counterexample: Vec<(String, String)> },
    /// The solver timed out or gave up. Never to be read as `Valid`.
    Unknown { reason: String },
}
