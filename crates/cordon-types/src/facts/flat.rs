//! A fact's term as the fact stack keeps it: its nodes in one flat list, each operator before
//! its operands, with constants, sorts and functions by their number in the stack's [`Symbols`].
//!
//! A plan keeps several facts a line for as long as their scope lasts. As trees of boxes their
//! terms were most of a long plan's checking memory: a `Box` for every operand, a constant or a
//! literal included, each an allocation of its own. Flat, a fact is one allocation of 16 bytes a
//! node, made into a [`Term`] again only when an obligation uses it ([`Symbols::term`]).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use cordon_smt::{Sort, StrTest, Term};

/// One node of a flat term: a leaf, or an operator whose operands follow it, each whole (a list
/// operator has as many as it says).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A constant, by the numbers of its name and its sort in the [`Symbols`].
    Var {
        name: u32,
        sort: u32,
    },
    Bool(bool),
    Int(i64),
    /// A function, by its number in the [`Symbols`], applied to that many operands.
    App {
        func: u32,
        args: u32,
    },
    Not,
    And(u32),
    Or(u32),
    Implies,
    Eq,
    Ite,
    Lt,
    Le,
    Add(u32),
    Sub,
    Mul,
    Neg,
    StrLen,
    StrConcat(u32),
    StrTest(StrTest),
    /// A rare leaf (a string or a real literal), or a term whose numbers do not fit in a node,
    /// kept as it is.
    Whole(Box<Term>),
}

// A plan keeps a node for every operator and operand of every fact in scope.
const _: () = assert!(std::mem::size_of::<Node>() <= 16);

/// A hash of flat nodes, by which the stack finds a fact pushed again. Not keyed: two facts with
/// one hash cost at most a fact kept twice, and a hash of each word is quicker than SipHash.
pub fn fingerprint(nodes: &[Node]) -> u64 {
    let mut h = Mixer(0);
    nodes.hash(&mut h);
    h.0
}

/// Mixes each word written into the hash (rotate, xor, multiply: the Rust compiler's FxHash).
struct Mixer(u64);

impl Mixer {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for Mixer {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

/// The sorts with numbers of their own: `Bool`, `Int`, `Real` and `String`.
const BUILT_IN_SORTS: u32 = 4;

/// Values numbered in the order they are first seen, found again by value or by number. The
/// value looked up last is kept aside: a fact names few sorts and functions, most of them several
/// times, and each is then found without hashing it.
#[derive(Clone, Debug)]
struct Numbered<K> {
    numbers: HashMap<K, u32>,
    by_number: Vec<K>,
    last: Option<(K, u32)>,
}

impl<K> Default for Numbered<K> {
    fn default() -> Numbered<K> {
        Numbered { numbers: HashMap::new(), by_number: Vec::new(), last: None }
    }
}

impl<K: Clone + Eq + std::hash::Hash> Numbered<K> {
    /// The number of `k`, given now if it had none (the next one); `None` past `u32`'s range.
    fn number(&mut self, k: &K) -> Option<u32> {
        if let Some((last, x)) = &self.last
            && last == k
        {
            return Some(*x);
        }
        let x = match self.numbers.get(k) {
            Some(&x) => x,
            None => {
                let x = u32::try_from(self.by_number.len()).ok()?;
                self.numbers.insert(k.clone(), x);
                self.by_number.push(k.clone());
                x
            }
        };
        self.last = Some((k.clone(), x));
        Some(x)
    }

    /// The value numbered `x`.
    fn get(&self, x: u32) -> Option<&K> {
        self.by_number.get(usize::try_from(x).ok()?)
    }
}

/// The names of the constants, the sorts and the functions flat terms mention, each numbered
/// when first seen and kept for the stack's life (a name seen once is likely seen again).
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    /// Each name's number; the key is the terms' own shared name, not a copy.
    names: HashMap<Arc<str>, usize>,
    /// The names by number.
    numbered: Vec<Arc<str>>,
    /// The named sorts (numbered from [`BUILT_IN_SORTS`] on in a node).
    sorts: Numbered<Sort>,
    funcs: Numbered<Arc<str>>,
}

impl Symbols {
    /// The number of the name `n`, if it has one.
    pub fn get(&self, n: &str) -> Option<usize> {
        self.names.get(n).copied()
    }

    /// How many names are numbered (the numbers are those below).
    pub fn len(&self) -> usize {
        self.numbered.len()
    }

    /// The number of the name `n`, given now if it had none (the next number).
    fn number(&mut self, n: &Arc<str>) -> usize {
        if let Some(&x) = self.names.get(n) {
            return x;
        }
        let x = self.numbered.len();
        self.names.insert(n.clone(), x);
        self.numbered.push(n.clone());
        x
    }

    /// The number of a sort: the four built in are numbers of their own, a named sort is
    /// numbered when first seen.
    fn sort(&mut self, s: &Sort) -> Option<u32> {
        match s {
            Sort::Bool => Some(0),
            Sort::Int => Some(1),
            Sort::Real => Some(2),
            Sort::String => Some(3),
            Sort::Named(_) => self.sorts.number(s)?.checked_add(BUILT_IN_SORTS),
        }
    }

    fn sort_numbered(&self, x: u32) -> Option<Sort> {
        Some(match x {
            0 => Sort::Bool,
            1 => Sort::Int,
            2 => Sort::Real,
            3 => Sort::String,
            x => self.sorts.get(x - BUILT_IN_SORTS)?.clone(),
        })
    }

    fn func(&mut self, f: &Arc<str>) -> Option<u32> {
        self.funcs.number(f)
    }

    /// `t` flat, and the numbers of the constants it mentions, each once, in the order of their
    /// names; names, sorts and functions without a number yet are numbered. Each name is looked
    /// up once however often it occurs.
    pub fn flatten(&mut self, t: &Term) -> (Box<[Node]>, Vec<usize>) {
        let mut size = 0;
        t.walk(&mut |_| size += 1);
        let mut nodes = Vec::with_capacity(size);
        // Each constant as it occurs: its name and its node (whose `name` is filled in last).
        let mut occurrences: Vec<(&Arc<str>, usize)> = Vec::new();
        self.flatten_into(t, &mut nodes, &mut occurrences);
        occurrences.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut numbers = Vec::new();
        let mut last: Option<(&Arc<str>, Option<u32>)> = None;
        for (name, at) in occurrences {
            let number = match last {
                Some((seen, number)) if seen == name => number,
                _ => {
                    let x = self.number(name);
                    numbers.push(x);
                    let number = u32::try_from(x).ok();
                    last = Some((name, number));
                    number
                }
            };
            let Some(Node::Var { name: slot, sort }) = nodes.get_mut(at) else { continue };
            match number {
                Some(x) => *slot = x,
                // More constants than a node can number: this one is kept as it is.
                None => {
                    let sort = self.sort_numbered(*sort).unwrap_or(Sort::Bool);
                    nodes[at] = Node::Whole(Box::new(Term::Var(name.clone(), sort)));
                }
            }
        }
        (nodes.into_boxed_slice(), numbers)
    }

    fn flatten_into<'t>(&mut self, t: &'t Term, out: &mut Vec<Node>, occurrences: &mut Vec<(&'t Arc<str>, usize)>) {
        let count = |ts: &[Term]| u32::try_from(ts.len()).ok();
        let node = match t {
            Term::Var(n, s) => match self.sort(s) {
                Some(sort) => {
                    occurrences.push((n, out.len()));
                    Node::Var { name: 0, sort }
                }
                None => Node::Whole(Box::new(t.clone())),
            },
            Term::Bool(b) => Node::Bool(*b),
            Term::Int(i) => Node::Int(*i),
            Term::Real(_) | Term::Str(_) => Node::Whole(Box::new(t.clone())),
            Term::App(f, args) => match (self.func(f), count(args)) {
                (Some(func), Some(args)) => Node::App { func, args },
                _ => Node::Whole(Box::new(t.clone())),
            },
            Term::Not(_) => Node::Not,
            Term::And(ts) | Term::Or(ts) | Term::Add(ts) | Term::StrConcat(ts) => match (t, count(ts)) {
                (Term::And(_), Some(n)) => Node::And(n),
                (Term::Or(_), Some(n)) => Node::Or(n),
                (Term::Add(_), Some(n)) => Node::Add(n),
                (_, Some(n)) => Node::StrConcat(n),
                (_, None) => Node::Whole(Box::new(t.clone())),
            },
            Term::Implies(..) => Node::Implies,
            Term::Eq(..) => Node::Eq,
            Term::Ite(..) => Node::Ite,
            Term::Lt(..) => Node::Lt,
            Term::Le(..) => Node::Le,
            Term::Sub(..) => Node::Sub,
            Term::Mul(..) => Node::Mul,
            Term::Neg(_) => Node::Neg,
            Term::StrLen(_) => Node::StrLen,
            Term::StrTest(test, ..) => Node::StrTest(*test),
        };
        let whole = matches!(node, Node::Whole(_));
        out.push(node);
        if !whole {
            t.each_child(|c| self.flatten_into(c, out, occurrences));
        }
    }

    /// The term `nodes` (made by [`Symbols::flatten`]) stands for.
    pub fn term(&self, nodes: &[Node]) -> Term {
        let mut at = 0;
        self.term_at(nodes, &mut at)
    }

    /// The term that starts at `nodes[*at]`, with `*at` moved past it. Nodes are only ever made
    /// by [`Symbols::flatten`], so none is missing; were one, it would read as `true`, which
    /// adds nothing to what a query assumes.
    fn term_at(&self, nodes: &[Node], at: &mut usize) -> Term {
        let Some(node) = nodes.get(*at) else { return Term::Bool(true) };
        *at += 1;
        let mut one = || Box::new(self.term_at(nodes, at));
        match node {
            Node::Var { name, sort } => match (self.numbered.get(*name as usize), self.sort_numbered(*sort)) {
                (Some(name), Some(sort)) => Term::Var(name.clone(), sort),
                _ => Term::Bool(true),
            },
            Node::Bool(b) => Term::Bool(*b),
            Node::Int(i) => Term::Int(*i),
            Node::Whole(t) => (**t).clone(),
            Node::Not => Term::Not(one()),
            Node::Implies => Term::Implies(one(), one()),
            Node::Eq => Term::Eq(one(), one()),
            Node::Ite => Term::Ite(one(), one(), one()),
            Node::Lt => Term::Lt(one(), one()),
            Node::Le => Term::Le(one(), one()),
            Node::Sub => Term::Sub(one(), one()),
            Node::Mul => Term::Mul(one(), one()),
            Node::Neg => Term::Neg(one()),
            Node::StrLen => Term::StrLen(one()),
            Node::StrTest(test) => Term::StrTest(*test, one(), one()),
            Node::App { func, args } => {
                let args = self.terms_at(nodes, at, *args);
                match self.funcs.get(*func) {
                    Some(f) => Term::App(f.clone(), args),
                    None => Term::Bool(true),
                }
            }
            Node::And(n) => Term::And(self.terms_at(nodes, at, *n)),
            Node::Or(n) => Term::Or(self.terms_at(nodes, at, *n)),
            Node::Add(n) => Term::Add(self.terms_at(nodes, at, *n)),
            Node::StrConcat(n) => Term::StrConcat(self.terms_at(nodes, at, *n)),
        }
    }

    /// The `n` terms that start at `nodes[*at]`.
    fn terms_at(&self, nodes: &[Node], at: &mut usize, n: u32) -> Vec<Term> {
        (0..n).map(|_| self.term_at(nodes, at)).collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use cordon_smt::{Sort, StrTest, Term};

    use super::{Node, Symbols};

    fn var(name: &str, sort: Sort) -> Term {
        Term::Var(name.into(), sort)
    }

    fn b(t: Term) -> Box<Term> {
        Box::new(t)
    }

    /// Terms of every kind, nested.
    fn samples() -> Vec<Term> {
        let x = var("x", Sort::Int);
        let s = var("s", Sort::Named("Session".into()));
        let tainted = Term::App("tainted".into(), vec![s.clone()]);
        let text = var("t", Sort::String);
        vec![
            x.clone(),
            Term::Bool(false),
            Term::Int(i64::MIN),
            Term::real(-7, 3),
            Term::Str("a \"quoted\" text".into()),
            Term::Not(b(tainted.clone())),
            Term::And(vec![
                Term::Eq(
                    b(x.clone()),
                    b(Term::Add(vec![Term::Mul(b(Term::Int(4)), b(var("q", Sort::Int))), x.clone()])),
                ),
                Term::Implies(b(Term::Le(b(Term::Int(0)), b(x.clone()))), b(Term::Lt(b(x.clone()), b(Term::Int(4))))),
            ]),
            Term::Or(vec![Term::Neg(b(x.clone())), Term::Sub(b(x.clone()), b(Term::Int(1)))]),
            Term::Or(Vec::new()),
            Term::Ite(b(tainted.clone()), b(Term::Int(1)), b(Term::App("level".into(), vec![s.clone(), x.clone()]))),
            Term::StrTest(
                StrTest::EndsWith,
                b(Term::StrConcat(vec![text.clone(), Term::Str("!".into())])),
                b(Term::StrLen(b(text.clone()))),
            ),
            Term::App("zero".into(), Vec::new()),
            // The same name with another sort is another constant.
            Term::Eq(b(var("x", Sort::Bool)), b(var("x", Sort::Int))),
        ]
    }

    #[test]
    fn a_flat_term_is_the_term_it_was_made_from() {
        let mut symbols = Symbols::default();
        for t in samples() {
            let (nodes, _) = symbols.flatten(&t);
            assert_eq!(symbols.term(&nodes), t);
            // The same term is the same nodes, however many terms were made flat between.
            assert_eq!(symbols.flatten(&t).0, nodes);
        }
        for t in samples() {
            let (nodes, _) = symbols.flatten(&t);
            assert_eq!(symbols.term(&nodes), t);
        }
    }

    #[test]
    fn a_constant_is_numbered_once_and_leaves_are_not_boxed() {
        let mut symbols = Symbols::default();
        let (x, y) = (var("x", Sort::Int), var("y", Sort::Int));
        let (nodes, constants) = symbols.flatten(&Term::Le(b(y.clone()), b(Term::Add(vec![x.clone(), x, y]))));
        let (x, y) = (symbols.get("x").unwrap(), symbols.get("y").unwrap());
        assert_ne!(x, y);
        // The constants in the order of their names, each once.
        assert_eq!(constants, [x, y]);
        let var = |name: usize| Node::Var { name: u32::try_from(name).unwrap(), sort: 1 };
        assert_eq!(&*nodes, [Node::Le, var(y), Node::Add(3), var(x), var(x), var(y)]);
        assert_eq!(symbols.get("z"), None);
    }
}
