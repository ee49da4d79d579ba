//! The interpreter: a stack machine over compiled code, with its continuation as data (frames
//! and an operand stack on the heap), so that a tool call can stop it and a later `resume`
//! continue it, and so that no program can exhaust the host's own stack.
//!
//! Labels: every value carries one; operations join them; the program-counter label `pc` is
//! raised where control depends on a value (`RaisePc`) and restored where the paths join
//! (`JoinPc`), labelling the joined result with what it depended on.

use std::sync::Arc;

use cordon_syntax::ast::{BinOp, UnOp};
use cordon_syntax::{Builtin, Span};

use crate::builtins::{self, SLOT_BYTES, overflow};
use crate::code::{Access, CaptureFrom, Compiled, MethodTarget, Op, Operand, Over};
use crate::ctx::{ConstState, Ctx};
use crate::decimal;
use crate::effect::HoleRequest;
use crate::error::{ErrorKind, RunError};
use crate::live::{Measured, Root, Roots, allocate, recount_before_stopping, text_bytes};
use crate::shape::Shape;
use crate::value::{CodeRef, Func, Record, Str, Val, Value, Variant};
use cordon_label::Label;

mod ops;
mod stack;

use ops::*;
pub use stack::Vm;
use stack::{Frame, OnReturn};

/// Why the machine stopped.
#[derive(Debug)]
pub enum Exit {
    Done(Val),
    /// A tool call, not yet admitted: the machine waits for its result, and the run has the
    /// boundary decide whether there will be one.
    Call(Call),
    /// A hole; the machine waits for its fill.
    Hole(HoleRequest),
}

/// A tool call as the plan made it: the capability it was made on, the tool's name, the
/// arguments, and the program-counter label at the call (what chose to make it).
#[derive(Debug)]
pub struct Call {
    pub capability: Str,
    pub tool: Arc<str>,
    pub args: Vec<Val>,
    pub pc: Label,
    pub span: Span,
}

impl Ctx {
    /// One unit of fuel: a call or a loop iteration. The clock is read every 1024 units.
    #[inline(always)]
    fn burn(&mut self) -> Result<(), RunError> {
        self.fuel_used += 1;
        if self.fuel_used > self.limits.fuel || self.fuel_used & 1023 == 0 {
            return self.burn_slow();
        }
        Ok(())
    }

    /// The rare part of [`Ctx::burn`]: out of fuel, or time to read the clock.
    #[cold]
    #[inline(never)]
    pub(crate) fn burn_slow(&mut self) -> Result<(), RunError> {
        if self.fuel_used > self.limits.fuel {
            return Err(RunError::new(
                ErrorKind::Limit,
                Span::default(),
                format!("the run used all its fuel ({} calls and loop iterations)", self.limits.fuel),
            ));
        }
        if self.fuel_used & 1023 == 0 && self.started.elapsed() > self.limits.wall_clock {
            return Err(RunError::new(
                ErrorKind::Limit,
                Span::default(),
                format!("the run took longer than its time limit of {:?}", self.limits.wall_clock),
            ));
        }
        Ok(())
    }

    /// Refuses values nested deeper than the limit (see [`crate::value::depth`]).
    fn check_depth(&self, depth: u32) -> Result<(), RunError> {
        if depth as usize > self.limits.max_value_depth {
            return Err(RunError::new(
                ErrorKind::Limit,
                Span::default(),
                format!(
                    "a value nested deeper than the limit of {} records, enum values and closures",
                    self.limits.max_value_depth
                ),
            ));
        }
        Ok(())
    }
}

impl Roots for Vm {
    /// Its stack, the functions its frames run (their captures), the lists it is building.
    fn visit_roots<'a>(&'a self, f: &mut dyn FnMut(Root<'a>)) {
        self.stack.iter().for_each(|v| f(Root::Value(v)));
        self.lists.iter().for_each(|xs| f(Root::Building(xs)));
        for frame in self.frames.items.get(..self.frames.len).unwrap_or_default() {
            if let Some(func) = &frame.func {
                f(Root::Func(func));
            }
        }
    }

    fn nested(&self) -> bool {
        self.nested
    }
}

impl Vm {
    /// A machine about to run `code` on `args`.
    pub fn start(program: &Compiled, code: CodeRef, args: Vec<Val>) -> Vm {
        let mut vm = Vm::default();
        vm.enter(program, code, None, args, OnReturn::Finish);
        vm
    }

    fn enter(
        &mut self,
        program: &Compiled,
        code: CodeRef,
        func: Option<Arc<Func>>,
        args: Vec<Val>,
        on_return: OnReturn,
    ) {
        let base = self.stack.len();
        self.stack.extend(args);
        self.enter_at(program.code(code).slots, code, func, base, on_return);
    }

    /// Enters `code`, which has `slots` slots, with its arguments already on the stack from
    /// `base` up.
    #[inline(always)]
    fn enter_at(&mut self, slots: u16, code: CodeRef, func: Option<Arc<Func>>, base: usize, on_return: OnReturn) {
        // Most bodies have slots beyond their parameters only for `let`s and loops.
        if self.stack.len() != base + slots as usize {
            self.fill_slots(base + slots as usize);
        }
        self.frames.push(Frame { code, ip: 0, base, func, on_return });
    }

    #[cold]
    fn fill_slots(&mut self, len: usize) {
        self.stack.resize_with(len, || Val::plain(Value::Unit));
    }

    /// Continues after a tool call with its result.
    pub fn resume(&mut self, result: Val) {
        self.stack.push(result);
    }

    /// Continues at a hole by calling its fill: `body` with the hole's scope as captures and
    /// its arguments. The fill runs with the program-counter label raised by `label` (what
    /// the model saw: a model that read untrusted text writes untrusted code), and its result
    /// carries that label, as a call of a labelled function would.
    pub fn enter_fill(&mut self, program: &Compiled, body: CodeRef, scope: Vec<Val>, args: Vec<Val>, label: &Label) {
        self.pc_stack.push(self.pc.clone());
        self.pc.join_mut(label);
        let func = Arc::new(Func::new(body, scope));
        self.enter(program, body, Some(func), args, OnReturn::PushJoinPc);
    }

    /// How many frames are running.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// Whether the frame with `depth` frames below it runs `code`. A fill entered where the
    /// machine was `depth` frames deep is still running exactly while this holds for its body:
    /// a fill's body is entered only at its hole.
    pub fn runs(&self, depth: usize, code: CodeRef) -> bool {
        depth < self.frames.len() && self.frames.items.get(depth).is_some_and(|frame| frame.code == code)
    }
}

/// Runs until the program ends, or stops at a tool call (for the run to have the boundary
/// admit it) or a hole.
pub fn exec(vm: &mut Vm, ctx: &mut Ctx) -> Result<Exit, RunError> {
    // One reference for the whole run of the loop: the code of every frame is borrowed from it.
    let program = ctx.program.clone();
    'frames: loop {
        let Some(frame) = vm.frames.last() else {
            return Err(type_error(Span::default(), "the machine has nothing to run"));
        };
        // A call switches these to the callee's in place (see `Op::Call`); everything else that
        // changes the frame goes round this loop.
        let mut code = program.code(frame.code);
        let mut base = frame.base;
        let mut ip = frame.ip;
        macro_rules! fail {
            ($e:expr) => {{
                let mut e: RunError = $e;
                if e.span == Span::default() {
                    e.span = code.spans[ip - 1];
                }
                return Err(e);
            }};
        }
        macro_rules! tri {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(e) => fail!(e),
                }
            };
        }
        macro_rules! pop {
            () => {
                match vm.stack.pop() {
                    Some(v) => v,
                    None => fail!(type_error(Span::default(), "the operand stack is empty")),
                }
            };
        }
        macro_rules! save_ip {
            () => {
                if let Some(f) = vm.frames.last_mut() {
                    f.ip = ip;
                }
            };
        }
        loop {
            let Some(op) = code.ops.get(ip) else {
                fail!(type_error(Span::default(), "ran past the end of the code"));
            };
            ip += 1;
            match op {
                Op::Push(v) => vm.stack.push(Val::plain(clone_value(v))),
                Op::Load(s) => {
                    let v = clone_val(&vm.stack[base + *s as usize]);
                    vm.stack.push(v);
                }
                Op::Take(s) => {
                    let v = std::mem::replace(&mut vm.stack[base + *s as usize], Val::plain(Value::Unit));
                    vm.stack.push(v);
                }
                Op::Store(s) => {
                    let v = pop!();
                    overwrite(&mut vm.stack[base + *s as usize], v);
                }
                Op::LoadCapture(i) => {
                    let v = vm.frames.last().and_then(|f| f.func.as_ref()).and_then(|f| f.captures.get(*i as usize));
                    match v {
                        Some(v) => {
                            let v = v.clone();
                            vm.stack.push(v);
                        }
                        None => fail!(type_error(Span::default(), "a capture that does not exist")),
                    }
                }
                Op::LoadFn(f) => match ctx.program.fns.get(*f as usize) {
                    Some(func) => vm.stack.push(Val::plain(Value::Func(func.clone()))),
                    None => fail!(type_error(Span::default(), "an unknown function")),
                },
                Op::LoadConst(k) => match ctx.consts.get(*k as usize).cloned() {
                    Some(ConstState::Done(v)) => vm.stack.push(v),
                    Some(ConstState::Computing) => {
                        let name = ctx.program.consts[*k as usize].name.clone();
                        fail!(RunError::new(
                            ErrorKind::Cycle,
                            Span::default(),
                            format!("the constant `{name}` depends on its own value")
                        ))
                    }
                    Some(ConstState::Unset) => {
                        ctx.consts[*k as usize] = ConstState::Computing;
                        let init = ctx.program.consts[*k as usize].init;
                        save_ip!();
                        let at = vm.stack.len();
                        tri!(enter_checked(vm, ctx, init, None, at, OnReturn::InitConst(*k)));
                        continue 'frames;
                    }
                    None => fail!(type_error(Span::default(), "an unknown constant")),
                },
                Op::Pop => {
                    pop!();
                }
                Op::Unary(op) => {
                    let v = pop!();
                    let value = match (op, &v.value) {
                        (UnOp::Neg, Value::Int(i)) => Value::Int(tri!(i.checked_neg().ok_or_else(overflow))),
                        (UnOp::Neg, Value::Float(x)) => Value::Float(-x),
                        // Exact: the range of a Decimal is symmetric.
                        (UnOp::Neg, Value::Decimal(x)) => Value::decimal(-**x),
                        (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
                        _ => fail!(type_error(Span::default(), format!("cannot apply `{op:?}` to {}", v.value.kind()))),
                    };
                    vm.stack.push(Val { value, label: v.label });
                }
                Op::Binary(op) => {
                    // Integers in place: the result overwrites the left operand and takes the
                    // join of both labels, as in `binary`, which handles everything else
                    // (errors included).
                    if let [.., a, b] = &mut vm.stack[..]
                        && let (Value::Int(x), Value::Int(y)) = (&a.value, &b.value)
                        && let Some(value) = int_binary(*op, *x, *y)
                    {
                        let label = a.label.join(&b.label);
                        overwrite(a, Val { value, label });
                        discard(vm.stack.pop());
                        continue;
                    }
                    let b = pop!();
                    let a = pop!();
                    let held = text_bytes(&a) + text_bytes(&b);
                    let v = tri!(binary(*op, a, b, &mut Measured::new(vm, ctx, held)));
                    vm.stack.push(v);
                }
                Op::AddLiteral { text, left } => {
                    if let Some(Val { value: Value::Str(s), .. }) = vm.stack.last() {
                        // As `binary` joins two strings; the literal's label is bottom, so the
                        // result keeps the other operand's.
                        let len = s.len() + text.len();
                        tri!(builtins::check_string_len(len, ctx));
                        // As `binary` counts it: appended in place, only the literal's length.
                        let grows = if s.is_unique() && !*left { text.len() } else { len };
                        tri!(allocate(vm, ctx, 0, grows as u64));
                        let Some(Val { value: Value::Str(s), .. }) = vm.stack.last_mut() else { continue };
                        match (s.is_unique(), *left) {
                            (true, true) => s.prepend(text),
                            (true, false) => s.append(text),
                            (false, _) => {
                                let (a, b) = if *left { (&**text, &**s) } else { (&**s, &**text) };
                                let mut out = String::with_capacity(len);
                                out.push_str(a);
                                out.push_str(b);
                                *s = out.into();
                            }
                        }
                        continue;
                    }
                    // Anything else (an error) as `binary` has it.
                    let other = pop!();
                    let literal = Val::plain(Value::Str(text.clone()));
                    let (a, b) = if *left { (literal, other) } else { (other, literal) };
                    let held = text_bytes(&a) + text_bytes(&b);
                    let v = tri!(binary(BinOp::Add, a, b, &mut Measured::new(vm, ctx, held)));
                    vm.stack.push(v);
                }
                // The commonest fused forms, with the operands' kinds known: a slot and a literal,
                // the top of the stack and a literal.
                Op::BinaryWith { op, lhs: Operand::Slot(s), rhs: Operand::Int(k) } => {
                    if let Some(Val { value: Value::Int(x), label }) = vm.stack.get(base + *s as usize)
                        && let Some(value) = int_binary(*op, *x, *k)
                    {
                        let v = Val { value, label: label.clone() };
                        vm.stack.push(v);
                        continue;
                    }
                    let v = tri!(binary_with(vm, base, *op, Operand::Slot(*s), Operand::Int(*k), ctx));
                    vm.stack.push(v);
                }
                Op::BinaryWith { op, lhs: Operand::Top, rhs: Operand::Int(k) } => {
                    if let Some(Val { value: top @ Value::Int(_), .. }) = vm.stack.last_mut()
                        && let Value::Int(x) = *top
                        && let Some(value) = int_binary(*op, x, *k)
                    {
                        // An integer overwritten in place; the label stays.
                        *top = value;
                        continue;
                    }
                    let v = tri!(binary_with(vm, base, *op, Operand::Top, Operand::Int(*k), ctx));
                    vm.stack.push(v);
                }
                Op::CompareBranch { op, lhs: Operand::Slot(s), rhs: Operand::Int(k), target } => {
                    if let Some(Val { value: Value::Int(x), label }) = vm.stack.get(base + *s as usize)
                        && let Some(b) = int_compare(*op, *x, *k)
                    {
                        vm.pc_stack.push(vm.pc.clone());
                        vm.pc.join_mut(label);
                        if !b {
                            ip = *target as usize;
                        }
                        continue;
                    }
                    if !tri!(compare_branch(vm, ctx, base, *op, Operand::Slot(*s), Operand::Int(*k))) {
                        ip = *target as usize;
                    }
                }
                Op::BinaryWith { op, lhs, rhs } => {
                    if let Some((value, label)) = int_with(&vm.stack, base, *op, *lhs, *rhs) {
                        // The result replaces the operands on the stack, if any.
                        let v = Val { value, label };
                        match tops(*lhs, *rhs) {
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
                        continue;
                    }
                    let v = tri!(binary_with(vm, base, *op, *lhs, *rhs, ctx));
                    vm.stack.push(v);
                }
                Op::CompareBranch { op, lhs, rhs, target } => {
                    if let Some((x, y, la, lb)) = int_operands(&vm.stack, base, *lhs, *rhs)
                        && let Some(b) = int_compare(*op, x, y)
                    {
                        let label = join_labels(la, lb);
                        for _ in 0..tops(*lhs, *rhs) {
                            discard(vm.stack.pop());
                        }
                        vm.pc_stack.push(vm.pc.clone());
                        vm.pc.join_mut(&label);
                        if !b {
                            ip = *target as usize;
                        }
                        continue;
                    }
                    if !tri!(compare_branch(vm, ctx, base, *op, *lhs, *rhs)) {
                        ip = *target as usize;
                    }
                }
                Op::RaiseJumpIfFalse(t) => {
                    let v = pop!();
                    vm.pc_stack.push(vm.pc.clone());
                    vm.pc.join_mut(&v.label);
                    if !tri!(condition(&v.value)) {
                        ip = *t as usize;
                    }
                }
                Op::Jump(t) => ip = *t as usize,
                Op::Loop(t) => {
                    tri!(ctx.burn());
                    ip = *t as usize;
                }
                Op::JumpIfFalse(t) => {
                    let v = pop!();
                    if !tri!(condition(&v.value)) {
                        ip = *t as usize;
                    }
                }
                Op::RaisePc => {
                    let l = match vm.stack.last() {
                        Some(v) => v.label.clone(),
                        None => fail!(type_error(Span::default(), "the operand stack is empty")),
                    };
                    vm.pc_stack.push(vm.pc.clone());
                    vm.pc.join_mut(&l);
                }
                Op::RaisePcAgain => {
                    if let Some(v) = vm.stack.last() {
                        let l = v.label.clone();
                        vm.pc.join_mut(&l);
                    }
                }
                Op::JoinPc => tri!(join_pc(vm, ctx)),
                Op::MakeTuple(n) => {
                    let n = *n as usize;
                    tri!(allocate(vm, ctx, 0, n as u64 * SLOT_BYTES));
                    let items: Vec<Val> = vm.stack.drain(vm.stack.len() - n..).collect();
                    vm.stack.push(Val::plain(Value::Tuple(Arc::new(items))));
                }
                Op::MakeList(n) => {
                    let n = *n as usize;
                    tri!(builtins::check_list_len(n, &mut Measured::new(vm, ctx, 0)));
                    let items: Vec<Val> = vm.stack.drain(vm.stack.len() - n..).collect();
                    vm.stack.push(Val::plain(Value::List(Arc::new(items))));
                }
                Op::MakeRecord(layout) => {
                    let n = layout.names.len();
                    tri!(allocate(vm, ctx, 0, n as u64 * SLOT_BYTES));
                    let Some(record) = Record::from_top(layout.clone(), &mut vm.stack) else {
                        fail!(type_error(Span::default(), "the operand stack is empty"))
                    };
                    tri!(ctx.check_depth(record.depth));
                    vm.stack.push(Val::plain(Value::Record(Arc::new(record))));
                }
                Op::MakeVariant { enum_name, name, arity } => {
                    let payload: Vec<Val> = vm.stack.drain(vm.stack.len() - *arity as usize..).collect();
                    let v = Variant::new(enum_name.clone(), name.clone(), payload);
                    tri!(ctx.check_depth(v.depth));
                    vm.stack.push(Val::plain(Value::Variant(Arc::new(v))));
                }
                Op::Field(name) => {
                    let v = pop!();
                    let field = match &v.value {
                        Value::Record(r) => r.field_named(name).map(clone_val),
                        _ => None,
                    };
                    match field {
                        Some(f) => vm.stack.push(f.with_label(&v.label)),
                        None => fail!(type_error(Span::default(), format!("{} has no field `{name}`", v.value.kind()))),
                    }
                }
                Op::LoadField { slot, name } => {
                    let v = &vm.stack[base + *slot as usize];
                    let field = match &v.value {
                        Value::Record(r) => r.field_named(name).map(|f| clone_val(f).with_label(&v.label)),
                        _ => None,
                    };
                    match field {
                        Some(f) => vm.stack.push(f),
                        None => {
                            let kind = vm.stack[base + *slot as usize].value.kind();
                            fail!(type_error(Span::default(), format!("{kind} has no field `{name}`")))
                        }
                    }
                }
                Op::TupleField(i) => {
                    let v = pop!();
                    let item = match &v.value {
                        Value::Tuple(items) => items.get(*i as usize).cloned(),
                        _ => None,
                    };
                    match item {
                        Some(x) => vm.stack.push(x.with_label(&v.label)),
                        None => fail!(type_error(Span::default(), format!("{} has no component {i}", v.value.kind()))),
                    }
                }
                Op::Index => {
                    let i = pop!();
                    let xs = pop!();
                    let (Value::List(list), Value::Int(n)) = (&xs.value, &i.value) else {
                        fail!(type_error(
                            Span::default(),
                            format!("cannot index {} with {}", xs.value.kind(), i.value.kind())
                        ))
                    };
                    match usize::try_from(*n).ok().and_then(|k| list.get(k)) {
                        Some(x) => {
                            let label = xs.label.join(&i.label);
                            vm.stack.push(x.clone().with_label(&label));
                        }
                        None => fail!(RunError::new(
                            ErrorKind::OutOfRange,
                            Span::default(),
                            format!("index {n} is out of range for a list of length {}", list.len())
                        )),
                    }
                }
                Op::Call { func, argc } => {
                    // `enter_checked`, inline: the checks in the same order.
                    let Some(f) = program.fns.get(*func as usize).map(|f| f.code) else {
                        fail!(type_error(Span::default(), "an unknown function"))
                    };
                    save_ip!();
                    let len = vm.stack.len();
                    let Some(at) = len.checked_sub(*argc as usize) else {
                        fail!(type_error(Span::default(), "the operand stack is empty"))
                    };
                    tri!(ctx.burn());
                    if vm.frames.len() >= ctx.limits.max_call_depth {
                        fail!(depth_error(ctx));
                    }
                    let callee = program.code(f);
                    if len - at != callee.params as usize {
                        fail!(type_error(Span::default(), "a function called with the wrong number of arguments"));
                    }
                    vm.enter_at(callee.slots, f, None, at, OnReturn::Push);
                    // The frame just written is not read back: its code, base and ip are known.
                    (code, base, ip) = (callee, at, 0);
                    continue;
                }
                Op::CallValue(argc) => {
                    // The callee is below its arguments: take it out, the arguments move down.
                    let at = tri!(args_start(vm, *argc as usize + 1));
                    let callee = vm.stack.remove(at);
                    save_ip!();
                    tri!(call_value(vm, ctx, &callee, at));
                    continue 'frames;
                }
                Op::CallSlot { slot, argc } => {
                    let at = tri!(args_start(vm, *argc as usize));
                    let (f, func, label) = tri!(callee_parts(&vm.stack[base + *slot as usize]));
                    save_ip!();
                    // `call_func` and `enter_checked`, inline: the checks in the same order.
                    let callee = program.code(f);
                    if callee.params as usize != vm.stack.len() - at {
                        fail!(type_error(Span::default(), "a function called with the wrong number of arguments"));
                    }
                    let on_return = if label.is_bottom() {
                        OnReturn::Push
                    } else {
                        vm.pc_stack.push(vm.pc.clone());
                        vm.pc.join_mut(&label);
                        OnReturn::PushJoinPc
                    };
                    tri!(ctx.burn());
                    if vm.frames.len() >= ctx.limits.max_call_depth {
                        fail!(depth_error(ctx));
                    }
                    vm.enter_at(callee.slots, f, func, at, on_return);
                    (code, base, ip) = (callee, at, 0);
                    continue;
                }
                Op::Builtin { builtin, argc } => {
                    let at = vm.stack.len() - *argc as usize;
                    let (v, raise) = tri!(builtin_call(*builtin, at, code.spans[ip - 1], vm, ctx));
                    if let Some(l) = raise {
                        vm.pc.join_mut(&l);
                    }
                    vm.stack.truncate(at);
                    vm.stack.push(v);
                }
                Op::Method { name, argc, otherwise } => {
                    let at = vm.stack.len() - *argc as usize - 1;
                    if let Value::Capability(cap) = &vm.stack[at].value {
                        let cap = cap.clone();
                        tri!(recount_before_stopping(vm, ctx));
                        let args = vm.stack.split_off(at + 1);
                        vm.stack.truncate(at);
                        save_ip!();
                        let (tool, pc, span) = (name.clone(), vm.pc.clone(), code.spans[ip - 1]);
                        return Ok(Exit::Call(Call { capability: cap, tool, args, pc, span }));
                    }
                    match otherwise {
                        MethodTarget::Builtin(b) => {
                            if *b == Builtin::ToString
                                && let [Val { value: Value::Int(i), .. }] = vm.stack[at..]
                            {
                                // What `builtins::apply` does for an Int, in place: the text
                                // keeps the receiver's label, the only argument's.
                                vm.stack[at].value = tri!(builtins::int_text(i, &mut Measured::new(vm, ctx, 0)));
                                continue;
                            }
                            let (v, raise) = tri!(builtin_call(*b, at, code.spans[ip - 1], vm, ctx));
                            if let Some(l) = raise {
                                vm.pc.join_mut(&l);
                            }
                            vm.stack.truncate(at);
                            vm.stack.push(v);
                        }
                        MethodTarget::Func(func) => {
                            let Some(f) = program.fns.get(*func as usize).map(|f| f.code) else {
                                fail!(type_error(Span::default(), "an unknown function"))
                            };
                            save_ip!();
                            tri!(enter_checked(vm, ctx, f, None, at, OnReturn::Push));
                            continue 'frames;
                        }
                        MethodTarget::None => {
                            let kind = vm.stack[at].value.kind();
                            fail!(type_error(Span::default(), format!("{kind} has no method `{name}`")))
                        }
                    }
                }
                Op::Measure { name, argc } => {
                    let at = vm.stack.len() - *argc as usize;
                    let v = tri!(ctx.host.measure(name, &vm.stack[at..]));
                    vm.stack.truncate(at);
                    vm.stack.push(Val::plain(v));
                }
                Op::MakeClosure { code: body, captures } => {
                    let frame_func = vm.frames.last().and_then(|f| f.func.clone());
                    let mut values = Vec::with_capacity(captures.len());
                    for c in captures.iter() {
                        let v = match c {
                            CaptureFrom::Slot(s) => vm.stack.get(base + *s as usize).cloned(),
                            CaptureFrom::Capture(i) => {
                                frame_func.as_ref().and_then(|f| f.captures.get(*i as usize).cloned())
                            }
                        };
                        match v {
                            Some(v) => values.push(v),
                            None => fail!(type_error(Span::default(), "a capture that does not exist")),
                        }
                    }
                    tri!(allocate(vm, ctx, 0, values.len() as u64 * SLOT_BYTES));
                    let func = Func::new(*body, values);
                    tri!(ctx.check_depth(func.depth));
                    vm.stack.push(Val::plain(Value::Func(Arc::new(func))));
                }
                Op::Match { pat, fail: to } => {
                    let Some(v) = vm.stack.last().cloned() else {
                        fail!(type_error(Span::default(), "the operand stack is empty"))
                    };
                    let mut inspected = Label::bottom();
                    let ok = bind(pat, &v, &Label::bottom(), &mut vm.stack[base..], &mut inspected);
                    vm.pc.join_mut(&inspected);
                    if !ok {
                        ip = *to as usize;
                    }
                }
                Op::Destructure(pat) => {
                    let v = pop!();
                    let mut inspected = Label::bottom();
                    if !bind(pat, &v, &Label::bottom(), &mut vm.stack[base..], &mut inspected) {
                        fail!(type_error(Span::default(), "the value does not match the pattern"));
                    }
                }
                Op::IterNext { over, elem, exit, tick } => {
                    let next = match *over {
                        Over::List { list, index } => {
                            let (l, i) = (base + list as usize, base + index as usize);
                            let Value::Int(k) = vm.stack[i].value else {
                                fail!(type_error(Span::default(), "a loop index that is not an Int"))
                            };
                            let x = match &vm.stack[l].value {
                                Value::List(xs) => xs.get(k as usize).map(clone_val),
                                other => {
                                    fail!(type_error(Span::default(), format!("cannot loop over {}", other.kind())))
                                }
                            };
                            if x.is_some()
                                && let Value::Int(k) = &mut vm.stack[i].value
                            {
                                *k += 1;
                            }
                            x
                        }
                        Over::Range { next, end } => {
                            let (n, e) = (base + next as usize, base + end as usize);
                            let (Value::Int(k), Value::Int(end)) = (&vm.stack[n].value, &vm.stack[e].value) else {
                                fail!(type_error(Span::default(), "a range loop's bounds that are not Ints"))
                            };
                            let k = *k;
                            // `k < end`: `k + 1` does not overflow.
                            let more = k < *end;
                            if more && let Value::Int(n) = &mut vm.stack[n].value {
                                *n += 1;
                            }
                            more.then(|| Val::plain(Value::Int(k)))
                        }
                    };
                    match next {
                        Some(x) => {
                            overwrite(&mut vm.stack[base + *elem as usize], x);
                            if *tick {
                                tri!(ctx.burn());
                            }
                        }
                        None => ip = *exit as usize,
                    }
                }
                Op::RangeStart => {
                    let to = pop!();
                    let from = pop!();
                    let (Value::Int(a), Value::Int(b)) = (&from.value, &to.value) else {
                        fail!(builtins::type_error(Builtin::Range, &[from, to]))
                    };
                    let (a, b) = (*a, *b);
                    tri!(builtins::check_range_len(a, b, &mut Measured::new(vm, ctx, 0)));
                    vm.stack.push(Val::plain(Value::Int(a)));
                    vm.stack.push(Val { value: Value::Int(b.max(a)), label: from.label.join(&to.label) });
                }
                Op::ListStart { acc, sized_like } => {
                    overwrite(&mut vm.stack[base + *acc as usize], Val::plain(Value::Unit));
                    let len = match *sized_like {
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
                Op::ListPush => {
                    // Counted before the value leaves the stack, where a count finds it.
                    tri!(allocate(vm, ctx, 0, SLOT_BYTES));
                    let v = pop!();
                    let max = ctx.limits.max_list_len;
                    let Some(xs) = vm.lists.last_mut() else {
                        fail!(type_error(Span::default(), "no list is being built"))
                    };
                    if xs.len() >= max {
                        fail!(RunError::new(
                            ErrorKind::Limit,
                            Span::default(),
                            format!("a list grew over the limit of {max} elements")
                        ));
                    }
                    xs.push(v);
                }
                Op::ListPushIf { acc, elem } => {
                    let keep = pop!();
                    let Value::Bool(k) = keep.value else {
                        fail!(type_error(Span::default(), "a filter must return a Bool"))
                    };
                    vm.stack[base + *acc as usize].label.join_mut(&keep.label);
                    if k {
                        let x = std::mem::replace(&mut vm.stack[base + *elem as usize], Val::plain(Value::Unit));
                        let Some(xs) = vm.lists.last_mut() else {
                            fail!(type_error(Span::default(), "no list is being built"))
                        };
                        xs.push(x);
                    }
                }
                Op::ListEnd(acc) => {
                    let Some(items) = vm.lists.pop() else {
                        fail!(type_error(Span::default(), "no list is being built"))
                    };
                    let label = std::mem::take(&mut vm.stack[base + *acc as usize].label);
                    vm.stack.push(Val { value: Value::List(Arc::new(items)), label });
                }
                Op::Accumulate { acc, all } => {
                    let b = pop!();
                    let Value::Bool(b_val) = b.value else {
                        fail!(type_error(Span::default(), "a predicate must return a Bool"))
                    };
                    let slot = &mut vm.stack[base + *acc as usize];
                    slot.label.join_mut(&b.label);
                    if let Value::Bool(cur) = &mut slot.value {
                        *cur = if *all { *cur && b_val } else { *cur || b_val };
                    }
                }
                Op::Cast(shape) => {
                    let v = pop!();
                    let value = match (shape, &v.value) {
                        (Shape::Float, Value::Int(i)) => Value::Float(*i as f64),
                        (Shape::Float, Value::Float(x)) => Value::Float(*x),
                        (Shape::Int, Value::Int(i)) => Value::Int(*i),
                        (Shape::Decimal, Value::Int(i)) => Value::decimal(decimal::from_int(*i)),
                        (Shape::Decimal, Value::Decimal(x)) => Value::Decimal(x.clone()),
                        (Shape::Int, Value::Float(x)) => {
                            // `as` truncates toward zero; NaN, infinities and values outside
                            // `Int` are errors, not saturated.
                            let t = x.trunc();
                            if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&t) {
                                fail!(RunError::new(
                                    ErrorKind::Arithmetic,
                                    Span::default(),
                                    format!("{x} does not fit in an Int")
                                ));
                            }
                            Value::Int(t as i64)
                        }
                        _ => fail!(type_error(Span::default(), format!("cannot convert {} with `as`", v.value.kind()))),
                    };
                    vm.stack.push(Val { value, label: v.label });
                }
                Op::ToLabeledBegin => vm.pc_stack.push(vm.pc.clone()),
                Op::ToLabeledEnd => {
                    tri!(allocate(vm, ctx, 0, SLOT_BYTES));
                    let v = pop!();
                    let saved = match vm.pc_stack.pop() {
                        Some(l) => l,
                        None => fail!(type_error(Span::default(), "unbalanced program-counter labels")),
                    };
                    let inner_pc = std::mem::replace(&mut vm.pc, saved);
                    ctx.left_behind(&inner_pc);
                    vm.stack.push(Val::plain(Value::Labeled(Arc::new(v.with_label(&inner_pc)))));
                }
                Op::Return | Op::JoinPcReturn => {
                    if let Op::JoinPcReturn = op {
                        tri!(join_pc(vm, ctx));
                    }
                    let result = pop!();
                    let Some(frame) = vm.frames.pop_return() else {
                        fail!(type_error(Span::default(), "return without a frame"))
                    };
                    if let OnReturn::Push = frame.on_return
                        && vm.stack.len() > frame.base
                    {
                        // The result takes the frame's first slot: no push.
                        while vm.stack.len() > frame.base + 1 {
                            discard(vm.stack.pop());
                        }
                        if let Some(slot) = vm.stack.last_mut() {
                            overwrite(slot, result);
                        }
                        continue 'frames;
                    }
                    while vm.stack.len() > frame.base {
                        discard(vm.stack.pop());
                    }
                    match frame.on_return {
                        OnReturn::Push => vm.stack.push(result),
                        OnReturn::PushJoinPc => {
                            let saved = vm.pc_stack.pop().unwrap_or_default();
                            let pc = std::mem::replace(&mut vm.pc, saved);
                            ctx.left_behind(&pc);
                            vm.stack.push(result.with_label(&pc));
                        }
                        OnReturn::InitConst(k) => {
                            ctx.consts[k as usize] = ConstState::Done(result.clone());
                            vm.stack.push(result);
                        }
                        OnReturn::Finish => return Ok(Exit::Done(result)),
                    }
                    continue 'frames;
                }
                Op::Hole { site, argc } => {
                    let at = vm.stack.len().saturating_sub(*argc as usize);
                    let mut args = vm.stack.split_off(at);
                    if args.is_empty() {
                        fail!(type_error(Span::default(), "a hole without a task"));
                    }
                    let task = args.remove(0);
                    let Some(hole) = program.holes.get(*site as usize) else {
                        fail!(type_error(Span::default(), "an unknown hole"))
                    };
                    let func = vm.frames.last().and_then(|f| f.func.clone());
                    let mut scope = Vec::with_capacity(hole.names.len());
                    for (name, access) in &hole.names {
                        let v = match access {
                            Access::Slot(s) => vm.stack.get(base + *s as usize).cloned(),
                            Access::Capture(i) => func.as_ref().and_then(|f| f.captures.get(*i as usize).cloned()),
                        };
                        match v {
                            Some(v) => scope.push((name.clone(), v)),
                            None => fail!(type_error(Span::default(), format!("`{name}` is not in scope at the hole"))),
                        }
                    }
                    save_ip!();
                    return Ok(Exit::Hole(HoleRequest {
                        span: hole.span,
                        task,
                        args,
                        scope,
                        pc: vm.pc.clone(),
                        site: *site as usize,
                        again: None,
                    }));
                }
                Op::Fail(message) => fail!(type_error(Span::default(), message.to_string())),
            }
        }
    }
}

impl Ctx {
    /// Evaluates pure code (a predicate, a label annotation) on `args` to completion, on a
    /// machine of its own: what the boundary and the approval questions run policy code with.
    pub fn eval(&mut self, code: &CodeRef, args: Vec<Val>) -> Result<Val, RunError> {
        let mut vm = Vm { nested: true, ..Vm::default() };
        vm.enter(&self.program, *code, None, args, OnReturn::Finish);
        match exec(&mut vm, self)? {
            Exit::Done(v) => Ok(v),
            Exit::Call(c) => Err(RunError::new(ErrorKind::Type, c.span, "a refinement or label cannot call a tool")),
            Exit::Hole(h) => Err(RunError::new(ErrorKind::Type, h.span, "a refinement or label cannot hold a hole")),
        }
    }
}
