//! Bidirectional checking of expressions, statements and patterns, with the linearity,
//! capability and forging rules applied where values are used, stored and returned.

mod calls;
mod control_flow;
mod holes;
mod operators;

use std::rc::Rc;

use cordon_smt::{Sort, StrTest, Term};
use cordon_syntax::ast::{
    BinOp, Block, ClosureParam, Expr, ExprKind, Ident, Pattern, PatternKind, Stmt, TypeExpr, UnOp,
};
use cordon_syntax::{Builtin, Code, Diagnostic, Span};

use crate::calls::Callee;
use crate::hints::RECURSION_HINT;
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
                let got = self.check_closure(params, ret.as_deref(), body, Some(f));
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
            ExprKind::Closure { params, ret, body } => self.check_closure(params, ret.as_deref(), body, None),
            ExprKind::Cast { expr, ty } => self.check_cast(e, expr, ty, span),
            ExprKind::Hole { ty, args } => self.check_hole(e, ty.as_deref(), args, expected),
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
        let mut names: Vec<String> = self.visible_bindings().map(|b| b.name.to_string()).collect();
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
                RECURSION_HINT
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
                    RECURSION_HINT
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

    /// Reports a capability (or a function holding one) returned from a body whose result
    /// may not be one: a function's, the plan's or a fill's.
    pub fn capability_escapes(&mut self, span: Span, ty: &Ty) {
        let what = second_class_noun(&self.resolve(ty));
        self.error(Code::CapabilityEscapes, span, format!("{what} cannot be returned")).help =
            Some("capabilities are passed down as arguments and never leave their scope".into());
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
fn second_class_noun(t: &Ty) -> &'static str {
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
    Term::real(d.mantissa(), 10i128.pow(d.scale()))
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
