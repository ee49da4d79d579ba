//! What a checked plan may do with which data, before any of it runs.
//!
//! [`analyze`] runs a static label analysis over a checked program: an abstract interpretation
//! of the run time's label rules (the `analyze` module has them) that gives, at every
//! tool call the plan may make, bounds on the label of each argument and of the decision to
//! call, the sink each must flow to, how many times at most the call is made, under which
//! conditions, and where its arguments come from. The bounds are two-sided: `hi` is above every
//! label the run time can give (the summary never claims less than a run does), `lo` is below
//! every one (so a call whose `lo` already fails its sink fails it on every run that reaches it).
//!
//! From the summary: [`Summary::diagnostics`] are the check-time errors (a call that must break
//! its sink, `label-flow`; a call to a `@approval(deny)` tool, `approval-denied`), and
//! [`Summary::render`] is the effect summary a person reads (`cordon check --effects`).
//! [`check`] is the check every front end runs (the checker, then these errors);
//! [`analyze_fill`] reads a model's fill the same way, with its hole's real values, before it
//! runs.

mod abs;
mod analyze;
mod report;
mod site;

use std::collections::{BTreeMap, HashSet};

use cordon_label::{Label, Release};
use cordon_runtime::HoleRequest;
use cordon_syntax::ast::Module;
use cordon_syntax::{Diagnostic, FileId, SourceMap, Span};
use cordon_types::{CheckOptions, Checked, CheckedFill, Outcome};
use serde::Serialize;

use abs::{Abs, Kind};
pub use abs::{Bounds, Origin, Origins};
use analyze::{Analyzer, Decls, Stop};
pub use report::origins_in_words;
pub use site::{Count, Destination, HoleReach, Param, Site, Verdict};

/// What a plan may do: every tool call, in source order, and every hole.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub calls: Vec<Site>,
    pub holes: Vec<HoleReach>,
    /// `false` if the plan was too large to analyse: then nothing is claimed.
    pub complete: bool,
    /// The releases the policies declare, with their labels for this user.
    pub releases: Vec<Release>,
    /// The label each name a `let` or a pattern binds may carry (for an editor's hover; not
    /// part of the summary's JSON).
    #[serde(skip)]
    pub bindings: BTreeMap<Span, Bounds>,
}

impl Summary {
    /// Nothing claimed: no call, no hole, not complete.
    fn empty() -> Summary {
        Summary {
            calls: Vec::new(),
            holes: Vec::new(),
            complete: false,
            releases: Vec::new(),
            bindings: BTreeMap::new(),
        }
    }
}

/// Checks a plan as `cordon check` does: the checker's rules, then the labels' ([`analyze`]'s
/// errors, for the principal `user`; with `asked`, a person speaking for `user` will be shown
/// cards, and refusals they may lift are warnings, see [`Summary::diagnostics`]). The program
/// is accepted only if neither gives an error; the summary is there when the checker accepted
/// it.
pub fn check(
    sources: &SourceMap,
    policies: &[FileId],
    plan: Option<FileId>,
    options: &CheckOptions,
    user: &str,
    asked: bool,
) -> (Outcome, Option<Summary>) {
    let mut outcome = cordon_types::check(sources, policies, plan, options);
    let Some(checked) = &outcome.program else { return (outcome, None) };
    let summary = analyze(checked, sources, user);
    let found = summary.diagnostics(asked.then_some(user));
    if !found.is_empty() {
        let rejected = found.iter().any(Diagnostic::is_error);
        outcome.diagnostics.extend(found);
        outcome.diagnostics.sort_by_key(|d| (d.span().file, d.span().start));
        if rejected {
            outcome.program = None;
        }
    }
    (outcome, Some(summary))
}

/// Analyses a checked program's plan for the principal `user` (whom `user()` names).
pub fn analyze(checked: &Checked, sources: &SourceMap, user: &str) -> Summary {
    let Some(plan) = checked.plan() else {
        return Summary { complete: true, ..Summary::empty() };
    };
    let modules: Vec<&Module> = checked.policies().iter().chain(std::iter::once(plan)).collect();
    let decls = Decls::of(checked.declarations(), &[], &modules, checked.resolved());
    let params: Vec<(String, Abs)> = match checked.declarations().entry() {
        Some(entry) => entry
            .params
            .iter()
            .map(|p| {
                let origins = Origins::one(Origin::Input { name: p.name.clone() });
                // The host gives capabilities and linear values.
                let kind = match p.ty.head() {
                    Some(n) if decls.is_capability(n) => Kind::Capability(n.into()),
                    Some(n) => Kind::Handle(n.into()),
                    None => Kind::Unknown,
                };
                (p.name.clone(), Abs::new(kind, Bounds::bottom(), origins))
            })
            .collect(),
        None => Vec::new(),
    };
    summarize(&decls, sources, user, &params, &Bounds::bottom(), &plan.body)
}

/// The releases `checked`'s policies declare, their labels computed for `user`: what may leave
/// a group, to where, and whether the user is asked (`cordon check --policy` lists them).
pub fn releases(checked: &Checked, sources: &SourceMap, user: &str) -> Vec<Release> {
    let modules: Vec<&Module> = checked.policies().iter().collect();
    let decls = Decls::of(checked.declarations(), &[], &modules, checked.resolved());
    let mut a = Analyzer::new(&decls, sources, user, HashSet::new());
    match a.compute_releases() {
        Ok(()) => a.releases,
        Err(_) => Vec::new(),
    }
}

/// Analyses a fill the checker accepted for a hole the run reached, before it runs: its body,
/// with the hole's bindings and arguments as the run holds them now (their values and labels,
/// exactly), under `pc` (the hole's program-counter label joined with what the model was
/// shown, which the fill runs under). Its `diagnostics` are calls of the fill refused on every
/// path, fed back to the model like the checker's; holes inside it stay open.
pub fn analyze_fill(
    checked: &Checked,
    fill: &CheckedFill,
    request: &HoleRequest,
    pc: &Label,
    sources: &SourceMap,
    user: &str,
) -> Summary {
    let mut modules: Vec<&Module> = checked.policies().iter().collect();
    modules.extend(checked.plan());
    modules.push(fill.module());
    let decls = Decls::of(checked.declarations(), fill.functions(), &modules, fill.resolved());
    let opaque = |ty: &str| checked.declarations().record(ty).is_some_and(|r| r.opaque);
    let mut bindings: Vec<(String, Abs)> = request
        .scope
        .iter()
        .map(|(n, v)| (n.to_string(), Abs::of_val(v, &opaque, &Origins::one(Origin::Input { name: n.to_string() }))))
        .collect();
    for (n, v) in fill.arg_names().iter().zip(&request.args) {
        bindings.push((n.clone(), Abs::of_val(v, &opaque, &Origins::one(Origin::Input { name: n.clone() }))));
    }
    let pc = Bounds::exactly(request.pc.join(pc).dc());
    summarize(&decls, sources, user, &bindings, &pc, &fill.module().body)
}

/// Runs the abstract interpreter over `body` with `bindings` in scope under `pc`, again each
/// time it finds a function recursive, until it finishes or gives up.
fn summarize(
    decls: &Decls<'_>,
    sources: &SourceMap,
    user: &str,
    bindings: &[(String, Abs)],
    pc: &Bounds,
    body: &cordon_syntax::ast::Block,
) -> Summary {
    let mut recursive = HashSet::new();
    loop {
        let mut a = Analyzer::new(decls, sources, user, recursive.clone());
        for (n, v) in bindings {
            a.bind(n, v.clone());
        }
        a.raise_pc(pc);
        match a.compute_releases().and_then(|()| a.block(body)) {
            Ok(_) => {
                let calls = a.sites.into_values().collect();
                let holes = a.holes.into_values().collect();
                return Summary { calls, holes, complete: true, releases: a.releases, bindings: a.bindings };
            }
            Err(Stop::Restart) => recursive = a.recursive,
            Err(Stop::TooBig) => return Summary { releases: a.releases, ..Summary::empty() },
        }
    }
}
