//! What crosses from a program to the world: a tool call as plain data, and the trait of the
//! things that perform tool calls (simulated environments, MCP servers, HTTP APIs).

use std::sync::Arc;

use cordon_syntax::Span;
use serde::{Deserialize, Serialize};

use crate::label::Label;
use crate::value::{Val, Value};

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
        }
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
}

/// Performs tool calls the boundary admitted.
///
/// A tool returns plain data shaped like its declared result. Where the declared result has a
/// linear value (a new session), return `Value::Unit`: the boundary makes the new host-made
/// value and computes its measures from the tool's declared result. Opaque records (e.g. a
/// `Repo`) are returned as ordinary records; the boundary registers them so that a program
/// cannot forge or alter one.
pub trait ToolHost {
    /// Performs `effect`. An `Err` is a failure of the tool (it ends the run with that message).
    fn perform(&mut self, effect: &Effect) -> Result<Value, String>;
}
