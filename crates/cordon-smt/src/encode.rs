//! Translation of a well-sorted query into Z3 terms, and of Z3 string values back into text.
//!
//! Names never reach Z3 as text: constants and functions get numbered symbols (`k!0`, `k!1`, ...),
//! so any name (with spaces, NUL characters, or clashing with an SMT-LIB keyword) is safe, and a
//! constant can never be confused with a function of the same name. Uninterpreted sorts keep their
//! names, because Z3 names their values after them (`Repo!val!0`) and those appear in
//! counterexamples.
//!
//! Strings: Z3 4.8 reads escapes in string literals and its alphabet stops at U+2FFFF, so every
//! character outside printable ASCII is written as `\u{..}`, and characters above U+2FFFF are
//! swapped with unused characters for the duration of the query (see [`Alphabet`]). A query only
//! compares, measures and joins strings, so its validity does not change under such a renaming.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use z3::Symbol;
use z3::ast::{self, Ast, Bool, Dynamic, Int, Real};

use crate::sortcheck::WellSorted;
use crate::{Sort, Term};

/// A Z3 term, typed by the sort the checker gave it.
#[derive(Clone, Debug)]
pub(crate) enum Z {
    Bool(Bool),
    Int(Int),
    Real(Real),
    Str(ast::String),
    /// A value of an uninterpreted sort.
    Named(Dynamic),
}

impl Z {
    pub(crate) fn dynamic(&self) -> Dynamic {
        match self {
            Z::Bool(b) => Dynamic::from(b),
            Z::Int(i) => Dynamic::from(i),
            Z::Real(r) => Dynamic::from(r),
            Z::Str(s) => Dynamic::from(s),
            Z::Named(d) => d.clone(),
        }
    }
}

/// Failures that the sort check should have made impossible.
pub(crate) type Internal = String;

fn internal(what: &str) -> Internal {
    format!("internal error: {what}")
}

/// Builds the Z3 terms of one query; lives as long as the query is being decided.
pub(crate) struct Encoder<'w, 'q> {
    ws: &'w WellSorted<'q>,
    vars: Vec<Z>,
    /// Made on first use: queries declare every function the checker knows of.
    funcs: Vec<Option<z3::FuncDecl>>,
    named_sorts: HashMap<&'q str, z3::Sort>,
    pub(crate) alphabet: Alphabet,
}

impl<'w, 'q> Encoder<'w, 'q> {
    pub(crate) fn new(ws: &'w WellSorted<'q>) -> Result<Self, Internal> {
        let mut encoder = Encoder {
            ws,
            vars: Vec::with_capacity(ws.vars.len()),
            funcs: ws.funcs.iter().map(|_| None).collect(),
            named_sorts: HashMap::new(),
            alphabet: Alphabet::for_query(ws),
        };
        for (i, &(_, sort)) in ws.vars.iter().enumerate() {
            let symbol = symbol(i, 0)?;
            let constant = match sort {
                Sort::Bool => Z::Bool(Bool::new_const(symbol)),
                Sort::Int => Z::Int(Int::new_const(symbol)),
                Sort::Real => Z::Real(Real::new_const(symbol)),
                Sort::String => Z::Str(ast::String::new_const(symbol)),
                Sort::Named(_) => Z::Named(Dynamic::new_const(symbol, &encoder.sort(sort))),
            };
            encoder.vars.push(constant);
        }
        Ok(encoder)
    }

    /// The Z3 constant of the `i`-th free constant of the query.
    pub(crate) fn var(&self, i: usize) -> Option<&Z> {
        self.vars.get(i)
    }

    pub(crate) fn formula(&mut self, term: &Term) -> Result<Bool, Internal> {
        match self.term(term)? {
            Z::Bool(b) => Ok(b),
            _ => Err(internal("a formula is not a Bool")),
        }
    }

    fn sort(&mut self, sort: &'q Sort) -> z3::Sort {
        match sort {
            Sort::Bool => z3::Sort::bool(),
            Sort::Int => z3::Sort::int(),
            Sort::Real => z3::Sort::real(),
            Sort::String => z3::Sort::string(),
            Sort::Named(name) => self
                .named_sorts
                .entry(name)
                .or_insert_with(|| z3::Sort::uninterpreted(Symbol::String(name.clone())))
                .clone(),
        }
    }

    // As in the sort checker, the recursive path is kept to small functions, so that debug
    // builds do not need a large stack for deep terms.
    pub(crate) fn term(&mut self, term: &Term) -> Result<Z, Internal> {
        match term {
            Term::Var(name, _) => self.var_named(name),
            Term::Bool(b) => Ok(Z::Bool(Bool::from_bool(*b))),
            Term::Int(i) => Ok(Z::Int(Int::from_i64(*i))),
            Term::Real(r) => real_literal(r.num, r.den),
            Term::Str(s) => Ok(Z::Str(self.string_literal(s)?)),
            Term::App(name, args) => self.app(name, args),
            Term::Not(a) => Ok(Z::Bool(self.formula(a)?.not())),
            Term::And(args) => self.and_or(args, true),
            Term::Or(args) => self.and_or(args, false),
            Term::Implies(a, b) => Ok(Z::Bool(self.formula(a)?.implies(self.formula(b)?))),
            Term::Eq(a, b) => self.eq(a, b),
            Term::Ite(c, a, b) => self.ite(c, a, b),
            Term::Lt(a, b) => self.compare(a, b, true),
            Term::Le(a, b) => self.compare(a, b, false),
            Term::Add(args) => self.add(args),
            Term::Sub(a, b) => self.sub_mul(a, b, true),
            Term::Mul(a, b) => self.sub_mul(a, b, false),
            Term::Neg(a) => self.neg(a),
            Term::StrLen(a) => match self.term(a)? {
                Z::Str(s) => Ok(Z::Int(s.length())),
                _ => Err(internal("`len` of a non-string")),
            },
            Term::StrConcat(args) => self.concat(args),
            Term::StrTest(test, a, b) => self.str_test(*test, a, b),
        }
    }

    fn str_test(&mut self, test: crate::StrTest, a: &Term, b: &Term) -> Result<Z, Internal> {
        let (Z::Str(s), Z::Str(t)) = (self.term(a)?, self.term(b)?) else {
            return Err(internal("a string test of a non-string"));
        };
        Ok(Z::Bool(match test {
            crate::StrTest::StartsWith => t.prefix(&s),
            crate::StrTest::EndsWith => t.suffix(&s),
            crate::StrTest::Contains => s.contains(&t),
        }))
    }

    fn var_named(&self, name: &str) -> Result<Z, Internal> {
        let i = self.ws.var_index.get(name).ok_or_else(|| internal("unknown constant"))?;
        self.vars.get(*i).cloned().ok_or_else(|| internal("unknown constant"))
    }

    fn app(&mut self, name: &str, args: &[Term]) -> Result<Z, Internal> {
        // Plain loops rather than `collect`: iterator adapters cost stack frames in debug builds.
        let mut dynamic_args = Vec::with_capacity(args.len());
        for arg in args {
            dynamic_args.push(self.term(arg)?.dynamic());
        }
        let args = dynamic_args;
        let arg_refs: Vec<&dyn Ast> = args.iter().map(|a| a as &dyn Ast).collect();
        let i = *self.ws.func_index.get(name).ok_or_else(|| internal("undeclared function"))?;
        let declared = *self.ws.funcs.get(i).ok_or_else(|| internal("lost a declaration"))?;
        if matches!(self.funcs.get(i), Some(None)) {
            let params: Vec<z3::Sort> = declared.params.iter().map(|p| self.sort(p)).collect();
            let param_refs: Vec<&z3::Sort> = params.iter().collect();
            let ret = self.sort(&declared.ret);
            let decl = z3::FuncDecl::new(symbol(i, 1)?, &param_refs, &ret);
            if let Some(slot) = self.funcs.get_mut(i) {
                *slot = Some(decl);
            }
        }
        let Some(Some(decl)) = self.funcs.get(i) else { return Err(internal("lost a declaration")) };
        let result = decl.apply(&arg_refs);
        let sort_error = || internal("an application has the wrong sort");
        Ok(match &declared.ret {
            Sort::Bool => Z::Bool(result.as_bool().ok_or_else(sort_error)?),
            Sort::Int => Z::Int(result.as_int().ok_or_else(sort_error)?),
            Sort::Real => Z::Real(result.as_real().ok_or_else(sort_error)?),
            Sort::String => Z::Str(result.as_string().ok_or_else(sort_error)?),
            Sort::Named(_) => Z::Named(result),
        })
    }

    fn and_or(&mut self, args: &[Term], and: bool) -> Result<Z, Internal> {
        Ok(Z::Bool(match args {
            [] => Bool::from_bool(and),
            [only] => self.formula(only)?,
            _ if and => Bool::and(&self.formulas(args)?),
            _ => Bool::or(&self.formulas(args)?),
        }))
    }

    fn eq(&mut self, a: &Term, b: &Term) -> Result<Z, Internal> {
        Ok(Z::Bool(match (self.term(a)?, self.term(b)?) {
            (Z::Bool(a), Z::Bool(b)) => a.eq(b),
            (Z::Int(a), Z::Int(b)) => a.eq(b),
            (Z::Real(a), Z::Real(b)) => a.eq(b),
            (Z::Str(a), Z::Str(b)) => a.eq(b),
            (Z::Named(a), Z::Named(b)) if a.get_sort() == b.get_sort() => a.eq(b),
            _ => return Err(internal("`==` between different sorts")),
        }))
    }

    fn ite(&mut self, c: &Term, a: &Term, b: &Term) -> Result<Z, Internal> {
        let c = self.formula(c)?;
        Ok(match (self.term(a)?, self.term(b)?) {
            (Z::Bool(a), Z::Bool(b)) => Z::Bool(c.ite(&a, &b)),
            (Z::Int(a), Z::Int(b)) => Z::Int(c.ite(&a, &b)),
            (Z::Real(a), Z::Real(b)) => Z::Real(c.ite(&a, &b)),
            (Z::Str(a), Z::Str(b)) => Z::Str(c.ite(&a, &b)),
            (Z::Named(a), Z::Named(b)) if a.get_sort() == b.get_sort() => Z::Named(c.ite(&a, &b)),
            _ => return Err(internal("`if` with branches of different sorts")),
        })
    }

    fn compare(&mut self, a: &Term, b: &Term, strict: bool) -> Result<Z, Internal> {
        Ok(Z::Bool(match (self.term(a)?, self.term(b)?, strict) {
            (Z::Int(a), Z::Int(b), true) => a.lt(b),
            (Z::Int(a), Z::Int(b), false) => a.le(b),
            (Z::Real(a), Z::Real(b), true) => a.lt(b),
            (Z::Real(a), Z::Real(b), false) => a.le(b),
            _ => return Err(internal("a comparison of non-numbers")),
        }))
    }

    fn add(&mut self, args: &[Term]) -> Result<Z, Internal> {
        let mut terms = Vec::with_capacity(args.len());
        for arg in args {
            terms.push(self.term(arg)?);
        }
        let args = terms;
        match args.as_slice() {
            [only] => Ok(only.clone()),
            [Z::Int(_), ..] => Ok(Z::Int(Int::add(&ints(&args)?))),
            [Z::Real(_), ..] => Ok(Z::Real(Real::add(&reals(&args)?))),
            _ => Err(internal("`+` on non-numbers")),
        }
    }

    fn sub_mul(&mut self, a: &Term, b: &Term, sub: bool) -> Result<Z, Internal> {
        Ok(match (self.term(a)?, self.term(b)?, sub) {
            (Z::Int(a), Z::Int(b), true) => Z::Int(Int::sub(&[a, b])),
            (Z::Int(a), Z::Int(b), false) => Z::Int(Int::mul(&[a, b])),
            (Z::Real(a), Z::Real(b), true) => Z::Real(Real::sub(&[a, b])),
            (Z::Real(a), Z::Real(b), false) => Z::Real(Real::mul(&[a, b])),
            _ => return Err(internal("arithmetic on non-numbers")),
        })
    }

    fn neg(&mut self, a: &Term) -> Result<Z, Internal> {
        match self.term(a)? {
            Z::Int(a) => Ok(Z::Int(a.unary_minus())),
            Z::Real(a) => Ok(Z::Real(a.unary_minus())),
            _ => Err(internal("unary `-` on a non-number")),
        }
    }

    fn concat(&mut self, args: &[Term]) -> Result<Z, Internal> {
        let mut parts = Vec::with_capacity(args.len());
        for arg in args {
            match self.term(arg)? {
                Z::Str(s) => parts.push(s),
                _ => return Err(internal("`++` of a non-string")),
            }
        }
        Ok(Z::Str(match parts.as_slice() {
            [] => self.string_literal("")?,
            [only] => only.clone(),
            _ => ast::String::concat(&parts),
        }))
    }

    fn formulas(&mut self, terms: &[Term]) -> Result<Vec<Bool>, Internal> {
        let mut formulas = Vec::with_capacity(terms.len());
        for term in terms {
            formulas.push(self.formula(term)?);
        }
        Ok(formulas)
    }

    fn string_literal(&self, s: &str) -> Result<ast::String, Internal> {
        let mut text = String::with_capacity(s.len());
        for c in s.chars() {
            let code = self.alphabet.to_z3(c);
            if (0x20..0x7f).contains(&code) && code != u32::from('\\') {
                text.push(c);
            } else {
                // Infallible: writing to a String.
                let _ = write!(text, "\\u{{{code:x}}}");
            }
        }
        <ast::String as std::str::FromStr>::from_str(&text).map_err(|_| internal("a NUL in an escaped string"))
    }
}

fn real_literal(num: i128, den: i128) -> Result<Z, Internal> {
    // Z3 misreads a negative denominator, so the sign goes on the numerator.
    let (num, den) = if den < 0 {
        (
            num.checked_neg().ok_or_else(|| internal("a real literal out of range"))?,
            den.checked_neg().ok_or_else(|| internal("a real literal out of range"))?,
        )
    } else {
        (num, den)
    };
    Real::from_rational_str(&num.to_string(), &den.to_string())
        .map(Z::Real)
        .ok_or_else(|| internal("Z3 refused a rational literal"))
}

fn ints(args: &[Z]) -> Result<Vec<Int>, Internal> {
    args.iter().map(|z| if let Z::Int(i) = z { Ok(i.clone()) } else { Err(internal("mixed sorts in `+`")) }).collect()
}

fn reals(args: &[Z]) -> Result<Vec<Real>, Internal> {
    args.iter().map(|z| if let Z::Real(r) = z { Ok(r.clone()) } else { Err(internal("mixed sorts in `+`")) }).collect()
}

/// Constants get even numbers and functions odd ones, so they never share a symbol.
fn symbol(i: usize, parity: usize) -> Result<Symbol, Internal> {
    i.checked_mul(2)
        .and_then(|n| n.checked_add(parity))
        .and_then(|n| u32::try_from(n).ok())
        .map(Symbol::Int)
        .ok_or_else(|| internal("too many names in one query"))
}

/// The largest character code Z3 4.8 accepts in a string.
const Z3_MAX_CHAR: u32 = 0x2FFFF;

/// A renaming of the characters above [`Z3_MAX_CHAR`] onto characters no literal of the query
/// uses. Empty (the identity) for nearly every query.
#[derive(Debug, Default)]
pub(crate) struct Alphabet {
    to_z3: HashMap<char, u32>,
    from_z3: HashMap<u32, char>,
}

impl Alphabet {
    fn for_query(ws: &WellSorted<'_>) -> Alphabet {
        let mut literals = Vec::new();
        if ws.theories.strings {
            for term in ws.query.hypotheses.iter().chain(std::iter::once(&ws.query.goal)) {
                collect_literals(term, &mut literals);
            }
        }
        let high: Vec<char> = literals.iter().flat_map(|s| s.chars()).filter(|&c| u32::from(c) > Z3_MAX_CHAR).collect();
        if high.is_empty() {
            return Alphabet::default();
        }
        let used: HashSet<u32> = literals.iter().flat_map(|s| s.chars()).map(u32::from).collect();
        let mut free =
            (0x80..=Z3_MAX_CHAR).rev().filter(|code| !used.contains(code) && char::from_u32(*code).is_some());
        let mut alphabet = Alphabet::default();
        for c in high {
            if alphabet.to_z3.contains_key(&c) {
                continue;
            }
            // A query cannot hold more distinct characters than Z3 has, short of gigabytes of text.
            if let Some(code) = free.next() {
                alphabet.to_z3.insert(c, code);
                alphabet.from_z3.insert(code, c);
            }
        }
        alphabet
    }

    fn to_z3(&self, c: char) -> u32 {
        self.to_z3.get(&c).copied().unwrap_or(u32::from(c))
    }

    /// The character a Z3 character code stands for; `None` for a surrogate code, which Z3 allows
    /// and Rust does not.
    pub(crate) fn char_of(&self, code: u32) -> Option<char> {
        self.from_z3.get(&code).copied().or_else(|| char::from_u32(code))
    }
}

fn collect_literals<'q>(term: &'q Term, out: &mut Vec<&'q str>) {
    term.walk(&mut |t| {
        if let Term::Str(s) = t {
            out.push(s);
        }
    });
}

/// Reads Z3's text for a string value: characters 0x20..=0x7f as themselves, all others as
/// `\u{hex}`. Returns `None` when the text holds a backslash, because Z3 4.8 does not escape
/// backslashes, so `\u{e9}` could be one character or six; the caller then asks for the
/// characters one at a time.
pub(crate) fn decode_z3_string(text: &str) -> Option<Vec<u32>> {
    if text.contains('\\') { None } else { Some(text.chars().map(u32::from).collect()) }
}

/// Reads Z3's text for a one-character string, which is never ambiguous.
pub(crate) fn decode_z3_char(text: &str) -> Option<u32> {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Some(u32::from(c)),
        _ => {
            let hex = text.strip_prefix("\\u{")?.strip_suffix('}')?;
            u32::from_str_radix(hex, 16).ok()
        }
    }
}
