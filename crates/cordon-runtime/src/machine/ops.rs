//! The machine's operations outside its loop: calls, the arithmetic and comparisons of
//! binary operations, pattern matching, and the program-counter label's joins.

use std::sync::Arc;

use cordon_syntax::ast::BinOp;
use cordon_syntax::{Builtin, LabelFn, Span};

use crate::builtins::{self, Budget, deep_label, equal};
use crate::code::{Operand, Pat};
use crate::ctx::Ctx;
use crate::decimal;
use crate::error::{ErrorKind, RunError};
use crate::live::{Measured, text_bytes};
use crate::time;
use crate::value::{CodeRef, Func, Val, Value};
use cordon_label::{Label, Source};

use super::stack::{OnReturn, Vm};

/// `JoinPc`: labels the value on top with the program-counter label and restores the saved
/// one.
#[inline(always)]
pub(super) fn join_pc(vm: &mut Vm, ctx: &mut Ctx) -> Result<(), RunError> {
    let Some(saved) = vm.pc_stack.pop() else {
        return Err(type_error(Span::default(), "unbalanced program-counter labels"));
    };
    let pc = std::mem::replace(&mut vm.pc, saved);
    if !pc.is_bottom() {
        ctx.left_behind(&pc);
        if let Some(top) = vm.stack.last_mut() {
            top.label.join_mut(&pc);
        }
    }
    Ok(())
}

/// `Value::clone`, with the scalars the hot paths mostly load copied inline.
#[inline]
pub(super) fn clone_value(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Int(*i),
        Value::Bool(b) => Value::Bool(*b),
        Value::Unit => Value::Unit,
        other => other.clone(),
    }
}

/// `Val::clone`, with the scalars the hot paths mostly load copied inline, each variant built
/// whole.
#[inline(always)]
pub(super) fn clone_val(v: &Val) -> Val {
    let label = v.label.clone();
    match v.value {
        Value::Int(i) => Val { value: Value::Int(i), label },
        Value::Bool(b) => Val { value: Value::Bool(b), label },
        Value::Unit => Val { value: Value::Unit, label },
        ref other => Val { value: other.clone(), label },
    }
}

/// Calls a function value on the arguments on the stack from `at` up. A labelled function
/// raises `pc` for the call; the result takes the label (`OnReturn::PushJoinPc`).
pub(super) fn call_value(vm: &mut Vm, ctx: &mut Ctx, callee: &Val, at: usize) -> Result<(), RunError> {
    let (code, func, label) = callee_parts(callee)?;
    call_func(vm, ctx, code, func, &label, at)
}

/// What calling a function value needs: its code, the function if it has captures (the frame
/// keeps it), and its label. Nothing else is cloned.
#[inline(always)]
pub(super) fn callee_parts(callee: &Val) -> Result<(CodeRef, Option<Arc<Func>>, Label), RunError> {
    let Value::Func(f) = &callee.value else {
        return Err(type_error(Span::default(), format!("cannot call {}", callee.value.kind())));
    };
    let captures = if f.captures.is_empty() { None } else { Some(f.clone()) };
    Ok((f.code, captures, callee.label.clone()))
}

/// [`call_value`] on the parts [`callee_parts`] took.
#[inline(always)]
pub(super) fn call_func(
    vm: &mut Vm,
    ctx: &mut Ctx,
    code: CodeRef,
    func: Option<Arc<Func>>,
    label: &Label,
    at: usize,
) -> Result<(), RunError> {
    if ctx.program.code(code).params as usize != vm.stack.len() - at {
        return Err(type_error(Span::default(), "a function called with the wrong number of arguments"));
    }
    let on_return = if label.is_bottom() {
        OnReturn::Push
    } else {
        vm.pc_stack.push(vm.pc.clone());
        vm.pc.join_mut(label);
        OnReturn::PushJoinPc
    };
    enter_checked(vm, ctx, code, func, at, on_return)
}

/// Where the top `n` values of the stack start.
#[inline(always)]
pub(super) fn args_start(vm: &Vm, n: usize) -> Result<usize, RunError> {
    vm.stack.len().checked_sub(n).ok_or_else(|| type_error(Span::default(), "the operand stack is empty"))
}

/// Enters `code` with the arguments on the stack from `at` up.
#[inline]
pub(super) fn enter_checked(
    vm: &mut Vm,
    ctx: &mut Ctx,
    code: CodeRef,
    func: Option<Arc<Func>>,
    at: usize,
    on_return: OnReturn,
) -> Result<(), RunError> {
    ctx.burn()?;
    if vm.frames.len() >= ctx.limits.max_call_depth {
        return Err(depth_error(ctx));
    }
    let c = ctx.program.code(code);
    if vm.stack.len() - at != c.params as usize {
        return Err(type_error(Span::default(), "a function called with the wrong number of arguments"));
    }
    vm.enter_at(c.slots, code, func, at, on_return);
    Ok(())
}

#[cold]
pub(super) fn depth_error(ctx: &Ctx) -> RunError {
    RunError::new(
        ErrorKind::Limit,
        Span::default(),
        format!("calls nested deeper than the limit of {}", ctx.limits.max_call_depth),
    )
}

/// Calls a first-order builtin on the stack's values from `at` up, at `span`; `unlabel` also
/// returns the label to raise `pc` by, which names the `unlabel` itself: a refusal later says
/// which one raised it.
pub(super) fn builtin_call(
    b: Builtin,
    at: usize,
    span: Span,
    vm: &mut Vm,
    ctx: &mut Ctx,
) -> Result<(Val, Option<Label>), RunError> {
    let args = &vm.stack[at..];
    match (b, args) {
        (Builtin::Unlabel, [boxed]) => match &boxed.value {
            Value::Labeled(inner) => {
                let label = inner.label.join(&boxed.label);
                let here = Label::new(label.dc(), Source { what: "the `unlabel` here".into(), span });
                Ok((Val { value: inner.value.clone(), label: label.clone() }, Some(label.join(&here))))
            }
            other => Err(type_error(Span::default(), format!("`unlabel` needs a Labeled value, not {}", other.kind()))),
        },
        (Builtin::Label(LabelFn::User), []) => Ok((Val::plain(Value::Str(ctx.user.clone())), None)),
        _ => apply(b, at, vm, ctx).map(|v| (v, None)),
    }
}

/// [`builtins::apply`] on the stack's values from `at` up. `sort_by`, `min_by` and `max_by`
/// are given their keys, made by the loop before them and held by nothing else: moved off the
/// stack, they are freed once the list is ordered, before the sorted list is made. Nothing
/// they hold is counted against the memory limit after that; the builtin counts nothing
/// before.
#[inline(never)]
fn apply(b: Builtin, at: usize, vm: &mut Vm, ctx: &mut Ctx) -> Result<Val, RunError> {
    if matches!(b, Builtin::SortBy | Builtin::MinBy | Builtin::MaxBy)
        && let [keys, _] = &mut vm.stack[at..]
    {
        let keys = std::mem::replace(keys, Val::plain(Value::Unit));
        let vm: &Vm = vm;
        if let [_, xs] = &vm.stack[at..] {
            return builtins::ordered_by_keys(b, keys, xs, &mut Measured::new(vm, ctx, 0));
        }
    }
    builtins::apply(b, &vm.stack[at..], &mut Measured::new(vm, ctx, 0))
}

/// The number of a fused binary operation's operands that are on the stack.
#[inline]
pub(super) fn tops(lhs: Operand, rhs: Operand) -> usize {
    // `matches!`, not `==`: the derived `PartialEq` compares the integer payloads too.
    usize::from(matches!(lhs, Operand::Top)) + usize::from(matches!(rhs, Operand::Top))
}

/// A fused binary operation (`Op::BinaryWith`) on integers, read where they are: its result
/// and label, or `None` for everything else (left to [`binary_with`]). The caller pops the
/// operands that are on the stack.
#[inline(always)]
pub(super) fn int_with(stack: &[Val], base: usize, op: BinOp, lhs: Operand, rhs: Operand) -> Option<(Value, Label)> {
    let (x, y, la, lb) = int_operands(stack, base, lhs, rhs)?;
    let value = int_binary(op, x, y)?;
    Some((value, join_labels(la, lb)))
}

/// The integers a fused operation's operands hold, with the labels of those that are not
/// literals; `None` unless both are integers.
#[inline(always)]
pub(super) fn int_operands(
    stack: &[Val],
    base: usize,
    lhs: Operand,
    rhs: Operand,
) -> Option<(i64, i64, Option<&Label>, Option<&Label>)> {
    let len = stack.len();
    let read = |o: Operand, depth: usize| -> Option<(i64, Option<&Label>)> {
        let v = match o {
            Operand::Int(k) => return Some((k, None)),
            Operand::Slot(s) => stack.get(base + s as usize),
            Operand::Top => len.checked_sub(depth).and_then(|i| stack.get(i)),
        };
        match v {
            Some(Val { value: Value::Int(i), label }) => Some((*i, Some(label))),
            _ => None,
        }
    };
    let (x, la) = read(lhs, if matches!(rhs, Operand::Top) { 2 } else { 1 })?;
    let (y, lb) = read(rhs, 1)?;
    Some((x, y, la, lb))
}

/// The label of a result computed from operands with these labels (`None`: a literal).
#[inline(always)]
pub(super) fn join_labels(la: Option<&Label>, lb: Option<&Label>) -> Label {
    match (la, lb) {
        (Some(a), Some(b)) => a.join(b),
        (Some(l), None) | (None, Some(l)) => l.clone(),
        (None, None) => Label::bottom(),
    }
}

/// An integer comparison; `None` for the other operators.
#[inline(always)]
pub(super) fn int_compare(op: BinOp, x: i64, y: i64) -> Option<bool> {
    Some(match op {
        BinOp::Eq => x == y,
        BinOp::Ne => x != y,
        BinOp::Lt => x < y,
        BinOp::Le => x <= y,
        BinOp::Gt => x > y,
        BinOp::Ge => x >= y,
        _ => return None,
    })
}

/// `CompareBranch` in general: pops the operands on the stack, saves `pc` and raises it by the
/// condition's label; whether the condition holds.
pub(super) fn compare_branch(
    vm: &mut Vm,
    ctx: &mut Ctx,
    base: usize,
    op: BinOp,
    lhs: Operand,
    rhs: Operand,
) -> Result<bool, RunError> {
    let v = match int_with(&vm.stack, base, op, lhs, rhs) {
        Some((value, label)) => {
            for _ in 0..tops(lhs, rhs) {
                discard(vm.stack.pop());
            }
            Val { value, label }
        }
        None => binary_with(vm, base, op, lhs, rhs, ctx)?,
    };
    vm.pc_stack.push(vm.pc.clone());
    vm.pc.join_mut(&v.label);
    condition(&v.value)
}

/// The truth of a condition.
#[inline(always)]
pub(super) fn condition(v: &Value) -> Result<bool, RunError> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(type_error(Span::default(), format!("a condition must be a Bool, not {}", v.kind()))),
    }
}

/// A fused binary operation in general: pops the operands on the stack, reads the others, and
/// applies `binary`.
#[cold]
pub(super) fn binary_with(
    vm: &mut Vm,
    base: usize,
    op: BinOp,
    lhs: Operand,
    rhs: Operand,
    ctx: &mut Ctx,
) -> Result<Val, RunError> {
    let take = |vm: &mut Vm, o: Operand| match o {
        Operand::Top => vm.stack.pop().ok_or_else(|| type_error(Span::default(), "the operand stack is empty")),
        Operand::Slot(s) => Ok(vm.stack[base + s as usize].clone()),
        Operand::Int(k) => Ok(Val::plain(Value::Int(k))),
    };
    let b = take(vm, rhs)?;
    let a = take(vm, lhs)?;
    let held = text_bytes(&a) + text_bytes(&b);
    binary(op, a, b, &mut Measured::new(vm, ctx, held))
}

/// Drops a value popped from the stack. Scalars own nothing, so they are let go inline: the
/// drop glue of `Value` is an out-of-line call, and most values the hot paths drop are
/// integers and Bools.
#[inline(always)]
pub(super) fn discard(v: Option<Val>) {
    if let Some(Val { value, label }) = v {
        drop(label);
        set_scalar_free(value);
    }
}

/// Drops `v`, inline when it is a scalar (see [`discard`]).
#[inline(always)]
pub(super) fn set_scalar_free(v: Value) {
    match v {
        Value::Unit | Value::Bool(_) | Value::Int(_) | Value::Float(_) => std::mem::forget(v),
        other => drop(other),
    }
}

/// Overwrites a value in place, dropping the old one inline when it is a scalar.
#[inline(always)]
pub(super) fn overwrite(slot: &mut Val, v: Val) {
    let Val { value, label } = std::mem::replace(slot, v);
    drop(label);
    set_scalar_free(value);
}

/// `binary` on two integers, when it succeeds: `None` leaves overflow, division by zero and
/// the operators integers do not take to `binary`.
#[inline]
pub(super) fn int_binary(op: BinOp, x: i64, y: i64) -> Option<Value> {
    match int_arith(op, x, y) {
        Some(r) => Some(Value::Int(r)),
        None => int_compare(op, x, y).map(Value::Bool),
    }
}

/// Integer arithmetic, when it succeeds; `None` for overflow, division by zero and the
/// operators that are not arithmetic.
#[inline(always)]
pub(super) fn int_arith(op: BinOp, x: i64, y: i64) -> Option<i64> {
    match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        BinOp::Mul => x.checked_mul(y),
        BinOp::Div => x.checked_div(y),
        BinOp::Rem => x.checked_rem(y),
        _ => None,
    }
}

pub(super) fn binary(op: BinOp, a: Val, b: Val, ctx: &mut dyn Budget) -> Result<Val, RunError> {
    use Value::{Bool, Decimal, Float, Int, Str};
    let arith = |r: Option<i64>, what: &str| {
        r.map(Int).ok_or_else(|| RunError::new(ErrorKind::Arithmetic, Span::default(), what.to_string()))
    };
    let value = match (op, &a.value, &b.value) {
        (BinOp::Eq | BinOp::Ne, x, y) => {
            let label = deep_label(&a).join(&deep_label(&b));
            let eq = equal(x, y);
            return Ok(Val { value: Bool(if op == BinOp::Eq { eq } else { !eq }), label });
        }
        (BinOp::Add, Int(x), Int(y)) => arith(x.checked_add(*y), "integer overflow")?,
        (BinOp::Sub, Int(x), Int(y)) => arith(x.checked_sub(*y), "integer overflow")?,
        (BinOp::Mul, Int(x), Int(y)) => arith(x.checked_mul(*y), "integer overflow")?,
        (BinOp::Div | BinOp::Rem, Int(_), Int(0)) => {
            return Err(RunError::new(ErrorKind::Arithmetic, Span::default(), "division by zero"));
        }
        (BinOp::Div, Int(x), Int(y)) => arith(x.checked_div(*y), "integer overflow")?,
        (BinOp::Rem, Int(x), Int(y)) => arith(x.checked_rem(*y), "integer overflow")?,
        (BinOp::Add, Float(x), Float(y)) => Float(x + y),
        (BinOp::Sub, Float(x), Float(y)) => Float(x - y),
        (BinOp::Mul, Float(x), Float(y)) => Float(x * y),
        (BinOp::Div, Float(x), Float(y)) => Float(x / y),
        (BinOp::Rem, Float(x), Float(y)) => Float(x % y),
        (BinOp::Add, Decimal(x), Decimal(y)) => Value::decimal(decimal::add(**x, **y)?),
        (BinOp::Sub, Decimal(x), Decimal(y)) => Value::decimal(decimal::sub(**x, **y)?),
        (BinOp::Mul, Decimal(x), Decimal(y)) => Value::decimal(decimal::mul(**x, **y)?),
        (BinOp::Div, Decimal(x), Decimal(y)) => Value::decimal(decimal::div(**x, **y)?),
        (BinOp::Add | BinOp::Sub, Value::Time(x), Value::Time(y)) => match time::add_or_sub(**x, **y, op == BinOp::Sub)
        {
            Some(r) => Value::time(r?),
            None => {
                let message = format!("cannot apply `{}` to {} and {}", op.as_str(), x.kind(), y.kind());
                return Err(type_error(Span::default(), message));
            }
        },
        (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, Value::Time(x), Value::Time(y))
            if std::mem::discriminant(&**x) == std::mem::discriminant(&**y) =>
        {
            Bool(match op {
                BinOp::Lt => x < y,
                BinOp::Le => x <= y,
                BinOp::Gt => x > y,
                _ => x >= y,
            })
        }
        (BinOp::Add, Str(x), Str(y)) => {
            let len = x.len() + y.len();
            builtins::check_string_len(len, ctx)?;
            // Extended in place at its end, a text grows by the other's length; else a whole
            // new text (or a whole text moved along) is made.
            ctx.allocate(if x.is_unique() { y.len() } else { len } as u64)?;
            let label = a.label.join(&b.label);
            // An operand nothing else refers to (a temporary, or an accumulator the program
            // overwrites) is extended in place, keeping its allocation, rather than copied.
            let value = match (a.value, b.value) {
                (Str(mut x), y) if x.is_unique() => {
                    x.append(y.as_str().unwrap_or_default());
                    Str(x)
                }
                (x, Str(mut y)) if y.is_unique() => {
                    y.prepend(x.as_str().unwrap_or_default());
                    Str(y)
                }
                (x, y) => {
                    let (x, y) = (x.as_str().unwrap_or_default(), y.as_str().unwrap_or_default());
                    let mut s = String::with_capacity(len);
                    s.push_str(x);
                    s.push_str(y);
                    Str(s.into())
                }
            };
            return Ok(Val { value, label });
        }
        (BinOp::Lt, Int(x), Int(y)) => Bool(x < y),
        (BinOp::Le, Int(x), Int(y)) => Bool(x <= y),
        (BinOp::Gt, Int(x), Int(y)) => Bool(x > y),
        (BinOp::Ge, Int(x), Int(y)) => Bool(x >= y),
        (BinOp::Lt, Float(x), Float(y)) => Bool(x < y),
        (BinOp::Le, Float(x), Float(y)) => Bool(x <= y),
        (BinOp::Gt, Float(x), Float(y)) => Bool(x > y),
        (BinOp::Ge, Float(x), Float(y)) => Bool(x >= y),
        (BinOp::Lt, Decimal(x), Decimal(y)) => Bool(x < y),
        (BinOp::Le, Decimal(x), Decimal(y)) => Bool(x <= y),
        (BinOp::Gt, Decimal(x), Decimal(y)) => Bool(x > y),
        (BinOp::Ge, Decimal(x), Decimal(y)) => Bool(x >= y),
        (BinOp::Lt, Str(x), Str(y)) => Bool(x < y),
        (BinOp::Le, Str(x), Str(y)) => Bool(x <= y),
        (BinOp::Gt, Str(x), Str(y)) => Bool(x > y),
        (BinOp::Ge, Str(x), Str(y)) => Bool(x >= y),
        (BinOp::And, Bool(x), Bool(y)) => Bool(*x && *y),
        (BinOp::Or, Bool(x), Bool(y)) => Bool(*x || *y),
        _ => {
            return Err(type_error(
                Span::default(),
                format!("cannot apply `{}` to {} and {}", op.as_str(), a.value.kind(), b.value.kind()),
            ));
        }
    };
    Ok(Val { value, label: a.label.join(&b.label) })
}

/// Matches `v` (inside containers labelled `outer`) against `pat`, storing bindings in
/// `slots`. `inspected` collects the labels of every part whose value decided the match.
pub(super) fn bind(pat: &Pat, v: &Val, outer: &Label, slots: &mut [Val], inspected: &mut Label) -> bool {
    let here = outer.join(&v.label);
    let mut decide = |ok: bool| {
        inspected.join_mut(&here);
        ok
    };
    match (pat, &v.value) {
        (Pat::Wild, _) => true,
        (Pat::Bind(s), _) => match slots.get_mut(*s as usize) {
            Some(slot) => {
                *slot = v.clone().with_label(outer);
                true
            }
            None => false,
        },
        (Pat::Int(i), Value::Int(j)) => decide(i == j),
        (Pat::Str(s), Value::Str(t)) => decide(**s == **t),
        (Pat::Bool(b), Value::Bool(c)) => decide(b == c),
        (Pat::Unit, Value::Unit) => true,
        (Pat::Tuple(ps), Value::Tuple(items)) if ps.len() == items.len() => {
            ps.iter().zip(items.iter()).all(|(p, x)| bind(p, x, &here, slots, inspected))
        }
        (Pat::Variant { enum_name, name, args }, Value::Variant(x)) => {
            if !decide(x.enum_name == *enum_name && x.name == *name && x.payload.len() == args.len()) {
                return false;
            }
            args.iter().zip(&x.payload).all(|(p, x)| bind(p, x, &here, slots, inspected))
        }
        _ => false,
    }
}

pub(super) fn type_error(span: Span, message: impl Into<String>) -> RunError {
    RunError::new(ErrorKind::Type, span, message)
}
