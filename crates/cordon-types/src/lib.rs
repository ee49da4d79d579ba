//! Type checking for Cordon. (To be written.)

use cordon_syntax::{Diagnostic, FileId, SourceMap};

/// Settings of one check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Time Z3 may spend on one refinement obligation before the obligation is rejected.
    pub solver_timeout_ms: u32,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions { solver_timeout_ms: 2000 }
    }
}

/// The result of checking: every diagnostic, sorted by position; the program is accepted if
/// and only if none is an error.
#[derive(Debug)]
pub struct Outcome {
    pub diagnostics: Vec<Diagnostic>,
}

impl Outcome {
    pub fn accepted(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Checks `plan` (if any) against the policy modules, in the order given.
pub fn check(sources: &SourceMap, policies: &[FileId], plan: Option<FileId>, options: &CheckOptions) -> Outcome {
    let _ = (sources, policies, plan, options);
    unimplemented!()
}
