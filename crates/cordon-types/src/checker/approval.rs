//! What a policy's approvals may say: a tool's `@approval` is a tier, or a choice of tiers on
//! the tool's arguments; a `release "group" to L` names its group by a word, its label is a
//! label, and its only approvals are `ask` (the user's yes on a card, the default) and `none`.
//! What they say is resolved here, as they are checked (`declared::ApprovalTier`, `Release`).

use std::sync::Arc;

use cordon_label::Tier;
use cordon_syntax::ast::{Annotation, Expr, ExprKind, release_asks};
use cordon_syntax::{Code, Span};

use super::{Checker, tiers_wanted};
use crate::declared::{ApprovalTier, Release};
use crate::ty::Ty;

impl Checker<'_> {
    /// An approval tier: `deny`, `ask_always`, `ask` or `none`, or `if cond { tier } else
    /// tier` whose conditions are booleans computed from the tool's arguments (as a card's
    /// values are), so the tier of a call is decided on its real values. Returns the tier unless
    /// it has an error.
    pub(super) fn check_tier(&mut self, e: &Expr, params: &[(String, Ty)]) -> Option<ApprovalTier> {
        match &e.kind {
            ExprKind::Name(id) => match Tier::from_name(&id.name) {
                Some(tier) => Some(ApprovalTier::Is(tier)),
                None => self.tier_error(e.span),
            },
            ExprKind::If { cond, then, else_: Some(otherwise) } => {
                self.check_annotation_expr(
                    cond,
                    params,
                    "an approval tier is computed from the arguments",
                    Some(&Ty::Bool),
                );
                let then = match (then.stmts.as_slice(), &then.tail) {
                    ([], Some(tail)) => self.check_tier(tail, params),
                    _ => self.tier_error(then.span),
                };
                let otherwise = match &otherwise.kind {
                    ExprKind::Block(b) if b.stmts.is_empty() && b.tail.is_some() => {
                        b.tail.as_ref().and_then(|tail| self.check_tier(tail, params))
                    }
                    ExprKind::If { .. } => self.check_tier(otherwise, params),
                    _ => self.tier_error(otherwise.span),
                };
                let (then, otherwise) = (Box::new(then?), Box::new(otherwise?));
                Some(ApprovalTier::If { cond: Arc::new((**cond).clone()), then, otherwise })
            }
            _ => self.tier_error(e.span),
        }
    }

    fn tier_error(&mut self, span: Span) -> Option<ApprovalTier> {
        self.error(Code::InvalidAnnotation, span, tiers_wanted()).help =
            Some("or a choice on the arguments: `if amount > 100 { ask_always } else { ask }`".into());
        None
    }

    /// Checks a `release` and keeps it, with whether it asks.
    pub(super) fn check_release(&mut self, group: &str, group_span: Span, to: &Expr, annotations: &[Annotation]) {
        if group.is_empty() || group.chars().any(|c| c.is_control() || c.is_whitespace()) {
            self.error(Code::InvalidAnnotation, group_span, "a group's name is a word, without spaces").help =
                Some("name the group as its data is labelled: `group(\"workspace\", ..)`".into());
        }
        self.check_label_value(to, &[]);
        for a in annotations {
            let tier = match (a.name.name.as_str(), a.args.as_slice()) {
                ("approval", [arg]) if arg.key.is_none() => match &arg.value.kind {
                    ExprKind::Name(id) => Tier::from_name(&id.name),
                    _ => None,
                },
                _ => None,
            };
            if !matches!(tier, Some(Tier::Ask | Tier::None)) {
                self.error(
                    Code::InvalidAnnotation,
                    a.span,
                    "a release takes `@approval(ask)` (the user's yes on a card, the default) or \
                     `@approval(none)` (no one is asked)",
                );
            }
        }
        let release = Release { group: group.to_string(), to: Arc::new(to.clone()), asks: release_asks(annotations) };
        self.annotated.releases.push(release);
    }
}
