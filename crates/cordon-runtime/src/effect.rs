//! What crosses from a program to the world: a tool call as plain data, and the trait of the
//! things that perform tool calls (simulated environments, MCP servers, HTTP APIs).

use std::sync::Arc;

use cordon_syntax::{FileId, Span};
use serde::{Deserialize, Serialize};

use crate::error::RunError;
use crate::value::{Val, Value};
use cordon_label::{DcLabel, Label};

/// One tool call, stopped at the boundary. The interpreter made it and performs nothing; the
/// host decides, performs the tool and resumes the run with the result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Effect {
    /// The capability's declared name, e.g. `GitHub`.
    pub capability: Arc<str>,
    pub tool: Arc<str>,
    /// Each argument with its parameter's name; labels included.
    pub args: Vec<(Arc<str>, Val)>,
    /// The program-counter label at the call: what the decision to call depended on.
    pub pc: Label,
    /// Where in the program the call is.
    pub span: Span,
    /// The linear values the call uses up when it is performed.
    pub(crate) consumes: Vec<crate::value::HostId>,
    /// The label checks this call failed, when the run lets a stage approve them (see
    /// [`crate::Run::defer_label_flows`]); empty otherwise. A call with any is performed only
    /// after [`crate::Run::approve_flows`], else refused as the boundary would have.
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// Each argument's sink, in the order of `args`: who may read what the argument carries
    /// once it is sent (the policy's `@label(param = ..)`, or the default, public). Empty for a
    /// call made outside a run, whose sinks are unknown: a stage takes those as public.
    #[serde(default)]
    pub sinks: Vec<DcLabel>,
}

/// A label check a call failed: a value (or the decision to call) that may not flow to its
/// sink. Only the user's approval, for this call, lets it through.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    /// The parameter whose sink it is; `None` for the decision's own sink (`@label(pc = ..)`).
    pub param: Option<String>,
    /// The argument, when the argument's own label is what may not flow.
    pub value: Option<Val>,
    /// What may not flow: the argument's label, or the decision's (the pc).
    pub carried: Label,
    pub sink: DcLabel,
    /// What is left of `carried` once the releases the policy declares with a card let their
    /// groups' data out toward `sink`: what the user's yes must still cover.
    pub releasable: DcLabel,
    /// Whether the argument is a text the run received as it is, from a tool's answer holding
    /// the data of each group a release lets out here: one of its texts, or one word of one (a
    /// link as it was posted), rather than a text built from such data, which may carry any of
    /// it. What a release's card says it lets out; false where no release applies.
    #[serde(default)]
    pub as_received: bool,
    /// Where the argument is a text built from the released groups' data: the parts of it such
    /// an answer held word for word (runs of at least 8 characters), for the card to mark. Data changed on the way (encoded, reordered) is not
    /// found, so this never says what is not the group's; `as_received` false says the rest may be.
    #[serde(default)]
    pub received: Vec<String>,
}

impl Flow {
    /// Whether `principal`'s yes lets it through: with the releases that ask for it, what is
    /// left is theirs to release and vouch for.
    pub fn approvable_by(&self, principal: &str) -> bool {
        self.releasable.flows_to_with(&self.sink, principal)
    }

    /// The groups whose data the policy's releases let out toward the sink on the user's yes.
    pub fn let_out(&self) -> Vec<String> {
        let left = self.releasable.secrecy.groups();
        self.carried.dc().secrecy.groups().into_iter().filter(|g| !left.contains(g)).collect()
    }
}

impl Effect {
    /// A call made outside any run, public and from nowhere in particular: to drive a tool host
    /// directly (its own tests, a host composed of others).
    pub fn outside_a_run(capability: &str, tool: &str, args: Vec<(Arc<str>, Val)>) -> Effect {
        Effect {
            capability: capability.into(),
            tool: tool.into(),
            args,
            pc: Label::bottom(),
            span: Span::default(),
            consumes: Vec::new(),
            flows: Vec::new(),
            sinks: Vec::new(),
        }
    }

    /// The sink of the argument at `index`: public, vouched for by no one, where unknown.
    pub fn sink(&self, index: usize) -> DcLabel {
        self.sinks.get(index).cloned().unwrap_or_else(DcLabel::untrusted)
    }

    /// The argument for parameter `name`.
    pub fn arg(&self, name: &str) -> Option<&Value> {
        self.args.iter().find(|(n, _)| &**n == name).map(|(_, v)| &v.value)
    }
}

/// A typed hole the run reached: the host asks a model for a fill, checks it against the
/// hole's type in the hole's scope, and continues the run with it (`Run::fill`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HoleRequest {
    /// The `agent[..](..)` expression (the checker's `HoleSite::span`).
    pub span: Span,
    pub task: Val,
    /// The hole's arguments after the task.
    pub args: Vec<Val>,
    /// Every binding visible at the hole with its value: for the prompt, where labels allow.
    pub scope: Vec<(Arc<str>, Val)>,
    /// The program-counter label at the hole.
    pub pc: Label,
    /// The hole's index in the running program.
    pub(crate) site: usize,
    /// Set when the run went back to this hole after its fill was refused (see [`Refill`]).
    #[serde(default)]
    pub again: Option<Box<Refill>>,
}

/// Why a run went back to a hole it had filled. The fill made a call the labels refused (the
/// boundary, or a stage that put the failed label checks to a person), and nothing the fill did
/// had been performed: no effect was committed since it was entered, so the world is as it was
/// at the hole, no linear value is used up, and the hole can be filled again.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Refill {
    /// The refusal, as it would have ended the run.
    pub error: RunError,
    /// What the refusal depends on: what chose the refused call (the decision to make it and
    /// its arguments, as a refusal handed to a plan as a value carries), and every decision the
    /// fill left behind before it (that the call was reached at all depends on them). Whoever
    /// is told of the refusal must be cleared for it, and what they do next carries it.
    pub label: Label,
    /// The source file of the refused fill.
    pub fill: FileId,
}

/// What tool hosts speak: arguments and results as JSON.
pub type Json = serde_json::Value;

/// A tool call as a host receives it: the arguments as JSON, encoded from the values the plan
/// passed ([`Value::to_json`]), which is all a host acts on; and the effect the run proposed,
/// for a host that logs what it was asked (with labels and host-made values).
#[derive(Debug)]
pub struct ToolCall<'a> {
    pub effect: &'a Effect,
    /// Each argument by its parameter's name.
    pub args: serde_json::Map<String, Json>,
}

impl<'a> ToolCall<'a> {
    /// The call of `effect`, its arguments encoded.
    pub fn new(effect: &'a Effect) -> ToolCall<'a> {
        let args = effect.args.iter().map(|(n, v)| (n.to_string(), v.value.to_json())).collect();
        ToolCall { effect, args }
    }

    pub fn capability(&self) -> &str {
        &self.effect.capability
    }

    pub fn tool(&self) -> &str {
        &self.effect.tool
    }

    /// The argument for parameter `name`.
    pub fn arg(&self, name: &str) -> Option<&Json> {
        self.args.get(name)
    }
}

/// Performs tool calls the boundary admitted.
///
/// Hosts speak JSON, in both directions, with one mapping from the declared types:
///
/// | declared type | JSON |
/// |---|---|
/// | `Int`, `Float`, `Bool`, `String` | a number (an integer for `Int`), a boolean, a string |
/// | `Decimal` | a string, `"12.50"`; a number is also read, exactly where it has at most 15 significant digits (a longer fraction has been through a binary float and is refused) |
/// | `Date`, `DateTime`, `Duration` | an ISO 8601 string: `"2026-12-01"`, `"2026-12-01T09:30:00Z"` (an instant needs its offset), `"PT1H30M"` |
/// | `()` | `null` |
/// | a tuple, `List[T]` | an array |
/// | `Option[T]` | `null` for `None`, else the value |
/// | a record (opaque or not) | an object with a member per field (others are ignored) |
/// | an enum, `Result[T, E]` | `"Name"` without payload; `{"Name": v}` with one; `{"Name": [v, ..]}` with several (`{"Ok": v}`, `{"Err": e}`) |
/// | a linear or opaque handle | anything (`null`): the boundary makes the new value |
///
/// The boundary decodes a result against the tool's declared result type (`boundary::complete`):
/// what does not fit is an error that names where (`.issues[3].title`), never a wrong value.
/// Opaque records a tool returns are registered so that a program cannot forge or alter one.
pub trait ToolHost {
    /// Performs `call`. An `Err` is a failure of the tool (it ends the run with that message).
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String>;
}
