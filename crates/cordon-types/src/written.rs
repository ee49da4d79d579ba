//! Types written in code that no check resolved: the target of a cast (`x as Money`) in a fill
//! the runtime's own tests run without the checker (`Run::fill_unchecked`, for what the runtime
//! alone enforces); every other cast's target is the checker's record ([`Casts`]). The checker's
//! record cannot serve such a fill: the fill may declare a type under a name the program declares
//! too, and mean its own by it, where the checker refuses the fill's (`duplicate-definition`) and
//! records the program's. So its casts' targets are resolved here, against the program's
//! [`Declarations`] (aliases already expanded there) and the fill's own types ([`WrittenTypes`]),
//! and recorded in its [`Casts`] as the checker's would be, from which a saved run compiles them
//! again.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use cordon_syntax::Span;
use cordon_syntax::ast::{Expr, Item, ItemKind, TypeExpr, TypeExprKind};

use crate::casts::Casts;
use crate::declared::{Declarations, Type};
use crate::defines::measure_definitions;

/// Type nesting beyond this is refused: a fill's aliases are not checked for cycles before it is
/// compiled when the checker is skipped (the runtime's tests of its own re-checks).
const MAX_DEPTH: usize = 64;

/// The types a fill declares, as written: what a type in its code may name besides the
/// program's declarations (a fill's own name shadows the program's).
#[derive(Clone, Debug, Default)]
pub struct WrittenTypes {
    types: HashMap<String, Written>,
}

/// What a name a fill declares is.
#[derive(Clone, Debug)]
enum Written {
    Record,
    Enum,
    Linear,
    Opaque,
    Capability,
    Alias(TypeExpr),
}

impl WrittenTypes {
    /// The types `items` declare (the first of two with one name).
    pub fn of(items: &[Item]) -> WrittenTypes {
        let mut types = HashMap::new();
        for item in items {
            let (name, written) = match &item.kind {
                ItemKind::Record { name, .. } => (name, Written::Record),
                ItemKind::Enum { name, .. } => (name, Written::Enum),
                ItemKind::Linear { name } => (name, Written::Linear),
                ItemKind::Opaque { name, .. } => (name, Written::Opaque),
                ItemKind::Capability { name, .. } => (name, Written::Capability),
                ItemKind::TypeAlias { name, ty } => (name, Written::Alias(ty.clone())),
                _ => continue,
            };
            types.entry(name.name.clone()).or_insert(written);
        }
        WrittenTypes { types }
    }
}

/// Why a written type has no [`Type`]: a name nothing declares, a missing type argument, a type
/// the parser could not read, or nesting too deep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnresolvedType {
    pub message: String,
    /// The part of the type at fault.
    pub span: Span,
}

impl fmt::Display for UnresolvedType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Casts {
    /// Records what the cast `cast`, which no check resolved, converts to: `written`, the type
    /// after its `as`, as `declared` and the fill's `local` types resolve it
    /// ([`Declarations::resolve_written`]).
    pub fn record_written(
        &mut self,
        cast: &Expr,
        written: &TypeExpr,
        declared: &Declarations,
        local: &WrittenTypes,
    ) -> Result<Type, UnresolvedType> {
        let target = declared.resolve_written(written, local)?;
        self.record(cast, target.clone());
        Ok(target)
    }
}

impl Declarations {
    /// The type `te`, written in code, names: declared names as these declarations (and the
    /// fill's `local` ones) say, refinements with the measures they define.
    pub fn resolve_written(&self, te: &TypeExpr, local: &WrittenTypes) -> Result<Type, UnresolvedType> {
        self.written_at(te, local, 0)
    }

    fn written_at(&self, te: &TypeExpr, local: &WrittenTypes, depth: usize) -> Result<Type, UnresolvedType> {
        let unresolved = |message: String| UnresolvedType { message, span: te.span };
        if depth > MAX_DEPTH {
            return Err(unresolved("this type is nested too deeply".into()));
        }
        let sub = |t: &TypeExpr| self.written_at(t, local, depth + 1);
        let boxed = |t: &TypeExpr| sub(t).map(Box::new);
        Ok(match &te.kind {
            TypeExprKind::Named { name, args } => {
                let arg = |i: usize| match args.get(i) {
                    Some(t) => boxed(t),
                    None => Err(unresolved(format!("`{}` needs a type argument", name.name))),
                };
                match name.name.as_str() {
                    "Int" => Type::Int,
                    "Float" => Type::Float,
                    "Decimal" => Type::Decimal,
                    "Date" => Type::Date,
                    "DateTime" => Type::DateTime,
                    "Duration" => Type::Duration,
                    "Bool" => Type::Bool,
                    "String" => Type::Str,
                    "Label" => Type::Label,
                    "Labeled" => Type::Labeled(arg(0)?),
                    "List" => Type::List(arg(0)?),
                    "Option" => Type::Option(arg(0)?),
                    "Result" => Type::Result(arg(0)?, arg(1)?),
                    "Map" => Type::Map(arg(0)?, arg(1)?),
                    other => {
                        let args = || args.iter().map(sub).collect::<Result<Vec<_>, _>>();
                        let n = other.to_string();
                        match local.types.get(other) {
                            Some(Written::Record) => Type::Record(n),
                            Some(Written::Enum) => Type::Enum(n),
                            Some(Written::Linear) => Type::Linear(n),
                            Some(Written::Opaque) => Type::Opaque(n, args()?),
                            Some(Written::Capability) => Type::Capability(n),
                            Some(Written::Alias(t)) => sub(t)?,
                            None if self.records.contains_key(other) => Type::Record(n),
                            None if self.enums.contains_key(other) => Type::Enum(n),
                            None if self.linear.contains(other) => Type::Linear(n),
                            None if self.opaque.contains_key(other) => Type::Opaque(n, args()?),
                            None if self.capabilities.contains_key(other) => Type::Capability(n),
                            None => match self.aliases.get(other) {
                                Some(t) => t.clone(),
                                None => return Err(unresolved(format!("the type `{other}` is not defined"))),
                            },
                        }
                    }
                }
            }
            TypeExprKind::Tuple(ts) if ts.is_empty() => Type::Unit,
            TypeExprKind::Tuple(ts) => Type::Tuple(ts.iter().map(sub).collect::<Result<_, _>>()?),
            TypeExprKind::Fn { params, ret } => {
                Type::Fn(params.iter().map(sub).collect::<Result<_, _>>()?, boxed(ret)?)
            }
            TypeExprKind::Refined { var, base, pred } => Type::Refined {
                var: var.name.clone(),
                base: boxed(base)?,
                pred: Arc::new((**pred).clone()),
                text: cordon_syntax::print::expr(pred).unwrap_or_else(|_| "..".into()).into(),
                span: te.span,
                defines: measure_definitions(&var.name, pred),
            },
            TypeExprKind::Error => return Err(unresolved("a malformed type".into())),
        })
    }
}
