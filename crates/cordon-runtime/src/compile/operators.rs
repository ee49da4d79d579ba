//! Lowering the unary and binary operators: `&&` and `||` branch on their left side, a string
//! literal added to a value joins it in place, and a local on the left is read where the
//! operation takes it.

use cordon_syntax::Span;
use cordon_syntax::ast::{BinOp, Expr, UnOp};

use super::{Compiler, Res};
use crate::code::{Op, Operand};
use crate::value::Value;

impl Compiler {
    pub(super) fn unary(&mut self, op: UnOp, operand: &Expr, span: Span) -> Res {
        self.expr(operand)?;
        self.emit(Op::Unary(op), span);
        Ok(())
    }

    pub(super) fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr, span: Span) -> Res {
        match op {
            BinOp::And => return self.branch(lhs, |c| c.expr(rhs), |c| c.push(Value::Bool(false), span), span),
            BinOp::Or => return self.branch(lhs, |c| c.push(Value::Bool(true), span), |c| c.expr(rhs), span),
            _ => {}
        }
        // `+` with a string literal on one side: the literal joins the other operand in place,
        // without being pushed.
        let literal_side = match (self.string_literal(lhs), self.string_literal(rhs)) {
            (Some(text), _) => Some((text, rhs, true)),
            (None, Some(text)) => Some((text, lhs, false)),
            (None, None) => None,
        };
        if op == BinOp::Add
            && let Some((text, other, left)) = literal_side
        {
            self.expr(other)?;
            self.emit(Op::AddLiteral { text: text.into(), left }, span);
            return Ok(());
        }
        match self.local_slot(lhs) {
            // A local on the left of a computed right side is read where the operation takes
            // it, after the right side: no `Load`, no push. Nothing the right side does changes
            // a local's slot (bindings are immutable), and a read has no effect to reorder.
            // (Operands both locals or literals are fused by `emit`.) A local to be moved out
            // (`take_once`) is moved first, so the operation owns it.
            Some(slot)
                if self.local_slot(rhs).is_none()
                    && !self.is_int_literal(rhs)
                    && self.body().take_once != Some(slot) =>
            {
                self.expr(rhs)?;
                self.emit(Op::BinaryWith { op, lhs: Operand::Slot(slot), rhs: Operand::Top }, span);
            }
            _ => {
                self.expr(lhs)?;
                self.expr(rhs)?;
                self.emit(Op::Binary(op), span);
            }
        }
        Ok(())
    }
}
