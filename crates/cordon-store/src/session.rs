//! Sessions are linear: one run at a time. A run takes a session's lock, naming its process; the
//! lock outlives a crash only until someone asks for the session and finds that process gone.

use serde::Serialize;

/// A process, named so that a recycled pid is not mistaken for it: its pid and, where the
/// system tells (Linux, `/proc`), its start time in clock ticks since boot. The processes
/// sharing a store are those of one machine and one pid namespace (SQLite's own locking
/// assumes one machine too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Holder {
    pub pid: u32,
    pub started: Option<u64>,
}

impl Holder {
    pub fn current() -> Holder {
        let pid = std::process::id();
        Holder { pid, started: proc_stat(pid).ok().and_then(|s| s.started) }
    }

    /// Whether this process still runs. Where that cannot be known (no `/proc`), it is assumed
    /// to, and only `force_unlock_session` frees its locks.
    pub fn is_alive(&self) -> bool {
        if !cfg!(target_os = "linux") {
            return true;
        }
        match proc_stat(self.pid) {
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
            Ok(stat) => {
                !stat.dead && (self.started.is_none() || stat.started.is_none() || self.started == stat.started)
            }
        }
    }
}

struct ProcStat {
    /// A zombie or a dead task: it will never do anything with a lock again.
    dead: bool,
    started: Option<u64>,
}

fn proc_stat(pid: u32) -> std::io::Result<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name (field 2) is in parentheses and may hold spaces or ')', so the fields
    // are counted from the last ')': the state is field 3, the start time field 22.
    let rest = text.rsplit_once(')').map_or("", |(_, rest)| rest);
    let mut fields = rest.split_whitespace();
    let state = fields.next().unwrap_or("");
    Ok(ProcStat { dead: matches!(state, "Z" | "X" | "x"), started: fields.nth(18).and_then(|s| s.parse().ok()) })
}

/// A session taken by this run; required to save the session and given back to release it.
#[must_use = "a session stays locked until `unlock_session` (or until its process is gone)"]
#[derive(Debug)]
pub struct SessionLock {
    pub(crate) session: String,
    pub(crate) holder: Holder,
    pub(crate) epoch: i64,
}

impl SessionLock {
    pub fn session(&self) -> &str {
        &self.session
    }
}

/// A session as listed.
#[derive(Clone, Debug, Serialize)]
pub struct SessionInfo {
    pub name: String,
    pub updated_ms: Option<i64>,
    /// The process holding it, if one does (it may be dead: the lock is then stale).
    pub held_by: Option<Holder>,
    pub locked_ms: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_recycled_pid_is_not() {
        let me = Holder::current();
        assert!(me.is_alive());
        if cfg!(target_os = "linux") {
            assert!(me.started.is_some());
            let recycled = Holder { started: me.started.map(|s| s + 1), ..me };
            assert!(!recycled.is_alive());
        }
    }
}
