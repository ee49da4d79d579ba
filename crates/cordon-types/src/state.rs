//! The checker's state, shared by its passes (declarations in `checker.rs`, expressions in
//! `expr.rs`, refinements in `logic.rs`, holes in `expr/holes.rs`, builtins in
//! `builtins.rs`): what names stand for, the bindings and facts in scope, and the helpers every
//! pass uses. It imports none of the passes: it is the bottom of the checker.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use cordon_smt::{FuncDecl, Solver, Term};
use cordon_syntax::ast::{self, Expr, ExprKind, Ident, Item, Module, TypeExpr};
use cordon_syntax::{Diagnostic, SourceMap, Span};

use crate::declared::{Release, ToolAnnotations};
pub use crate::facts::Facts;
use crate::hole_site::HoleSite;
use crate::node::Resolved;
use crate::options::EntryFact;
use crate::ty::Ty;

/// What a type name stands for.
#[derive(Clone, Debug)]
pub enum TypeDef {
    Record { fields: Vec<(String, Ty)>, opaque: bool },
    Enum { variants: Vec<(String, Vec<Ty>)> },
    Alias(Ty),
    Linear,
    Opaque { arity: usize },
    Capability { tools: Vec<(String, Rc<Signature>)> },
}

impl TypeDef {
    /// Types whose values only the host makes: no literal, constructor or cast produces one.
    pub fn is_host_made(&self) -> bool {
        matches!(
            self,
            TypeDef::Linear
                | TypeDef::Opaque { .. }
                | TypeDef::Capability { .. }
                | TypeDef::Record { opaque: true, .. }
        )
    }
}

#[derive(Clone, Debug)]
pub struct TypeInfo {
    pub def: TypeDef,
    pub span: Span,
}

/// The signature of a function, tool or measure. Parameter refinements may mention earlier and
/// later parameters by name; the result's refinement may mention all of them.
#[derive(Clone, Debug)]
pub struct Signature {
    pub name: String,
    pub params: Vec<(String, Ty)>,
    pub ret: Ty,
    /// Whether a result is written (`-> T`): without one, `ret` is `()`.
    pub declares_result: bool,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ValueDef {
    Fn(Rc<Signature>),
    Measure(Rc<Signature>),
    /// `checked` is false until the constant's value has been checked against its type: until
    /// then its refinement is not a fact (a constant cannot prove itself).
    Const {
        ty: Ty,
        term: Option<Term>,
        checked: bool,
    },
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub params: Vec<(String, Ty, Span)>,
    pub ret: Ty,
    pub span: Span,
}

/// The state of a linear binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lin {
    Live,
    Consumed(Span),
    /// Used where no linear value may be (inside a loop, a closure or a `to_labeled` block):
    /// that use was reported, so no later use, branch or scope end reports the value again (one
    /// mistake, one error).
    Misused,
}

/// A point in the log of linear state changes, taken where paths split (an `if`, a `match`, a
/// guard, the right operand of `&&`, a fill): the bindings in scope there and the log's length.
#[derive(Clone, Copy, Debug)]
pub struct LinMark {
    depth: usize,
    log: usize,
}

/// What one path did to the linear bindings in scope where it started: each binding it changed
/// (by index, once) with its state at the path's end. Bindings it left alone are not listed.
pub type LinPath = Vec<(usize, Option<Lin>)>;

/// What the policies' annotations say, resolved as they are checked (`checker/annotations.rs`,
/// `checker/approval.rs`), for the declarations (`export.rs`).
#[derive(Clone, Debug, Default)]
pub struct Annotated {
    /// Each tool's, by where its name is declared; `None` if checking them found an error.
    pub tools: HashMap<Span, Option<ToolAnnotations>>,
    /// The labels of each record's fields, in the order of its fields, by where its name is
    /// declared.
    pub fields: HashMap<Span, Vec<Vec<Arc<Expr>>>>,
    /// The releases, in the order declared.
    pub releases: Vec<Release>,
}

/// A local variable.
#[derive(Clone, Debug)]
pub struct Binding {
    /// Shared with the key of [`Checker::by_name`].
    pub name: Rc<str>,
    pub ty: Ty,
    pub term: Option<Term>,
    pub span: Span,
    /// `Some` for values of a linear type.
    pub lin: Option<Lin>,
}

/// Where a closure starts in the scope stack, and whether it captured a capability. The body of
/// a hole's fill is checked as a closure called on the spot: `fill` marks its frame.
#[derive(Clone, Debug)]
pub struct ClosureFrame {
    pub depth: usize,
    pub captures_capability: bool,
    pub fill: bool,
}

#[derive(Clone)]
pub struct Checker<'a> {
    pub sources: &'a SourceMap,
    pub diags: Vec<Diagnostic>,
    pub types: HashMap<String, TypeInfo>,
    pub values: HashMap<String, ValueDef>,
    pub entry: Option<Entry>,
    /// Inference variables: their solutions and where they came from.
    pub subst: Vec<Option<Ty>>,
    pub var_origin: Vec<Span>,
    pub scope: Vec<Binding>,
    /// Every change of a binding's linear state, as its index in `scope` and the state before,
    /// in order (see [`Checker::set_lin`]): what a branch changed is what was logged after its
    /// [`LinMark`], so no branch looks at the linear bindings it left alone.
    pub lin_log: Vec<(usize, Option<Lin>)>,
    /// Entries of `lin_log` looked at, in all: the work of joining branches' linear states.
    pub lin_examined: u64,
    /// For each name, the indices in `scope` of its bindings, in order, so a name is found
    /// without scanning the scope (kept exact by [`Checker::push_scope`] and
    /// [`Checker::pop_scope`]).
    pub by_name: HashMap<Rc<str>, Vec<usize>>,
    /// Lookups do not see bindings below this index (function bodies, refinements).
    pub barrier: usize,
    pub closures: Vec<ClosureFrame>,
    /// Scope depths where enclosing loop bodies start.
    pub loops: Vec<usize>,
    /// Checking a refinement predicate: no effects, no fresh values, measures allowed.
    pub in_refinement: bool,
    pub facts: Facts,
    pub funcs: BTreeMap<String, FuncDecl>,
    pub solver: Solver,
    /// Obligations that folded to `true` with the known values, without a query.
    pub folded: u64,
    /// When this check's time (`CheckOptions::check_timeout_ms`) runs out.
    pub deadline: std::time::Instant,
    pub started: std::time::Instant,
    /// Time spent in the solver so far.
    pub solver_time: std::time::Duration,
    /// Once the time ran out: how many diagnostics there were, the `check-timeout` error last.
    pub timed_out: Option<usize>,
    pub name_counts: HashMap<Arc<str>, u32>,
    /// Type names being resolved (alias cycle detection).
    pub resolving: Vec<(String, Span)>,
    pub alias_exprs: HashMap<String, TypeExpr>,
    /// Number of typed holes checked.
    pub holes: usize,
    /// What a model filling each hole checked so far may name, in the order they were checked.
    pub hole_sites: Vec<HoleSite>,
    /// The fills to check in place of holes, by the hole's span (see [`crate::check_fill`]).
    pub fills: HashMap<Span, std::sync::Arc<Module>>,
    /// The holes whose fill was checked.
    pub filled: HashSet<Span>,
    /// What each call checked so far calls, and what each cast converts to.
    pub resolved: Resolved,
    /// While declarations are resolved: the list element types to check once they all are.
    pub pending_lists: Option<Vec<(Ty, Span, Holder)>>,
    /// The names of functions, constants and measures that repeat an earlier one.
    pub duplicate_values: HashSet<Span>,
    /// Bindings made while their type was still being inferred.
    pub bound_before_inferred: Vec<(Ident, Ty)>,
    /// Records and enums that hold a linear value, and those that hold a float.
    pub linear_types: HashSet<String>,
    pub float_types: HashSet<String>,
    /// Who wrote the declaration or body being checked: only policies may name `Label`.
    pub role: Role,
    /// Who wrote each type alias (aliases are resolved apart from their modules).
    pub alias_roles: HashMap<String, Role>,
    /// Checking an `@label` value: the label functions (`secret`, `public`, ..) are callable.
    pub in_label: bool,
    /// Scope depths where enclosing `to_labeled` blocks start.
    pub labeled_blocks: Vec<usize>,
    /// The declared default of each measure (`measure m(x: T) -> U = literal`).
    pub measure_defaults: HashMap<String, Term>,
    /// What the host says holds of the entry's inputs (see [`crate::CheckOptions::entry_facts`]).
    pub entry_facts: Option<Vec<EntryFact>>,
    /// What the policies' annotations say, as checked so far.
    pub annotated: Annotated,
    /// Each binding's name, where it is bound, and its type, when the check records them
    /// ([`crate::CheckOptions::record_bindings`], `bindings.rs`).
    pub recorded: Option<Vec<(String, Span, Ty)>>,
}

/// What a checker that has declared the policies refers to between checks: no file. Each check
/// gives it its own (`Checker::attached`).
static NO_SOURCES: std::sync::LazyLock<SourceMap> = std::sync::LazyLock::new(SourceMap::new);

impl Checker<'_> {
    /// The checker with no sources, to be kept between checks (`cache.rs`): every other field
    /// is owned.
    pub fn detached(self) -> Checker<'static> {
        Checker {
            sources: &NO_SOURCES,
            diags: self.diags,
            types: self.types,
            values: self.values,
            entry: self.entry,
            subst: self.subst,
            var_origin: self.var_origin,
            scope: self.scope,
            lin_log: self.lin_log,
            lin_examined: self.lin_examined,
            by_name: self.by_name,
            barrier: self.barrier,
            closures: self.closures,
            loops: self.loops,
            in_refinement: self.in_refinement,
            facts: self.facts,
            funcs: self.funcs,
            solver: self.solver,
            folded: self.folded,
            deadline: self.deadline,
            started: self.started,
            solver_time: self.solver_time,
            timed_out: self.timed_out,
            name_counts: self.name_counts,
            resolving: self.resolving,
            alias_exprs: self.alias_exprs,
            holes: self.holes,
            hole_sites: self.hole_sites,
            fills: self.fills,
            filled: self.filled,
            resolved: self.resolved,
            pending_lists: self.pending_lists,
            duplicate_values: self.duplicate_values,
            bound_before_inferred: self.bound_before_inferred,
            linear_types: self.linear_types,
            float_types: self.float_types,
            role: self.role,
            alias_roles: self.alias_roles,
            in_label: self.in_label,
            labeled_blocks: self.labeled_blocks,
            measure_defaults: self.measure_defaults,
            entry_facts: self.entry_facts,
            annotated: self.annotated,
            recorded: None,
        }
    }
}

impl std::fmt::Debug for Checker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker").field("diags", &self.diags.len()).finish_non_exhaustive()
    }
}

impl Checker<'_> {
    /// Whether this check's time has run out; the first time it is found so, reports
    /// `check-timeout` at `span` with where the time went.
    pub fn out_of_time(&mut self, span: Span) -> bool {
        if self.timed_out.is_some() {
            return true;
        }
        let now = std::time::Instant::now();
        if now < self.deadline {
            return false;
        }
        let took = now.duration_since(self.started).as_millis();
        let stats = self.solver.stats();
        let solver = self.solver_time.as_millis();
        self.diags.push(
            Diagnostic::error(
                cordon_syntax::Code::CheckTimeout,
                span,
                format!("the check ran out of time here, after {took} ms: rejected, never assumed"),
            )
            .with_note(format!(
                "time went: {solver} ms in the solver ({} queries, {} answered from the cache), {} ms in type checking",
                stats.queries,
                stats.cache_hits,
                took.saturating_sub(solver)
            ))
            .with_help("split the plan, or allow more time with `--check-timeout-ms`"),
        );
        self.timed_out = Some(self.diags.len());
        true
    }

    /// Sets the linear state of the binding at `i`, logging the change (see [`Checker::lin_since`]).
    pub fn set_lin(&mut self, i: usize, lin: Option<Lin>) {
        if let Some(b) = self.scope.get_mut(i)
            && b.lin != lin
        {
            self.lin_log.push((i, b.lin));
            b.lin = lin;
        }
    }

    /// Where paths split: what each path changes is collected from here ([`Checker::lin_since`]).
    pub fn lin_mark(&self) -> LinMark {
        LinMark { depth: self.scope.len(), log: self.lin_log.len() }
    }

    /// The bindings in scope at `mark` whose linear state changed since, each once, with their
    /// state now. Bindings made since were popped by their scope's end, which reported them.
    pub fn lin_since(&mut self, mark: LinMark) -> LinPath {
        let changed = self.lin_log.get(mark.log..).unwrap_or_default();
        self.lin_examined += changed.len() as u64;
        let mut indices: Vec<usize> = changed.iter().map(|&(i, _)| i).filter(|&i| i < mark.depth).collect();
        indices.sort_unstable();
        indices.dedup();
        indices.into_iter().filter_map(|i| self.scope.get(i).map(|b| (i, b.lin))).collect()
    }

    /// Puts every binding in scope at `mark` back in the state it had there, and forgets the
    /// changes since (a path that did not happen, or one whose changes are joined again).
    pub fn lin_undo(&mut self, mark: LinMark) {
        while self.lin_log.len() > mark.log {
            let Some((i, before)) = self.lin_log.pop() else { break };
            self.lin_examined += 1;
            if i < mark.depth
                && let Some(b) = self.scope.get_mut(i)
            {
                b.lin = before;
            }
        }
    }

    /// Pushes a binding onto the scope, indexing it by name.
    pub fn push_scope(&mut self, b: Binding) {
        let at = self.scope.len();
        let indices = self.by_name.entry(b.name.clone()).or_default();
        // Most names are bound once: room for one index, not four.
        if indices.capacity() == 0 {
            indices.reserve_exact(1);
        }
        indices.push(at);
        self.scope.push(b);
    }

    /// Pops the innermost binding off the scope.
    pub fn pop_scope(&mut self) -> Option<Binding> {
        let b = self.scope.pop()?;
        if let Some(indices) = self.by_name.get_mut(&b.name) {
            indices.pop();
        }
        Some(b)
    }

    /// Pops bindings down to `depth`.
    pub fn truncate_scope(&mut self, depth: usize) {
        while self.scope.len() > depth && self.pop_scope().is_some() {}
    }

    /// The innermost visible binding of `name`, by its index in the scope.
    pub fn lookup(&self, name: &str) -> Option<usize> {
        let &i = self.by_name.get(name)?.last()?;
        (i >= self.barrier).then_some(i)
    }
}

/// Items with the role of the module that declares them.
pub type RoleItems<'m> = Vec<(Role, &'m Item)>;

/// A type whose element type may not be linear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    List,
    Labeled,
}

/// Whether a module was written by the deployer or by the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Policy,
    Plan,
}

pub const BUILTIN_TYPES: &[&str] = &[
    "Int", "Float", "Decimal", "Bool", "String", "Date", "DateTime", "Duration", "List", "Option", "Result", "Map",
    LABEL, LABELED,
];

/// The type of labels, usable in policies only (`@label` values).
pub const LABEL: &str = "Label";
/// The host-made box `Labeled[T]` that `to_labeled { .. }` returns.
pub const LABELED: &str = "Labeled";

/// `Label`.
pub fn label_ty() -> Ty {
    Ty::Opaque(Rc::from(LABEL), Vec::new())
}

/// `Labeled[T]`.
pub fn labeled_ty(inner: Ty) -> Ty {
    Ty::Opaque(Rc::from(LABELED), vec![inner])
}

/// A checked expression: its type and, when it has one, the logical term for its value.
#[derive(Clone, Debug)]
pub struct Typed {
    pub ty: Ty,
    pub term: Option<Term>,
}

impl Typed {
    pub fn error() -> Typed {
        Typed { ty: Ty::Error, term: None }
    }
}

/// The most nodes a type may have once its aliases are expanded.
pub const MAX_TYPE_SIZE: usize = 4096;

/// The number of nodes in a type, counting no further than `limit`.
pub fn type_size(t: &Ty, limit: usize) -> usize {
    fn go(t: &Ty, n: &mut usize, limit: usize) {
        *n += 1;
        if *n > limit {
            return;
        }
        match t {
            Ty::Tuple(ts) | Ty::Opaque(_, ts) => ts.iter().for_each(|t| go(t, n, limit)),
            Ty::List(t) | Ty::Option(t) => go(t, n, limit),
            Ty::Result(a, b) | Ty::Map(a, b) => {
                go(a, n, limit);
                go(b, n, limit);
            }
            Ty::Fn(f) => {
                f.params.iter().for_each(|t| go(t, n, limit));
                go(&f.ret, n, limit);
            }
            Ty::Refined(r) => go(&r.base, n, limit),
            _ => {}
        }
    }
    let mut n = 0;
    go(t, &mut n, limit);
    n
}

pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The closest known name, for "did you mean" hints.
pub fn suggest<'n>(name: &str, candidates: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(name, c);
        let limit = (name.len().max(c.len()) / 3).max(1);
        // Ties go to the alphabetically first name, so hints do not depend on hash order.
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    if a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Calls `f` on every name in an expression, with whether it is in callee position.
pub fn walk_names(e: &Expr, f: &mut dyn FnMut(&Ident, bool)) {
    use ExprKind as K;
    match &e.kind {
        K::Name(id) => f(id, false),
        K::Call { callee, args } => {
            if let K::Name(id) = &callee.kind {
                f(id, true);
            } else {
                walk_names(callee, f);
            }
            args.iter().for_each(|a| walk_names(a, f));
        }
        K::MethodCall { receiver, args, .. } => {
            walk_names(receiver, f);
            args.iter().for_each(|a| walk_names(a, f));
        }
        K::Tuple(es) | K::List(es) => es.iter().for_each(|a| walk_names(a, f)),
        K::Record { fields, .. } => fields.iter().for_each(|(_, a)| walk_names(a, f)),
        K::Field { base, .. } | K::TupleField { base, .. } => walk_names(base, f),
        K::Index { base, index } => {
            walk_names(base, f);
            walk_names(index, f);
        }
        K::Unary { operand, .. } => walk_names(operand, f),
        K::Binary { lhs, rhs, .. } => {
            walk_names(lhs, f);
            walk_names(rhs, f);
        }
        K::If { cond, then, else_ } => {
            walk_names(cond, f);
            walk_block(then, f);
            if let Some(e) = else_ {
                walk_names(e, f);
            }
        }
        K::Cast { expr, .. } => walk_names(expr, f),
        K::Block(b) => walk_block(b, f),
        // Other forms cannot appear in refinements or annotations; the checker rejects them.
        _ => {}
    }
}

fn walk_block(b: &ast::Block, f: &mut dyn FnMut(&Ident, bool)) {
    for s in &b.stmts {
        match s {
            ast::Stmt::Let { value, .. } => walk_names(value, f),
            ast::Stmt::Expr(e) => walk_names(e, f),
        }
    }
    if let Some(t) = &b.tail {
        walk_names(t, f);
    }
}
