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
    /// A hash of the atoms and their coefficients, whatever their order: equal for sums with
    /// the same atoms (compare `atoms` to be sure).
    fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        self.atoms.iter().fold(0u64, |acc, (atom, c)| {
            let mut h = std::hash::DefaultHasher::new();
            atom.hash(&mut h);
            c.hash(&mut h);
            acc.wrapping_add(h.finish())
        })
    }

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

    /// `self - other`, as `self.clone().add(other.clone().scale(-1)?)` (`None` where either
    /// overflows), without copying `other`.
    fn minus(&self, other: &Sum) -> Option<Sum> {
        let constant = other.constant.checked_neg()?;
        if other.atoms.values().any(|c| c.checked_neg().is_none()) {
            return None;
        }
        let mut rest = self.clone();
        rest.constant = rest.constant.checked_add(constant)?;
        for (atom, c) in &other.atoms {
            let entry = rest.atoms.entry(atom.clone()).or_insert(0);
            *entry = entry.checked_sub(*c)?;
        }
        rest.atoms.retain(|_, c| *c != 0);
        Some(rest)
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
/// that holds, or a hypothesis (or the sum of two, or one twice) plus a constant that is not negative
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
    // The known sums by their atoms, so that the one (or the second of two) a goal needs is
    // found at once rather than by trying every pair.
    let mut by_atoms: HashMap<u64, Vec<&Sum>> = HashMap::new();
    for h in known {
        by_atoms.entry(h.fingerprint()).or_default().push(h);
    }
    // A known `h >= 0` with `g`'s atoms and a constant no larger proves `g >= 0`.
    let covered = |g: &Sum| {
        by_atoms
            .get(&g.fingerprint())
            .is_some_and(|hs| hs.iter().any(|h| h.atoms == g.atoms && g.constant >= h.constant))
    };
    goals.iter().all(|g| {
        (g.atoms.is_empty() && g.constant >= 0)
            || covered(g)
            // Or two: `h1 + h2` covers `g` when a known `h2` covers `g - h1`.
            || known.iter().any(|h1| g.minus(h1).is_some_and(|rest| covered(&rest)))
    })
}

/// The hypotheses' `sum >= 0` forms, each once; and the conclusion of each implication among
/// them whose condition follows from those (once, not to a fixpoint): a remainder's bounds once
/// the sign of what was divided is known.
fn known(hypotheses: &[&Term], is_int: &dyn Fn(&str) -> bool) -> Vec<Sum> {
    fn conjuncts(t: &Term) -> Vec<&Term> {
        match t {
            Term::And(cs) => cs.iter().collect(),
            t => vec![t],
        }
    }
    let add = |known: &mut Vec<Sum>, c: &Term| {
        for s in at_least_zero(c, is_int).into_iter().flatten() {
            if !known.contains(&s) {
                known.push(s);
            }
        }
    };
    let mut known: Vec<Sum> = Vec::new();
    let mut implications: Vec<(&Term, &Term)> = Vec::new();
    for c in hypotheses.iter().flat_map(|h| conjuncts(h)) {
        match c {
            Term::Implies(condition, conclusion) => implications.push((condition, conclusion)),
            c => add(&mut known, c),
        }
    }
    let holding: Vec<&Term> =
        implications.into_iter().filter(|(condition, _)| follows(condition, &known, is_int)).map(|(_, c)| c).collect();
    for c in holding.into_iter().flat_map(conjuncts) {
        add(&mut known, c);
    }
    known
}

#[cfg(test)]
mod tests {
    use cordon_smt::{Sort, Term};

    use super::{Sum, implied};

    fn int(name: &str) -> Term {
        Term::Var(name.into(), Sort::Int)
    }

    fn le(a: Term, b: Term) -> Term {
        Term::Le(Box::new(a), Box::new(b))
    }

    fn lt(a: Term, b: Term) -> Term {
        Term::Lt(Box::new(a), Box::new(b))
    }

    /// `x = 4q + r`, and `r`'s bounds for either sign of `x`, as the checker states a remainder.
    fn remainder() -> Term {
        let (x, r) = (int("x"), int("r"));
        let whole = Term::Eq(
            Box::new(x.clone()),
            Box::new(Term::Add(vec![Term::Mul(Box::new(Term::Int(4)), Box::new(int("q"))), r.clone()])),
        );
        let non_negative = Term::Implies(
            Box::new(le(Term::Int(0), x.clone())),
            Box::new(Term::And(vec![le(Term::Int(0), r.clone()), lt(r.clone(), Term::Int(4))])),
        );
        let negative = Term::Implies(
            Box::new(lt(x, Term::Int(0))),
            Box::new(Term::And(vec![lt(Term::Int(-4), r.clone()), le(r, Term::Int(0))])),
        );
        Term::And(vec![whole, non_negative, negative])
    }

    #[test]
    fn a_difference_is_the_sum_with_the_negation_even_where_they_overflow() {
        let edges = [i64::MIN, i64::MIN + 1, -2, -1, 0, 1, 2, i64::MAX - 1, i64::MAX];
        let sum = |x: i64, y: i64, constant: i64| {
            let mut atoms = std::collections::HashMap::new();
            for (atom, c) in [("x", x), ("y", y)] {
                if c != 0 {
                    atoms.insert(int(atom), c);
                }
            }
            Sum { atoms, constant }
        };
        let mut compared = 0;
        for &a in &edges {
            for &b in &edges {
                for &c in &[i64::MIN, -1, 0, 1, i64::MAX] {
                    let (g, h) = (sum(a, 1, c), sum(b, 0, c.wrapping_add(1)));
                    assert_eq!(g.minus(&h), h.clone().scale(-1).and_then(|minus| g.clone().add(minus)), "{a} {b} {c}");
                    let (g, h) = (sum(0, b, a), sum(a, b, c));
                    assert_eq!(g.minus(&h), h.clone().scale(-1).and_then(|minus| g.clone().add(minus)), "{a} {b} {c}");
                    compared += 2;
                }
            }
        }
        assert!(compared >= 800, "{compared} differences compared");
    }

    #[test]
    fn an_implication_whose_condition_is_known_gives_its_conclusion() {
        let is_int = |_: &str| true;
        let fact = remainder();
        // `r + 1 > 0` once `x >= 0` (or anything stronger) is known, not before.
        let goal = lt(Term::Int(0), Term::Add(vec![int("r"), Term::Int(1)]));
        assert!(implied(&goal, &[&fact, &le(Term::Int(0), int("x"))], &is_int));
        assert!(implied(&goal, &[&fact, &le(Term::Int(3), int("x"))], &is_int));
        assert!(!implied(&goal, &[&fact], &is_int));
        assert!(!implied(&goal, &[&fact, &le(Term::Int(-1), int("x"))], &is_int));
        // The other sign gives the other bounds: `r <= 0`, never `r > 0`.
        let negative = lt(int("x"), Term::Int(0));
        assert!(implied(&le(int("r"), Term::Int(0)), &[&fact, &negative], &is_int));
        assert!(!implied(&goal, &[&fact, &negative], &is_int));
    }
}
