//! The filesystem capability: directories the user grants a run, which a plan reaches only
//! through handles the host makes, served as the `Fs` capability of `policies/fs.cord`.
//!
//! # How a plan gets a directory
//!
//! The user grants roots on the command line, each with a name: `cordon run --dir
//! notes=./notes --dir out=./out:rw plan.cord` (read-only unless `:rw`). The policy's entry
//! gives the plan the capability, `fs: Fs`, and nothing else: a directory is a `Dir`, an opaque
//! record `{ root, path, writable }` that only the host makes, which the plan asks for by the
//! root's name (`fs.root("notes")`, an `Option[Dir]`) or gets with all the others
//! (`fs.roots()`). Every other tool takes a `Dir` and a path relative to it. A `Dir` can only be
//! made smaller: `fs.subdir(d, "2024")` is the directory under `d` and nothing outside it, and
//! `fs.read_only(d)` the same directory through which nothing can change. The runtime refuses a
//! `Dir` the host did not make or one a plan altered, so `writable` cannot be flipped on.
//!
//! Read-only is in the types: `write` and `remove` take `{d: Dir | d.writable}`, so a plan must
//! show the checker that its `Dir` is writable (`if d.writable { .. }`), `read_only` returns
//! `{r: Dir | !r.writable ..}` and `subdir` a `Dir` as writable as its parent, so a plan that
//! writes through a read-only `Dir` or anything under it is rejected before it runs
//! (`refinement-unproven`). The boundary checks the refinement again on the real value, and the
//! host checks a third time against its own record of each root's grant.
//!
//! # What a `Dir` guarantees
//!
//! Nothing a plan does through a `Dir` reads, changes or learns of anything outside the
//! directory it names ([`dir`] is the boundary, and says how): there are no ambient paths (the
//! roots are opened once, from the user's command line, and every later open is relative to a
//! directory handle), and cap-std resolves each path beneath its handle so that `..`, absolute
//! paths and symlinks that lead out are refused by the resolution itself, at every step, races
//! included. A file is read only if it is a regular file with one link; a write replaces the
//! file whole through a rename, never writing through a symlink, a hard link or a device.
//! Sizes are bounded and each run has a quota ([`FsLimits`]). Every refusal is an
//! `Err(FsError { code, reason })` the plan may handle, naming the path by its root's name
//! (never where the root is on disk), and changes nothing.
//!
//! # Labels
//!
//! The policy labels a root's files, computed from the `Dir`'s `root`: by default the user's
//! secret, vouched for by no one; the root named `public` is readable by anyone, so nothing
//! secret may be written there. Writes check their sinks like any tool: where a write goes and
//! the decision to make it must be the user's, never chosen by a file's text.

pub mod dir;
pub mod grant;
pub mod path;
pub mod tools;

pub use dir::{DirRef, Entry, Fs, FsLimits, Spent};
pub use grant::{Grant, Mode};
pub use tools::CAPABILITY;

/// The policy module that declares the `Fs` capability.
pub const POLICY: &str = include_str!("../../../policies/fs.cord");

/// The policy's path from the repository root.
pub const POLICY_PATH: &str = "policies/fs.cord";

/// The principal a filesystem run acts for when no other environment names one.
pub const DEFAULT_PRINCIPAL: &str = "user";

/// Why an operation did nothing: a stable code a plan can match and a reason to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub reason: String,
}

impl Refusal {
    pub fn new(code: &'static str, reason: impl Into<String>) -> Refusal {
        Refusal { code, reason: reason.into() }
    }
}

impl cordon_engine::Host for Fs {
    fn kind(&self) -> &str {
        "environment"
    }

    fn name(&self) -> &str {
        "fs"
    }

    fn capability(&self) -> &str {
        CAPABILITY
    }

    fn principal(&self) -> Option<&str> {
        Some(Fs::principal(self))
    }

    fn policy(&self) -> Option<&str> {
        Some(POLICY)
    }
}
