//! Sort checking: the gate every query passes before anything reaches Z3.
//!
//! The `z3` crate unwraps every result of the C API, so a term Z3 rejects (an ill-sorted
//! application, a zero denominator) would panic inside it. [`check`] walks the whole query once and
//! is the only way to obtain a [`WellSorted`] query; the encoder takes nothing else. Along the way
//! it records what the later steps need: the sort of each free constant, the declared functions,
//! the function applications a counterexample should show, and which theories occur (the backend
//! picks a Z3 logic from them).

use std::collections::HashMap;

use crate::{FuncDecl, Query, Rational, Sort, Term};

/// Terms nested deeper than this are refused, so that no recursive walk (here, in the encoder or
/// in Z3) can overflow the stack.
pub(crate) const MAX_DEPTH: usize = 256;

/// A query that has passed [`check`].
#[derive(Debug)]
pub(crate) struct WellSorted<'q> {
    pub query: &'q Query,
    /// Free constants in order of first occurrence, with their sorts.
    pub vars: Vec<(&'q str, &'q Sort)>,
    pub var_index: HashMap<&'q str, usize>,
    /// Declared functions, one per name (used or not).
    pub funcs: Vec<&'q FuncDecl>,
    pub func_index: HashMap<&'q str, usize>,
    /// Applications whose arguments are built only from constants, literals and such applications
    /// (`len(xs)`, `Repo.private(r)`), in order of first occurrence, without repeats.
    pub shown_apps: Vec<&'q Term>,
    pub theories: Theories,
}

/// Which theories a query uses; the backend routes it to a Z3 logic accordingly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Theories {
    pub ints: bool,
    pub reals: bool,
    pub strings: bool,
    /// A product of two terms that both mention a constant or an application.
    pub nonlinear: bool,
}

impl Theories {
    fn note(&mut self, sort: &Sort) {
        match sort {
            Sort::Int => self.ints = true,
            Sort::Real => self.reals = true,
            Sort::String => self.strings = true,
            Sort::Bool | Sort::Named(_) => {}
        }
    }
}

/// Checks that every hypothesis and the goal are well-sorted Boolean terms.
///
/// The error is a short English sentence (without the `ill-sorted query:` prefix).
pub(crate) fn check(query: &Query) -> Result<WellSorted<'_>, String> {
    let mut checker = Checker {
        vars: Vec::new(),
        var_index: HashMap::new(),
        funcs: Vec::new(),
        func_index: HashMap::new(),
        shown_apps: Vec::new(),
        theories: Theories::default(),
    };
    for decl in &query.funcs {
        checker.declare(decl)?;
    }
    for (i, hypothesis) in query.hypotheses.iter().enumerate() {
        let sort = checker.term(hypothesis, 0)?.sort;
        if sort != Sort::Bool {
            return Err(format!("hypothesis {} is a {sort}, not a Bool", i + 1));
        }
    }
    let sort = checker.term(&query.goal, 0)?.sort;
    if sort != Sort::Bool {
        return Err(format!("the goal is a {sort}, not a Bool"));
    }
    let Checker { vars, var_index, funcs, func_index, mut shown_apps, theories } = checker;
    let mut seen = std::collections::HashSet::new();
    shown_apps.retain(|app| seen.insert(*app));
    Ok(WellSorted { query, vars, var_index, funcs, func_index, shown_apps, theories })
}

struct Checker<'q> {
    vars: Vec<(&'q str, &'q Sort)>,
    var_index: HashMap<&'q str, usize>,
    funcs: Vec<&'q FuncDecl>,
    func_index: HashMap<&'q str, usize>,
    shown_apps: Vec<&'q Term>,
    theories: Theories,
}

/// What the checker learns about a term.
struct Info {
    sort: Sort,
    /// No constant or application occurs in it: its value is fixed.
    closed: bool,
    /// Built only from constants, literals and applications: worth showing in a counterexample.
    simple: bool,
}

impl Info {
    fn literal(sort: Sort) -> Info {
        Info { sort, closed: true, simple: true }
    }
}

impl<'q> Checker<'q> {
    fn declare(&mut self, decl: &'q FuncDecl) -> Result<(), String> {
        if let Some(&i) = self.func_index.get(decl.name.as_str()) {
            let earlier = self.funcs.get(i).copied();
            return if earlier == Some(decl) {
                Ok(())
            } else {
                Err(format!("function `{}` is declared twice with different signatures", decl.name))
            };
        }
        // Only checked here: the type checker declares every function it knows of, so a
        // declaration says nothing about the theories a query uses (see `app`).
        for sort in decl.params.iter().chain(std::iter::once(&decl.ret)) {
            valid_sort_name(sort)?;
        }
        self.func_index.insert(&decl.name, self.funcs.len());
        self.funcs.push(decl);
        Ok(())
    }

    // Debug builds give every local of a function its own stack slot, so the functions on the
    // recursive path are kept small and each kind of term is handled in a function of its own.
    fn term(&mut self, term: &'q Term, depth: usize) -> Result<Info, String> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let d = depth + 1;
        match term {
            Term::Var(name, sort) => self.var(name, sort),
            Term::Bool(_) => Ok(Info::literal(Sort::Bool)),
            Term::Int(_) => {
                self.theories.ints = true;
                Ok(Info::literal(Sort::Int))
            }
            Term::Real(r) => self.real_literal(term, **r),
            Term::Str(_) => {
                self.theories.strings = true;
                Ok(Info::literal(Sort::String))
            }
            Term::App(name, args) => self.app(term, name, args, d),
            Term::Not(a) => self.connective(std::slice::from_ref(&**a), "`!`", d),
            Term::And(args) => self.connective(args, "`&&`", d),
            Term::Or(args) => self.connective(args, "`||`", d),
            Term::Implies(a, b) => self.pair(a, b, Pair::Implies, d),
            Term::Eq(a, b) => self.pair(a, b, Pair::Eq, d),
            Term::Ite(c, a, b) => self.ite(c, a, b, d),
            Term::Lt(a, b) => self.pair(a, b, Pair::Lt, d),
            Term::Le(a, b) => self.pair(a, b, Pair::Le, d),
            Term::Add(args) => self.add(args, d),
            Term::Sub(a, b) => self.pair(a, b, Pair::Sub, d),
            Term::Mul(a, b) => self.pair(a, b, Pair::Mul, d),
            Term::Neg(a) => self.arithmetic(std::slice::from_ref(&**a), "unary `-`", d),
            Term::StrLen(a) => self.str_len(a, d),
            Term::StrConcat(args) => self.concat(args, d),
            Term::StrTest(test, a, b) => {
                let what = test.name();
                let closed = self.expect(a, &Sort::String, what, d)? & self.expect(b, &Sort::String, what, d)?;
                self.theories.strings = true;
                Ok(Info { sort: Sort::Bool, closed, simple: false })
            }
        }
    }

    fn var(&mut self, name: &'q str, sort: &'q Sort) -> Result<Info, String> {
        match self.var_index.get(name).map(|&i| self.vars.get(i)) {
            Some(Some(&(_, earlier))) if earlier == sort => {}
            Some(Some(&(_, earlier))) => return Err(format!("`{name}` is used both as a {earlier} and as a {sort}")),
            Some(None) => return Err(format!("internal error: lost the sort of `{name}`")),
            None => {
                valid_sort_name(sort)?;
                self.theories.note(sort);
                self.var_index.insert(name, self.vars.len());
                self.vars.push((name, sort));
            }
        }
        Ok(Info { sort: sort.clone(), closed: false, simple: true })
    }

    fn real_literal(&mut self, term: &Term, Rational { num, den }: Rational) -> Result<Info, String> {
        if den == 0 {
            return Err(format!("the real literal {term} has a zero denominator"));
        }
        if num == i128::MIN || den == i128::MIN {
            return Err(format!("the real literal {term} is out of range"));
        }
        self.theories.reals = true;
        Ok(Info::literal(Sort::Real))
    }

    fn app(&mut self, term: &'q Term, name: &str, args: &'q [Term], depth: usize) -> Result<Info, String> {
        let Some(decl) = self.func_index.get(name).and_then(|&i| self.funcs.get(i)).copied() else {
            return Err(format!("function `{name}` is not declared"));
        };
        if decl.params.len() != args.len() {
            return Err(format!("`{name}` takes {} argument(s) but is applied to {}", decl.params.len(), args.len()));
        }
        let mut simple = true;
        for (i, (arg, param)) in args.iter().zip(&decl.params).enumerate() {
            let info = self.term(arg, depth)?;
            if info.sort != *param {
                return Err(bad_argument(i, name, &info.sort, param));
            }
            simple &= info.simple;
        }
        if simple {
            self.shown_apps.push(term);
        }
        for sort in decl.params.iter().chain(std::iter::once(&decl.ret)) {
            self.theories.note(sort);
        }
        Ok(Info { sort: decl.ret.clone(), closed: false, simple })
    }

    /// `!`, `&&`, `||`: Bool operands, a Bool result.
    fn connective(&mut self, args: &'q [Term], op: &'static str, depth: usize) -> Result<Info, String> {
        let mut closed = true;
        for arg in args {
            closed &= self.expect(arg, &Sort::Bool, op, depth)?;
        }
        Ok(Info { sort: Sort::Bool, closed, simple: false })
    }

    fn pair(&mut self, a: &'q Term, b: &'q Term, op: Pair, depth: usize) -> Result<Info, String> {
        let a = self.term(a, depth)?;
        let b = self.term(b, depth)?;
        let closed = a.closed && b.closed;
        let numeric = matches!(a.sort, Sort::Int | Sort::Real) && a.sort == b.sort;
        let sort = match op {
            Pair::Implies if a.sort == Sort::Bool && b.sort == Sort::Bool => Sort::Bool,
            Pair::Eq if a.sort == b.sort => Sort::Bool,
            Pair::Lt | Pair::Le if numeric => Sort::Bool,
            Pair::Sub | Pair::Mul if numeric => {
                if op == Pair::Mul && !a.closed && !b.closed {
                    self.theories.nonlinear = true;
                }
                a.sort
            }
            _ => return Err(op.mismatch(&a.sort, &b.sort)),
        };
        Ok(Info { sort, closed, simple: false })
    }

    fn ite(&mut self, c: &'q Term, a: &'q Term, b: &'q Term, depth: usize) -> Result<Info, String> {
        let c_closed = self.expect(c, &Sort::Bool, "the condition of `if`", depth)?;
        let a = self.term(a, depth)?;
        let b = self.term(b, depth)?;
        if a.sort != b.sort {
            return Err(format!("the branches of `if` are a {} and a {}", a.sort, b.sort));
        }
        Ok(Info { sort: a.sort, closed: c_closed && a.closed && b.closed, simple: false })
    }

    fn add(&mut self, args: &'q [Term], depth: usize) -> Result<Info, String> {
        if args.is_empty() {
            return Err("`+` has no operands, so its sort is unknown".to_owned());
        }
        self.arithmetic(args, "`+`", depth)
    }

    /// `+` and unary `-`: operands all Int or all Real, a result of the same sort.
    fn arithmetic(&mut self, args: &'q [Term], op: &'static str, depth: usize) -> Result<Info, String> {
        let mut sorts = Vec::with_capacity(args.len());
        let mut closed = true;
        for arg in args {
            let info = self.term(arg, depth)?;
            closed &= info.closed;
            sorts.push(info.sort);
        }
        match sorts.first() {
            Some(first) if matches!(first, Sort::Int | Sort::Real) && sorts.iter().all(|s| s == first) => {
                Ok(Info { sort: first.clone(), closed, simple: false })
            }
            _ => Err(not_numbers(op, &sorts)),
        }
    }

    fn str_len(&mut self, a: &'q Term, depth: usize) -> Result<Info, String> {
        let closed = self.expect(a, &Sort::String, "`len`", depth)?;
        self.theories.ints = true;
        Ok(Info { sort: Sort::Int, closed, simple: false })
    }

    fn concat(&mut self, args: &'q [Term], depth: usize) -> Result<Info, String> {
        self.theories.strings = true;
        let mut closed = true;
        for arg in args {
            closed &= self.expect(arg, &Sort::String, "`++`", depth)?;
        }
        Ok(Info { sort: Sort::String, closed, simple: false })
    }

    /// Checks `term` against `sort` and says whether it is closed.
    fn expect(&mut self, term: &'q Term, sort: &Sort, context: &str, depth: usize) -> Result<bool, String> {
        let info = self.term(term, depth)?;
        if info.sort != *sort {
            return Err(wrong_sort(context, sort, &info.sort));
        }
        Ok(info.closed)
    }
}

/// The binary operators, for [`Checker::pair`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pair {
    Implies,
    Eq,
    Lt,
    Le,
    Sub,
    Mul,
}

impl Pair {
    #[cold]
    fn mismatch(self, a: &Sort, b: &Sort) -> String {
        match self {
            Pair::Implies => {
                let other = if *a == Sort::Bool { b } else { a };
                wrong_sort("`==>`", &Sort::Bool, other)
            }
            Pair::Eq => format!("`==` compares a {a} with a {b}"),
            Pair::Lt => not_numbers("`<`", &[a.clone(), b.clone()]),
            Pair::Le => not_numbers("`<=`", &[a.clone(), b.clone()]),
            Pair::Sub => not_numbers("`-`", &[a.clone(), b.clone()]),
            Pair::Mul => not_numbers("`*`", &[a.clone(), b.clone()]),
        }
    }
}

/// Z3 takes names as C strings, so an uninterpreted sort's name cannot hold a NUL.
fn valid_sort_name(sort: &Sort) -> Result<(), String> {
    match sort {
        Sort::Named(name) if name.contains('\0') => Err(format!("sort name {name:?} contains a NUL character")),
        _ => Ok(()),
    }
}

#[cold]
fn too_deep() -> String {
    format!("a term is nested more than {MAX_DEPTH} levels deep")
}

#[cold]
fn wrong_sort(context: &str, expected: &Sort, got: &Sort) -> String {
    format!("{context} needs a {expected}, got a {got}")
}

#[cold]
fn bad_argument(i: usize, name: &str, got: &Sort, expected: &Sort) -> String {
    format!("argument {} of `{name}` is a {got}, but `{name}` expects a {expected}", i + 1)
}

#[cold]
fn not_numbers(op: &str, sorts: &[Sort]) -> String {
    let sorts: Vec<String> = sorts.iter().map(Sort::to_string).collect();
    format!("{op} needs Ints or Reals of one sort, got {}", sorts.join(" and "))
}
