//! Bidirectional checking of expressions, statements and patterns, with the linearity,
//! capability and forging rules applied where values are used, stored and returned.

use std::rc::Rc;

use cordon_smt::{Sort, StrTest, Term};
use cordon_syntax::ast::{
    BinOp, Block, ClosureParam, Expr, ExprKind, Ident, Pattern, PatternKind, Stmt, TypeExpr, UnOp,
};
use cordon_syntax::{Builtin, Code, Diagnostic, Span};

use crate::Callee;
use crate::logic::UNMODELLED;
use crate::state::{
    Binding, Checker, ClosureFrame, LABEL, LABELED, Lin, LinMark, LinPath, Signature, TypeDef, Typed, ValueDef,
    labeled_ty, plural, suggest,
};
use crate::ty::{FnTy, Ty};

/// The arguments of a call; a method call's receiver comes first.
type Args<'e> = Vec<&'e Expr>;

impl Checker<'_> {
    // ---------------------------------------------------------------- entry points

    /// Checks `e` against `expected`, proving its refinements.
    pub fn check(&mut self, e: &Expr, expected: &Ty) -> Typed {
        let expected = self.resolve(expected);
        let base = expected.base().clone();
        match (&e.kind, &base) {
            (ExprKind::If { cond, then, else_ }, _) if !self.in_refinement => {
                self.check_if(e, cond, then, else_.as_deref(), Some(&expected))
            }
            (ExprKind::Match { scrutinee, arms }, _) => self.check_match(e, scrutinee, arms, Some(&expected)),
            (ExprKind::Block(b), _) if !self.in_refinement => self.check_block(b, Some(&expected)),
            (ExprKind::Hole { ty: None, args }, _) => self.check_hole(e, None, args, Some(&expected)),
            (ExprKind::Closure { params, ret, body }, Ty::Fn(f)) => {
                let got = self.check_closure(params, ret.as_ref(), body, Some(f));
                self.coerce(got, &expected, e.span)
            }
            _ => {
                let got = self.infer_with(e, Some(&expected));
                self.coerce(got, &expected, e.span)
            }
        }
    }

    pub fn infer(&mut self, e: &Expr) -> Typed {
        self.infer_with(e, None)
    }

    /// Unifies the base types and proves the refinements of `expected`.
    pub fn coerce(&mut self, got: Typed, expected: &Ty, span: Span) -> Typed {
        if got.ty.is_error() || expected.is_error() {
            return Typed { ty: if expected.is_error() { got.ty } else { expected.clone() }, term: got.term };
        }
        if !self.unify(&got.ty, expected) {
            self.mismatch(span, expected, &got.ty);
            return Typed { ty: Ty::Error, term: None };
        }

        self.prove_refinements(got.term.as_ref(), &got.ty, expected, span);
        // The value's own type says whether it holds a capability; the expected type may not.
        let ty = if crate::logic::has_refinement(expected) && !self.is_second_class(&got.ty) {
            expected.clone()
        } else {
            self.resolve(&got.ty)
        };
        Typed { ty, term: got.term }
    }

    pub fn mismatch(&mut self, span: Span, expected: &Ty, got: &Ty) {
        let (e, g) = (self.resolve(expected).strip(), self.resolve(got).strip());
        let mut d = Diagnostic::error(Code::TypeMismatch, span, format!("expected `{e}`, found `{g}`"))
            .with_primary_label(format!("this is `{g}`"));
        if let Some(h) = self.mismatch_hint(&e, &g) {
            d = d.with_help(h);
        }
        self.diags.push(d);
    }

    fn mismatch_hint(&self, expected: &Ty, got: &Ty) -> Option<String> {
        Some(match (expected, got) {
            (Ty::Opaque(n, _) | Ty::Linear(n), _) => {
                format!("values of `{n}` are made only by the policy's tools; get one from a tool")
            }
            (Ty::Float, Ty::Int) => "convert with `x as Float`".into(),
            (Ty::Int, Ty::Float) => "convert with `x as Int`".into(),
            (Ty::Decimal, Ty::Int) => "convert with `x as Decimal`".into(),
            (Ty::Decimal, Ty::Float) => "write an exact decimal: `12.50d`".into(),
            (Ty::Str, Ty::Int | Ty::Float | Ty::Decimal | Ty::Bool | Ty::Date | Ty::DateTime | Ty::Duration) => {
                "convert with `to_string(x)`".into()
            }
            (Ty::Duration, Ty::Int) => {
                "make a duration with `minutes(n)`, `hours(n)`, `days(n)` or `seconds(n)`".into()
            }
            (Ty::DateTime | Ty::Date, Ty::Str) => "parse it with `parse_datetime(s)` or `parse_date(s)`".into(),
            (Ty::Int, Ty::Option(_)) | (Ty::Str, Ty::Option(_)) => {
                "take the value out with `match x { Some(v) => .., None => .. }` or `x.unwrap_or(default)`".into()
            }
            (Ty::Option(_), t) if !matches!(t, Ty::Option(_)) => "wrap the value: `Some(x)`".into(),
            _ => return None,
        })
    }

    // ---------------------------------------------------------------- unification

    pub fn new_var(&mut self, origin: Span) -> Ty {
        self.subst.push(None);
        self.var_origin.push(origin);
        Ty::Var((self.subst.len() - 1) as u32)
    }

    /// Makes the base types of `a` and `b` equal, solving inference variables.
    pub fn unify(&mut self, a: &Ty, b: &Ty) -> bool {
        let a = self.resolve(a);
        let b = self.resolve(b);
        match (a.base(), b.base()) {
            (Ty::Error, _) | (_, Ty::Error) => true,
            (Ty::Var(x), Ty::Var(y)) if x == y => true,
            (Ty::Var(x), t) | (t, Ty::Var(x)) => {
                let mut t = t.strip();
                if occurs(*x, &t) {
                    return false;
                }
                // Solving a variable copies the type: bound it, or doubling it a few times
                // over would exhaust time and memory.
                if crate::state::type_size(&t, crate::state::MAX_TYPE_SIZE + 1) > crate::state::MAX_TYPE_SIZE {
                    let span =
                        self.var_origin.get(*x as usize).copied().unwrap_or(Span::new(cordon_syntax::FileId(0), 0, 0));
                    self.error(Code::NestingTooDeep, span, "the type of this value is too large").help =
                        Some("declare a record type for the data".into());
                    t = Ty::Error;
                }
                if let Some(slot) = self.subst.get_mut(*x as usize) {
                    *slot = Some(t);
                }
                true
            }
            (Ty::Int, Ty::Int)
            | (Ty::Float, Ty::Float)
            | (Ty::Decimal, Ty::Decimal)
            | (Ty::Date, Ty::Date)
            | (Ty::DateTime, Ty::DateTime)
            | (Ty::Duration, Ty::Duration)
            | (Ty::Bool, Ty::Bool)
            | (Ty::Str, Ty::Str)
            | (Ty::Unit, Ty::Unit) => true,
            (Ty::Tuple(xs), Ty::Tuple(ys)) => {
                xs.len() == ys.len() && xs.clone().iter().zip(ys.clone().iter()).all(|(x, y)| self.unify(x, y))
            }
            (Ty::List(x), Ty::List(y)) | (Ty::Option(x), Ty::Option(y)) => {
                let (x, y) = ((**x).clone(), (**y).clone());
                self.unify(&x, &y)
            }
            (Ty::Result(x1, x2), Ty::Result(y1, y2)) | (Ty::Map(x1, x2), Ty::Map(y1, y2)) => {
                let (x1, x2, y1, y2) = ((**x1).clone(), (**x2).clone(), (**y1).clone(), (**y2).clone());
                self.unify(&x1, &y1) && self.unify(&x2, &y2)
            }
            (Ty::Record(x), Ty::Record(y))
            | (Ty::Enum(x), Ty::Enum(y))
            | (Ty::Linear(x), Ty::Linear(y))
            | (Ty::Cap(x), Ty::Cap(y)) => x == y,
            (Ty::Opaque(x, xs), Ty::Opaque(y, ys)) => {
                x == y
                    && xs.len() == ys.len()
                    && xs.clone().iter().zip(ys.clone().iter()).all(|(p, q)| self.unify(p, q))
            }
            (Ty::Fn(f), Ty::Fn(g)) => {
                let (f, g) = (f.clone(), g.clone());
                f.params.len() == g.params.len()
                    && f.params.iter().zip(&g.params).all(|(p, q)| self.unify(p, q))
                    && self.unify(&f.ret, &g.ret)
            }
            _ => false,
        }
    }

    // ---------------------------------------------------------------- expressions

    fn infer_with(&mut self, e: &Expr, expected: Option<&Ty>) -> Typed {
        if self.in_refinement && !allowed_in_refinement(&e.kind) {
            self.error(Code::UnsupportedRefinement, e.span, "this is not allowed in a refinement").help = Some(
                "refinements use literals, names, fields, `len`, measures, `+ -`, comparisons and `&& || !`".into(),
            );
            return Typed::error();
        }
        let before = self.diags.len();
        let typed = self.infer_kind(e, expected);
        if self.in_refinement && typed.term.is_none() && !typed.ty.is_error() && self.diags.len() == before {
            self.error(Code::UnsupportedRefinement, e.span, "this cannot be expressed in a refinement");
            return Typed::error();
        }
        typed
    }

    fn infer_kind(&mut self, e: &Expr, expected: Option<&Ty>) -> Typed {
        let span = e.span;
        match &e.kind {
            ExprKind::Error => Typed::error(),
            ExprKind::Int(n) => Typed { ty: Ty::Int, term: Some(Term::Int(*n)) },
            ExprKind::Bool(b) => Typed { ty: Ty::Bool, term: Some(Term::Bool(*b)) },
            ExprKind::Str(s) => Typed { ty: Ty::Str, term: Some(Term::Str(s.clone())) },
            ExprKind::Float(_) => self.fresh_typed(Ty::Float, "_f"),
            ExprKind::Decimal(d) => Typed { ty: Ty::Decimal, term: Some(decimal_term(*d)) },
            ExprKind::Unit => self.fresh_typed(Ty::Unit, "_unit"),
            ExprKind::Name(id) => self.check_name(id, expected),
            ExprKind::Path { ty, variant } => self.check_variant(ty, variant, None, span),
            ExprKind::Tuple(es) => self.check_tuple(es, expected, span),
            ExprKind::List(es) => self.check_list(es, expected, span),
            ExprKind::Record { name, fields } => self.check_record(name, fields, span),
            ExprKind::Field { base, name } => self.check_field(base, name, span),
            ExprKind::TupleField { base, index, index_span } => self.check_tuple_field(base, *index, *index_span, span),
            ExprKind::Index { base, index } => self.check_index(base, index),
            ExprKind::Call { callee, args } => self.check_call(e, callee, args, expected),
            ExprKind::MethodCall { receiver, method, args } => self.check_method(e, receiver, method, args),
            ExprKind::Unary { op, operand } => self.check_unary(*op, operand),
            ExprKind::Binary { op, lhs, rhs } => self.check_binary(*op, lhs, rhs),
            ExprKind::If { cond, then, else_ } => self.check_if(e, cond, then, else_.as_deref(), None),
            ExprKind::Match { scrutinee, arms } => self.check_match(e, scrutinee, arms, None),
            ExprKind::For { pat, iter, body } => self.check_for(pat, iter, body),
            ExprKind::Block(b) => self.check_block(b, None),
            ExprKind::Closure { params, ret, body } => self.check_closure(params, ret.as_ref(), body, None),
            ExprKind::Cast { expr, ty } => self.check_cast(expr, ty, span),
            ExprKind::Hole { ty, args } => self.check_hole(e, ty.as_ref(), args, expected),
            ExprKind::ToLabeled(b) => self.check_to_labeled(b, expected),
        }
    }

    /// Checks the arguments of a call that already failed, for the errors inside them; closures
    /// are skipped, since without the call's types their parameters cannot be known.
    pub fn infer_after_error<'e>(&mut self, args: impl IntoIterator<Item = &'e Expr>) {
        for a in args {
            if !matches!(a.kind, ExprKind::Closure { .. }) {
                self.infer(a);
            }
        }
    }

    pub fn fresh_typed(&mut self, ty: Ty, hint: &str) -> Typed {
        let term = self.fresh(&ty, hint);
        Typed { ty, term }
    }

    /// A use of a name: consumes linear values, notes captures.
    fn check_name(&mut self, id: &Ident, expected: Option<&Ty>) -> Typed {
        match id.name.as_str() {
            "None" => {
                let inner = match expected.map(|t| self.resolve(t)) {
                    Some(Ty::Option(t)) => *t,
                    _ => self.new_var(id.span),
                };
                return self.fresh_typed(Ty::option(inner), "_none");
            }
            "Some" | "Ok" | "Err" => {
                self.error(Code::WrongArgCount, id.span, format!("`{}` takes one argument", id.name));
                return Typed::error();
            }
            _ => {}
        }
        if let Some(i) = self.lookup(&id.name) {
            return self.use_binding(i, id.span);
        }
        match self.values.get(&id.name).cloned() {
            Some(ValueDef::Const { ty, term, checked }) => {
                let ty = if checked { ty } else { ty.strip() };
                let term = term.or_else(|| self.fresh(&ty, &id.name));
                return Typed { ty, term };
            }
            Some(ValueDef::Fn(sig)) => {
                let ty = Ty::func(sig.params.iter().map(|(_, t)| t.clone()).collect(), sig.ret.clone());
                return Typed { ty, term: None };
            }
            Some(ValueDef::Measure(_)) => {
                self.measure_misuse(id);
                return Typed::error();
            }
            None => {}
        }
        if crate::builtins::is_builtin(&id.name) {
            self.error(Code::TypeMismatch, id.span, format!("the builtin `{}` can only be called", id.name)).help =
                Some(format!("wrap it in a closure: `|x| {}(x)`", id.name));
            return Typed::error();
        }
        if is_builtin_host_type(&id.name) {
            self.forged(id.span, &id.name);
            return Typed::error();
        }
        if let Some(info) = self.types.get(&id.name) {
            if info.def.is_host_made() {
                self.forged(id.span, &id.name);
            } else {
                self.error(Code::UndefinedName, id.span, format!("`{}` is a type, not a value", id.name));
            }
            return Typed::error();
        }
        self.undefined_name(id);
        Typed::error()
    }

    fn undefined_name(&mut self, id: &Ident) {
        let mut names: Vec<String> = self.visible_bindings().map(|b| b.name.clone()).collect();
        names.extend(self.values.keys().cloned());
        names.extend(crate::builtins::names().map(str::to_string));
        let mut d = Diagnostic::error(Code::UndefinedName, id.span, format!("`{}` is not defined", id.name));
        if let Some(s) = suggest(&id.name, names.iter().map(String::as_str)) {
            d = d.with_help(format!("did you mean `{s}`?"));
        } else if let Some(h) = foreign_hint(&id.name) {
            d = d.with_help(h);
        }
        self.diags.push(d);
    }

    fn measure_misuse(&mut self, id: &Ident) {
        self.error(
            Code::MeasureOutsideRefinement,
            id.span,
            format!("the measure `{}` exists only in refinements", id.name),
        )
        .help = Some(
            "a measure has no value at run time, so a plan cannot test it; what is known of it is in the types (a \
             binding of type `{x: T | m(x)}` has it) and the tools' signatures say how it changes"
                .into(),
        );
    }

    /// The arguments of a measure used outside a refinement, checked for their own mistakes; a
    /// measure only reads its argument, so a linear one is not used up (no cascade of
    /// `linear-reused` after the one mistake).
    fn measure_args_after_error<'e>(&mut self, args: impl IntoIterator<Item = &'e Expr>) {
        let before = self.lin_mark();
        self.infer_after_error(args);
        self.lin_undo(before);
    }

    pub fn forged(&mut self, span: Span, name: &str) {
        self.diags.push(
            Diagnostic::error(Code::ForgedHostValue, span, format!("values of `{name}` cannot be made by a program"))
                .with_primary_label("only the policy's tools return these")
                .with_help(format!("get a `{name}` from a tool that returns one")),
        );
    }

    fn use_binding(&mut self, i: usize, span: Span) -> Typed {
        let b = &self.scope[i];
        let (ty, term, lin) = (b.ty.clone(), b.term.clone(), b.lin);
        if self.in_refinement {
            return Typed { ty, term };
        }
        let second_class = self.is_second_class(&ty);
        let mut captured = false;
        let mut outside_fill = false;
        for frame in self.closures.iter_mut().rev() {
            if frame.depth > i {
                captured = true;
                outside_fill |= frame.fill;
                frame.captures_capability |= second_class;
            }
        }
        let Some(state) = lin else { return Typed { ty, term } };
        if state == Lin::Misused {
            return Typed { ty, term };
        }
        let name = self.scope[i].name.clone();
        if outside_fill {
            // Left as it was: the fill did not run, so the value is still the program's.
            self.linear_outside_fill(&name, span);
            return Typed { ty, term };
        }
        if captured {
            self.error(Code::LinearCaptured, span, format!("a closure cannot capture the linear value `{name}`"))
                .help = Some(format!(
                "pass it as an argument instead; to use it once per element of a list, thread it through the \
                 loop: {}",
                crate::RECURSION_HINT
            ));
            self.set_lin(i, Some(Lin::Misused));
            return Typed { ty, term };
        }
        if self.labeled_blocks.last().is_some_and(|&d| d > i) {
            self.error(
                Code::LinearCaptured,
                span,
                format!("a `to_labeled` block cannot use the linear value `{name}` from outside it"),
            )
            .help = Some(format!("use `{name}` before or after the block"));
            self.set_lin(i, Some(Lin::Misused));
            return Typed { ty, term };
        }
        if self.loops.last().is_some_and(|&l| l > i) {
            self.set_lin(i, Some(Lin::Misused));
            self.diags.push(
                Diagnostic::error(
                    Code::LinearInLoop,
                    span,
                    format!("the linear value `{name}` would be used on every iteration"),
                )
                .with_primary_label("used inside the loop")
                .with_help(format!(
                    "a linear value is used exactly once; use it before or after the loop, or thread it through \
                     the loop with `with`: {}",
                    crate::RECURSION_HINT
                )),
            );
            return Typed { ty, term };
        }
        match state {
            Lin::Live => self.set_lin(i, Some(Lin::Consumed(span))),
            Lin::Consumed(prev) => {
                self.diags.push(
                    Diagnostic::error(Code::LinearReused, span, format!("the linear value `{name}` was already used"))
                        .with_primary_label("used again here")
                        .with_label(prev, "consumed here")
                        .with_help(format!("use the value the earlier call gave back, e.g. `let (x, {name}) = ...;`")),
                );
            }
            // Returned above: a misused value's uses are not reported again.
            Lin::Misused => {}
        }
        Typed { ty, term }
    }

    // ---------------------------------------------------------------- data

    /// Values that go into data must not be capabilities (or closures holding one).
    pub fn store(&mut self, t: &Typed, span: Span) {
        if self.is_second_class(&t.ty) {
            let what = second_class_noun(&self.resolve(&t.ty));
            self.error(Code::CapabilityStored, span, format!("{what} cannot be stored in data")).help =
                Some("capabilities are passed as arguments, never stored".into());
        }
    }

    fn check_tuple(&mut self, es: &[Expr], expected: Option<&Ty>, span: Span) -> Typed {
        let exp: Option<Vec<Ty>> = match expected.map(|t| self.resolve(t)) {
            Some(t) => match t.base() {
                Ty::Tuple(ts) if ts.len() == es.len() => Some(ts.clone()),
                _ => None,
            },
            None => None,
        };
        let mut tys = Vec::new();
        let mut terms = Vec::new();
        let before = self.diags.len();
        for (i, e) in es.iter().enumerate() {
            // After one element is wrong, the others are only inferred: one error per tuple.
            let t = match &exp {
                Some(ts) if self.diags.len() == before => {
                    // Decided before checking: checking may solve the expected type to the
                    // capability itself.
                    let reported_at_type = self.is_second_class(&ts[i]);
                    let t = self.check(e, &ts[i]);
                    if !reported_at_type {
                        self.store(&t, e.span);
                    }
                    t
                }
                _ => {
                    let t = self.infer(e);
                    if self.diags.len() == before {
                        self.store(&t, e.span);
                    }
                    t
                }
            };
            tys.push(t.ty.clone());
            terms.push(t.term);
        }
        if self.diags.len() > before && exp.is_some() {
            return Typed::error();
        }
        let ty = Ty::Tuple(tys.clone());
        // Types are trees: `(a, a)` doubles its element's, so a few lines could build a huge one.
        if crate::state::type_size(&ty, crate::state::MAX_TYPE_SIZE + 1) > crate::state::MAX_TYPE_SIZE {
            self.error(Code::NestingTooDeep, span, "the type of this tuple is too large").help =
                Some("declare a record type for the data".into());
            return Typed::error();
        }
        let term = self.fresh(&Ty::Tuple(tys.iter().map(Ty::strip).collect()), "_tuple");
        if let Some(tt) = &term {
            for (i, (ct, c)) in tys.iter().zip(terms).enumerate() {
                if let (Some(c), Some(sel)) = (c, self.tuple_field(tt, &ty, i, ct)) {
                    self.add_fact(Term::Eq(Box::new(sel), Box::new(c)), format!("{}.{i}", self.text(span)));
                }
            }
        }
        Typed { ty, term }
    }

    fn check_list(&mut self, es: &[Expr], expected: Option<&Ty>, span: Span) -> Typed {
        let elem = match expected.map(|t| self.resolve(t)) {
            Some(Ty::List(t)) => *t,
            _ => self.new_var(span),
        };
        let lin_before = self.lin_mark();
        // A capability element type in an annotation was reported where it was written.
        let mut stored = self.is_second_class(&elem);
        for e in es {
            let t = self.check(e, &elem);
            if !stored && self.is_second_class(&t.ty) {
                self.store(&t, e.span);
                stored = true;
            }
        }
        if self.is_linear(&elem) || matches!(self.resolve(&elem).base(), Ty::Linear(_)) {
            self.error(Code::LinearInCollection, span, "a list cannot hold linear values").help =
                Some("a list could copy or drop its elements; keep linear values in separate bindings".into());
            // The elements are no longer tracked, so the one mistake is reported once.
            for (i, l) in self.lin_since(lin_before) {
                if matches!(l, Some(Lin::Consumed(_))) {
                    self.set_lin(i, None);
                }
            }
        }
        let ty = Ty::list(elem);
        let term = self.fresh(&ty.strip(), "_list");
        if let Some(t) = &term
            && let Some(len) = self.length(t, &ty)
        {
            let n = i64::try_from(es.len()).unwrap_or(i64::MAX);
            self.add_fact(Term::Eq(Box::new(len), Box::new(Term::Int(n))), format!("a list literal of length {n}"));
        }
        Typed { ty, term }
    }

    fn check_record(&mut self, name: &Ident, fields: &[(Ident, Expr)], span: Span) -> Typed {
        // An alias stands for the type it names.
        let record_name = match self.types.get(&name.name).map(|i| &i.def) {
            Some(TypeDef::Alias(t)) => match t.base() {
                Ty::Record(n) | Ty::Linear(n) | Ty::Cap(n) | Ty::Opaque(n, _) => n.to_string(),
                _ => name.name.clone(),
            },
            _ => name.name.clone(),
        };
        let Some(info) = self.types.get(&record_name).cloned() else {
            self.error(Code::UndefinedType, name.span, format!("the type `{}` is not defined", name.name));
            for (_, e) in fields {
                self.infer(e);
            }
            return Typed::error();
        };
        let decl_fields = match info.def {
            def if def.is_host_made() => {
                self.forged(span, &name.name);
                for (_, e) in fields {
                    self.infer(e);
                }
                return Typed::error();
            }
            TypeDef::Record { fields, .. } => fields,
            _ => {
                self.error(Code::TypeMismatch, name.span, format!("`{}` is not a record type", name.name));
                return Typed::error();
            }
        };
        let ty = Ty::Record(Rc::from(record_name.as_str()));
        let term = self.fresh(&ty, "_record");
        let mut seen: Vec<&str> = Vec::new();
        for (f, e) in fields {
            let Some((_, ft)) = decl_fields.iter().find(|(n, _)| *n == f.name) else {
                self.not_found(
                    Code::UndefinedField,
                    f.span,
                    format!("`{}` has no field `{}`", name.name, f.name),
                    &f.name,
                    decl_fields.iter().map(|(n, _)| n.as_str()),
                    "",
                );
                self.infer(e);
                continue;
            };
            if seen.contains(&f.name.as_str()) {
                self.error(Code::DuplicateDefinition, f.span, format!("the field `{}` is given twice", f.name));
            }
            seen.push(&f.name);
            let t = self.check(e, ft);
            self.store(&t, e.span);
            if let (Some(r), Some(v)) = (&term, t.term)
                && let Some(sel) = self.record_field(r, &record_name, &f.name, ft)
            {
                self.add_fact(
                    Term::Eq(Box::new(sel), Box::new(v)),
                    format!("{}.{} = {}", name.name, f.name, self.text(e.span)),
                );
            }
        }
        let missing: Vec<&str> = decl_fields.iter().map(|(n, _)| n.as_str()).filter(|n| !seen.contains(n)).collect();
        if !missing.is_empty() {
            let list = missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ");
            self.error(
                Code::MissingField,
                span,
                format!("missing field{} {list} in `{}`", plural(missing.len()), name.name),
            );
        }
        Typed { ty, term }
    }

    fn check_field(&mut self, base: &Expr, name: &Ident, span: Span) -> Typed {
        let b = self.infer(base);
        let bt = self.resolve(&b.ty);
        match bt.base() {
            Ty::Error => Typed::error(),
            Ty::Record(r) => {
                let fields: Vec<(String, Ty)> = self.record_fields(r).map(|(f, _)| f.to_vec()).unwrap_or_default();
                let Some((_, ft)) = fields.iter().find(|(n, _)| *n == name.name) else {
                    self.not_found(
                        Code::UndefinedField,
                        name.span,
                        format!("`{r}` has no field `{}`", name.name),
                        &name.name,
                        fields.iter().map(|(n, _)| n.as_str()),
                        "",
                    );
                    return Typed::error();
                };
                let others_linear = fields.iter().any(|(n, t)| *n != name.name && self.is_linear(t));
                if others_linear && !self.in_refinement {
                    self.error(
                        Code::LinearUnused,
                        span,
                        format!("reading `{}` drops the other linear fields of `{r}`", name.name),
                    )
                    .help = Some("destructure it with `let` instead".into());
                }
                let term = b.term.as_ref().and_then(|t| self.record_field(t, r, &name.name, ft));
                let term = term.or_else(|| if self.in_refinement { None } else { self.fresh(ft, "_field") });
                Typed { ty: ft.clone(), term }
            }
            Ty::Cap(c) => {
                self.error(
                    Code::UndefinedField,
                    name.span,
                    format!("the capability `{c}` has no field `{}`", name.name),
                )
                .help = Some(format!("tools are called: `{}.{}(..)`", self.text(base.span), name.name));
                Typed::error()
            }
            Ty::Var(_) => {
                self.error(Code::CannotInfer, base.span, "the type of this value must be known here").help =
                    Some("add a type annotation".into());
                Typed::error()
            }
            other => {
                self.error(Code::UndefinedField, name.span, format!("`{other}` has no field `{}`", name.name));
                Typed::error()
            }
        }
    }

    fn check_tuple_field(&mut self, base: &Expr, index: u32, index_span: Span, span: Span) -> Typed {
        let b = self.infer(base);
        let bt = self.resolve(&b.ty);
        match bt.base() {
            Ty::Error => Typed::error(),
            Ty::Tuple(ts) => {
                let Some(ct) = ts.get(index as usize).cloned() else {
                    self.error(Code::UndefinedField, index_span, format!("`{bt}` has no field `{index}`"));
                    return Typed::error();
                };
                let others_linear = ts.iter().enumerate().any(|(i, t)| i != index as usize && self.is_linear(t));
                if others_linear && !self.in_refinement {
                    self.error(
                        Code::LinearUnused,
                        span,
                        format!("reading `.{index}` drops the other linear parts of this tuple"),
                    )
                    .help = Some("destructure it with `let (a, b) = ..;` instead".into());
                }
                let term = b.term.as_ref().and_then(|t| self.tuple_field(t, &bt, index as usize, &ct));
                Typed { ty: ct, term }
            }
            other => {
                self.error(Code::UndefinedField, index_span, format!("`{other}` is not a tuple"));
                Typed::error()
            }
        }
    }

    fn check_index(&mut self, base: &Expr, index: &Expr) -> Typed {
        let b = self.infer(base);
        let i = self.check(index, &Ty::Int);
        let bt = self.resolve(&b.ty);
        let elem = match bt.base() {
            Ty::List(t) => (**t).clone(),
            Ty::Error => return Typed::error(),
            other => {
                self.error(Code::TypeMismatch, base.span, format!("only lists can be indexed, not `{other}`"));
                return Typed::error();
            }
        };
        if let (Some(bt_term), Some(it)) = (&b.term, &i.term) {
            if let Some(len) = self.length(bt_term, &bt) {
                let goal = Term::And(vec![
                    Term::Le(Box::new(Term::Int(0)), Box::new(it.clone())),
                    Term::Lt(Box::new(it.clone()), Box::new(len)),
                ]);
                let (xs, ix) = (self.text(base.span), self.text(index.span));
                self.prove_goal(
                    goal,
                    vec![format!("0 <= {ix}"), format!("{ix} < len({xs})")],
                    index.span,
                    "the index must be in bounds",
                );
            }
        } else if !i.ty.is_error() {
            self.error(Code::RefinementUnproven, index.span, "cannot prove this index is in bounds").help =
                Some("use `xs.get(i)`, which returns an `Option`".into());
        }
        self.fresh_typed(elem, "_elem")
    }

    // ---------------------------------------------------------------- operators

    fn check_unary(&mut self, op: UnOp, operand: &Expr) -> Typed {
        match op {
            UnOp::Not => {
                let t = self.check(operand, &Ty::Bool);
                Typed { ty: Ty::Bool, term: t.term.map(|t| Term::Not(Box::new(t))) }
            }
            UnOp::Neg => {
                let t = self.infer(operand);
                match self.resolve(&t.ty).base() {
                    Ty::Int | Ty::Float | Ty::Decimal => {
                        Typed { ty: t.ty.base().strip(), term: t.term.map(|t| Term::Neg(Box::new(t))) }
                    }
                    Ty::Error => Typed::error(),
                    other => {
                        self.error(Code::TypeMismatch, operand.span, format!("cannot negate `{other}`"));
                        Typed::error()
                    }
                }
            }
        }
    }

    fn check_binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
        match op {
            BinOp::And | BinOp::Or => self.check_logical(op, lhs, rhs),
            BinOp::Eq | BinOp::Ne => self.check_equality(op, lhs, rhs),
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => self.check_order(op, lhs, rhs),
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => self.check_arithmetic(op, lhs, rhs),
        }
    }

    // Each operator's rule is a function of its own: a chain of operators recurses through
    // `check_binary`, and in a debug build a function's frame holds the locals of all its
    // branches, so one function for all of them would need more stack than a thread's default
    // for 128 levels of nesting.

    fn check_logical(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
        let l = self.check(lhs, &Ty::Bool);
        let mark = self.facts.len();
        if let Some(lt) = &l.term {
            let fact = if op == BinOp::And { lt.clone() } else { Term::Not(Box::new(lt.clone())) };
            self.add_fact(fact, format!("{}{}", if op == BinOp::And { "" } else { "!" }, self.text(lhs.span)));
        }
        // The right operand runs only sometimes: it is a branch, and may not consume a
        // linear value.
        let before = self.lin_mark();
        let r = self.check(rhs, &Ty::Bool);
        let after = self.lin_since(before);
        self.lin_join(before, &[LinPath::new(), after], rhs.span, &format!("`{}`", op.as_str()));
        self.facts.truncate(mark);
        if l.ty.is_error() || r.ty.is_error() {
            return Typed::error();
        }
        let term = match (l.term, r.term) {
            (Some(a), Some(b)) if op == BinOp::And => Some(Term::And(vec![a, b])),
            (Some(a), Some(b)) => Some(Term::Or(vec![a, b])),
            _ => None,
        };
        let term = term.or_else(|| if self.in_refinement { None } else { self.fresh(&Ty::Bool, "_b") });
        Typed { ty: Ty::Bool, term }
    }

    fn check_equality(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
        let l = self.infer(lhs);
        let r = self.check(rhs, &l.ty.strip());
        let lt = self.resolve(&l.ty);
        if matches!(lt.base(), Ty::Fn(_) | Ty::Cap(_)) || self.is_linear(&lt) {
            self.error(Code::TypeMismatch, lhs.span, format!("values of `{lt}` cannot be compared"));
        }
        if let Ty::Var(_) = lt.base() {
            self.error(Code::CannotInfer, lhs.span, "the type of this value must be known here");
        }
        if lt.is_error() || r.ty.is_error() {
            return Typed::error();
        }
        let term = match (l.term, r.term) {
            // A value holding a float may not equal itself (NaN): nothing is known.
            _ if self.holds_float(&lt) => None,
            (Some(a), Some(b)) => {
                let eq = Term::Eq(Box::new(a), Box::new(b));
                Some(if op == BinOp::Eq { eq } else { Term::Not(Box::new(eq)) })
            }
            _ => None,
        };
        let term = term.or_else(|| if self.in_refinement { None } else { self.fresh(&Ty::Bool, "_b") });
        Typed { ty: Ty::Bool, term }
    }

    fn check_order(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
        // Numbers, and strings (ordered as the runtime orders them: by Unicode scalar
        // values, lexicographically).
        // Dates, instants and durations are ordered in time, as the integers that stand for them.
        let l = self.infer(lhs);
        let (ty, l, r) = self.numeric_operands(op, l, lhs, rhs, Operands { strings: true, times: true });
        if ty.is_error() {
            return Typed::error();
        }
        let term = match (l, r) {
            // The logic has no string order: a comparison of strings is an unknown
            // Boolean (so no refinement can use one), never an ill-sorted term.
            _ if matches!(ty, Ty::Str) => None,
            (Some(a), Some(b)) => Some(match op {
                BinOp::Lt => Term::Lt(Box::new(a), Box::new(b)),
                BinOp::Le => Term::Le(Box::new(a), Box::new(b)),
                BinOp::Gt => Term::Lt(Box::new(b), Box::new(a)),
                _ => Term::Le(Box::new(b), Box::new(a)),
            }),
            _ => None,
        };
        let term = term.or_else(|| if self.in_refinement { None } else { self.fresh(&Ty::Bool, "_b") });
        Typed { ty: Ty::Bool, term }
    }

    fn check_arithmetic(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
        let l = self.infer(lhs);
        let lt = self.resolve(&l.ty).base().strip();
        if matches!(lt, Ty::DateTime | Ty::Duration) && matches!(op, BinOp::Add | BinOp::Sub) {
            return self.time_arithmetic(op, l, lt, rhs);
        }
        let (ty, l, r) = self.numeric_operands(op, l, lhs, rhs, Operands { strings: op == BinOp::Add, times: false });
        if ty.is_error() {
            return Typed::error();
        }
        if op == BinOp::Rem && matches!(ty, Ty::Decimal) {
            self.error(Code::TypeMismatch, lhs.span.to(rhs.span), "`%` takes `Int`s, not `Decimal`s").help =
                Some("round with `round(d, places)` or divide with `div_round(a, b, places)`".into());
            return Typed::error();
        }
        if matches!(op, BinOp::Div | BinOp::Rem) && matches!(ty, Ty::Int | Ty::Decimal) && !self.in_refinement {
            match &r {
                Some(rt) => {
                    let zero = if matches!(ty, Ty::Decimal) { Term::Real(0, 1) } else { Term::Int(0) };
                    let goal = Term::Not(Box::new(Term::Eq(Box::new(rt.clone()), Box::new(zero))));
                    self.prove_goal(
                        goal,
                        vec![format!("{} != 0", self.text(rhs.span))],
                        rhs.span,
                        "the divisor must not be 0",
                    );
                }
                None => {
                    self.error(Code::RefinementUnproven, rhs.span, "cannot prove the divisor is not 0");
                }
            }
        }
        let is_const = |t: &Option<Term>| matches!(t, Some(Term::Int(_)) | Some(Term::Real(..)));
        let term = match (op, l.clone(), r.clone()) {
            (BinOp::Add, Some(a), Some(b)) if matches!(ty, Ty::Str) => Some(Term::StrConcat(vec![a, b])),
            (BinOp::Add, Some(a), Some(b)) => Some(Term::Add(vec![a, b])),
            (BinOp::Sub, Some(a), Some(b)) => Some(Term::Sub(Box::new(a), Box::new(b))),
            (BinOp::Mul, Some(a), Some(b)) if is_const(&l) || is_const(&r) => Some(Term::Mul(Box::new(a), Box::new(b))),
            // A decimal divided by a literal is exact (the runtime stops where a
            // quotient has no exact decimal form): a product with its inverse.
            (BinOp::Div, Some(a), Some(Term::Real(n, d))) if n != 0 && n != i128::MIN => {
                Some(Term::Mul(Box::new(a), Box::new(Term::Real(d, n))))
            }
            _ => None,
        };
        if self.in_refinement && term.is_none() {
            let what = match op {
                BinOp::Mul => "multiplication of two variables is outside the decidable fragment",
                _ => "division is outside the decidable fragment",
            };
            self.error(Code::UnsupportedRefinement, lhs.span.to(rhs.span), what);
            return Typed::error();
        }
        let divisor = r.as_ref().map(|t| self.facts.normalize(t));
        let term = match (term, op, &l, &divisor) {
            (Some(t), ..) => Some(t),
            (None, BinOp::Div | BinOp::Rem, Some(a), Some(Term::Int(c)))
                if *c != 0 && *c != i64::MIN && !self.in_refinement && matches!(ty, Ty::Int) =>
            {
                self.divide(a, *c, op == BinOp::Div, lhs.span.to(rhs.span))
            }
            // Outside the logic (a product of two values, a division by a value): a
            // value the solver knows nothing of. Its name says so, so that no
            // counterexample is offered through it (see `logic.rs`), and a fact with
            // no content (`0 * (a + b) <= 0 * v`) ties it to its operands, so that an
            // obligation about them finds it.
            _ => {
                let v = self.fresh(&ty, UNMODELLED);
                if let (Some(v), Some(a), Some(b), Ty::Int) = (&v, &l, &r, &ty) {
                    let zero = || Box::new(Term::Int(0));
                    let tie = Term::Le(
                        Box::new(Term::Mul(zero(), Box::new(Term::Add(vec![a.clone(), b.clone()])))),
                        Box::new(Term::Mul(zero(), Box::new(v.clone()))),
                    );
                    let origin = self.text(lhs.span.to(rhs.span)).to_string();
                    self.add_fact(tie, origin);
                }
                v
            }
        };
        Typed { ty, term }
    }

    /// `a / c` (`quotient`) or `a % c` by a constant `c` other than 0, as the runtime computes
    /// them (rounding toward zero, the remainder taking the sign of `a`), in linear arithmetic:
    /// `a == c * q + r` with `0 <= r < |c|` for `a >= 0` and `-|c| < r <= 0` for `a < 0`.
    fn divide(&mut self, a: &Term, c: i64, quotient: bool, span: Span) -> Option<Term> {
        let q = Term::Var(self.fresh_name("_quotient"), Sort::Int);
        let r = Term::Var(self.fresh_name("_remainder"), Sort::Int);
        let int = |n: i64| Box::new(Term::Int(n));
        let b = |t: &Term| Box::new(t.clone());
        let abs = c.abs();
        let whole = Term::Eq(b(a), Box::new(Term::Add(vec![Term::Mul(int(c), b(&q)), r.clone()])));
        let non_negative = Term::Implies(
            Box::new(Term::Le(int(0), b(a))),
            Box::new(Term::And(vec![Term::Le(int(0), b(&r)), Term::Lt(b(&r), int(abs))])),
        );
        let negative = Term::Implies(
            Box::new(Term::Lt(b(a), int(0))),
            Box::new(Term::And(vec![Term::Lt(int(-abs), b(&r)), Term::Le(b(&r), int(0))])),
        );
        let origin = self.text(span).to_string();
        self.add_fact(Term::And(vec![whole, non_negative, negative]), origin);
        Some(if quotient { q } else { r })
    }

    /// Checks both operands have the same numeric type (or are both strings, where `strings`:
    /// `+` and the comparisons).
    fn numeric_operands(
        &mut self,
        op: BinOp,
        l: Typed,
        lhs: &Expr,
        rhs: &Expr,
        takes: Operands,
    ) -> (Ty, Option<Term>, Option<Term>) {
        let lt = self.resolve(&l.ty).base().strip();
        if lt.is_error() {
            self.infer(rhs);
            return (Ty::Error, None, None);
        }
        let ok = |t: &Ty| {
            matches!(t, Ty::Int | Ty::Float | Ty::Decimal | Ty::Error)
                || (takes.strings && matches!(t, Ty::Str))
                || (takes.times && matches!(t, Ty::Date | Ty::DateTime | Ty::Duration))
        };
        let lt = if let Ty::Var(_) = lt {
            let r = self.infer(rhs);
            let rt = self.resolve(&r.ty).base().strip();
            if ok(&rt) && !matches!(rt, Ty::Error) {
                self.unify(&lt, &rt);
                return (rt, None, r.term);
            }
            self.error(Code::CannotInfer, lhs.span, "the type of this value must be known here").help =
                Some("add a type annotation".into());
            return (Ty::Error, None, None);
        } else {
            lt
        };
        if !ok(&lt) {
            self.error(Code::TypeMismatch, lhs.span, format!("`{}` cannot be applied to `{lt}`", op.as_str()));
            self.infer(rhs);
            return (Ty::Error, None, None);
        }
        let r = self.check(rhs, &lt);
        if r.ty.is_error() {
            return (Ty::Error, None, None);
        }
        (lt, l.term, r.term)
    }

    /// `DateTime ± Duration` is a `DateTime`, `DateTime - DateTime` and `Duration ± Duration` a
    /// `Duration`: in the logic, sums and differences of their nanoseconds, exactly (the runtime
    /// stops where the result leaves the range of instants or durations).
    fn time_arithmetic(&mut self, op: BinOp, l: Typed, lt: Ty, rhs: &Expr) -> Typed {
        let r = self.infer(rhs);
        let rt = self.resolve(&r.ty).base().strip();
        let ty = match (&lt, &rt, op) {
            (_, Ty::Error, _) => return Typed::error(),
            (Ty::DateTime, Ty::Duration, _) => Ty::DateTime,
            (Ty::DateTime, Ty::DateTime, BinOp::Sub) | (Ty::Duration, Ty::Duration, _) => Ty::Duration,
            _ => {
                let wanted = if matches!(lt, Ty::DateTime) && op == BinOp::Sub {
                    "a `Duration` or a `DateTime`"
                } else {
                    "a `Duration`"
                };
                self.error(
                    Code::TypeMismatch,
                    rhs.span,
                    format!("`{lt} {} ..` needs {wanted}, found `{rt}`", op.as_str()),
                )
                .help = Some(if matches!((&lt, &rt), (Ty::Duration, Ty::DateTime)) {
                    "put the instant first: `t + days(1)`".into()
                } else {
                    "make a duration with `minutes(n)`, `hours(n)`, `days(n)` or `seconds(n)`".into()
                });
                return Typed::error();
            }
        };
        let term = match (l.term, r.term) {
            (Some(a), Some(b)) if op == BinOp::Add => Some(Term::Add(vec![a, b])),
            (Some(a), Some(b)) => Some(Term::Sub(Box::new(a), Box::new(b))),
            _ => None,
        };
        let term = term.or_else(|| if self.in_refinement { None } else { self.fresh(&ty, UNMODELLED) });
        Typed { ty, term }
    }

    // ---------------------------------------------------------------- control flow

    /// Paths split at `mark` must consume the same linear values: reports the first that
    /// differs and leaves every such value consumed. Only the bindings some path changed are
    /// looked at; one no path changed is as it was at the mark on each.
    fn lin_join(&mut self, mark: LinMark, paths: &[LinPath], span: Span, what: &str) {
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

    fn check_if(&mut self, e: &Expr, cond: &Expr, then: &Block, else_: Option<&Expr>, expected: Option<&Ty>) -> Typed {
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

    fn check_match(
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

    fn check_for(&mut self, pat: &Pattern, iter: &Expr, body: &Block) -> Typed {
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

    fn check_stmt(&mut self, s: &Stmt) {
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
        self.push_scope(Binding { name: id.name.clone(), ty, term, span: id.span, lin });
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
                let payload = self.variant_payload(&ty, enum_name.as_ref(), name, pat.span);
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

    fn refutable_let(&mut self, span: Span) {
        self.error(Code::NonExhaustiveMatch, span, "this pattern may not match").help =
            Some("`let` needs a pattern that always matches; use `match`".into());
    }

    /// The payload types of a variant pattern against the scrutinee type.
    fn variant_payload(&mut self, ty: &Ty, enum_name: Option<&Ident>, name: &Ident, span: Span) -> Option<Vec<Ty>> {
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

    fn check_closure(
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
    fn check_to_labeled(&mut self, b: &Block, expected: Option<&Ty>) -> Typed {
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

    fn check_cast(&mut self, expr: &Expr, ty: &TypeExpr, span: Span) -> Typed {
        let target = self.resolve_type(ty, &[]);
        let t = self.infer(expr);
        if self.is_host_made(&target) {
            let name = self.resolve(&target).strip().to_string();
            self.forged(span, &name);
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

    fn check_hole(&mut self, e: &Expr, ty: Option<&TypeExpr>, args: &[Expr], expected: Option<&Ty>) -> Typed {
        let ty = match (ty, expected) {
            (Some(te), _) => {
                let t = self.resolve_type(te, &[]);
                if self.is_second_class(&t) {
                    self.error(Code::CapabilityEscapes, te.span, "a hole cannot produce a capability").help =
                        Some("pass the capability into the hole as an argument instead".into());
                }
                t
            }
            // The type must be known here: whether the result is linear or a capability decides
            // how it may be used from now on.
            (None, Some(t)) if !has_var(&self.resolve(t)) => t.clone(),
            (None, _) => {
                self.error(Code::CannotInfer, e.span, "the type this hole must produce is unknown").help =
                    Some("write it: `agent[T](\"task\")`".into());
                Ty::Error
            }
        };
        match args.first() {
            None => {
                self.error(Code::WrongArgCount, e.span, "a hole needs a task: `agent[T](\"what to do\")`");
            }
            Some(task) => {
                self.check(task, &Ty::Str);
            }
        }
        let extra = args.get(1..).unwrap_or(&[]);
        let typed: Vec<Typed> = extra.iter().map(|a| self.infer(a)).collect();
        self.check_hole_can_be_filled(e.span, &ty, &typed);
        // The fill reaches every capability in scope: a closure around the hole holds them,
        // and a function the hole makes may hold them too.
        let capability_in_scope = self.visible_bindings().any(|b| self.is_second_class(&b.ty));
        let hole_ty = if capability_in_scope {
            for frame in &mut self.closures {
                frame.captures_capability = true;
            }
            self.second_class(&ty)
        } else {
            ty.clone()
        };
        let params: Vec<(String, Typed)> = crate::holes::arg_names(extra).into_iter().zip(typed).collect();
        self.record_hole(e.span, &ty, &params);
        if let Some(fill) = self.fills.get(&e.span).cloned() {
            self.check_fill_body(&fill, &ty, &hole_ty, &params);
            self.filled.insert(e.span);
        }
        self.holes += 1;
        let term = self.fresh(&hole_ty, "_hole");
        Typed { ty: hole_ty, term }
    }

    /// A hole whose type holds a linear value its fill could never have: none is passed in, and
    /// no tool in scope makes one from nothing (a tool that takes one to give one back needs
    /// one to start with). No fill could check, so the plan is rejected here, not after the
    /// model was asked.
    fn check_hole_can_be_filled(&mut self, span: Span, ty: &Ty, args: &[Typed]) {
        // The linear types every value of `ty` holds (an `Option[Session]` may be `None`).
        fn required(t: &Ty, out: &mut Vec<Rc<str>>) {
            match t {
                Ty::Linear(name) if !out.contains(name) => out.push(name.clone()),
                Ty::Refined(r) => required(&r.base, out),
                Ty::Tuple(ts) => ts.iter().for_each(|t| required(t, out)),
                _ => {}
            }
        }
        let mut wanted: Vec<Rc<str>> = Vec::new();
        required(&self.resolve(ty), &mut wanted);
        let holds = |t: &Ty, name: &Rc<str>| t.any_part(&mut |p| matches!(p, Ty::Linear(n) if n == name));
        let capabilities: Vec<Rc<str>> = self
            .visible_bindings()
            .filter_map(|b| match self.resolve(&b.ty).base() {
                Ty::Cap(name) => Some(name.clone()),
                _ => None,
            })
            .collect();
        for name in wanted {
            if args.iter().any(|a| holds(&self.resolve(&a.ty), &name)) {
                continue;
            }
            let minted = capabilities.iter().any(|cap| match self.types.get(&**cap).map(|i| &i.def) {
                Some(TypeDef::Capability { tools }) => tools
                    .iter()
                    .any(|(_, sig)| holds(&sig.ret, &name) && !sig.params.iter().any(|(_, p)| holds(p, &name))),
                _ => false,
            });
            if minted {
                continue;
            }
            self.error(
                Code::ForgedHostValue,
                span,
                format!("no fill could give this hole a `{name}`: none is passed in, and no tool in scope makes one"),
            )
            .help = Some(format!(
                "pass the `{name}` the fill should use as an argument: `agent[T](\"task\", s)`, and give it back in `T`"
            ));
        }
    }

    // ---------------------------------------------------------------- calls

    /// The payload types of the variant `name` of enum `enum_name`, or a report that it has none.
    fn variant(&mut self, enum_name: &str, variants: &[(String, Vec<Ty>)], name: &Ident) -> Option<Vec<Ty>> {
        if let Some((_, payload)) = variants.iter().find(|(v, _)| *v == name.name) {
            return Some(payload.clone());
        }
        self.not_found(
            Code::UndefinedVariant,
            name.span,
            format!("`{enum_name}` has no variant `{}`", name.name),
            &name.name,
            variants.iter().map(|(v, _)| v.as_str()),
            &format!("{enum_name}::"),
        );
        None
    }

    fn check_variant(&mut self, ty: &Ident, variant: &Ident, args: Option<&[Expr]>, span: Span) -> Typed {
        let Some(info) = self.types.get(&ty.name).cloned() else {
            self.error(Code::UndefinedType, ty.span, format!("the type `{}` is not defined", ty.name));
            self.infer_after_error(args.unwrap_or(&[]));
            return Typed::error();
        };
        let TypeDef::Enum { variants } = info.def else {
            self.error(Code::UndefinedVariant, variant.span, format!("`{}` is not an enum", ty.name));
            return Typed::error();
        };
        let Some(payload) = self.variant(&ty.name, &variants, variant) else {
            return Typed::error();
        };
        let written = args.is_some();
        let args = args.unwrap_or(&[]);
        let arity_error = payload.len() != args.len();
        if arity_error {
            let error = self.error(
                Code::WrongArgCount,
                span,
                format!(
                    "`{}::{}` takes {} argument{}, found {}",
                    ty.name,
                    variant.name,
                    payload.len(),
                    plural(payload.len()),
                    args.len()
                ),
            );
            if !written {
                error.help = Some(format!(
                    "a variant with a payload is not a function: write `{}::{}(..)` with its payload",
                    ty.name, variant.name
                ));
            }
        }
        for (i, a) in args.iter().enumerate() {
            let t = match payload.get(i) {
                Some(p) => self.check(a, p),
                None => self.infer(a),
            };
            self.store(&t, a.span);
        }
        if arity_error {
            // No value was made: nothing downstream (a linear enum left unused) is reported
            // for it.
            return Typed::error();
        }
        self.fresh_typed(Ty::Enum(Rc::from(ty.name.as_str())), "_variant")
    }

    fn check_call(&mut self, call: &Expr, callee: &Expr, args: &[Expr], expected: Option<&Ty>) -> Typed {
        let span = call.span;
        let argv: Args<'_> = args.iter().collect();
        // In a label annotation the label functions are never shadowed: a tool parameter named
        // `user` must not hide `user()`.
        if let ExprKind::Name(id) = &callee.kind
            && self.in_label
            && let Some(l) = crate::builtins::label_fn(&id.name)
        {
            self.calls.record(call, Callee::Builtin(Builtin::Label(l)));
            return crate::builtins::label_call(self, l, &argv, span);
        }
        match &callee.kind {
            ExprKind::Path { ty, variant } => return self.check_variant(ty, variant, Some(args), span),
            ExprKind::Name(id) if self.lookup(&id.name).is_none() => {
                match id.name.as_str() {
                    "Some" | "Ok" | "Err" => {
                        self.calls.record(call, Callee::Constructor);
                        return self.check_constructor(id, args, span, expected);
                    }
                    "None" => {
                        self.error(Code::NotCallable, callee.span, "`None` takes no arguments");
                        return Typed::error();
                    }
                    _ => {}
                }
                match self.values.get(&id.name).cloned() {
                    Some(ValueDef::Fn(sig)) => {
                        self.calls.record(call, Callee::Function);
                        return self.call_signature(&sig, &argv, span, None);
                    }
                    Some(ValueDef::Measure(sig)) => {
                        self.calls.record(call, Callee::Measure);
                        if self.in_refinement {
                            return self.call_measure(&sig, &argv, span);
                        }
                        self.measure_misuse(id);
                        self.measure_args_after_error(argv.iter().copied());
                        return Typed::error();
                    }
                    _ => {}
                }
                if let Some(b) = crate::builtins::plan_builtin(&id.name)
                    && (!self.in_refinement || crate::builtins::in_refinements(b))
                {
                    self.calls.record(call, Callee::Builtin(b));
                    return crate::builtins::call(self, b, &argv, span);
                }
                if crate::builtins::label_fn(&id.name).is_some() && !self.in_refinement {
                    crate::builtins::label_outside_annotation(self, id);
                    self.infer_after_error(argv.iter().copied());
                    return Typed::error();
                }
                if is_builtin_host_type(&id.name) {
                    self.forged(span, &id.name);
                    self.infer_after_error(argv.iter().copied());
                    return Typed::error();
                }
                if let Some(info) = self.types.get(&id.name) {
                    if info.def.is_host_made() {
                        self.forged(span, &id.name);
                    } else {
                        self.error(
                            Code::NotCallable,
                            callee.span,
                            format!("the type `{}` cannot be called", id.name),
                        )
                        .help = Some(format!("build a record with `{} {{ field: value, .. }}`", id.name));
                    }
                    self.infer_after_error(argv.iter().copied());
                    return Typed::error();
                }
            }
            _ => {}
        }
        if self.in_refinement {
            self.error(
                Code::UnsupportedRefinement,
                span,
                "only measures, `len` and `seconds`/`minutes`/`hours`/`days` can be called in a refinement",
            );
            return Typed::error();
        }
        self.calls.record(call, Callee::Value);
        let f = self.infer(callee);
        let ft = self.resolve(&f.ty);
        match ft.base() {
            Ty::Fn(fnty) => {
                let sig = Signature {
                    name: self.text(callee.span).to_string(),
                    params: fnty.params.iter().enumerate().map(|(i, t)| (format!("#{i}"), t.clone())).collect(),
                    ret: fnty.ret.clone(),
                    span: callee.span,
                };
                self.call_signature(&sig, &argv, span, None)
            }
            Ty::Error => {
                self.infer_after_error(argv.iter().copied());
                Typed::error()
            }
            other => {
                self.error(Code::NotCallable, callee.span, format!("a value of type `{other}` cannot be called"));
                self.infer_after_error(argv.iter().copied());
                Typed::error()
            }
        }
    }

    fn check_constructor(&mut self, id: &Ident, args: &[Expr], span: Span, expected: Option<&Ty>) -> Typed {
        let [arg] = args else {
            self.error(Code::WrongArgCount, span, format!("`{}` takes one argument, found {}", id.name, args.len()));
            self.infer_after_error(args);
            return Typed::error();
        };
        let exp = expected.map(|t| self.resolve(t));
        let ty = match (id.name.as_str(), exp.as_ref().map(Ty::base)) {
            ("Some", Some(Ty::Option(t))) => {
                let t = (**t).clone();
                let reported_at_type = self.is_second_class(&t);
                let a = self.check(arg, &t);
                if !reported_at_type {
                    self.store(&a, arg.span);
                }
                Ty::option(t)
            }
            ("Some", _) => {
                let a = self.infer(arg);
                self.store(&a, arg.span);
                Ty::option(a.ty.strip())
            }
            ("Ok" | "Err", Some(Ty::Result(t, e))) => {
                let (t, e) = ((**t).clone(), (**e).clone());
                let part = if id.name == "Ok" { t.clone() } else { e.clone() };
                let reported_at_type = self.is_second_class(&part);
                let a = self.check(arg, &part);
                if !reported_at_type {
                    self.store(&a, arg.span);
                }
                Ty::Result(Box::new(t), Box::new(e))
            }
            (name, _) => {
                let a = self.infer(arg);
                self.store(&a, arg.span);
                let other = self.new_var(span);
                if name == "Ok" {
                    Ty::Result(Box::new(a.ty.strip()), Box::new(other))
                } else {
                    Ty::Result(Box::new(other), Box::new(a.ty.strip()))
                }
            }
        };
        self.fresh_typed(ty, "_ctor")
    }

    fn check_method(&mut self, call: &Expr, receiver: &Expr, method: &Ident, args: &[Expr]) -> Typed {
        let span = call.span;
        if self.in_refinement {
            let builtin = crate::builtins::plan_builtin(&method.name);
            if builtin == Some(Builtin::Len) && args.is_empty() {
                self.calls.record(call, Callee::Builtin(Builtin::Len));
                let r = self.infer(receiver);
                let term = r.term.as_ref().and_then(|t| self.length(t, &r.ty));
                if term.is_none() && !r.ty.is_error() {
                    self.error(
                        Code::TypeMismatch,
                        receiver.span,
                        format!("`len` needs a `String` or a `List`, found `{}`", self.resolve(&r.ty)),
                    );
                    return Typed::error();
                }
                return Typed { ty: Ty::Int, term };
            }
            // Allow-lists: `a.ends_with("@example.com")`, in the solver's theory of strings.
            let test = match builtin {
                Some(Builtin::StartsWith) => Some(StrTest::StartsWith),
                Some(Builtin::EndsWith) => Some(StrTest::EndsWith),
                Some(Builtin::Contains) => Some(StrTest::Contains),
                _ => None,
            };
            if let (Some(test), [arg], Some(b)) = (test, args, builtin) {
                self.calls.record(call, Callee::Builtin(b));
                let r = self.infer(receiver);
                let a = self.infer(arg);
                for (t, at) in [(&r, receiver.span), (&a, arg.span)] {
                    if !matches!(self.resolve(&t.ty).base(), Ty::Str | Ty::Error) {
                        let found = self.resolve(&t.ty);
                        self.error(
                            Code::TypeMismatch,
                            at,
                            format!("`{}` compares strings, found `{found}`", test.name()),
                        );
                        return Typed::error();
                    }
                }
                let term = match (r.term, a.term) {
                    (Some(s), Some(t)) => Some(Term::StrTest(test, Box::new(s), Box::new(t))),
                    _ => None,
                };
                return Typed { ty: Ty::Bool, term };
            }
            self.error(
                Code::UnsupportedRefinement,
                span,
                "only `len`, `starts_with`, `ends_with`, `contains` and measures can be called in a refinement",
            );
            return Typed::error();
        }
        // A tool call on a capability.
        if let ExprKind::Name(id) = &receiver.kind
            && let Some(i) = self.lookup(&id.name)
            && let Ty::Cap(cap) = self.resolve(&self.scope[i].ty).base()
        {
            let cap = cap.clone();
            self.use_binding(i, receiver.span);
            self.calls.record(call, Callee::Tool);
            return self.call_tool(&cap, method, args, span);
        }
        if let Some(ValueDef::Measure(_)) = self.values.get(&method.name) {
            self.measure_misuse(method);
            self.measure_args_after_error(std::iter::once(receiver).chain(args.iter()));
            return Typed::error();
        }
        let argv: Args<'_> = std::iter::once(receiver).chain(args.iter()).collect();
        if self.in_label
            && let Some(l) = crate::builtins::label_fn(&method.name)
        {
            self.calls.record(call, Callee::Builtin(Builtin::Label(l)));
            return crate::builtins::label_call(self, l, &argv, span);
        }
        if let Some(b) = crate::builtins::plan_builtin(&method.name)
            && !self.values.contains_key(&method.name)
        {
            self.calls.record(call, Callee::Builtin(b));
            return crate::builtins::call(self, b, &argv, span);
        }
        if let Some(ValueDef::Fn(sig)) = self.values.get(&method.name).cloned() {
            self.calls.record(call, Callee::Function);
            return self.call_signature(&sig, &argv, span, None);
        }
        let r = self.infer(receiver);
        let rt = self.resolve(&r.ty);
        if let Ty::Cap(cap) = rt.base() {
            let cap = cap.clone();
            self.calls.record(call, Callee::Tool);
            return self.call_tool(&cap, method, args, span);
        }
        if !rt.is_error() {
            let mut d =
                Diagnostic::error(Code::UndefinedMethod, method.span, format!("no method `{}` on `{rt}`", method.name));
            if let Some(h) = foreign_hint(&method.name) {
                d = d.with_help(h);
            } else if let Some(s) = suggest(&method.name, crate::builtins::names()) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.diags.push(d);
        }
        self.infer_after_error(args);
        Typed::error()
    }

    fn call_tool(&mut self, cap: &str, method: &Ident, args: &[Expr], span: Span) -> Typed {
        let tools = match self.types.get(cap).map(|i| &i.def) {
            Some(TypeDef::Capability { tools }) => tools.clone(),
            _ => Vec::new(),
        };
        let Some((_, sig)) = tools.iter().find(|(n, _)| *n == method.name) else {
            let mut d = Diagnostic::error(
                Code::UndefinedMethod,
                method.span,
                format!("the capability `{cap}` has no tool `{}`", method.name),
            );
            if let Some(s) = suggest(&method.name, tools.iter().map(|(n, _)| n.as_str())) {
                d = d.with_help(format!("did you mean `{s}`?"));
            } else if !tools.is_empty() {
                let names = tools.iter().map(|(n, _)| format!("`{n}`")).collect::<Vec<_>>().join(", ");
                d = d.with_help(format!("its tools are {names}"));
            }
            self.diags.push(d);
            self.infer_after_error(args);
            return Typed::error();
        };
        let argv: Args<'_> = args.iter().collect();
        self.call_signature(sig, &argv, span, Some(cap))
    }

    /// Checks a call against a signature: arguments against the parameters' base types, then
    /// the parameters' refinements with every argument's term known, then the result.
    pub fn call_signature(&mut self, sig: &Signature, args: &[&Expr], span: Span, tool_of: Option<&str>) -> Typed {
        if sig.params.len() != args.len() {
            let what = match tool_of {
                Some(c) => format!("the tool `{c}.{}`", sig.name),
                None => format!("`{}`", sig.name),
            };
            let params = sig.params.iter().map(|(n, t)| format!("{n}: {t}")).collect::<Vec<_>>().join(", ");
            let n = sig.params.len();
            self.diags.push(
                Diagnostic::error(
                    Code::WrongArgCount,
                    span,
                    format!("{what} takes {n} argument{}, found {}", plural(n), args.len()),
                )
                .with_label(sig.span, format!("declared as `{}({params})`", sig.name)),
            );
            self.infer_after_error(args.iter().copied());
            return self.fresh_typed(sig.ret.strip(), "_call");
        }
        let mut actual: Vec<(String, Term)> = Vec::new();
        let mut typed = Vec::new();
        for (a, (pname, pty)) in args.iter().zip(&sig.params) {
            let t = self.check(a, &strip_provable(pty));
            if let Some(term) = &t.term {
                actual.push((pname.clone(), term.clone()));
            }
            typed.push(t);
        }
        for ((a, (_, pty)), t) in args.iter().zip(&sig.params).zip(&typed) {
            if crate::logic::has_refinement(pty) && !t.ty.is_error() {
                let closed = self.close(pty, &actual);
                self.prove_refinements(t.term.as_ref(), &t.ty, &closed, a.span);
            }
        }
        let ret = self.close(&sig.ret, &actual);
        let origin = format!("the result of {}", abbreviate(self.text(span)));
        let term = self.fresh_from(&ret, "_call", &origin);
        Typed { ty: ret, term }
    }

    fn call_measure(&mut self, sig: &Signature, args: &[&Expr], span: Span) -> Typed {
        if sig.params.len() != args.len() {
            self.error(
                Code::WrongArgCount,
                span,
                format!(
                    "the measure `{}` takes {} argument{}, found {}",
                    sig.name,
                    sig.params.len(),
                    plural(sig.params.len()),
                    args.len()
                ),
            );
            return Typed::error();
        }
        let mut terms = Vec::new();
        for (a, (_, pty)) in args.iter().zip(&sig.params) {
            let t = self.check(a, &pty.strip());
            match t.term {
                Some(t) => terms.push(t),
                None => return Typed::error(),
            }
        }
        let ptys: Vec<Ty> = sig.params.iter().map(|(_, t)| t.clone()).collect();
        let term = self.measure_app(&sig.name, terms, &ptys, &sig.ret);
        Typed { ty: sig.ret.strip(), term }
    }
}

/// A type without the refinements that are proved about a value (at the top and in tuple
/// components) but with those nested in lists, options and function types, which only
/// matching types satisfy.
fn strip_provable(t: &Ty) -> Ty {
    match t {
        Ty::Refined(r) => strip_provable(&r.base),
        Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(strip_provable).collect()),
        t => t.clone(),
    }
}

/// How a second-class value is named in messages.
pub fn second_class_noun(t: &Ty) -> &'static str {
    match t.base() {
        Ty::Fn(_) => "a function that may hold a capability",
        _ => "a capability",
    }
}

/// Does the type still have a part to infer?
fn has_var(t: &Ty) -> bool {
    let mut found = false;
    t.any_part(&mut |t| {
        found |= matches!(t, Ty::Var(_));
        found
    });
    found
}

fn occurs(v: u32, t: &Ty) -> bool {
    let mut found = false;
    t.any_part(&mut |t| {
        found |= matches!(t, Ty::Var(x) if *x == v);
        found
    });
    found
}

/// The builtin host-made types: `Label` and `Labeled`.
fn is_builtin_host_type(name: &str) -> bool {
    name == LABEL || name == LABELED
}

fn allowed_in_refinement(k: &ExprKind) -> bool {
    matches!(
        k,
        ExprKind::Int(_)
            | ExprKind::Decimal(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Name(_)
            | ExprKind::Field { .. }
            | ExprKind::TupleField { .. }
            | ExprKind::Call { .. }
            | ExprKind::MethodCall { .. }
            | ExprKind::Unary { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Error
    )
}

impl Checker<'_> {
    /// What matching `p` against `term` (of type `ty`) says, from the literals in it, also
    /// inside tuples (`(0, _)` says `term.0 == 0`); and whether that is exactly when it matches
    /// (its other parts are bindings and wildcards), so that an arm after it may assume its
    /// negation.
    fn pattern_condition(&mut self, p: &Pattern, ty: &Ty, term: &Term) -> (Option<Term>, bool) {
        if let Some(lit) = literal_term(p) {
            return (Some(Term::Eq(Box::new(term.clone()), Box::new(lit))), true);
        }
        match &p.kind {
            PatternKind::Wild | PatternKind::Bind(_) => (None, true),
            PatternKind::Tuple(ps) => {
                let ty = self.resolve(ty);
                let Ty::Tuple(parts) = ty.base().clone() else { return (None, false) };
                if parts.len() != ps.len() {
                    return (None, false);
                }
                let (mut conds, mut exact) = (Vec::new(), true);
                for (i, (p, t)) in ps.iter().zip(&parts).enumerate() {
                    let Some(sub) = self.tuple_field(term, ty.base(), i, t) else {
                        exact = false;
                        continue;
                    };
                    let (cond, sub_exact) = self.pattern_condition(p, t, &sub);
                    conds.extend(cond);
                    exact &= sub_exact;
                }
                match conds.len() {
                    0 => (None, exact),
                    1 => (conds.pop(), exact),
                    _ => (Some(Term::And(conds)), exact),
                }
            }
            _ => (None, false),
        }
    }
}

/// What an operator takes besides numbers.
#[derive(Clone, Copy)]
struct Operands {
    strings: bool,
    times: bool,
}

/// A decimal's exact value: its integer mantissa over a power of ten (at most `10^28`).
pub(crate) fn decimal_term(d: rust_decimal::Decimal) -> Term {
    Term::Real(d.mantissa(), 10i128.pow(d.scale()))
}

/// The term a literal pattern matches, for facts in its arm.
fn literal_term(p: &Pattern) -> Option<Term> {
    match &p.kind {
        PatternKind::Int(n) => Some(Term::Int(*n)),
        PatternKind::Str(s) => Some(Term::Str(s.clone())),
        PatternKind::Bool(b) => Some(Term::Bool(*b)),
        _ => None,
    }
}

/// The span of a leading keyword (`if`, `match`), so the diagnostic lands on its line.
fn keyword_span(s: Span, len: u32) -> Span {
    Span::new(s.file, s.start, s.start.saturating_add(len).min(s.end.max(s.start)))
}

fn if_keyword(s: Span) -> Span {
    keyword_span(s, 2)
}

fn abbreviate(s: &str) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 60 {
        format!("{}…", one_line.chars().take(57).collect::<String>())
    } else {
        one_line
    }
}

/// Hints for names models bring from other languages.
fn foreign_hint(name: &str) -> Option<String> {
    Some(match name {
        "unwrap" | "expect" => "there is no `unwrap`: use `match` or `unwrap_or(default)`".into(),
        "iter" | "into_iter" | "collect" => "lists have `map`, `filter` and `fold` directly: `xs.map(|x| ..)`".into(),
        "length" | "size" | "count" => "use `len`".into(),
        "print" | "println" | "console" => "there is no printing: return the value instead".into(),
        "format" => "join strings with `+` and `to_string(x)`".into(),
        "null" | "nil" | "undefined" => "use `None`".into(),
        "self" | "this" => "there are no methods with `self`; pass values as arguments".into(),
        _ => return None,
    })
}
