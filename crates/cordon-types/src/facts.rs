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
//!
//! A fact's term is kept flat (`flat.rs`): one allocation, not a box per operand.

mod flat;

use std::cell::Cell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;

use cordon_smt::Term;

use self::flat::{Node, Symbols};

/// A constant, by its number in the stack's table of names: a plan's facts name the same
/// constants many times, and the index, the undo log and each fact hold numbers, not copies.
type Name = usize;

/// A term flat, and the constants it mentions, each once, in the order of their names.
type Flat = (Box<[Node]>, Box<[Name]>);

/// A fact the solver may use, with the source text it came from. A plan keeps several a line,
/// so each is small and its parts are allocated at their exact size: its term is flat
/// ([`Facts::term`] makes it a term again).
#[derive(Clone, Debug)]
pub struct Fact {
    term: Box<[Node]>,
    pub origin: Box<str>,
    /// The constants it mentions, each once, in the order of their names.
    vars: Box<[Name]>,
    /// The fact as it was pushed, if normalizing changed it, and its constants: what a
    /// diagnostic explains a failed obligation with. Boxed: most facts are kept as pushed.
    original: Option<Box<Flat>>,
    /// The hash of `term`, by which [`Facts::present`] finds it.
    hash: u64,
}

impl Fact {
    fn original_vars(&self) -> &[Name] {
        self.original.as_ref().map_or(&self.vars, |o| &o.1)
    }
}

/// What pushing a fact changed, to be undone when it is popped. Small (two words): a plan
/// pushes several per line, and the log keeps them until the fact is popped.
#[derive(Clone, Debug)]
enum Undo {
    Value(Rc<Term>),
    Alias(Rc<Term>),
    /// The definition (by index) became reachable from its inputs.
    Activated(usize),
    Mentioned(Name),
    Defined(Name),
}

/// The facts known at the current point (see the module's documentation).
#[derive(Clone, Debug, Default)]
pub struct Facts {
    list: Vec<Fact>,
    /// The number of each constant's name, given when a fact first mentions it and kept for
    /// the stack's life (a name seen once is likely seen again), and the sorts and functions
    /// the flat terms name.
    symbols: Symbols,
    /// For each constant, the facts to follow from it, each with the length of the stack when it
    /// was listed (so popping takes entries off the end). Most constants are listed under once
    /// or twice, so a list starts with room for one entry, not four.
    by_var: Vec<Vec<(usize, usize)>>,
    ground: Vec<usize>,
    /// Facts that define a constant: the constant.
    defines: Vec<Option<Name>>,
    /// Constants defined by a definition that is not reachable from its inputs yet.
    defined: HashMap<Name, usize>,
    /// Whether a fact on the stack mentions each constant.
    mentioned: Vec<bool>,
    /// The facts on the stack, by the hash of their term (the lowest with it): one pushed again
    /// is not kept twice (the one below outlives it). Two terms with one hash cost at most a
    /// fact kept twice.
    present: HashMap<u64, usize>,
    /// Atoms whose value is known.
    values: HashMap<Rc<Term>, Term>,
    /// Atoms that are other names of a term (`x == t` for a new `x`; `(T).1(p) == s`).
    aliases: HashMap<Rc<Term>, Term>,
    /// What each fact changed, with the fact's index.
    undo: Vec<(usize, Undo)>,
    /// Index entries [`Facts::relevant`] has looked at, in all: the work of choosing facts.
    examined: Cell<u64>,
}

impl Facts {
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The term of a fact of this stack.
    pub fn term(&self, fact: &Fact) -> Term {
        self.symbols.term(&fact.term)
    }

    /// The term of a fact of this stack as it was pushed, before it was normalized.
    pub fn original(&self, fact: &Fact) -> Term {
        self.symbols.term(fact.original.as_ref().map_or(&fact.term, |o| &o.0))
    }

    /// Pushes `term` normalized with what is known; returns `false` if it folded to `true` or is
    /// on the stack already (and so was not kept).
    pub fn push(&mut self, original: &Term, origin: Box<str>) -> bool {
        let term = self.normalize(original);
        if term == Term::Bool(true) {
            return false;
        }
        let (flat, vars) = self.flatten(&term);
        let hash = flat::fingerprint(&flat);
        if self.present.get(&hash).and_then(|&i| self.list.get(i)).is_some_and(|f| f.term == flat) {
            return false;
        }
        let id = self.list.len();
        self.present.entry(hash).or_insert(id);
        let defines = match &term {
            Term::Eq(l, r) => match &**l {
                Term::Var(x, _) if !mentions(r, x) => {
                    self.symbols.get(x).filter(|&x| !self.mentioned.get(x).copied().unwrap_or(false))
                }
                _ => None,
            },
            _ => None,
        };
        self.learn(id, &term);
        for &v in &vars {
            if let Some(m) = self.mentioned.get_mut(v)
                && !*m
            {
                *m = true;
                self.undo.push((id, Undo::Mentioned(v)));
            }
        }
        match defines {
            Some(x) => {
                self.listed_under(x).push((id, id));
                self.defined.insert(x, id);
                self.undo.push((id, Undo::Defined(x)));
            }
            None => {
                for &v in &vars {
                    self.listed_under(v).push((id, id));
                }
                for &v in &vars {
                    self.activate(v, id);
                }
            }
        }
        if vars.is_empty() {
            self.ground.push(id);
        }
        self.defines.push(defines);
        let original = (term != *original).then(|| Box::new(self.flatten(original)));
        self.list.push(Fact { term: flat, origin, vars, original, hash });
        true
    }

    /// `t` flat, and the numbers of the constants it mentions, each once, in the order of their
    /// names; names not seen before are numbered.
    fn flatten(&mut self, t: &Term) -> Flat {
        let (flat, vars) = self.symbols.flatten(t);
        // Every numbered name has its entries.
        let names = self.symbols.len();
        if self.by_var.len() < names {
            self.by_var.resize_with(names, Vec::new);
        }
        if self.mentioned.len() < names {
            self.mentioned.resize(names, false);
        }
        (flat, vars.into_boxed_slice())
    }

    /// The facts listed under `x` (a number this stack gave).
    fn listed_under(&mut self, x: Name) -> &mut Vec<(usize, usize)> {
        if x >= self.by_var.len() {
            self.by_var.resize_with(x + 1, Vec::new);
        }
        let list = &mut self.by_var[x];
        if list.capacity() == 0 {
            list.reserve_exact(1);
        }
        list
    }

    /// `x` is constrained from now on: its definition (and the definitions its inputs have, in
    /// turn) become reachable from their inputs.
    fn activate(&mut self, x: Name, by: usize) {
        let mut work = vec![x];
        while let Some(x) = work.pop() {
            let Some(def) = self.defined.remove(&x) else { continue };
            self.undo.push((by, Undo::Activated(def)));
            let inputs: Vec<Name> =
                self.list.get(def).map(|f| f.vars.iter().copied().filter(|&v| v != x).collect()).unwrap_or_default();
            for v in inputs {
                self.listed_under(v).push((def, by));
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
                    let atom = Rc::new((**l).clone());
                    self.aliases.insert(atom.clone(), (**r).clone());
                    self.undo.push((id, Undo::Alias(atom)));
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
            let atom = Rc::new(atom.clone());
            self.values.insert(atom.clone(), value.clone());
            self.undo.push((id, Undo::Value(atom)));
        }
    }

    pub fn truncate(&mut self, len: usize) {
        if len >= self.list.len() {
            return;
        }
        // Definitions made reachable by a popped fact are listed under their inputs.
        let mut touched: Vec<Name> = Vec::new();
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
                    if let Some(m) = self.mentioned.get_mut(x) {
                        *m = false;
                    }
                }
                Undo::Defined(x) => {
                    self.defined.remove(&x);
                }
                Undo::Activated(def) => {
                    touched.extend(self.list.get(def).map(|f| &*f.vars).unwrap_or_default());
                    // Still a definition of its constant if that fact stays.
                    if def < len
                        && let Some(Some(x)) = self.defines.get(def)
                    {
                        self.defined.insert(*x, def);
                    }
                }
            }
        }
        for (id, fact) in self.list.iter().enumerate().skip(len) {
            touched.extend(&*fact.vars);
            if self.present.get(&fact.hash) == Some(&id) {
                self.present.remove(&fact.hash);
            }
        }
        // Entries listed while the stack was at least `len` long are at the ends of their lists.
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
        // Only atoms have values or other names: other terms need not be hashed to find none.
        if !is_atom(&t) {
            return t;
        }
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
    pub fn relevant<'n>(
        &self,
        goal_vars: impl IntoIterator<Item = &'n str>,
        limit: usize,
        original: bool,
    ) -> (Vec<&Fact>, bool) {
        let mut taken: HashSet<usize> = self.ground.iter().copied().collect();
        let mut order: Vec<usize> = self.ground.clone();
        let mut seen: HashSet<Name> = HashSet::new();
        // A name no fact mentions has nothing listed under it. The goal's constants that fewer
        // facts mention go first: a constant every line mentions (a parameter added at each
        // step) says the least about this goal, and its facts would fill the nearest few before
        // those of the constant the goal is about.
        let mut work: Vec<Name> = goal_vars.into_iter().filter_map(|n| self.symbols.get(n)).collect();
        work.sort_by_key(|&v| self.by_var.get(v).map_or(0, Vec::len));
        let mut work = VecDeque::from(work);
        let mut complete = true;
        'search: while let Some(v) = work.pop_front() {
            if !seen.insert(v) {
                continue;
            }
            for &(i, _) in self.by_var.get(v).map(Vec::as_slice).unwrap_or(&[]) {
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
                    work.extend(vars.iter().filter(|w| !seen.contains(*w)));
                }
            }
        }
        order.sort_unstable();
        (order.into_iter().filter_map(|i| self.list.get(i)).collect(), complete)
    }
}

/// Calls `f` on the name of every constant in `t`.
pub(crate) fn each_var<'t>(t: &'t Term, f: &mut impl FnMut(&'t str)) {
    t.walk(&mut |t| {
        if let Term::Var(n, _) = t {
            f(n);
        }
    });
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
    each_var(t, &mut |n| found |= n == x);
    found
}

pub fn vars_of(t: &Term, out: &mut HashSet<String>) {
    each_var(t, &mut |n| {
        if !out.contains(n) {
            out.insert(n.to_owned());
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
