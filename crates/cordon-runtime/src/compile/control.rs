//! Lowering control flow: `if`, `match`, `for` loops and `to_labeled` blocks. Each becomes
//! jumps, and the paths that depend on a value run with the program-counter label raised by
//! that value's (`RaisePc`) until they join (`JoinPc`).

use std::sync::Arc;

use cordon_syntax::Span;
use cordon_syntax::ast::{Arm, Block, Expr, Pattern};

use super::{Compiler, Res};
use crate::code::{Op, Over, Slot};
use crate::value::Value;

impl Compiler {
    /// `if cond { then } else { else_ }`; without an `else`, the other path is `()`.
    pub(super) fn if_(&mut self, cond: &Expr, then: &Block, else_: Option<&Expr>, span: Span) -> Res {
        self.branch(
            cond,
            |c| c.block(then),
            |c| match else_ {
                Some(e) => c.expr(e),
                None => c.push(Value::Unit, span),
            },
            span,
        )
    }

    /// `if cond { then } else { else_ }`: both paths run with the program-counter label raised
    /// by the condition's, and the result carries it.
    pub(super) fn branch(
        &mut self,
        cond: &Expr,
        then: impl FnOnce(&mut Compiler) -> Res,
        else_: impl FnOnce(&mut Compiler) -> Res,
        span: Span,
    ) -> Res {
        self.expr(cond)?;
        self.emit(Op::RaisePc, span);
        let to_else = self.emit(Op::JumpIfFalse(0), span);
        then(self)?;
        let to_end = self.emit(Op::Jump(0), span);
        self.patch(to_else);
        else_(self)?;
        self.patch(to_end);
        self.emit(Op::JoinPc, span);
        Ok(())
    }

    pub(super) fn match_(&mut self, scrutinee: &Expr, arms: &[Arm], span: Span) -> Res {
        self.expr(scrutinee)?;
        self.emit(Op::RaisePc, span);
        let mut to_end = Vec::new();
        for arm in arms {
            let depth = self.body().scope.len();
            let pat = self.pattern(&arm.pat)?;
            let fail = self.emit(Op::Match { pat: Arc::new(pat), fail: 0 }, arm.span);
            let mut guard_fail = None;
            if let Some(g) = &arm.guard {
                self.expr(g)?;
                self.emit(Op::RaisePcAgain, g.span);
                guard_fail = Some(self.emit(Op::JumpIfFalse(0), g.span));
            }
            self.emit(Op::Pop, arm.span);
            self.expr(&arm.body)?;
            to_end.push(self.emit(Op::Jump(0), arm.span));
            self.patch(fail);
            if let Some(g) = guard_fail {
                self.patch(g);
            }
            self.body().scope.truncate(depth);
        }
        self.emit(Op::Fail("no `match` arm matched".into()), span);
        for j in to_end {
            self.patch(j);
        }
        self.emit(Op::JoinPc, span);
        Ok(())
    }

    pub(super) fn for_(&mut self, pat: &Pattern, iter: &Expr, body: &Block, span: Span) -> Res {
        let depth = self.body().scope.len();
        let (over, elem) = self.loop_slots(iter, true, span)?;
        let start = self.target();
        let next = self.emit(Op::IterNext { over, elem, exit: 0, tick: false }, span);
        self.emit(Op::Take(elem), span);
        self.bind_pattern(pat, pat.span)?;
        self.block(body)?;
        self.emit(Op::Pop, span);
        self.emit(Op::Loop(start), span);
        self.patch(next);
        self.body().scope.truncate(depth);
        self.push(Value::Unit, span)?;
        self.emit(Op::JoinPc, span);
        Ok(())
    }

    /// Evaluates what a loop steps over into slots and raises the program-counter label by its
    /// label (how many times the body runs depends on it); returns them and the element's slot.
    /// The caller emits the `JoinPc`. With `ranges`, a loop over `range(a, b)` as written steps
    /// over the integers themselves, building no list (the caller does not need the list).
    pub(super) fn loop_slots(&mut self, iter: &Expr, ranges: bool, span: Span) -> Res<(Over, Slot)> {
        let range = if ranges { self.range_call(iter) } else { None };
        let over = match range {
            Some([from, to]) => {
                self.expr(from)?;
                self.expr(to)?;
                // Its errors are `range`'s: they point at the call.
                self.emit(Op::RangeStart, iter.span);
                self.emit(Op::RaisePc, span);
                let (next, end) = (self.new_slot(), self.new_slot());
                self.emit(Op::Store(end), span);
                self.emit(Op::Store(next), span);
                Over::Range { next, end }
            }
            None => {
                self.expr(iter)?;
                self.emit(Op::RaisePc, span);
                let (list, index) = (self.new_slot(), self.new_slot());
                self.emit(Op::Store(list), span);
                self.emit(Op::Push(Value::Int(0)), span);
                self.emit(Op::Store(index), span);
                Over::List { list, index }
            }
        };
        Ok((over, self.new_slot()))
    }

    /// `to_labeled { b }`: the block's value boxed in a `Labeled` with the label the block
    /// raised the program counter to, which is then restored.
    pub(super) fn labeled(&mut self, b: &Block, span: Span) -> Res {
        self.emit(Op::ToLabeledBegin, span);
        self.block(b)?;
        self.emit(Op::ToLabeledEnd, span);
        Ok(())
    }
}
