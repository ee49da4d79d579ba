//! A tool call as the analysis sees it: the sinks, tiers and result label the policy's
//! annotations give it on abstract arguments, each argument and the decision judged against its
//! sink and the call recorded, and the result shaped as the tool declares it.

use std::sync::Arc;

use cordon_label::{DcLabel, Tier};
use cordon_syntax::Span;
use cordon_syntax::ast::Expr;
use cordon_types::{ApprovalTier, LabelKey, Type};

use super::scope::Scope;
use super::{Analyzer, Res, ToolDecl, key};
use crate::abs::{Abs, Bounds, Kind, Origin, Origins};
use crate::site::{Destination, Param, Site, Verdict};

impl<'a> Analyzer<'a> {
    /// A tool call: its sinks and result label computed from the policy's annotations on
    /// these arguments, each argument and the decision judged against its sink, the call
    /// recorded; the result shaped as the tool declares it and labelled as the boundary
    /// labels it (the policy's result label joined with what chose the call).
    pub(super) fn tool_call(&mut self, cap: Arc<str>, tool: &'a ToolDecl<'a>, args: Vec<Abs>, span: Span) -> Res {
        let params: Vec<(String, Abs)> =
            tool.sig.params.iter().zip(&args).map(|(p, a)| (p.name.clone(), a.clone())).collect();
        let default = Bounds::exactly(DcLabel::endorsed(&self.user));
        let mut sinks = Vec::with_capacity(params.len());
        for i in 0..params.len() {
            sinks.push(match tool.label(LabelKey::Param(i)) {
                Some(e) => self.label_expr(e, &params)?,
                None => default.clone(),
            });
        }
        let decision_sink = match tool.label(LabelKey::Pc) {
            Some(e) => self.label_expr(e, &params)?,
            None => sinks
                .iter()
                .cloned()
                .reduce(|a, b| Bounds { lo: a.lo.meet(&b.lo), hi: a.hi.meet(&b.hi) })
                .unwrap_or(default),
        };
        let returns = match tool.label(LabelKey::Returns) {
            Some(e) => self.label_expr(e, &params)?,
            None => Bounds::exactly(DcLabel::closed(&self.user)),
        };
        let carried: Vec<Bounds> = args.iter().map(|a| a.deep(false)).collect();
        let cap = cap.clone();
        let chosen = carried.iter().fold(self.pc.clone(), |l, c| l.join(c));
        let name = format!("{cap}.{}", tool.sig.name);
        if self.recording {
            let tiers = match &tool.annotations.approval {
                Some(approval) => self.tiers(approval, &params)?,
                None => (Tier::None, Tier::None),
            };
            // Where the card says the call goes: its destination, else its one recipient.
            let destination = match tool.destination() {
                None => Destination::None,
                Some(e) => {
                    let v = self.value_expr(e, &params)?;
                    let known = match &v.kind {
                        Kind::List { elem, len: Some(1) } => elem.as_str(),
                        _ => v.as_str(),
                    };
                    match known {
                        Some(s) => Destination::Known(s.to_string()),
                        None => Destination::Computed,
                    }
                }
            };
            let mut ps = Vec::with_capacity(params.len());
            for (((pname, a), sink), c) in params.iter().zip(&sinks).zip(&carried) {
                ps.push(Param {
                    name: pname.clone(),
                    carried: c.clone(),
                    origins: a.origins_deep(),
                    sink: sink.clone(),
                    verdict: Verdict::of(c, sink, &self.releases),
                    decision: Verdict::of(&self.pc, sink, &self.releases),
                });
            }
            let site = Site {
                capability: cap.to_string(),
                tool: tool.sig.name.clone(),
                span,
                line: self.line(span),
                conditions: self.conds.clone(),
                count: self.mult,
                params: ps,
                pc: self.pc.clone(),
                decision_sink: decision_sink.clone(),
                decision: Verdict::of(&self.pc, &decision_sink, &self.releases),
                tiers,
                destination,
            };
            match self.sites.get_mut(&key(span)) {
                Some(known) => known.merge(site),
                None => {
                    self.sites.insert(key(span), site);
                }
            }
        }
        let line = self.line(span);
        let label = chosen.join(&returns);
        let key = (cap, tool.sig.name.as_str().into());
        let ret = tool.sig.declares_result.then_some(&tool.sig.ret);
        Ok(self.result_of(key, ret, &params, &label, Origins::one(Origin::Result { tool: name, line })))
    }

    /// A label expression of the policy (`@label(body = ..)`), evaluated on the call's
    /// arguments: bounds on the label it gives.
    pub(super) fn label_expr(&mut self, e: &Expr, params: &[(String, Abs)]) -> Res<Bounds> {
        // A label that names no parameter (`secret(user())`) is the same at every call.
        let key = (e.span.file.0, e.span.start, e.span.end);
        if let Some(b) = self.constant_labels.get(&key) {
            return Ok(b.clone());
        }
        let v = self.value_expr(e, params)?;
        let b = match v.kind {
            Kind::Label(b) => b,
            _ => Bounds::any(),
        };
        let (named, _) = cordon_types::node::mentions(e);
        if !params.iter().any(|(p, _)| named.contains(p)) {
            self.constant_labels.insert(key, b.clone());
        }
        Ok(b)
    }

    /// Evaluates policy code on the call's arguments, recording nothing.
    fn value_expr(&mut self, e: &Expr, params: &[(String, Abs)]) -> Res {
        let scope =
            std::mem::replace(&mut self.scope, Scope::of(params.iter().map(|(n, a)| (n.as_str().into(), a.clone()))));
        let pc = std::mem::replace(&mut self.pc, Bounds::bottom());
        let recording = std::mem::replace(&mut self.recording, false);
        let v = self.expr(e);
        self.scope = scope;
        self.pc = pc;
        self.recording = recording;
        v
    }

    /// The least and the most strict approval tier `@approval(..)` may give these arguments.
    fn tiers(&mut self, approval: &ApprovalTier, params: &[(String, Abs)]) -> Res<(Tier, Tier)> {
        Ok(match approval {
            ApprovalTier::Is(t) => (*t, *t),
            ApprovalTier::If { cond, then, otherwise } => {
                let c = self.value_expr(cond, params)?;
                match c.as_bool() {
                    Some(true) => self.tiers(then, params)?,
                    Some(false) => self.tiers(otherwise, params)?,
                    None => {
                        let (a, b) = (self.tiers(then, params)?, self.tiers(otherwise, params)?);
                        (a.0.min(b.0), a.1.max(b.1))
                    }
                }
            }
        })
    }

    /// A tool's result as the boundary makes it: shaped as declared, each record field
    /// labelled as its type says, and the call's label on the value (on each component of a
    /// tuple but the host-made ones, which stay unlabelled). What its refinements say of it is
    /// known, on the call's arguments `params` (`{r: Repo | r.owner == org}`).
    fn result_of(
        &mut self,
        tool: (Arc<str>, Arc<str>),
        ty: Option<&Type>,
        params: &[(String, Abs)],
        label: &Bounds,
        origins: Origins,
    ) -> Abs {
        let Some(ty) = ty else { return Abs::plain(Kind::Unit) };
        // A refinement learns only from arguments whose values are known: without one, the
        // shape is the same at every call.
        let known = |a: &Abs| matches!(a.kind, Kind::Str(_) | Kind::Int(_) | Kind::Bool(_));
        let args: Vec<(Arc<str>, Abs)> =
            params.iter().filter(|(_, a)| known(a)).map(|(n, a)| (n.as_str().into(), a.clone())).collect();
        // The shape is the same at every call with the same known arguments.
        let known_args: String = args.iter().map(|(n, a)| format!("{n}={:?};", a.kind)).collect();
        let key = (tool.0, tool.1, known_args);
        let shaped = match self.shapes.get(&key) {
            Some(s) => s.clone(),
            None => {
                let outer = std::mem::replace(&mut self.scope, Scope::of(args));
                let s = self.shape(ty, 0, &Origins::default());
                self.scope = outer;
                self.shapes.insert(key, s.clone());
                s
            }
        };
        let shaped = shaped.from(&origins);
        match shaped.kind {
            Kind::Tuple(items) => Abs::new(
                Kind::Tuple(
                    items
                        .into_iter()
                        .map(|x| if matches!(x.kind, Kind::Handle(_)) { x } else { x.raised(label) })
                        .collect(),
                ),
                Bounds::bottom(),
                origins,
            ),
            Kind::Handle(_) => shaped,
            _ => shaped.raised(label),
        }
    }

    /// A value of type `ty` as a tool returns it, before the call's label: the parts the type
    /// declares, every record field with its declared label (and the value its refinement
    /// gives it), unknown values otherwise.
    fn shape(&mut self, ty: &Type, depth: usize, origins: &Origins) -> Abs {
        let unknown = || Abs::unknown(Bounds::bottom(), origins.clone());
        if depth > 12 {
            return Abs::unknown(Bounds::any(), origins.clone());
        }
        let part = |a: &mut Self, t: &Type| a.shape(t, depth + 1, origins);
        match ty {
            Type::Unit => Abs::plain(Kind::Unit),
            Type::Tuple(ts) => {
                let items = ts.iter().map(|t| part(self, t)).collect();
                Abs::new(Kind::Tuple(items), Bounds::bottom(), origins.clone())
            }
            Type::Refined { var, base, pred, .. } => {
                // The boundary holds every result to its refinement: what it says of the fields
                // (`{r: Repo | !r.private}`) is known of the value, as on a path of that `if`.
                let shaped = self.shape(base, depth, origins);
                let outer = self.scope.len();
                self.bind(var, shaped.clone());
                self.assume(pred, true);
                let known = self.scope.get(var).cloned().unwrap_or(shaped);
                self.scope.truncate(outer);
                known
            }
            Type::Int | Type::Str | Type::Bool | Type::Float => unknown(),
            Type::List(t) => {
                let elem = part(self, t);
                Abs::new(Kind::List { elem: Box::new(elem), len: None }, Bounds::bottom(), origins.clone())
            }
            Type::Option(t) => {
                let p = part(self, t);
                Abs::new(Kind::Variant { name: None, payload: vec![p] }, Bounds::bottom(), origins.clone())
            }
            Type::Result(t, e) => {
                let p = part(self, t).either(&part(self, e));
                Abs::new(Kind::Variant { name: None, payload: vec![p] }, Bounds::bottom(), origins.clone())
            }
            Type::Record(n) => {
                let declared = self.decls.declared;
                let Some(record) = declared.record(n) else { return Abs::unknown(Bounds::any(), origins.clone()) };
                let env: Vec<(String, Abs)> =
                    record.fields.iter().map(|f| (f.name.clone(), part(self, &f.ty))).collect();
                let declared = self.declared_labels(n, &env);
                let fields = env.into_iter().map(|(name, v)| (name.as_str().into(), v)).collect();
                let kind = Kind::Record { opaque: record.opaque, ty: Some(n.as_str().into()), fields, declared };
                Abs::new(kind, Bounds::bottom(), origins.clone())
            }
            Type::Linear(n) | Type::Opaque(n, _) => {
                Abs::new(Kind::Handle(n.as_str().into()), Bounds::bottom(), origins.clone())
            }
            Type::Enum(n) => {
                let declared = self.decls.declared;
                let Some(e) = declared.enumeration(n) else { return Abs::unknown(Bounds::any(), origins.clone()) };
                let payloads: Vec<Abs> =
                    e.variants.iter().flat_map(|v| v.payload.iter()).map(|t| part(self, t)).collect();
                let hi = payloads.iter().fold(DcLabel::bottom(), |l, p| l.join(&p.deep(true).hi));
                Abs::unknown(Bounds { lo: DcLabel::bottom(), hi }, origins.clone())
            }
            // Functions, maps, labels, dates, times, durations, decimals: nothing known.
            _ => Abs::unknown(Bounds::any(), origins.clone()),
        }
    }
}
