//! The builtins, abstractly: each one's run-time label rule on the safe side. [`rule`] says, by
//! an exhaustive `match`, what the analysis takes each builtin to do; a builtin the language
//! gains does not compile until it says. What a builtin that calls no function gives is
//! computed from its arguments' abstract values alone ([`apply`], [`unlabel`]); the walker runs
//! the builtins that call a function argument (`builtin_calls.rs`).

use std::sync::Arc;

use cordon_label::DcLabel;
use cordon_syntax::{Builtin, LabelFn};

use crate::abs::{Abs, Bounds, Kind, Origins};

/// What the analysis takes a builtin to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rule {
    /// Calls its function argument on each element (the run time compiles it to a loop), or on
    /// an option's or a result's payload.
    Loop,
    /// Makes a label from principals' names, or says whom the run acts for.
    Label(LabelFn),
    /// Opens a `Labeled` box: the content, and the program-counter label raised by its label for
    /// good.
    Unlabel,
    /// A first-order builtin: which labels it reads and what its result holds.
    Apply { reads: Reads, holds: Holds },
}

/// Which labels a first-order builtin's result carries at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reads {
    /// Its arguments' own labels only (a list's length is its spine's, a variant's tag its own),
    /// as the run time's; the elements a list result keeps keep their own.
    Own,
    /// Everything its arguments hold.
    Everything,
}

/// What is known of a first-order builtin's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Holds {
    /// Nothing but its label.
    Unknown,
    /// `unwrap_or`: the payload or the default.
    PayloadOrDefault,
    /// `get`, `first`, `last` of a list: an option of one of its elements.
    Element,
    /// `range(a, b)`: integers, as many as the bounds say.
    Range,
    /// A list of the elements it was given (`take`, `sort`, `push`, ..).
    Elements,
}

pub(super) fn rule(b: Builtin) -> Rule {
    use Builtin::*;
    let apply = |reads, holds| Rule::Apply { reads, holds };
    match b {
        Map | Filter | Fold | Any | All | AndThen | MapErr | SortBy | MinBy | MaxBy | GroupBy | CountBy => Rule::Loop,
        Label(l) => Rule::Label(l),
        Unlabel => Rule::Unlabel,
        Len | IsEmpty | IsSome | IsNone | IsOk | IsErr | Enumerate => apply(Reads::Own, Holds::Unknown),
        Reverse | Take | Skip | Push => apply(Reads::Own, Holds::Elements),
        Sort | Unique | Slice | Concat => apply(Reads::Everything, Holds::Elements),
        UnwrapOr => apply(Reads::Everything, Holds::PayloadOrDefault),
        Get | First | Last => apply(Reads::Everything, Holds::Element),
        Range => apply(Reads::Everything, Holds::Range),
        MapFrom | Contains | Sum | Zip | StartsWith | EndsWith | ToUpper | ToLower | Trim | Split | Join | ToString
        | ParseInt | ParseDecimal | Find | Replace | Lines | Words | Repeat | PadLeft | PadRight | Matches
        | FindAll | Captures | Insert | Remove | ContainsKey | Keys | Values | Entries | OkOr | Abs | Min | Max
        | Round | DivRound | ParseDate | ParseDateTime | Seconds | Minutes | Hours | Days | AddDays | DaysBetween => {
            apply(Reads::Everything, Holds::Unknown)
        }
    }
}

/// A builtin that calls no function, on `args`, in a run acting for `user` (whom `user()`
/// names): the result carries at least its first argument's label (every builtin joins it) and
/// at most everything it was given.
pub(super) fn apply(b: Builtin, args: &[Abs], user: &Arc<str>) -> Abs {
    let (reads, holds) = match rule(b) {
        Rule::Label(l) => match label_fn(l, args, user) {
            Some(made) => return made,
            None => (Reads::Everything, Holds::Unknown),
        },
        Rule::Apply { reads, holds } => (reads, holds),
        // `unlabel` of one box is the walker's, as it raises the program-counter label (see
        // [`unlabel`]); other arguments the checker does not let through.
        Rule::Unlabel | Rule::Loop => (Reads::Everything, Holds::Unknown),
    };
    // Two labels joined (in `@label` values); a second one not known here may be any.
    if let (Builtin::Join, [a, c]) = (b, args)
        && let Kind::Label(a) = &a.kind
    {
        let c = match &c.kind {
            Kind::Label(c) => c.clone(),
            _ => Bounds::any(),
        };
        return Abs::plain(Kind::Label(a.join(&c)));
    }
    let Some(first) = args.first() else {
        return Abs::plain(Kind::Unknown);
    };
    let everything = match reads {
        Reads::Own => args.iter().fold(DcLabel::bottom(), |l, a| l.join(&a.label.hi)),
        Reads::Everything => everything_of(args),
    };
    let origins = args.iter().fold(Origins::default(), |o, a| o.union(&a.origins_deep()));
    let label = Bounds { lo: first.label.lo.clone(), hi: everything };
    let is_list = matches!(first.kind, Kind::List { .. });
    match holds {
        Holds::PayloadOrDefault if args.len() == 2 => match &first.kind {
            Kind::Variant { payload, .. } if payload.len() == 1 => {
                payload[0].either(&args[1]).raised(&Bounds { lo: first.label.lo.clone(), hi: first.label.hi.clone() })
            }
            _ => Abs::unknown(label, origins),
        },
        Holds::Element if is_list => {
            let own = args.iter().fold(Bounds::bottom(), |l, a| l.join(&a.label));
            Abs::new(Kind::Variant { name: None, payload: vec![first.element()] }, own, origins)
        }
        Holds::Range if args.len() == 2 => {
            let len = match (&args[0].kind, &args[1].kind) {
                (Kind::Int(a), Kind::Int(b)) => Some(b.saturating_sub(*a).max(0) as u64),
                _ => None,
            };
            let elem = Abs::unknown(Bounds { lo: DcLabel::bottom(), hi: everything_of(args) }, Origins::default());
            Abs::new(Kind::List { elem: Box::new(elem), len }, label, origins)
        }
        Holds::Elements if is_list => {
            let mut elem = first.element();
            if let Some(other) = args.get(1).filter(|_| b == Builtin::Concat) {
                elem = elem.either(&other.element());
            }
            if let Some(x) = args.get(1).filter(|_| b == Builtin::Push) {
                elem = elem.either(x);
            }
            Abs::new(Kind::List { elem: Box::new(elem), len: None }, label, origins)
        }
        Holds::Unknown | Holds::PayloadOrDefault | Holds::Element | Holds::Range | Holds::Elements => {
            Abs::unknown(label, origins)
        }
    }
}

/// A label function on `args`, in a run acting for `user`; `None` for arguments it does not
/// take.
fn label_fn(l: LabelFn, args: &[Abs], user: &Arc<str>) -> Option<Abs> {
    // Someone not known here: anyone's secret.
    let anyones_secret =
        || Bounds { lo: DcLabel::bottom(), hi: DcLabel { secrecy: DcLabel::top().secrecy, ..DcLabel::bottom() } };
    let label = |b: Bounds| Some(Abs::plain(Kind::Label(b)));
    match (l, args) {
        (LabelFn::User, []) => Some(Abs::plain(Kind::Str(user.clone()))),
        (LabelFn::Public, []) => label(Bounds::exactly(DcLabel::bottom())),
        (LabelFn::Untrusted, []) => label(Bounds::exactly(DcLabel::untrusted())),
        (LabelFn::Secret, [p]) => {
            label(p.as_str().map_or_else(anyones_secret, |p| Bounds::exactly(DcLabel::secret(p))))
        }
        // Someone not known here: vouched for by anyone.
        (LabelFn::Endorsed, [p]) => label(match p.as_str() {
            Some(p) => Bounds::exactly(DcLabel::endorsed(p)),
            None => Bounds { lo: DcLabel::bottom(), hi: DcLabel::untrusted() },
        }),
        (LabelFn::Readers, [ps]) => {
            label(known_names(ps).map_or_else(anyones_secret, |ps| Bounds::exactly(DcLabel::readers(&ps))))
        }
        (LabelFn::Group, [name, ps]) => label(match (name.as_str(), known_names(ps)) {
            (Some(name), Some(ps)) => Bounds::exactly(DcLabel::group(name, &ps)),
            _ => anyones_secret(),
        }),
        (
            LabelFn::User
            | LabelFn::Public
            | LabelFn::Untrusted
            | LabelFn::Secret
            | LabelFn::Endorsed
            | LabelFn::Readers
            | LabelFn::Group,
            _,
        ) => None,
    }
}

/// `unlabel(b)`: the box's content, raised by the box's label (the walker raises the
/// program-counter label by the content's label, for good).
pub(super) fn unlabel(b: &Abs) -> Abs {
    match &b.kind {
        Kind::Labeled(inner) => (**inner).clone().raised(&b.label),
        // A box whose content is not known: its label may be anything.
        _ => Abs::unknown(Bounds { lo: b.label.lo.clone(), hi: DcLabel::top() }, b.origins.clone()),
    }
}

/// At most everything `args` hold: the join of their deep upper bounds.
fn everything_of(args: &[Abs]) -> DcLabel {
    args.iter().fold(DcLabel::bottom(), |l, a| l.join(&a.deep(true).hi))
}

/// The names a list of principals holds, where the analysis knows them all.
fn known_names(ps: &Abs) -> Option<Vec<&str>> {
    match &ps.kind {
        Kind::List { elem, len: Some(1) } => elem.as_str().map(|p| vec![p]),
        Kind::List { len: Some(0), .. } => Some(Vec::new()),
        _ => None,
    }
}
