//! Driving a simulated environment's tool host directly, in JSON as a run would, and reading
//! its answers: shared by the GitHub and chat host tests.
#![allow(dead_code, clippy::panic)] // each test binary uses some of these; a test may fail loudly

use cordon_runtime::{Effect, Json, ToolCall, ToolHost};

/// Performs `capability.tool` on `host` with `args` (name, JSON), as the host receives a call.
pub fn perform(host: &mut dyn ToolHost, capability: &str, tool: &str, args: Vec<(&str, Json)>) -> Result<Json, String> {
    let effect = Effect::outside_a_run(capability, tool, Vec::new());
    host.perform(&ToolCall { effect: &effect, args: args.into_iter().map(|(n, v)| (n.to_string(), v)).collect() })
}

pub fn field(v: &Json, name: &str) -> Json {
    v.get(name).cloned().unwrap_or_else(|| panic!("no field `{name}` in {v}"))
}

/// The names of an object's members, sorted.
pub fn field_names(v: &Json) -> Vec<&str> {
    let object = v.as_object().unwrap_or_else(|| panic!("not an object: {v}"));
    let mut names: Vec<&str> = object.keys().map(String::as_str).collect();
    names.sort_unstable();
    names
}

pub fn items(v: &Json) -> Vec<Json> {
    v.as_array().cloned().unwrap_or_else(|| panic!("not a list: {v}"))
}

pub fn text(v: &Json) -> String {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}")).to_string()
}
