//! What a run still holds, for the memory limit. The limit bounds the memory a run holds, not
//! what it ever allocated: each allocation is counted as it is made, and when the count passes
//! the limit, what the run can still reach is counted instead and the count goes on from there
//! ([`allocate`]). A run that builds and drops ten thousand lists holds one at a time; one that
//! keeps them holds them all.
//!
//! What a run can reach: its machine's stack, the captures of the functions its frames run and
//! the lists it is building; its constants; its trace (the values of every call, kept for the
//! release cards); the records the host made; and what it holds outside the machine that runs
//! (the machines waiting at the holes of running fills, [`crate::ctx::Ctx::held`]). Each value
//! counts as its allocation was charged (a string its bytes, a list, tuple, record, closure or
//! enum value [`SLOT_BYTES`] a slot, a labeled box a slot), and a value shared by several is
//! counted once.

use std::collections::HashSet;
use std::sync::Arc;

use crate::builtins::{Budget, SLOT_BYTES};
use crate::ctx::{ConstState, Ctx};
use crate::error::RunError;
use crate::value::{Func, Val, Value};

/// A machine whose values can be counted.
pub(crate) trait Roots {
    /// Calls `f` on each place it keeps values.
    fn visit_roots<'a>(&'a self, f: &mut dyn FnMut(Root<'a>));

    /// Whether it evaluates a refinement or a label while the plan's machine waits: what the
    /// waiting machine holds cannot be counted from it, so its allocations are only added up.
    fn nested(&self) -> bool;
}

/// A place a machine keeps values.
pub(crate) enum Root<'a> {
    Value(&'a Val),
    /// A list being built, not yet a value.
    Building(&'a [Val]),
    /// A function a frame runs.
    Func(&'a Arc<Func>),
}

/// The run's budget while the machine makes something from its values: an allocation past the
/// memory limit counts again what the run can still reach ([`recount`]), adding what is
/// `in_flight` (what the operation holds that nothing reaches yet: its popped operands, what
/// a builtin has allocated so far).
pub(crate) struct Measured<'a> {
    vm: &'a dyn Roots,
    ctx: &'a mut Ctx,
    in_flight: u64,
}

impl<'a> Measured<'a> {
    pub(crate) fn new(vm: &'a dyn Roots, ctx: &'a mut Ctx, in_flight: u64) -> Measured<'a> {
        Measured { vm, ctx, in_flight }
    }
}

impl Budget for Measured<'_> {
    fn allocate(&mut self, bytes: u64) -> Result<(), RunError> {
        allocate(self.vm, self.ctx, self.in_flight, bytes)?;
        self.in_flight = self.in_flight.saturating_add(bytes);
        Ok(())
    }

    fn max_string_bytes(&self) -> usize {
        self.ctx.limits.max_string_bytes
    }

    fn max_list_len(&self) -> usize {
        self.ctx.limits.max_list_len
    }
}

/// The bytes a string operand holds (nothing for other values): an operand popped for an
/// operation is held by it, out of a count's reach.
pub(crate) fn text_bytes(v: &Val) -> u64 {
    match &v.value {
        Value::Str(s) => s.len() as u64,
        _ => 0,
    }
}

/// Counts `bytes` more of the memory the run holds. Past the limit, the run's machine counts
/// again what it can still reach (plus `in_flight`), and only if that is past the limit too is
/// it refused. A nested machine (a refinement evaluated while the plan waits) only adds up.
#[inline]
pub(crate) fn allocate(vm: &dyn Roots, ctx: &mut Ctx, in_flight: u64, bytes: u64) -> Result<(), RunError> {
    let used = ctx.memory_used.saturating_add(bytes);
    if used <= ctx.limits.max_memory_bytes || vm.nested() {
        return Budget::allocate(ctx, bytes);
    }
    recount(vm, ctx)?;
    ctx.memory_used = ctx.memory_used.saturating_add(in_flight);
    Budget::allocate(ctx, bytes)
}

/// Counts what the run can still reach as the memory it holds. The count costs the run a unit
/// of fuel for each value it looks at.
fn recount(vm: &dyn Roots, ctx: &mut Ctx) -> Result<(), RunError> {
    let mut walk = Walk::default();
    vm.visit_roots(&mut |root| walk.root(root));
    walk.context(ctx);
    let (bytes, visited) = (walk.bytes, walk.visited);
    ctx.memory_used = bytes;
    ctx.memory_counted = bytes;
    ctx.fuel_used = ctx.fuel_used.saturating_add(visited);
    if ctx.fuel_used > ctx.limits.fuel { ctx.burn_slow() } else { Ok(()) }
}

/// Before the machine stops at a call (whose boundary only adds up what it allocates): counts
/// again if much was allocated since the last count and the total is past half the limit, so
/// the boundary is not refused memory the run let go. Counting after each quarter of the
/// limit at most keeps the cost of counting in proportion to what the run allocates.
pub(crate) fn recount_before_stopping(vm: &dyn Roots, ctx: &mut Ctx) -> Result<(), RunError> {
    let limit = ctx.limits.max_memory_bytes;
    let since = ctx.memory_used.saturating_sub(ctx.memory_counted);
    if vm.nested() || ctx.memory_used <= limit / 2 || since <= limit / 4 {
        return Ok(());
    }
    recount(vm, ctx)
}

/// A count of what is reachable from the roots given to it.
#[derive(Default)]
pub(crate) struct Walk<'a> {
    /// The shared values counted already, by address.
    seen: HashSet<usize>,
    /// Values reached and not yet counted (a stack, so nesting costs no recursion).
    todo: Vec<&'a Val>,
    pub(crate) bytes: u64,
    /// How many values were looked at: what the count cost.
    pub(crate) visited: u64,
}

impl<'a> Walk<'a> {
    /// Counts `root` and everything it reaches.
    pub(crate) fn root(&mut self, root: Root<'a>) {
        match root {
            Root::Value(v) => self.todo.push(v),
            Root::Building(xs) => {
                self.bytes = self.bytes.saturating_add(slots(xs.len()));
                self.todo.extend(xs);
            }
            Root::Func(f) => {
                if self.seen.insert(Arc::as_ptr(f) as usize) {
                    self.bytes = self.bytes.saturating_add(slots(f.captures.len()));
                    self.todo.extend(&f.captures);
                }
            }
        }
        self.drain();
    }

    /// Counts what `ctx` holds besides the machine: constants, trace, received answers, and the
    /// values held for running fills.
    pub(crate) fn context(&mut self, ctx: &'a Ctx) {
        for c in &ctx.consts {
            if let ConstState::Done(v) = c {
                self.root(Root::Value(v));
            }
        }
        for event in &ctx.trace {
            for (_, v) in &event.values {
                self.root(Root::Value(v));
            }
        }
        for v in ctx.received.answers() {
            self.root(Root::Value(v));
        }
        for v in &ctx.held {
            self.root(Root::Value(v));
        }
    }

    fn drain(&mut self) {
        while let Some(v) = self.todo.pop() {
            self.visited += 1;
            let own = self.value_bytes(&v.value);
            self.bytes = self.bytes.saturating_add(own);
        }
    }

    /// The bytes `value` itself was charged, if it was not counted already; what it holds is
    /// queued.
    fn value_bytes(&mut self, value: &'a Value) -> u64 {
        let first = |seen: &mut HashSet<usize>, address: usize| seen.insert(address);
        match value {
            Value::Str(s) if first(&mut self.seen, s.addr()) => s.len() as u64,
            Value::Tuple(xs) | Value::List(xs) if first(&mut self.seen, Arc::as_ptr(xs) as usize) => {
                self.todo.extend(xs.iter());
                slots(xs.len())
            }
            Value::Record(r) if first(&mut self.seen, Arc::as_ptr(r) as usize) => {
                self.todo.extend(r.values());
                slots(r.values().len())
            }
            Value::Variant(v) if first(&mut self.seen, Arc::as_ptr(v) as usize) => {
                self.todo.extend(&v.payload);
                slots(v.payload.len())
            }
            Value::Func(f) if first(&mut self.seen, Arc::as_ptr(f) as usize) => {
                self.todo.extend(&f.captures);
                slots(f.captures.len())
            }
            Value::Labeled(inner) if first(&mut self.seen, Arc::as_ptr(inner) as usize) => {
                self.todo.push(inner);
                SLOT_BYTES
            }
            _ => 0,
        }
    }
}

fn slots(n: usize) -> u64 {
    (n as u64).saturating_mul(SLOT_BYTES)
}
