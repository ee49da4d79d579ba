//! The machine's instructions that steer within a frame, by family: the conditional jumps (on
//! a comparison or a condition, a loop's step, a pattern's test), each of which says whether
//! it jumps, and the program-counter label's raises and restores around them. Unconditional
//! jumps stay in the loop itself.
//!
//! The loop's `match` calls each instruction's function with the instruction's fields; those
//! on its hot paths are inlined into it.

use std::sync::Arc;

use cordon_syntax::Span;

use crate::builtins::SLOT_BYTES;
use crate::code::{Operand, Over, Pat, Slot};
use crate::ctx::Ctx;
use crate::error::RunError;
use crate::live::allocate;
use crate::value::{Val, Value};
use cordon_label::Label;
use cordon_syntax::ast::BinOp;

use super::ops::{
    bind, clone_val, compare_branch, condition, discard, int_compare, int_operands, join_labels, overwrite, tops,
    type_error,
};
use super::stack::Vm;
use super::values::empty_stack;

// Conditional jumps: each returns whether to jump (for a comparison or a condition, whether
// it is false).

/// `CompareBranch` of a slot and an integer literal, the commonest form: a comparison,
/// `RaisePc` and `JumpIfFalse` in one.
#[inline(always)]
pub(super) fn compare_slot_int(
    vm: &mut Vm,
    ctx: &mut Ctx,
    base: usize,
    op: BinOp,
    s: Slot,
    k: i64,
) -> Result<bool, RunError> {
    if let Some(Val { value: Value::Int(x), label }) = vm.stack.get(base + s as usize)
        && let Some(b) = int_compare(op, *x, k)
    {
        vm.pc_stack.push(vm.pc.clone());
        vm.pc.join_mut(label);
        return Ok(!b);
    }
    Ok(!compare_branch(vm, ctx, base, op, Operand::Slot(s), Operand::Int(k))?)
}

/// `CompareBranch` in general.
#[inline(always)]
pub(super) fn compare(
    vm: &mut Vm,
    ctx: &mut Ctx,
    base: usize,
    op: BinOp,
    lhs: Operand,
    rhs: Operand,
) -> Result<bool, RunError> {
    if let Some((x, y, la, lb)) = int_operands(&vm.stack, base, lhs, rhs)
        && let Some(b) = int_compare(op, x, y)
    {
        let label = join_labels(la, lb);
        for _ in 0..tops(lhs, rhs) {
            discard(vm.stack.pop());
        }
        vm.pc_stack.push(vm.pc.clone());
        vm.pc.join_mut(&label);
        return Ok(!b);
    }
    Ok(!compare_branch(vm, ctx, base, op, lhs, rhs)?)
}

/// `RaiseJumpIfFalse`: pops the condition, saves `pc` and raises it by the condition's label.
#[inline(always)]
pub(super) fn raise_jump_if_false(vm: &mut Vm) -> Result<bool, RunError> {
    let Some(v) = vm.stack.pop() else { return Err(empty_stack()) };
    vm.pc_stack.push(vm.pc.clone());
    vm.pc.join_mut(&v.label);
    Ok(!condition(&v.value)?)
}

/// `JumpIfFalse`: pops the condition.
#[inline(always)]
pub(super) fn jump_if_false(vm: &mut Vm) -> Result<bool, RunError> {
    let Some(v) = vm.stack.pop() else { return Err(empty_stack()) };
    Ok(!condition(&v.value)?)
}

/// `IterNext`: stores the next element of `over` in `elem` (a unit of fuel if `tick`), or
/// jumps (to the loop's exit) when there is none.
#[inline(always)]
pub(super) fn iter_next(
    vm: &mut Vm,
    ctx: &mut Ctx,
    base: usize,
    over: &Over,
    elem: Slot,
    tick: bool,
) -> Result<bool, RunError> {
    match *over {
        Over::List { list, index } => {
            let (l, i) = (base + list as usize, base + index as usize);
            let Value::Int(k) = vm.stack[i].value else {
                return Err(type_error(Span::default(), "a loop index that is not an Int"));
            };
            let x = match &vm.stack[l].value {
                Value::List(xs) => match xs.get(k as usize) {
                    Some(x) => clone_val(x),
                    None => return Ok(true),
                },
                other => return Err(type_error(Span::default(), format!("cannot loop over {}", other.kind()))),
            };
            if let Value::Int(k) = &mut vm.stack[i].value {
                *k += 1;
            }
            overwrite(&mut vm.stack[base + elem as usize], x);
        }
        Over::Range { next, end } => {
            let (n, e) = (base + next as usize, base + end as usize);
            let (Value::Int(k), Value::Int(end)) = (&vm.stack[n].value, &vm.stack[e].value) else {
                return Err(type_error(Span::default(), "a range loop's bounds that are not Ints"));
            };
            let k = *k;
            // `k < end`: `k + 1` does not overflow.
            if k >= *end {
                return Ok(true);
            }
            if let Value::Int(n) = &mut vm.stack[n].value {
                *n += 1;
            }
            // The element written in place where the slot already holds a plain integer.
            match &mut vm.stack[base + elem as usize] {
                Val { value: Value::Int(e), label } if label.is_bottom() => *e = k,
                slot => overwrite(slot, Val::plain(Value::Int(k))),
            }
        }
    }
    if tick {
        ctx.burn()?;
    }
    Ok(false)
}

/// `Match`: tests the value on top against `pat` without popping it, and binds on success;
/// jumps on failure.
#[inline(always)]
pub(super) fn match_pattern(vm: &mut Vm, base: usize, pat: &Pat) -> Result<bool, RunError> {
    let Some(v) = vm.stack.last().cloned() else {
        return Err(type_error(Span::default(), "the operand stack is empty"));
    };
    let mut inspected = Label::bottom();
    let ok = bind(pat, &v, &Label::bottom(), &mut vm.stack[base..], &mut inspected);
    vm.pc.join_mut(&inspected);
    Ok(!ok)
}

// The program-counter label (`JoinPc` is `ops::join_pc`, `ToLabeledBegin` a save in the loop).

/// `RaisePc`: saves `pc` and raises it by the label of the value on top.
#[inline(always)]
pub(super) fn raise_pc(vm: &mut Vm) -> Result<(), RunError> {
    let l = match vm.stack.last() {
        Some(v) => v.label.clone(),
        None => return Err(type_error(Span::default(), "the operand stack is empty")),
    };
    vm.pc_stack.push(vm.pc.clone());
    vm.pc.join_mut(&l);
    Ok(())
}

/// `RaisePcAgain`: raises `pc` by the label of the value on top, without saving.
#[inline(always)]
pub(super) fn raise_pc_again(vm: &mut Vm) {
    if let Some(v) = vm.stack.last() {
        let l = v.label.clone();
        vm.pc.join_mut(&l);
    }
}

/// `ToLabeledEnd`: the value on top boxed as a `Labeled` with the label its block raised `pc`
/// to, and `pc` restored.
#[inline(always)]
pub(super) fn to_labeled_end(vm: &mut Vm, ctx: &mut Ctx) -> Result<(), RunError> {
    allocate(vm, ctx, 0, SLOT_BYTES)?;
    let Some(v) = vm.stack.pop() else { return Err(empty_stack()) };
    let saved = match vm.pc_stack.pop() {
        Some(l) => l,
        None => return Err(type_error(Span::default(), "unbalanced program-counter labels")),
    };
    let inner_pc = std::mem::replace(&mut vm.pc, saved);
    ctx.left_behind(&inner_pc);
    vm.stack.push(Val::plain(Value::Labeled(Arc::new(v.with_label(&inner_pc)))));
    Ok(())
}
