//! Operators: unary and binary, comparisons, string and list operators, and the refinements
//! their results carry.

use super::*;

impl Checker<'_> {
    pub(super) fn check_unary(&mut self, op: UnOp, operand: &Expr) -> Typed {
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

    pub(super) fn check_binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
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

    pub(super) fn check_logical(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
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

    pub(super) fn check_equality(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
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

    pub(super) fn check_order(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
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

    pub(super) fn check_arithmetic(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
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
                    let zero = if matches!(ty, Ty::Decimal) { Term::real(0, 1) } else { Term::Int(0) };
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
        let is_const = |t: &Option<Term>| matches!(t, Some(Term::Int(_)) | Some(Term::Real(_)));
        let term = match (op, l.clone(), r.clone()) {
            (BinOp::Add, Some(a), Some(b)) if matches!(ty, Ty::Str) => Some(Term::StrConcat(vec![a, b])),
            (BinOp::Add, Some(a), Some(b)) => Some(Term::Add(vec![a, b])),
            (BinOp::Sub, Some(a), Some(b)) => Some(Term::Sub(Box::new(a), Box::new(b))),
            (BinOp::Mul, Some(a), Some(b)) if is_const(&l) || is_const(&r) => Some(Term::Mul(Box::new(a), Box::new(b))),
            // A decimal divided by a literal is exact (the runtime stops where a
            // quotient has no exact decimal form): a product with its inverse.
            (BinOp::Div, Some(a), Some(Term::Real(r))) if r.num != 0 && r.num != i128::MIN => {
                Some(Term::Mul(Box::new(a), Box::new(Term::real(r.den, r.num))))
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
    pub(super) fn divide(&mut self, a: &Term, c: i64, quotient: bool, span: Span) -> Option<Term> {
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
    pub(super) fn numeric_operands(
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
    pub(super) fn time_arithmetic(&mut self, op: BinOp, l: Typed, lt: Ty, rhs: &Expr) -> Typed {
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
}
