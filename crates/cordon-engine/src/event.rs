//! What happens during a run, as it happens, for whoever listens: a printer, a transcript, a
//! store, a test. Views of a run (the trace a user reads, the demo) are built from these, never
//! from rendered text.

use cordon_runtime::{Json, RunError};
use cordon_runtime::effect::{Effect, HoleRequest};
use cordon_runtime::value::Val;

use crate::stage::Verdict;

/// One thing that happened in a run.
#[derive(Debug)]
pub enum Event<'a> {
    /// The boundary admitted a tool call: it goes through the stages next.
    EffectProposed(&'a Effect),
    /// A stage decided about an effect.
    StageDecided { stage: &'a str, effect: &'a Effect, verdict: &'a Verdict },
    /// The host performed an effect and answered.
    EffectPerformed { effect: &'a Effect, answer: &'a Result<Json, String> },
    /// The run reached a typed hole.
    HoleReached(&'a HoleRequest),
    /// The run waits at an effect a stage holds.
    Held { effect: &'a Effect, stage: &'a str, needs: &'a str },
    /// The run ended with its plan's value.
    Finished(&'a Val),
    /// The run ended with an error.
    Failed(&'a RunError),
}

/// Listens to a run's events.
pub trait Observer {
    fn event(&mut self, event: &Event<'_>);
}
