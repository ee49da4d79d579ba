//! The code of one function body while it is compiled: its ops and their spans, its slots and
//! the names in scope, what a closure captures, and up to where ops may be fused.

use cordon_syntax::Span;

use crate::code::{Access, Op, Slot};

/// The state of one function body being compiled.
pub(super) struct Body {
    pub(super) ops: Vec<Op>,
    pub(super) spans: Vec<Span>,
    pub(super) slots: u16,
    pub(super) scope: Vec<(String, Slot)>,
    /// For closures: what each capture is (by name) and where the enclosing body gets it.
    pub(super) captures: Vec<(String, Access)>,
    pub(super) is_closure: bool,
    /// The last position a jump may land on: ops before it cannot be fused with later ones
    /// (see [`Compiler::emit`]).
    pub(super) barrier: u32,
    /// A slot whose next read by name moves its value out (`Op::Take`) instead of copying it:
    /// a fold's accumulator that its body reads once (see `inline_call`).
    pub(super) take_once: Option<Slot>,
}

impl Body {
    pub(super) fn new(is_closure: bool) -> Body {
        Body {
            ops: Vec::new(),
            spans: Vec::new(),
            slots: 0,
            scope: Vec::new(),
            captures: Vec::new(),
            is_closure,
            barrier: 0,
            take_once: None,
        }
    }

    /// Whether the last `n` ops may be fused with the one being emitted: they exist and no
    /// jump lands after the first of them (every target is at most the current position).
    pub(super) fn fusable(&self, n: usize) -> bool {
        self.ops.len() >= n && self.barrier as usize <= self.ops.len() - n
    }

    /// Replaces the last `n` ops by `op`, which takes the span of the first of them.
    pub(super) fn fuse(&mut self, n: usize, op: Op) -> u32 {
        let at = self.ops.len() - n;
        self.ops.truncate(at);
        self.spans.truncate(at + 1);
        self.ops.push(op);
        at as u32
    }
}
