//! The machine's state as data ([`Vm`]): its operand stack, its frames and what a return does,
//! the saved program-counter labels, and the lists being built.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::code::ConstId;
use crate::value::{CodeRef, Func, Val};
use cordon_label::Label;

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(super) enum OnReturn {
    Push,
    /// The callee was a labelled function value: restore the saved `pc`, label the result.
    PushJoinPc,
    InitConst(ConstId),
    Finish,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Frame {
    pub(super) code: CodeRef,
    pub(super) ip: usize,
    pub(super) base: usize,
    pub(super) func: Option<Arc<Func>>,
    pub(super) on_return: OnReturn,
}

/// What a return needs of the frame it pops (read in place: copying the whole frame out and
/// reading it back stalls).
pub(super) struct Popped {
    pub(super) base: usize,
    pub(super) on_return: OnReturn,
}

/// The call stack. Popped frames' places are kept and written over by the next call, field by
/// field where the frame is made: `Vec::push` of a frame is an out-of-line call that reads the
/// frame back from memory just written, which stalls every call.
#[derive(Clone, Debug, Default)]
pub(super) struct Frames {
    /// The frames, innermost at `len - 1`; those from `len` on are spent.
    pub(super) items: Vec<Frame>,
    pub(super) len: usize,
}

impl Frames {
    #[inline(always)]
    pub(super) fn push(&mut self, frame: Frame) {
        match self.items.get_mut(self.len) {
            Some(place) => *place = frame,
            None => self.items.push(frame),
        }
        self.len += 1;
    }

    /// Pops the innermost frame; what a return needs of it. The frame's place keeps the
    /// rest, except its function, which is let go.
    #[inline(always)]
    pub(super) fn pop_return(&mut self) -> Option<Popped> {
        self.len = self.len.checked_sub(1)?;
        let frame = self.items.get_mut(self.len)?;
        frame.func = None;
        Some(Popped { base: frame.base, on_return: frame.on_return })
    }

    #[inline(always)]
    pub(super) fn last(&self) -> Option<&Frame> {
        self.items.get(..self.len)?.last()
    }

    #[inline(always)]
    pub(super) fn last_mut(&mut self) -> Option<&mut Frame> {
        self.items.get_mut(..self.len)?.last_mut()
    }

    #[inline(always)]
    pub(super) fn len(&self) -> usize {
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
pub(super) struct PcStack {
    /// The saved labels that are not bottom, each with how many bottoms were saved after it.
    pub(super) labels: Vec<(Label, usize)>,
    /// How many bottoms were saved before the first of `labels`.
    pub(super) bottoms: usize,
}

impl PcStack {
    #[inline(always)]
    pub(super) fn push(&mut self, label: Label) {
        if !label.is_bottom() {
            self.labels.push((label, 0));
        } else if let Some((_, n)) = self.labels.last_mut() {
            *n += 1;
        } else {
            self.bottoms += 1;
        }
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<Label> {
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
    pub(super) stack: Vec<Val>,
    pub(super) frames: Frames,
    pub(crate) pc: Label,
    pub(super) pc_stack: PcStack,
    /// The lists `map` and `filter` are building, innermost last: a call inside one's loop
    /// starts and ends its own before it returns.
    pub(super) lists: Vec<Vec<Val>>,
    /// A machine that evaluates a refinement or a label while the plan's machine waits
    /// ([`Ctx::eval`]): what the waiting machine holds cannot be counted from here, so its
    /// allocations are only added up (see [`allocate`]).
    #[serde(default)]
    pub(super) nested: bool,
}

impl Vm {
    /// Drops everything the machine holds, keeping its allocations: as a new machine, of the
    /// same kind (nested or not), whatever it stopped at (done, or an error midway).
    pub(super) fn empty(&mut self) {
        self.stack.clear();
        self.frames.items.clear();
        self.frames.len = 0;
        self.pc = Label::bottom();
        self.pc_stack.labels.clear();
        self.pc_stack.bottoms = 0;
        self.lists.clear();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test may fail loudly
mod tests {
    use std::sync::Arc;

    use cordon_label::{DcLabel, Label, Source};
    use cordon_syntax::Span;

    use super::{Frame, OnReturn, Vm};
    use crate::value::{CodeId, Func, Val, Value};

    /// A machine emptied after an evaluation that stopped midway (frames deep, the pc raised and
    /// saved, a list half built) is a new machine again: nothing of that evaluation reaches
    /// the next one that reuses it.
    #[test]
    fn an_emptied_machine_is_a_new_one() {
        let secret = Label::new(DcLabel::secret("alice"), Source { what: "a secret".into(), span: Span::default() });
        let mut vm = Vm { nested: true, ..Vm::default() };
        vm.stack.push(Val { value: Value::Int(7), label: secret.clone() });
        for ip in 0..3 {
            let func = Some(Arc::new(Func::new(CodeId::new(0), vec![Val::plain(Value::Int(1))])));
            vm.frames.push(Frame { code: CodeId::new(0), ip, base: 0, func, on_return: OnReturn::Push });
        }
        vm.pc_stack.push(Label::bottom());
        vm.pc_stack.push(secret.clone());
        vm.pc = secret.clone();
        vm.lists.push(vec![Val { value: Value::Int(2), label: secret }]);
        vm.empty();
        let fresh = Vm { nested: true, ..Vm::default() };
        assert_eq!(serde_json::to_value(&vm).unwrap(), serde_json::to_value(&fresh).unwrap());
        assert!(vm.frames.items.is_empty() && vm.pc.is_bottom());
    }
}
