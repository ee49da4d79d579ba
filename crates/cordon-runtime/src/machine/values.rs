//! The machine's instructions that compute values, by family: arithmetic, building values
//! (tuples, lists, records, variants, closures), taking them apart (fields, components,
//! indexing, destructuring), and what the loops of `map`, `filter`, `any` and `all` build. None
//! of them jumps or leaves the frame.
//!
//! The loop's `match` calls each instruction's function with the instruction's fields; those
//! on its hot paths are inlined into it.

use std::sync::Arc;

use cordon_syntax::ast::{BinOp, UnOp};
use cordon_syntax::{Builtin, Span};

use crate::builtins::{self, SLOT_BYTES, overflow};
use crate::code::{CaptureFrom, Operand, Over, Pat, Slot};
use crate::ctx::Ctx;
use crate::decimal;
use crate::error::{ErrorKind, RunError};
use crate::live::{Measured, allocate, text_bytes};
use crate::shape::Shape;
use crate::value::{CodeRef, Func, Layout, Record, Str, Val, Value, Variant};
use cordon_label::Label;

use super::ops::{
    binary, binary_with, bind, clone_val, discard, int_arith, int_binary, int_compare, int_with, overwrite,
    set_scalar_free, tops, type_error,
};
use super::stack::Vm;

/// The error of popping an empty operand stack.
#[cold]
pub(super) fn empty_stack() -> RunError {
    type_error(Span::default(), "the operand stack is empty")
}

// Arithmetic. Integers are computed in place where they can be; everything else, errors
// included, as `binary` has it.

/// `Unary`.
#[inline(always)]
pub(super) fn unary(vm: &mut Vm, op: UnOp) -> Result<(), RunError> {
    let Some(v) = vm.stack.pop() else { return Err(empty_stack()) };
    let value = match (op, &v.value) {
        (UnOp::Neg, Value::Int(i)) => Value::Int(i.checked_neg().ok_or_else(overflow)?),
        (UnOp::Neg, Value::Float(x)) => Value::Float(-x),
        // Exact: the range of a Decimal is symmetric.
        (UnOp::Neg, Value::Decimal(x)) => Value::decimal(-**x),
        (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
        _ => return Err(type_error(Span::default(), format!("cannot apply `{op:?}` to {}", v.value.kind()))),
    };
    vm.stack.push(Val { value, label: v.label });
    Ok(())
}

/// `Binary`, on the two values on top.
#[inline(always)]
pub(super) fn binary_on_top(vm: &mut Vm, ctx: &mut Ctx, op: BinOp) -> Result<(), RunError> {
    // Integers in place: the result overwrites the left operand and takes the join of both
    // labels, as in `binary`, which handles everything else (errors included).
    if let [.., a, b] = &mut vm.stack[..]
        && let (Value::Int(x), Value::Int(y)) = (&mut a.value, &b.value)
        && let Some(r) = int_arith(op, *x, *y)
    {
        // The left integer overwritten in place, with nothing to drop.
        *x = r;
        a.label.join_mut(&b.label);
        discard(vm.stack.pop());
        return Ok(());
    }
    if let [.., a, b] = &mut vm.stack[..]
        && let (Value::Int(x), Value::Int(y)) = (&a.value, &b.value)
        && let Some(value) = int_binary(op, *x, *y)
    {
        let label = a.label.join(&b.label);
        overwrite(a, Val { value, label });
        discard(vm.stack.pop());
        return Ok(());
    }
    let Some(b) = vm.stack.pop() else { return Err(empty_stack()) };
    let Some(a) = vm.stack.pop() else { return Err(empty_stack()) };
    let held = text_bytes(&a) + text_bytes(&b);
    let v = binary(op, a, b, &mut Measured::new(vm, ctx, held))?;
    vm.stack.push(v);
    Ok(())
}

/// `AddLiteral`: a string on top extended by the literal `text` (on its left if `left`).
#[inline(always)]
pub(super) fn add_literal(vm: &mut Vm, ctx: &mut Ctx, text: &Str, left: bool) -> Result<(), RunError> {
    if let Some(Val { value: Value::Str(s), .. }) = vm.stack.last() {
        // As `binary` joins two strings; the literal's label is bottom, so the result keeps
        // the other operand's.
        let len = s.len() + text.len();
        builtins::check_string_len(len, ctx)?;
        // As `binary` counts it: appended in place, only the literal's length.
        let grows = if s.is_unique() && !left { text.len() } else { len };
        allocate(vm, ctx, 0, grows as u64)?;
        let Some(Val { value: Value::Str(s), .. }) = vm.stack.last_mut() else { return Ok(()) };
        match (s.is_unique(), left) {
            (true, true) => s.prepend(text),
            (true, false) => s.append(text),
            (false, _) => {
                let (a, b) = if left { (&**text, &**s) } else { (&**s, &**text) };
                let mut out = String::with_capacity(len);
                out.push_str(a);
                out.push_str(b);
                *s = out.into();
            }
        }
        return Ok(());
    }
    // Anything else (an error) as `binary` has it.
    let Some(other) = vm.stack.pop() else { return Err(empty_stack()) };
    let literal = Val::plain(Value::Str(text.clone()));
    let (a, b) = if left { (literal, other) } else { (other, literal) };
    let held = text_bytes(&a) + text_bytes(&b);
    let v = binary(BinOp::Add, a, b, &mut Measured::new(vm, ctx, held))?;
    vm.stack.push(v);
    Ok(())
}

/// `BinaryWith` of a slot and an integer literal, the commonest form.
#[inline(always)]
pub(super) fn slot_with_int(
    vm: &mut Vm,
    ctx: &mut Ctx,
    base: usize,
    op: BinOp,
    s: Slot,
    k: i64,
) -> Result<(), RunError> {
    if let Some(Val { value: Value::Int(x), label }) = vm.stack.get(base + s as usize)
        && let Some(r) = int_arith(op, *x, k)
    {
        // Built as an `Int` outright, not as whichever `Value` `int_binary` picks.
        let v = Val { value: Value::Int(r), label: label.clone() };
        vm.stack.push(v);
        return Ok(());
    }
    if let Some(Val { value: Value::Int(x), label }) = vm.stack.get(base + s as usize)
        && let Some(value) = int_binary(op, *x, k)
    {
        let v = Val { value, label: label.clone() };
        vm.stack.push(v);
        return Ok(());
    }
    let v = binary_with(vm, base, op, Operand::Slot(s), Operand::Int(k), ctx)?;
    vm.stack.push(v);
    Ok(())
}

/// `BinaryWith` of the top of the stack and an integer literal.
#[inline(always)]
pub(super) fn top_with_int(vm: &mut Vm, ctx: &mut Ctx, base: usize, op: BinOp, k: i64) -> Result<(), RunError> {
    // An integer overwritten in place, with nothing to drop; the label stays.
    if let Some(Val { value, .. }) = vm.stack.last_mut()
        && let Value::Int(x) = value
    {
        if let Some(r) = int_arith(op, *x, k) {
            *x = r;
            return Ok(());
        }
        if let Some(b) = int_compare(op, *x, k) {
            set_scalar_free(std::mem::replace(value, Value::Bool(b)));
            return Ok(());
        }
    }
    let v = binary_with(vm, base, op, Operand::Top, Operand::Int(k), ctx)?;
    vm.stack.push(v);
    Ok(())
}

/// `BinaryWith` in general: `Binary` with its operands' `Load`s and integer `Push`es folded in.
#[inline(always)]
pub(super) fn binary_with_operands(
    vm: &mut Vm,
    ctx: &mut Ctx,
    base: usize,
    op: BinOp,
    lhs: Operand,
    rhs: Operand,
) -> Result<(), RunError> {
    if let Some((value, label)) = int_with(&vm.stack, base, op, lhs, rhs) {
        // The result replaces the operands on the stack, if any.
        let v = Val { value, label };
        match tops(lhs, rhs) {
            0 => vm.stack.push(v),
            n => {
                if n == 2 {
                    discard(vm.stack.pop());
                }
                if let Some(top) = vm.stack.last_mut() {
                    overwrite(top, v);
                }
            }
        }
        return Ok(());
    }
    let v = binary_with(vm, base, op, lhs, rhs, ctx)?;
    vm.stack.push(v);
    Ok(())
}

/// `Cast`: the value on top converted with `as`.
#[inline]
pub(super) fn cast(vm: &mut Vm, shape: &Shape) -> Result<(), RunError> {
    let Some(v) = vm.stack.pop() else { return Err(empty_stack()) };
    let value = match (shape, &v.value) {
        (Shape::Float, Value::Int(i)) => Value::Float(*i as f64),
        (Shape::Float, Value::Float(x)) => Value::Float(*x),
        (Shape::Int, Value::Int(i)) => Value::Int(*i),
        (Shape::Decimal, Value::Int(i)) => Value::decimal(decimal::from_int(*i)),
        (Shape::Decimal, Value::Decimal(x)) => Value::Decimal(x.clone()),
        (Shape::Int, Value::Float(x)) => {
            // `as` truncates toward zero; NaN, infinities and values outside `Int` are errors,
            // not saturated.
            let t = x.trunc();
            if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&t) {
                return Err(RunError::new(
                    ErrorKind::Arithmetic,
                    Span::default(),
                    format!("{x} does not fit in an Int"),
                ));
            }
            Value::Int(t as i64)
        }
        _ => return Err(type_error(Span::default(), format!("cannot convert {} with `as`", v.value.kind()))),
    };
    vm.stack.push(Val { value, label: v.label });
    Ok(())
}

// Building values, each counted against the memory limit (or the list's length) and the depth
// limit first.

/// `MakeTuple`.
#[inline(always)]
pub(super) fn make_tuple(vm: &mut Vm, ctx: &mut Ctx, n: u16) -> Result<(), RunError> {
    let n = n as usize;
    allocate(vm, ctx, 0, n as u64 * SLOT_BYTES)?;
    let items: Vec<Val> = vm.stack.drain(vm.stack.len() - n..).collect();
    vm.stack.push(Val::plain(Value::Tuple(Arc::new(items))));
    Ok(())
}

/// `MakeList`.
#[inline(always)]
pub(super) fn make_list(vm: &mut Vm, ctx: &mut Ctx, n: u32) -> Result<(), RunError> {
    let n = n as usize;
    builtins::check_list_len(n, &mut Measured::new(vm, ctx, 0))?;
    let items: Vec<Val> = vm.stack.drain(vm.stack.len() - n..).collect();
    vm.stack.push(Val::plain(Value::List(Arc::new(items))));
    Ok(())
}

/// `MakeRecord`.
#[inline(always)]
pub(super) fn make_record(vm: &mut Vm, ctx: &mut Ctx, layout: &Arc<Layout>) -> Result<(), RunError> {
    let n = layout.names.len();
    allocate(vm, ctx, 0, n as u64 * SLOT_BYTES)?;
    let Some(record) = Record::from_top(layout.clone(), &mut vm.stack) else {
        return Err(type_error(Span::default(), "the operand stack is empty"));
    };
    ctx.check_depth(record.depth)?;
    vm.stack.push(Val::plain(Value::Record(Arc::new(record))));
    Ok(())
}

/// `MakeVariant`.
#[inline(always)]
pub(super) fn make_variant(
    vm: &mut Vm,
    ctx: &mut Ctx,
    enum_name: &Arc<str>,
    name: &Arc<str>,
    arity: u16,
) -> Result<(), RunError> {
    let payload: Vec<Val> = vm.stack.drain(vm.stack.len() - arity as usize..).collect();
    let v = Variant::new(enum_name.clone(), name.clone(), payload);
    ctx.check_depth(v.depth)?;
    vm.stack.push(Val::plain(Value::Variant(Arc::new(v))));
    Ok(())
}

/// `MakeClosure`: `body` with the captures read from the frame's slots and its function's own.
#[inline(always)]
pub(super) fn make_closure(
    vm: &mut Vm,
    ctx: &mut Ctx,
    base: usize,
    body: CodeRef,
    captures: &[CaptureFrom],
) -> Result<(), RunError> {
    let frame_func = vm.frames.last().and_then(|f| f.func.clone());
    let mut values = Vec::with_capacity(captures.len());
    for c in captures.iter() {
        let v = match c {
            CaptureFrom::Slot(s) => vm.stack.get(base + *s as usize).cloned(),
            CaptureFrom::Capture(i) => frame_func.as_ref().and_then(|f| f.captures.get(*i as usize).cloned()),
        };
        match v {
            Some(v) => values.push(v),
            None => return Err(type_error(Span::default(), "a capture that does not exist")),
        }
    }
    allocate(vm, ctx, 0, values.len() as u64 * SLOT_BYTES)?;
    let func = Func::new(body, values);
    ctx.check_depth(func.depth)?;
    vm.stack.push(Val::plain(Value::Func(Arc::new(func))));
    Ok(())
}

// Taking values apart. What is taken out carries the label of what it was taken from.

/// `Field`, of the record on top.
#[inline(always)]
pub(super) fn field(vm: &mut Vm, name: &Arc<str>) -> Result<(), RunError> {
    let Some(v) = vm.stack.pop() else { return Err(empty_stack()) };
    let field = match &v.value {
        Value::Record(r) => r.field_named(name).map(clone_val),
        _ => None,
    };
    match field {
        Some(f) => vm.stack.push(f.with_label(&v.label)),
        None => return Err(type_error(Span::default(), format!("{} has no field `{name}`", v.value.kind()))),
    }
    Ok(())
}

/// `LoadField`, of the record in `slot`.
#[inline(always)]
pub(super) fn load_field(vm: &mut Vm, base: usize, slot: Slot, name: &Arc<str>) -> Result<(), RunError> {
    let at = base + slot as usize;
    let field = match &vm.stack[at].value {
        Value::Record(r) => r.field_named(name).map(clone_val),
        _ => None,
    };
    let Some(f) = field else {
        let kind = vm.stack[at].value.kind();
        return Err(type_error(Span::default(), format!("{kind} has no field `{name}`")));
    };
    // The field pushed, then raised by the record's label where it lies.
    vm.stack.push(f);
    if let Some((top, below)) = vm.stack.split_last_mut()
        && let Some(record) = below.get(at)
    {
        top.label.join_mut(&record.label);
    }
    Ok(())
}

/// `TupleField`: component `i` of the tuple on top.
#[inline(always)]
pub(super) fn tuple_field(vm: &mut Vm, i: u32) -> Result<(), RunError> {
    let Some(v) = vm.stack.pop() else { return Err(empty_stack()) };
    let item = match &v.value {
        Value::Tuple(items) => items.get(i as usize).cloned(),
        _ => None,
    };
    match item {
        Some(x) => vm.stack.push(x.with_label(&v.label)),
        None => return Err(type_error(Span::default(), format!("{} has no component {i}", v.value.kind()))),
    }
    Ok(())
}

/// `Index`: the element of a list at an integer, labelled with both.
#[inline]
pub(super) fn index(vm: &mut Vm) -> Result<(), RunError> {
    let Some(i) = vm.stack.pop() else { return Err(empty_stack()) };
    let Some(xs) = vm.stack.pop() else { return Err(empty_stack()) };
    let (Value::List(list), Value::Int(n)) = (&xs.value, &i.value) else {
        return Err(type_error(Span::default(), format!("cannot index {} with {}", xs.value.kind(), i.value.kind())));
    };
    match usize::try_from(*n).ok().and_then(|k| list.get(k)) {
        Some(x) => {
            let label = xs.label.join(&i.label);
            vm.stack.push(x.clone().with_label(&label));
            Ok(())
        }
        None => Err(RunError::new(
            ErrorKind::OutOfRange,
            Span::default(),
            format!("index {n} is out of range for a list of length {}", list.len()),
        )),
    }
}

/// `Destructure`: pops a value and binds it to an irrefutable pattern.
#[inline(always)]
pub(super) fn destructure(vm: &mut Vm, base: usize, pat: &Pat) -> Result<(), RunError> {
    let Some(v) = vm.stack.pop() else { return Err(empty_stack()) };
    let mut inspected = Label::bottom();
    if !bind(pat, &v, &Label::bottom(), &mut vm.stack[base..], &mut inspected) {
        return Err(type_error(Span::default(), "the value does not match the pattern"));
    }
    Ok(())
}

// What the loops of higher-order builtins build: a loop over a range, which no list is built
// for, the list `map` and `filter` build, and the running Bool of `any` and `all`.

/// `RangeStart`.
#[inline(always)]
pub(super) fn range_start(vm: &mut Vm, ctx: &mut Ctx) -> Result<(), RunError> {
    let Some(to) = vm.stack.pop() else { return Err(empty_stack()) };
    let Some(from) = vm.stack.pop() else { return Err(empty_stack()) };
    let (Value::Int(a), Value::Int(b)) = (&from.value, &to.value) else {
        return Err(builtins::type_error(Builtin::Range, &[from, to]));
    };
    let (a, b) = (*a, *b);
    builtins::check_range_len(a, b, &mut Measured::new(vm, ctx, 0))?;
    vm.stack.push(Val::plain(Value::Int(a)));
    vm.stack.push(Val { value: Value::Int(b.max(a)), label: from.label.join(&to.label) });
    Ok(())
}

/// `ListStart`.
#[inline(always)]
pub(super) fn list_start(vm: &mut Vm, base: usize, acc: Slot, sized_like: Option<Over>) {
    overwrite(&mut vm.stack[base + acc as usize], Val::plain(Value::Unit));
    let len = match sized_like {
        Some(Over::List { list, .. }) => match &vm.stack[base + list as usize].value {
            Value::List(xs) => xs.len(),
            _ => 0,
        },
        Some(Over::Range { next, end }) => {
            match (&vm.stack[base + next as usize].value, &vm.stack[base + end as usize].value) {
                // At most the longest list allowed: `RangeStart` checked.
                (Value::Int(a), Value::Int(b)) => usize::try_from(b.saturating_sub(*a)).unwrap_or(0),
                _ => 0,
            }
        }
        None => 0,
    };
    vm.lists.push(Vec::with_capacity(len));
}

/// `ListPush`.
#[inline(always)]
pub(super) fn list_push(vm: &mut Vm, ctx: &mut Ctx) -> Result<(), RunError> {
    // Counted before the value leaves the stack, where a count finds it.
    allocate(vm, ctx, 0, SLOT_BYTES)?;
    let Some(v) = vm.stack.pop() else { return Err(empty_stack()) };
    let max = ctx.limits.max_list_len;
    let Some(xs) = vm.lists.last_mut() else {
        return Err(type_error(Span::default(), "no list is being built"));
    };
    if xs.len() >= max {
        return Err(RunError::new(
            ErrorKind::Limit,
            Span::default(),
            format!("a list grew over the limit of {max} elements"),
        ));
    }
    xs.push(v);
    Ok(())
}

/// `ListPushIf`.
#[inline(always)]
pub(super) fn list_push_if(vm: &mut Vm, base: usize, acc: Slot, elem: Slot) -> Result<(), RunError> {
    let Some(keep) = vm.stack.pop() else { return Err(empty_stack()) };
    let Value::Bool(k) = keep.value else {
        return Err(type_error(Span::default(), "a filter must return a Bool"));
    };
    vm.stack[base + acc as usize].label.join_mut(&keep.label);
    if k {
        let x = std::mem::replace(&mut vm.stack[base + elem as usize], Val::plain(Value::Unit));
        let Some(xs) = vm.lists.last_mut() else {
            return Err(type_error(Span::default(), "no list is being built"));
        };
        xs.push(x);
    }
    Ok(())
}

/// `ListEnd`.
#[inline(always)]
pub(super) fn list_end(vm: &mut Vm, base: usize, acc: Slot) -> Result<(), RunError> {
    let Some(items) = vm.lists.pop() else {
        return Err(type_error(Span::default(), "no list is being built"));
    };
    let label = std::mem::take(&mut vm.stack[base + acc as usize].label);
    vm.stack.push(Val { value: Value::List(Arc::new(items)), label });
    Ok(())
}

/// `Accumulate`.
#[inline(always)]
pub(super) fn accumulate(vm: &mut Vm, base: usize, acc: Slot, all: bool) -> Result<(), RunError> {
    let Some(b) = vm.stack.pop() else { return Err(empty_stack()) };
    let Value::Bool(b_val) = b.value else {
        return Err(type_error(Span::default(), "a predicate must return a Bool"));
    };
    let slot = &mut vm.stack[base + acc as usize];
    slot.label.join_mut(&b.label);
    if let Value::Bool(cur) = &mut slot.value {
        *cur = if all { *cur && b_val } else { *cur || b_val };
    }
    Ok(())
}
