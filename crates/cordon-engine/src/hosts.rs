//! Tool hosts composed per run: each capability is served by the host registered for it, so one
//! run can act in several environments (a GitHub and a chat workspace, later MCP servers).

use cordon_runtime::{Json, ToolCall, ToolHost};

/// The hosts of one run, by the capability each serves. Itself a [`ToolHost`]: an effect goes
/// to the host of its capability, or to the host registered for every capability.
#[derive(Default)]
pub struct Hosts<'a> {
    by_capability: Vec<(String, &'a mut dyn ToolHost)>,
    fallback: Option<&'a mut dyn ToolHost>,
}

impl std::fmt::Debug for Hosts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.by_capability.iter().map(|(c, _)| c.as_str()).collect();
        f.debug_struct("Hosts").field("capabilities", &names).field("fallback", &self.fallback.is_some()).finish()
    }
}

impl<'a> Hosts<'a> {
    /// No hosts: every tool call fails as unserved.
    pub fn new() -> Hosts<'a> {
        Hosts::default()
    }

    /// One host for every capability.
    pub fn all(host: &'a mut dyn ToolHost) -> Hosts<'a> {
        Hosts { by_capability: Vec::new(), fallback: Some(host) }
    }

    /// Serves `capability` with `host`.
    pub fn serve(mut self, capability: &str, host: &'a mut dyn ToolHost) -> Hosts<'a> {
        self.by_capability.push((capability.to_string(), host));
        self
    }
}

impl ToolHost for Hosts<'_> {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        let named = self.by_capability.iter_mut().find(|(c, _)| c == call.capability());
        match (named, &mut self.fallback) {
            (Some((_, host)), _) => host.perform(call),
            (None, Some(host)) => host.perform(call),
            (None, None) => Err(format!("no host serves the capability `{}`", call.capability())),
        }
    }
}
