//! Tool hosts and how a run's are put together. A [`Host`] serves one capability: a simulated
//! environment, the filesystem the user granted, a real MCP server. A run's [`Hosts`] send each
//! effect to the host of its capability. The composition rules live here and nowhere else: no
//! name for two different hosts (one MCP server serving several capabilities is one host under
//! one name), no capability served twice, and one principal for the whole run.

use std::any::Any;

use cordon_runtime::{Json, ToolCall, ToolHost};

/// A tool host serving one capability, for the principal the agent acts for.
pub trait Host: ToolHost + Send + Any {
    /// What kind of host it is, for messages: `environment`, `MCP server`.
    fn kind(&self) -> &str;

    /// Its name among the hosts of a run: `github`, `fs`, an MCP server's name in the config.
    fn name(&self) -> &str;

    /// The capability whose tools it performs.
    fn capability(&self) -> &str;

    /// The principal the agent acts for here (whom `user()` names in the policy's labels);
    /// `None` for a host that acts for no one in particular (a clock, an MCP server).
    fn principal(&self) -> Option<&str> {
        None
    }

    /// The source of the policy module declaring its tools, for a host that brings its own
    /// (the simulated environments and the filesystem do; an MCP server's tools are declared by
    /// the user's policy).
    fn policy(&self) -> Option<&str> {
        None
    }

    /// What a grant for its tools is bound to: text that names this host and changes when what
    /// it would do could (an MCP server's command, address or tool list). By default its kind
    /// and name: a built-in host is what its name says.
    fn instance(&self) -> String {
        format!("{} {}", self.kind(), self.name())
    }
}

/// The hosts of one run. Itself a [`ToolHost`]: an effect goes to the host of its capability.
#[derive(Default)]
pub struct Hosts {
    hosts: Vec<Box<dyn Host>>,
}

impl std::fmt::Debug for Hosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.hosts.iter().map(|h| h.name())).finish()
    }
}

impl Hosts {
    /// No hosts: every tool call fails as unserved.
    pub fn new() -> Hosts {
        Hosts::default()
    }

    /// Adds `host`, unless its name is taken already (but by the same instance serving another
    /// capability: one MCP server bound to several), its capability is served already, or it
    /// acts for another principal than the hosts before it.
    pub fn add(&mut self, host: Box<dyn Host>) -> Result<(), String> {
        let (kind, name) = (host.kind(), host.name());
        let another_capability_of_it =
            |h: &dyn Host| h.instance() == host.instance() && h.capability() != host.capability();
        if self.hosts.iter().any(|h| h.name() == name && !another_capability_of_it(&**h)) {
            return Err(format!("the {kind} `{name}` is named twice"));
        }
        let capability = host.capability();
        if self.serves(capability) {
            return Err(format!(
                "the {kind} `{name}` would serve `{capability}`, which another environment or server serves"
            ));
        }
        if let (Some(first), Some(theirs)) = (self.hosts.iter().find(|h| h.principal().is_some()), host.principal())
            && first.principal() != Some(theirs)
        {
            return Err(format!(
                "`{}` acts for {} and `{name}` for {theirs}: one run acts for one principal",
                first.name(),
                first.principal().unwrap_or_default(),
            ));
        }
        self.hosts.push(host);
        Ok(())
    }

    /// The principal the hosts act for, if any of them acts for someone.
    pub fn principal(&self) -> Option<&str> {
        self.hosts.iter().find_map(|h| h.principal())
    }

    /// The policies the hosts bring, each as a name to show (`<github policy>`) and its source.
    pub fn policies(&self) -> Vec<(String, String)> {
        self.hosts.iter().filter_map(|h| Some((format!("<{} policy>", h.name()), h.policy()?.to_string()))).collect()
    }

    /// Each capability with what serves it (`Host::instance`), for binding grants.
    pub fn instances(&self) -> Vec<(String, String)> {
        self.hosts.iter().map(|h| (h.capability().to_string(), h.instance())).collect()
    }

    /// Whether a host serves `capability`.
    pub fn serves(&self, capability: &str) -> bool {
        self.hosts.iter().any(|h| h.capability() == capability)
    }

    /// Whether there is no host at all.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// The host of type `T`, to look at what runs did to it.
    pub fn get<T: Host>(&self) -> Option<&T> {
        self.hosts.iter().find_map(|h| (&**h as &dyn Any).downcast_ref::<T>())
    }

    /// The host of type `T`, to change it between runs.
    pub fn get_mut<T: Host>(&mut self) -> Option<&mut T> {
        self.hosts.iter_mut().find_map(|h| (&mut **h as &mut dyn Any).downcast_mut::<T>())
    }
}

impl ToolHost for Hosts {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        match self.hosts.iter_mut().find(|h| h.capability() == call.capability()) {
            Some(host) => host.perform(call),
            None => Err(format!("no host serves the capability `{}`", call.capability())),
        }
    }
}
