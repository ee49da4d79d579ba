//! Lowering the policy's declarations: a tool's parameters, labels, approval tier and card
//! lines; a record's field labels; a label annotation's value. Each becomes code over the
//! declaration's parameters, run by the gate for every call.

use cordon_label::Tier;
use cordon_syntax::ast::{Expr, ExprKind, Field, Tool};

use super::{Compiler, Res};
use crate::code::{FieldLabel, TierCode, ToolDecl};
use crate::value::CodeRef;

impl Compiler {
    /// The tool `t` of `capability`: its parameters and result as the checker resolved them,
    /// its annotations from the policy.
    pub(super) fn tool(&mut self, capability: &str, t: &Tool) -> Res<ToolDecl> {
        let declared = self.declared.clone();
        let Some(signature) = declared.capability(capability).and_then(|c| c.tool(&t.name.name)) else {
            return self.unresolved(&t.name);
        };
        let names: Vec<&str> = signature.params.iter().map(|p| p.name.as_str()).collect();
        let mut params = Vec::new();
        for p in &signature.params {
            params.push((p.name.as_str().into(), self.shape(&p.ty, &names, signature.span)?));
        }
        let ret = self.shape(&signature.ret, &names, signature.span)?;
        let mut returns_label = None;
        let mut decision_sink = None;
        let mut sinks = vec![None; names.len()];
        for a in t.annotations.iter().filter(|a| a.name.name == "label") {
            for arg in &a.args {
                let Some(key) = &arg.key else { continue };
                let code = self.label_code(&format!("@label({})", key.name), &names, &arg.value)?;
                if key.name == "returns" {
                    returns_label = Some(code);
                } else if key.name == "pc" {
                    decision_sink = Some(code);
                } else if let Some(i) = names.iter().position(|n| *n == key.name) {
                    sinks[i] = Some(code);
                } else {
                    return self.err(key.span, format!("`{}` is not a parameter", key.name));
                }
            }
        }
        let mut approval = None;
        let mut card = Vec::new();
        for a in &t.annotations {
            match (a.name.name.as_str(), a.args.as_slice()) {
                ("approval", [arg]) => approval = Some(self.tier(&arg.value, &names)?),
                ("card", args) => {
                    for arg in args {
                        let Some(key) = &arg.key else { continue };
                        let code = self.body_code(&format!("@card({})", key.name), &names, |c| c.expr(&arg.value))?;
                        card.push((key.name.clone(), code));
                    }
                }
                _ => {}
            }
        }
        Ok(ToolDecl {
            capability: capability.into(),
            name: t.name.name.as_str().into(),
            params,
            ret,
            returns_label,
            sinks,
            decision_sink,
            approval,
            card,
            span: t.span,
        })
    }

    /// An approval tier (`ask`, or `if amount > 100 { ask_always } else { ask }`): the
    /// conditions become code over the parameters.
    pub(super) fn tier(&mut self, e: &Expr, params: &[&str]) -> Res<TierCode> {
        let tail = |e: &Expr| match &e.kind {
            ExprKind::Block(b) if b.stmts.is_empty() => b.tail.as_deref().cloned(),
            ExprKind::If { .. } => Some(e.clone()),
            _ => None,
        };
        match &e.kind {
            ExprKind::Name(id) => match Tier::from_name(&id.name) {
                Some(t) => Ok(TierCode::Is(t)),
                None => self.err(id.span, format!("`{}` is not an approval tier", id.name)),
            },
            ExprKind::If { cond, then, else_: Some(otherwise) } => {
                let Some(then) = then.tail.as_deref().filter(|_| then.stmts.is_empty()) else {
                    return self.err(then.span, "a tier's branch holds one tier");
                };
                let Some(otherwise) = tail(otherwise) else {
                    return self.err(otherwise.span, "a tier's branch holds one tier");
                };
                let cond = self.body_code("@approval(if ..)", params, |c| c.expr(cond))?;
                let then = Box::new(self.tier(then, params)?);
                let otherwise = Box::new(self.tier(&otherwise, params)?);
                Ok(TierCode::If { cond, then, otherwise })
            }
            _ => self.err(e.span, "`@approval` takes a tier, or `if cond { tier } else { tier }`"),
        }
    }

    /// The labels a record type gives its fields (`body: String @label(untrusted())`): code
    /// over the record's fields, in order.
    pub(super) fn field_labels(&mut self, name: &str, fields: &[Field]) -> Res<Vec<FieldLabel>> {
        let names: Vec<&str> = fields.iter().map(|f| f.name.name.as_str()).collect();
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            for a in f.annotations.iter().filter(|a| a.name.name == "label") {
                let Some(arg) = a.args.first() else { continue };
                let code = self.label_code(&format!("{name}.{} @label", f.name.name), &names, &arg.value)?;
                let source = format!("the field `{name}.{}`", f.name.name).into();
                out.push(FieldLabel { field: i, code, source });
            }
        }
        Ok(out)
    }

    /// Compiles a label annotation's value. The label functions (`user()`, `secret(..)`) are
    /// always the label functions there, even where a parameter has the same name: the checker
    /// resolved them so.
    pub(super) fn label_code(&mut self, name: &str, params: &[&str], value: &Expr) -> Res<CodeRef> {
        self.body_code(name, params, |c| c.expr(value))
    }
}
