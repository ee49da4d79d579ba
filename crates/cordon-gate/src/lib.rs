//! The approval gate: a stage of the engine's effect pipeline between the boundary, which
//! admitted a call, and the host that performs it.
mod approver;
mod card;
mod gate;
mod grants;
mod intent;

pub use approver::{Answer, ApproveAll, Approver, DenyAll, NotATerminal, Reply, ScriptError, Scripted, Terminal};
pub use card::{Card, FlowShown, Origin, Shown, escape, label_class, origin};
pub use gate::{Decision, Gate, Record, Stats, rule};
pub use grants::{Grants, MemoryGrants, StoreGrants};
pub use intent::{IntentCheck, ProvenanceRules, named_in};
