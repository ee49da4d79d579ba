//! Types as the checker sees them: resolved names, inference variables, and refinements that
//! carry their predicate (a syntax tree) with the logical terms its free names stand for.

use std::fmt;
use std::rc::Rc;

use cordon_smt::Term;
use cordon_syntax::Span;
use cordon_syntax::ast::Expr;

#[derive(Clone, Debug)]
pub enum Ty {
    Int,
    Float,
    /// An exact decimal (`rust_decimal`): a real number in the logic.
    Decimal,
    /// A calendar date, an instant (UTC) and a signed duration: integers in the logic (days
    /// since 1970, nanoseconds since 1970, nanoseconds).
    Date,
    DateTime,
    Duration,
    Bool,
    Str,
    /// `()`
    Unit,
    Tuple(Vec<Ty>),
    List(Box<Ty>),
    Option(Box<Ty>),
    Result(Box<Ty>, Box<Ty>),
    /// `Map[K, V]`: persistent, its keys ordered (so `K` is a type `<` orders).
    Map(Box<Ty>, Box<Ty>),
    /// A named record or enum declared in a policy or the plan.
    Record(Rc<str>),
    Enum(Rc<str>),
    /// A `linear type`.
    Linear(Rc<str>),
    /// An `opaque type` with its type arguments.
    Opaque(Rc<str>, Vec<Ty>),
    /// A capability.
    Cap(Rc<str>),
    Fn(Rc<FnTy>),
    Refined(Rc<Refinement>),
    /// An inference variable, resolved through the checker's substitution.
    Var(u32),
    /// The type of an expression that already has an error: compatible with everything, so one
    /// mistake is reported once.
    Error,
}

#[derive(Clone, Debug)]
pub struct FnTy {
    pub params: Vec<Ty>,
    pub ret: Ty,
    /// A closure that captured a capability: it may be passed down and called, never stored
    /// or returned.
    pub second_class: bool,
}

/// `{var: base | pred}`. `env` lists the other names the predicate may mention: the parameters
/// of the signature it was written in (their terms are filled in when the signature is
/// instantiated at a call or entered in a body) and the local bindings it captured.
#[derive(Clone, Debug)]
pub struct Refinement {
    pub base: Ty,
    pub var: String,
    pub pred: Rc<Expr>,
    /// Source text of the predicate, for messages.
    pub text: Rc<str>,
    /// Where the refinement was written.
    pub span: Span,
    pub env: Vec<(String, Ty, Option<Term>)>,
}

impl Ty {
    /// The type without a top-level refinement.
    pub fn base(&self) -> &Ty {
        match self {
            Ty::Refined(r) => r.base.base(),
            t => t,
        }
    }

    pub fn list(t: Ty) -> Ty {
        Ty::List(Box::new(t))
    }

    pub fn option(t: Ty) -> Ty {
        Ty::Option(Box::new(t))
    }

    pub fn func(params: Vec<Ty>, ret: Ty) -> Ty {
        Ty::Fn(Rc::new(FnTy { params, ret, second_class: false }))
    }

    /// The type of a function parameter that only calls its argument (the builtins' `map`,
    /// `filter`, ...): it also takes closures that captured a capability.
    pub fn local_func(params: Vec<Ty>, ret: Ty) -> Ty {
        Ty::Fn(Rc::new(FnTy { params, ret, second_class: true }))
    }

    pub fn is_error(&self) -> bool {
        matches!(self.base(), Ty::Error)
    }

    /// Drops the refinements that describe values (at the top and inside data), used where
    /// they cannot follow, e.g. type arguments of polymorphic builtins. Function types keep
    /// theirs: a refined parameter is an obligation on every caller, not a fact to forget.
    pub fn strip(&self) -> Ty {
        match self {
            Ty::Refined(r) => r.base.strip(),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(Ty::strip).collect()),
            Ty::List(t) => Ty::list(t.strip()),
            Ty::Option(t) => Ty::option(t.strip()),
            Ty::Result(a, b) => Ty::Result(Box::new(a.strip()), Box::new(b.strip())),
            Ty::Map(a, b) => Ty::Map(Box::new(a.strip()), Box::new(b.strip())),
            Ty::Opaque(n, args) => Ty::Opaque(n.clone(), args.iter().map(Ty::strip).collect()),
            t => t.clone(),
        }
    }

    /// Does any part of the type (function parameters and results included) satisfy `pred`?
    pub fn any_part(&self, pred: &mut dyn FnMut(&Ty) -> bool) -> bool {
        if pred(self) {
            return true;
        }
        match self {
            Ty::Refined(r) => r.base.any_part(pred),
            Ty::Tuple(ts) | Ty::Opaque(_, ts) => ts.iter().any(|t| t.any_part(pred)),
            Ty::List(t) | Ty::Option(t) => t.any_part(pred),
            Ty::Result(a, b) | Ty::Map(a, b) => a.any_part(pred) || b.any_part(pred),
            Ty::Fn(f) => f.params.iter().any(|t| t.any_part(pred)) || f.ret.any_part(pred),
            _ => false,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, ts: &[Ty]) -> fmt::Result {
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{t}")?;
            }
            Ok(())
        }
        match self {
            Ty::Int => f.write_str("Int"),
            Ty::Float => f.write_str("Float"),
            Ty::Decimal => f.write_str("Decimal"),
            Ty::Date => f.write_str("Date"),
            Ty::DateTime => f.write_str("DateTime"),
            Ty::Duration => f.write_str("Duration"),
            Ty::Bool => f.write_str("Bool"),
            Ty::Str => f.write_str("String"),
            Ty::Unit => f.write_str("()"),
            Ty::Tuple(ts) => {
                f.write_str("(")?;
                list(f, ts)?;
                if ts.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Ty::List(t) => write!(f, "List[{t}]"),
            Ty::Option(t) => write!(f, "Option[{t}]"),
            Ty::Result(a, b) => write!(f, "Result[{a}, {b}]"),
            Ty::Map(a, b) => write!(f, "Map[{a}, {b}]"),
            Ty::Record(n) | Ty::Enum(n) | Ty::Linear(n) | Ty::Cap(n) => f.write_str(n),
            Ty::Opaque(n, args) if args.is_empty() => f.write_str(n),
            Ty::Opaque(n, args) => {
                write!(f, "{n}[")?;
                list(f, args)?;
                f.write_str("]")
            }
            Ty::Fn(ft) => {
                f.write_str("fn(")?;
                list(f, &ft.params)?;
                write!(f, ") -> {}", ft.ret)
            }
            Ty::Refined(r) => write!(f, "{{{}: {} | {}}}", r.var, r.base, r.text),
            Ty::Var(_) => f.write_str("_"),
            Ty::Error => f.write_str("{error}"),
        }
    }
}
