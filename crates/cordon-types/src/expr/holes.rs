//! A typed hole in an expression: `agent[T](task, args..)` checked where it stands, what a fill
//! of it may name recorded as its [`HoleSite`], and, while a fill is checked (`holes.rs` asks
//! for it), the fill checked in the hole's place, as the body of a closure called on the spot.

use std::collections::HashSet;

use cordon_syntax::ast::Module;

use super::*;
use crate::hole_site::{BindingKind, HoleBinding, HoleSite};
use crate::state::Role;

impl Checker<'_> {
    /// Checks the hole `agent[ty](args..)` at `e`: the type it produces must be known (written,
    /// or expected here) and its task is a `String`; the other arguments are what its fill is
    /// given. When the hole's fill is being checked, it is checked here, in the hole's place.
    pub(super) fn check_hole(
        &mut self,
        e: &Expr,
        ty: Option<&TypeExpr>,
        args: &[Expr],
        expected: Option<&Ty>,
    ) -> Typed {
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
        let params: Vec<(String, Typed)> = arg_names(extra).into_iter().zip(typed).collect();
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

    /// Records what a fill of the hole at `span` must produce and may name.
    fn record_hole(&mut self, span: Span, expected: &Ty, params: &[(String, Typed)]) {
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
            if !seen.insert(b.name.to_string()) || matches!(b.lin, Some(Lin::Consumed(_) | Lin::Misused)) {
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
            let holds = Term::App(m.as_str().into(), vec![term.clone()]);
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
    fn check_fill_body(&mut self, fill: &Module, expected: &Ty, hole_ty: &Ty, params: &[(String, Typed)]) {
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
    pub(super) fn linear_outside_fill(&mut self, name: &str, span: Span) {
        self.error(
            Code::LinearCaptured,
            span,
            format!("the fill cannot use the linear value `{name}`: it was not passed to the hole"),
        )
        .help = Some("a fill may use only the linear values passed to its hole as arguments".into());
    }
}

/// The names a fill gives a hole's arguments: a plain variable keeps its name, anything else
/// is `argN` (`N` its position after the task), made distinct from the other names.
fn arg_names(args: &[Expr]) -> Vec<String> {
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
