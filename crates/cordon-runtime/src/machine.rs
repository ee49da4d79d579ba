//! The interpreter: a stack machine over compiled code, with its continuation as data (frames
//! and an operand stack on the heap), so that a tool call can stop it and a later `resume`
//! continue it, and so that no program can exhaust the host's own stack.
//!
//! Labels: every value carries one; operations join them; the program-counter label `pc` is
//! raised where control depends on a value (`RaisePc`) and restored where the paths join
//! (`JoinPc`), labelling the joined result with what it depended on.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use cordon_syntax::ast::{BinOp, UnOp};
use cordon_syntax::{Builtin, LabelFn, Span};

use crate::builtins::{self, Budget, SLOT_BYTES, deep_label, equal, overflow};
use crate::code::{Access, CaptureFrom, Compiled, ConstId, MethodTarget, Op, Operand, Over, Pat};
use crate::ctx::{ConstState, Ctx};
use crate::decimal;
use crate::effect::HoleRequest;
use crate::error::{ErrorKind, RunError};
use crate::live::{Measured, Root, Roots, allocate, recount_before_stopping, text_bytes};
use crate::shape::Shape;
use crate::time;
use crate::value::{CodeRef, Func, Record, Str, Val, Value, Variant};
use cordon_label::{Label, Source};

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
enum OnReturn {
    Push,
    /// The callee was a labelled function value: restore the saved `pc`, label the result.
    PushJoinPc,
    InitConst(ConstId),
    Finish,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Frame {
    code: CodeRef,
    ip: usize,
    base: usize,
    func: Option<Arc<Func>>,
    on_return: OnReturn,
}

/// What a return needs of the frame it pops (read in place: copying the whole frame out and
/// reading it back stalls).
struct Popped {
    base: usize,
    on_return: OnReturn,
}

/// The call stack. Popped frames' places are kept and written over by the next call, field by
/// field where the frame is made: `Vec::push` of a frame is an out-of-line call that reads the
/// frame back from memory just written, which stalls every call.
#[derive(Clone, Debug, Default)]
struct Frames {
    /// The frames, innermost at `len - 1`; those from `len` on are spent.
    items: Vec<Frame>,
    len: usize,
}

impl Frames {
    #[inline(always)]
    fn push(&mut self, frame: Frame) {
        match self.items.get_mut(self.len) {
            Some(place) => *place = frame,
            None => self.items.push(frame),
        }
        self.len += 1;
    }

    /// Pops the innermost frame; what a return needs of it. The frame's place keeps the
    /// rest, except its function, which is let go.
    #[inline(always)]
    fn pop_return(&mut self) -> Option<Popped> {
        self.len = self.len.checked_sub(1)?;
        let frame = self.items.get_mut(self.len)?;
        frame.func = None;
        Some(Popped { base: frame.base, on_return: frame.on_return })
    }

    #[inline(always)]
    fn last(&self) -> Option<&Frame> {
        self.items.get(..self.len)?.last()
    }

    #[inline(always)]
    fn last_mut(&mut self) -> Option<&mut Frame> {
        self.items.get_mut(..self.len)?.last_mut()
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }
}

/// Saved as the frames in use, innermost last.
impl Serialize for Frames {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.items.get(..self.len).unwrap_or_default().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Frames {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Frames, D::Error> {
        let items = Vec::<Frame>::deserialize(d)?;
        Ok(Frames { len: items.len(), items })
    }
}

/// The saved program-counter labels, innermost last. In most programs most of them are the
/// bottom label (a branch taken while `pc` is bottom); those are counted, not stored, so that
/// saving and restoring one costs no push onto a `Vec`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct PcStack {
    /// The saved labels that are not bottom, each with how many bottoms were saved after it.
    labels: Vec<(Label, usize)>,
    /// How many bottoms were saved before the first of `labels`.
    bottoms: usize,
}

impl PcStack {
    #[inline(always)]
    fn push(&mut self, label: Label) {
        if !label.is_bottom() {
            self.labels.push((label, 0));
        } else if let Some((_, n)) = self.labels.last_mut() {
            *n += 1;
        } else {
            self.bottoms += 1;
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Label> {
        match self.labels.last_mut() {
            Some((_, n)) if *n > 0 => {
                *n -= 1;
                Some(Label::bottom())
            }
            Some(_) => self.labels.pop().map(|(l, _)| l),
            None if self.bottoms > 0 => {
                self.bottoms -= 1;
                Some(Label::bottom())
            }
            None => None,
        }
    }
}

/// The evaluation state of one run (or one predicate the boundary evaluates).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Vm {
    stack: Vec<Val>,
    frames: Frames,
    pub(crate) pc: Label,
    pc_stack: PcStack,
    /// The lists `map` and `filter` are building, innermost last: a call inside one's loop
    /// starts and ends its own before it returns.
    lists: Vec<Vec<Val>>,
    /// A machine that evaluates a refinement or a label while the plan's machine waits
    /// ([`Ctx::eval`]): what the waiting machine holds cannot be counted from here, so its
    /// allocations are only added up (see [`allocate`]).
    #[serde(default)]
    nested: bool,
}

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

fn type_error(span: Span, message: impl Into<String>) -> RunError {
    RunError::new(ErrorKind::Type, span, message)
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

/// `JoinPc`: labels the value on top with the program-counter label and restores the saved
/// one.
#[inline(always)]
fn join_pc(vm: &mut Vm, ctx: &mut Ctx) -> Result<(), RunError> {
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
fn clone_value(v: &Value) -> Value {
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
fn clone_val(v: &Val) -> Val {
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
fn call_value(vm: &mut Vm, ctx: &mut Ctx, callee: &Val, at: usize) -> Result<(), RunError> {
    let (code, func, label) = callee_parts(callee)?;
    call_func(vm, ctx, code, func, &label, at)
}

/// What calling a function value needs: its code, the function if it has captures (the frame
/// keeps it), and its label. Nothing else is cloned.
#[inline(always)]
fn callee_parts(callee: &Val) -> Result<(CodeRef, Option<Arc<Func>>, Label), RunError> {
    let Value::Func(f) = &callee.value else {
        return Err(type_error(Span::default(), format!("cannot call {}", callee.value.kind())));
    };
    let captures = if f.captures.is_empty() { None } else { Some(f.clone()) };
    Ok((f.code, captures, callee.label.clone()))
}

/// [`call_value`] on the parts [`callee_parts`] took.
#[inline(always)]
fn call_func(
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
fn args_start(vm: &Vm, n: usize) -> Result<usize, RunError> {
    vm.stack.len().checked_sub(n).ok_or_else(|| type_error(Span::default(), "the operand stack is empty"))
}

/// Enters `code` with the arguments on the stack from `at` up.
#[inline]
fn enter_checked(
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
fn depth_error(ctx: &Ctx) -> RunError {
    RunError::new(
        ErrorKind::Limit,
        Span::default(),
        format!("calls nested deeper than the limit of {}", ctx.limits.max_call_depth),
    )
}

/// Calls a first-order builtin on the stack's values from `at` up, at `span`; `unlabel` also
/// returns the label to raise `pc` by, which names the `unlabel` itself: a refusal later says
/// which one raised it.
fn builtin_call(b: Builtin, at: usize, span: Span, vm: &Vm, ctx: &mut Ctx) -> Result<(Val, Option<Label>), RunError> {
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
        _ => builtins::apply(b, args, &mut Measured::new(vm, ctx, 0)).map(|v| (v, None)),
    }
}

/// The number of a fused binary operation's operands that are on the stack.
#[inline]
fn tops(lhs: Operand, rhs: Operand) -> usize {
    // `matches!`, not `==`: the derived `PartialEq` compares the integer payloads too.
    usize::from(matches!(lhs, Operand::Top)) + usize::from(matches!(rhs, Operand::Top))
}

/// A fused binary operation (`Op::BinaryWith`) on integers, read where they are: its result
/// and label, or `None` for everything else (left to [`binary_with`]). The caller pops the
/// operands that are on the stack.
#[inline(always)]
fn int_with(stack: &[Val], base: usize, op: BinOp, lhs: Operand, rhs: Operand) -> Option<(Value, Label)> {
    let (x, y, la, lb) = int_operands(stack, base, lhs, rhs)?;
    let value = int_binary(op, x, y)?;
    Some((value, join_labels(la, lb)))
}

/// The integers a fused operation's operands hold, with the labels of those that are not
/// literals; `None` unless both are integers.
#[inline(always)]
fn int_operands(
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
fn join_labels(la: Option<&Label>, lb: Option<&Label>) -> Label {
    match (la, lb) {
        (Some(a), Some(b)) => a.join(b),
        (Some(l), None) | (None, Some(l)) => l.clone(),
        (None, None) => Label::bottom(),
    }
}

/// An integer comparison; `None` for the other operators.
#[inline(always)]
fn int_compare(op: BinOp, x: i64, y: i64) -> Option<bool> {
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
fn compare_branch(
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
fn condition(v: &Value) -> Result<bool, RunError> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => Err(type_error(Span::default(), format!("a condition must be a Bool, not {}", v.kind()))),
    }
}

/// A fused binary operation in general: pops the operands on the stack, reads the others, and
/// applies `binary`.
#[cold]
fn binary_with(
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
fn discard(v: Option<Val>) {
    if let Some(Val { value, label }) = v {
        drop(label);
        set_scalar_free(value);
    }
}

/// Drops `v`, inline when it is a scalar (see [`discard`]).
#[inline(always)]
fn set_scalar_free(v: Value) {
    match v {
        Value::Unit | Value::Bool(_) | Value::Int(_) | Value::Float(_) => std::mem::forget(v),
        other => drop(other),
    }
}

/// Overwrites a value in place, dropping the old one inline when it is a scalar.
#[inline(always)]
fn overwrite(slot: &mut Val, v: Val) {
    let Val { value, label } = std::mem::replace(slot, v);
    drop(label);
    set_scalar_free(value);
}

/// `binary` on two integers, when it succeeds: `None` leaves overflow, division by zero and
/// the operators integers do not take to `binary`.
#[inline]
fn int_binary(op: BinOp, x: i64, y: i64) -> Option<Value> {
    Some(match op {
        BinOp::Add => Value::Int(x.checked_add(y)?),
        BinOp::Sub => Value::Int(x.checked_sub(y)?),
        BinOp::Mul => Value::Int(x.checked_mul(y)?),
        BinOp::Div => Value::Int(x.checked_div(y)?),
        BinOp::Rem => Value::Int(x.checked_rem(y)?),
        BinOp::Eq => Value::Bool(x == y),
        BinOp::Ne => Value::Bool(x != y),
        BinOp::Lt => Value::Bool(x < y),
        BinOp::Le => Value::Bool(x <= y),
        BinOp::Gt => Value::Bool(x > y),
        BinOp::Ge => Value::Bool(x >= y),
        BinOp::And | BinOp::Or => return None,
    })
}

fn binary(op: BinOp, a: Val, b: Val, ctx: &mut dyn Budget) -> Result<Val, RunError> {
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
fn bind(pat: &Pat, v: &Val, outer: &Label, slots: &mut [Val], inspected: &mut Label) -> bool {
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
