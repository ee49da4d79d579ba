//! Saving a run and resuming it later, in another process: an effect a stage holds (an
//! approval no one has answered yet) may wait hours, across restarts.
//!
//! A saved run holds every source file of the request (policies, plan, the fills the run
//! entered, in the order the host's `SourceMap` had them, so spans stay valid), the machine
//! (frames and operands, values with their labels), what the host knows (the host-made values
//! it made, which linear ones are unused, every measure and what decided it), the run's
//! spending against its limits, its trace, and what it waits for. Its code is compiled again
//! from the sources when it is loaded.
//!
//! A saved run is authenticated with an HMAC-SHA256 under a key only the host has: it holds
//! labels and host-made values, so a run edited on disk (a label lowered, a session untainted)
//! is refused, as is one saved by another version of this format.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_syntax::{FileId, SourceMap};
use cordon_types::{Calls, Casts, Resolved};
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::code::{Compiled, FillRecord};
use crate::compile::{self, FillCasts};
use crate::ctx::{ConstState, Ctx};
use crate::host::{HostState, Sessions};
use crate::limits::Limits;
use crate::machine::Vm;
use crate::received::Received;
use crate::trace::TraceEntry;
use crate::{FillStart, Run, State};
use cordon_label::Label;

/// The format's version: a saved run of another version is refused, never guessed at. The
/// machine's frames point into compiled code, so a change to what the compiler emits is a new
/// version too (2: `map` and `filter` build their lists in the machine, `Take` moves out of
/// slots; 3: `JoinPcReturn`, saved `pc` labels counted when bottom, literal closures run in
/// their builtin's loop; 4: `map`'s literal closure runs in its list loop, `IterNext` charges
/// the call it replaces, a jump to a return is that return, records keep a shared layout, and
/// the running fills the run may go back to; 5: a loop over `range(a, b)` as written keeps its
/// bounds in slots instead of a list, `count_by` takes only the keys, and a local on the left of
/// a computed operand is read by the operation; 6: the run's state is one value, saying what it
/// waits for or how it ended; 7: a run keeps what the checker resolved each call to; 8: a failed
/// label check keeps what is left of it once the policy's releases let groups' data out; 9: a run
/// keeps what the checker resolved each cast's target to).
const VERSION: u32 = 9;

/// The length of the authentication tag in front of a saved run.
const TAG_LEN: usize = 32;

/// Why a saved run cannot be resumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotError {
    /// The tag does not match: the bytes were changed, or saved under another key.
    Tampered,
    /// Saved by another version of the format.
    Version(u32),
    /// The bytes do not hold a saved run, or its code no longer compiles.
    Malformed(String),
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SnapshotError::Tampered => {
                f.write_str("the saved run was changed after it was saved, or saved under another key")
            }
            SnapshotError::Version(v) => {
                write!(f, "the saved run has format version {v}; this Cordon reads version {VERSION}")
            }
            SnapshotError::Malformed(why) => write!(f, "the saved run is malformed: {why}"),
        }
    }
}

impl std::error::Error for SnapshotError {}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    version: u32,
    /// Every file of the request's source map, in order: (name, text).
    sources: Vec<(String, String)>,
    policies: Vec<FileId>,
    plan: Option<FileId>,
    /// What the checker resolved each call of the policies and the plan to.
    calls: Calls,
    /// What the checker resolved each cast of the policies and the plan to.
    casts: Casts,
    fills: Vec<FillRecord>,
    vm: Vm,
    host: HostState,
    limits: Limits,
    user: String,
    fuel_used: u64,
    memory_used: u64,
    tool_calls: u32,
    /// Wall-clock time the run had used when it was saved.
    elapsed: Duration,
    consts: Vec<ConstState>,
    trace: Vec<TraceEntry>,
    /// Absent from a run saved before the run kept them apart from its trace: then they are the
    /// trace's answers.
    #[serde(default)]
    received: Option<Received>,
    pc_seen: Label,
    pc_seen_in_fill: Label,
    state: State,
    sessions: Sessions,
    running_fills: Vec<FillStart>,
}

fn tag(key: &[u8], body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(body);
    mac
}

impl Run {
    /// The run as bytes, authenticated under `key`; `sources` is the source map its program
    /// and fills were checked from.
    pub fn save(&self, sources: &SourceMap, key: &[u8]) -> Vec<u8> {
        let snapshot = Snapshot {
            version: VERSION,
            sources: sources.files().map(|(_, f)| (f.name.clone(), f.text.clone())).collect(),
            policies: self.ctx.program.origin.policies.clone(),
            plan: self.ctx.program.origin.plan,
            calls: self.ctx.program.origin.resolved.calls.clone(),
            casts: self.ctx.program.origin.resolved.casts.clone(),
            fills: self.ctx.program.origin.fills.clone(),
            vm: self.vm.clone(),
            host: self.ctx.host.clone(),
            limits: self.ctx.limits.clone(),
            user: self.ctx.user.to_string(),
            fuel_used: self.ctx.fuel_used,
            memory_used: self.ctx.memory_used,
            tool_calls: self.ctx.tool_calls,
            elapsed: self.ctx.started.elapsed(),
            consts: self.ctx.consts.clone(),
            trace: self.ctx.trace.clone(),
            received: Some(self.ctx.received.clone()),
            pc_seen: self.ctx.pc_seen.clone(),
            pc_seen_in_fill: self.ctx.pc_seen_in_fill.clone(),
            state: self.state.clone(),
            sessions: self.sessions.clone(),
            running_fills: self.running_fills.clone(),
        };
        // Serializing plain data to memory cannot fail.
        let body = serde_json::to_vec(&snapshot).unwrap_or_default();
        let mut bytes = tag(key, &body).finalize().into_bytes().to_vec();
        bytes.extend_from_slice(&body);
        bytes
    }

    /// A run saved with [`Run::save`] under `key`, ready to go on where it stopped, and the
    /// source map its spans refer to.
    pub fn load(bytes: &[u8], key: &[u8]) -> Result<(Run, SourceMap), SnapshotError> {
        if bytes.len() < TAG_LEN {
            return Err(SnapshotError::Tampered);
        }
        let (expected, body) = bytes.split_at(TAG_LEN);
        tag(key, body).verify_slice(expected).map_err(|_| SnapshotError::Tampered)?;
        let s: Snapshot = match serde_json::from_slice(body) {
            Ok(s) => s,
            // A run another version saved may hold other fields: it is refused as that, not as
            // whatever field it lacks. Its version is read only then, so a run is read once.
            Err(e) => {
                #[derive(Deserialize)]
                struct Versioned {
                    version: u32,
                }
                return Err(match serde_json::from_slice::<Versioned>(body) {
                    Ok(Versioned { version }) if version != VERSION => SnapshotError::Version(version),
                    _ => SnapshotError::Malformed(e.to_string()),
                });
            }
        };
        if s.version != VERSION {
            return Err(SnapshotError::Version(s.version));
        }
        let mut sources = SourceMap::new();
        for (name, text) in s.sources {
            sources.add(name, text);
        }
        let resolved = Resolved { calls: s.calls, casts: s.casts };
        let program = compile_again(&sources, &s.policies, s.plan, &resolved, &s.fills)?;
        let mut ctx = Ctx::new(Arc::new(program), s.limits, &s.user);
        ctx.host = s.host;
        ctx.fuel_used = s.fuel_used;
        ctx.memory_used = s.memory_used;
        ctx.tool_calls = s.tool_calls;
        ctx.started = Instant::now().checked_sub(s.elapsed).unwrap_or_else(Instant::now);
        ctx.consts = s.consts;
        ctx.received = s.received.unwrap_or_else(|| Received::of(s.trace.iter().filter_map(TraceEntry::result)));
        ctx.trace = s.trace;
        ctx.pc_seen = s.pc_seen;
        ctx.pc_seen_in_fill = s.pc_seen_in_fill;
        let mut run = Run { vm: s.vm, ctx, state: s.state, sessions: s.sessions, running_fills: s.running_fills };
        run.hold_fills();
        Ok((run, sources))
    }
}

/// Compiles the program and its fills as the run had them. The sources were checked when the
/// run was made, and the tag says they, and what their calls and casts were resolved to, are
/// those: they are not checked again.
fn compile_again(
    sources: &SourceMap,
    policies: &[FileId],
    plan: Option<FileId>,
    resolved: &Resolved,
    fills: &[FillRecord],
) -> Result<Compiled, SnapshotError> {
    let parse = |file: FileId| {
        if file.0 as usize >= sources.files().count() {
            return Err(SnapshotError::Malformed(format!("no source file {}", file.0)));
        }
        Ok(cordon_syntax::parse(file, &sources.file(file).text).module)
    };
    let modules = policies.iter().map(|f| parse(*f)).collect::<Result<Vec<_>, _>>()?;
    let plan = plan.map(parse).transpose()?;
    let broken =
        |e: compile::CompileError| SnapshotError::Malformed(format!("its code does not compile: {}", e.message));
    // The types as the checker resolved them when the run was made: declaring the same sources
    // again resolves them the same way.
    let options = cordon_types::CheckOptions::default();
    let declared = cordon_types::declare_program(sources, policies, plan.as_ref(), &options);
    let mut program = compile::compile(&modules, plan.as_ref(), resolved, &declared).map_err(broken)?;
    for fill in fills {
        let module = parse(fill.file)?;
        let compiled =
            compile::compile_fill(&program, fill.site, &module, &fill.arg_names, &fill.resolved, FillCasts::Resolved);
        program.extend(compiled.map_err(broken)?);
    }
    Ok(program)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly
mod tests {
    use hmac::Mac;

    use super::{Run, SnapshotError, TAG_LEN, VERSION, tag};

    /// `body` as a saved run tagged with `key`.
    fn saved(key: &[u8], body: &str) -> Vec<u8> {
        let mut bytes = tag(key, body.as_bytes()).finalize().into_bytes().to_vec();
        bytes.extend_from_slice(body.as_bytes());
        bytes
    }

    fn error(bytes: &[u8]) -> SnapshotError {
        match Run::load(bytes, b"key") {
            Ok(_) => panic!("loaded"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_run_saved_by_another_version_is_refused_as_that_whatever_it_holds() {
        for version in [1, VERSION - 1, VERSION + 1] {
            let e = error(&saved(b"key", &format!(r#"{{"version":{version},"sources":"not these"}}"#)));
            assert!(matches!(e, SnapshotError::Version(v) if v == version), "{e:?}");
            assert!(e.to_string().contains(&format!("format version {version}")), "{e}");
        }
    }

    #[test]
    fn a_saved_run_changed_cut_or_not_json_is_refused_never_loaded() {
        let body = format!(r#"{{"version":{VERSION}}}"#);
        assert!(matches!(error(&saved(b"other key", &body)), SnapshotError::Tampered));
        assert!(matches!(error(&saved(b"key", &body)[..TAG_LEN - 1]), SnapshotError::Tampered));
        let mut changed = saved(b"key", &body);
        *changed.last_mut().unwrap() = b' ';
        assert!(matches!(error(&changed), SnapshotError::Tampered));
        for body in ["{", "[]", &body] {
            assert!(matches!(error(&saved(b"key", body)), SnapshotError::Malformed(_)), "{body}");
        }
    }
}
