//! Types as the runtime needs them: to check what tools return, to find the host-made values in
//! an argument or a result, and to re-check refinements. Made once per program from the types
//! the checker resolved (`cordon_types::Declarations`, aliases already expanded there), never
//! from the syntax tree; a refinement keeps its predicate compiled, and the measures its
//! conjuncts define (`tainted(s2) == e`), which the checker found.

use std::collections::HashMap;
use std::sync::Arc;

use cordon_syntax::Span;
use cordon_syntax::ast::Expr;
use cordon_types::{Declarations, Type};

use crate::error::CompileError;
use crate::value::CodeRef;

#[derive(Clone, Debug)]
pub enum Shape {
    Int,
    Float,
    Decimal,
    Date,
    DateTime,
    Duration,
    Bool,
    Str,
    Unit,
    Tuple(Vec<Shape>),
    List(Box<Shape>),
    Option(Box<Shape>),
    Result(Box<Shape>, Box<Shape>),
    Record(Arc<str>),
    Enum(Arc<str>),
    /// A `linear type`: made by the host, used once.
    Linear(Arc<str>),
    /// An `opaque type` without fields, e.g. `Trusted[Bib]`.
    Opaque(Arc<str>),
    Capability(Arc<str>),
    Func,
    Label,
    Labeled,
    Refined(Arc<Refined>),
    /// `Map[K, V]`: made by a plan (hosts neither take nor return one).
    Map(Box<Shape>, Box<Shape>),
}

/// Shapes print as the types they come from, e.g. `(String, List[Int])`.
impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shape::Int => f.write_str("Int"),
            Shape::Float => f.write_str("Float"),
            Shape::Decimal => f.write_str("Decimal"),
            Shape::Date => f.write_str("Date"),
            Shape::DateTime => f.write_str("DateTime"),
            Shape::Duration => f.write_str("Duration"),
            Shape::Bool => f.write_str("Bool"),
            Shape::Str => f.write_str("String"),
            Shape::Unit => f.write_str("()"),
            Shape::Tuple(items) => {
                f.write_str("(")?;
                for (i, s) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{s}")?;
                }
                f.write_str(")")
            }
            Shape::List(s) => write!(f, "List[{s}]"),
            Shape::Option(s) => write!(f, "Option[{s}]"),
            Shape::Result(a, b) => write!(f, "Result[{a}, {b}]"),
            Shape::Map(a, b) => write!(f, "Map[{a}, {b}]"),
            Shape::Record(n) | Shape::Enum(n) | Shape::Linear(n) | Shape::Opaque(n) | Shape::Capability(n) => {
                f.write_str(n)
            }
            Shape::Func => f.write_str("a function"),
            Shape::Label => f.write_str("Label"),
            Shape::Labeled => f.write_str("Labeled[..]"),
            Shape::Refined(r) => write!(f, "{{{}: {} | ..}}", r.var, r.base),
        }
    }
}

#[derive(Debug)]
pub struct Refined {
    pub var: Arc<str>,
    pub base: Shape,
    /// The predicate: slot 0 is the value, then the scope's names.
    pub pred: CodeRef,
    /// Where the refinement is written.
    pub span: Span,
    /// Conjuncts that define a measure of the value: `m(var) == e`, `m(var)`, `!m(var)`.
    pub defines: Vec<MeasureDef>,
}

#[derive(Debug)]
pub struct MeasureDef {
    pub measure: Arc<str>,
    /// Code over the same slots as the predicate.
    pub value: CodeRef,
}

/// What a declared name is, for checking values built outside the program (tool results) and
/// values only the host may make.
#[derive(Clone, Debug)]
pub enum TypeDecl {
    /// `opaque` records are made only by tools.
    Record {
        fields: Vec<(Arc<str>, Type)>,
        opaque: bool,
    },
    Enum,
    Linear,
    Opaque,
    Capability,
}

#[derive(Clone, Debug, Default)]
pub struct Decls {
    /// Every declared record, enum, host type and capability (an alias is the type it stands for
    /// wherever it is used, so it is none of these).
    pub types: HashMap<Arc<str>, TypeDecl>,
    /// Every record's fields with their shapes, in declared order: what a tool's result is
    /// decoded against.
    pub field_shapes: HashMap<Arc<str>, Vec<(Arc<str>, Shape)>>,
    /// Every enum's variants with their payloads' shapes.
    #[expect(clippy::type_complexity, reason = "read in one place, where the shape is plain")]
    pub variant_shapes: HashMap<Arc<str>, Vec<(Arc<str>, Vec<Shape>)>>,
}

impl Decls {
    /// What each name `declared` declares is; the records' and enums' shapes are the compiler's
    /// to add (their refinements compile to code).
    pub fn of(declared: &Declarations) -> Decls {
        let mut types = HashMap::new();
        for r in declared.records() {
            let fields = r.fields.iter().map(|f| (f.name.as_str().into(), f.ty.clone())).collect();
            types.insert(r.name.as_str().into(), TypeDecl::Record { fields, opaque: r.opaque });
        }
        for e in declared.enums() {
            types.insert(e.name.as_str().into(), TypeDecl::Enum);
        }
        for name in declared.linear_types() {
            types.insert(name.into(), TypeDecl::Linear);
        }
        for (name, _) in declared.opaque_types() {
            types.insert(name.into(), TypeDecl::Opaque);
        }
        for c in declared.capabilities() {
            types.insert(c.name.as_str().into(), TypeDecl::Capability);
        }
        Decls { types, field_shapes: HashMap::new(), variant_shapes: HashMap::new() }
    }

    pub fn is_opaque_record(&self, name: &str) -> bool {
        matches!(self.types.get(name), Some(TypeDecl::Record { opaque: true, .. }))
    }
}

/// What making a shape needs from the compiler: a refinement's predicate compiled to code.
pub(crate) trait Predicates {
    /// Compiles a refinement predicate: slot 0 is the refined value, then `scope`.
    fn predicate(&mut self, var: &str, pred: &Expr, scope: &[&str]) -> Result<CodeRef, CompileError>;
}

/// Type nesting beyond this is refused (the checker bounds its aliases; this bounds what
/// unchecked code could do).
const MAX_DEPTH: usize = 64;

/// The shape of `ty`, declared at `at`. Refinements become predicates over the refined value and
/// then the names in `scope` (a tool's or the entry's parameters), and so do the measures they
/// define.
pub(crate) fn shape(c: &mut dyn Predicates, ty: &Type, scope: &[&str], at: Span) -> Result<Shape, CompileError> {
    shape_at(c, ty, scope, at, 0)
}

fn shape_at(c: &mut dyn Predicates, ty: &Type, scope: &[&str], at: Span, depth: usize) -> Result<Shape, CompileError> {
    let err = |m: String| Err(CompileError { message: m, span: at });
    if depth > MAX_DEPTH {
        return err("this type is nested too deeply".into());
    }
    let mut sub = |t: &Type| shape_at(c, t, scope, at, depth + 1).map(Box::new);
    Ok(match ty {
        Type::Int => Shape::Int,
        Type::Float => Shape::Float,
        Type::Decimal => Shape::Decimal,
        Type::Date => Shape::Date,
        Type::DateTime => Shape::DateTime,
        Type::Duration => Shape::Duration,
        Type::Bool => Shape::Bool,
        Type::Str => Shape::Str,
        Type::Unit => Shape::Unit,
        Type::Label => Shape::Label,
        Type::Labeled(_) => Shape::Labeled,
        Type::Fn(..) => Shape::Func,
        Type::List(t) => Shape::List(sub(t)?),
        Type::Option(t) => Shape::Option(sub(t)?),
        Type::Result(a, b) => Shape::Result(sub(a)?, sub(b)?),
        Type::Map(a, b) => Shape::Map(sub(a)?, sub(b)?),
        Type::Tuple(ts) => Shape::Tuple(ts.iter().map(|t| sub(t).map(|s| *s)).collect::<Result<_, _>>()?),
        Type::Record(n) => Shape::Record(n.as_str().into()),
        Type::Enum(n) => Shape::Enum(n.as_str().into()),
        Type::Linear(n) => Shape::Linear(n.as_str().into()),
        Type::Opaque(n, _) => Shape::Opaque(n.as_str().into()),
        Type::Capability(n) => Shape::Capability(n.as_str().into()),
        Type::Refined { var, base, pred, span, defines, .. } => {
            let base = *sub(base)?;
            let pred = c.predicate(var, pred, scope)?;
            let mut compiled = Vec::with_capacity(defines.len());
            for d in defines {
                let value = c.predicate(var, &d.value, scope)?;
                compiled.push(MeasureDef { measure: d.measure.as_str().into(), value });
            }
            Shape::Refined(Arc::new(Refined { var: var.as_str().into(), base, pred, span: *span, defines: compiled }))
        }
        other => return err(format!("the type `{other}` has no shape at run time")),
    })
}
