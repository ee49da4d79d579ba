//! Control flow: blocks and statements, `let`, `if`, `match` (with its patterns and
//! exhaustiveness), `for` and closures, and how linear values join across branches.

use super::*;

impl Checker<'_> {
    /// Paths split at `mark` must consume the same linear values: reports the first that
    /// differs and leaves every such value consumed. Only the bindings some path changed are
    /// looked at; one no path changed is as it was at the mark on each.
    pub(super) fn lin_join(&mut self, mark: LinMark, paths: &[LinPath], span: Span, what: &str) {
        // Back to the states at the mark, which the paths that left a binding alone kept.
        self.lin_undo(mark);
        let mut by_index: std::collections::BTreeMap<usize, Vec<Option<Lin>>> = std::collections::BTreeMap::new();
        for (p, path) in paths.iter().enumerate() {
            for &(i, l) in path {
                let at_mark = self.scope.get(i).and_then(|b| b.lin);
                by_index.entry(i).or_insert_with(|| vec![at_mark; paths.len()])[p] = l;
            }
        }
        let mut reported = false;
        for (i, on_paths) in by_index {
            self.lin_examined += on_paths.len() as u64;
            // No longer tracked on some path (an error was reported there): stays untracked.
            if on_paths.iter().any(Option::is_none) {
                self.set_lin(i, None);
                continue;
            }
            // Misused on some path (reported there): not reported again at the join.
            if on_paths.contains(&Some(Lin::Misused)) {
                self.set_lin(i, Some(Lin::Misused));
                continue;
            }
            let consumed_at = on_paths.iter().find_map(|l| match l {
                Some(Lin::Consumed(at)) => Some(*at),
                _ => None,
            });
            let live_somewhere = on_paths.iter().any(|l| matches!(l, Some(Lin::Live)));
            if consumed_at.is_some() && live_somewhere && !reported {
                let name = self.scope.get(i).map(|b| b.name.clone()).unwrap_or_default();
                self.error(
                    Code::LinearBranchMismatch,
                    span,
                    format!("the linear value `{name}` is used on some paths through this {what} but not on others"),
                )
                .help = Some("every branch must use the same linear values".into());
                reported = true;
            }
            self.set_lin(i, Some(consumed_at.map_or(Lin::Live, Lin::Consumed)));
        }
    }

    pub(super) fn check_if(
        &mut self,
        e: &Expr,
        cond: &Expr,
        then: &Block,
        else_: Option<&Expr>,
        expected: Option<&Ty>,
    ) -> Typed {
        let c = self.check(cond, &Ty::Bool);
        let ctext = self.text(cond.span);
        let mark = self.facts.len();
        let before = self.lin_mark();
        if let Some(ct) = &c.term {
            self.add_fact(ct.clone(), format!("if {ctext}"));
        }
        let t = self.check_block(then, expected);
        self.facts.truncate(mark);
        let after_then = self.lin_since(before);
        self.lin_undo(before);
        if let Some(ct) = &c.term {
            self.add_fact(Term::Not(Box::new(ct.clone())), format!("else of `if {ctext}`"));
        }
        let branch_ty = expected.cloned().unwrap_or_else(|| t.ty.strip());
        let f = match else_ {
            Some(else_e) => Some(self.check(else_e, &branch_ty)),
            None => {
                if !self.unify(&t.ty, &Ty::Unit) {
                    let span = then.tail.as_ref().map_or(then.span, |t| t.span);
                    self.error(
                        Code::TypeMismatch,
                        span,
                        format!("an `if` without `else` must have type `()`, found `{}`", self.resolve(&t.ty)),
                    )
                    .help = Some("add an `else` branch".into());
                }
                None
            }
        };
        self.facts.truncate(mark);
        let after_else = self.lin_since(before);
        self.lin_join(before, &[after_then, after_else], if_keyword(e.span), "`if`");
        let ty = match &f {
            // The value holds a capability if either branch's does.
            Some(f) if self.is_second_class(&t.ty) || self.is_second_class(&f.ty) => self.second_class(&branch_ty),
            Some(_) => branch_ty,
            None => Ty::Unit,
        };
        let term = match (&c.term, t.term, f.and_then(|f| f.term)) {
            (Some(ct), Some(a), Some(b)) if self.sort_of(&ty).is_some() => {
                Some(Term::Ite(Box::new(ct.clone()), Box::new(a), Box::new(b)))
            }
            _ => self.fresh(&ty, "_if"),
        };
        Typed { ty, term }
    }

    pub(super) fn check_match(
        &mut self,
        e: &Expr,
        scrutinee: &Expr,
        arms: &[cordon_syntax::ast::Arm],
        expected: Option<&Ty>,
    ) -> Typed {
        if self.in_refinement {
            self.error(Code::UnsupportedRefinement, e.span, "`match` is not allowed in a refinement");
            return Typed::error();
        }
        let s = self.infer(scrutinee);
        let sty = self.resolve(&s.ty);
        let paths_start = self.lin_mark();
        let mark = self.facts.len();
        let mut result_ty: Option<Ty> = expected.cloned();
        let mut states = Vec::new();
        let mut earlier_literals: Vec<Term> = Vec::new();
        let mut pattern_errors = false;
        let mut holds_capability = false;
        for arm in arms {
            self.lin_undo(paths_start);
            let depth = self.scope.len();
            for lit in &earlier_literals {
                self.add_fact(Term::Not(Box::new(lit.clone())), "an earlier arm did not match");
            }
            let mut arm_lit = None;
            if let Some(st) = &s.term
                && let (Some(cond), exact) = self.pattern_condition(&arm.pat, &sty, st)
            {
                let matched = format!("{} matched {}", self.text(scrutinee.span), self.text(arm.pat.span));
                self.add_fact(cond.clone(), matched);
                // Only a condition that says exactly when the pattern matches may be negated
                // for the arms after it.
                arm_lit = exact.then_some(cond);
            }
            let before = self.diags.len();
            self.bind_pattern(&arm.pat, &sty, s.term.clone(), true);
            pattern_errors |= self.diags.len() > before;
            if let Some(g) = &arm.guard {
                // A guard runs before its arm is chosen; if it fails the next arm runs, so it
                // may not consume a linear value.
                let before_guard = self.lin_mark();
                let gt = self.check(g, &Ty::Bool);
                let after_guard = self.lin_since(before_guard);
                self.lin_join(before_guard, &[LinPath::new(), after_guard], g.span, "guard");
                if let Some(t) = gt.term {
                    self.add_fact(t, format!("if {}", self.text(g.span)));
                }
            }
            let body = match &result_ty {
                Some(t) => self.check(&arm.body, &t.clone()),
                None => {
                    let b = self.infer(&arm.body);
                    result_ty = Some(b.ty.strip());
                    b
                }
            };
            holds_capability |= self.is_second_class(&body.ty);
            self.end_scope(depth);
            self.facts.truncate(mark);
            states.push(self.lin_since(paths_start));
            if arm.guard.is_none()
                && let Some(l) = arm_lit
            {
                earlier_literals.push(l);
            }
        }
        self.lin_join(paths_start, &states, keyword_span(e.span, 5), "`match`");
        if !sty.is_error() && !pattern_errors {
            self.check_exhaustive(&sty, arms, keyword_span(e.span, 5));
        }
        let ty = result_ty.unwrap_or(if arms.is_empty() { Ty::Unit } else { Ty::Error });
        let ty = if holds_capability { self.second_class(&ty) } else { ty };
        self.fresh_typed(ty, "_match")
    }

    pub(super) fn check_for(&mut self, pat: &Pattern, iter: &Expr, body: &Block) -> Typed {
        let it = self.infer(iter);
        let elem = match self.resolve(&it.ty).base() {
            Ty::List(t) => (**t).clone(),
            Ty::Error => Ty::Error,
            Ty::Var(_) => {
                let v = self.new_var(iter.span);
                self.unify(&it.ty, &Ty::list(v.clone()));
                v
            }
            other => {
                self.error(Code::TypeMismatch, iter.span, format!("`for` loops over a `List`, found `{other}`")).help =
                    Some("use `range(a, b)` to loop over numbers".into());
                Ty::Error
            }
        };
        let mark = self.facts.len();
        let depth = self.scope.len();
        self.loops.push(depth);
        let elem_term = self.fresh(&elem, "_item");
        self.bind_pattern(pat, &elem, elem_term, false);
        let b = self.check_block(body, None);
        if self.is_linear(&b.ty) {
            let span = body.tail.as_ref().map_or(body.span, |t| t.span);
            self.error(Code::LinearUnused, span, "the loop body's linear value is dropped");
        }
        self.end_scope(depth);
        self.loops.pop();
        self.facts.truncate(mark);
        Typed { ty: Ty::Unit, term: None }
    }

    pub fn check_block(&mut self, b: &Block, expected: Option<&Ty>) -> Typed {
        if self.in_refinement {
            self.error(Code::UnsupportedRefinement, b.span, "blocks are not allowed in a refinement");
            return Typed::error();
        }
        let depth = self.scope.len();
        for s in &b.stmts {
            self.check_stmt(s);
        }
        let t = match (&b.tail, expected) {
            (Some(tail), Some(exp)) => self.check(tail, exp),
            (Some(tail), None) => self.infer(tail),
            (None, exp) => {
                if let Some(exp) = exp
                    && !self.unify(&Ty::Unit, exp)
                {
                    let span = match b.stmts.last() {
                        Some(Stmt::Expr(e)) => e.span,
                        Some(Stmt::Let { span, .. }) => *span,
                        None => b.span,
                    };
                    let exp = self.resolve(exp).strip();
                    let mut d = Diagnostic::error(Code::TypeMismatch, span, format!("expected `{exp}`, found `()`"))
                        .with_primary_label("the block ends here without a value");
                    if matches!(b.stmts.last(), Some(Stmt::Expr(_))) {
                        d = d.with_help("remove the `;` after the last expression to make it the value");
                    }
                    self.diags.push(d);
                }
                Typed { ty: Ty::Unit, term: None }
            }
        };
        self.end_scope(depth);
        t
    }

    /// Pops bindings down to `depth`, reporting linear values never used.
    pub fn end_scope(&mut self, depth: usize) {
        while self.scope.len() > depth {
            let Some(b) = self.pop_scope() else { break };
            if b.lin == Some(Lin::Live) {
                self.error(Code::LinearUnused, b.span, format!("the linear value `{}` is never used", b.name)).help =
                    Some("a linear value must be used exactly once: pass it on or return it".into());
            }
        }
    }

    pub(super) fn check_stmt(&mut self, s: &Stmt) {
        let span = match s {
            Stmt::Let { pat, .. } => pat.span,
            Stmt::Expr(e) => e.span,
        };
        if self.out_of_time(span) {
            return;
        }
        match s {
            Stmt::Let { pat, ty, value, .. } => {
                let t = match ty {
                    Some(te) => {
                        let ann = self.resolve_type(te, &[]);
                        self.check(value, &ann)
                    }
                    None => self.infer(value),
                };
                if let PatternKind::Bind(id) = &pat.kind
                    && let Some(term) = &t.term
                {
                    let name = self.fresh_name(&id.name);
                    let Some(sort) = self.sort_of(&t.ty) else {
                        self.bind_pattern(pat, &t.ty, Some(term.clone()), false);
                        return;
                    };
                    let v = Term::Var(name, sort);
                    let origin = format!("let {} = {}", id.name, abbreviate(self.text(value.span)));
                    self.add_fact(Term::Eq(Box::new(v.clone()), Box::new(term.clone())), origin.clone());
                    self.assume(&v, &t.ty, &origin);
                    self.push_binding(id, t.ty, Some(v));
                    return;
                }
                self.bind_pattern(pat, &t.ty, t.term, false);
            }
            Stmt::Expr(e) => {
                let t = self.infer(e);
                if self.is_linear(&t.ty) {
                    self.error(Code::LinearUnused, e.span, "this linear value is dropped").help =
                        Some("bind it with `let` and use it, or return it".into());
                }
            }
        }
    }

    /// Binds a parameter. A function received as an argument may be a closure holding a
    /// capability, so inside the body it is second-class: callable, never stored or returned.
    pub fn push_param(&mut self, id: &Ident, ty: Ty, term: Option<Term>) {
        let ty = self.second_class(&ty);
        self.push_binding(id, ty, term);
    }

    /// The type of a function that may hold a capability (other types are unchanged).
    pub fn second_class(&self, t: &Ty) -> Ty {
        match self.resolve(t) {
            Ty::Fn(f) => Ty::Fn(Rc::new(FnTy { second_class: true, ..(*f).clone() })),
            t => t,
        }
    }

    pub fn push_binding(&mut self, id: &Ident, ty: Ty, term: Option<Term>) {
        // Whether a binding is linear is decided now; if its type is still being inferred,
        // check at the end that it did not turn out to hold a linear value or a capability.
        if has_var(&self.resolve(&ty)) {
            self.bound_before_inferred.push((id.clone(), ty.clone()));
        }
        let lin = self.is_linear(&ty).then_some(Lin::Live);
        self.record_binding(&id.name, id.span, &ty);
        self.push_scope(Binding { name: id.name.as_str().into(), ty, term, span: id.span, lin });
    }

    /// Binds the names of a pattern matched against a value of type `ty`.
    pub fn bind_pattern(&mut self, pat: &Pattern, ty: &Ty, term: Option<Term>, refutable_ok: bool) {
        let ty = self.resolve(ty);
        match &pat.kind {
            PatternKind::Error => {}
            PatternKind::Wild => {
                if self.is_linear(&ty) {
                    self.error(Code::LinearUnused, pat.span, "`_` drops a linear value").help =
                        Some("bind it to a name and use it".into());
                }
            }
            PatternKind::Bind(id) => {
                let term = match term {
                    Some(Term::Var(n, s)) if !n.starts_with('_') => Some(Term::Var(n, s)),
                    Some(t) => match self.sort_of(&ty) {
                        Some(sort) => {
                            let v = Term::Var(self.fresh_name(&id.name), sort);
                            self.add_fact(
                                Term::Eq(Box::new(v.clone()), Box::new(t)),
                                format!("{} is bound by a pattern", id.name),
                            );
                            Some(v)
                        }
                        None => None,
                    },
                    // A value without a term yet (its type was only just inferred) gets one now,
                    // so what is learnt about it later has something to refer to.
                    None => self.fresh(&ty, &id.name),
                };
                self.push_binding(id, ty, term);
            }
            PatternKind::Int(_) | PatternKind::Str(_) | PatternKind::Bool(_) | PatternKind::Unit => {
                let lt = match &pat.kind {
                    PatternKind::Int(_) => Ty::Int,
                    PatternKind::Str(_) => Ty::Str,
                    PatternKind::Bool(_) => Ty::Bool,
                    _ => Ty::Unit,
                };
                if !self.unify(&lt, &ty) {
                    self.mismatch(pat.span, &ty, &lt);
                } else if !refutable_ok && !matches!(lt, Ty::Unit) {
                    self.refutable_let(pat.span);
                }
            }
            PatternKind::Tuple(ps) => {
                let parts = match ty.base() {
                    Ty::Tuple(ts) if ts.len() == ps.len() => ts.clone(),
                    Ty::Var(_) => {
                        let vs: Vec<Ty> = ps.iter().map(|p| self.new_var(p.span)).collect();
                        self.unify(&ty, &Ty::Tuple(vs.clone()));
                        vs
                    }
                    Ty::Error => vec![Ty::Error; ps.len()],
                    other => {
                        self.error(
                            Code::TypeMismatch,
                            pat.span,
                            format!("expected `{other}`, found a tuple of {} elements", ps.len()),
                        );
                        vec![Ty::Error; ps.len()]
                    }
                };
                for (i, (p, t)) in ps.iter().zip(&parts).enumerate() {
                    let sub = term.as_ref().and_then(|tt| self.tuple_field(tt, ty.base(), i, t));
                    self.bind_pattern(p, t, sub, refutable_ok);
                }
            }
            PatternKind::Variant { enum_name, name, args } => {
                if !refutable_ok {
                    self.refutable_let(pat.span);
                }
                let payload = self.variant_payload(&ty, enum_name.as_deref(), name, pat.span);
                let Some(payload) = payload else {
                    for p in args {
                        self.bind_pattern(p, &Ty::Error, None, true);
                    }
                    return;
                };
                if payload.len() != args.len() {
                    self.error(
                        Code::WrongArgCount,
                        pat.span,
                        format!(
                            "`{}` has {} field{}, the pattern has {}",
                            name.name,
                            payload.len(),
                            plural(payload.len()),
                            args.len()
                        ),
                    );
                }
                for (i, p) in args.iter().enumerate() {
                    let t = payload.get(i).cloned().unwrap_or(Ty::Error);
                    let sub = self.fresh_from(&t, &format!("_{}", name.name), &format!("what `{}` holds", name.name));
                    self.bind_pattern(p, &t, sub, true);
                }
            }
        }
    }

    pub(super) fn refutable_let(&mut self, span: Span) {
        self.error(Code::NonExhaustiveMatch, span, "this pattern may not match").help =
            Some("`let` needs a pattern that always matches; use `match`".into());
    }

    /// The payload types of a variant pattern against the scrutinee type.
    pub(super) fn variant_payload(
        &mut self,
        ty: &Ty,
        enum_name: Option<&Ident>,
        name: &Ident,
        span: Span,
    ) -> Option<Vec<Ty>> {
        let ty = self.resolve(ty);
        match (enum_name, name.name.as_str(), ty.base()) {
            (_, _, Ty::Error) => None,
            (None, "Some", Ty::Option(t)) => Some(vec![(**t).clone()]),
            (None, "None", Ty::Option(_)) => Some(vec![]),
            (None, "Ok", Ty::Result(t, _)) => Some(vec![(**t).clone()]),
            (None, "Err", Ty::Result(_, e)) => Some(vec![(**e).clone()]),
            (None, "Some" | "None", Ty::Var(_)) => {
                let v = self.new_var(span);
                self.unify(&ty, &Ty::option(v.clone()));
                Some(if name.name == "Some" { vec![v] } else { vec![] })
            }
            (Some(en), _, Ty::Enum(e)) if en.name == **e => {
                let variants = self.enum_variants(e).map(<[_]>::to_vec).unwrap_or_default();
                self.variant(e, &variants, name)
            }
            (Some(en), _, _) if !self.types.contains_key(&en.name) => {
                self.error(Code::UndefinedType, en.span, format!("the type `{}` is not defined", en.name));
                None
            }
            _ => {
                let what = match enum_name {
                    Some(en) => format!("{}::{}", en.name, name.name),
                    None => name.name.clone(),
                };
                self.error(
                    Code::TypeMismatch,
                    span,
                    format!("the pattern `{what}` cannot match a value of type `{ty}`"),
                );
                None
            }
        }
    }

    pub(super) fn check_closure(
        &mut self,
        params: &[ClosureParam],
        ret: Option<&TypeExpr>,
        body: &Expr,
        expected: Option<&Rc<FnTy>>,
    ) -> Typed {
        if expected.is_some_and(|f| f.params.len() != params.len()) {
            let n = expected.map_or(0, |f| f.params.len());
            self.error(Code::WrongArgCount, body.span, format!("this closure must take {n} parameter{}", plural(n)));
        }
        let depth = self.scope.len();
        // Like a signature's, the closure's refinements may name its parameters; their terms
        // are filled in inside the body, and are unknown at calls through the function value.
        let bases: Vec<(String, Ty)> = params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let base = match &p.ty {
                    Some(te) => self.resolve_type_quiet_base(te),
                    None => expected.and_then(|f| f.params.get(i)).map_or(Ty::Error, Ty::strip),
                };
                (p.name.name.clone(), base)
            })
            .collect();
        let mut ptys = Vec::new();
        let mut bindings: Vec<(Ident, Ty)> = Vec::new();
        let mut uninferred: Vec<&str> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, p) in params.iter().enumerate() {
            self.first_of_name(&mut seen, &p.name, "parameter");
            let from_context = expected.and_then(|f| f.params.get(i)).cloned();
            // On a mismatch the body sees the annotation and the caller sees its own type, so the
            // one mistake is reported once.
            let mut outer = None;
            let ty = match (&p.ty, &from_context) {
                (Some(te), ctx) => {
                    let t = self.resolve_type(te, &bases);
                    match ctx {
                        Some(ctx) if !self.unify(&t, ctx) => {
                            self.mismatch(te.span, ctx, &t);
                            outer = Some(ctx.clone());
                            t
                        }
                        Some(ctx) if crate::logic::has_refinement(&t) => {
                            // An argument the caller passes has the caller's type: what it says
                            // of the value proves the annotation (`map` over a list of
                            // `{v: Int | v != 0}` with `|x: {v: Int | v != 0}| ..`).
                            let g = ctx.clone();
                            let mark = self.facts.len();
                            let value = self.fresh(&g, &p.name.name);
                            self.prove_refinements(value.as_ref(), &g, &t, te.span);
                            self.facts.truncate(mark);
                            // The caller sees its own parameter type: the annotation was proved
                            // from it here (or reported here, once).
                            outer = Some(g);
                            t
                        }
                        _ => t,
                    }
                }
                (None, Some(ctx)) => ctx.clone(),
                (None, None) => {
                    uninferred.push(&p.name.name);
                    Ty::Error
                }
            };
            ptys.push(outer.unwrap_or_else(|| ty.clone()));
            bindings.push((p.name.clone(), ty));
        }
        if let Some(first) = params.iter().find(|p| p.ty.is_none() && expected.is_none()) {
            let names = uninferred.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
            self.error(Code::CannotInfer, first.name.span, format!("the type of {names} cannot be inferred here"))
                .help = Some(format!("annotate it: `|{}: Int| ..`", first.name.name));
        }
        self.closures.push(ClosureFrame { depth, captures_capability: false, fill: false });
        let saved_loops = std::mem::take(&mut self.loops);
        // What the body assumes (its parameters' refinements, its lets) holds only when the
        // closure runs, which it may never do.
        let mark = self.facts.len();
        let ret_ty = match ret {
            Some(te) => Some(self.resolve_type(te, &bases)),
            None => expected.map(|f| f.ret.clone()),
        };
        let mut terms: Vec<(String, Term)> = Vec::new();
        let mut fresh_terms = Vec::new();
        for (id, ty) in &bindings {
            let term = self.sort_of(ty).map(|s| Term::Var(self.fresh_name(&id.name), s));
            if let Some(t) = &term {
                terms.push((id.name.clone(), t.clone()));
            }
            fresh_terms.push(term);
        }
        for ((id, ty), term) in bindings.into_iter().zip(fresh_terms) {
            let ty = self.close(&ty, &terms);
            if let Some(t) = &term {
                self.assume(t, &ty, &format!("parameter {}", id.name));
            }
            self.push_param(&id, ty, term);
        }
        let body_ret = ret_ty.as_ref().map(|t| self.close(t, &terms));
        let b = match &body_ret {
            Some(t) => self.check(body, t),
            None => self.infer(body),
        };
        if self.is_second_class(&b.ty) {
            self.error(Code::CapabilityEscapes, body.span, "a closure cannot return a capability");
        }
        self.end_scope(depth);
        self.facts.truncate(mark);
        self.loops = saved_loops;
        let frame = self.closures.pop();
        let second_class = frame.is_some_and(|f| f.captures_capability);
        let ret = ret_ty.unwrap_or_else(|| b.ty.strip());
        Typed { ty: Ty::Fn(Rc::new(FnTy { params: ptys, ret, second_class })), term: None }
    }

    /// `to_labeled { b }`: a `Labeled[T]` where `T` is the block's type. `T` is data (no linear
    /// value, no capability); the block may not use linear values from outside it; what is
    /// known inside (facts, the result's term) stays inside: the box gets a fresh term.
    pub(super) fn check_to_labeled(&mut self, b: &Block, expected: Option<&Ty>) -> Typed {
        let inner_expected = match expected.map(|t| self.resolve(t)) {
            Some(Ty::Opaque(n, args)) if &*n == LABELED && args.len() == 1 => args.into_iter().next(),
            _ => None,
        };
        let mark = self.facts.len();
        self.labeled_blocks.push(self.scope.len());
        let t = self.check_block(b, inner_expected.as_ref());
        self.labeled_blocks.pop();
        self.facts.truncate(mark);
        let result_span = b.tail.as_ref().map_or(b.span, |t| t.span);
        if self.is_linear(&t.ty) {
            let ty = self.resolve(&t.ty).strip();
            self.error(
                Code::LinearInCollection,
                result_span,
                format!("a `Labeled` value cannot hold the linear type `{ty}`"),
            )
            .help = Some("a `Labeled` value is data: give linear values back outside the block".into());
            return Typed::error();
        }
        if self.is_second_class(&t.ty) {
            self.store(&t, result_span);
            return Typed::error();
        }
        if t.ty.is_error() {
            return Typed::error();
        }
        let inner = inner_expected.unwrap_or_else(|| t.ty.strip());
        self.fresh_typed(labeled_ty(inner), "_labeled")
    }

    /// `expr as ty`, the cast `cast`: its target is resolved here, once, and recorded for the
    /// stages after the checker ([`crate::Casts`]), whether or not the conversion checks.
    pub(super) fn check_cast(&mut self, cast: &Expr, expr: &Expr, ty: &TypeExpr, span: Span) -> Typed {
        let target = self.resolve_type(ty, &[]);
        if let Some(resolved) = crate::export::resolved(self, &target) {
            self.resolved.casts.record(cast, resolved);
        }
        let t = self.infer(expr);
        if self.is_host_made(&target) {
            let name = self.resolve(&target).strip().to_string();
            self.forged(span, &name);
            return Typed::error();
        }
        // `as` converts a number; it proves nothing. A refinement is asked of a value by the
        // type it is bound to, where it becomes an obligation.
        let resolved = self.resolve(&target);
        if matches!(resolved, Ty::Refined(_)) {
            let written = resolved.to_string();
            self.error(Code::TypeMismatch, ty.span, format!("`as` cannot convert to the refined type `{written}`"))
                .help = Some(format!("to require it, give the value a type: `let name: {written} = ...`"));
            return Typed::error();
        }
        let from = self.resolve(&t.ty).base().strip();
        match (&from, target.base()) {
            (Ty::Error, _) | (_, Ty::Error) => Typed::error(),
            (Ty::Int, Ty::Float)
            | (Ty::Float, Ty::Int)
            | (Ty::Int, Ty::Int)
            | (Ty::Float, Ty::Float)
            | (Ty::Int, Ty::Decimal)
            | (Ty::Decimal, Ty::Decimal) => {
                if from.to_string() == target.base().to_string() {
                    return Typed { ty: from, term: t.term };
                }
                self.fresh_typed(target.base().clone(), "_cast")
            }
            _ => {
                self.error(Code::TypeMismatch, expr.span, format!("cannot convert `{from}` to `{target}` with `as`"))
                    .help = Some("`as` converts between `Int` and `Float`, and an `Int` to a `Decimal`".into());
                Typed::error()
            }
        }
    }
}
