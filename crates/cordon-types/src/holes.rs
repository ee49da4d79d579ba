//! Typed holes: what a checked program tells a model about each `agent[T](task, args..)` it
//! leaves open ([`HoleSite`]), and the check of a model's fill against its hole
//! ([`check_fill`], [`check_nested_fill`]).
//!
//! A fill is checked as if the hole were replaced by a closure called on the spot, whose
//! parameters are the hole's arguments (named as [`HoleSite::args`] says), whose body is the
//! fill and whose result type is the hole's `T`. The program is checked again with the fill in
//! place, so the fill is checked in the hole's own typing environment: it sees the bindings in
//! scope and the facts known there (`if` conditions, `let` definitions), may use the
//! capabilities in scope, cannot use linear values it was not given (a closure captures none),
//! and its declarations are checked like a plan's (no host declarations). Only the body that
//! holds the hole and the fill's own declarations are checked again: the rest of the program
//! was accepted already and cannot see the fill.

use std::collections::HashSet;
use std::sync::Arc;

use cordon_smt::Term;
use cordon_syntax::ast::{Expr, ExprKind, Ident, Module};
use cordon_syntax::{Code, Diagnostic, FileId, SourceMap, Span};

use crate::state::Typed;
use crate::state::{Checker, ClosureFrame, Lin, Role, ValueDef};
use crate::ty::Ty;
use crate::{Calls, CheckOptions, Checked};

/// One hole of a checked program (or fill): what a model filling it must produce and may name.
#[derive(Clone, Debug)]
pub struct HoleSite {
    /// Its index in [`Checked::holes`] (or [`CheckedFill::holes`]): holes are in source order.
    pub id: usize,
    /// The whole `agent[..](..)` expression.
    pub span: Span,
    /// The type the fill must have, as source text (`{n: Int | n >= 0}`, `(String, Session)`).
    pub expected: String,
    /// The local bindings visible at the hole, innermost last, without those shadowed by
    /// another binding or by an argument. Linear ones are listed, but a fill may use them only
    /// if they are passed as arguments. Declarations (functions, constants) are not listed.
    pub bindings: Vec<HoleBinding>,
    /// The hole's arguments after the task, with the names the fill uses for them.
    pub args: Vec<HoleBinding>,
}

/// A name a fill may use, with its type as source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoleBinding {
    pub name: String,
    pub ty: String,
    pub kind: BindingKind,
    /// The measures of the value that nothing at the hole decides (`tainted(s)`): a tool that
    /// needs one of them either way cannot take it.
    pub undecided: Vec<String>,
}

/// What a binding holds, for prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// Plain data: used any number of times.
    Data,
    /// A linear value (or data holding one): used exactly once.
    Linear,
    /// A capability: its tools may be called.
    Capability,
    /// A function value.
    Function,
}

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
    calls: Calls,
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

    /// The holes in the fill itself, in source order (filled with [`check_nested_fill`]).
    pub fn holes(&self) -> &[HoleSite] {
        &self.holes
    }

    /// What each call of the fill calls.
    pub fn calls(&self) -> &Calls {
        &self.calls
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
    let calls = report.calls.in_file(fill);
    FillOutcome { diagnostics, fill: Some(CheckedFill { hole, module, arg_names, holes, chain, calls }) }
}

fn no_such_hole(fill: FileId, hole: usize) -> FillOutcome {
    let d = Diagnostic::error(Code::UndefinedName, Span::new(fill, 0, 0), format!("there is no hole #{hole}"));
    FillOutcome { diagnostics: vec![d], fill: None }
}

/// Sorts hole sites into source order and numbers them.
pub(crate) fn renumber(mut sites: Vec<HoleSite>) -> Vec<HoleSite> {
    sites.sort_by_key(|s| (s.span.file, s.span.start, s.span.end));
    for (i, s) in sites.iter_mut().enumerate() {
        s.id = i;
    }
    sites
}

/// The names a fill gives a hole's arguments: a plain variable keeps its name, anything else
/// is `argN` (`N` its position after the task), made distinct from the other names.
pub(crate) fn arg_names(args: &[Expr]) -> Vec<String> {
    let plain: Vec<Option<&str>> = args
        .iter()
        .map(|a| match &a.kind {
            ExprKind::Name(id) if id.name != "None" => Some(id.name.as_str()),
            _ => None,
        })
        .collect();
    let mut names = Vec::new();
    for (i, p) in plain.iter().enumerate() {
        let name = match p {
            Some(n) => n.to_string(),
            None => {
                let mut n = format!("arg{}", i + 1);
                while plain.contains(&Some(n.as_str())) {
                    n.push('_');
                }
                n
            }
        };
        names.push(name);
    }
    names
}

impl Checker<'_> {
    /// Records what a fill of the hole at `span` must produce and may name.
    pub(crate) fn record_hole(&mut self, span: Span, expected: &Ty, params: &[(String, Typed)]) {
        if self.hole_sites.iter().any(|s| s.span == span) {
            return;
        }
        let bindings = self.bindings_at_hole(params);
        let args = params.iter().map(|(n, t)| self.hole_binding(n, &t.ty, t.term.as_ref())).collect();
        let expected = self.resolve(expected).to_string();
        self.hole_sites.push(HoleSite { id: self.hole_sites.len(), span, expected, bindings, args });
    }

    /// The visible bindings a fill may name, innermost last: not shadowed (by an inner binding
    /// or an argument), and not linear values already used.
    fn bindings_at_hole(&mut self, params: &[(String, Typed)]) -> Vec<HoleBinding> {
        let mut seen: HashSet<String> = params.iter().map(|(n, _)| n.clone()).collect();
        let mut visible = Vec::new();
        for b in self.visible_bindings().rev() {
            if !seen.insert(b.name.clone()) || matches!(b.lin, Some(Lin::Consumed(_) | Lin::Misused)) {
                continue;
            }
            visible.push((b.name.clone(), b.ty.clone(), b.term.clone()));
        }
        visible.reverse();
        visible.iter().map(|(name, ty, term)| self.hole_binding(name, ty, term.as_ref())).collect()
    }

    fn hole_binding(&mut self, name: &str, ty: &Ty, term: Option<&Term>) -> HoleBinding {
        let ty = self.resolve(ty);
        let kind = match ty.base() {
            Ty::Cap(_) => BindingKind::Capability,
            Ty::Fn(_) => BindingKind::Function,
            t if self.is_linear(t) => BindingKind::Linear,
            _ => BindingKind::Data,
        };
        let (ty, undecided) = self.shown_type(name, &ty, term);
        HoleBinding { name: name.to_string(), ty, kind, undecided }
    }

    /// A binding's type as a prompt shows it: with what is known of it in words the fill can
    /// read. A refinement that names other values (`{s2: Session | tainted(s2) == (r.private ||
    /// tainted(s))}`, from a tool's signature whose parameters are not in scope) is replaced by
    /// what the facts at the hole decide of the value's measures (`{s: Session | tainted(s)}`,
    /// `{s: Session | !tainted(s)}`), or by the bare type when they decide nothing. A value of
    /// a type with measures is shown with what is known of them even when its type says nothing
    /// (a session the host kept, known tainted). Returned with it: the measures nothing decides.
    fn shown_type(&mut self, name: &str, ty: &Ty, term: Option<&Term>) -> (String, Vec<String>) {
        let names_others = matches!(ty, Ty::Refined(r) if !r.env.is_empty());
        let base = ty.base().clone();
        let (known, undecided) = match (&base, term) {
            (Ty::Linear(linear) | Ty::Opaque(linear, _), Some(term)) => self.known_measures(name, linear, term),
            _ => (Vec::new(), Vec::new()),
        };
        let shown = match (known.is_empty(), names_others) {
            (false, _) => format!("{{{name}: {base} | {}}}", known.join(" && ")),
            (true, true) => base.to_string(),
            (true, false) => ty.to_string(),
        };
        (shown, undecided)
    }

    /// `m(name)` or `!m(name)` for each boolean measure over `linear` that the facts decide for
    /// `term`; and `m(name)` for each they do not.
    fn known_measures(&mut self, name: &str, linear: &str, term: &Term) -> (Vec<String>, Vec<String>) {
        let over_it = |p: &Ty| matches!(p.base(), Ty::Linear(n) | Ty::Opaque(n, _) if &**n == linear);
        let mut measures: Vec<String> = self
            .values
            .iter()
            .filter_map(|(m, def)| match def {
                ValueDef::Measure(sig)
                    if matches!(sig.ret.base(), Ty::Bool)
                        && matches!(sig.params.as_slice(), [(_, p)] if over_it(p)) =>
                {
                    Some(m.clone())
                }
                _ => None,
            })
            .collect();
        measures.sort();
        let (mut known, mut undecided) = (Vec::new(), Vec::new());
        for m in measures {
            let holds = Term::App(m.clone(), vec![term.clone()]);
            if self.known(&holds) {
                known.push(format!("{m}({name})"));
            } else if self.known(&Term::Not(Box::new(holds))) {
                known.push(format!("!{m}({name})"));
            } else {
                undecided.push(format!("{m}({name})"));
            }
        }
        (known, undecided)
    }

    /// Checks a fill in its hole's place: as the body of a closure called on the spot with the
    /// hole's arguments as `params`, returning `expected`. `hole_ty` is the type the program
    /// gives the hole's value (second-class if a capability is in scope).
    pub(crate) fn check_fill_body(&mut self, fill: &Module, expected: &Ty, hole_ty: &Ty, params: &[(String, Typed)]) {
        let depth = self.scope.len();
        let outer = self.lin_mark();
        let mark = self.facts.len();
        let role = std::mem::replace(&mut self.role, Role::Plan);
        let loops = std::mem::take(&mut self.loops);
        self.closures.push(ClosureFrame { depth, captures_capability: false, fill: true });
        let at = Span::new(fill.file, fill.body.span.start, fill.body.span.start);
        for (name, t) in params {
            self.push_param(&Ident { name: name.clone(), span: at }, t.ty.clone(), t.term.clone());
        }
        let body = self.check_block(&fill.body, Some(expected));
        if self.is_second_class(&body.ty) && !self.is_second_class(hole_ty) {
            let span = fill.body.tail.as_ref().map_or(fill.body.span, |t| t.span);
            self.capability_escapes(span, &body.ty);
        }
        self.end_scope(depth);
        self.closures.pop();
        self.loops = loops;
        self.role = role;
        self.facts.truncate(mark);
        // The fill cannot consume the program's linear values; an attempt left them as they were.
        self.lin_undo(outer);
    }

    /// A use in a fill of a linear value from outside it.
    pub(crate) fn linear_outside_fill(&mut self, name: &str, span: Span) {
        self.error(
            Code::LinearCaptured,
            span,
            format!("the fill cannot use the linear value `{name}`: it was not passed to the hole"),
        )
        .help = Some("a fill may use only the linear values passed to its hole as arguments".into());
    }
}
