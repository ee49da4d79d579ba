//! Types as the runtime needs them: to check what tools return, to find the host-made values in
//! an argument or a result, and to re-check refinements. Aliases are expanded; a refinement
//! keeps its predicate compiled, and the measures its conjuncts define (`tainted(s2) == e`).

use std::collections::HashMap;
use std::sync::Arc;

use cordon_syntax::ast::{BinOp, Expr, ExprKind, Item, ItemKind, TypeExpr, TypeExprKind, UnOp};

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
    pub span: cordon_syntax::Span,
    /// Conjuncts that define a measure of the value: `m(var) == e`, `m(var)`, `!m(var)`.
    pub defines: Vec<MeasureDef>,
}

#[derive(Debug)]
pub struct MeasureDef {
    pub measure: Arc<str>,
    /// Code over the same slots as the predicate.
    pub value: CodeRef,
}

/// A declared record or enum, for checking values built outside the program (tool results).
#[derive(Clone, Debug)]
pub enum TypeDecl {
    /// `opaque` records are made only by tools.
    Record {
        fields: Vec<(Arc<str>, TypeExpr)>,
        opaque: bool,
    },
    Enum {
        variants: Vec<(Arc<str>, Vec<TypeExpr>)>,
    },
    Linear,
    Opaque,
    Capability,
    Alias(TypeExpr),
}

#[derive(Clone, Debug, Default)]
pub struct Decls {
    pub types: HashMap<Arc<str>, TypeDecl>,
    /// Every record's fields with their shapes, in declared order: what a tool's result is
    /// decoded against.
    pub field_shapes: HashMap<Arc<str>, Vec<(Arc<str>, Shape)>>,
    /// Every enum's variants with their payloads' shapes.
    #[expect(clippy::type_complexity, reason = "read in one place, where the shape is plain")]
    pub variant_shapes: HashMap<Arc<str>, Vec<(Arc<str>, Vec<Shape>)>>,
}

impl Decls {
    pub fn collect(items: &[&Item]) -> Decls {
        let mut types = HashMap::new();
        for item in items {
            let (name, decl) = match &item.kind {
                ItemKind::Record { name, fields, opaque } => (
                    name,
                    TypeDecl::Record {
                        fields: fields.iter().map(|f| (f.name.name.as_str().into(), f.ty.clone())).collect(),
                        opaque: *opaque,
                    },
                ),
                ItemKind::Enum { name, variants } => (
                    name,
                    TypeDecl::Enum {
                        variants: variants.iter().map(|v| (v.name.name.as_str().into(), v.payload.clone())).collect(),
                    },
                ),
                ItemKind::Linear { name } => (name, TypeDecl::Linear),
                ItemKind::Opaque { name, .. } => (name, TypeDecl::Opaque),
                ItemKind::Capability { name, .. } => (name, TypeDecl::Capability),
                ItemKind::TypeAlias { name, ty } => (name, TypeDecl::Alias(ty.clone())),
                _ => continue,
            };
            types.entry(name.name.as_str().into()).or_insert(decl);
        }
        Decls { types, field_shapes: HashMap::new(), variant_shapes: HashMap::new() }
    }

    pub fn is_opaque_record(&self, name: &str) -> bool {
        matches!(self.types.get(name), Some(TypeDecl::Record { opaque: true, .. }))
    }
}

/// What resolving a type needs from the compiler: the declared types, and a refinement's
/// predicate compiled to code.
pub(crate) trait Predicates {
    fn decls(&self) -> &Decls;
    /// Compiles a refinement predicate: slot 0 is the refined value, then `scope`.
    fn predicate(&mut self, var: &str, pred: &Expr, scope: &[&str]) -> Result<CodeRef, CompileError>;
}

/// Type nesting beyond this is refused (aliases are checked for cycles by the checker; this
/// bounds what unchecked code could do).
const MAX_DEPTH: usize = 64;

pub(crate) fn resolve(c: &mut dyn Predicates, te: &TypeExpr, scope: &[&str]) -> Result<Shape, CompileError> {
    resolve_at(c, te, scope, 0)
}

fn resolve_at(c: &mut dyn Predicates, te: &TypeExpr, scope: &[&str], depth: usize) -> Result<Shape, CompileError> {
    let err = |m: &str| Err(CompileError { message: m.to_string(), span: te.span });
    if depth > MAX_DEPTH {
        return err("this type is nested too deeply");
    }
    let sub = |c: &mut dyn Predicates, t: &TypeExpr| resolve_at(c, t, scope, depth + 1);
    Ok(match &te.kind {
        TypeExprKind::Named { name, args } => {
            let arg = |c: &mut dyn Predicates, i: usize| match args.get(i) {
                Some(t) => resolve_at(c, t, scope, depth + 1),
                None => Err(CompileError { message: format!("`{}` needs a type argument", name.name), span: te.span }),
            };
            match name.name.as_str() {
                "Int" => Shape::Int,
                "Float" => Shape::Float,
                "Decimal" => Shape::Decimal,
                "Date" => Shape::Date,
                "DateTime" => Shape::DateTime,
                "Duration" => Shape::Duration,
                "Bool" => Shape::Bool,
                "String" => Shape::Str,
                "Label" => Shape::Label,
                "Labeled" => Shape::Labeled,
                "List" => Shape::List(Box::new(arg(c, 0)?)),
                "Option" => Shape::Option(Box::new(arg(c, 0)?)),
                "Result" => Shape::Result(Box::new(arg(c, 0)?), Box::new(arg(c, 1)?)),
                "Map" => Shape::Map(Box::new(arg(c, 0)?), Box::new(arg(c, 1)?)),
                other => {
                    let n: Arc<str> = other.into();
                    match c.decls().types.get(other) {
                        Some(TypeDecl::Record { .. }) => Shape::Record(n),
                        Some(TypeDecl::Enum { .. }) => Shape::Enum(n),
                        Some(TypeDecl::Linear) => Shape::Linear(n),
                        Some(TypeDecl::Opaque) => Shape::Opaque(n),
                        Some(TypeDecl::Capability) => Shape::Capability(n),
                        Some(TypeDecl::Alias(t)) => {
                            let t = t.clone();
                            sub(c, &t)?
                        }
                        None => return err(&format!("the type `{other}` is not defined")),
                    }
                }
            }
        }
        TypeExprKind::Tuple(ts) if ts.is_empty() => Shape::Unit,
        TypeExprKind::Tuple(ts) => Shape::Tuple(ts.iter().map(|t| sub(c, t)).collect::<Result<_, _>>()?),
        TypeExprKind::Fn { .. } => Shape::Func,
        TypeExprKind::Refined { var, base, pred } => {
            let base = sub(c, base)?;
            let compiled = c.predicate(&var.name, pred, scope)?;
            let mut defines = Vec::new();
            for conjunct in conjuncts(pred) {
                if let Some((measure, value)) = definition(conjunct, &var.name) {
                    let code = match value {
                        Definition::Expr(e) => c.predicate(&var.name, e, scope)?,
                        Definition::Literal(b) => {
                            let lit = Expr { id: conjunct.id, kind: ExprKind::Bool(b), span: conjunct.span };
                            c.predicate(&var.name, &lit, scope)?
                        }
                    };
                    defines.push(MeasureDef { measure: measure.into(), value: code });
                }
            }
            Shape::Refined(Arc::new(Refined {
                var: var.name.as_str().into(),
                base,
                pred: compiled,
                span: te.span,
                defines,
            }))
        }
        TypeExprKind::Error => return err("a malformed type"),
    })
}

fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary { op: BinOp::And, lhs, rhs } => {
            let mut v = conjuncts(lhs);
            v.extend(conjuncts(rhs));
            v
        }
        _ => vec![e],
    }
}

enum Definition<'e> {
    Expr(&'e Expr),
    Literal(bool),
}

/// `m(var) == e` (either side), `m(var)` or `!m(var)`: the measure `m` of the refined value.
fn definition<'e>(e: &'e Expr, var: &str) -> Option<(&'e str, Definition<'e>)> {
    let applied = |x: &'e Expr| -> Option<&'e str> {
        match &x.kind {
            ExprKind::Call { callee, args } => match (&callee.kind, args.as_slice()) {
                (ExprKind::Name(m), [a]) if matches!(&a.kind, ExprKind::Name(v) if v.name == var) => Some(&m.name),
                _ => None,
            },
            _ => None,
        }
    };
    match &e.kind {
        ExprKind::Binary { op: BinOp::Eq, lhs, rhs } => {
            if let Some(m) = applied(lhs) {
                return Some((m, Definition::Expr(rhs)));
            }
            applied(rhs).map(|m| (m, Definition::Expr(lhs)))
        }
        ExprKind::Unary { op: UnOp::Not, operand } => applied(operand).map(|m| (m, Definition::Literal(false))),
        _ => applied(e).map(|m| (m, Definition::Literal(true))),
    }
}
