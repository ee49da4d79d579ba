//! What a run shares between its machine and the boundary: the program, the host's state,
//! limits and what has been spent, the trace. The machine runs on it and stops at each tool
//! call; the run then has the boundary admit the call, and the boundary evaluates policy code
//! (refinements, labels) on the same context with the machine's [`Ctx::eval`].

use std::sync::Arc;
use std::time::Instant;

use cordon_syntax::Span;
use serde::{Deserialize, Serialize};

use crate::builtins::Budget;
use crate::code::Compiled;
use crate::error::{ErrorKind, RunError};
use crate::host::HostState;
use crate::limits::Limits;
use crate::machine::Vm;
use crate::received::Received;
use crate::trace::TraceEntry;
use crate::value::{Str, Val};
use cordon_label::{Label, Release};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ConstState {
    Unset,
    Computing,
    Done(Val),
}

/// The state of one run besides its machine.
#[derive(Debug)]
pub struct Ctx {
    pub program: Arc<Compiled>,
    pub host: HostState,
    pub limits: Limits,
    pub user: Str,
    pub fuel_used: u64,
    /// The memory the run holds, over-approximated: what it could reach at the last count
    /// (`crate::live`), and everything allocated since.
    pub memory_used: u64,
    /// What the run could reach at the last count.
    pub memory_counted: u64,
    /// Values the run holds outside the machine that runs: the machines waiting at the holes of
    /// running fills (to go back to), which count as memory the run holds.
    pub held: Vec<Val>,
    pub tool_calls: u32,
    pub started: Instant,
    pub consts: Vec<ConstState>,
    /// The boundary's decisions not yet taken by whoever drives the run ([`crate::Run::take_trace`]).
    pub trace: Vec<TraceEntry>,
    /// The answers a release's card may say it received as they are.
    pub(crate) received: Received,
    /// The join of every program-counter label left behind where paths joined: with the pc at
    /// a failure, what the failure (a limit reached, an overflow) may have depended on.
    pub pc_seen: Label,
    /// The same, since the innermost running fill started (the run keeps what it was before,
    /// for when that fill is left): that a fill reached a call depends on these too.
    pub pc_seen_in_fill: Label,
    /// Whether a call that fails only label checks is proposed with its failures marked
    /// (`Effect::flows`) for a stage to put to the user, instead of refused here.
    pub defer_label_flows: bool,
    /// What the last refused call's refusal depends on (what chose the call), from the
    /// boundary's record of it until the run takes it to decide where the refusal goes.
    pub refused: Option<Label>,
    /// The policies' releases, their labels computed for this run's user: at the first call
    /// that needs them.
    pub releases: Option<Arc<[Release]>>,
    /// The machine [`Ctx::eval`] evaluates policy code on, emptied after each evaluation and
    /// kept for the next (a tool call evaluates a dozen labels and refinements); `None` while
    /// an evaluation holds it.
    pub(crate) spare: Option<Vm>,
}

impl Ctx {
    /// A fresh context for running `program` for `user` within `limits`: nothing spent,
    /// nothing recorded, no host-made value yet.
    pub fn new(program: Arc<Compiled>, limits: Limits, user: &str) -> Ctx {
        let consts = vec![ConstState::Unset; program.consts.len()];
        Ctx {
            program,
            host: HostState::default(),
            limits,
            user: user.into(),
            fuel_used: 0,
            memory_used: 0,
            memory_counted: 0,
            held: Vec::new(),
            tool_calls: 0,
            started: Instant::now(),
            consts,
            trace: Vec::new(),
            received: Received::default(),
            pc_seen: Label::bottom(),
            pc_seen_in_fill: Label::bottom(),
            defer_label_flows: false,
            refused: None,
            releases: None,
            spare: None,
        }
    }

    /// The program-counter label `pc` is left behind where paths join: remembered in
    /// [`Ctx::pc_seen`] and [`Ctx::pc_seen_in_fill`].
    #[inline]
    pub fn left_behind(&mut self, pc: &Label) {
        if pc.is_bottom() {
            return;
        }
        self.pc_seen.join_mut(pc);
        self.pc_seen_in_fill.join_mut(pc);
    }
}

/// Allocating costs fuel too, one unit for each this many bytes: what a run may hold is bounded
/// by the memory limit, and the work of making it (copying a long text again and again) by
/// its fuel.
const BYTES_PER_FUEL: u64 = 1024;

impl Budget for Ctx {
    fn allocate(&mut self, bytes: u64) -> Result<(), RunError> {
        self.fuel_used = self.fuel_used.saturating_add(bytes / BYTES_PER_FUEL);
        if self.fuel_used > self.limits.fuel {
            return self.burn_slow();
        }
        self.memory_used = self.memory_used.saturating_add(bytes);
        if self.memory_used > self.limits.max_memory_bytes {
            return Err(RunError::new(
                ErrorKind::Limit,
                Span::default(),
                format!("the run holds more than the memory limit of {} bytes", self.limits.max_memory_bytes),
            ));
        }
        Ok(())
    }

    fn max_string_bytes(&self) -> usize {
        self.limits.max_string_bytes
    }

    fn max_list_len(&self) -> usize {
        self.limits.max_list_len
    }
}
