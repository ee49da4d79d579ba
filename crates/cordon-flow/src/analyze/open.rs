//! Code the analysis cannot see into: a function a fill may call, or a recursive one, analysed
//! once with anything; and a typed hole, whose fill may call any tool and any function in its
//! scope, with anything.

use std::sync::Arc;

use cordon_label::DcLabel;
use cordon_syntax::Span;

use super::{Analyzer, Res, key};
use crate::abs::{Abs, Bounds, Closure, Kind, Origin, Origins};
use crate::site::{Count, HoleReach};

impl<'a> Analyzer<'a> {
    /// Analyses a function as if called with any arguments of its parameters' types, under
    /// any program-counter label, any number of times: how a recursive function, or one a
    /// fill may call, is summarised. Once per analysis.
    pub(super) fn analyze_open(&mut self, name: &'a str) -> Res<()> {
        if !self.top_done.insert(name) {
            return Ok(());
        }
        let Some(f) = self.decls.fns.get(name) else { return Ok(()) };
        let sig = self.decls.signatures.get(name);
        // Anything of each parameter's type: a capability is the one of that name (the only
        // value of its type); anything else is unknown.
        let params: Vec<(String, Abs)> = f
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let ty = sig.and_then(|s| s.params.get(i)).map(|p| &p.ty);
                let any = match ty.and_then(|t| self.decls.capability_of(t)) {
                    Some(c) => Abs::plain(Kind::Capability(c.into())),
                    None => Abs::any(),
                };
                (p.name.name.clone(), any)
            })
            .collect();
        let scope = std::mem::take(&mut self.scope);
        let pc = std::mem::replace(&mut self.pc, Bounds::any());
        let mult = std::mem::replace(&mut self.mult, Count::Unbounded);
        let conds = std::mem::replace(&mut self.conds, vec![format!("in `{name}`, with any arguments")]);
        let recording = std::mem::replace(&mut self.recording, true);
        for (n, v) in params {
            self.bind(&n, v);
        }
        self.top_mode += 1;
        self.calling.push(name);
        let r = self.block(&f.body);
        self.calling.pop();
        self.top_mode -= 1;
        self.scope = scope;
        self.pc = pc;
        self.mult = mult;
        self.conds = conds;
        self.recording = recording;
        r.map(|_| ())
    }

    /// A typed hole: the fill may call any tool of the capabilities in scope and any of the
    /// plan's functions and closures in scope, with anything; its result may be anything,
    /// and carries at least the program-counter label here.
    pub(super) fn hole(&mut self, span: Span) -> Abs {
        let line = self.line(span);
        if self.recording {
            let mut caps: Vec<String> = Vec::new();
            for (_, v) in self.scope.visible() {
                let mut seen = |v: &Abs| {
                    if let Kind::Capability(c) = &v.kind
                        && !caps.contains(&c.to_string())
                    {
                        caps.push(c.to_string());
                    }
                };
                seen(v);
                if let Kind::Closure(c) = &v.kind {
                    c.env.iter().for_each(|(_, v)| seen(v));
                }
            }
            caps.sort();
            self.holes.entry(key(span)).and_modify(|h| h.pc = h.pc.either(&self.pc)).or_insert(HoleReach {
                span,
                line,
                capabilities: caps,
                pc: self.pc.clone(),
            });
        }
        Abs::unknown(Bounds { lo: self.pc.lo.clone(), hi: DcLabel::top() }, Origins::one(Origin::Fill { line }))
    }

    /// What a fill can reach besides tools: the plan's functions and the closures in scope,
    /// each analysed with anything. Called where a hole is, after the hole itself.
    pub(super) fn open_reach(&mut self) -> Res<()> {
        let names: Vec<&'a str> = self.decls.fns.keys().copied().collect();
        for n in names {
            if !self.calling.contains(&n) {
                self.analyze_open(n)?;
            }
        }
        let closures: Vec<Arc<Closure>> = self
            .scope
            .visible()
            .filter_map(|(_, v)| match &v.kind {
                Kind::Closure(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        for c in closures {
            let f = Abs::new(Kind::Closure(c.clone()), Bounds::any(), Origins::default());
            let saved =
                (std::mem::replace(&mut self.mult, Count::Unbounded), std::mem::replace(&mut self.pc, Bounds::any()));
            let args = c.params.iter().map(|_| Abs::any()).collect();
            let r = self.call_value(f, args, c.body.span);
            (self.mult, self.pc) = saved;
            r?;
        }
        Ok(())
    }
}
