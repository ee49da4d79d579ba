//! The checker's declarations as the public model of `declared.rs`, made once where the checker
//! resolved them: its `Ty`s (which hold `Rc`s and inference variables) converted to `Type`s, with
//! what the policies' annotations say as the checker resolved them (`Annotated`).
//!
//! A declaration whose type has an error (only in a program the checker rejects) is left out.

use std::sync::Arc;

use cordon_syntax::Span;

use crate::declared::{Capability, Declarations, Entry, Enum, Field, Function, Param, Record, Tool, Type, Variant};
use crate::defines::measure_definitions;
use crate::state::{Checker, LABEL, LABELED, Signature, TypeDef, ValueDef};
use crate::ty::Ty;

/// What `checker` has declared.
pub fn declarations(checker: &Checker<'_>) -> Declarations {
    let mut out = Declarations::default();
    let ty = |t: &Ty| resolved(checker, t);
    for (name, info) in &checker.types {
        let (name, span) = (name.clone(), info.span);
        match &info.def {
            TypeDef::Record { fields, opaque } => {
                let labels = checker.annotated.fields.get(&span);
                let fields = fields
                    .iter()
                    .enumerate()
                    .map(|(i, (n, t))| {
                        let labels = labels.and_then(|l| l.get(i)).cloned().unwrap_or_default();
                        Some(Field { name: n.clone(), ty: ty(t)?, labels })
                    })
                    .collect();
                if let Some(fields) = fields {
                    out.records.insert(name.clone(), Record { name, fields, opaque: *opaque, span });
                }
            }
            TypeDef::Enum { variants } => {
                let variants = variants
                    .iter()
                    .map(|(n, ts)| {
                        Some(Variant { name: n.clone(), payload: ts.iter().map(ty).collect::<Option<_>>()? })
                    })
                    .collect();
                if let Some(variants) = variants {
                    out.enums.insert(name.clone(), Enum { name, variants, span });
                }
            }
            TypeDef::Alias(t) => {
                if let Some(t) = ty(t) {
                    out.aliases.insert(name, t);
                }
            }
            TypeDef::Linear => {
                out.linear.insert(name);
            }
            TypeDef::Opaque { arity } => {
                out.opaque.insert(name, *arity);
            }
            TypeDef::Capability { tools } => {
                let tools = tools
                    .iter()
                    .filter_map(|(tool, sig)| {
                        let (params, ret) = signature(checker, sig)?;
                        let declares_result = sig.declares_result;
                        let annotations = checker.annotated.tools.get(&sig.span).cloned().flatten();
                        Some(Tool { name: tool.clone(), params, ret, declares_result, annotations, span: sig.span })
                    })
                    .collect();
                out.capabilities.insert(name.clone(), Capability { name, tools, span });
            }
        }
    }
    out.functions = functions(checker, |_| true).into_iter().map(|f| (f.name.clone(), f)).collect();
    out.entry = checker.entry.as_ref().and_then(|entry| {
        let params = entry.params.iter().map(|(n, t, _)| Some(Param { name: n.clone(), ty: ty(t)? }));
        Some(Entry { params: params.collect::<Option<_>>()?, ret: ty(&entry.ret)?, span: entry.span })
    });
    out.releases = checker.annotated.releases.clone();
    out.holding_linear = checker.linear_types.iter().cloned().collect();
    out
}

/// The functions `checker` has declared where `keep` says (by where each name is declared).
pub fn functions(checker: &Checker<'_>, keep: impl Fn(Span) -> bool) -> Vec<Function> {
    let sigs = checker.values.values().filter_map(|v| match v {
        ValueDef::Fn(sig) if keep(sig.span) => Some(sig),
        _ => None,
    });
    let mut out: Vec<Function> = sigs
        .filter_map(|sig| {
            let (params, ret) = signature(checker, sig)?;
            Some(Function { name: sig.name.clone(), params, ret, span: sig.span })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// A signature's parameters and result as `Type`s; `None` if one has an error.
fn signature(checker: &Checker<'_>, sig: &Signature) -> Option<(Vec<Param>, Type)> {
    let ty = |t: &Ty| resolved(checker, t);
    let params = sig.params.iter().map(|(n, t)| Some(Param { name: n.clone(), ty: ty(t)? }));
    Some((params.collect::<Option<_>>()?, ty(&sig.ret)?))
}

/// `t` as a `Type`, its inference variables resolved as `checker` has them; `None` if it has an
/// error.
pub fn resolved(checker: &Checker<'_>, t: &Ty) -> Option<Type> {
    convert(&checker.resolve(t))
}

/// `t` (its inference variables resolved) as a `Type`; `None` if it has an error.
fn convert(t: &Ty) -> Option<Type> {
    let boxed = |t: &Ty| convert(t).map(Box::new);
    let all = |ts: &[Ty]| ts.iter().map(convert).collect::<Option<Vec<_>>>();
    Some(match t {
        Ty::Int => Type::Int,
        Ty::Float => Type::Float,
        Ty::Decimal => Type::Decimal,
        Ty::Date => Type::Date,
        Ty::DateTime => Type::DateTime,
        Ty::Duration => Type::Duration,
        Ty::Bool => Type::Bool,
        Ty::Str => Type::Str,
        Ty::Unit => Type::Unit,
        Ty::Tuple(ts) => Type::Tuple(all(ts)?),
        Ty::List(t) => Type::List(boxed(t)?),
        Ty::Option(t) => Type::Option(boxed(t)?),
        Ty::Result(a, b) => Type::Result(boxed(a)?, boxed(b)?),
        Ty::Map(a, b) => Type::Map(boxed(a)?, boxed(b)?),
        Ty::Record(n) => Type::Record(n.to_string()),
        Ty::Enum(n) => Type::Enum(n.to_string()),
        Ty::Linear(n) => Type::Linear(n.to_string()),
        Ty::Opaque(n, args) if &**n == LABEL && args.is_empty() => Type::Label,
        Ty::Opaque(n, args) if &**n == LABELED => match args.as_slice() {
            [inner] => Type::Labeled(boxed(inner)?),
            _ => return None,
        },
        Ty::Opaque(n, args) => Type::Opaque(n.to_string(), all(args)?),
        Ty::Cap(n) => Type::Capability(n.to_string()),
        Ty::Fn(f) => Type::Fn(all(&f.params)?, boxed(&f.ret)?),
        Ty::Refined(r) => Type::Refined {
            var: r.var.clone(),
            base: boxed(&r.base)?,
            pred: Arc::new((*r.pred).clone()),
            text: Arc::from(&*r.text),
            span: r.span,
            defines: measure_definitions(&r.var, &r.pred),
        },
        Ty::Var(_) | Ty::Error => return None,
    })
}
