//! Type checking for Cordon: name resolution, bidirectional type checking with local inference,
//! refinements proved with Z3, linearity, unforgeable host types, second-class capabilities
//! and exhaustive `match`. The checker does no IO and never runs code.
//!
//! ```
//! use cordon_syntax::SourceMap;
//! use cordon_types::{CheckOptions, check};
//!
//! let mut sources = SourceMap::new();
//! let plan = sources.add(
//!     "plan.cord",
//!     "fn divide(x: Int, y: {v: Int | v != 0}) -> Int { x / y }\ndivide(4, 0)",
//! );
//! let outcome = check(&sources, &[], Some(plan), &CheckOptions::default());
//! assert!(!outcome.accepted());
//! assert_eq!(outcome.diagnostics[0].code.as_str(), "refinement-unproven");
//! ```

mod arith;
mod bindings;
mod builtins;
mod cache;
mod calls;
mod casts;
mod checker;
mod declared;
mod defines;
mod exhaustive;
mod export;
mod expr;
mod facts;
mod hints;
mod hole_site;
mod holes;
mod lint;
mod logic;
pub mod node;
mod options;
mod state;
mod ty;
mod written;

pub use bindings::BindingType;
pub use calls::{BySite, Callee, Calls, ExprSite};
pub use casts::Casts;
/// The keys of `@card` the gate reads, and the test for a key misspelt from one (an error).
pub use checker::annotations::{CARD_KEYS, near_miss as near_card_key};
pub use declared::{
    ApprovalTier, Capability, Declarations, Entry, Enum, Field, Function, LabelKey, MeasureDefinition, Param, Record,
    Release, Tool, ToolAnnotations, Type, Variant,
};
pub use hints::RECURSION_HINT;
pub use hole_site::{BindingKind, HoleBinding, HoleSite};
pub use holes::{CheckedFill, FillOutcome, check_fill, check_nested_fill};
pub use lint::label_defaults;
pub use node::Resolved;
pub use options::{CheckOptions, EntryFact, FactValue};
pub use state::BUILTIN_TYPES;
pub use written::{UnresolvedType, WrittenTypes};

use cordon_smt::Term;
use cordon_syntax::ast::{FnDecl, ItemKind, Module, Stmt};
use cordon_syntax::{Code, Diagnostic, FileId, SourceMap, Span};

use std::collections::HashSet;
use std::sync::Arc;

use state::{Checker, Lin, Role, ValueDef};
use ty::Ty;

/// The result of checking: every diagnostic, sorted by position; the program is accepted if
/// and only if none is an error. A program with syntax errors gets only those.
#[derive(Debug)]
pub struct Outcome {
    pub diagnostics: Vec<Diagnostic>,
    /// Solver queries asked and answered from the cache.
    pub solver_queries: u64,
    pub solver_cache_hits: u64,
    /// Queries handed to Z3, and the hypotheses they carried in all: what grows faster than
    /// a plan when obligations carry more facts than they need (the scaling guard counts these).
    pub solver_calls: u64,
    pub solver_hypotheses: u64,
    /// Obligations proved by folding them with the known values, or from the bounds nearest to
    /// them, without a query.
    pub folded: u64,
    /// Facts looked at to choose those an obligation carries, in all.
    pub facts_examined: u64,
    /// Changes of linear bindings' states looked at where paths meet (branches, guards, `&&`
    /// and `||`, fills), in all: grows with the plan's branches, not with the linear values in
    /// scope at each (the scaling guard counts it).
    pub linear_examined: u64,
    /// Typed holes in the plan.
    pub holes: usize,
    /// The type of each binding of the policies' functions and the plan, when
    /// [`CheckOptions::record_bindings`] asked for them and the program parsed (accepted or
    /// not: what was inferred up to the errors).
    pub bindings: Vec<BindingType>,
    /// The checked program: `Some` if and only if it is accepted.
    pub program: Option<Checked>,
}

/// A program that passed the checker: the parsed policy modules and plan, what they declare
/// (resolved), what each of its calls calls and what each of its casts converts to. It has no
/// public constructor, so holding one proves the program was checked (only [`check`] makes one).
#[derive(Debug)]
pub struct Checked {
    policies: Vec<Module>,
    plan: Option<Module>,
    holes: Vec<HoleSite>,
    resolved: Resolved,
    declarations: Arc<Declarations>,
}

impl Checked {
    /// The policy modules, in the order they were given to [`check`].
    pub fn policies(&self) -> &[Module] {
        &self.policies
    }

    /// The plan, if one was checked.
    pub fn plan(&self) -> Option<&Module> {
        self.plan.as_ref()
    }

    /// Every `agent[..](..)` of the policies and the plan, in source order (policies first);
    /// a hole's index here is its id, the `hole` of [`check_fill`].
    pub fn holes(&self) -> &[HoleSite] {
        &self.holes
    }

    /// What each call of the policies and the plan calls, and what each cast converts to: read
    /// the program through it ([`Resolved::node`]), not by the syntax tree's kinds.
    pub fn resolved(&self) -> &Resolved {
        &self.resolved
    }

    /// What the policies and the plan declare, as the checker resolved it: read this, not the
    /// modules' items, for a type, a tool's signature or the entry. Shared: the program
    /// compiled from the check holds the same.
    pub fn declarations(&self) -> &Arc<Declarations> {
        &self.declarations
    }
}

impl Outcome {
    pub fn accepted(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Checks `plan` (if any) against the policy modules, in the order given.
/// The `implicit-label` warnings for policy modules that parse: where a policy relies on a
/// default label ([`label_defaults`]). Modules with syntax errors are skipped (`check` reports
/// those).
pub fn lint(sources: &SourceMap, policies: &[FileId]) -> Vec<Diagnostic> {
    let modules: Vec<Module> = policies
        .iter()
        .map(|f| cordon_syntax::parse(*f, &sources.file(*f).text))
        .filter(|p| !p.diagnostics.iter().any(Diagnostic::is_error))
        .map(|p| p.module)
        .collect();
    label_defaults(&modules)
}

pub fn check(sources: &SourceMap, policies: &[FileId], plan: Option<FileId>, options: &CheckOptions) -> Outcome {
    let mut diagnostics = Vec::new();
    let mut parse = |file: FileId| {
        let parsed = cordon_syntax::parse(file, &sources.file(file).text);
        diagnostics.extend(parsed.diagnostics);
        parsed.module
    };
    // The policies as the last check on this thread declared them, if they are the same.
    let policy_files = policies;
    let kept = cache::declared::<Checker<'static>>(sources, policies, options.solver_timeout_ms);
    let (policies, declared) = match kept {
        Some((modules, checker)) => (modules, Some(checker.attached(sources, options))),
        None => (policies.iter().map(|f| parse(*f)).collect(), None),
    };
    let plan = plan.map(parse);
    // A tree with syntax errors is incomplete: checking it would report their echoes. Every
    // syntax error is reported; type errors come once the program parses.
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Outcome {
            diagnostics,
            solver_queries: 0,
            solver_cache_hits: 0,
            solver_calls: 0,
            solver_hypotheses: 0,
            folded: 0,
            facts_examined: 0,
            linear_examined: 0,
            holes: 0,
            bindings: Vec::new(),
            program: None,
        };
    }
    // No syntax error came from them (the check would have stopped).
    let mut checker = declared.unwrap_or_else(|| declare_and_keep(sources, policy_files, &policies, true, options));
    let report = check_against(&mut checker, &policies, plan.as_ref(), &[]);
    diagnostics.extend(report.diagnostics);
    sort_diagnostics(&mut diagnostics);
    let program = if diagnostics.iter().any(Diagnostic::is_error) {
        None
    } else {
        let declarations = Arc::new(export::declarations(&checker));
        let holes = hole_site::renumber(report.sites);
        Some(Checked { policies, plan, holes, resolved: report.resolved, declarations })
    };
    Outcome {
        diagnostics,
        solver_queries: report.solver_queries,
        solver_cache_hits: report.solver_cache_hits,
        solver_calls: report.solver_calls,
        solver_hypotheses: report.solver_hypotheses,
        folded: report.folded,
        facts_examined: report.facts_examined,
        linear_examined: report.linear_examined,
        holes: report.holes,
        bindings: report.bindings,
        program,
    }
}

/// What the policy modules declare, resolved by the checker, for what is set up before any plan
/// is checked against them (the hosts that serve their capabilities, the plan of a request put
/// to a model); and every error declaring them found. It is the declaring half of [`check`],
/// and shares its work with the next check of the same policies on this thread.
///
/// Of policies with errors, the declarations hold what resolved: an item whose type has an
/// error is left out. A check of the same policies rejects every plan then, so nothing runs on
/// them; a function's body is the check's to look at, not this.
pub fn declare(sources: &SourceMap, policies: &[FileId], options: &CheckOptions) -> (Declarations, Vec<Diagnostic>) {
    if let Some((_, checker)) = cache::declared::<Checker<'static>>(sources, policies, options.solver_timeout_ms) {
        let mut diagnostics = checker.diags.clone();
        sort_diagnostics(&mut diagnostics);
        return (export::declarations(&checker), diagnostics);
    }
    let mut diagnostics = Vec::new();
    let modules: Vec<Module> = policies
        .iter()
        .map(|&file| {
            let parsed = cordon_syntax::parse(file, &sources.file(file).text);
            diagnostics.extend(parsed.diagnostics);
            parsed.module
        })
        .collect();
    let parsed = !diagnostics.iter().any(Diagnostic::is_error);
    let checker = declare_and_keep(sources, policies, &modules, parsed, options);
    diagnostics.extend(checker.diags.iter().cloned());
    sort_diagnostics(&mut diagnostics);
    (export::declarations(&checker), diagnostics)
}

/// What the policy modules and the plan declare, resolved by the checker as [`check`] resolves
/// them, whether or not it would accept the program: the declaring half of a check, its bodies
/// left unchecked. For compiling again a program checked before (a saved run, whose sources were
/// checked when it was made), and code the checker may reject (the runtime's tests of its own
/// re-checks); `plan` is parsed, as such a caller has it to compile.
///
/// The plan's own functions are not in it (what is compiled from it reads none; the static
/// analysis, which does, has the checked program's [`Checked::declarations`]). So it shares the
/// policies' declaration with the last check of them on this thread: a plan of functions and
/// constants declares no type, and then what the policies declare is the answer, resolved once
/// for every program of the same policies.
pub fn declare_program(
    sources: &SourceMap,
    policies: &[FileId],
    plan: Option<&Module>,
    options: &CheckOptions,
) -> Arc<Declarations> {
    let declares_types =
        plan.iter().flat_map(|m| &m.items).any(|i| !matches!(i.kind, ItemKind::Fn(_) | ItemKind::Const { .. }));
    let timeout = options.solver_timeout_ms;
    let exported = |checker: &Checker<'static>| Arc::new(export::declarations(checker));
    if !declares_types && let Some(declared) = cache::derived(sources, policies, timeout, exported) {
        return declared;
    }
    let mut checker = match cache::declared::<Checker<'static>>(sources, policies, timeout) {
        Some((_, checker)) => checker.attached(sources, options),
        None => {
            let parsed: Vec<_> = policies.iter().map(|&f| cordon_syntax::parse(f, &sources.file(f).text)).collect();
            let clean = !parsed.iter().flat_map(|p| &p.diagnostics).any(Diagnostic::is_error);
            let modules: Vec<Module> = parsed.into_iter().map(|p| p.module).collect();
            declare_and_keep(sources, policies, &modules, clean, options)
        }
    };
    if let Some(plan) = plan {
        let roles = [(Role::Plan, plan)];
        checker.register_types(&roles);
        checker.declare_items(&roles);
    }
    let mut declared = export::declarations(&checker);
    if let Some(plan) = plan {
        declared.functions.retain(|_, f| f.span.file != plan.file);
    }
    Arc::new(declared)
}

/// What each call of `policies` and `plan` calls and what each of their casts converts to, as
/// far as the checker can tell, whether or not it accepts them: for compiling code the checker
/// rejects (the runtime's tests of its own re-checks). A call whose callee has an error, and a
/// cast whose target has one, is left out.
pub fn resolve_calls_and_casts(sources: &SourceMap, policies: &[FileId], plan: Option<FileId>) -> Resolved {
    let parse = |file: FileId| cordon_syntax::parse(file, &sources.file(file).text).module;
    let policies: Vec<Module> = policies.iter().map(|f| parse(*f)).collect();
    let plan = plan.map(parse);
    let report = check_modules(sources, &policies, plan.as_ref(), &[], &CheckOptions::default());
    report.resolved
}

/// What one run of the checker found.
struct Report {
    diagnostics: Vec<Diagnostic>,
    solver_queries: u64,
    solver_cache_hits: u64,
    solver_calls: u64,
    solver_hypotheses: u64,
    folded: u64,
    facts_examined: u64,
    linear_examined: u64,
    /// The number of holes checked, and what each offers its fill.
    holes: usize,
    sites: Vec<HoleSite>,
    /// The holes whose fill (from `fills`) was checked in place.
    filled: HashSet<Span>,
    resolved: Resolved,
    bindings: Vec<BindingType>,
    /// The functions the last fill (the one being checked) declares.
    fill_functions: Vec<Function>,
}

/// Checks parsed modules: the policies, the plan, and `fills`, each the fill of the hole at its
/// span (a hole of the program or of an earlier fill). With fills, only what can see them is
/// checked again: the function or plan body holding the outermost one, and the fills' own
/// declarations; constants are always checked (their facts are used elsewhere).
fn check_modules(
    sources: &SourceMap,
    policies: &[Module],
    plan: Option<&Module>,
    fills: &[(Span, Arc<Module>)],
    options: &CheckOptions,
) -> Report {
    check_against(&mut declare_policies(sources, policies, options), policies, plan, fills)
}

/// The part of a check that depends on the policies alone: their types and items declared,
/// their constants checked, statements in them reported. A plan is declared and checked after
/// it ([`check_against`]), so every plan checked against the same policies can start from a
/// copy of it (`cache.rs`).
fn declare_policies<'a>(sources: &'a SourceMap, policies: &[Module], options: &CheckOptions) -> Checker<'a> {
    let mut checker = Checker::new(sources, options);
    let roles: Vec<(Role, &Module)> = policies.iter().map(|m| (Role::Policy, m)).collect();
    checker.register_types(&roles);
    checker.declare_items(&roles);
    checker.role = Role::Policy;
    for module in policies {
        checker.check_consts(module);
        report_policy_statements(&mut checker, module);
    }
    checker
}

/// [`declare_policies`] for the policy modules `modules` (of the files `files`), kept for the
/// next check of the same policies on this thread (`cache.rs`) if they parsed (`clean`) and
/// were declared within their time.
fn declare_and_keep<'a>(
    sources: &'a SourceMap,
    files: &[FileId],
    modules: &[Module],
    clean: bool,
    options: &CheckOptions,
) -> Checker<'a> {
    let checker = declare_policies(sources, modules, options);
    if clean && checker.timed_out.is_none() {
        cache::keep(sources, files, options.solver_timeout_ms, modules, checker.clone().detached());
    }
    checker
}

/// Declares and checks the plan and the fills with `checker`, which has declared `policies`.
fn check_against(
    checker: &mut Checker<'_>,
    policies: &[Module],
    plan: Option<&Module>,
    fills: &[(Span, Arc<Module>)],
) -> Report {
    let only = fills.first().map(|(span, _)| *span);
    checker.fills = fills.iter().cloned().collect();
    let mut roles: Vec<(Role, &Module)> = plan.map(|m| (Role::Plan, m)).into_iter().collect();
    roles.extend(fills.iter().map(|(_, m)| (Role::Plan, &**m)));
    checker.register_types(&roles);
    checker.declare_items(&roles);
    checker.role = Role::Plan;
    for (_, module) in &roles {
        checker.check_consts(module);
    }
    // The functions' bodies: the policies' and the plan's (with a fill, only those around its
    // hole), then every fill's.
    let first_fill = usize::from(plan.is_some());
    let bodies = policies.iter().map(|m| (Role::Policy, m, false));
    let bodies = bodies.chain(roles.iter().enumerate().map(|(i, (role, m))| (*role, *m, i >= first_fill)));
    for (role, module, fill) in bodies {
        checker.role = role;
        for item in &module.items {
            if let ItemKind::Fn(decl) = &item.kind
                && (fill || only.is_none_or(|h| contains(decl.body.span, h)))
            {
                checker.check_fn(decl);
            }
        }
    }
    if let Some(module) = plan
        && only.is_none_or(|h| in_plan_body(module, h))
    {
        checker.role = Role::Plan;
        checker.check_plan(module);
    }
    checker.report_uninferred();
    // What was found after the time ran out is the echo of statements left unchecked.
    if let Some(at) = checker.timed_out {
        checker.diags.truncate(at);
    }
    let stats = checker.solver.stats();
    Report {
        diagnostics: std::mem::take(&mut checker.diags),
        solver_queries: stats.queries,
        solver_cache_hits: stats.cache_hits,
        solver_calls: stats.solver_calls,
        solver_hypotheses: stats.hypotheses,
        folded: checker.folded,
        facts_examined: checker.facts.examined(),
        linear_examined: checker.lin_examined,
        holes: checker.holes,
        sites: std::mem::take(&mut checker.hole_sites),
        filled: std::mem::take(&mut checker.filled),
        resolved: std::mem::take(&mut checker.resolved),
        bindings: checker.recorded_bindings(),
        fill_functions: match fills.last() {
            None => Vec::new(),
            Some((_, last)) => export::functions(checker, |at| at.file == last.file),
        },
    }
}

/// Sorts diagnostics by position and drops repeats.
fn sort_diagnostics(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by_key(|d| {
        let s = d.span();
        (s.file, s.start, s.end)
    });
    diagnostics.dedup();
}

/// Is `inner` within `outer`?
fn contains(outer: Span, inner: Span) -> bool {
    outer.file == inner.file && outer.start <= inner.start && inner.end <= outer.end
}

/// Is the span in the plan's body, outside its declarations?
fn in_plan_body(plan: &Module, span: Span) -> bool {
    span.file == plan.file && !plan.items.iter().any(|item| contains(item.span, span))
}

/// A literal term as source text.
fn show_term(t: &Term) -> String {
    match t {
        Term::Bool(b) => b.to_string(),
        Term::Int(n) => n.to_string(),
        Term::Str(s) => format!("{s:?}"),
        other => format!("{other:?}"),
    }
}

fn report_policy_statements(checker: &mut Checker<'_>, module: &Module) {
    let spans = module
        .body
        .stmts
        .iter()
        .map(|s| match s {
            Stmt::Let { span, .. } => *span,
            Stmt::Expr(e) => e.span,
        })
        .chain(module.body.tail.as_ref().map(|t| t.span));
    for span in spans {
        checker.error(Code::StatementInPolicy, span, "a policy module holds declarations only").help =
            Some("move this statement into the plan".into());
    }
}

impl Checker<'_> {
    fn check_consts(&mut self, module: &Module) {
        for item in &module.items {
            let ItemKind::Const { name, value, .. } = &item.kind else { continue };
            let Some(ValueDef::Const { ty, .. }) = self.values.get(&name.name).cloned() else { continue };
            self.begin_body();
            let t = self.check(value, &ty);
            let term = match t.term {
                Some(t @ (Term::Int(_) | Term::Bool(_) | Term::Str(_))) => Some(t),
                _ => None,
            };
            if let Some(ValueDef::Const { term: slot, checked, .. }) = self.values.get_mut(&name.name) {
                *slot = term;
                *checked = true;
            }
        }
    }

    /// Each body starts with no bindings and no facts.
    fn begin_body(&mut self) {
        self.scope.clear();
        self.lin_log.clear();
        self.by_name.clear();
        self.facts.clear();
        self.barrier = 0;
    }

    fn check_fn(&mut self, decl: &FnDecl) {
        let Some(ValueDef::Fn(sig)) = self.values.get(&decl.name.name).cloned() else { return };
        if sig.span != decl.name.span {
            return; // a duplicate definition, already reported
        }
        self.begin_body();
        let names: Vec<_> = decl.params.iter().map(|p| p.name.clone()).collect();
        let ret = self.enter_params(&names, &sig.params, &sig.ret);
        let body = self.check_block(&decl.body, Some(&ret));
        // A declared capability result was reported at the signature.
        if self.is_second_class(&body.ty) && !self.is_second_class(&sig.ret) {
            let span = decl.body.tail.as_ref().map_or(decl.body.span, |t| t.span);
            self.capability_escapes(span, &body.ty);
        }
        self.end_scope(0);
    }

    /// Binds parameters with fresh terms (refinements may mention each other) and returns the
    /// result type closed over them.
    fn enter_params(&mut self, names: &[cordon_syntax::ast::Ident], params: &[(String, Ty)], ret: &Ty) -> Ty {
        let mut terms: Vec<(String, Term)> = Vec::new();
        let mut fresh = Vec::new();
        for (n, t) in params {
            let term = self.sort_of(t).map(|s| Term::Var(self.fresh_name(n), s));
            if let Some(term) = &term {
                terms.push((n.clone(), term.clone()));
            }
            fresh.push(term);
        }
        for ((id, (n, t)), term) in names.iter().zip(params).zip(fresh) {
            let closed = self.close(t, &terms);
            if let Some(term) = &term {
                self.assume(term, &closed, &format!("parameter {n}"));
            }
            self.push_param(id, closed, term);
        }
        self.close(ret, &terms)
    }

    fn check_plan(&mut self, module: &Module) {
        self.begin_body();
        let result_span = module
            .body
            .tail
            .as_ref()
            .map(|t| t.span)
            .or_else(|| {
                module.body.stmts.last().map(|s| match s {
                    Stmt::Let { span, .. } => *span,
                    Stmt::Expr(e) => e.span,
                })
            })
            .unwrap_or(Span::new(module.file, 0, 0));
        let expected = match self.entry.clone() {
            Some(entry) => {
                let names: Vec<_> = entry
                    .params
                    .iter()
                    .map(|(n, _, span)| cordon_syntax::ast::Ident { name: n.clone(), span: *span })
                    .collect();
                let params: Vec<(String, Ty)> = entry.params.iter().map(|(n, t, _)| (n.clone(), t.clone())).collect();
                let ret = self.enter_params(&names, &params, &entry.ret);
                self.assume_entry_facts(&entry);
                Some(ret)
            }
            None => {
                if self.entry_facts.as_ref().is_some_and(|f| !f.is_empty()) {
                    self.error(
                        Code::UndefinedName,
                        result_span,
                        "the host gave facts about an entry, but none is declared",
                    )
                    .help = Some("entry facts name parameters of the policy's `entry`".into());
                }
                None
            }
        };
        let inputs = self.scope.len();
        let result = self.check_block(&module.body, expected.as_ref());
        if self.is_second_class(&result.ty) {
            self.capability_escapes(result_span, &result.ty);
        }
        for i in 0..inputs {
            if self.scope[i].lin == Some(Lin::Live) {
                let name = self.scope[i].name.clone();
                self.error(Code::LinearUnused, result_span, format!("the plan never uses the linear input `{name}`"))
                    .help = Some(format!("use `{name}` and give it back in the result"));
                self.set_lin(i, None);
            }
        }
        self.end_scope(0);
    }

    /// Assumes what holds of the entry's inputs: the host's facts if it gave some, else the
    /// measures' defaults on every host-made input (a fresh session). Facts that contradict the
    /// entry's refinements would make every proof vacuous: they are an error at the entry.
    fn assume_entry_facts(&mut self, entry: &state::Entry) {
        let facts = match self.entry_facts.clone() {
            Some(given) => given.iter().filter_map(|f| self.host_fact(f, entry)).collect(),
            None => self.default_facts(entry),
        };
        let mut vars = HashSet::new();
        for (param, measure, value, origin) in facts {
            let Some(i) = self.lookup(&param) else { continue };
            let Some(term) = self.scope[i].term.clone() else { continue };
            let Some(ValueDef::Measure(sig)) = self.values.get(&measure).cloned() else { continue };
            let ptys: Vec<Ty> = sig.params.iter().map(|(_, t)| t.clone()).collect();
            let Some(app) = self.measure_app(&measure, vec![term], &ptys, &sig.ret) else { continue };
            logic::vars_of(&app, &mut vars);
            self.add_fact(Term::Eq(Box::new(app), Box::new(value)), origin);
        }
        if !vars.is_empty() && self.facts_contradict(vars) {
            let what = if self.entry_facts.is_some() { "the host's facts" } else { "the measures' defaults" };
            self.error(
                Code::RefinementUnproven,
                entry.span,
                format!("the entry's inputs cannot satisfy both its refinements and {what}"),
            )
            .help = Some("a fresh input must satisfy the entry's refinements: fix the defaults or the entry".into());
        }
    }

    /// `measure(param) == default` for every host-made entry input and every one-parameter
    /// measure over its type that has a default, in a fixed order.
    fn default_facts(&self, entry: &state::Entry) -> Vec<(String, String, Term, String)> {
        let mut measures: Vec<(&String, &Term)> = self.measure_defaults.iter().collect();
        measures.sort_by(|a, b| a.0.cmp(b.0));
        let mut out = Vec::new();
        for (param, ty, _) in &entry.params {
            if !self.is_host_made(ty) || self.is_second_class(ty) {
                continue;
            }
            for (measure, value) in &measures {
                if self.measure_over(measure, ty) {
                    let origin = format!("on a fresh input, {measure}({param}) == {}", show_term(value));
                    out.push((param.clone(), (*measure).clone(), (*value).clone(), origin));
                }
            }
        }
        out
    }

    /// Whether `measure` is a measure of one parameter whose type is (the base of) `ty`.
    fn measure_over(&self, measure: &str, ty: &Ty) -> bool {
        let Some(ValueDef::Measure(sig)) = self.values.get(measure) else { return false };
        match sig.params.as_slice() {
            [(_, p)] => !p.is_error() && self.resolve(p).strip().to_string() == self.resolve(ty).strip().to_string(),
            _ => false,
        }
    }

    /// A fact the host gave, checked: it names an entry parameter and a measure over its type,
    /// with a value of the measure's result sort. A bad one is the host's bug: an error.
    fn host_fact(&mut self, fact: &EntryFact, entry: &state::Entry) -> Option<(String, String, Term, String)> {
        let Some((_, ty, _)) = entry.params.iter().find(|(n, _, _)| *n == fact.param) else {
            self.error(
                Code::UndefinedName,
                entry.span,
                format!("the host's fact names `{}`, which is not a parameter of the entry", fact.param),
            );
            return None;
        };
        let ret = match self.values.get(&fact.measure) {
            Some(ValueDef::Measure(sig)) => sig.ret.clone(),
            _ => {
                self.error(
                    Code::UndefinedName,
                    entry.span,
                    format!("the host's fact names `{}`, which is not a measure", fact.measure),
                );
                return None;
            }
        };
        if !self.measure_over(&fact.measure, ty) {
            self.error(
                Code::TypeMismatch,
                entry.span,
                format!("the measure `{}` is not a measure of `{}: {}`", fact.measure, fact.param, ty.strip()),
            );
            return None;
        }
        let value = fact.value.term();
        let fits = matches!(
            (ret.base(), &value),
            (Ty::Bool, Term::Bool(_)) | (Ty::Int, Term::Int(_)) | (Ty::Str, Term::Str(_))
        );
        if !fits {
            self.error(
                Code::TypeMismatch,
                entry.span,
                format!("the host's fact gives `{}` a value that is not a `{}`", fact.measure, ret.strip()),
            );
            return None;
        }
        let origin = format!("the host: {}({}) == {}", fact.measure, fact.param, show_term(&value));
        Some((fact.param.clone(), fact.measure.clone(), value, origin))
    }

    /// Inference variables nothing determined: each is reported once, where it arose, unless
    /// an error was already reported (it is then usually the cause).
    fn report_uninferred(&mut self) {
        if self.diags.iter().any(Diagnostic::is_error) {
            return;
        }
        // A binding whose type was still open when it was made was not tracked as linear or
        // second-class; if it turned out to be either, the program is rejected (the first one
        // is named: the others usually follow from it).
        for (id, ty) in std::mem::take(&mut self.bound_before_inferred) {
            let ty = self.resolve(&ty);
            let holds_capability = ty.any_part(&mut |t| self.is_second_class(t));
            if self.is_linear(&ty) || holds_capability {
                let what = if holds_capability { "a capability" } else { "a linear value" };
                self.error(
                    Code::CannotInfer,
                    id.span,
                    format!("the type of `{}` must be known where it is bound: it holds {what}", id.name),
                )
                .help = Some(format!("annotate it: `{}: {}`", id.name, ty));
                return;
            }
        }
        let mut reported: Vec<Span> = Vec::new();
        for v in 0..self.subst.len() {
            if let Ty::Var(_) = self.resolve(&Ty::Var(v as u32)) {
                let span = self.var_origin[v];
                if !reported.contains(&span) {
                    reported.push(span);
                    self.error(Code::CannotInfer, span, "the type of this value cannot be inferred").help =
                        Some("add a type annotation, e.g. `let xs: List[Int] = [];`".into());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use cordon_syntax::SourceMap;

    use crate::state::Checker;
    use crate::{CheckOptions, cache, check};

    const POLICY: &str = "capability Log {\n  tool note(text: String)\n}\nentry(log: Log) -> String\n";

    /// Whether this thread keeps a declaration of `policy` for a check of `sources` with `options`.
    fn kept(sources: &SourceMap, policy: cordon_syntax::FileId, options: &CheckOptions) -> bool {
        cache::declared::<Checker<'static>>(sources, &[policy], options.solver_timeout_ms).is_some()
    }

    /// A check keeps its policies' declaration for the next check on its thread, and it is
    /// used only for the same files and the same solver timeout.
    #[test]
    fn a_check_keeps_its_policies_for_the_next_one_on_its_thread_only() {
        std::thread::spawn(|| {
            let options = CheckOptions::default();
            let mut sources = SourceMap::new();
            let policy = sources.add("log.cord", POLICY);
            let plan = sources.add("plan.cord", "log.note(\"hi\");\n\"done\"");
            assert!(!kept(&sources, policy, &options), "a new thread keeps nothing");
            assert!(check(&sources, &[policy], Some(plan), &options).program.is_some());
            assert!(kept(&sources, policy, &options));
            // Another text, name or timeout: not the same policies.
            let mut other = SourceMap::new();
            let changed = other.add("log.cord", POLICY.replace("String)", "Int)"));
            assert!(!kept(&other, changed, &options));
            let mut renamed = SourceMap::new();
            let moved = renamed.add("journal.cord", POLICY);
            assert!(!kept(&renamed, moved, &options));
            let slower = CheckOptions { solver_timeout_ms: options.solver_timeout_ms + 1, ..CheckOptions::default() };
            assert!(!kept(&sources, policy, &slower));
            // A policy that does not parse is not kept; the last good one stays.
            let mut broken = SourceMap::new();
            let bad = broken.add("log.cord", "capability Log {");
            assert!(check(&broken, &[bad], None, &options).program.is_none());
            assert!(!kept(&broken, bad, &options));
            assert!(kept(&sources, policy, &options));
        })
        .join()
        .unwrap();
    }
}
