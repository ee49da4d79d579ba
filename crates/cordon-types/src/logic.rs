//! The bridge from programs to logic: the solver sort of each type, fresh logical values,
//! facts from refined types, instantiation of refinement predicates, and proof obligations that
//! become `refinement-unproven` / `refinement-unknown` diagnostics with the failing conjunct, the
//! facts used and a counterexample.

use std::collections::{BTreeSet, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use cordon_smt::{Answer, FuncDecl, Query, Sort, Term};
use cordon_syntax::{Code, Diagnostic, Span};

pub use crate::facts::vars_of;
use crate::state::{Binding, Checker};
use crate::ty::{Refinement, Ty};

impl Checker<'_> {
    /// The solver sort of values of a type, if they have a logical representation.
    pub fn sort_of(&self, t: &Ty) -> Option<Sort> {
        let t = self.resolve(t);
        // A type not yet inferred has no sort yet: naming one now could disagree with the
        // type it is later found to have.
        let mut unresolved = false;
        t.any_part(&mut |p| {
            unresolved |= matches!(p, Ty::Var(_));
            unresolved
        });
        if unresolved {
            return None;
        }
        Some(match t.base() {
            Ty::Int => Sort::Int,
            // Floats follow IEEE 754 (NaN, rounding), not the reals: they get no logical terms,
            // so nothing is proved about them.
            Ty::Float => return None,
            // Decimals are exact: the reals, on which the runtime's arithmetic agrees (it
            // stops rather than round).
            Ty::Decimal => Sort::Real,
            Ty::Date | Ty::DateTime | Ty::Duration => Sort::Int,
            Ty::Bool => Sort::Bool,
            Ty::Str => Sort::String,
            Ty::Fn(_) | Ty::Cap(_) | Ty::Var(_) | Ty::Error | Ty::Refined(_) => return None,
            other => Sort::Named(other.strip().to_string()),
        })
    }

    /// A new logical constant named after `hint`, unique in this check.
    pub fn fresh_name(&mut self, hint: &str) -> Arc<str> {
        if let Some(n) = self.name_counts.get_mut(hint) {
            *n += 1;
            return format!("{hint}#{n}").into();
        }
        // The first constant named after a hint is named the hint itself, which the count's key
        // shares.
        let name: Arc<str> = hint.into();
        self.name_counts.insert(name.clone(), 1);
        if hint.starts_with('_') { format!("{hint}#1").into() } else { name }
    }

    /// A fresh logical value of type `t` with the facts its refinements give.
    pub fn fresh(&mut self, t: &Ty, hint: &str) -> Option<Term> {
        self.fresh_from(t, hint, hint)
    }

    /// Like [`Checker::fresh`], naming the facts after `origin` (source text).
    pub fn fresh_from(&mut self, t: &Ty, hint: &str, origin: &str) -> Option<Term> {
        if self.in_refinement {
            return None;
        }
        let sort = self.sort_of(t)?;
        let term = Term::Var(self.fresh_name(hint), sort);
        self.assume(&term, t, origin);
        Some(term)
    }

    pub fn add_fact(&mut self, term: Term, origin: impl Into<Box<str>>) {
        if term != Term::Bool(true) {
            self.facts.push(&term, origin.into());
        }
    }

    /// Records the facts that `term` has type `t`: its refinements, and those of its tuple
    /// components and record fields.
    pub fn assume(&mut self, term: &Term, t: &Ty, origin: &str) {
        match self.resolve(t) {
            Ty::Refined(r) => {
                if let Some(fact) = self.instantiate(&r, term) {
                    self.add_fact(fact, format!("{origin}: {{{}: {} | {}}}", r.var, r.base, r.text));
                }
                self.assume(term, &r.base, origin);
            }
            Ty::Tuple(ts) => {
                for (i, c) in ts.iter().enumerate() {
                    if has_refinement(c) {
                        let sel = self.tuple_field(term, &Ty::Tuple(ts.clone()), i, c);
                        if let Some(sel) = sel {
                            self.assume(&sel, c, &format!("{origin}.{i}"));
                        }
                    }
                }
            }
            Ty::Record(name) => {
                let fields: Vec<(String, Ty)> = self.record_fields(&name).map(|(f, _)| f.to_vec()).unwrap_or_default();
                for (f, ft) in fields {
                    if has_refinement(&ft)
                        && let Some(sel) = self.record_field(term, &name, &f, &ft)
                    {
                        self.assume(&sel, &ft, &format!("{origin}.{f}"));
                    }
                }
            }
            _ => {}
        }
    }

    fn declare(&mut self, name: &str, params: Vec<Sort>, ret: Sort) {
        self.funcs.entry(name.to_string()).or_insert_with(|| FuncDecl { name: name.to_string(), params, ret });
    }

    pub fn record_field(&mut self, base: &Term, record: &str, field: &str, ft: &Ty) -> Option<Term> {
        let ret = self.sort_of(ft)?;
        let name = format!("{record}.{field}");
        self.declare(&name, vec![Sort::Named(record.to_string())], ret);
        Some(Term::App(name.into(), vec![base.clone()]))
    }

    pub fn tuple_field(&mut self, base: &Term, tuple: &Ty, i: usize, ct: &Ty) -> Option<Term> {
        let ret = self.sort_of(ct)?;
        let sort = self.sort_of(tuple)?;
        let name = format!("{tuple}.{i}", tuple = self.resolve(tuple).strip());
        self.declare(&name, vec![sort], ret);
        Some(Term::App(name.into(), vec![base.clone()]))
    }

    /// `len(x)` for a string or list term; a list's length is declared non-negative.
    pub fn length(&mut self, base: &Term, t: &Ty) -> Option<Term> {
        match self.resolve(t).base() {
            Ty::Str => Some(Term::StrLen(Box::new(base.clone()))),
            Ty::List(_) | Ty::Map(..) => {
                let sort = self.sort_of(t)?;
                let name = format!("len[{}]", self.resolve(t).strip());
                self.declare(&name, vec![sort], Sort::Int);
                let app = Term::App(name.into(), vec![base.clone()]);
                let fact = Term::Le(Box::new(Term::Int(0)), Box::new(app.clone()));
                self.add_fact(fact, "a list's length is not negative");
                Some(app)
            }
            _ => None,
        }
    }

    pub fn measure_app(&mut self, name: &str, args: Vec<Term>, params: &[Ty], ret: &Ty) -> Option<Term> {
        let sorts: Option<Vec<Sort>> = params.iter().map(|t| self.sort_of(t)).collect();
        let ret = self.sort_of(ret)?;
        self.declare(name, sorts?, ret);
        Some(Term::App(name.into(), args))
    }

    /// Checks once, where a refinement type is written, that its predicate is a boolean in the
    /// fragment; reports what is wrong otherwise.
    pub fn check_predicate(&mut self, r: &Refinement) -> bool {
        let probe_env: Vec<(String, Ty, Option<Term>)> = r
            .env
            .iter()
            .map(|(n, t, term)| {
                let term = term.clone().or_else(|| self.sort_of(t).map(|s| Term::Var(n.as_str().into(), s)));
                (n.clone(), t.clone(), term)
            })
            .collect();
        let Some(sort) = self.sort_of(&r.base) else {
            self.error(
                Code::UnsupportedRefinement,
                r.pred.span,
                format!("values of type `{}` cannot be refined", r.base),
            );
            return false;
        };
        let probe = Term::Var(r.var.as_str().into(), sort);
        let before = self.diags.len();
        // The probe leaves nothing behind: no declarations, no facts about the probe constants.
        let funcs = self.funcs.clone();
        let facts = self.facts.len();
        let ok = self.translate(r, &probe, &probe_env).is_some();
        self.funcs = funcs;
        self.facts.truncate(facts);
        ok && self.diags.len() == before
    }

    /// The predicate of `r` about the value `value`, or `None` if some name it mentions has no
    /// term yet (an unclosed signature parameter).
    pub fn instantiate(&mut self, r: &Refinement, value: &Term) -> Option<Term> {
        // A name whose term is not known (a parameter of a signature that was not
        // instantiated) shadows any global of that name, so the predicate cannot be read.
        let before = self.diags.len();
        let result = self.translate(r, value, &r.env);
        // Problems with the predicate were reported where it was written.
        self.diags.truncate(before);
        result
    }

    /// Type checks the predicate in an isolated scope holding only `env` and the refined
    /// variable, and returns its term.
    fn translate(&mut self, r: &Refinement, value: &Term, env: &[(String, Ty, Option<Term>)]) -> Option<Term> {
        let saved_len = self.scope.len();
        let saved_barrier = self.barrier;
        let saved_mode = self.in_refinement;
        let saved_closures = std::mem::take(&mut self.closures);
        let saved_loops = std::mem::take(&mut self.loops);
        self.barrier = saved_len;
        for (n, t, term) in env {
            self.push_scope(Binding {
                name: n.as_str().into(),
                ty: t.clone(),
                term: term.clone(),
                span: r.span,
                lin: None,
            });
        }
        self.push_scope(Binding {
            name: r.var.as_str().into(),
            ty: r.base.clone(),
            term: Some(value.clone()),
            span: r.span,
            lin: None,
        });
        self.in_refinement = true;
        let typed = self.check(&r.pred, &Ty::Bool);
        self.in_refinement = saved_mode;
        self.truncate_scope(saved_len);
        self.barrier = saved_barrier;
        self.closures = saved_closures;
        self.loops = saved_loops;
        typed.term
    }

    /// Replaces the missing terms of a signature's parameters in every refinement of `t`.
    pub fn close(&self, t: &Ty, args: &[(String, Term)]) -> Ty {
        match t {
            Ty::Refined(r) => {
                let env = r
                    .env
                    .iter()
                    .map(|(n, ty, term)| {
                        let term = term.clone().or_else(|| args.iter().find(|(a, _)| a == n).map(|(_, t)| t.clone()));
                        (n.clone(), ty.clone(), term)
                    })
                    .collect();
                Ty::Refined(Rc::new(Refinement { base: self.close(&r.base, args), env, ..(**r).clone() }))
            }
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.close(t, args)).collect()),
            Ty::List(t) => Ty::list(self.close(t, args)),
            Ty::Option(t) => Ty::option(self.close(t, args)),
            Ty::Result(a, b) => Ty::Result(Box::new(self.close(a, args)), Box::new(self.close(b, args))),
            Ty::Map(a, b) => Ty::Map(Box::new(self.close(a, args)), Box::new(self.close(b, args))),
            Ty::Opaque(n, ts) => Ty::Opaque(n.clone(), ts.iter().map(|t| self.close(t, args)).collect()),
            Ty::Fn(f) => Ty::Fn(Rc::new(crate::ty::FnTy {
                params: f.params.iter().map(|t| self.close(t, args)).collect(),
                ret: self.close(&f.ret, args),
                second_class: f.second_class,
            })),
            t => t.clone(),
        }
    }

    /// Proves that `value` satisfies the refinements of `expected` (top level and tuple
    /// components). Refinements nested in lists, options and functions must be the same
    /// predicate in `got`.
    pub fn prove_refinements(&mut self, value: Option<&Term>, got: &Ty, expected: &Ty, span: Span) {
        let expected = self.resolve(expected);
        match &expected {
            Ty::Refined(r) => {
                if let Ty::Refined(g) = got
                    && Rc::ptr_eq(g, r)
                {
                    return;
                }
                match value {
                    Some(v) => self.prove(r, v, span),
                    None => {
                        self.error(Code::RefinementUnproven, span, format!("cannot prove `{}` for this value", r.text));
                    }
                }
                let got_base = match got {
                    Ty::Refined(g) => g.base.clone(),
                    g => g.clone(),
                };
                self.prove_refinements(value, &got_base, &r.base, span);
            }
            Ty::Tuple(ts) => {
                let got = self.resolve(got);
                let got_parts: Vec<Ty> = match got.base() {
                    Ty::Tuple(gs) if gs.len() == ts.len() => gs.clone(),
                    _ => ts.iter().map(Ty::strip).collect(),
                };
                for (i, (e, g)) in ts.iter().zip(&got_parts).enumerate() {
                    if has_refinement(e) || has_refinement(g) {
                        let sel = value.and_then(|v| self.tuple_field(v, &expected, i, e));
                        self.prove_refinements(sel.as_ref(), g, e, span);
                    }
                }
            }
            // A refinement on either side counts: a refined function parameter on the value's
            // side is an obligation the expected type would forget.
            Ty::List(_) | Ty::Option(_) | Ty::Result(..) | Ty::Map(..) | Ty::Fn(_) | Ty::Opaque(..)
                if (has_refinement(&expected) || has_refinement(got))
                    && !self.refinements_agree(got, &expected, true) =>
            {
                let got = self.resolve(got);
                self.diags.push(
                    Diagnostic::error(
                        Code::RefinementUnproven,
                        span,
                        format!("cannot prove this value has type `{expected}`"),
                    )
                    .with_primary_label(format!("this has type `{got}`"))
                    .with_note("refinements inside lists, options, results and function types must match exactly"),
                );
            }
            _ => {}
        }
    }

    /// Whether a value of type `got` may stand where `expected` is wanted as far as refinements
    /// nested in lists, options, results, opaque types and functions go: those cannot be proved
    /// element by element, so each of `expected`'s must be the same predicate as `got`'s once
    /// both are instantiated (the same text about different values does not count). Function
    /// parameters go the other way.
    fn refinements_agree(&mut self, got: &Ty, expected: &Ty, covariant: bool) -> bool {
        let (got, expected) = (self.resolve(got), self.resolve(expected));
        let (g_ref, e_ref) = (as_refinement(&got), as_refinement(&expected));
        let (wanted, offered) = if covariant { (e_ref, g_ref) } else { (g_ref, e_ref) };
        if let Some(w) = wanted {
            let Some(o) = offered else { return false };
            let Some(sort) = self.sort_of(&w.base) else { return false };
            let probe = Term::Var(self.fresh_name("_probe"), sort);
            match (self.instantiate(&w, &probe), self.instantiate(&o, &probe)) {
                (Some(a), Some(b)) if a == b => {}
                _ => return false,
            }
        }
        match (got.base(), expected.base()) {
            (Ty::Tuple(gs), Ty::Tuple(es)) | (Ty::Opaque(_, gs), Ty::Opaque(_, es)) => {
                gs.len() == es.len() && gs.iter().zip(es).all(|(g, e)| self.refinements_agree(g, e, covariant))
            }
            (Ty::List(g), Ty::List(e)) | (Ty::Option(g), Ty::Option(e)) => self.refinements_agree(g, e, covariant),
            (Ty::Result(g1, g2), Ty::Result(e1, e2)) | (Ty::Map(g1, g2), Ty::Map(e1, e2)) => {
                self.refinements_agree(g1, e1, covariant) && self.refinements_agree(g2, e2, covariant)
            }
            (Ty::Fn(g), Ty::Fn(e)) => {
                let (g, e) = (g.clone(), e.clone());
                g.params.len() == e.params.len()
                    && g.params.iter().zip(&e.params).all(|(gp, ep)| self.refinements_agree(gp, ep, !covariant))
                    && self.refinements_agree(&g.ret, &e.ret, covariant)
            }
            _ => true,
        }
    }

    /// Proves `r` of `value` from the current facts, conjunct by conjunct.
    fn prove(&mut self, r: &Refinement, value: &Term, span: Span) {
        let Some(goal) = self.instantiate(r, value) else {
            self.error(
                Code::RefinementUnproven,
                span,
                format!("cannot prove `{}`: it depends on a value that is not known here", r.text),
            );
            return;
        };
        let texts = conjunct_texts(&r.pred, self)
            .into_iter()
            .map(|t| format!("`{t}` where `{}` is this value", r.var))
            .collect();
        let obligation = Obligation {
            label: format!("must satisfy `{{{}: {} | {}}}`", r.var, r.base, r.text),
            required_at: Some(r.span),
        };
        self.prove_conjuncts(goal, texts, span, &obligation);
    }

    /// The first measure `term` applies, if any.
    fn measure_in(&self, term: &Term) -> Option<String> {
        if let Term::App(name, _) = term
            && matches!(self.values.get(&**name), Some(crate::state::ValueDef::Measure(_)))
        {
            return Some(name.to_string());
        }
        term.children().into_iter().find_map(|t| self.measure_in(t))
    }

    /// Proves a built-in obligation (an index in bounds, a divisor not 0).
    pub fn prove_goal(&mut self, goal: Term, texts: Vec<String>, span: Span, label: &str) {
        let texts = texts.into_iter().map(|t| format!("`{t}`")).collect();
        self.prove_conjuncts(goal, texts, span, &Obligation { label: label.to_string(), required_at: None });
    }

    fn prove_conjuncts(&mut self, goal: Term, texts: Vec<String>, span: Span, ob: &Obligation) {
        let conjuncts = match goal {
            Term::And(cs) if cs.len() == texts.len() => cs,
            g => vec![g],
        };
        let whole = texts.join(" and ");
        for (i, conjunct) in conjuncts.iter().enumerate() {
            let text = if conjuncts.len() == 1 { whole.clone() } else { texts.get(i).cloned().unwrap_or_default() };
            let goal = self.facts.normalize(conjunct);
            if goal == Term::Bool(true) || self.implied_by_bounds(&goal) {
                self.folded += 1;
                continue;
            }
            // A goal that folded to something else is asked as folded; if that does not prove
            // it, the answer and its notes come from the goal as written, so they name the
            // facts that decide it (a goal folded to `false` mentions nothing).
            let (answer, origins, total) = match self.decide(&goal, 0, false) {
                (Answer::Valid, ..) => (Answer::Valid, Vec::new(), 0),
                _ if goal != *conjunct => self.decide(conjunct, usize::MAX - 1, true),
                decided => decided,
            };
            let facts_note = facts_note(&origins, total);
            let mut d = match answer {
                Answer::Valid => continue,
                Answer::Invalid { counterexample } => {
                    let mut d = Diagnostic::error(Code::RefinementUnproven, span, format!("cannot prove {text}"))
                        .with_primary_label(ob.label.clone())
                        .with_note(facts_note);
                    // Only what names source values: not internal constants, not the solver's
                    // anonymous elements of uninterpreted sorts.
                    let kept: Vec<&(String, String)> = counterexample
                        .iter()
                        .filter(|(n, v)| {
                            !n.starts_with('_') && !n.contains("(_") && !n.contains("((") && !is_arbitrary(v)
                        })
                        .collect();
                    let shown: Vec<String> = readable_all(kept.iter().map(|(n, _)| n.as_str()))
                        .into_iter()
                        .zip(&kept)
                        .map(|(n, (_, v))| format!("{n} = {v}"))
                        .collect();
                    // A value the logic does not model (`a * b`, `a / b`) took whatever value the
                    // solver liked: values read through it could break the facts listed.
                    if counterexample.iter().any(|(n, _)| n.starts_with(UNMODELLED)) {
                        d = d.with_note(
                            "no counterexample shown: it would rest on a product or division of two values, which the checker does not model",
                        );
                    } else if !shown.is_empty() {
                        d = d.with_note(format!("counterexample: {}", shown.join(", ")));
                    }
                    match self.measure_in(conjunct) {
                        // No `if` can test a measure: say what can satisfy it, and whether this
                        // value never will.
                        Some(measure) if self.known(&Term::Not(Box::new(conjunct.clone()))) => d.with_help(format!(
                            "this value is known not to satisfy it, and `{measure}` is a measure, which no `if` can \
                             change: use a value the tools gave back with it (see their signatures), or do without \
                             this call and return the answer to the user"
                        )),
                        Some(measure) => d.with_help(format!(
                            "`{measure}` is a measure, which no `if` can test: pass a value whose type says it (only \
                             the tools' results can, see their signatures), or do without this call and return the \
                             answer to the user"
                        )),
                        None => d.with_help("check it first with `if`, or pass a value known to satisfy it"),
                    }
                }
                Answer::Unknown { reason } => Diagnostic::error(
                    Code::RefinementUnknown,
                    span,
                    format!("the solver could not decide {text}: rejected, never assumed"),
                )
                .with_primary_label(ob.label.clone())
                .with_note(format!("solver: {reason}"))
                .with_note(facts_note)
                .with_help("simplify the condition or check it explicitly with `if`"),
            };
            if let Some(at) = ob.required_at {
                d = d.with_label(at, "required by this refinement");
            }
            self.diags.push(d);
            return;
        }
    }

    /// Whether the facts known about `vars` contradict each other (the solver proves `false`
    /// from them). A timeout or a spent check time counts as no contradiction found.
    pub fn facts_contradict(&mut self, vars: HashSet<String>) -> bool {
        let (facts, _) = self.facts.relevant(vars.iter().map(String::as_str), usize::MAX, false);
        let hypotheses: Vec<Term> = facts.into_iter().map(|f| self.facts.term(f)).collect();
        if hypotheses.is_empty() || independent_values(&hypotheses) {
            return false;
        }
        let query = self.query(hypotheses, Term::Bool(false));
        matches!(self.ask(&query), Answer::Valid)
    }

    /// Whether the facts prove `goal` (for what a prompt may state as known). A timeout or a
    /// spent check time counts as not known.
    pub fn known(&mut self, goal: &Term) -> bool {
        let goal = self.facts.normalize(goal);
        goal == Term::Bool(true)
            || self.implied_by_bounds(&goal)
            || matches!(self.decide(&goal, 0, false).0, Answer::Valid)
    }

    /// Decides `goal` (normalized) from the facts: first from the few nearest to it, then from
    /// more, and only if those do not prove it from every fact connected to it (see
    /// [`NEAR_FACTS`]). Returns the answer, where the facts it used came from (at most
    /// [`MAX_ORIGINS`] of them) and how many places there were.
    /// Only limits above `least` are tried.
    /// With `original`, the facts as they were pushed (see [`crate::facts::Facts::original`]).
    fn decide(&mut self, goal: &Term, least: usize, original: bool) -> (Answer, Vec<String>, usize) {
        let names = goal_vars(goal);
        let mut result = (Answer::Valid, Vec::new());
        for limit in NEAR_FACTS.into_iter().chain([usize::MAX]).filter(|&l| l > least) {
            let (facts, complete) = self.facts.relevant(names.iter().copied(), limit, original);
            let (hypotheses, origins): (Vec<Term>, Vec<String>) = facts
                .into_iter()
                .map(|f| (if original { self.facts.original(f) } else { self.facts.term(f) }, f.origin.to_string()))
                .unzip();
            let query = self.query(hypotheses, goal.clone());
            let answer = self.ask(&query);
            let done = complete || answer == Answer::Valid;
            result = (answer, origins);
            if done {
                break;
            }
        }
        let (answer, origins) = result;
        let mut shown: Vec<String> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut total = 0;
        for o in &origins {
            if o.is_empty() || o.starts_with("a list's length") || !seen.insert(o) {
                continue;
            }
            total += 1;
            if shown.len() < MAX_ORIGINS {
                shown.push(o.clone());
            }
        }
        (answer, shown, total)
    }

    /// Whether the facts nearest to `goal` prove it by [`crate::arith::implied`], without a query.
    fn implied_by_bounds(&self, goal: &Term) -> bool {
        let names = goal_vars(goal);
        let (facts, _) = self.facts.relevant(names.iter().copied(), NEAR_FACTS[0], false);
        let hypotheses: Vec<Term> = facts.iter().map(|f| self.facts.term(f)).collect();
        let hypotheses: Vec<&Term> = hypotheses.iter().collect();
        let is_int = |f: &str| self.funcs.get(f).is_some_and(|d| d.ret == Sort::Int);
        crate::arith::implied(goal, &hypotheses, &is_int)
    }

    /// A query of `goal` from `hypotheses`, declaring the functions they apply.
    fn query(&self, mut hypotheses: Vec<Term>, goal: Term) -> Query {
        // The same fact may be known several times (a list's length is not negative).
        let mut seen: HashSet<Term> = HashSet::new();
        hypotheses.retain(|h| seen.insert(h.clone()));
        let mut used: BTreeSet<&str> = BTreeSet::new();
        for t in hypotheses.iter().chain([&goal]) {
            t.walk(&mut |t| {
                if let Term::App(f, _) = t {
                    used.insert(f);
                }
            });
        }
        let funcs = used.into_iter().filter_map(|f| self.funcs.get(f).cloned()).collect();
        Query { funcs, hypotheses, goal }
    }

    /// Asks the solver if this check's time is not spent; `Unknown` saying so if it is.
    fn ask(&mut self, query: &Query) -> Answer {
        let start = std::time::Instant::now();
        if start >= self.deadline {
            let ms = self.deadline.duration_since(self.started).as_millis();
            return Answer::Unknown { reason: format!("this check's time ({ms} ms) is spent") };
        }
        let answer = self.solver.check(query);
        self.solver_time += start.elapsed();
        answer
    }
}

/// Whether the facts give literal values to atoms that cannot constrain each other, so that
/// some model satisfies them all without asking the solver: each fact is `atom == literal`, an
/// atom is a constant or a function applied to constants and literals, and no two facts name
/// the same constant or function (`p` and `!p` are `p == true` and `p == false`). A fresh
/// input's measures are such facts: `!tainted(s)`. Two values
/// of one function at different arguments are left to the solver: its arguments may be of a
/// finite sort, which could force them equal.
fn independent_values(facts: &[Term]) -> bool {
    let mut heads: HashSet<&str> = HashSet::new();
    let simple = |t: &Term| matches!(t, Term::Var(..) | Term::Bool(_) | Term::Int(_) | Term::Str(_));
    let literal = |t: &Term| matches!(t, Term::Bool(_) | Term::Int(_) | Term::Str(_));
    facts.iter().all(|fact| {
        let atom = match fact {
            Term::Eq(a, b) if literal(b) => &**a,
            Term::Eq(a, b) if literal(a) => &**b,
            // `p` and `!p`: `p == true`, `p == false`.
            Term::Not(p) => &**p,
            p => p,
        };
        match atom {
            Term::Var(name, _) => heads.insert(name),
            Term::App(f, args) => args.iter().all(simple) && heads.insert(f),
            _ => false,
        }
    })
}

/// The name of values outside the logic (a product of two values, a division by a value).
pub const UNMODELLED: &str = "_unmodelled";

/// How many of the facts nearest to a goal the first queries about it carry. Most obligations
/// follow from a handful of facts; a query's cost grows with its facts, and a plan's facts with
/// its length, so asking with every connected fact first would make checking quadratic.
const NEAR_FACTS: [usize; 2] = [8, 64];

/// The most places a diagnostic's "facts used" note names.
pub const MAX_ORIGINS: usize = 12;

/// "facts used: a; b; c", or with more than were shown, "(12 shown of 480)".
fn facts_note(shown: &[String], total: usize) -> String {
    match (shown.is_empty(), total > shown.len()) {
        (true, _) => "facts used: none are known here".to_string(),
        (false, false) => format!("facts used: {}", shown.join("; ")),
        (false, true) => format!("facts used ({} shown of {total}): {}", shown.len(), shown.join("; ")),
    }
}

/// A value the solver made up and that says nothing: an element of an uninterpreted sort
/// (`Repo!val!0`) or a placeholder string (`"!0!"`).
fn is_arbitrary(v: &str) -> bool {
    let placeholder = v
        .strip_prefix("\"!")
        .and_then(|r| r.strip_suffix("!\""))
        .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()));
    v.contains("!val!") || placeholder
}

/// What an obligation is about, for its diagnostic.
struct Obligation {
    label: String,
    /// Where the refinement was written, if it was.
    required_at: Option<Span>,
}

/// Names the counterexample after source names: `Repo.private(r)` reads `r.private`.
fn readable(n: &str) -> String {
    readable_with(n, source_names)
}

/// [`readable`], naming constants with `name`.
fn readable_with(n: &str, name: impl Fn(&str) -> String) -> String {
    let Some((func, args)) = n.strip_suffix(')').and_then(|s| s.split_once('(')) else {
        return name(n);
    };
    let args: Vec<String> = args.split(", ").map(&name).collect();
    if let Some((_, field)) = func.rsplit_once('.')
        && !func.starts_with("len[")
        && args.len() == 1
    {
        return format!("{}.{field}", args[0]);
    }
    if func.starts_with("len[") {
        return format!("len({})", args.join(", "));
    }
    format!("{func}({})", args.join(", "))
}

/// The counterexample's names as the source writes them: `n#2` (the second binding named `n`)
/// reads `n`, unless another binding of `n` is named too; then each says which it is
/// (`n (binding 2)`).
fn readable_all<'n>(names: impl Iterator<Item = &'n str>) -> Vec<String> {
    let names: Vec<&str> = names.collect();
    let source: Vec<String> = names.iter().map(|n| readable(n)).collect();
    let with_ordinals: Vec<String> = names.iter().map(|n| readable_with(n, ordinal)).collect();
    names
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let versions: HashSet<&str> =
                names.iter().enumerate().filter(|(j, _)| source[*j] == source[i]).map(|(_, m)| *m).collect();
            if versions.len() > 1 { with_ordinals[i].clone() } else { source[i].clone() }
        })
        .collect()
}

/// `n#2` reads `n (binding 2)`, `n` reads `n (binding 1)`.
fn ordinal(n: &str) -> String {
    match n.split_once('#') {
        Some((base, k)) if k.bytes().all(|b| b.is_ascii_digit()) => format!("{base} (binding {k})"),
        _ => format!("{n} (binding 1)"),
    }
}

/// `n#2` (the second binding named `n`) reads `n`, as the source names it.
fn source_names(n: &str) -> String {
    let mut out = String::with_capacity(n.len());
    let mut chars = n.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '#' && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The source text of each top-level `&&` conjunct of a predicate.
fn conjunct_texts(pred: &cordon_syntax::ast::Expr, c: &Checker<'_>) -> Vec<String> {
    use cordon_syntax::ast::{BinOp, ExprKind};
    fn go(e: &cordon_syntax::ast::Expr, c: &Checker<'_>, out: &mut Vec<String>) {
        if let ExprKind::Binary { op: BinOp::And, lhs, rhs } = &e.kind {
            go(lhs, c, out);
            go(rhs, c, out);
        } else {
            out.push(c.text(e.span).to_string());
        }
    }
    let mut out = Vec::new();
    go(pred, c, &mut out);
    out
}

fn as_refinement(t: &Ty) -> Option<Rc<Refinement>> {
    match t {
        Ty::Refined(r) => Some(r.clone()),
        _ => None,
    }
}

pub fn has_refinement(t: &Ty) -> bool {
    let mut found = false;
    t.any_part(&mut |t| {
        found |= matches!(t, Ty::Refined(_))
            || matches!(t, Ty::Fn(f) if f.params.iter().chain([&f.ret]).any(has_refinement));
        found
    });
    found
}

/// The variables `goal` names, each once, borrowed from it.
fn goal_vars(goal: &Term) -> HashSet<&str> {
    let mut names = HashSet::new();
    crate::facts::each_var(goal, &mut |n| {
        names.insert(n);
    });
    names
}

#[cfg(test)]
mod tests {
    use cordon_smt::{Sort, Term};

    use super::independent_values;

    fn app(f: &str, arg: &str) -> Term {
        Term::App(f.into(), vec![Term::Var(arg.into(), Sort::Named("Session".into()))])
    }

    fn eq(a: Term, b: Term) -> Term {
        Term::Eq(Box::new(a), Box::new(b))
    }

    #[test]
    fn only_values_of_separate_atoms_are_settled_without_the_solver() {
        let not = |t: Term| Term::Not(Box::new(t));
        let x = Term::Var("x".into(), Sort::Int);
        // A fresh input's measures, and values of separate constants and functions.
        assert!(independent_values(&[not(app("tainted", "s"))]));
        assert!(independent_values(&[not(app("tainted", "s")), eq(app("level", "s"), Term::Int(0))]));
        assert!(independent_values(&[eq(x.clone(), Term::Int(3)), eq(Term::Str("a".into()), app("owner", "x"))]));
        // One function twice, one constant twice, anything but a value: the solver decides.
        assert!(!independent_values(&[not(app("tainted", "a")), not(app("tainted", "b"))]));
        assert!(!independent_values(&[app("tainted", "s"), not(app("tainted", "s"))]));
        assert!(!independent_values(&[eq(x.clone(), Term::Int(3)), eq(x.clone(), Term::Int(4))]));
        assert!(!independent_values(&[Term::Bool(false)]));
        assert!(!independent_values(&[Term::Le(Box::new(Term::Int(1)), Box::new(x.clone()))]));
        assert!(!independent_values(&[eq(x.clone(), app("level", "s"))]));
        let nested = Term::App("level".into(), vec![app("next", "s")]);
        assert!(!independent_values(&[eq(nested, Term::Int(0))]));
    }
}
