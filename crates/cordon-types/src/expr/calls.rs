//! Calls: of functions, closures, builtins, tools and methods, with their arguments checked
//! against refined parameters.

use super::*;

impl Checker<'_> {
    /// The payload types of the variant `name` of enum `enum_name`, or a report that it has none.
    pub(super) fn variant(&mut self, enum_name: &str, variants: &[(String, Vec<Ty>)], name: &Ident) -> Option<Vec<Ty>> {
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

    pub(super) fn check_variant(&mut self, ty: &Ident, variant: &Ident, args: Option<&[Expr]>, span: Span) -> Typed {
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

    pub(super) fn check_call(&mut self, call: &Expr, callee: &Expr, args: &[Expr], expected: Option<&Ty>) -> Typed {
        let span = call.span;
        let argv: Args<'_> = args.iter().collect();
        // In a label annotation the label functions are never shadowed: a tool parameter named
        // `user` must not hide `user()`.
        if let ExprKind::Name(id) = &callee.kind
            && self.in_label
            && let Some(l) = crate::builtins::label_fn(&id.name)
        {
            self.resolved.calls.record(call, Callee::Builtin(Builtin::Label(l)));
            return crate::builtins::label_call(self, l, &argv, span);
        }
        match &callee.kind {
            ExprKind::Path { ty, variant } => return self.check_variant(ty, variant, Some(args), span),
            ExprKind::Name(id) if self.lookup(&id.name).is_none() => {
                match id.name.as_str() {
                    "Some" | "Ok" | "Err" => {
                        self.resolved.calls.record(call, Callee::Constructor);
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
                        self.resolved.calls.record(call, Callee::Function);
                        return self.call_signature(&sig, &argv, span, None);
                    }
                    Some(ValueDef::Measure(sig)) => {
                        self.resolved.calls.record(call, Callee::Measure);
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
                    self.resolved.calls.record(call, Callee::Builtin(b));
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
        self.resolved.calls.record(call, Callee::Value);
        let f = self.infer(callee);
        let ft = self.resolve(&f.ty);
        match ft.base() {
            Ty::Fn(fnty) => {
                let sig = Signature {
                    name: self.text(callee.span).to_string(),
                    params: fnty.params.iter().enumerate().map(|(i, t)| (format!("#{i}"), t.clone())).collect(),
                    ret: fnty.ret.clone(),
                    declares_result: true,
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

    pub(super) fn check_constructor(&mut self, id: &Ident, args: &[Expr], span: Span, expected: Option<&Ty>) -> Typed {
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

    pub(super) fn check_method(&mut self, call: &Expr, receiver: &Expr, method: &Ident, args: &[Expr]) -> Typed {
        let span = call.span;
        if self.in_refinement {
            let builtin = crate::builtins::plan_builtin(&method.name);
            if builtin == Some(Builtin::Len) && args.is_empty() {
                self.resolved.calls.record(call, Callee::Builtin(Builtin::Len));
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
                self.resolved.calls.record(call, Callee::Builtin(b));
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
            self.resolved.calls.record(call, Callee::Tool);
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
            self.resolved.calls.record(call, Callee::Builtin(Builtin::Label(l)));
            return crate::builtins::label_call(self, l, &argv, span);
        }
        if let Some(b) = crate::builtins::plan_builtin(&method.name)
            && !self.values.contains_key(&method.name)
        {
            self.resolved.calls.record(call, Callee::Builtin(b));
            return crate::builtins::call(self, b, &argv, span);
        }
        if let Some(ValueDef::Fn(sig)) = self.values.get(&method.name).cloned() {
            self.resolved.calls.record(call, Callee::Function);
            return self.call_signature(&sig, &argv, span, None);
        }
        let r = self.infer(receiver);
        let rt = self.resolve(&r.ty);
        if let Ty::Cap(cap) = rt.base() {
            let cap = cap.clone();
            self.resolved.calls.record(call, Callee::Tool);
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

    pub(super) fn call_tool(&mut self, cap: &str, method: &Ident, args: &[Expr], span: Span) -> Typed {
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

    pub(super) fn call_measure(&mut self, sig: &Signature, args: &[&Expr], span: Span) -> Typed {
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
