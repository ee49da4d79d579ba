//! The interpreter: a stack machine over compiled code, with its continuation as data (frames
//! and an operand stack on the heap), so that a tool call can stop it and a later `resume`
//! continue it, and so that no program can exhaust the host's own stack.
//!
//! Labels: every value carries one; operations join them; the program-counter label `pc` is
//! raised where control depends on a value (`RaisePc`) and restored where the paths join
//! (`JoinPc`), labelling the joined result with what it depended on.

use std::sync::Arc;

use cordon_syntax::{Builtin, Span};

use crate::builtins;
use crate::code::{Access, Code, Compiled, ConstId, FnId, MethodTarget, Op, Operand, Slot};
use crate::ctx::{ConstState, Ctx};
use crate::effect::HoleRequest;
use crate::error::{ErrorKind, RunError};
use crate::live::{Measured, Root, Roots, recount_before_stopping};
use crate::value::{CodeRef, Func, Str, Val, Value};
use cordon_label::Label;

mod branch;
mod ops;
mod stack;
mod values;

use ops::*;
pub use stack::Vm;
use stack::{Frame, OnReturn};
use values::empty_stack;

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
        args: impl IntoIterator<Item = Val>,
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
///
/// The loop's `match` is grouped by family, and calls each instruction's function with the
/// instruction's fields: the values computed (`values`), the conditional jumps and the
/// program-counter label (`branch`), and calls, returns and stops (below). The commonest
/// instructions of the stack and the locals, and the jumps, it does itself.
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
        // An error, placed at the instruction if it is placed nowhere.
        macro_rules! tri {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(e) => return Err(placed(e, code, ip)),
                }
            };
        }
        // Jumps to `$to` if `$jumps`, a conditional jump's function, says so.
        macro_rules! branch {
            ($jumps:expr, $to:expr) => {
                if tri!($jumps) {
                    ip = $to as usize;
                }
            };
        }
        loop {
            let Some(op) = code.ops.get(ip) else {
                return Err(placed(type_error(Span::default(), "ran past the end of the code"), code, ip));
            };
            ip += 1;
            match op {
                // The stack and the locals.
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
                    let Some(v) = vm.stack.pop() else { return Err(placed(empty_stack(), code, ip)) };
                    overwrite(&mut vm.stack[base + *s as usize], v);
                }
                Op::Pop => {
                    let Some(_) = vm.stack.pop() else { return Err(placed(empty_stack(), code, ip)) };
                }
                Op::LoadCapture(i) => tri!(load_capture(vm, *i)),
                Op::LoadFn(f) => tri!(load_fn(vm, ctx, *f)),
                // Arithmetic.
                Op::Unary(op) => tri!(values::unary(vm, *op)),
                Op::Binary(op) => tri!(values::binary_on_top(vm, ctx, *op)),
                Op::AddLiteral { text, left } => tri!(values::add_literal(vm, ctx, text, *left)),
                Op::BinaryWith { op, lhs: Operand::Slot(s), rhs: Operand::Int(k) } => {
                    tri!(values::slot_with_int(vm, ctx, base, *op, *s, *k))
                }
                Op::BinaryWith { op, lhs: Operand::Top, rhs: Operand::Int(k) } => {
                    tri!(values::top_with_int(vm, ctx, base, *op, *k))
                }
                Op::BinaryWith { op, lhs, rhs } => tri!(values::binary_with_operands(vm, ctx, base, *op, *lhs, *rhs)),
                Op::Cast(shape) => tri!(values::cast(vm, shape)),
                // Jumps.
                Op::Jump(t) => ip = *t as usize,
                Op::Loop(t) => {
                    tri!(ctx.burn());
                    ip = *t as usize;
                }
                Op::CompareBranch { op, lhs: Operand::Slot(s), rhs: Operand::Int(k), target } => {
                    branch!(branch::compare_slot_int(vm, ctx, base, *op, *s, *k), *target)
                }
                Op::CompareBranch { op, lhs, rhs, target } => {
                    branch!(branch::compare(vm, ctx, base, *op, *lhs, *rhs), *target)
                }
                Op::RaiseJumpIfFalse(t) => branch!(branch::raise_jump_if_false(vm), *t),
                Op::JumpIfFalse(t) => branch!(branch::jump_if_false(vm), *t),
                Op::IterNext { over, elem, exit, tick } => {
                    branch!(branch::iter_next(vm, ctx, base, over, *elem, *tick), *exit)
                }
                Op::Match { pat, fail: to } => branch!(branch::match_pattern(vm, base, pat), *to),
                // The program-counter label.
                Op::RaisePc => tri!(branch::raise_pc(vm)),
                Op::RaisePcAgain => branch::raise_pc_again(vm),
                Op::JoinPc => tri!(join_pc(vm, ctx)),
                Op::ToLabeledBegin => vm.pc_stack.push(vm.pc.clone()),
                Op::ToLabeledEnd => tri!(branch::to_labeled_end(vm, ctx)),
                // Building values.
                Op::MakeTuple(n) => tri!(values::make_tuple(vm, ctx, *n)),
                Op::MakeList(n) => tri!(values::make_list(vm, ctx, *n)),
                Op::MakeRecord(layout) => tri!(values::make_record(vm, ctx, layout)),
                Op::MakeVariant { enum_name, name, arity } => {
                    tri!(values::make_variant(vm, ctx, enum_name, name, *arity))
                }
                Op::MakeClosure { code: body, captures } => tri!(values::make_closure(vm, ctx, base, *body, captures)),
                // Taking values apart.
                Op::Field(name) => tri!(values::field(vm, name)),
                Op::LoadField { slot, name } => tri!(values::load_field(vm, base, *slot, name)),
                Op::TupleField(i) => tri!(values::tuple_field(vm, *i)),
                Op::Index => tri!(values::index(vm)),
                Op::Destructure(pat) => tri!(values::destructure(vm, base, pat)),
                // What the loops of higher-order builtins build.
                Op::RangeStart => tri!(values::range_start(vm, ctx)),
                Op::ListStart { acc, sized_like } => values::list_start(vm, base, *acc, *sized_like),
                Op::ListPush => tri!(values::list_push(vm, ctx)),
                Op::ListPushIf { acc, elem } => tri!(values::list_push_if(vm, base, *acc, *elem)),
                Op::ListEnd(acc) => tri!(values::list_end(vm, base, *acc)),
                Op::Accumulate { acc, all } => tri!(values::accumulate(vm, base, *acc, *all)),
                // Calls and returns: into the callee in place, its frame just written not read
                // back (its code, base and ip are known), or round the outer loop.
                Op::Call { func, argc } => (code, base, ip) = tri!(call(vm, ctx, &program, ip, *func, *argc)),
                Op::CallSlot { slot, argc } => {
                    (code, base, ip) = tri!(call_slot(vm, ctx, &program, base, ip, *slot, *argc))
                }
                Op::CallValue(argc) => {
                    tri!(call_value_below(vm, ctx, ip, *argc));
                    continue 'frames;
                }
                Op::Builtin { builtin, argc } => tri!(call_builtin(vm, ctx, code.spans[ip - 1], *builtin, *argc)),
                Op::Method { name, argc, otherwise } => match tri!(method(vm, ctx, code, ip, name, *argc, otherwise)) {
                    Then::Next => {}
                    Then::Frames => continue 'frames,
                    Then::Stop(call) => return Ok(Exit::Call(call)),
                },
                Op::Measure { name, argc } => tri!(measure(vm, ctx, name, *argc)),
                Op::Return => match return_from(vm, ctx, false) {
                    Ok(()) => continue 'frames,
                    Err(finished) => return finished.exit(code, ip),
                },
                Op::JoinPcReturn => match return_from(vm, ctx, true) {
                    Ok(()) => continue 'frames,
                    Err(finished) => return finished.exit(code, ip),
                },
                Op::LoadConst(k) => {
                    if tri!(load_const(vm, ctx, ip, *k)) {
                        continue 'frames;
                    }
                }
                // Stops.
                Op::Hole { site, argc } => return Ok(Exit::Hole(tri!(hole(vm, &program, base, ip, *site, *argc)))),
                Op::Fail(message) => return Err(placed(type_error(Span::default(), message.to_string()), code, ip)),
            }
        }
    }
}

/// `e`, placed at the instruction before `ip` in `code` if it is placed nowhere.
#[cold]
#[inline(never)]
fn placed(mut e: RunError, code: &Code, ip: usize) -> RunError {
    if e.span == Span::default() {
        e.span = code.spans[ip - 1];
    }
    e
}

impl Vm {
    /// Saves `ip` in the innermost frame, before the loop leaves it.
    #[inline(always)]
    fn save_ip(&mut self, ip: usize) {
        if let Some(f) = self.frames.last_mut() {
            f.ip = ip;
        }
    }
}

// The stack and the locals, beyond the commonest.

/// `LoadCapture`: capture `i` of the function the frame runs.
#[inline(always)]
fn load_capture(vm: &mut Vm, i: u16) -> Result<(), RunError> {
    let v = vm.frames.last().and_then(|f| f.func.as_ref()).and_then(|f| f.captures.get(i as usize));
    match v {
        Some(v) => {
            let v = v.clone();
            vm.stack.push(v);
            Ok(())
        }
        None => Err(type_error(Span::default(), "a capture that does not exist")),
    }
}

/// `LoadFn`: function `f` of the program, as a value.
#[inline(always)]
fn load_fn(vm: &mut Vm, ctx: &Ctx, f: FnId) -> Result<(), RunError> {
    match ctx.program.fns.get(f as usize) {
        Some(func) => {
            vm.stack.push(Val::plain(Value::Func(func.clone())));
            Ok(())
        }
        None => Err(type_error(Span::default(), "an unknown function")),
    }
}

/// `LoadConst`: the constant's value, or, the first time, a frame that computes it (then
/// `true`: the loop goes on in that frame).
#[inline(always)]
fn load_const(vm: &mut Vm, ctx: &mut Ctx, ip: usize, k: ConstId) -> Result<bool, RunError> {
    match ctx.consts.get(k as usize).cloned() {
        Some(ConstState::Done(v)) => {
            vm.stack.push(v);
            Ok(false)
        }
        Some(ConstState::Computing) => {
            let name = ctx.program.consts[k as usize].name.clone();
            Err(RunError::new(
                ErrorKind::Cycle,
                Span::default(),
                format!("the constant `{name}` depends on its own value"),
            ))
        }
        Some(ConstState::Unset) => {
            ctx.consts[k as usize] = ConstState::Computing;
            let init = ctx.program.consts[k as usize].init;
            vm.save_ip(ip);
            let at = vm.stack.len();
            enter_checked(vm, ctx, init, None, at, OnReturn::InitConst(k))?;
            Ok(true)
        }
        None => Err(type_error(Span::default(), "an unknown constant")),
    }
}

// Calls and returns. `ip` is the caller's next instruction, saved in its frame before the loop
// leaves it; a call the loop goes on into in place returns the callee's code and base, and ip 0.

/// `Call`: `enter_checked`, inline, with the checks in the same order.
#[inline(always)]
fn call<'p>(
    vm: &mut Vm,
    ctx: &mut Ctx,
    program: &'p Compiled,
    ip: usize,
    func: FnId,
    argc: u16,
) -> Result<(&'p Code, usize, usize), RunError> {
    let Some(f) = program.fns.get(func as usize).map(|f| f.code) else {
        return Err(type_error(Span::default(), "an unknown function"));
    };
    vm.save_ip(ip);
    let len = vm.stack.len();
    let Some(at) = len.checked_sub(argc as usize) else {
        return Err(type_error(Span::default(), "the operand stack is empty"));
    };
    ctx.burn()?;
    if vm.frames.len() >= ctx.limits.max_call_depth {
        return Err(depth_error(ctx));
    }
    let callee = program.code(f);
    if len - at != callee.params as usize {
        return Err(type_error(Span::default(), "a function called with the wrong number of arguments"));
    }
    vm.enter_at(callee.slots, f, None, at, OnReturn::Push);
    Ok((callee, at, 0))
}

/// `CallSlot`: the function in `slot` called; `call_func` and `enter_checked`, inline, with the
/// checks in the same order.
#[inline(always)]
fn call_slot<'p>(
    vm: &mut Vm,
    ctx: &mut Ctx,
    program: &'p Compiled,
    base: usize,
    ip: usize,
    slot: Slot,
    argc: u16,
) -> Result<(&'p Code, usize, usize), RunError> {
    let at = args_start(vm, argc as usize)?;
    let (f, func, label) = callee_parts(&vm.stack[base + slot as usize])?;
    vm.save_ip(ip);
    let callee = program.code(f);
    if callee.params as usize != vm.stack.len() - at {
        return Err(type_error(Span::default(), "a function called with the wrong number of arguments"));
    }
    let on_return = if label.is_bottom() {
        OnReturn::Push
    } else {
        vm.pc_stack.push(vm.pc.clone());
        vm.pc.join_mut(&label);
        OnReturn::PushJoinPc
    };
    ctx.burn()?;
    if vm.frames.len() >= ctx.limits.max_call_depth {
        return Err(depth_error(ctx));
    }
    vm.enter_at(callee.slots, f, func, at, on_return);
    Ok((callee, at, 0))
}

/// `CallValue`: the callee is below its arguments; it is taken out, and the arguments move
/// down.
#[inline(always)]
fn call_value_below(vm: &mut Vm, ctx: &mut Ctx, ip: usize, argc: u16) -> Result<(), RunError> {
    let at = args_start(vm, argc as usize + 1)?;
    let callee = vm.stack.remove(at);
    vm.save_ip(ip);
    call_value(vm, ctx, &callee, at)
}

/// `Builtin`, at `span`, on the top `argc` values.
#[inline(always)]
fn call_builtin(vm: &mut Vm, ctx: &mut Ctx, span: Span, builtin: Builtin, argc: u16) -> Result<(), RunError> {
    let at = vm.stack.len() - argc as usize;
    let (v, raise) = builtin_call(builtin, at, span, vm, ctx)?;
    if let Some(l) = raise {
        vm.pc.join_mut(&l);
    }
    vm.stack.truncate(at);
    vm.stack.push(v);
    Ok(())
}

/// Where the loop goes after a `Method`.
enum Then {
    /// On with the frame's next instruction.
    Next,
    /// To the innermost frame, read again.
    Frames,
    /// Out of the machine, for the tool call.
    Stop(Call),
}

/// `Method`: a tool call if the receiver is a capability (the machine stops for the run to
/// have the boundary admit it), else what `otherwise` names, on the receiver and the arguments.
#[inline(always)]
fn method(
    vm: &mut Vm,
    ctx: &mut Ctx,
    code: &Code,
    ip: usize,
    name: &Arc<str>,
    argc: u16,
    otherwise: &MethodTarget,
) -> Result<Then, RunError> {
    let at = vm.stack.len() - argc as usize - 1;
    if let Value::Capability(cap) = &vm.stack[at].value {
        let cap = cap.clone();
        recount_before_stopping(vm, ctx)?;
        let args = vm.stack.split_off(at + 1);
        vm.stack.truncate(at);
        vm.save_ip(ip);
        let (tool, pc, span) = (name.clone(), vm.pc.clone(), code.spans[ip - 1]);
        return Ok(Then::Stop(Call { capability: cap, tool, args, pc, span }));
    }
    match otherwise {
        MethodTarget::Builtin(b) => {
            if *b == Builtin::ToString
                && let [Val { value: Value::Int(i), .. }] = vm.stack[at..]
            {
                // What `builtins::apply` does for an Int, in place: the text keeps the
                // receiver's label, the only argument's. The Int it replaces is let go inline.
                let text = builtins::int_text(i, &mut Measured::new(vm, ctx, 0))?;
                set_scalar_free(std::mem::replace(&mut vm.stack[at].value, text));
                return Ok(Then::Next);
            }
            let (v, raise) = builtin_call(*b, at, code.spans[ip - 1], vm, ctx)?;
            if let Some(l) = raise {
                vm.pc.join_mut(&l);
            }
            vm.stack.truncate(at);
            vm.stack.push(v);
            Ok(Then::Next)
        }
        MethodTarget::Func(func) => {
            let Some(f) = ctx.program.fns.get(*func as usize).map(|f| f.code) else {
                return Err(type_error(Span::default(), "an unknown function"));
            };
            vm.save_ip(ip);
            enter_checked(vm, ctx, f, None, at, OnReturn::Push)?;
            Ok(Then::Frames)
        }
        MethodTarget::None => {
            let kind = vm.stack[at].value.kind();
            Err(type_error(Span::default(), format!("{kind} has no method `{name}`")))
        }
    }
}

/// `Measure`: the host's value for a measure application (in refinement predicates).
#[inline]
fn measure(vm: &mut Vm, ctx: &mut Ctx, name: &str, argc: u16) -> Result<(), RunError> {
    let at = vm.stack.len() - argc as usize;
    let v = ctx.host.measure(name, &vm.stack[at..])?;
    vm.stack.truncate(at);
    vm.stack.push(Val::plain(v));
    Ok(())
}

/// How a `Return` ends the loop rather than going on in the caller's frame: the run finished,
/// with its result, or an error. (One test on the way back to the caller.)
enum Finished {
    Done(Val),
    Error(RunError),
}

impl From<RunError> for Finished {
    fn from(e: RunError) -> Finished {
        Finished::Error(e)
    }
}

impl Finished {
    /// What the machine stops with; an error placed as the loop places it.
    #[cold]
    fn exit(self, code: &Code, ip: usize) -> Result<Exit, RunError> {
        match self {
            Finished::Done(result) => Ok(Exit::Done(result)),
            Finished::Error(e) => Err(placed(e, code, ip)),
        }
    }
}

/// `Return`, after joining the program-counter label if `join` (`JoinPcReturn`): pops the
/// frame and does with the result what the frame's caller asked.
#[inline(always)]
fn return_from(vm: &mut Vm, ctx: &mut Ctx, join: bool) -> Result<(), Finished> {
    if join {
        join_pc(vm, ctx)?;
    }
    let Some(result) = vm.stack.pop() else { return Err(empty_stack().into()) };
    let Some(frame) = vm.frames.pop_return() else {
        return Err(type_error(Span::default(), "return without a frame").into());
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
        return Ok(());
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
        OnReturn::Finish => return Err(Finished::Done(result)),
    }
    Ok(())
}

// Stops.

/// `Hole`: what the machine stops with to ask for a fill: the task and the arguments (off the
/// stack), and the names in scope at the hole.
fn hole(
    vm: &mut Vm,
    program: &Compiled,
    base: usize,
    ip: usize,
    site: u32,
    argc: u16,
) -> Result<HoleRequest, RunError> {
    let at = vm.stack.len().saturating_sub(argc as usize);
    let mut args = vm.stack.split_off(at);
    if args.is_empty() {
        return Err(type_error(Span::default(), "a hole without a task"));
    }
    let task = args.remove(0);
    let Some(hole) = program.holes.get(site as usize) else {
        return Err(type_error(Span::default(), "an unknown hole"));
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
            None => return Err(type_error(Span::default(), format!("`{name}` is not in scope at the hole"))),
        }
    }
    vm.save_ip(ip);
    Ok(HoleRequest { span: hole.span, task, args, scope, pc: vm.pc.clone(), site: site as usize, again: None })
}

impl Ctx {
    /// Evaluates pure code (a predicate, a label annotation) on `args` to completion, on a
    /// machine of its own (the context's spare one, empty): what the boundary and the approval
    /// questions run policy code with.
    pub fn eval(&mut self, code: &CodeRef, args: impl IntoIterator<Item = Val>) -> Result<Val, RunError> {
        // The spare machine, or a new one if an evaluation already holds it.
        let mut vm = self.spare.take().unwrap_or_else(|| Vm { nested: true, ..Vm::default() });
        vm.enter(&self.program, *code, None, args, OnReturn::Finish);
        let exit = exec(&mut vm, self);
        vm.empty();
        self.spare = Some(vm);
        match exit? {
            Exit::Done(v) => Ok(v),
            Exit::Call(c) => Err(RunError::new(ErrorKind::Type, c.span, "a refinement or label cannot call a tool")),
            Exit::Hole(h) => Err(RunError::new(ErrorKind::Type, h.span, "a refinement or label cannot hold a hole")),
        }
    }
}
