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

mod builtins;
mod checker;
mod exhaustive;
mod expr;
mod logic;
mod ty;

use cordon_smt::Term;
use cordon_syntax::ast::{FnDecl, ItemKind, Module, Stmt};
use cordon_syntax::{Code, Diagnostic, FileId, SourceMap, Span};

use checker::{Checker, Lin, Role, ValueDef};
use ty::Ty;

/// Settings of one check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Time Z3 may spend on one refinement obligation before the obligation is rejected.
    pub solver_timeout_ms: u32,
    /// Time Z3 may spend on all of one check's obligations; once it is spent, the obligations
    /// left are rejected without asking, so no program can keep the checker busy for long.
    pub solver_budget_ms: u32,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions { solver_timeout_ms: 2000, solver_budget_ms: 20_000 }
    }
}

/// The result of checking: every diagnostic, sorted by position; the program is accepted if
/// and only if none is an error. A program with syntax errors gets only those.
#[derive(Debug)]
pub struct Outcome {
    pub diagnostics: Vec<Diagnostic>,
    /// Solver queries asked and answered from the cache.
    pub solver_queries: u64,
    pub solver_cache_hits: u64,
    /// Typed holes in the plan.
    pub holes: usize,
}

impl Outcome {
    pub fn accepted(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Checks `plan` (if any) against the policy modules, in the order given.
pub fn check(sources: &SourceMap, policies: &[FileId], plan: Option<FileId>, options: &CheckOptions) -> Outcome {
    let mut diagnostics = Vec::new();
    let mut modules = Vec::new();
    for (role, file) in policies.iter().map(|f| (Role::Policy, *f)).chain(plan.map(|p| (Role::Plan, p))) {
        let parsed = cordon_syntax::parse(file, &sources.file(file).text);
        diagnostics.extend(parsed.diagnostics);
        modules.push((role, parsed.module));
    }
    // A tree with syntax errors is incomplete: checking it would report their echoes. Every
    // syntax error is reported; type errors come once the program parses.
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Outcome { diagnostics, solver_queries: 0, solver_cache_hits: 0, holes: 0 };
    }
    let mut checker = Checker::new(sources, options);
    let roles: Vec<(Role, &Module)> = modules.iter().map(|(r, m)| (*r, m)).collect();
    checker.register_types(&roles);
    checker.declare_items(&roles);
    for (role, module) in &roles {
        checker.check_consts(module);
        if *role == Role::Policy {
            report_policy_statements(&mut checker, module);
        }
    }
    for (_, module) in &roles {
        for item in &module.items {
            if let ItemKind::Fn(decl) = &item.kind {
                checker.check_fn(decl);
            }
        }
    }
    if let Some((Role::Plan, module)) = roles.last() {
        checker.check_plan(module);
    }
    checker.report_uninferred();
    let stats = checker.solver.stats();
    diagnostics.append(&mut checker.diags);
    diagnostics.sort_by_key(|d| {
        let s = d.span();
        (s.file, s.start, s.end)
    });
    diagnostics.dedup();
    Outcome { diagnostics, solver_queries: stats.queries, solver_cache_hits: stats.cache_hits, holes: checker.holes }
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

    fn capability_escapes(&mut self, span: Span, ty: &Ty) {
        let what = expr::second_class_noun(&self.resolve(ty));
        self.error(Code::CapabilityEscapes, span, format!("{what} cannot be returned")).help =
            Some("capabilities are passed down as arguments and never leave their scope".into());
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
                Some(self.enter_params(&names, &params, &entry.ret))
            }
            None => None,
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
                self.scope[i].lin = None;
            }
        }
        self.end_scope(0);
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
