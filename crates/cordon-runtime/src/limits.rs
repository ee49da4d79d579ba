//! The host's limits on one run. Reaching any of them ends the run with a `limit` error.

use std::time::Duration;

use serde::{Deserialize, Serialize};
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Limits {
    /// Function calls plus loop iterations, plus a unit for each KiB allocated.
    pub fuel: u64,
    /// Nested calls.
    pub max_call_depth: usize,
    /// How deeply records, enum values and closures may nest inside one value.
    pub max_value_depth: usize,
    /// The longest string, in bytes.
    pub max_string_bytes: usize,
    /// The longest list.
    pub max_list_len: usize,
    /// Bytes the run's strings, lists, tuples, records and closures may hold at once (see
    /// `crate::live`: what it can still reach, counted when its allocations add up past this).
    pub max_memory_bytes: u64,
    pub wall_clock: Duration,
    pub max_tool_calls: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            fuel: 50_000_000,
            max_call_depth: 2_000,
            max_value_depth: 1_000,
            max_string_bytes: 16 << 20,
            max_list_len: 4 << 20,
            max_memory_bytes: 1 << 30,
            wall_clock: Duration::from_secs(30),
            max_tool_calls: 200,
        }
    }
}
