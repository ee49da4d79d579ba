//! Abstract values: what the analysis knows of a run-time value without running the plan.
//!
//! Every abstract value bounds the label its run-time values carry from both sides: `lo` is
//! in every such label (what the value is at least: secret to alice, or written by no one in
//! particular), `hi` is above every one (what it may be at most). `hi` bounds the value's own
//! label and, where its parts are not known ([`Kind::Unknown`]), the labels of everything
//! inside it; a known structure (a tuple, a record, a list's elements) keeps each part's
//! bounds, as the run time keeps each part's label. A few values are known exactly (literals,
//! `user()`), which lets the policy's label expressions (`endorsed(r.owner)`) be computed where
//! the plan fixes what they read.

use std::collections::BTreeSet;
use std::sync::Arc;

use cordon_label::DcLabel;
use cordon_syntax::ast::{ClosureParam, Expr};
use serde::Serialize;

/// Bounds on a label: `lo ⊑ label ⊑ hi` (in JSON, each as its formula,
/// `<secrecy: alice, integrity: true>`, as run traces write labels).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Bounds {
    #[serde(serialize_with = "formula")]
    pub lo: DcLabel,
    #[serde(serialize_with = "formula")]
    pub hi: DcLabel,
}

fn formula<S: serde::Serializer>(l: &DcLabel, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(l)
}

impl Bounds {
    pub fn bottom() -> Bounds {
        Bounds { lo: DcLabel::bottom(), hi: DcLabel::bottom() }
    }

    pub fn exactly(l: DcLabel) -> Bounds {
        Bounds { lo: l.clone(), hi: l }
    }

    /// Nothing known: from the bottom label to the top one.
    pub fn any() -> Bounds {
        Bounds { lo: DcLabel::bottom(), hi: DcLabel::top() }
    }

    /// The label of a value computed from both: both bounds joined.
    pub fn join(&self, other: &Bounds) -> Bounds {
        Bounds { lo: self.lo.join(&other.lo), hi: self.hi.join(&other.hi) }
    }

    /// The label of a value that is one of the two (paths that meet): the lower bounds' meet,
    /// the upper bounds' join.
    pub fn either(&self, other: &Bounds) -> Bounds {
        Bounds { lo: self.lo.meet(&other.lo), hi: self.hi.join(&other.hi) }
    }

    pub fn is_bottom(&self) -> bool {
        self.hi.is_bottom()
    }
}

/// Where a value came from, for the summary: an argument "from the plan's literals and the
/// result of `GitHub.list_issues`".
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// Text the plan itself wrote.
    Literal,
    /// An input the host gave the plan (an entry parameter).
    Input { name: String },
    /// The result of a tool call, at a line of the plan.
    Result { tool: String, line: u32 },
    /// What a model wrote to fill a typed hole, at a line.
    Fill { line: u32 },
}

/// At most this many origins are kept per value; more say "and more".
const MAX_ORIGINS: usize = 6;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Origins {
    pub known: BTreeSet<Origin>,
    /// Some were left out.
    pub more: bool,
}

impl Origins {
    pub fn one(o: Origin) -> Origins {
        Origins { known: BTreeSet::from([o]), more: false }
    }

    pub fn union(&self, other: &Origins) -> Origins {
        if other.known.is_subset(&self.known) && (self.more || !other.more) {
            return self.clone();
        }
        let mut out = self.clone();
        out.more |= other.more;
        for o in &other.known {
            if out.known.len() >= MAX_ORIGINS {
                out.more = true;
                break;
            }
            out.known.insert(o.clone());
        }
        out
    }
}

/// A value the analysis tracks: its label's bounds, where it came from, and what is known of
/// its shape.
#[derive(Clone, Debug)]
pub struct Abs {
    pub label: Bounds,
    pub origins: Origins,
    pub kind: Kind,
}

#[derive(Clone, Debug)]
pub enum Kind {
    /// Nothing known of its shape: `label.hi` bounds everything inside it too.
    Unknown,
    Str(Arc<str>),
    Int(i64),
    Bool(bool),
    Unit,
    Tuple(Vec<Abs>),
    /// A record; `opaque` ones are the host's (the boundary looks at their own label only).
    /// `declared` is the label its type declares for each field (`@label(..)` in a policy),
    /// computed from the other fields, kept apart so that it can be computed again when a
    /// path learns a field's value (`ty` names the type); a field read carries it.
    Record {
        opaque: bool,
        ty: Option<Arc<str>>,
        fields: Vec<(Arc<str>, Abs)>,
        declared: Vec<Bounds>,
    },
    /// A list: every element within `elem`, `len` elements if known.
    List {
        elem: Box<Abs>,
        len: Option<u64>,
    },
    /// A variant of an enum (or `Option`/`Result`): `name` if known, each payload's bounds
    /// (joined over the variants it may be, when not known).
    Variant {
        name: Option<Arc<str>>,
        payload: Vec<Abs>,
    },
    /// A label value (in a policy's `@label`): bounds on the label it is.
    Label(Bounds),
    /// A capability, by its declared name.
    Capability(Arc<str>),
    /// A host-made value passed by reference (a session, an opaque handle), by its type.
    Handle(Arc<str>),
    /// A closure: its parameters, body and the names it saw where it was made.
    Closure(Arc<Closure>),
    /// A named function of the plan or the policies.
    Func(Arc<str>),
    /// `to_labeled { .. }`: the box's content, whose label the box hides.
    Labeled(Box<Abs>),
}

#[derive(Debug)]
pub struct Closure {
    pub params: Vec<ClosureParam>,
    pub body: Expr,
    pub env: Vec<(Arc<str>, Abs)>,
}

impl Abs {
    pub fn new(kind: Kind, label: Bounds, origins: Origins) -> Abs {
        Abs { label, origins, kind }
    }

    /// A value the plan wrote: the bottom label.
    pub fn literal(kind: Kind) -> Abs {
        Abs { label: Bounds::bottom(), origins: Origins::one(Origin::Literal), kind }
    }

    pub fn plain(kind: Kind) -> Abs {
        Abs { label: Bounds::bottom(), origins: Origins::default(), kind }
    }

    /// A value of unknown shape within `label`.
    pub fn unknown(label: Bounds, origins: Origins) -> Abs {
        Abs { label, origins, kind: Kind::Unknown }
    }

    /// Nothing known at all.
    pub fn any() -> Abs {
        Abs::unknown(Bounds::any(), Origins::default())
    }

    /// A run-time value exactly as it is: its label (both bounds), its parts, its scalars
    /// known. `opaque` says which record types are the host's. A function value (whose code
    /// the analysis cannot see again) is unknown, and calling it is as open as a hole.
    pub fn of_val(v: &cordon_runtime::Val, opaque: &dyn Fn(&str) -> bool, origins: &Origins) -> Abs {
        use cordon_runtime::Value;
        let label = Bounds::exactly(v.label.dc());
        let of = |x: &cordon_runtime::Val| Abs::of_val(x, opaque, origins);
        let kind = match &v.value {
            Value::Unit => Kind::Unit,
            Value::Bool(b) => Kind::Bool(*b),
            Value::Int(i) => Kind::Int(*i),
            Value::Float(_) | Value::Decimal(_) | Value::Time(_) => Kind::Unknown,
            Value::Str(s) => Kind::Str(s.as_str().into()),
            Value::Tuple(xs) => Kind::Tuple(xs.iter().map(of).collect()),
            Value::List(xs) => {
                let elem = xs.iter().map(of).reduce(|a, b| a.either(&b)).unwrap_or_else(|| Abs::plain(Kind::Unknown));
                Kind::List { elem: Box::new(elem), len: Some(xs.len() as u64) }
            }
            Value::Record(r) => Kind::Record {
                opaque: opaque(r.ty()),
                ty: None,
                fields: r.fields().map(|(n, x)| (n.clone(), of(x))).collect(),
                declared: Vec::new(),
            },
            Value::Variant(x) => {
                Kind::Variant { name: Some(x.name.clone()), payload: x.payload.iter().map(of).collect() }
            }
            Value::Func(_) => return Abs::unknown(Bounds { lo: label.lo, hi: DcLabel::top() }, origins.clone()),
            Value::Handle(h) => Kind::Handle(h.ty.clone()),
            Value::Capability(c) => Kind::Capability(c.as_str().into()),
            Value::Labeled(inner) => Kind::Labeled(Box::new(of(inner))),
            Value::Label(l) => Kind::Label(Bounds::exactly((**l).clone())),
        };
        Abs { label, origins: origins.clone(), kind }
    }

    /// The same value, it and every part of it from `origins` (a tool's result).
    pub fn from(mut self, origins: &Origins) -> Abs {
        self.origins = origins.clone();
        let all = |xs: &mut Vec<Abs>| xs.iter_mut().for_each(|x| *x = x.clone().from(origins));
        match &mut self.kind {
            Kind::Tuple(xs) | Kind::Variant { payload: xs, .. } => all(xs),
            Kind::Record { fields, .. } => fields.iter_mut().for_each(|(_, x)| *x = x.clone().from(origins)),
            Kind::List { elem, .. } => **elem = (**elem).clone().from(origins),
            Kind::Labeled(inner) => **inner = (**inner).clone().from(origins),
            _ => {}
        }
        self
    }

    /// The same value with its own label joined with `l` (`with_label` at run time).
    pub fn raised(mut self, l: &Bounds) -> Abs {
        if !l.is_bottom() {
            self.label = self.label.join(l);
        }
        self
    }

    /// Bounds on the join of its label and of everything inside it. `enter_opaque` says
    /// whether the host's records count with their fields (`deep_label`) or by their own
    /// label only (what passing one to a tool reveals).
    pub fn deep(&self, enter_opaque: bool) -> Bounds {
        let mut b = self.label.clone();
        let mut parts = |a: &Abs| b.hi = b.hi.join(&a.deep(enter_opaque).hi);
        match &self.kind {
            Kind::Tuple(xs) | Kind::Variant { payload: xs, .. } => xs.iter().for_each(&mut parts),
            Kind::Record { opaque, fields, declared, .. } if enter_opaque || !opaque => {
                for (i, (_, a)) in fields.iter().enumerate() {
                    parts(&a.clone().raised(&declared_at(declared, i)));
                }
            }
            Kind::List { elem, .. } => parts(elem),
            Kind::Closure(c) => c.env.iter().for_each(|(_, a)| parts(a)),
            _ => {}
        }
        b
    }

    pub fn origins_deep(&self) -> Origins {
        let mut o = self.origins.clone();
        let mut parts = |a: &Abs| o = o.union(&a.origins_deep());
        match &self.kind {
            Kind::Tuple(xs) | Kind::Variant { payload: xs, .. } => xs.iter().for_each(&mut parts),
            Kind::Record { fields, .. } => fields.iter().for_each(|(_, a)| parts(a)),
            Kind::List { elem, .. } => parts(elem),
            Kind::Labeled(inner) => parts(inner),
            _ => {}
        }
        o
    }

    /// Forgets the shape: a value of unknown shape whose `hi` covers everything inside.
    pub fn collapse(&self) -> Abs {
        match self.kind {
            Kind::Unknown | Kind::Int(_) | Kind::Bool(_) | Kind::Unit | Kind::Str(_) | Kind::Handle(_) => {
                Abs::unknown(self.label.clone(), self.origins.clone())
            }
            _ => Abs::unknown(self.deep(true), self.origins_deep()),
        }
    }

    /// A part taken out of this value (a field, a component, a payload): the part's bounds,
    /// joined with this value's own label, as the run time joins it; unknown within this
    /// value's bounds when the shape is not known.
    pub fn part(&self, known: Option<&Abs>) -> Abs {
        match known {
            Some(p) => p.clone().raised(&self.label),
            None => Abs::unknown(Bounds { lo: self.label.lo.clone(), hi: self.label.hi.clone() }, self.origins.clone()),
        }
    }

    pub fn field(&self, name: &str) -> Abs {
        match &self.kind {
            Kind::Record { fields, declared, .. } => {
                let i = fields.iter().position(|(n, _)| &**n == name);
                let f = i.map(|i| fields[i].1.clone().raised(&declared_at(declared, i)));
                self.part(f.as_ref())
            }
            _ => self.part(None),
        }
    }

    pub fn component(&self, i: usize) -> Abs {
        match &self.kind {
            Kind::Tuple(xs) => self.part(xs.get(i)),
            _ => self.part(None),
        }
    }

    /// An element of a list (indexing joins the list's label; a loop's element does not: the
    /// loop raises the program-counter label instead).
    pub fn element(&self) -> Abs {
        match &self.kind {
            Kind::List { elem, .. } => (**elem).clone(),
            // `map` on an `Option` or a `Result` (the run time tells them apart): the payload.
            Kind::Variant { payload, .. } if !payload.is_empty() => {
                payload.iter().skip(1).fold(payload[0].clone(), |a, b| a.either(b)).raised(&self.label)
            }
            _ => Abs::unknown(Bounds { lo: DcLabel::bottom(), hi: self.label.hi.clone() }, self.origins.clone()),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.kind {
            Kind::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// One of two values (paths that meet): the same shape where both have it, else unknown
    /// within both.
    pub fn either(&self, other: &Abs) -> Abs {
        let label = self.label.either(&other.label);
        let origins = self.origins.union(&other.origins);
        let kind = match (&self.kind, &other.kind) {
            (Kind::Str(a), Kind::Str(b)) if a == b => Kind::Str(a.clone()),
            (Kind::Int(a), Kind::Int(b)) if a == b => Kind::Int(*a),
            (Kind::Bool(a), Kind::Bool(b)) if a == b => Kind::Bool(*a),
            (Kind::Unit, Kind::Unit) => Kind::Unit,
            (Kind::Capability(a), Kind::Capability(b)) if a == b => Kind::Capability(a.clone()),
            (Kind::Handle(a), Kind::Handle(b)) if a == b => Kind::Handle(a.clone()),
            (Kind::Func(a), Kind::Func(b)) if a == b => Kind::Func(a.clone()),
            (Kind::Tuple(a), Kind::Tuple(b)) if a.len() == b.len() => {
                Kind::Tuple(a.iter().zip(b).map(|(x, y)| x.either(y)).collect())
            }
            (
                Kind::Record { opaque: o1, ty: t1, fields: a, declared: d1 },
                Kind::Record { opaque: o2, ty: t2, fields: b, declared: d2 },
            ) if o1 == o2 && a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0) => {
                let fields = a.iter().zip(b).map(|(x, y)| (x.0.clone(), x.1.either(&y.1))).collect();
                let declared = (0..a.len()).map(|i| declared_at(d1, i).either(&declared_at(d2, i))).collect();
                Kind::Record { opaque: *o1, ty: if t1 == t2 { t1.clone() } else { None }, fields, declared }
            }
            (Kind::List { elem: a, len: la }, Kind::List { elem: b, len: lb }) => {
                Kind::List { elem: Box::new(a.either(b)), len: if la == lb { *la } else { None } }
            }
            (Kind::Variant { name: na, payload: a }, Kind::Variant { name: nb, payload: b }) if a.len() == b.len() => {
                let name = if na == nb { na.clone() } else { None };
                Kind::Variant { name, payload: a.iter().zip(b).map(|(x, y)| x.either(y)).collect() }
            }
            (Kind::Variant { payload: a, .. }, Kind::Variant { payload: b, .. }) if a.is_empty() || b.is_empty() => {
                // `None` and `Some(x)`: the payload of the one that has it.
                Kind::Variant { name: None, payload: if a.is_empty() { b.clone() } else { a.clone() } }
            }
            (Kind::Label(a), Kind::Label(b)) => Kind::Label(a.either(b)),
            (Kind::Labeled(a), Kind::Labeled(b)) => Kind::Labeled(Box::new(a.either(b))),
            _ => {
                let (a, b) = (self.collapse(), other.collapse());
                return Abs::unknown(a.label.either(&b.label), a.origins.union(&b.origins));
            }
        };
        Abs { label, origins, kind }
    }

    /// Whether `self` says no more than `other` (used to stop a loop's fixed point): the
    /// bounds and shapes agree.
    pub fn same(&self, other: &Abs) -> bool {
        if self.label != other.label {
            return false;
        }
        match (&self.kind, &other.kind) {
            (Kind::Tuple(a), Kind::Tuple(b)) | (Kind::Variant { payload: a, .. }, Kind::Variant { payload: b, .. }) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
            }
            (Kind::Record { fields: a, declared: d1, .. }, Kind::Record { fields: b, declared: d2, .. }) => {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| x.1.same(&y.1))
                    && (0..a.len()).all(|i| declared_at(d1, i) == declared_at(d2, i))
            }
            (Kind::List { elem: a, .. }, Kind::List { elem: b, .. }) => a.same(b),
            (Kind::Labeled(a), Kind::Labeled(b)) => a.same(b),
            (Kind::Label(a), Kind::Label(b)) => a == b,
            (Kind::Unknown, Kind::Unknown) => true,
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

/// The label a record's type declares for its `i`th field (none: bottom).
pub fn declared_at(declared: &[Bounds], i: usize) -> Bounds {
    declared.get(i).cloned().unwrap_or_else(Bounds::bottom)
}
