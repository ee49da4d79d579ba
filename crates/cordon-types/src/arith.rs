//! A fast path for integer obligations that need no solver: a goal that is, once both sides are
//! read as linear sums, a constant that holds (`len(xs) - 1 < len(xs)`), or a hypothesis plus a
//! constant that is not negative (`n >= 2` proves `n - 1 >= 0`). Most bounds checks and guarded
//! calls are of this kind; proving them here spares a query, and a plan whose obligations are all
//! of this kind never sets Z3 up (that costs a process more than the rest of a check).
//!
//! Only integer terms are read (constants of sort `Int`, integer literals, string lengths and
//! applications of functions to `Int`); anything else leaves the goal to the solver. Sums whose
//! coefficients would overflow are left to the solver too.

use std::collections::HashMap;

use cordon_smt::{Sort, Term};

/// `sum(coefficient * atom) + constant`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sum {
    atoms: HashMap<Term, i64>,
    constant: i64,
}

impl Sum {
    fn constant(c: i64) -> Sum {
        Sum { atoms: HashMap::new(), constant: c }
    }

    fn scale(mut self, k: i64) -> Option<Sum> {
        self.constant = self.constant.checked_mul(k)?;
        for c in self.atoms.values_mut() {
            *c = c.checked_mul(k)?;
        }
        Some(self)
    }

    fn add(mut self, other: Sum) -> Option<Sum> {
        self.constant = self.constant.checked_add(other.constant)?;
        for (atom, c) in other.atoms {
            let entry = self.atoms.entry(atom).or_insert(0);
            *entry = entry.checked_add(c)?;
        }
        self.atoms.retain(|_, c| *c != 0);
        Some(self)
    }
}

/// Reads an integer term as a sum; `is_int` says whether an application is of sort `Int`.
fn sum(t: &Term, is_int: &dyn Fn(&str) -> bool) -> Option<Sum> {
    match t {
        Term::Int(n) => Some(Sum::constant(*n)),
        Term::Var(_, Sort::Int) | Term::StrLen(_) => Some(Sum { atoms: HashMap::from([(t.clone(), 1)]), constant: 0 }),
        Term::App(f, _) if is_int(f) => Some(Sum { atoms: HashMap::from([(t.clone(), 1)]), constant: 0 }),
        Term::Add(ts) => ts.iter().try_fold(Sum::constant(0), |acc, t| acc.add(sum(t, is_int)?)),
        Term::Sub(a, b) => sum(a, is_int)?.add(sum(b, is_int)?.scale(-1)?),
        Term::Neg(a) => sum(a, is_int)?.scale(-1),
        Term::Mul(a, b) => match (&**a, &**b) {
            (Term::Int(k), t) | (t, Term::Int(k)) => sum(t, is_int)?.scale(*k),
            _ => None,
        },
        _ => None,
    }
}

/// An integer atom as `sum >= 0` constraints (an equality gives two).
fn at_least_zero(t: &Term, is_int: &dyn Fn(&str) -> bool) -> Option<Vec<Sum>> {
    let diff = |a: &Term, b: &Term| sum(b, is_int)?.add(sum(a, is_int)?.scale(-1)?);
    Some(match t {
        // a <= b: b - a >= 0; a < b: b - a - 1 >= 0 (integers).
        Term::Le(a, b) => vec![diff(a, b)?],
        Term::Lt(a, b) => vec![diff(a, b)?.add(Sum::constant(-1))?],
        Term::Not(inner) => match &**inner {
            Term::Le(a, b) => vec![diff(b, a)?.add(Sum::constant(-1))?],
            Term::Lt(a, b) => vec![diff(b, a)?],
            _ => return None,
        },
        Term::Eq(a, b) => {
            let d = diff(a, b)?;
            vec![d.clone(), d.scale(-1)?]
        }
        _ => return None,
    })
}

/// Whether `goal` follows from `hypotheses` by the fast path (`false`: not found here; the
/// solver may still prove it): it is one of them, or each of its `sum >= 0` forms is a constant
/// that holds, or a hypothesis (or the sum of two) plus a constant that is not negative
/// (`a != b` holds if `a - b >= 1` or `b - a >= 1` does).
pub fn implied(goal: &Term, hypotheses: &[&Term], is_int: &dyn Fn(&str) -> bool) -> bool {
    if hypotheses.contains(&goal) {
        return true;
    }
    let known = known(hypotheses, is_int);
    if let Term::Not(inner) = goal
        && let Term::Eq(a, b) = &**inner
    {
        let above = Term::Le(Box::new(Term::Add(vec![(**b).clone(), Term::Int(1)])), a.clone());
        let below = Term::Le(Box::new(Term::Add(vec![(**a).clone(), Term::Int(1)])), b.clone());
        return [above, below].iter().any(|g| follows(g, &known, is_int));
    }
    follows(goal, &known, is_int)
}

fn follows(goal: &Term, known: &[Sum], is_int: &dyn Fn(&str) -> bool) -> bool {
    let Some(goals) = at_least_zero(goal, is_int) else { return false };
    let covers = |h: &Sum, g: &Sum| h.atoms == g.atoms && g.constant >= h.constant;
    goals.iter().all(|g| {
        (g.atoms.is_empty() && g.constant >= 0)
            || known.iter().any(|h| covers(h, g))
            || known.iter().enumerate().any(|(i, h1)| {
                known[i + 1..].iter().any(|h2| h1.clone().add(h2.clone()).is_some_and(|h| covers(&h, g)))
            })
    })
}

/// The hypotheses' `sum >= 0` forms, each once.
fn known(hypotheses: &[&Term], is_int: &dyn Fn(&str) -> bool) -> Vec<Sum> {
    let mut known: Vec<Sum> = Vec::new();
    for h in hypotheses {
        let conjuncts: Vec<&Term> = match h {
            Term::And(cs) => cs.iter().collect(),
            h => vec![*h],
        };
        for c in conjuncts {
            for s in at_least_zero(c, is_int).into_iter().flatten() {
                if !known.contains(&s) {
                    known.push(s);
                }
            }
        }
    }
    known
}
