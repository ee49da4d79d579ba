//! A call of a builtin as the walker makes it: one that calls no function gives what
//! [`super::builtins`] computes from its arguments, `unlabel` raising the program-counter label
//! for good; one that calls a function argument runs as what it stands for at run time, a loop
//! over a list's elements or a `match` on an option's or a result's payload.

use cordon_label::DcLabel;
use cordon_syntax::{Builtin, Span};

use super::builtins::{self, Rule, rule};
use super::{Analyzer, Res};
use crate::abs::{Abs, Bounds, Kind, Origins};

impl<'a> Analyzer<'a> {
    /// A builtin that calls no function ([`builtins::apply`]); `unlabel` gives its box's content
    /// and raises the program-counter label by the content's label, for good.
    pub(super) fn builtin(&mut self, b: Builtin, args: &[Abs]) -> Abs {
        if let (Rule::Unlabel, [boxed]) = (rule(b), args) {
            let inner = builtins::unlabel(boxed);
            self.pc = self.pc.join(&inner.label);
            return inner;
        }
        builtins::apply(b, args, &self.user)
    }

    /// `map`, `filter`, `fold`, `any`, `all` and the keyed builtins: a loop calling the
    /// function argument on each element.
    pub(super) fn higher_order(&mut self, b: Builtin, xs: Abs, rest: Vec<Abs>, span: Span) -> Res {
        let on_variant = matches!(xs.kind, Kind::Variant { .. }) || matches!(b, Builtin::AndThen | Builtin::MapErr);
        if let (Builtin::Map | Builtin::AndThen | Builtin::MapErr, [f], true) = (b, rest.as_slice(), on_variant) {
            return self.combinator(b, &xs, f.clone(), span);
        }
        let cond = format!("for each element, in `{}`", b.name());
        let (f, init) = match (b, rest.as_slice()) {
            (Builtin::Fold, [init, f]) => (f.clone(), Some(init.clone())),
            (_, [f]) => (f.clone(), None),
            _ => return Ok(Abs::any()),
        };
        let (acc, pc) = self.in_loop(&xs, cond, init, |a, elem, acc| {
            let args = match (&acc, b) {
                (Some(acc), Builtin::Fold) => vec![acc.clone(), elem],
                _ => vec![elem],
            };
            a.call_value(f.clone(), args, span).map(Some)
        })?;
        let len = match &xs.kind {
            Kind::List { len, .. } => *len,
            _ => None,
        };
        let out = acc.unwrap_or_else(|| Abs::plain(Kind::Unknown));
        Ok(match b {
            Builtin::Map => {
                Abs::new(Kind::List { elem: Box::new(out), len }, Bounds::bottom(), Origins::default()).raised(&pc)
            }
            Builtin::Fold => out.raised(&pc),
            Builtin::Filter => {
                let label = xs.label.join(&out.deep(true)).join(&pc);
                let elem = self.kept(&f, xs.element());
                Abs::new(Kind::List { elem: Box::new(elem), len: None }, label, xs.origins.clone())
            }
            // Ordered by the keys: the result carries the list's own label and the keys'; the
            // elements keep their own.
            Builtin::SortBy | Builtin::MinBy | Builtin::MaxBy => {
                let label = Bounds { lo: xs.label.lo.clone(), hi: xs.label.hi.join(&out.deep(true).hi) }.join(&pc);
                let list = Kind::List { elem: Box::new(xs.element()), len };
                if b == Builtin::SortBy {
                    Abs::new(list, label, xs.origins.clone())
                } else {
                    Abs::new(Kind::Variant { name: None, payload: vec![xs.element()] }, label, xs.origins.clone())
                }
            }
            // `count_by`: keys and how many of each, from the keys alone; `any`, `all`,
            // `group_by` (which holds the elements), and anything else: from everything.
            _ => {
                let list = if b == Builtin::CountBy { xs.label.hi.clone() } else { xs.deep(true).hi };
                let label = Bounds { lo: xs.label.lo.clone(), hi: list.join(&out.deep(true).hi) }.join(&pc);
                Abs::unknown(label, xs.origins_deep().union(&out.origins))
            }
        })
    }

    /// `map`, `and_then`, `map_err` on an `Option` or a `Result`: the `match` they stand for at
    /// run time, the function called on the payload under the value's label, the result one of
    /// the value (a variant passed through) and what the function made.
    fn combinator(&mut self, b: Builtin, v: &Abs, f: Abs, span: Span) -> Res {
        let saved = self.pc.clone();
        self.pc = self.pc.join(&v.label);
        let payload = match &v.kind {
            Kind::Variant { payload, .. } if !payload.is_empty() => v.element(),
            _ => Abs::unknown(Bounds { lo: DcLabel::bottom(), hi: v.label.hi.clone() }, v.origins.clone()),
        };
        self.conds.push(format!("when it holds a value, in `{}`", b.name()));
        let r = self.call_value(f, vec![payload], span)?;
        self.conds.pop();
        let made = match b {
            Builtin::AndThen => r,
            _ => Abs::plain(Kind::Variant { name: None, payload: vec![r] }),
        };
        let inside = std::mem::replace(&mut self.pc, saved);
        Ok(made.either(v).raised(&inside))
    }
}
