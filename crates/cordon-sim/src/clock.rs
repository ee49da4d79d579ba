//! The clock environment: the host's time as the capability `Clock` (`policies/clock.cord`),
//! fixed at one instant so that a run is the same every time. A plan has no other way to learn
//! the time: the language has no ambient clock.

use cordon_runtime::Json;
use cordon_runtime::effect::{ToolCall, ToolHost};
use serde_json::json;

/// The policy module that declares the `Clock` capability.
pub const POLICY: &str = include_str!("../../../policies/clock.cord");

/// The policy's path from the repository root.
pub const POLICY_PATH: &str = "policies/clock.cord";

/// The capability this environment serves.
pub const CAPABILITY: &str = "Clock";

/// The instant the built-in clock shows.
pub const NOW: &str = "2026-12-01T09:00:00Z";

/// A clock that always shows the same instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    now: String,
}

impl Clock {
    /// The built-in clock, at [`NOW`].
    pub fn builtin() -> Result<Clock, String> {
        Clock::fixed(NOW)
    }

    /// A clock at `now`, an ISO 8601 instant with its offset; it answers in UTC.
    pub fn fixed(now: &str) -> Result<Clock, String> {
        match cordon_runtime::time::parse_datetime(now) {
            Some(t) => Ok(Clock { now: t.to_string() }),
            None => Err(format!("`{now}` is not an ISO 8601 instant with an offset (`2026-12-01T09:00:00Z`)")),
        }
    }

    /// The instant it shows, in UTC.
    pub fn now(&self) -> &str {
        &self.now
    }

    pub fn state_json(&self) -> Json {
        json!({ "now": self.now })
    }
}

impl ToolHost for Clock {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        match (call.capability(), call.tool()) {
            (CAPABILITY, "now") => Ok(json!(self.now)),
            (CAPABILITY, other) => Err(format!("the clock has no tool `{other}`")),
            (other, _) => Err(format!("the clock environment has no capability `{other}`")),
        }
    }
}
