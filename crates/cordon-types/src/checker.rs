//! The declaration pass: collecting the names every module declares, enforcing which
//! declarations a plan may make, resolving type expressions, and checking function, constant
//! and entry declarations. The state it fills is in `state.rs`.

pub(crate) mod annotations;
mod approval;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use cordon_label::Tier;
use cordon_smt::{Solver, Term};
use cordon_syntax::ast::{self, Expr, ExprKind, Ident, Item, ItemKind, Module, Param, TypeExpr, TypeExprKind};
use cordon_syntax::{Code, Diagnostic, MAX_NESTING, SourceMap, Span};

use crate::node::Resolved;
use crate::options::CheckOptions;
use crate::state::{
    Annotated, BUILTIN_TYPES, Binding, Checker, Entry, Facts, Holder, LABEL, LABELED, MAX_TYPE_SIZE, Role, RoleItems,
    Signature, TypeDef, TypeInfo, ValueDef, label_ty, labeled_ty, plural, suggest, type_size, walk_names,
};
use crate::ty::{FnTy, Refinement, Ty};

impl Checker<'static> {
    /// A copy of this kept checker for a check of `sources` (which hold the same policies at the
    /// same ids) with `options`: the check's own clock and entry facts.
    pub fn attached<'a>(&self, sources: &'a SourceMap, options: &CheckOptions) -> Checker<'a> {
        let fresh = Checker::new(sources, options);
        Checker {
            started: fresh.started,
            deadline: fresh.deadline,
            solver_time: fresh.solver_time,
            entry_facts: fresh.entry_facts,
            recorded: fresh.recorded,
            sources,
            ..self.clone()
        }
    }
}

impl<'a> Checker<'a> {
    pub fn new(sources: &'a SourceMap, options: &CheckOptions) -> Checker<'a> {
        Checker {
            sources,
            diags: Vec::new(),
            types: HashMap::new(),
            values: HashMap::new(),
            entry: None,
            subst: Vec::new(),
            var_origin: Vec::new(),
            scope: Vec::new(),
            barrier: 0,
            closures: Vec::new(),
            loops: Vec::new(),
            in_refinement: false,
            facts: Facts::default(),
            funcs: BTreeMap::new(),
            solver: Solver::new(options.solver_timeout_ms),
            folded: 0,
            lin_log: Vec::new(),
            lin_examined: 0,
            by_name: HashMap::new(),
            deadline: std::time::Instant::now() + std::time::Duration::from_millis(u64::from(options.check_timeout_ms)),
            started: std::time::Instant::now(),
            solver_time: std::time::Duration::ZERO,
            timed_out: None,
            name_counts: HashMap::new(),
            resolving: Vec::new(),
            alias_exprs: HashMap::new(),
            holes: 0,
            hole_sites: Vec::new(),
            fills: HashMap::new(),
            filled: HashSet::new(),
            resolved: Resolved::default(),
            pending_lists: None,
            bound_before_inferred: Vec::new(),
            duplicate_values: HashSet::new(),
            linear_types: HashSet::new(),
            float_types: HashSet::new(),
            role: Role::Policy,
            alias_roles: HashMap::new(),
            in_label: false,
            labeled_blocks: Vec::new(),
            measure_defaults: HashMap::new(),
            entry_facts: options.entry_facts.clone(),
            annotated: Annotated::default(),
            recorded: options.record_bindings.then(Vec::new),
        }
    }

    pub fn error(&mut self, code: Code, span: Span, message: impl Into<String>) -> &mut Diagnostic {
        self.diags.push(Diagnostic::error(code, span, message));
        let last = self.diags.len() - 1;
        &mut self.diags[last]
    }

    /// Reports a name that is not there, with "did you mean" when a known one is close;
    /// `qualify` goes before the suggestion (`Priority::`).
    pub fn not_found<'n>(
        &mut self,
        code: Code,
        span: Span,
        message: String,
        name: &str,
        known: impl Iterator<Item = &'n str>,
        qualify: &str,
    ) {
        let mut d = Diagnostic::error(code, span, message);
        if let Some(s) = suggest(name, known) {
            d = d.with_help(format!("did you mean `{qualify}{s}`?"));
        }
        self.diags.push(d);
    }

    /// Reports `id` if an earlier member of the same list (field, variant, tool, parameter) has
    /// its name; returns whether it is the first.
    pub fn first_of_name(&mut self, seen: &mut HashSet<String>, id: &Ident, what: &str) -> bool {
        if seen.insert(id.name.clone()) {
            return true;
        }
        self.error(Code::DuplicateDefinition, id.span, format!("the {what} `{}` is already defined", id.name));
        false
    }

    pub fn text(&self, span: Span) -> &'a str {
        self.sources.slice(span)
    }

    // ---------------------------------------------------------------- declarations, pass 1

    /// Registers every type name of every module (so declarations may refer to each other in
    /// any order) and reports declarations a plan may not make.
    pub fn register_types(&mut self, modules: &[(Role, &Module)]) {
        for (role, module) in modules {
            for item in &module.items {
                if *role == Role::Plan && is_host_declaration(&item.kind) {
                    self.diags.push(
                        Diagnostic::error(
                            Code::HostDeclarationInPlan,
                            item.span,
                            "a plan cannot declare host types, measures, capabilities, releases or an entry",
                        )
                        .with_primary_label("only a policy module may declare this")
                        .with_help("use the types and tools the policy declares; host values come only from tools"),
                    );
                    continue;
                }
                let (name, def) = match &item.kind {
                    ItemKind::TypeAlias { name, ty } => {
                        self.alias_exprs.insert(name.name.clone(), ty.clone());
                        self.alias_roles.insert(name.name.clone(), *role);
                        (name, TypeDef::Alias(Ty::Error))
                    }
                    ItemKind::Record { name, opaque, .. } => {
                        (name, TypeDef::Record { fields: Vec::new(), opaque: *opaque })
                    }
                    ItemKind::Enum { name, .. } => (name, TypeDef::Enum { variants: Vec::new() }),
                    ItemKind::Linear { name } => (name, TypeDef::Linear),
                    ItemKind::Opaque { name, params } => (name, TypeDef::Opaque { arity: params.len() }),
                    ItemKind::Capability { name, .. } => (name, TypeDef::Capability { tools: Vec::new() }),
                    _ => continue,
                };
                if BUILTIN_TYPES.contains(&name.name.as_str()) || self.types.contains_key(&name.name) {
                    self.error(
                        Code::DuplicateDefinition,
                        name.span,
                        format!("the type `{}` is already defined", name.name),
                    );
                    continue;
                }
                self.types.insert(name.name.clone(), TypeInfo { def, span: name.span });
            }
        }
    }

    /// Resolves the bodies of type declarations and the signatures of measures, tools and
    /// functions, and the entry.
    pub fn declare_items(&mut self, modules: &[(Role, &Module)]) {
        self.pending_lists = Some(Vec::new());
        let items = modules.iter().flat_map(|(role, module)| {
            module
                .items
                .iter()
                .filter(move |item| !(*role == Role::Plan && is_host_declaration(&item.kind)))
                .map(move |item| (*role, item))
        });
        // The entry is declared once, composed from the policies' entries (`cordon_syntax::entry`).
        let items: Vec<(Role, &Item)> =
            items.filter(|(_, item)| !matches!(item.kind, ItemKind::Entry { .. })).collect();
        let policies = modules.iter().filter(|(role, _)| *role == Role::Policy).map(|(_, m)| *m);
        let entry = cordon_syntax::entry::of(policies);
        // Which of two values with one name is the duplicate follows the source order: those
        // declared already (the policies', when the plan is declared after them) come first.
        let declared: Vec<String> = self.values.keys().cloned().collect();
        let mut seen: HashSet<&str> = declared.iter().map(String::as_str).collect();
        for (_, item) in &items {
            let name = match &item.kind {
                ItemKind::Fn(decl) => &decl.name,
                ItemKind::Const { name, .. } | ItemKind::Measure { name, .. } => name,
                _ => continue,
            };
            if crate::builtins::is_builtin(&name.name) || !seen.insert(&name.name) {
                self.duplicate_values.insert(name.span);
            }
        }
        // Constants and measures first: refinements anywhere may use their values and names.
        // Aliases are resolved next (an alias used earlier is resolved on first use).
        let (first, others): (RoleItems<'_>, RoleItems<'_>) = items
            .into_iter()
            .partition(|(_, item)| matches!(item.kind, ItemKind::Const { .. } | ItemKind::Measure { .. }));
        for (role, item) in first {
            self.role = role;
            self.declare_item(item);
        }
        let mut aliases: Vec<String> = self.alias_exprs.keys().cloned().collect();
        aliases.sort();
        for name in aliases {
            self.resolve_alias(&name);
        }
        for (role, item) in others {
            self.role = role;
            self.declare_item(item);
        }
        self.role = Role::Policy;
        let (entry, problem) = entry;
        if let Some((span, message)) = problem {
            self.error(Code::DuplicateDefinition, span, message);
        }
        if let Some(item) = entry {
            self.declare_item(&item);
        }
        self.compute_type_properties();
        // A constant is shared by every use: it cannot stand for a value used only once.
        for (_, module) in modules {
            for item in &module.items {
                let ItemKind::Const { name, ty, .. } = &item.kind else { continue };
                if let Some(ValueDef::Const { ty: resolved, .. }) = self.values.get(&name.name)
                    && self.is_linear(resolved)
                {
                    let shown = resolved.to_string();
                    self.error(
                        Code::LinearReused,
                        ty.span,
                        format!("a constant cannot hold the linear type `{shown}`"),
                    )
                    .help = Some("every use of a constant is the same value; linear values come from tools".into());
                }
            }
        }
        for (elem, span, holder) in self.pending_lists.take().unwrap_or_default() {
            self.check_collection_element(&elem, span, holder);
        }
        let has_policy = modules.iter().any(|(role, _)| *role == Role::Policy);
        if let Some(entry) = self.entry.as_ref().filter(|_| has_policy)
            && entry.params.iter().any(|(_, t, _)| self.is_linear(t))
            && !self.is_linear(&entry.ret)
        {
            let span = entry.span;
            self.error(
                Code::LinearNotReturned,
                span,
                "the entry takes a linear value but its result cannot hold one",
            )
            .help = Some("return the linear value, e.g. `-> (String, Session)`".into());
        }
    }

    /// A list's element type cannot be linear (a list could copy or drop its elements), nor can
    /// a `Labeled` value's (it is data).
    fn check_collection_element(&mut self, elem: &Ty, span: Span, holder: Holder) {
        if !self.is_linear(elem) {
            return;
        }
        let (what, help) = match holder {
            Holder::List => ("a list", "a list could copy or drop its elements; pass linear values one by one"),
            Holder::Labeled => ("a `Labeled` value", "a `Labeled` value is data; linear values come from tools"),
        };
        self.error(Code::LinearInCollection, span, format!("{what} cannot hold the linear type `{elem}`")).help =
            Some(help.into());
    }

    fn declare_item(&mut self, item: &Item) {
        match &item.kind {
            ItemKind::Record { name, fields, opaque } => {
                let mut seen = HashSet::new();
                let mut resolved = Vec::new();
                for f in fields {
                    if !self.first_of_name(&mut seen, &f.name, "field") {
                        continue;
                    }
                    let ty = self.resolve_type(&f.ty, &[]);
                    self.check_data_type(&ty, f.ty.span);
                    resolved.push((f.name.name.clone(), ty));
                }
                self.check_field_annotations(name, fields, &resolved);
                self.set_type(name, TypeDef::Record { fields: resolved, opaque: *opaque });
            }
            ItemKind::Enum { name, variants } => {
                let mut resolved: Vec<(String, Vec<Ty>)> = Vec::new();
                let mut seen = HashSet::new();
                for v in variants {
                    if !self.first_of_name(&mut seen, &v.name, "variant") {
                        continue;
                    }
                    let tys = v
                        .payload
                        .iter()
                        .map(|t| {
                            let ty = self.resolve_type(t, &[]);
                            self.check_data_type(&ty, t.span);
                            ty
                        })
                        .collect();
                    resolved.push((v.name.name.clone(), tys));
                }
                self.set_type(name, TypeDef::Enum { variants: resolved });
            }
            ItemKind::Capability { name, tools } => {
                let mut sigs: Vec<(String, Rc<Signature>)> = Vec::new();
                let mut seen = HashSet::new();
                for tool in tools {
                    if !self.first_of_name(&mut seen, &tool.name, "tool") {
                        continue;
                    }
                    let sig = self.resolve_signature(&tool.name, &tool.params, tool.ret.as_ref(), true);
                    self.check_tool_annotations(tool, &sig);
                    sigs.push((tool.name.name.clone(), Rc::new(sig)));
                }
                self.set_type(name, TypeDef::Capability { tools: sigs });
            }
            ItemKind::Measure { name, params, ret, default } => {
                let sig = self.resolve_signature(name, params, Some(ret), false);
                if let Some(default) = default
                    && let Some(term) = self.check_measure_default(default, &sig.ret)
                    && !self.duplicate_values.contains(&name.span)
                {
                    self.measure_defaults.insert(name.name.clone(), term);
                }
                for (p, (_, ty)) in params.iter().zip(&sig.params) {
                    if matches!(ty.base(), Ty::Cap(_) | Ty::Fn(_)) {
                        self.error(
                            Code::TypeMismatch,
                            p.ty.span,
                            "a measure ranges over data, not capabilities or functions",
                        );
                    }
                }
                self.define_value(name, ValueDef::Measure(Rc::new(sig)));
            }
            ItemKind::Fn(decl) => {
                let sig = self.resolve_signature(&decl.name, &decl.params, decl.ret.as_ref(), false);
                self.define_value(&decl.name, ValueDef::Fn(Rc::new(sig)));
            }
            ItemKind::Const { name, ty, value } => {
                let ty = self.resolve_type(ty, &[]);
                self.check_data_type(&ty, item.span);
                // A literal's value is known now, so refinements in signatures can use it.
                let term = literal_value(value);
                self.define_value(name, ValueDef::Const { ty, term, checked: false });
            }
            ItemKind::Entry { params, ret } => {
                let name = Ident { name: "entry".into(), span: item.span };
                let sig = self.resolve_signature(&name, params, Some(ret), true);
                self.entry = Some(Entry {
                    span: item.span,
                    params: sig
                        .params
                        .iter()
                        .zip(params)
                        .map(|((n, t), p)| (n.clone(), t.clone(), p.name.span))
                        .collect(),
                    ret: sig.ret,
                });
            }
            ItemKind::Release { group, group_span, to, annotations } => {
                self.check_release(group, *group_span, to, annotations)
            }
            ItemKind::TypeAlias { .. } | ItemKind::Linear { .. } | ItemKind::Opaque { .. } => {}
        }
    }

    /// A measure's default is a literal of its result type; returns its value.
    fn check_measure_default(&mut self, default: &Expr, ret: &Ty) -> Option<Term> {
        let Some(term) = literal_value(default) else {
            self.error(Code::TypeMismatch, default.span, "a measure's default must be a literal").help =
                Some("write `true`, `false`, an integer or a string".into());
            return None;
        };
        let fits = matches!(
            (ret.base(), &term),
            (Ty::Bool, Term::Bool(_)) | (Ty::Int, Term::Int(_)) | (Ty::Str, Term::Str(_)) | (Ty::Error, _)
        );
        if !fits {
            let ret = ret.strip();
            self.error(
                Code::TypeMismatch,
                default.span,
                format!("this default is not a value of the result type `{ret}`"),
            )
            .help = Some("a measure's default is a literal of its result type".into());
            return None;
        }
        Some(term)
    }

    fn set_type(&mut self, name: &Ident, def: TypeDef) {
        if let Some(info) = self.types.get_mut(&name.name)
            && info.span == name.span
        {
            info.def = def;
        }
    }

    fn define_value(&mut self, name: &Ident, def: ValueDef) {
        if self.duplicate_values.contains(&name.span) {
            let message = if crate::builtins::is_builtin(&name.name) {
                format!("`{}` is a builtin; give yours another name", name.name)
            } else {
                format!("`{}` is already defined", name.name)
            };
            self.error(Code::DuplicateDefinition, name.span, message);
            return;
        }
        self.values.insert(name.name.clone(), def);
    }

    /// Resolves an alias once (later uses get the stored type). Aliases nested too deeply or
    /// expanding to huge types are errors, so no input can exhaust the stack or memory.
    fn resolve_alias(&mut self, name: &str) -> Ty {
        if let Some((_, span)) = self.resolving.iter().find(|(n, _)| n == name) {
            let span = *span;
            self.error(Code::UndefinedType, span, format!("the type alias `{name}` refers to itself"));
            return Ty::Error;
        }
        let Some(expr) = self.alias_exprs.remove(name) else {
            return match self.types.get(name) {
                Some(TypeInfo { def: TypeDef::Alias(t), .. }) => t.clone(),
                _ => Ty::Error,
            };
        };
        if self.resolving.len() >= MAX_NESTING {
            self.error(Code::NestingTooDeep, expr.span, "type aliases are nested too deeply");
            return Ty::Error;
        }
        self.resolving.push((name.to_string(), expr.span));
        let outer_role = self.role;
        self.role = self.alias_roles.get(name).copied().unwrap_or(outer_role);
        let ty = self.resolve_type(&expr, &[]);
        self.role = outer_role;
        self.resolving.pop();
        let ty = if type_size(&ty, MAX_TYPE_SIZE + 1) > MAX_TYPE_SIZE {
            self.error(
                Code::NestingTooDeep,
                expr.span,
                format!("the type alias `{name}` expands to a type that is too large"),
            )
            .help = Some("declare a record type instead".into());
            Ty::Error
        } else {
            ty
        };
        if let Some(info) = self.types.get_mut(name)
            && matches!(info.def, TypeDef::Alias(_))
        {
            info.def = TypeDef::Alias(ty.clone());
        }
        ty
    }

    /// Resolves a signature. Refinements of parameters and result may mention every parameter.
    fn resolve_signature(&mut self, name: &Ident, params: &[Param], ret: Option<&TypeExpr>, host: bool) -> Signature {
        let mut seen = HashSet::new();
        for p in params {
            self.first_of_name(&mut seen, &p.name, "parameter");
        }
        // First the unrefined bases, so refinements can name any parameter.
        let bases: Vec<(String, Ty)> =
            params.iter().map(|p| (p.name.name.clone(), self.resolve_type_quiet_base(&p.ty))).collect();
        let resolved: Vec<(String, Ty)> = params
            .iter()
            .map(|p| {
                let ty = self.resolve_type(&p.ty, &bases);
                if matches!(ty.base(), Ty::Cap(_)) && !matches!(p.ty.kind, TypeExprKind::Named { .. }) {
                    self.error(Code::CapabilityStored, p.ty.span, "a capability cannot be refined");
                }
                (p.name.name.clone(), ty)
            })
            .collect();
        let ret_ty = match ret {
            Some(t) => {
                let ty = self.resolve_type(t, &bases);
                if !host && self.is_second_class(&ty) {
                    self.error(Code::CapabilityEscapes, t.span, "a function cannot return a capability").help =
                        Some("pass the capability to the code that needs it instead".into());
                }
                ty
            }
            None => Ty::Unit,
        };
        if host {
            // A host speaks JSON, which has no `Map` mapping yet.
            let spans = params.iter().map(|p| p.ty.span).chain(ret.map(|t| t.span));
            for ((_, ty), span) in resolved.iter().chain(std::iter::once(&(String::new(), ret_ty.clone()))).zip(spans) {
                if ty.any_part(&mut |t| matches!(t, Ty::Map(..))) {
                    self.error(Code::TypeMismatch, span, "a tool cannot take or return a `Map`").help =
                        Some("use a `List[(K, V)]`: a plan makes a `Map` of it with `map_from`".into());
                }
            }
        }
        let declares_result = ret.is_some();
        Signature { name: name.name.clone(), params: resolved, ret: ret_ty, declares_result, span: name.span }
    }

    /// The base type of a type expression, without checking refinements or reporting errors
    /// (they are reported when the full type is resolved).
    pub fn resolve_type_quiet_base(&mut self, t: &TypeExpr) -> Ty {
        let n = self.diags.len();
        let ty = match &t.kind {
            TypeExprKind::Refined { base, .. } => self.resolve_type(base, &[]),
            _ => self.resolve_type(t, &[]),
        };
        self.diags.truncate(n);
        ty.strip()
    }

    /// Resolves a type expression. `params` are the names (with their base types) a refinement
    /// in it may mention besides the refined variable; refinements in local annotations also
    /// see the local scope.
    pub fn resolve_type(&mut self, t: &TypeExpr, params: &[(String, Ty)]) -> Ty {
        match &t.kind {
            TypeExprKind::Error => Ty::Error,
            TypeExprKind::Tuple(ts) if ts.is_empty() => Ty::Unit,
            TypeExprKind::Tuple(ts) => {
                let tys: Vec<Ty> = ts.iter().map(|e| self.resolve_type(e, params)).collect();
                for (ty, e) in tys.iter().zip(ts) {
                    self.check_data_type(ty, e.span);
                }
                Ty::Tuple(tys)
            }
            TypeExprKind::Fn { params: ps, ret } => {
                let ps = ps.iter().map(|e| self.resolve_type(e, params)).collect();
                let ret = self.resolve_type(ret, params);
                Ty::func(ps, ret)
            }
            TypeExprKind::Refined { var, base, pred } => {
                let base_ty = self.resolve_type(base, params);
                self.refine(var, base_ty, pred, params, t.span)
            }
            TypeExprKind::Named { name, args } => self.resolve_named(name, args, params, t.span),
        }
    }

    fn resolve_named(&mut self, name: &Ident, args: &[TypeExpr], params: &[(String, Ty)], span: Span) -> Ty {
        let arity = |c: &mut Checker<'_>, n: usize| -> bool {
            if args.len() != n {
                c.error(
                    Code::WrongArgCount,
                    span,
                    format!("`{}` takes {n} type argument{}, found {}", name.name, plural(n), args.len()),
                );
                false
            } else {
                true
            }
        };
        let simple = match name.name.as_str() {
            "Int" => Some(Ty::Int),
            "Float" => Some(Ty::Float),
            "Decimal" => Some(Ty::Decimal),
            "Date" => Some(Ty::Date),
            "DateTime" => Some(Ty::DateTime),
            "Duration" => Some(Ty::Duration),
            "Bool" => Some(Ty::Bool),
            "String" => Some(Ty::Str),
            _ => None,
        };
        if let Some(ty) = simple {
            return if arity(self, 0) { ty } else { Ty::Error };
        }
        match name.name.as_str() {
            "List" | "Option" => {
                if !arity(self, 1) {
                    return Ty::Error;
                }
                let inner = self.resolve_type(&args[0], params);
                if name.name == "List" {
                    self.defer_element_check(inner.clone(), span, Holder::List);
                }
                self.check_data_type(&inner, args[0].span);
                return if name.name == "List" { Ty::list(inner) } else { Ty::option(inner) };
            }
            LABEL => {
                if self.role == Role::Plan {
                    self.error(Code::UndefinedType, name.span, "the type `Label` exists only in policy modules").help =
                        Some("labels are declared by the policy's `@label` annotations".into());
                    return Ty::Error;
                }
                return if arity(self, 0) { label_ty() } else { Ty::Error };
            }
            LABELED => {
                if !arity(self, 1) {
                    return Ty::Error;
                }
                let inner = self.resolve_type(&args[0], params);
                self.check_data_type(&inner, args[0].span);
                self.defer_element_check(inner.clone(), span, Holder::Labeled);
                return labeled_ty(inner);
            }
            "Result" => {
                if !arity(self, 2) {
                    return Ty::Error;
                }
                let a = self.resolve_type(&args[0], params);
                let b = self.resolve_type(&args[1], params);
                self.check_data_type(&a, args[0].span);
                self.check_data_type(&b, args[1].span);
                return Ty::Result(Box::new(a), Box::new(b));
            }
            "Map" => {
                if !arity(self, 2) {
                    return Ty::Error;
                }
                let k = self.resolve_type(&args[0], params);
                let v = self.resolve_type(&args[1], params);
                if !crate::builtins::orderable(self, &k) {
                    self.error(Code::TypeMismatch, args[0].span, format!("a `Map`'s keys can be ordered, not `{k}`"))
                        .help =
                        Some("a key is an `Int`, `Float`, `Decimal`, `String` or `Bool`, or a tuple of them".into());
                }
                self.defer_element_check(v.clone(), span, Holder::List);
                self.check_data_type(&k, args[0].span);
                self.check_data_type(&v, args[1].span);
                return Ty::Map(Box::new(k), Box::new(v));
            }
            _ => {}
        }
        let Some(info) = self.types.get(&name.name) else {
            let mut d =
                Diagnostic::error(Code::UndefinedType, name.span, format!("the type `{}` is not defined", name.name));
            if let Some(s) =
                suggest(&name.name, self.types.keys().map(String::as_str).chain(BUILTIN_TYPES.iter().copied()))
            {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.diags.push(d);
            return Ty::Error;
        };
        let n: Rc<str> = Rc::from(name.name.as_str());
        match info.def.clone() {
            TypeDef::Opaque { arity: k } => {
                if !arity(self, k) {
                    return Ty::Error;
                }
                let tys: Vec<Ty> = args.iter().map(|a| self.resolve_type(a, params)).collect();
                for (ty, a) in tys.iter().zip(args) {
                    self.check_data_type(ty, a.span);
                }
                Ty::Opaque(n, tys)
            }
            def => {
                if !arity(self, 0) {
                    return Ty::Error;
                }
                match def {
                    TypeDef::Record { .. } => Ty::Record(n),
                    TypeDef::Enum { .. } => Ty::Enum(n),
                    TypeDef::Linear => Ty::Linear(n),
                    TypeDef::Capability { .. } => Ty::Cap(n),
                    TypeDef::Alias(_) => self.resolve_alias(&name.name),
                    TypeDef::Opaque { .. } => Ty::Error,
                }
            }
        }
    }

    /// Checks that a list's (or a `Labeled`'s) element type is not linear. Declarations may refer
    /// to records declared after them: while they are resolved, this is decided once every
    /// record's fields are known.
    fn defer_element_check(&mut self, elem: Ty, span: Span, holder: Holder) {
        match &mut self.pending_lists {
            Some(pending) => pending.push((elem, span, holder)),
            None => self.check_collection_element(&elem, span, holder),
        }
    }

    /// Builds `{var: base | pred}` after checking that `pred` is a boolean in the decidable
    /// fragment over `var`, `params` and (for local annotations) the local scope.
    fn refine(&mut self, var: &Ident, base: Ty, pred: &Expr, params: &[(String, Ty)], span: Span) -> Ty {
        if base.is_error() {
            return Ty::Error;
        }
        let mut env: Vec<(String, Ty, Option<Term>)> =
            params.iter().map(|(n, t)| (n.clone(), t.clone(), None)).collect();
        // In a local annotation the predicate may also mention bindings in scope: captured now.
        let mut names: Vec<String> = Vec::new();
        walk_names(pred, &mut |id: &Ident, called: bool| {
            if !called && !names.contains(&id.name) {
                names.push(id.name.clone());
            }
        });
        let mut found: Vec<usize> = names
            .iter()
            .filter(|n| !params.iter().any(|(p, _)| p == *n))
            .filter_map(|n| self.lookup(n))
            .filter(|&i| self.scope[i].term.is_some())
            .collect();
        found.sort_unstable();
        let captured: Vec<(String, Ty, Option<Term>)> = found
            .into_iter()
            .map(|i| &self.scope[i])
            .map(|b| (b.name.to_string(), b.ty.clone(), b.term.clone()))
            .collect();
        env.extend(captured);
        let refinement = Refinement {
            base,
            var: var.name.clone(),
            pred: Rc::new(pred.clone()),
            text: Rc::from(self.text(pred.span)),
            span,
            env,
        };
        if self.check_predicate(&refinement) { Ty::Refined(Rc::new(refinement)) } else { refinement.base }
    }

    pub fn visible_bindings(&self) -> impl DoubleEndedIterator<Item = &Binding> {
        self.scope[self.barrier.min(self.scope.len())..].iter()
    }

    /// Reports a capability (or a closure holding one) placed inside a data type.
    pub fn check_data_type(&mut self, ty: &Ty, span: Span) {
        if self.is_second_class(ty) {
            self.error(Code::CapabilityStored, span, format!("the capability type `{ty}` cannot be part of data"))
                .help = Some("capabilities are passed as arguments, never stored".into());
        }
    }

    // ---------------------------------------------------------------- type predicates

    /// Follows solved inference variables.
    pub fn resolve(&self, t: &Ty) -> Ty {
        match t {
            Ty::Var(v) => match self.subst.get(*v as usize) {
                Some(Some(t)) => self.resolve(t),
                _ => t.clone(),
            },
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.resolve(t)).collect()),
            Ty::List(t) => Ty::list(self.resolve(t)),
            Ty::Option(t) => Ty::option(self.resolve(t)),
            Ty::Result(a, b) => Ty::Result(Box::new(self.resolve(a)), Box::new(self.resolve(b))),
            Ty::Map(a, b) => Ty::Map(Box::new(self.resolve(a)), Box::new(self.resolve(b))),
            Ty::Opaque(n, ts) => Ty::Opaque(n.clone(), ts.iter().map(|t| self.resolve(t)).collect()),
            Ty::Fn(f) => Ty::Fn(Rc::new(FnTy {
                params: f.params.iter().map(|t| self.resolve(t)).collect(),
                ret: self.resolve(&f.ret),
                second_class: f.second_class,
            })),
            t => t.clone(),
        }
    }

    pub fn record_fields(&self, name: &str) -> Option<(&[(String, Ty)], bool)> {
        match self.types.get(name).map(|i| &i.def) {
            Some(TypeDef::Record { fields, opaque }) => Some((fields, *opaque)),
            _ => None,
        }
    }

    pub fn enum_variants(&self, name: &str) -> Option<&[(String, Vec<Ty>)]> {
        match self.types.get(name).map(|i| &i.def) {
            Some(TypeDef::Enum { variants }) => Some(variants),
            _ => None,
        }
    }

    /// A value that must be used exactly once: a linear type or data holding one.
    pub fn is_linear(&self, t: &Ty) -> bool {
        self.holds(t, Property::Linear)
    }

    /// Does a value of this type hold a float anywhere (fields and payloads included)?
    pub fn holds_float(&self, t: &Ty) -> bool {
        self.holds(t, Property::Float)
    }

    /// Whether `t` has the property, looking through named types by the sets computed once
    /// their declarations are known (so no recursion follows chains of records).
    fn holds(&self, t: &Ty, p: Property) -> bool {
        let named = match p {
            Property::Linear => &self.linear_types,
            Property::Float => &self.float_types,
        };
        let mut names = Vec::new();
        scan(&self.resolve(t), p, &mut names) || names.iter().any(|n| named.contains(&**n))
    }

    /// Computes which records and enums are linear (hold a linear value) and which hold floats,
    /// by propagating from the types that hold one directly to those that contain them: linear
    /// in the number of declarations, whatever their nesting.
    pub fn compute_type_properties(&mut self) {
        let mut linear_dependents: HashMap<String, Vec<String>> = HashMap::new();
        let mut float_dependents: HashMap<String, Vec<String>> = HashMap::new();
        let mut direct_linear = Vec::new();
        let mut direct_float = Vec::new();
        let names: Vec<String> = self.types.keys().cloned().collect();
        for name in names {
            for (p, direct, dependents) in [
                (Property::Linear, &mut direct_linear, &mut linear_dependents),
                (Property::Float, &mut direct_float, &mut float_dependents),
            ] {
                let mut inner = Vec::new();
                let holds = self.parts_of(&name).iter().any(|t| scan(&self.resolve(t), p, &mut inner));
                if holds {
                    direct.push(name.clone());
                }
                for n in inner {
                    dependents.entry(n.to_string()).or_default().push(name.clone());
                }
            }
        }
        self.linear_types = propagate(direct_linear, &linear_dependents);
        self.float_types = propagate(direct_float, &float_dependents);
    }

    /// The field types of a record, or the payload types of an enum's variants.
    fn parts_of(&self, name: &str) -> Vec<Ty> {
        match self.types.get(name).map(|i| &i.def) {
            Some(TypeDef::Record { fields, .. }) => fields.iter().map(|(_, t)| t.clone()).collect(),
            Some(TypeDef::Enum { variants }) => variants.iter().flat_map(|(_, ts)| ts.clone()).collect(),
            _ => Vec::new(),
        }
    }

    /// Capabilities and closures that captured one: passable, never stored or returned.
    pub fn is_second_class(&self, t: &Ty) -> bool {
        match self.resolve(t).base() {
            Ty::Cap(_) => true,
            Ty::Fn(f) => f.second_class,
            _ => false,
        }
    }

    /// Only tools make values of these types.
    pub fn is_host_made(&self, t: &Ty) -> bool {
        match self.resolve(t).base() {
            Ty::Linear(_) | Ty::Opaque(..) | Ty::Cap(_) => true,
            Ty::Record(n) => self.types.get(&**n).is_some_and(|i| i.def.is_host_made()),
            _ => false,
        }
    }
}

/// A property a value may hold somewhere inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Property {
    Linear,
    Float,
}

/// Whether `t` holds the property directly; the records and enums it holds (where they would
/// count) are added to `names`. Lists count for floats, never for linear values: a list of
/// linear values is an error of its own.
fn scan(t: &Ty, p: Property, names: &mut Vec<Rc<str>>) -> bool {
    match t.base() {
        Ty::Linear(_) => p == Property::Linear,
        Ty::Float => p == Property::Float,
        Ty::Record(n) | Ty::Enum(n) => {
            names.push(n.clone());
            false
        }
        // A `Labeled` holding a linear type is an error of its own (like a list of them).
        Ty::Opaque(n, _) if &**n == LABELED && p == Property::Linear => false,
        Ty::Tuple(ts) | Ty::Opaque(_, ts) => {
            let mut any = false;
            for t in ts {
                any |= scan(t, p, names);
            }
            any
        }
        Ty::Option(t) => scan(t, p, names),
        Ty::List(t) => p == Property::Float && scan(t, p, names),
        Ty::Map(a, b) => p == Property::Float && (scan(a, p, names) || scan(b, p, names)),
        Ty::Result(a, b) => {
            let a = scan(a, p, names);
            scan(b, p, names) || a
        }
        _ => false,
    }
}

/// The names reachable from `start` through `dependents` (including `start`).
fn propagate(start: Vec<String>, dependents: &HashMap<String, Vec<String>>) -> HashSet<String> {
    let mut out: HashSet<String> = HashSet::new();
    let mut work = start;
    while let Some(n) = work.pop() {
        if out.insert(n.clone()) {
            work.extend(dependents.get(&n).into_iter().flatten().cloned());
        }
    }
    out
}

/// The value of a literal constant (`10`, `-1`, `true`, `"x"`).
fn literal_value(e: &Expr) -> Option<Term> {
    match &e.kind {
        ExprKind::Int(n) => Some(Term::Int(*n)),
        ExprKind::Bool(b) => Some(Term::Bool(*b)),
        ExprKind::Str(s) => Some(Term::Str(s.clone())),
        ExprKind::Unary { op: ast::UnOp::Neg, operand } => match operand.kind {
            ExprKind::Int(n) => n.checked_neg().map(Term::Int),
            _ => None,
        },
        _ => None,
    }
}

fn is_host_declaration(kind: &ItemKind) -> bool {
    matches!(
        kind,
        ItemKind::Linear { .. }
            | ItemKind::Opaque { .. }
            | ItemKind::Measure { .. }
            | ItemKind::Capability { .. }
            | ItemKind::Entry { .. }
            | ItemKind::Release { .. }
            | ItemKind::Record { opaque: true, .. }
    )
}

/// What `@approval` takes, for errors: every tier, the strictest first.
fn tiers_wanted() -> String {
    let names: Vec<String> = Tier::ALL.iter().rev().map(|t| format!("`{t}`")).collect();
    format!("`@approval` takes one of {}", names.join(", "))
}
