//! The policies, declared once per thread. A check against the same policies as the last check
//! on its thread starts from a copy of the checker as it was once it had declared them (their
//! types, items and constants: `declare_policies` in `lib.rs`), instead of parsing and declaring
//! them again: a server checks every plan against the same policies, and then pays for the plan
//! alone.
//!
//! A copy is kept only of a declaration that found no syntax error and ran within its time, and
//! used only for the same policies (each file's id, name and text, in order) and the same solver
//! timeout: the checker it gives is the one declaring them again would make. What is kept is
//! opaque here (the checker, `Checker::detached`), so that this module depends on no pass.

use std::any::Any;
use std::cell::RefCell;

use cordon_syntax::ast::Module;
use cordon_syntax::{FileId, SourceMap};

thread_local! {
    static LAST: RefCell<Option<Declared>> = const { RefCell::new(None) };
}

/// The policies of one check as declared, and what they were.
struct Declared {
    policies: Vec<(FileId, String, String)>,
    solver_timeout_ms: u32,
    modules: Vec<Module>,
    declared: Box<dyn Any>,
    /// What was made of `declared` ([`derived`]), once.
    derived: Option<Box<dyn Any>>,
}

/// Whether `policies` of `sources` are `kept`: the same ids, names and texts, in order.
fn same(sources: &SourceMap, policies: &[FileId], kept: &[(FileId, String, String)]) -> bool {
    policies.len() == kept.len()
        && policies.iter().zip(kept).all(|(&id, (kept_id, name, text))| {
            let file = sources.file(id);
            id == *kept_id && file.name == *name && file.text == *text
        })
}

/// The parsed policies and a copy of what declared them, if the last check on this thread
/// declared the same `policies` of `sources` with the same solver timeout.
pub(crate) fn declared<T: Clone + 'static>(
    sources: &SourceMap,
    policies: &[FileId],
    solver_timeout_ms: u32,
) -> Option<(Vec<Module>, T)> {
    LAST.with(|last| {
        let last = last.borrow();
        let kept = last.as_ref().filter(|d| d.solver_timeout_ms == solver_timeout_ms)?;
        if !same(sources, policies, &kept.policies) {
            return None;
        }
        Some((kept.modules.clone(), kept.declared.downcast_ref::<T>()?.clone()))
    })
}

/// What `make` makes of the kept declaration of `policies` (the one [`declared`] would copy),
/// made once and kept with it: what reads the declaration, and declares nothing more, then pays
/// for neither a copy of it nor making the same thing again.
pub(crate) fn derived<T: 'static, D: Clone + 'static>(
    sources: &SourceMap,
    policies: &[FileId],
    solver_timeout_ms: u32,
    make: impl FnOnce(&T) -> D,
) -> Option<D> {
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        let kept = last.as_mut().filter(|d| d.solver_timeout_ms == solver_timeout_ms)?;
        if !same(sources, policies, &kept.policies) {
            return None;
        }
        if let Some(made) = kept.derived.as_ref().and_then(|d| d.downcast_ref::<D>()) {
            return Some(made.clone());
        }
        let made = make(kept.declared.downcast_ref::<T>()?);
        kept.derived = Some(Box::new(made.clone()));
        Some(made)
    })
}

/// Keeps `declared`, which has declared `modules` (the parsed `policies` of `sources`), for the
/// next check on this thread.
pub(crate) fn keep<T: 'static>(
    sources: &SourceMap,
    policies: &[FileId],
    solver_timeout_ms: u32,
    modules: &[Module],
    declared: T,
) {
    let policies = policies
        .iter()
        .map(|&id| {
            let file = sources.file(id);
            (id, file.name.clone(), file.text.clone())
        })
        .collect();
    let declared = Declared {
        policies,
        solver_timeout_ms,
        modules: modules.to_vec(),
        declared: Box::new(declared),
        derived: None,
    };
    LAST.with(|last| *last.borrow_mut() = Some(declared));
}
