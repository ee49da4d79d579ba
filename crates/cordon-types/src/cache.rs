//! The policies, declared once per thread. A check against the same policies as the last check
//! on its thread starts from a copy of the checker as it was once it had declared them (their
//! types, items and constants: `declare_policies`), instead of parsing and declaring them again:
//! a server checks every plan against the same policies, and then pays for the plan alone.
//!
//! A copy is kept only of a declaration that found no syntax error and ran within its time, and
//! used only for the same policies (each file's id, name and text, in order) and the same solver
//! timeout: the checker it gives is the one declaring them again would make.

use std::cell::RefCell;
use std::sync::LazyLock;

use cordon_syntax::ast::Module;
use cordon_syntax::{FileId, SourceMap};

use crate::CheckOptions;
use crate::state::Checker;

thread_local! {
    static LAST: RefCell<Option<Declared>> = const { RefCell::new(None) };
}

/// What a kept checker refers to between checks: no file. Each check gives it its own.
static NO_SOURCES: LazyLock<SourceMap> = LazyLock::new(SourceMap::new);

/// The policies of one check as declared, and what they were.
struct Declared {
    policies: Vec<(FileId, String, String)>,
    solver_timeout_ms: u32,
    modules: Vec<Module>,
    checker: Checker<'static>,
}

/// Each policy file's id, name and text.
fn key(sources: &SourceMap, policies: &[FileId]) -> Vec<(FileId, String, String)> {
    policies
        .iter()
        .map(|&id| {
            let file = sources.file(id);
            (id, file.name.clone(), file.text.clone())
        })
        .collect()
}

fn same(sources: &SourceMap, policies: &[FileId], kept: &[(FileId, String, String)]) -> bool {
    policies.len() == kept.len()
        && policies.iter().zip(kept).all(|(&id, (kid, name, text))| {
            let file = sources.file(id);
            id == *kid && file.name == *name && file.text == *text
        })
}

/// The parsed policies and a checker that has declared them, for a check of `sources` with
/// `options`, if this thread declared the same policies last.
pub(crate) fn declared<'a>(
    sources: &'a SourceMap,
    policies: &[FileId],
    options: &CheckOptions,
) -> Option<(Vec<Module>, Checker<'a>)> {
    LAST.with(|last| {
        let last = last.borrow();
        let kept = last.as_ref().filter(|d| d.solver_timeout_ms == options.solver_timeout_ms)?;
        if !same(sources, policies, &kept.policies) {
            return None;
        }
        let mut checker = Checker { sources, ..kept.checker.clone() };
        // This check's own clock and inputs.
        let fresh = Checker::new(sources, options);
        checker.started = fresh.started;
        checker.deadline = fresh.deadline;
        checker.solver_time = fresh.solver_time;
        checker.entry_facts = fresh.entry_facts;
        Some((kept.modules.clone(), checker))
    })
}

/// Keeps `checker`, which has declared `modules` (the parsed `policies`), for the next check on
/// this thread; unless its time ran out.
pub(crate) fn keep(
    sources: &SourceMap,
    policies: &[FileId],
    options: &CheckOptions,
    modules: &[Module],
    checker: &Checker<'_>,
) {
    if checker.timed_out.is_some() {
        return;
    }
    let declared = Declared {
        policies: key(sources, policies),
        solver_timeout_ms: options.solver_timeout_ms,
        modules: modules.to_vec(),
        checker: detached(checker.clone()),
    };
    LAST.with(|last| *last.borrow_mut() = Some(declared));
}

/// The checker with no sources: every field but that one is owned.
fn detached(kept: Checker<'_>) -> Checker<'static> {
    Checker {
        sources: &NO_SOURCES,
        diags: kept.diags,
        types: kept.types,
        values: kept.values,
        entry: kept.entry,
        subst: kept.subst,
        var_origin: kept.var_origin,
        scope: kept.scope,
        lin_log: kept.lin_log,
        lin_examined: kept.lin_examined,
        by_name: kept.by_name,
        barrier: kept.barrier,
        closures: kept.closures,
        loops: kept.loops,
        in_refinement: kept.in_refinement,
        facts: kept.facts,
        funcs: kept.funcs,
        solver: kept.solver,
        folded: kept.folded,
        deadline: kept.deadline,
        started: kept.started,
        solver_time: kept.solver_time,
        timed_out: kept.timed_out,
        name_counts: kept.name_counts,
        resolving: kept.resolving,
        alias_exprs: kept.alias_exprs,
        holes: kept.holes,
        hole_sites: kept.hole_sites,
        fills: kept.fills,
        filled: kept.filled,
        calls: kept.calls,
        pending_lists: kept.pending_lists,
        duplicate_values: kept.duplicate_values,
        bound_before_inferred: kept.bound_before_inferred,
        linear_types: kept.linear_types,
        float_types: kept.float_types,
        role: kept.role,
        alias_roles: kept.alias_roles,
        in_label: kept.in_label,
        labeled_blocks: kept.labeled_blocks,
        measure_defaults: kept.measure_defaults,
        entry_facts: kept.entry_facts,
    }
}
