//! The facts known at a point of a program, and the choice of the few an obligation needs.
//!
//! Facts form a stack: a branch pushes its condition and what it learns, and pops them when it
//! ends. An obligation must not carry every fact in scope (a plan of n lines would then ask n
//! queries of n facts each), so the stack keeps three things beside the facts, each updated in
//! constant time per fact and undone in constant time per fact popped:
//!
//! - **Known values.** A fact `a == 3`, `p` or `!p` about an atom (a constant or a function of
//!   atoms: `tainted(s)`, `r.private`) records the atom's value, and `x == t` for a new constant
//!   `x` and an atom `t` records `x` as another name of `t`. Later facts and goals are
//!   normalized with both and folded: a session threaded through a hundred calls has
//!   `tainted(s99) == false` as a known value, so the obligation `!tainted(s99)` is `true`
//!   without the solver and without the ninety-nine facts of the chain.
//! - **Definitions.** `x == e` for a new constant `x` (a `let`) says nothing about `e`'s
//!   constants as long as nothing else mentions `x`: whatever values they have, `x` can take
//!   `e`'s. So a definition is found from `x`, never from `e`'s constants, until a fact that is
//!   not a definition mentions `x` (it then constrains `e`'s constants too, and the definition
//!   becomes reachable from them). Dropping a definition that is not reachable keeps every query
//!   equivalent to the one with all the facts.
//! - **The index.** Each constant lists the facts that mention it (definitions only under the
//!   constant they define, until they become reachable), so [`Facts::relevant`] finds the facts
//!   connected to a goal without scanning the stack, nearest first, up to a limit if asked: an
//!   obligation is first asked with the few facts nearest to its goal and only if those do not
//!   prove it with every connected fact.

use std::collections::{HashMap, HashSet, VecDeque};

use cordon_smt::Term;

/// A fact the solver may use, with the source text it came from.
#[derive(Clone, Debug)]
pub struct Fact {
    pub term: Term,
    pub origin: String,
    /// The constants it mentions.
    pub vars: Vec<String>,
    /// The fact as it was pushed, if normalizing changed it, and its constants: what a
    /// diagnostic explains a failed obligation with.
    original: Option<(Term, Vec<String>)>,
}

impl Fact {
    /// The fact as it was pushed, before it was normalized.
    pub fn original(&self) -> &Term {
        self.original.as_ref().map_or(&self.term, |(t, _)| t)
    }

    fn original_vars(&self) -> &[String] {
        self.original.as_ref().map_or(&self.vars, |(_, v)| v)
    }
}

/// What pushing a fact changed, to be undone when it is popped.
#[derive(Debug)]
enum Undo {
    Value(Term),
    Alias(Term),
    /// The definition (by index) became reachable from its inputs.
    Activated(usize),
    Mentioned(String),
    Defined(String),
    Present(Term),
}

/// The facts known at the current point (see the module's documentation).
#[derive(Debug, Default)]
pub struct Facts {
    list: Vec<Fact>,
    /// For each constant, the facts to follow from it, each with the length of the stack when it
    /// was listed (so popping takes entries off the end).
    by_var: HashMap<String, Vec<(usize, usize)>>,
    ground: Vec<usize>,
    /// Facts that define a constant: the constant.
    defines: Vec<Option<String>>,
    /// Constants defined by a definition that is not reachable from its inputs yet.
    defined: HashMap<String, usize>,
    /// Every constant some fact mentions.
    mentioned: HashSet<String>,
    /// The facts on the stack: one pushed again is not kept twice (the one below outlives it).
    present: HashSet<Term>,
    /// Atoms whose value is known.
    values: HashMap<Term, Term>,
    /// Atoms that are other names of a term (`x == t` for a new `x`; `(T).1(p) == s`).
    aliases: HashMap<Term, Term>,
    /// What each fact changed, with the fact's index.
    undo: Vec<(usize, Undo)>,
    /// Index entries [`Facts::relevant`] has looked at, in all: the work of choosing facts.
    examined: std::cell::Cell<u64>,
}

impl Facts {
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Pushes `term` normalized with what is known; returns `false` if it folded to `true` or is
    /// on the stack already (and so was not kept).
    pub fn push(&mut self, original: &Term, origin: String) -> bool {
        let term = self.normalize(original);
        if term == Term::Bool(true) || self.present.contains(&term) {
            return false;
        }
        let id = self.list.len();
        self.present.insert(term.clone());
        self.undo.push((id, Undo::Present(term.clone())));
        let mut set = HashSet::new();
        vars_of(&term, &mut set);
        let mut vars: Vec<String> = set.into_iter().collect();
        vars.sort();
        let defines = match &term {
            Term::Eq(l, r) => match &**l {
                Term::Var(x, _) if !self.mentioned.contains(x) && !mentions(r, x) => Some(x.clone()),
                _ => None,
            },
            _ => None,
        };
        self.learn(id, &term);
        for v in &vars {
            if self.mentioned.insert(v.clone()) {
                self.undo.push((id, Undo::Mentioned(v.clone())));
            }
        }
        match &defines {
            Some(x) => {
                self.by_var.entry(x.clone()).or_default().push((id, id));
                self.defined.insert(x.clone(), id);
                self.undo.push((id, Undo::Defined(x.clone())));
            }
            None => {
                for v in &vars {
                    self.by_var.entry(v.clone()).or_default().push((id, id));
                }
                for v in &vars {
                    self.activate(v, id);
                }
            }
        }
        if vars.is_empty() {
            self.ground.push(id);
        }
        self.defines.push(defines);
        let original = (term != *original).then(|| {
            let mut set = HashSet::new();
            vars_of(original, &mut set);
            let mut vars: Vec<String> = set.into_iter().collect();
            vars.sort();
            (original.clone(), vars)
        });
        self.list.push(Fact { term, origin, vars, original });
        true
    }

    /// `x` is constrained from now on: its definition (and the definitions its inputs have, in
    /// turn) become reachable from their inputs.
    fn activate(&mut self, x: &str, by: usize) {
        let mut work = vec![x.to_owned()];
        while let Some(x) = work.pop() {
            let Some(def) = self.defined.remove(&x) else { continue };
            self.undo.push((by, Undo::Activated(def)));
            let inputs: Vec<String> =
                self.list.get(def).map(|f| f.vars.iter().filter(|v| **v != x).cloned().collect()).unwrap_or_default();
            for v in inputs {
                self.by_var.entry(v.clone()).or_default().push((def, by));
                work.push(v);
            }
        }
    }

    /// Records the values and names a fact gives.
    fn learn(&mut self, id: usize, term: &Term) {
        match term {
            Term::And(cs) => {
                for c in cs {
                    self.learn(id, c);
                }
            }
            Term::Eq(l, r) => {
                // An atom equal to another atom is read as that one from now on, unless it
                // already has a value or another name (or is part of the other).
                if is_atom(l)
                    && is_atom(r)
                    && !self.aliases.contains_key(&**l)
                    && !self.values.contains_key(&**l)
                    && !contains(r, l)
                {
                    self.aliases.insert((**l).clone(), (**r).clone());
                    self.undo.push((id, Undo::Alias((**l).clone())));
                    return;
                }
                let (atom, value) = match (is_literal(l), is_literal(r)) {
                    (false, true) => (l, r),
                    (true, false) => (r, l),
                    _ => return,
                };
                self.set_value(id, atom, value);
            }
            Term::Not(a) => self.set_value(id, a, &Term::Bool(false)),
            t => self.set_value(id, t, &Term::Bool(true)),
        }
    }

    fn set_value(&mut self, id: usize, atom: &Term, value: &Term) {
        if is_atom(atom) && !self.values.contains_key(atom) {
            self.values.insert(atom.clone(), value.clone());
            self.undo.push((id, Undo::Value(atom.clone())));
        }
    }

    pub fn truncate(&mut self, len: usize) {
        if len >= self.list.len() {
            return;
        }
        // Definitions made reachable by a popped fact are listed under their inputs.
        let mut inputs: Vec<String> = Vec::new();
        while let Some((id, _)) = self.undo.last() {
            if *id < len {
                break;
            }
            let Some((_, undo)) = self.undo.pop() else { break };
            match undo {
                Undo::Value(atom) => {
                    self.values.remove(&atom);
                }
                Undo::Alias(x) => {
                    self.aliases.remove(&x);
                }
                Undo::Mentioned(x) => {
                    self.mentioned.remove(&x);
                }
                Undo::Defined(x) => {
                    self.defined.remove(&x);
                }
                Undo::Present(t) => {
                    self.present.remove(&t);
                }
                Undo::Activated(def) => {
                    inputs.extend(self.list.get(def).map(|f| f.vars.clone()).unwrap_or_default());
                    // Still a definition of its constant if that fact stays.
                    if def < len
                        && let Some(Some(x)) = self.defines.get(def)
                    {
                        self.defined.insert(x.clone(), def);
                    }
                }
            }
        }
        // Entries listed while the stack was at least `len` long are at the ends of their lists.
        let mut touched: HashSet<&str> = inputs.iter().map(String::as_str).collect();
        for fact in &self.list[len..] {
            touched.extend(fact.vars.iter().map(String::as_str));
        }
        for v in touched {
            if let Some(ids) = self.by_var.get_mut(v) {
                while ids.last().is_some_and(|&(_, at)| at >= len) {
                    ids.pop();
                }
            }
        }
        while self.ground.last().is_some_and(|&i| i >= len) {
            self.ground.pop();
        }
        self.list.truncate(len);
        self.defines.truncate(len);
    }

    /// Index entries looked at to choose facts, since the stack was made.
    pub fn examined(&self) -> u64 {
        self.examined.get()
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// `term` with every known name and value put in and folded. Equivalent to `term` under the
    /// facts on the stack.
    pub fn normalize(&self, term: &Term) -> Term {
        let t = match term {
            Term::Var(..) => term.clone(),
            Term::Bool(_) | Term::Int(_) | Term::Real(..) | Term::Str(_) => return term.clone(),
            Term::App(f, args) => Term::App(f.clone(), args.iter().map(|a| self.normalize(a)).collect()),
            Term::Not(a) => Term::Not(Box::new(self.normalize(a))),
            Term::And(ts) => Term::And(ts.iter().map(|a| self.normalize(a)).collect()),
            Term::Or(ts) => Term::Or(ts.iter().map(|a| self.normalize(a)).collect()),
            Term::Add(ts) => Term::Add(ts.iter().map(|a| self.normalize(a)).collect()),
            Term::StrConcat(ts) => Term::StrConcat(ts.iter().map(|a| self.normalize(a)).collect()),
            Term::Implies(a, b) => Term::Implies(Box::new(self.normalize(a)), Box::new(self.normalize(b))),
            Term::Eq(a, b) => Term::Eq(Box::new(self.normalize(a)), Box::new(self.normalize(b))),
            Term::Lt(a, b) => Term::Lt(Box::new(self.normalize(a)), Box::new(self.normalize(b))),
            Term::Le(a, b) => Term::Le(Box::new(self.normalize(a)), Box::new(self.normalize(b))),
            Term::Sub(a, b) => Term::Sub(Box::new(self.normalize(a)), Box::new(self.normalize(b))),
            Term::Mul(a, b) => Term::Mul(Box::new(self.normalize(a)), Box::new(self.normalize(b))),
            Term::Ite(c, a, b) => {
                Term::Ite(Box::new(self.normalize(c)), Box::new(self.normalize(a)), Box::new(self.normalize(b)))
            }
            Term::Neg(a) => Term::Neg(Box::new(self.normalize(a))),
            Term::StrLen(a) => Term::StrLen(Box::new(self.normalize(a))),
            Term::StrTest(test, a, b) => Term::StrTest(*test, Box::new(self.normalize(a)), Box::new(self.normalize(b))),
        };
        let t = fold(t);
        if let Some(other) = self.aliases.get(&t) {
            return self.normalize(other);
        }
        match self.values.get(&t) {
            Some(v) => v.clone(),
            None => t,
        }
    }

    /// The facts connected to the constants `goal_vars` through shared constants (see the
    /// module's documentation for definitions), nearest first up to `limit` facts, then in the
    /// order they were pushed; and whether that is all of them. With `original`, the constants
    /// of the facts as they were pushed are followed too (to explain an obligation that failed).
    pub fn relevant(
        &self,
        goal_vars: impl IntoIterator<Item = String>,
        limit: usize,
        original: bool,
    ) -> (Vec<&Fact>, bool) {
        let mut taken: HashSet<usize> = self.ground.iter().copied().collect();
        let mut order: Vec<usize> = self.ground.clone();
        let mut seen: HashSet<String> = HashSet::new();
        let mut work: VecDeque<String> = goal_vars.into_iter().collect();
        let mut complete = true;
        'search: while let Some(v) = work.pop_front() {
            if !seen.insert(v.clone()) {
                continue;
            }
            for &(i, _) in self.by_var.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
                self.examined.set(self.examined.get() + 1);
                if taken.contains(&i) {
                    continue;
                }
                if order.len() >= limit {
                    complete = false;
                    break 'search;
                }
                taken.insert(i);
                order.push(i);
                if let Some(f) = self.list.get(i) {
                    let vars = if original { f.original_vars() } else { &f.vars };
                    work.extend(vars.iter().filter(|w| !seen.contains(*w)).cloned());
                }
            }
        }
        order.sort_unstable();
        (order.into_iter().filter_map(|i| self.list.get(i)).collect(), complete)
    }
}

/// A constant, or a function applied to atoms: what can have a known value.
fn is_atom(t: &Term) -> bool {
    match t {
        Term::Var(..) => true,
        Term::App(_, args) => args.iter().all(|a| is_atom(a) || is_literal(a)),
        _ => false,
    }
}

fn is_literal(t: &Term) -> bool {
    matches!(t, Term::Bool(_) | Term::Int(_) | Term::Str(_))
}

/// Whether `part` occurs in `t`.
fn contains(t: &Term, part: &Term) -> bool {
    let mut found = false;
    t.walk(&mut |t| found |= t == part);
    found
}

fn mentions(t: &Term, x: &str) -> bool {
    let mut found = false;
    t.walk(&mut |t| found |= matches!(t, Term::Var(n, _) if n == x));
    found
}

pub fn vars_of(t: &Term, out: &mut HashSet<String>) {
    t.walk(&mut |t| {
        if let Term::Var(n, _) = t {
            out.insert(n.clone());
        }
    });
}

/// Folds one level of `t` whose operands are folded: constants computed (never where `i64`
/// would overflow), `true`/`false` simplified away, a term equal to itself.
pub fn fold(t: Term) -> Term {
    use Term as T;
    match t {
        T::StrTest(test, a, b) => match (&*a, &*b) {
            (T::Str(s), T::Str(u)) => T::Bool(test.holds(s, u)),
            _ => T::StrTest(test, a, b),
        },
        T::Not(a) => match *a {
            T::Bool(b) => T::Bool(!b),
            T::Not(inner) => *inner,
            a => T::Not(Box::new(a)),
        },
        T::And(ts) => {
            let mut out = Vec::with_capacity(ts.len());
            for t in ts {
                match t {
                    T::Bool(true) => {}
                    T::Bool(false) => return T::Bool(false),
                    t => out.push(t),
                }
            }
            match out.len() {
                0 => T::Bool(true),
                1 => out.pop().unwrap_or(T::Bool(true)),
                _ => T::And(out),
            }
        }
        T::Or(ts) => {
            let mut out = Vec::with_capacity(ts.len());
            for t in ts {
                match t {
                    T::Bool(false) => {}
                    T::Bool(true) => return T::Bool(true),
                    t => out.push(t),
                }
            }
            match out.len() {
                0 => T::Bool(false),
                1 => out.pop().unwrap_or(T::Bool(false)),
                _ => T::Or(out),
            }
        }
        T::Implies(a, b) => match (*a, *b) {
            (T::Bool(false), _) | (_, T::Bool(true)) => T::Bool(true),
            (T::Bool(true), b) => b,
            (a, b) => T::Implies(Box::new(a), Box::new(b)),
        },
        T::Eq(a, b) => match (*a, *b) {
            (a, b) if a == b => T::Bool(true),
            (T::Int(x), T::Int(y)) => T::Bool(x == y),
            (T::Bool(x), T::Bool(y)) => T::Bool(x == y),
            (T::Str(x), T::Str(y)) => T::Bool(x == y),
            // A join holding a non-empty literal is not empty.
            (T::StrConcat(parts), T::Str(e)) | (T::Str(e), T::StrConcat(parts))
                if e.is_empty() && parts.iter().any(|p| matches!(p, T::Str(s) if !s.is_empty())) =>
            {
                T::Bool(false)
            }
            (T::Bool(true), t) | (t, T::Bool(true)) => t,
            (T::Bool(false), t) | (t, T::Bool(false)) => fold(T::Not(Box::new(t))),
            (a, b) => T::Eq(Box::new(a), Box::new(b)),
        },
        T::Ite(c, a, b) => match (*c, *a, *b) {
            (T::Bool(true), a, _) => a,
            (T::Bool(false), _, b) => b,
            (_, a, b) if a == b => a,
            (c, a, b) => T::Ite(Box::new(c), Box::new(a), Box::new(b)),
        },
        T::Lt(a, b) => match (*a, *b) {
            (T::Int(x), T::Int(y)) => T::Bool(x < y),
            (a, b) => T::Lt(Box::new(a), Box::new(b)),
        },
        T::Le(a, b) => match (*a, *b) {
            (T::Int(x), T::Int(y)) => T::Bool(x <= y),
            (a, b) if a == b => T::Bool(true),
            (a, b) => T::Le(Box::new(a), Box::new(b)),
        },
        T::Add(ts) => {
            let mut sum: Option<i64> = Some(0);
            for t in &ts {
                sum = match t {
                    T::Int(n) => sum.and_then(|s| s.checked_add(*n)),
                    _ => None,
                };
            }
            match sum {
                Some(s) => T::Int(s),
                None => T::Add(ts),
            }
        }
        T::Sub(a, b) => match (*a, *b) {
            (T::Int(x), T::Int(y)) if x.checked_sub(y).is_some() => T::Int(x - y),
            (a, b) => T::Sub(Box::new(a), Box::new(b)),
        },
        T::Mul(a, b) => match (*a, *b) {
            (T::Int(x), T::Int(y)) if x.checked_mul(y).is_some() => T::Int(x * y),
            (a, b) => T::Mul(Box::new(a), Box::new(b)),
        },
        T::Neg(a) => match *a {
            T::Int(x) if x.checked_neg().is_some() => T::Int(-x),
            a => T::Neg(Box::new(a)),
        },
        t => t,
    }
}
