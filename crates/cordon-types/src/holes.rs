//! Typed holes: the check of a model's fill against its hole ([`check_fill`],
//! [`check_nested_fill`]). What a checked program tells a model about each
//! `agent[T](task, args..)` it leaves open is its [`HoleSite`] (`hole_site.rs`).
//!
//! A fill is checked as if the hole were replaced by a closure called on the spot, whose
//! parameters are the hole's arguments (named as [`HoleSite::args`] says), whose body is the
//! fill and whose result type is the hole's `T`. The program is checked again with the fill in
//! place (`expr/holes.rs` checks it where the hole stands), so the fill is checked in the hole's
//! own typing environment: it sees the bindings in scope and the facts known there (`if`
//! conditions, `let` definitions), may use the capabilities in scope, cannot use linear values
//! it was not given (a closure captures none), and its declarations are checked like a plan's
//! (no host declarations). Only the body that holds the hole and the fill's own declarations are
//! checked again: the rest of the program was accepted already and cannot see the fill.
//!
//! At the top of the crate with `lib.rs`, whose check it runs again: nothing below imports it.

use std::sync::Arc;

use cordon_syntax::ast::Module;
use cordon_syntax::{Code, Diagnostic, FileId, SourceMap, Span};

use crate::Checked;
use crate::declared::Function;
use crate::hole_site::{HoleSite, renumber};
use crate::node::Resolved;
use crate::options::CheckOptions;

/// The result of checking a fill: the diagnostics in the fill, and the checked fill exactly
/// when none is an error. A fill with syntax errors gets only those.
#[derive(Debug)]
pub struct FillOutcome {
    pub diagnostics: Vec<Diagnostic>,
    pub fill: Option<CheckedFill>,
}

impl FillOutcome {
    pub fn accepted(&self) -> bool {
        self.fill.is_some()
    }
}

/// A fill that passed the checker in its hole's place. It has no public constructor, so
/// holding one proves the fill was checked (only [`check_fill`] and [`check_nested_fill`]
/// make one).
#[derive(Clone, Debug)]
pub struct CheckedFill {
    hole: usize,
    module: Arc<Module>,
    arg_names: Vec<String>,
    holes: Vec<HoleSite>,
    /// The fills from the outermost down to this one, each with the span of its hole: what a
    /// nested fill's check puts in place.
    chain: Vec<(Span, Arc<Module>)>,
    resolved: Resolved,
    functions: Vec<Function>,
}

impl CheckedFill {
    /// The index of the hole it fills, among its parent's holes.
    pub fn hole(&self) -> usize {
        self.hole
    }

    /// The parsed fill: declarations and a body whose value is the hole's.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The names the fill's body gives the hole's arguments (after the task), in order.
    pub fn arg_names(&self) -> &[String] {
        &self.arg_names
    }

    /// The functions the fill declares, by name, as the checker resolved them (the program's
    /// are in [`Checked::declarations`]).
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// The holes in the fill itself, in source order (filled with [`check_nested_fill`]).
    pub fn holes(&self) -> &[HoleSite] {
        &self.holes
    }

    /// What each call calls, and what each cast converts to, in the fill and in the program
    /// (and the fills it is nested in) as checked with it in place.
    pub fn resolved(&self) -> &Resolved {
        &self.resolved
    }
}

/// Checks the source `fill` as the fill of hole `hole` of `checked` (an index into
/// [`Checked::holes`]). `checked` must come from `sources`.
pub fn check_fill(
    sources: &SourceMap,
    checked: &Checked,
    hole: usize,
    fill: FileId,
    options: &CheckOptions,
) -> FillOutcome {
    match checked.holes().get(hole) {
        Some(site) => check_in_place(sources, checked, Vec::new(), site, hole, fill, options),
        None => no_such_hole(fill, hole),
    }
}

/// Checks the source `fill` as the fill of hole `hole` of `parent` (an index into
/// [`CheckedFill::holes`]), where `parent` is a checked fill of (a fill of ..) `checked`.
pub fn check_nested_fill(
    sources: &SourceMap,
    checked: &Checked,
    parent: &CheckedFill,
    hole: usize,
    fill: FileId,
    options: &CheckOptions,
) -> FillOutcome {
    match parent.holes.get(hole) {
        Some(site) => check_in_place(sources, checked, parent.chain.clone(), site, hole, fill, options),
        None => no_such_hole(fill, hole),
    }
}

/// Parses `fill` and checks the program again with it (and the fills it is nested in) in place.
fn check_in_place(
    sources: &SourceMap,
    checked: &Checked,
    mut chain: Vec<(Span, Arc<Module>)>,
    site: &HoleSite,
    hole: usize,
    fill: FileId,
    options: &CheckOptions,
) -> FillOutcome {
    let taken = checked.policies().iter().chain(checked.plan()).any(|m| m.file == fill)
        || chain.iter().any(|(_, m)| m.file == fill);
    if taken {
        let d = Diagnostic::error(Code::DuplicateDefinition, Span::new(fill, 0, 0), "a fill needs a file of its own");
        return FillOutcome { diagnostics: vec![d], fill: None };
    }
    let parsed = cordon_syntax::parse(fill, &sources.file(fill).text);
    if parsed.diagnostics.iter().any(Diagnostic::is_error) {
        return FillOutcome { diagnostics: parsed.diagnostics, fill: None };
    }
    let module = Arc::new(parsed.module);
    chain.push((site.span, module.clone()));
    let report = crate::check_modules(sources, checked.policies(), checked.plan(), &chain, options);
    let mut diagnostics = parsed.diagnostics;
    let (mut mine, others): (Vec<Diagnostic>, Vec<Diagnostic>) =
        report.diagnostics.into_iter().partition(|d| d.span().file == fill);
    diagnostics.append(&mut mine);
    // Errors outside the fill would be the checker's bug: shown rather than hidden, never
    // accepted.
    diagnostics.extend(others.into_iter().filter(Diagnostic::is_error));
    if !chain.iter().all(|(span, _)| report.filled.contains(span)) {
        let d = Diagnostic::error(Code::UndefinedName, Span::new(fill, 0, 0), "the hole of this fill was not found");
        diagnostics.push(d);
    }
    crate::sort_diagnostics(&mut diagnostics);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return FillOutcome { diagnostics, fill: None };
    }
    let holes = renumber(report.sites.into_iter().filter(|s| s.span.file == fill).collect());
    let arg_names = site.args.iter().map(|a| a.name.clone()).collect();
    let functions = report.fill_functions;
    let checked = CheckedFill { hole, module, arg_names, holes, chain, resolved: report.resolved, functions };
    FillOutcome { diagnostics, fill: Some(checked) }
}

fn no_such_hole(fill: FileId, hole: usize) -> FillOutcome {
    let d = Diagnostic::error(Code::UndefinedName, Span::new(fill, 0, 0), format!("there is no hole #{hole}"));
    FillOutcome { diagnostics: vec![d], fill: None }
}
