//! What the policy says about asking before a call: each tool's approval tier (`@approval`) and
//! the fields its approval card shows (`@card`), compiled to code over the tool's parameters and
//! evaluated here on a call's real argument values. The runtime only answers the questions;
//! `cordon-gate` decides with the answers.
//!
//! A tier may depend on the arguments (`@approval(if amount > 100 { ask_always } else { ask })`),
//! so it is computed per call, never per tool. Card fields are computed the same way and keep
//! their labels: `destination = order.merchant` is as secret, and as vouched for, as the order
//! it was read from.

use cordon_label::Tier;
use cordon_syntax::Span;

use crate::Program;
use crate::code::{TierCode, ToolDecl};
use crate::ctx::Ctx;
use crate::effect::Effect;
use crate::error::{ErrorKind, RunError};
use crate::limits::Limits;
use crate::value::{CodeRef, Val, Value};

/// One field of a card, computed from a call's arguments: its `@card` key (`destination`,
/// `content`, `amount`, ..) and its value with the label it carries.
#[derive(Clone, Debug, PartialEq)]
pub struct CardField {
    pub key: String,
    pub value: Val,
}

/// Evaluating a tier or a card field never needs more than this: the code is an annotation
/// over the arguments, with no function calls and no tools.
const FUEL: u64 = 100_000;

impl Program {
    /// The approval tier of `effect`, computed on its argument values. A tool without
    /// `@approval` has [`Tier::None`].
    pub fn tier(&self, effect: &Effect) -> Result<Tier, RunError> {
        let decl = self.decl(effect)?;
        let Some(mut code) = decl.approval.as_ref() else { return Ok(Tier::None) };
        let mut ctx = None;
        loop {
            match code {
                TierCode::Is(t) => return Ok(*t),
                TierCode::If { cond, then, otherwise } => {
                    let ctx = ctx.get_or_insert_with(|| self.scratch());
                    let v = eval(ctx, effect, cond, "@approval")?;
                    code = match v.value {
                        Value::Bool(true) => then,
                        Value::Bool(false) => otherwise,
                        other => {
                            let message = format!("the condition of `@approval` gave {}", other.kind());
                            return Err(RunError::new(ErrorKind::Type, effect.span, message));
                        }
                    };
                }
            }
        }
    }

    /// The fields `@card` lists for `effect`'s tool, in the policy's order, computed on its
    /// argument values (each keeps the label of what it was computed from). Empty when the tool
    /// has no `@card`.
    pub fn card(&self, effect: &Effect) -> Result<Vec<CardField>, RunError> {
        let decl = self.decl(effect)?;
        if decl.card.is_empty() {
            return Ok(Vec::new());
        }
        let mut ctx = self.scratch();
        let mut fields = Vec::with_capacity(decl.card.len());
        for (key, code) in &decl.card {
            let value = eval(&mut ctx, effect, code, &format!("@card({key})"))?;
            fields.push(CardField { key: key.clone(), value });
        }
        Ok(fields)
    }

    /// The `@card` field `key` of `effect`'s tool, computed on its argument values; `None` when
    /// the card has no such field (nothing else is computed).
    pub fn card_field(&self, effect: &Effect, key: &str) -> Result<Option<CardField>, RunError> {
        let decl = self.decl(effect)?;
        let Some((key, code)) = decl.card.iter().find(|(k, _)| k == key) else { return Ok(None) };
        let value = eval(&mut self.scratch(), effect, code, &format!("@card({key})"))?;
        Ok(Some(CardField { key: key.clone(), value }))
    }

    /// Whether the policy declares `@card` for `effect`'s tool.
    pub fn has_card(&self, effect: &Effect) -> bool {
        self.decl(effect).is_ok_and(|d| !d.card.is_empty())
    }

    fn decl(&self, effect: &Effect) -> Result<&ToolDecl, RunError> {
        let found = self.compiled.tool(&effect.capability, &effect.tool);
        found.ok_or_else(|| {
            let message = format!("the capability `{}` has no tool `{}`", effect.capability, effect.tool);
            RunError::new(ErrorKind::Type, effect.span, message)
        })
    }

    /// A context of its own for evaluating policy code outside any run: no host state, a
    /// small fuel budget, the default memory limits.
    fn scratch(&self) -> Ctx {
        Ctx::new(self.compiled.clone(), Limits { fuel: FUEL, ..Limits::default() }, "user")
    }
}

/// Runs annotation code on the effect's arguments; an error points at the call.
fn eval(ctx: &mut Ctx, effect: &Effect, code: &CodeRef, what: &str) -> Result<Val, RunError> {
    let args: Vec<Val> = effect.args.iter().map(|(_, v)| v.clone()).collect();
    ctx.eval(code, args).map_err(|mut e| {
        if e.span == Span::default() {
            e.span = effect.span;
        }
        e.with_note(format!("while computing `{what}` of `{}.{}`", effect.capability, effect.tool))
    })
}
