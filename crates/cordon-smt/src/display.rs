//! Readable text for sorts and terms.
//!
//! Used to name the function applications in a counterexample (`len(xs)`, `Repo.private(r)`) and
//! in ill-sorted-query messages; callers may use it for diagnostics too. The syntax is close to
//! Cordon's own: `&&`, `||`, `!`, `==>`, `==`, `if c then a else b`, `a ++ b` for concatenation and
//! `len(s)` for a string's length. Operands that are not atoms are parenthesised, so the text is
//! unambiguous without precedence rules.

use std::fmt::{self, Display, Formatter, Write as _};

use crate::{Sort, Term};

impl Display for Sort {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Sort::Bool => f.write_str("Bool"),
            Sort::Int => f.write_str("Int"),
            Sort::Real => f.write_str("Real"),
            Sort::String => f.write_str("String"),
            Sort::Named(name) => f.write_str(name),
        }
    }
}

impl Display for Term {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Term::Var(name, _) => f.write_str(name),
            Term::Bool(b) => write!(f, "{b}"),
            Term::Int(i) => write!(f, "{i}"),
            Term::Real(r) if r.den == 1 => write!(f, "{}", r.num),
            Term::Real(r) => write!(f, "{}/{}", r.num, r.den),
            Term::Str(s) => write!(f, "{s:?}"),
            Term::App(name, args) => {
                f.write_str(name)?;
                f.write_char('(')?;
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{arg}")?;
                }
                f.write_char(')')
            }
            Term::Not(a) => write!(f, "!{}", Operand(a)),
            Term::And(args) => infix(f, args, " && ", "true"),
            Term::Or(args) => infix(f, args, " || ", "false"),
            Term::Implies(a, b) => write!(f, "{} ==> {}", Operand(a), Operand(b)),
            Term::Eq(a, b) => write!(f, "{} == {}", Operand(a), Operand(b)),
            Term::Ite(c, a, b) => write!(f, "if {} then {} else {}", Operand(c), Operand(a), Operand(b)),
            Term::Lt(a, b) => write!(f, "{} < {}", Operand(a), Operand(b)),
            Term::Le(a, b) => write!(f, "{} <= {}", Operand(a), Operand(b)),
            Term::Add(args) => infix(f, args, " + ", "0"),
            Term::Sub(a, b) => write!(f, "{} - {}", Operand(a), Operand(b)),
            Term::Mul(a, b) => write!(f, "{} * {}", Operand(a), Operand(b)),
            Term::Neg(a) => write!(f, "-{}", Operand(a)),
            Term::StrLen(a) => write!(f, "len({a})"),
            Term::StrConcat(args) => infix(f, args, " ++ ", "\"\""),
            Term::StrTest(test, a, b) => write!(f, "{}.{}({b})", Operand(a), test.name()),
        }
    }
}

/// A sub-term, parenthesised unless it is an atom.
struct Operand<'a>(&'a Term);

impl Display for Operand<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let atomic = match self.0 {
            Term::Var(..) | Term::Bool(_) | Term::Str(_) | Term::App(..) | Term::StrLen(_) | Term::StrTest(..) => true,
            Term::Int(i) => *i >= 0,
            Term::Real(r) => r.num >= 0 && r.den == 1,
            Term::And(args) | Term::Or(args) | Term::Add(args) | Term::StrConcat(args) => args.len() <= 1,
            _ => false,
        };
        if atomic { write!(f, "{}", self.0) } else { write!(f, "({})", self.0) }
    }
}

fn infix(f: &mut Formatter<'_>, args: &[Term], op: &str, empty: &str) -> fmt::Result {
    match args {
        [] => f.write_str(empty),
        [only] => write!(f, "{only}"),
        _ => {
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    f.write_str(op)?;
                }
                write!(f, "{}", Operand(arg))?;
            }
            Ok(())
        }
    }
}
