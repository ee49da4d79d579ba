//! What a policy's annotations may say: `@label`, `@approval` and `@card` on a tool (their keys,
//! and their values: expressions over the tool's parameters, type checked with only those in
//! scope), and `@label` on a record's field. What they say is resolved here, as they are
//! checked, into the declarations' terms (`declared.rs`): no later stage reads them again.

use std::sync::Arc;

use cordon_syntax::ast::{Annotation, Expr, Field, Ident, Param, Tool};
use cordon_syntax::{Code, Diagnostic};

use super::tiers_wanted;
use crate::declared::{LabelKey, ToolAnnotations};
use crate::state::{Binding, Checker, Role, Signature, ValueDef, label_ty, walk_names};
use crate::ty::Ty;

impl Checker<'_> {
    /// Checks the annotations of `tool` (whose signature is `sig`), each name once, and keeps what
    /// they say: nothing if checking them found an error.
    pub(super) fn check_tool_annotations(&mut self, tool: &Tool, sig: &Signature) {
        let errors = self.diags.len();
        let mut said = ToolAnnotations::default();
        let mut seen: Vec<&str> = Vec::new();
        for a in &tool.annotations {
            if seen.contains(&a.name.name.as_str()) {
                self.error(Code::InvalidAnnotation, a.span, format!("`@{}` is given twice on this tool", a.name.name));
                continue;
            }
            seen.push(&a.name.name);
            self.check_annotation(a, &tool.params, sig, &mut said);
        }
        let failed = self.diags.get(errors..).unwrap_or_default().iter().any(Diagnostic::is_error);
        self.annotated.tools.insert(sig.span, (!failed).then_some(said));
    }

    fn check_annotation(&mut self, a: &Annotation, params: &[Param], sig: &Signature, said: &mut ToolAnnotations) {
        let param_names: Vec<&str> = params.iter().map(|p| p.name.name.as_str()).collect();
        // `@label` keys are its own and the parameters'; `@card` keys are any name (its own
        // keys mean something to the gate; others are extra fields the card shows).
        let keyed = |c: &mut Checker<'_>, allowed: &[&str], any_key: bool, said: &mut ToolAnnotations| {
            let allow_params = !any_key;
            let mut seen: Vec<String> = Vec::new();
            for arg in &a.args {
                let Some(key) = &arg.key else {
                    c.error(
                        Code::InvalidAnnotation,
                        arg.value.span,
                        format!("`@{}` takes `key = value` arguments", a.name.name),
                    );
                    continue;
                };
                if !(any_key
                    || allowed.contains(&key.name.as_str())
                    || (allow_params && param_names.contains(&key.name.as_str())))
                {
                    c.error(
                        Code::InvalidAnnotation,
                        key.span,
                        format!("`@{}` has no key `{}`", a.name.name, key.name),
                    )
                    .help = Some(format!(
                        "the keys are: {}{}",
                        allowed.join(", "),
                        if allow_params { " and the tool's parameters" } else { "" }
                    ));
                    continue;
                }
                if allow_params && allowed.contains(&key.name.as_str()) && param_names.contains(&key.name.as_str()) {
                    c.error(
                        Code::InvalidAnnotation,
                        key.span,
                        format!("`{}` names both a key of `@{}` and a parameter of the tool", key.name, a.name.name),
                    )
                    .help = Some(format!("rename the parameter: `@{}({} = ..)` means the key", a.name.name, key.name));
                    continue;
                }
                if seen.contains(&key.name) {
                    c.error(Code::InvalidAnnotation, key.span, format!("the key `{}` is given twice", key.name));
                }
                seen.push(key.name.clone());
                let value = Arc::new(arg.value.clone());
                if allow_params {
                    c.check_label_value(&arg.value, &sig.params);
                    let labelled = match key.name.as_str() {
                        "returns" => Some(LabelKey::Returns),
                        "pc" => Some(LabelKey::Pc),
                        name => sig.params.iter().position(|(p, _)| p == name).map(LabelKey::Param),
                    };
                    said.labels.extend(labelled.map(|k| (k, value)));
                } else {
                    c.check_card_value(&arg.value, &sig.params);
                    said.card.push((key.name.clone(), value));
                }
            }
        };
        match a.name.name.as_str() {
            "approval" => match a.args.as_slice() {
                [arg] if arg.key.is_none() => said.approval = self.check_tier(&arg.value, &sig.params),
                _ => {
                    self.error(Code::InvalidAnnotation, a.span, tiers_wanted());
                }
            },
            "card" => {
                keyed(self, &[], true, said);
                for arg in &a.args {
                    let Some(key) = &arg.key else { continue };
                    let near = CARD_KEYS.iter().find(|k| **k != key.name && near_miss(k, &key.name));
                    if let Some(meant) = near {
                        self.error(
                            Code::InvalidAnnotation,
                            key.span,
                            format!(
                                "`@card` has no key `{}`; the card's own keys are {}",
                                key.name,
                                CARD_KEYS.join(", ")
                            ),
                        )
                        .help = Some(format!("did you mean `{meant}`? Other keys name extra fields the card shows"));
                    }
                }
            }
            "label" => keyed(self, &["returns", "pc"], false, said),
            other => {
                let mut d =
                    Diagnostic::error(Code::UnknownAnnotation, a.span, format!("unknown annotation `@{other}`"));
                d.help = Some("the annotations are `@approval`, `@card` and `@label`".into());
                self.diags.push(d);
            }
        }
    }

    /// Checks the annotations of the fields of the record `name`, whose fields resolved to
    /// `resolved`, and keeps the labels they give those fields.
    pub(super) fn check_field_annotations(&mut self, name: &Ident, fields: &[Field], resolved: &[(String, Ty)]) {
        let mut labels: Vec<Vec<Arc<Expr>>> = vec![Vec::new(); resolved.len()];
        for f in fields {
            let at = resolved.iter().position(|(n, _)| *n == f.name.name);
            for a in &f.annotations {
                let label = self.check_field_annotation(a, resolved);
                if let (Some(label), Some(i)) = (label, at)
                    && let Some(field) = labels.get_mut(i)
                {
                    field.push(Arc::new(label.clone()));
                }
            }
        }
        if labels.iter().any(|l| !l.is_empty()) {
            self.annotated.fields.insert(name.span, labels);
        }
    }

    /// `field: T @label(l)`: only a policy labels fields (the label of that field in every value
    /// a tool returns); `l` is a `Label` computed from the record's fields. Returns `l` unless
    /// the annotation is not such a label.
    fn check_field_annotation<'e>(&mut self, a: &'e Annotation, fields: &[(String, Ty)]) -> Option<&'e Expr> {
        if a.name.name != "label" {
            self.error(Code::UnknownAnnotation, a.span, format!("a field takes only `@label`, not `@{}`", a.name.name));
            return None;
        }
        if self.role == Role::Plan {
            self.error(Code::InvalidAnnotation, a.span, "only a policy module labels fields").help =
                Some("labels are declared by the policy; a plan cannot make one".into());
            return None;
        }
        match a.args.as_slice() {
            [arg] if arg.key.is_none() => {
                self.check_label_value(&arg.value, fields);
                Some(&arg.value)
            }
            _ => {
                self.error(
                    Code::InvalidAnnotation,
                    a.span,
                    "a field's `@label` takes one label: `@label(untrusted())`",
                );
                None
            }
        }
    }

    /// A card shows values computed from the tool's arguments: its expressions are type checked
    /// over the tool's data parameters and may call builtins only.
    fn check_card_value(&mut self, e: &Expr, params: &[(String, Ty)]) {
        self.check_annotation_expr(e, params, "a card shows values", None);
    }

    /// A `@label` value is a `Label` computed from the tool's arguments: it is type checked over
    /// the tool's data parameters and may call builtins and the label functions.
    pub(super) fn check_label_value(&mut self, e: &Expr, params: &[(String, Ty)]) {
        let outer = std::mem::replace(&mut self.in_label, true);
        self.check_annotation_expr(e, params, "a label is computed from the arguments", Some(&label_ty()));
        self.in_label = outer;
    }

    /// Checks an annotation value over the tool's data parameters (against `expected` if given);
    /// it may not call the program's functions or measures (`what` says why).
    pub(super) fn check_annotation_expr(
        &mut self,
        e: &Expr,
        params: &[(String, Ty)],
        what: &str,
        expected: Option<&Ty>,
    ) {
        let mut calls: Vec<Ident> = Vec::new();
        let in_label = self.in_label;
        walk_names(e, &mut |id: &Ident, called: bool| {
            let label_fn = in_label && crate::builtins::label_fn(&id.name).is_some();
            if called && !label_fn && matches!(self.values.get(&id.name), Some(ValueDef::Fn(_) | ValueDef::Measure(_)))
            {
                calls.push(id.clone());
            }
        });
        for id in calls {
            self.error(Code::InvalidAnnotation, id.span, format!("{what}; it cannot call `{}`", id.name));
        }
        let (depth, barrier, facts) = (self.scope.len(), self.barrier, self.facts.len());
        self.barrier = depth;
        let data: Vec<&(String, Ty)> = params.iter().filter(|(_, t)| !self.is_second_class(t)).collect();
        for (name, ty) in data {
            self.push_scope(Binding {
                name: name.as_str().into(),
                ty: ty.clone(),
                term: None,
                span: e.span,
                lin: None,
            });
        }
        match expected {
            Some(t) => self.check(e, t),
            None => self.infer(e),
        };
        self.truncate_scope(depth);
        self.barrier = barrier;
        self.facts.truncate(facts);
    }
}

/// The keys of `@card` that mean something to the gate; any other key is an extra field.
pub const CARD_KEYS: &[&str] = &["action", "destination", "content", "recipients", "hidden"];

/// Is `key` a likely misspelling of `meant` (one edit away, or a missing or extra `s`)? A
/// misspelt `recipients` would silently become an extra field that the intent check does not
/// look at.
pub fn near_miss(meant: &str, key: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (meant.chars().collect(), key.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut row = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            row[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1);
        }
        prev = row;
    }
    prev.last().is_some_and(|d| *d <= 2)
}
