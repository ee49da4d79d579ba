//! What a checked program declares, resolved: the public model every stage after the checker
//! reads instead of the syntax tree. Each type is a [`Type`] with its aliases expanded, each
//! named type is the kind the checker found it to be, each capability lists its tools with
//! their resolved signatures, each function (the policies' and the plan's) its signature, and
//! the entry its parameters and result. Plain, owned data
//! (`Send + Sync`): the checker's own types hold `Rc`s and inference variables, and are
//! converted once, where the checker made them (`export.rs`).
//!
//! A refinement keeps its predicate's tree and text, and the conjuncts of it that define a
//! measure of the refined value (`defines.rs`): compiling them is the runtime's job.
//!
//! The policies' annotations are resolved here too: a tool's `@label` by what each value
//! labels, its `@approval` as a tier or a choice of tiers, its `@card` lines; a field's
//! `@label`; each `release` with whether it asks. Their values stay expressions (over the tool's
//! parameters, the record's fields), as the checker typed them: evaluating them is the later
//! stages' job, and no stage reads an annotation from the tree again.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use cordon_label::Tier;
use cordon_syntax::Span;
use cordon_syntax::ast::Expr;
use serde::{Deserialize, Serialize};

/// A type as the checker resolved it: aliases expanded, each name the kind of type it names.
/// Plain data that can be saved (a saved run keeps the types its casts convert to).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Type {
    Int,
    Float,
    Decimal,
    Date,
    DateTime,
    Duration,
    Bool,
    /// `String`.
    Str,
    /// `()`.
    Unit,
    Tuple(Vec<Type>),
    List(Box<Type>),
    Option(Box<Type>),
    Result(Box<Type>, Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// A record (an `opaque` one too) declared by a policy or the plan.
    Record(String),
    /// An enum declared by a policy or the plan.
    Enum(String),
    /// A `linear type`.
    Linear(String),
    /// An `opaque type`, with its type arguments.
    Opaque(String, Vec<Type>),
    /// A capability.
    Capability(String),
    /// `fn(A, B) -> C`.
    Fn(Vec<Type>, Box<Type>),
    /// The type of labels (`@label` values, in policies only).
    Label,
    /// `Labeled[T]`, the box `to_labeled { .. }` returns.
    Labeled(Box<Type>),
    /// `{var: base | pred}`: `text` is the predicate as written, `span` where the refinement is
    /// written. The predicate may name the other parameters of the signature it was written in.
    Refined {
        var: String,
        base: Box<Type>,
        pred: Arc<Expr>,
        text: Arc<str>,
        span: Span,
        /// The conjuncts of `pred` that define a measure of the refined value, in order.
        defines: Vec<MeasureDefinition>,
    },
}

/// A conjunct of a refinement that defines a measure of the refined value: `m(var) == e` (either
/// side), `m(var)` or `!m(var)`. A tool's result so refined tells the host what the measure of
/// the value it made is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasureDefinition {
    /// The measure's name (`m`).
    pub measure: String,
    /// Its value, an expression over what the predicate may name: `e`, or the literal `true`
    /// for `m(var)` and `false` for `!m(var)` (at the conjunct's node and span).
    pub value: Arc<Expr>,
}

impl Type {
    /// The type without its refinements at the top (`{s: Session | ..}` is a `Session`).
    pub fn base(&self) -> &Type {
        let mut ty = self;
        while let Type::Refined { base, .. } = ty {
            ty = base;
        }
        ty
    }

    /// The name the type is written with, its head (`List` for `List[T]`, a record's name for
    /// the record), under any refinement; none for a tuple, `()` or a function type. An alias
    /// has no name of its own here: the type is its expansion, and this is the expansion's head.
    pub fn head(&self) -> Option<&str> {
        Some(match self.base() {
            Type::Int => "Int",
            Type::Float => "Float",
            Type::Decimal => "Decimal",
            Type::Date => "Date",
            Type::DateTime => "DateTime",
            Type::Duration => "Duration",
            Type::Bool => "Bool",
            Type::Str => "String",
            Type::List(_) => "List",
            Type::Option(_) => "Option",
            Type::Result(..) => "Result",
            Type::Map(..) => "Map",
            Type::Label => "Label",
            Type::Labeled(_) => "Labeled",
            Type::Record(n) | Type::Enum(n) | Type::Linear(n) | Type::Opaque(n, _) | Type::Capability(n) => n,
            Type::Unit | Type::Tuple(_) | Type::Fn(..) | Type::Refined { .. } => return None,
        })
    }
}

impl fmt::Display for Type {
    /// The type as its source would read, aliases expanded: its head ([`Type::head`]) with its
    /// type arguments, or its parts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, ts: &[Type]) -> fmt::Result {
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{t}")?;
            }
            Ok(())
        }
        match (self, self.head()) {
            (Type::Refined { var, base, text, .. }, _) => write!(f, "{{{var}: {base} | {text}}}"),
            (Type::Unit, _) => f.write_str("()"),
            (Type::Tuple(ts), _) => {
                f.write_str("(")?;
                list(f, ts)?;
                if ts.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            (Type::Fn(params, ret), _) => {
                f.write_str("fn(")?;
                list(f, params)?;
                write!(f, ") -> {ret}")
            }
            (Type::List(t) | Type::Option(t) | Type::Labeled(t), Some(head)) => write!(f, "{head}[{t}]"),
            (Type::Result(a, b) | Type::Map(a, b), Some(head)) => write!(f, "{head}[{a}, {b}]"),
            (Type::Opaque(_, args), Some(head)) if !args.is_empty() => {
                write!(f, "{head}[")?;
                list(f, args)?;
                f.write_str("]")
            }
            (_, Some(head)) => f.write_str(head),
            // Every type but those written by their parts above has a head.
            (_, None) => Ok(()),
        }
    }
}

/// A record's field, its type, and the labels a policy gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: Type,
    /// Each `@label(..)` written on it, in order: the label of this field in every value a tool
    /// returns, an expression over the record's fields (several are joined). Only a policy's
    /// records have them.
    pub labels: Vec<Arc<Expr>>,
}

/// A tool's, a function's or the entry's parameter and its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
}

/// A record, its fields in the order declared.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub name: String,
    pub fields: Vec<Field>,
    /// An `opaque` record: only the host makes one.
    pub opaque: bool,
    /// Where its name is declared.
    pub span: Span,
}

impl Record {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// An enum, its variants in the order declared.
#[derive(Clone, Debug, PartialEq)]
pub struct Enum {
    pub name: String,
    pub variants: Vec<Variant>,
    pub span: Span,
}

/// A variant and the types of its payload (none for a variant without one).
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub name: String,
    pub payload: Vec<Type>,
}

/// A capability, its tools in the order declared.
#[derive(Clone, Debug, PartialEq)]
pub struct Capability {
    pub name: String,
    pub tools: Vec<Tool>,
    pub span: Span,
}

impl Capability {
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// A tool: its parameters and result (`()` where none is declared), and what the policy's
/// annotations on it say.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Type,
    /// Whether the tool declares a result (`-> T`, `-> ()` too): one that declares none
    /// returns a `()` that is no answer of the host's.
    pub declares_result: bool,
    /// Its `@label`, `@approval` and `@card`, resolved; `None` if the checker found an error in
    /// them (only in a program it rejects).
    pub annotations: Option<ToolAnnotations>,
    /// Where the tool's name is declared.
    pub span: Span,
}

/// What a policy's annotations on a tool say. Each value is an expression over the tool's data
/// parameters, evaluated on a call's arguments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolAnnotations {
    /// `@label(key = ..)`: each value with what it labels, in the order written.
    pub labels: Vec<(LabelKey, Arc<Expr>)>,
    /// `@approval(..)`: the tool's tier; `None` where it has none (it needs no approval).
    pub approval: Option<ApprovalTier>,
    /// `@card(key = ..)`: each line the card shows, by its key, in the order written.
    pub card: Vec<(String, Arc<Expr>)>,
}

impl ToolAnnotations {
    /// The value `@label` gives `key`, if it gives one.
    pub fn label(&self, key: LabelKey) -> Option<&Arc<Expr>> {
        self.labels.iter().find(|(k, _)| *k == key).map(|(_, value)| value)
    }

    /// The value of the card's line `key`, if it has one.
    pub fn card_line(&self, key: &str) -> Option<&Arc<Expr>> {
        self.card.iter().find(|(k, _)| k == key).map(|(_, value)| value)
    }
}

/// What a `@label` value of a tool labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelKey {
    /// The sink of the parameter at this position (`@label(body = ..)`).
    Param(usize),
    /// The tool's result (`returns`).
    Returns,
    /// The sink of the decision to call (`pc`).
    Pc,
}

/// A tool's `@approval(..)`: a tier, or a choice of tiers on the call's arguments.
#[derive(Clone, Debug, PartialEq)]
pub enum ApprovalTier {
    Is(Tier),
    /// `if cond { then } else { otherwise }`: `cond` is a `Bool` over the tool's parameters.
    If {
        cond: Arc<Expr>,
        then: Box<ApprovalTier>,
        otherwise: Box<ApprovalTier>,
    },
}

/// A policy's `release "group" to label`: the group's data may leave it for `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct Release {
    pub group: String,
    /// The label it may go to, an expression with nothing in scope.
    pub to: Arc<Expr>,
    /// Whether the user is asked on a card (`@approval(ask)`, the default) or no one is
    /// (`@approval(none)`).
    pub asks: bool,
}

/// A function of a policy or of the plan (a fill's are its own: `CheckedFill::functions`): its
/// parameters and result (`()` where none is declared). Its body is on its node, at `span`.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Type,
    /// Where the function's name is declared.
    pub span: Span,
}

/// The program's entry, composed from the policies' entries as `cordon_syntax::entry` says.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub params: Vec<Param>,
    pub ret: Type,
    pub span: Span,
}

/// Everything a program declares, resolved by the checker: the records, enums, aliases, host
/// types, capabilities and releases of its policies (and the records, enums and aliases of its
/// plan), the functions of both, and its entry. Made only by the checker ([`Checked::declarations`](crate::Checked::declarations),
/// [`declare`](crate::declare)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Declarations {
    pub(crate) records: BTreeMap<String, Record>,
    pub(crate) enums: BTreeMap<String, Enum>,
    pub(crate) aliases: BTreeMap<String, Type>,
    pub(crate) linear: BTreeSet<String>,
    /// Each opaque type with the number of its type arguments.
    pub(crate) opaque: BTreeMap<String, usize>,
    pub(crate) capabilities: BTreeMap<String, Capability>,
    pub(crate) functions: BTreeMap<String, Function>,
    pub(crate) entry: Option<Entry>,
    /// The policies' releases, in the order declared.
    pub(crate) releases: Vec<Release>,
    /// The records and enums that hold a linear value (in a field or a payload, however deep).
    pub(crate) holding_linear: BTreeSet<String>,
}

impl Declarations {
    pub fn record(&self, name: &str) -> Option<&Record> {
        self.records.get(name)
    }

    /// The records, by name.
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.records.values()
    }

    pub fn enumeration(&self, name: &str) -> Option<&Enum> {
        self.enums.get(name)
    }

    /// The enums, by name.
    pub fn enums(&self) -> impl Iterator<Item = &Enum> {
        self.enums.values()
    }

    /// What the alias `name` stands for (every use of it is already this type).
    pub fn alias(&self, name: &str) -> Option<&Type> {
        self.aliases.get(name)
    }

    /// Whether `name` is a `linear type`.
    pub fn is_linear_type(&self, name: &str) -> bool {
        self.linear.contains(name)
    }

    /// The linear types, by name.
    pub fn linear_types(&self) -> impl Iterator<Item = &str> {
        self.linear.iter().map(String::as_str)
    }

    /// The number of type arguments of the opaque type `name`, if it is one.
    pub fn opaque_type(&self, name: &str) -> Option<usize> {
        self.opaque.get(name).copied()
    }

    /// The opaque types, by name, with the number of their type arguments.
    pub fn opaque_types(&self) -> impl Iterator<Item = (&str, usize)> {
        self.opaque.iter().map(|(n, arity)| (n.as_str(), *arity))
    }

    pub fn capability(&self, name: &str) -> Option<&Capability> {
        self.capabilities.get(name)
    }

    /// The capabilities, by name.
    pub fn capabilities(&self) -> impl Iterator<Item = &Capability> {
        self.capabilities.values()
    }

    /// The function `name` of a policy or the plan.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.get(name)
    }

    /// The functions of the policies and the plan, by name.
    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.functions.values()
    }

    pub fn entry(&self) -> Option<&Entry> {
        self.entry.as_ref()
    }

    /// The policies' releases, in the order declared.
    pub fn releases(&self) -> &[Release] {
        &self.releases
    }

    /// Whether a value of type `ty` holds a linear value anywhere: is one, or holds one in an
    /// item, an element, a field or a payload (records and enums as the checker found them, so
    /// no chain of declarations is followed here).
    pub fn holds_linear(&self, ty: &Type) -> bool {
        match ty {
            Type::Linear(_) => true,
            Type::Record(n) | Type::Enum(n) => self.holding_linear.contains(n),
            Type::Refined { base, .. } => self.holds_linear(base),
            Type::Tuple(ts) | Type::Opaque(_, ts) => ts.iter().any(|t| self.holds_linear(t)),
            Type::List(t) | Type::Option(t) | Type::Labeled(t) => self.holds_linear(t),
            Type::Result(a, b) | Type::Map(a, b) => self.holds_linear(a) || self.holds_linear(b),
            Type::Int
            | Type::Float
            | Type::Decimal
            | Type::Date
            | Type::DateTime
            | Type::Duration
            | Type::Bool
            | Type::Str
            | Type::Unit
            | Type::Capability(_)
            | Type::Fn(..)
            | Type::Label => false,
        }
    }
}
