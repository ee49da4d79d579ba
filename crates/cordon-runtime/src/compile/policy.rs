//! Lowering the policy's declarations: a tool's parameters, labels, approval tier and card
//! lines; a record's field labels; a release's label. Each is read from what the checker
//! resolved (`cordon_types::Declarations`) and becomes code over the declaration's parameters,
//! run by the gate for every call.

use cordon_syntax::ast::Expr;
use cordon_types::{ApprovalTier, LabelKey, Record, Tool};

use super::{Compiler, Res};
use crate::code::{FieldLabel, TierCode, ToolDecl};
use crate::value::CodeRef;

impl Compiler {
    /// The tool `tool` of `capability`: its parameters and result, and what the policy's
    /// annotations on it say, as the checker resolved them.
    pub(super) fn tool(&mut self, capability: &str, tool: &Tool) -> Res<ToolDecl> {
        let Some(annotations) = &tool.annotations else {
            return self.err(tool.span, format!("`{}` has annotations the checker did not resolve", tool.name));
        };
        let names: Vec<&str> = tool.params.iter().map(|p| p.name.as_str()).collect();
        let mut params = Vec::new();
        for p in &tool.params {
            params.push((p.name.as_str().into(), self.shape(&p.ty, &names, tool.span)?));
        }
        let ret = self.shape(&tool.ret, &names, tool.span)?;
        let mut returns_label = None;
        let mut decision_sink = None;
        let mut sinks = vec![None; names.len()];
        for (key, value) in &annotations.labels {
            // Each label's code is named by its key as written (`@label(body)`).
            let labelled = match key {
                LabelKey::Param(i) => names.get(*i).copied().unwrap_or_default(),
                LabelKey::Returns => "returns",
                LabelKey::Pc => "pc",
            };
            let code = self.label_code(&format!("@label({labelled})"), &names, value)?;
            match key {
                LabelKey::Param(i) => {
                    if let Some(sink) = sinks.get_mut(*i) {
                        *sink = Some(code);
                    }
                }
                LabelKey::Returns => returns_label = Some(code),
                LabelKey::Pc => decision_sink = Some(code),
            }
        }
        let approval = match &annotations.approval {
            Some(tier) => Some(self.tier(tier, &names)?),
            None => None,
        };
        let mut card = Vec::new();
        for (key, value) in &annotations.card {
            let code = self.body_code(&format!("@card({key})"), &names, |c| c.expr(value))?;
            card.push((key.clone(), code));
        }
        Ok(ToolDecl {
            capability: capability.into(),
            name: tool.name.as_str().into(),
            params,
            ret,
            returns_label,
            sinks,
            decision_sink,
            approval,
            card,
        })
    }

    /// An approval tier (`ask`, or `if amount > 100 { ask_always } else { ask }`): the
    /// conditions become code over the parameters.
    fn tier(&mut self, tier: &ApprovalTier, params: &[&str]) -> Res<TierCode> {
        match tier {
            ApprovalTier::Is(t) => Ok(TierCode::Is(*t)),
            ApprovalTier::If { cond, then, otherwise } => {
                let cond = self.body_code("@approval(if ..)", params, |c| c.expr(cond))?;
                let then = Box::new(self.tier(then, params)?);
                let otherwise = Box::new(self.tier(otherwise, params)?);
                Ok(TierCode::If { cond, then, otherwise })
            }
        }
    }

    /// The labels the record type `record` gives its fields (`body: String @label(untrusted())`):
    /// code over the record's fields, in order.
    pub(super) fn field_labels(&mut self, record: &Record) -> Res<Vec<FieldLabel>> {
        let names: Vec<&str> = record.fields.iter().map(|f| f.name.as_str()).collect();
        let mut out = Vec::new();
        for (i, f) in record.fields.iter().enumerate() {
            for label in &f.labels {
                let code = self.label_code(&format!("{}.{} @label", record.name, f.name), &names, label)?;
                let source = format!("the field `{}.{}`", record.name, f.name).into();
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
