//! The builtin functions: their (polymorphic, overloaded on the first argument) signatures and
//! the facts their results carry (`len(push(xs, x)) == len(xs) + 1`, `abs(x) >= 0`, ...); and
//! the label functions (`public`, `secret`, ..) that only `@label` annotations may call.

use cordon_smt::StrTest;
use cordon_smt::Term;
use cordon_syntax::ast::{Expr, ExprKind, Ident};
use cordon_syntax::{Builtin, Code, LabelFn, Span};

use crate::hints::RECURSION_HINT;
use crate::state::Typed;
use crate::state::{Checker, LABEL, LABELED, label_ty, plural};
use crate::ty::Ty;

/// The constructors of `Option` and `Result`, which name like builtins.
const CONSTRUCTORS: &[&str] = &["Some", "None", "Ok", "Err"];

/// Is `name` a builtin function (`cordon_syntax::builtins`) or a constructor?
pub fn is_builtin(name: &str) -> bool {
    cordon_syntax::builtins::is_builtin(name) || CONSTRUCTORS.contains(&name)
}

/// Every builtin name and constructor, for suggestions.
pub fn names() -> impl Iterator<Item = &'static str> {
    cordon_syntax::builtins::names().chain(CONSTRUCTORS.iter().copied())
}

/// The label function called `name`: callable only in a policy's `@label` values (`join` of two
/// labels is the builtin `join`).
pub fn label_fn(name: &str) -> Option<LabelFn> {
    LabelFn::from_name(name)
}

/// The builtin a plan may call by `name`.
pub fn plan_builtin(name: &str) -> Option<Builtin> {
    Builtin::from_name(name).filter(|b| !matches!(b, Builtin::Label(_)))
}

/// Checks a call of the label function `l` (inside an `@label` value).
pub fn label_call(c: &mut Checker<'_>, l: LabelFn, args: &[&Expr], span: Span) -> Typed {
    let (params, ret) = match l {
        LabelFn::Secret | LabelFn::Endorsed => (vec![Ty::Str], label_ty()),
        LabelFn::Readers => (vec![Ty::list(Ty::Str)], label_ty()),
        LabelFn::Group => (vec![Ty::Str, Ty::list(Ty::Str)], label_ty()),
        LabelFn::User => (vec![], Ty::Str),
        LabelFn::Public | LabelFn::Untrusted => (vec![], label_ty()),
    };
    if params.len() != args.len() {
        let n = params.len();
        c.error(
            Code::WrongArgCount,
            span,
            format!("`{}` takes {n} argument{}, found {}", l.name(), plural(n), args.len()),
        );
        c.infer_after_error(args.iter().copied());
        return Typed::error();
    }
    for (a, p) in args.iter().zip(&params) {
        c.check(a, p);
    }
    c.fresh_typed(ret, "_label")
}

/// Reports a label function called outside an `@label` value.
pub fn label_outside_annotation(c: &mut Checker<'_>, id: &Ident) {
    c.error(
        Code::UndefinedName,
        id.span,
        format!("`{}` is a label function: it exists only in `@label` annotations", id.name),
    )
    .help = Some("labels are declared by the policy; a program cannot make or inspect one".into());
}

/// Parameters after the first, and the result.
struct Shape {
    rest: Vec<Ty>,
    ret: Ty,
}

/// What a builtin needs its first argument to be, in words, when it is not.
type Wanted = &'static str;

/// What a family's function answers for a builtin of another family, which [`shape`] never
/// hands it.
const OTHER_FAMILY: Wanted = "a different value";

/// The signature of the builtin `b` whose first argument has the type `first`: the parameters
/// after the first and the result, or what the first argument should have been.
///
/// `first` is the first argument's type without refinements; `kept` the same type with the
/// refinements of its elements kept (`List[{v: Int | v != 0}]`): what `map`, `filter`, `fold`,
/// `any`, `all`, `reverse`, `get`, `first` and `last` hand on, so a closure or a pattern over
/// the elements knows what the list's type says of them. Functions that take new elements
/// (`push`, `concat`, `contains`) use `first`: their result says nothing of the elements.
///
/// Each builtin's signature is in the function of its family, the group the reference lists it
/// in first (`Builtin::listed`); one that takes several kinds of first argument (`len` of a
/// list, a string or a map) is there with all of them.
fn shape(c: &mut Checker<'_>, b: Builtin, first: &Ty, kept: &Ty, span: Span) -> Result<Shape, Wanted> {
    use Builtin::*;
    match b {
        Len | IsEmpty | Get | Push | Concat | Contains | Map | Filter | Fold | Any | All | Sum | Reverse | First
        | Last | Sort | SortBy | MinBy | MaxBy | Unique | GroupBy | CountBy | Enumerate | Zip | Take | Skip => {
            lists(c, b, first, kept, span)
        }
        StartsWith | EndsWith | ToUpper | ToLower | Trim | Split | Join | ToString | ParseInt | ParseDecimal | Find
        | Replace | Slice | Lines | Words | Repeat | PadLeft | PadRight | Matches | FindAll | Captures => {
            strings(b, first, kept)
        }
        MapFrom | Insert | Remove | ContainsKey | Keys | Values | Entries => maps(c, b, first),
        UnwrapOr | AndThen | MapErr | OkOr | IsSome | IsNone | IsOk | IsErr => {
            options_and_results(c, b, first, kept, span)
        }
        Abs | Min | Max | Round | DivRound => numbers(b, first),
        ParseDate | ParseDateTime | Seconds | Minutes | Hours | Days | AddDays | DaysBetween => times(b, first),
        Unlabel => labeled_values(first),
        // Checked before they get here: `range` takes two `Int`s, checked as such in `call`;
        // the label functions only in `@label` values (`label_call`).
        Range | Label(_) => Err(OTHER_FAMILY),
    }
}

/// The shape with parameters `rest` after the first, and result `ret`.
fn takes(rest: Vec<Ty>, ret: Ty) -> Result<Shape, Wanted> {
    Ok(Shape { rest, ret })
}

/// The element type `t` of a list, with its refinements where `kept` is the same list.
fn kept_elem(kept: &Ty, t: &Ty) -> Ty {
    match kept {
        Ty::List(k) => (**k).clone(),
        _ => t.clone(),
    }
}

/// The payload `t` (`i` 0: of `Some` or `Ok`, 1: of `Err`), with its refinements where `kept`
/// is the same option or result.
fn kept_payload(kept: &Ty, t: &Ty, i: usize) -> Ty {
    match (kept, i) {
        (Ty::Option(k) | Ty::Result(k, _), 0) | (Ty::Result(_, k), 1) => (**k).clone(),
        _ => t.clone(),
    }
}

/// The lists' builtins; `len` and `is_empty` also of strings and maps, `get` also of maps,
/// `concat` and `contains` also of strings, `map` also of options and results.
fn lists(c: &mut Checker<'_>, b: Builtin, first: &Ty, kept: &Ty, span: Span) -> Result<Shape, Wanted> {
    use Builtin::*;
    let elem = |t: &Ty| kept_elem(kept, t);
    match (b, first) {
        (Len, Ty::List(_) | Ty::Str | Ty::Map(..)) => takes(vec![], Ty::Int),
        (Len, _) => Err("a `String`, a `List` or a `Map`"),
        (IsEmpty, Ty::List(_) | Ty::Str | Ty::Map(..)) => takes(vec![], Ty::Bool),
        (IsEmpty, _) => Err("a `String`, a `List` or a `Map`"),
        (Get, Ty::Map(k, v)) => takes(vec![(**k).clone()], Ty::option((**v).clone())),
        (Get, Ty::List(t)) => takes(vec![Ty::Int], Ty::option(elem(t))),
        (Push, Ty::List(t)) => takes(vec![(**t).clone()], first.clone()),
        (Concat, Ty::List(_)) => takes(vec![first.clone()], first.clone()),
        (Concat, Ty::Str) => takes(vec![Ty::Str], Ty::Str),
        (Contains, Ty::List(t)) => takes(vec![(**t).clone()], Ty::Bool),
        (Contains, Ty::Str) => takes(vec![Ty::Str], Ty::Bool),
        (Concat | Contains, _) => Err("a `List` or a `String`"),
        (Map, Ty::List(t)) => {
            let u = c.new_var(span);
            takes(vec![Ty::local_func(vec![elem(t)], u.clone())], Ty::list(u))
        }
        // What the type says of the payload (`Option[{v: Int | v > 0}]`) holds in the function.
        (Map, Ty::Option(t)) => {
            let u = c.new_var(span);
            takes(vec![Ty::local_func(vec![kept_payload(kept, t, 0)], u.clone())], Ty::option(u))
        }
        (Map, Ty::Result(t, e)) => {
            let u = c.new_var(span);
            takes(vec![Ty::local_func(vec![kept_payload(kept, t, 0)], u.clone())], Ty::Result(Box::new(u), e.clone()))
        }
        (Map, _) => Err("a `List`, an `Option` or a `Result`"),
        (Filter, Ty::List(t)) => takes(vec![Ty::local_func(vec![elem(t)], Ty::Bool)], Ty::list(elem(t))),
        (Any | All, Ty::List(t)) => takes(vec![Ty::local_func(vec![elem(t)], Ty::Bool)], Ty::Bool),
        (Fold, Ty::List(t)) => {
            let u = c.new_var(span);
            takes(vec![u.clone(), Ty::local_func(vec![u.clone(), elem(t)], u.clone())], u)
        }
        (Sum, Ty::List(t)) if matches!(**t, Ty::Int) => takes(vec![], Ty::Int),
        // The runtime does not know an empty list's element type, so it could not tell `0`
        // from `0d`: a fold names the zero.
        (Sum, Ty::List(t)) if matches!(**t, Ty::Decimal) => {
            Err("a `List[Int]` (add decimals with `xs.fold(0d, |t, x| t + x)`)")
        }
        (Sum, _) => Err("a `List[Int]`"),
        (Reverse, Ty::List(t)) => takes(vec![], Ty::list(elem(t))),
        (First | Last, Ty::List(t)) => takes(vec![], Ty::option(elem(t))),
        (Sort | Unique, Ty::List(t)) if orderable(c, t) => takes(vec![], Ty::list(elem(t))),
        (Sort | Unique, _) => Err("a `List` of `Int`, `Float`, `String` or `Bool` values (or tuples of them)"),
        (SortBy, Ty::List(t)) => {
            let k = c.new_var(span);
            takes(vec![Ty::local_func(vec![elem(t)], k)], Ty::list(elem(t)))
        }
        (MinBy | MaxBy, Ty::List(t)) => {
            let k = c.new_var(span);
            takes(vec![Ty::local_func(vec![elem(t)], k)], Ty::option(elem(t)))
        }
        (GroupBy, Ty::List(t)) => {
            let k = c.new_var(span);
            let f = Ty::local_func(vec![elem(t)], k.clone());
            takes(vec![f], Ty::list(Ty::Tuple(vec![k, Ty::list(elem(t))])))
        }
        (CountBy, Ty::List(t)) => {
            let k = c.new_var(span);
            takes(vec![Ty::local_func(vec![elem(t)], k.clone())], Ty::list(Ty::Tuple(vec![k, Ty::Int])))
        }
        (Enumerate, Ty::List(t)) => takes(vec![], Ty::list(Ty::Tuple(vec![Ty::Int, elem(t)]))),
        (Zip, Ty::List(t)) => {
            let u = c.new_var(span);
            takes(vec![Ty::list(u.clone())], Ty::list(Ty::Tuple(vec![elem(t), u])))
        }
        (Take | Skip, Ty::List(t)) => takes(vec![Ty::Int], Ty::list(elem(t))),
        (
            Get | Push | Filter | Fold | Any | All | Reverse | First | Last | SortBy | MinBy | MaxBy | GroupBy
            | CountBy | Enumerate | Zip | Take | Skip,
            _,
        ) => Err("a `List`"),
        _ => Err(OTHER_FAMILY),
    }
}

/// The strings' builtins; `join` also of labels, `to_string` of every plain value, `slice` also
/// of lists.
fn strings(b: Builtin, first: &Ty, kept: &Ty) -> Result<Shape, Wanted> {
    use Builtin::*;
    match (b, first) {
        (StartsWith | EndsWith, Ty::Str) => takes(vec![Ty::Str], Ty::Bool),
        (Join, Ty::List(t)) if matches!(**t, Ty::Str) => takes(vec![Ty::Str], Ty::Str),
        (Join, Ty::Opaque(n, _)) if &**n == LABEL => takes(vec![label_ty()], label_ty()),
        (Join, _) => Err("a `List[String]`"),
        (ToUpper | ToLower | Trim, Ty::Str) => takes(vec![], Ty::Str),
        (Split, Ty::Str) => takes(vec![Ty::Str], Ty::list(Ty::Str)),
        (ParseInt, Ty::Str) => takes(vec![], Ty::option(Ty::Int)),
        (ParseDecimal, Ty::Str) => takes(vec![], Ty::option(Ty::Decimal)),
        (Find, Ty::Str) => takes(vec![Ty::Str], Ty::option(Ty::Int)),
        (Replace, Ty::Str) => takes(vec![Ty::Str, Ty::Str], Ty::Str),
        (Slice, Ty::Str) => takes(vec![Ty::Int, Ty::Int], Ty::Str),
        (Slice, Ty::List(t)) => takes(vec![Ty::Int, Ty::Int], Ty::list(kept_elem(kept, t))),
        (Slice, _) => Err("a `String` or a `List`"),
        (Lines | Words, Ty::Str) => takes(vec![], Ty::list(Ty::Str)),
        (Repeat, Ty::Str) => takes(vec![Ty::Int], Ty::Str),
        (PadLeft | PadRight, Ty::Str) => takes(vec![Ty::Int, Ty::Str], Ty::Str),
        (Matches, Ty::Str) => takes(vec![Ty::Str], Ty::Bool),
        (FindAll, Ty::Str) => takes(vec![Ty::Str], Ty::list(Ty::Str)),
        (Captures, Ty::Str) => takes(vec![Ty::Str], Ty::option(Ty::list(Ty::Str))),
        (ToString, Ty::Int | Ty::Float | Ty::Decimal | Ty::Bool | Ty::Str) => takes(vec![], Ty::Str),
        (ToString, Ty::Date | Ty::DateTime | Ty::Duration) => takes(vec![], Ty::Str),
        (ToString, _) => Err("an `Int`, `Float`, `Decimal`, `Bool`, `String`, `Date`, `DateTime` or `Duration`"),
        (
            StartsWith | EndsWith | ToUpper | ToLower | Trim | Split | ParseInt | ParseDecimal | Find | Replace | Lines
            | Words | Repeat | PadLeft | PadRight | Matches | FindAll | Captures,
            _,
        ) => Err("a `String`"),
        _ => Err(OTHER_FAMILY),
    }
}

/// The maps' builtins (`get`, `len` and `is_empty` of a map are with the lists').
fn maps(c: &mut Checker<'_>, b: Builtin, first: &Ty) -> Result<Shape, Wanted> {
    use Builtin::*;
    match (b, first) {
        (MapFrom, Ty::List(t)) => match &**t {
            Ty::Tuple(kv) if kv.len() == 2 && kv.first().is_some_and(|k| orderable(c, k)) => {
                let (k, v) = (kv[0].clone(), kv[1].clone());
                takes(vec![], Ty::Map(Box::new(k), Box::new(v)))
            }
            _ => Err("a `List` of `(key, value)` pairs whose keys can be ordered"),
        },
        (MapFrom, _) => Err("a `List` of `(key, value)` pairs"),
        (ContainsKey, Ty::Map(k, _)) => takes(vec![(**k).clone()], Ty::Bool),
        (Insert, Ty::Map(k, v)) => takes(vec![(**k).clone(), (**v).clone()], first.clone()),
        (Remove, Ty::Map(k, _)) => takes(vec![(**k).clone()], first.clone()),
        (Keys, Ty::Map(k, _)) => takes(vec![], Ty::list((**k).clone())),
        (Values, Ty::Map(_, v)) => takes(vec![], Ty::list((**v).clone())),
        (Entries, Ty::Map(k, v)) => takes(vec![], Ty::list(Ty::Tuple(vec![(**k).clone(), (**v).clone()]))),
        (ContainsKey | Insert | Remove | Keys | Values | Entries, _) => Err("a `Map`"),
        _ => Err(OTHER_FAMILY),
    }
}

/// The builtins of options and results (`map` of one is with the lists'). What the type says of
/// the payload (`Option[{v: Int | v > 0}]`) holds in the function they call.
fn options_and_results(c: &mut Checker<'_>, b: Builtin, first: &Ty, kept: &Ty, span: Span) -> Result<Shape, Wanted> {
    use Builtin::*;
    let payload = |t: &Ty, i: usize| kept_payload(kept, t, i);
    match (b, first) {
        (UnwrapOr, Ty::Option(t) | Ty::Result(t, _)) => takes(vec![(**t).clone()], (**t).clone()),
        (UnwrapOr, _) => Err("an `Option` or a `Result`"),
        (AndThen, Ty::Option(t)) => {
            let u = Ty::option(c.new_var(span));
            takes(vec![Ty::local_func(vec![payload(t, 0)], u.clone())], u)
        }
        (AndThen, Ty::Result(t, e)) => {
            let u = Ty::Result(Box::new(c.new_var(span)), e.clone());
            takes(vec![Ty::local_func(vec![payload(t, 0)], u.clone())], u)
        }
        (AndThen, _) => Err("an `Option` or a `Result`"),
        (MapErr, Ty::Result(t, e)) => {
            let u = c.new_var(span);
            takes(vec![Ty::local_func(vec![payload(e, 1)], u.clone())], Ty::Result(t.clone(), Box::new(u)))
        }
        (MapErr, _) => Err("a `Result`"),
        (OkOr, Ty::Option(t)) => {
            let u = c.new_var(span);
            takes(vec![u.clone()], Ty::Result(t.clone(), Box::new(u)))
        }
        (OkOr, _) => Err("an `Option`"),
        (IsSome | IsNone, Ty::Option(_)) => takes(vec![], Ty::Bool),
        (IsSome | IsNone, _) => Err("an `Option`"),
        (IsOk | IsErr, Ty::Result(..)) => takes(vec![], Ty::Bool),
        (IsOk | IsErr, _) => Err("a `Result`"),
        _ => Err(OTHER_FAMILY),
    }
}

/// The numbers' builtins.
fn numbers(b: Builtin, first: &Ty) -> Result<Shape, Wanted> {
    use Builtin::*;
    let num = matches!(first, Ty::Int | Ty::Float | Ty::Decimal);
    match (b, first) {
        (Abs, _) if num => takes(vec![], first.clone()),
        (Min | Max, _) if num => takes(vec![first.clone()], first.clone()),
        (Abs | Min | Max, _) => Err("an `Int`, a `Float` or a `Decimal`"),
        (Round, Ty::Decimal) => takes(vec![Ty::Int], Ty::Decimal),
        (Round, _) => Err("a `Decimal`"),
        (DivRound, Ty::Decimal) => takes(vec![Ty::Decimal, Ty::Int], Ty::Decimal),
        (DivRound, _) => Err("a `Decimal`"),
        _ => Err(OTHER_FAMILY),
    }
}

/// The builtins of dates, times and durations.
fn times(b: Builtin, first: &Ty) -> Result<Shape, Wanted> {
    use Builtin::*;
    match (b, first) {
        (ParseDate, Ty::Str) => takes(vec![], Ty::option(Ty::Date)),
        (ParseDateTime, Ty::Str) => takes(vec![], Ty::option(Ty::DateTime)),
        (ParseDate | ParseDateTime, _) => Err("a `String`"),
        (Seconds | Minutes | Hours | Days, Ty::Int) => takes(vec![], Ty::Duration),
        (Seconds | Minutes | Hours | Days, _) => Err("an `Int`"),
        (AddDays, Ty::Date) => takes(vec![Ty::Int], Ty::Date),
        (DaysBetween, Ty::Date) => takes(vec![Ty::Date], Ty::Int),
        (AddDays | DaysBetween, _) => Err("a `Date`"),
        _ => Err(OTHER_FAMILY),
    }
}

/// `unlabel`, of a `Labeled` value (`join` of labels is with the strings').
fn labeled_values(first: &Ty) -> Result<Shape, Wanted> {
    match first {
        Ty::Opaque(n, args) if &**n == LABELED && args.len() == 1 => takes(vec![], args[0].clone()),
        _ => Err("a `Labeled` value"),
    }
}

/// Checks a call of the builtin `b` on `args` (a method call's receiver first).
pub fn call(c: &mut Checker<'_>, b: Builtin, args: &[&Expr], span: Span) -> Typed {
    let name = b.name();
    if b == Builtin::Range {
        if args.len() != 2 {
            c.error(Code::WrongArgCount, span, format!("`range` takes 2 arguments, found {}", args.len()));
            return Typed::error();
        }
        for a in args {
            c.check(a, &Ty::Int);
        }
        let ty = Ty::list(Ty::Int);
        let term = c.fresh(&ty, "_range");
        return Typed { ty, term };
    }
    let Some((first_expr, rest)) = args.split_first() else {
        c.error(Code::WrongArgCount, span, format!("`{name}` needs an argument"));
        return Typed::error();
    };
    let first = c.infer(first_expr);
    let kept = c.resolve(&first.ty).base().clone();
    let ft = kept.strip();
    if ft.is_error() {
        c.infer_after_error(rest.iter().copied());
        return Typed::error();
    }
    if let Ty::Var(_) = ft {
        c.error(Code::CannotInfer, first_expr.span, "the type of this value must be known here").help =
            Some("add a type annotation".into());
        return Typed::error();
    }
    if c.is_linear(&ft) || c.is_second_class(&ft) {
        let help = match (b, &ft) {
            (Builtin::UnwrapOr | Builtin::IsSome | Builtin::IsNone, Ty::Option(_)) => {
                "builtins work on plain data, not linear values; take it apart with `match o { Some(x) => .., None => .. }`"
            }
            (Builtin::UnwrapOr | Builtin::IsOk | Builtin::IsErr, Ty::Result(..)) => {
                "builtins work on plain data, not linear values; take it apart with `match r { Ok(x) => .., Err(e) => .. }`"
            }
            _ => "builtins work on plain data, not linear values or capabilities",
        };
        c.error(Code::TypeMismatch, first_expr.span, format!("`{name}` cannot take a value of type `{ft}`")).help =
            Some(help.into());
        // The other arguments are used all the same, so a linear one is not also reported unused.
        c.infer_after_error(rest.iter().copied());
        return Typed::error();
    }
    let mut sh = match shape(c, b, &ft, &kept, span) {
        Ok(sh) => sh,
        Err(wanted) => {
            c.error(Code::TypeMismatch, first_expr.span, format!("`{name}` needs {wanted}, found `{ft}`"));
            c.infer_after_error(rest.iter().copied());
            return Typed::error();
        }
    };
    if b == Builtin::Fold
        && let Some(acc) = declared_accumulator(c, rest)
        && let Some(Ty::Fn(f)) = sh.rest.get(1).map(|t| c.resolve(t))
        && let Some(elem) = f.params.get(1)
    {
        // The variable `shape` made for the accumulator is the declared type.
        if let Some(u) = sh.rest.first() {
            let u = u.clone();
            c.unify(&u, &acc);
        }
        sh = Shape { rest: vec![acc.clone(), Ty::local_func(vec![acc.clone(), elem.clone()], acc.clone())], ret: acc };
    }
    if sh.rest.len() != rest.len() {
        let n = sh.rest.len() + 1;
        c.error(Code::WrongArgCount, span, format!("`{name}` takes {n} argument{}, found {}", plural(n), args.len()));
        c.infer_after_error(rest.iter().copied());
        return {
            let r = c.resolve(&sh.ret);
            c.fresh_typed(r, "_builtin")
        };
    }
    let mut terms = vec![first.term.clone()];
    let mut returns_capability = false;
    for (i, (a, p)) in rest.iter().zip(&sh.rest).enumerate() {
        let t = c.check(a, p);
        // `fold`'s accumulator may be linear: the function consumes each one and gives the next
        // back (checked like any function with a linear parameter), and `fold` gives the last.
        let threaded = b == Builtin::Fold && i == 0;
        if c.is_linear(&t.ty) && !threaded {
            c.error(Code::TypeMismatch, a.span, format!("`{name}` cannot take a linear value")).help =
                Some(format!("to use it once per element, thread it through the loop: {}", RECURSION_HINT));
        }
        // Only the functions `map`, `filter`, ... call are passed down; `unwrap_or` gives its
        // default back; every other argument becomes part of data.
        if c.is_second_class(&t.ty) && !c.is_second_class(p) {
            if b == Builtin::UnwrapOr {
                returns_capability = true;
            } else {
                c.store(&t, a.span);
            }
        }
        terms.push(t.term);
    }
    let logic = logic(b);
    preconditions(c, b, logic.needs, &ft, &terms, args);
    if matches!(b, Builtin::SortBy | Builtin::MinBy | Builtin::MaxBy | Builtin::GroupBy | Builtin::CountBy)
        && let (Some(key), Some(f)) = (rest.first(), sh.rest.first())
        && let Ty::Fn(f) = c.resolve(f).base()
    {
        let k = c.resolve(&f.ret).base().strip();
        if !k.is_error() && !orderable(c, &k) {
            c.error(Code::TypeMismatch, key.span, format!("`{name}` needs a key that can be ordered, found `{k}`"))
                .help = Some(
                "a key is an `Int`, `Float`, `String` or `Bool`, or a tuple of them: `|x| (x.priority, x.name)`".into(),
            );
        }
    }
    let ret = c.resolve(&sh.ret);
    let ret = if returns_capability { c.second_class(&ret) } else { ret };
    if let Ty::List(elem) = &ret
        && c.is_linear(elem)
    {
        c.error(Code::LinearInCollection, span, format!("`{name}` would build a list of linear values")).help =
            Some("a list could copy or drop its elements; handle linear values one by one".into());
        return Typed::error();
    }
    let term = match result_term(c, logic.gives, &ft, &terms) {
        // Terms that mention an argument more than once (`abs`, `min`, `max`) are named, so
        // nesting them grows the query linearly, not exponentially.
        Some(t @ Term::Ite(..)) => {
            let fresh = c.fresh(&ret, "_builtin");
            if let Some(r) = &fresh {
                c.add_fact(Term::Eq(Box::new(r.clone()), Box::new(t)), format!("the definition of `{name}`"));
            }
            fresh
        }
        Some(t) => Some(t),
        None => {
            let fresh = c.fresh(&ret, "_builtin");
            if let Some(r) = &fresh {
                result_facts(c, b, logic.gives, &ft, &terms, r, &ret);
                if logic.gives == Gives::ZipLength
                    && let (Some(Some(b)), Some(bt)) = (terms.get(1), sh.rest.first())
                {
                    zip_length(c, &ft, &terms, b, bt, r, &ret);
                }
            }
            fresh
        }
    };
    Typed { ty: ret, term }
}

/// The accumulator type a `fold`'s function declares for its first parameter, refinements
/// included (`for x in xs with s: {s: Session | !tainted(s)} { .. }` is such a fold): the
/// initial value must satisfy it, each call may assume it and must give it back (the function
/// is checked against `fn(T, elem) -> T`), and the result has it. Without a declaration the
/// accumulator's type is inferred, and says nothing.
fn declared_accumulator(c: &mut Checker<'_>, rest: &[&Expr]) -> Option<Ty> {
    let Some(Expr { kind: ExprKind::Closure { params, .. }, .. }) = rest.get(1) else { return None };
    let te = params.first()?.ty.as_ref()?;
    // Resolved here only to be known; the closure's own check reports what is wrong with it.
    let before = c.diags.len();
    let ty = c.resolve_type(te, &[]);
    let clean = c.diags.len() == before;
    c.diags.truncate(before);
    (clean && !ty.is_error()).then_some(ty)
}

/// Can values of `t` be ordered (`<`, `sort`)? Numbers, strings and Booleans, and tuples of them.
pub fn orderable(c: &Checker<'_>, t: &Ty) -> bool {
    match c.resolve(t).base() {
        Ty::Int | Ty::Float | Ty::Decimal | Ty::Str | Ty::Bool | Ty::Error => true,
        Ty::Date | Ty::DateTime | Ty::Duration => true,
        Ty::Tuple(ts) => ts.iter().all(|t| orderable(c, t)),
        _ => false,
    }
}

/// What the logic knows of a builtin: what a call needs of its arguments (proved at the call
/// like a refined parameter) and what it knows of the result.
#[derive(Clone, Copy)]
struct Logic {
    needs: Needs,
    gives: Gives,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Needs {
    Nothing,
    /// `slice(x, a, b)`: `0 <= a <= b <= len(x)`.
    SliceBounds,
    /// `repeat(s, n)`: `n >= 0`.
    NonNegativeCount,
    /// `pad_left`/`pad_right`: the fill is one character.
    OneCharFill,
    /// `matches`, `find_all`, `captures`: a literal pattern compiles.
    Pattern,
}

/// What the logic knows of a result: its exact term, or facts about a fresh one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gives {
    Nothing,
    /// The length of a string, list or map.
    Length,
    /// Whether the length is 0.
    IsEmpty,
    /// Two strings joined; a list's length, the sum of both.
    Concat,
    /// A test in the solver's theory of strings, on strings.
    StrTest(StrTest),
    /// A date is its day number: days are added and counted exactly (the runtime stops outside
    /// the years -9999 to 9999).
    AddDays,
    DaysBetween,
    /// A duration is its nanoseconds, exactly (the runtime stops where they overflow): this
    /// many per unit.
    Duration(i64),
    Abs,
    Min,
    Max,
    /// A list or map result's length, against the first argument's.
    LengthIs(Relation),
    /// `len(slice(x, a, b)) == b - a`.
    SliceLength,
    /// `len(zip(xs, ys)) == min(len(xs), len(ys))`.
    ZipLength,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Relation {
    OneMore,
    Same,
    AtMost,
}

const SECOND: i64 = 1_000_000_000;

fn logic(b: Builtin) -> Logic {
    use Builtin::*;
    let gives = |gives| Logic { needs: Needs::Nothing, gives };
    match b {
        Len => gives(Gives::Length),
        IsEmpty => gives(Gives::IsEmpty),
        Concat => gives(Gives::Concat),
        StartsWith => gives(Gives::StrTest(StrTest::StartsWith)),
        EndsWith => gives(Gives::StrTest(StrTest::EndsWith)),
        Contains => gives(Gives::StrTest(StrTest::Contains)),
        AddDays => gives(Gives::AddDays),
        DaysBetween => gives(Gives::DaysBetween),
        Seconds => gives(Gives::Duration(SECOND)),
        Minutes => gives(Gives::Duration(60 * SECOND)),
        Hours => gives(Gives::Duration(3_600 * SECOND)),
        // A day is 24 hours.
        Days => gives(Gives::Duration(86_400 * SECOND)),
        Abs => gives(Gives::Abs),
        Min => gives(Gives::Min),
        Max => gives(Gives::Max),
        Push => gives(Gives::LengthIs(Relation::OneMore)),
        Map | Reverse | Sort | SortBy | Enumerate | Keys | Values | Entries => gives(Gives::LengthIs(Relation::Same)),
        Remove | MapFrom | Filter | Unique | Take | Skip | GroupBy | CountBy => {
            gives(Gives::LengthIs(Relation::AtMost))
        }
        Slice => Logic { needs: Needs::SliceBounds, gives: Gives::SliceLength },
        Zip => gives(Gives::ZipLength),
        Repeat => Logic { needs: Needs::NonNegativeCount, gives: Gives::Nothing },
        PadLeft | PadRight => Logic { needs: Needs::OneCharFill, gives: Gives::Nothing },
        Matches | FindAll | Captures => Logic { needs: Needs::Pattern, gives: Gives::Nothing },
        UnwrapOr | Get | Fold | Any | All | Sum | Range | First | Last | MinBy | MaxBy | ToUpper | ToLower | Trim
        | Split | Join | ToString | ParseInt | ParseDecimal | Find | Replace | Lines | Words | Insert | ContainsKey
        | AndThen | MapErr | OkOr | IsSome | IsNone | IsOk | IsErr | Round | DivRound | ParseDate | ParseDateTime
        | Unlabel | Label(_) => gives(Gives::Nothing),
    }
}

/// Whether a refinement may call `b`: the logic knows its result exactly and it needs nothing.
pub fn in_refinements(b: Builtin) -> bool {
    matches!(logic(b), Logic { needs: Needs::Nothing, gives: Gives::Length | Gives::Duration(_) })
}

/// What `b` needs of its arguments (`needs`), proved at the call like a refined parameter.
fn preconditions(c: &mut Checker<'_>, b: Builtin, needs: Needs, first: &Ty, terms: &[Option<Term>], args: &[&Expr]) {
    let at = |i: usize| args.get(i).map_or(Span::default(), |a| a.span);
    let text = |c: &Checker<'_>, i: usize| c.text(at(i)).to_string();
    let term = |i: usize| terms.get(i).cloned().flatten();
    let le = |a: Term, b: Term| Term::Le(Box::new(a), Box::new(b));
    match needs {
        Needs::SliceBounds => {
            let (x, a, b) = (text(c, 0), text(c, 1), text(c, 2));
            let goal = match (term(0), term(1), term(2)) {
                (Some(xs), Some(from), Some(to)) => c
                    .length(&xs, first)
                    .map(|len| Term::And(vec![le(Term::Int(0), from.clone()), le(from, to.clone()), le(to, len)])),
                _ => None,
            };
            let texts = vec![format!("0 <= {a}"), format!("{a} <= {b}"), format!("{b} <= len({x})")];
            prove(c, goal, texts, at(1), "`slice(x, a, b)` needs `0 <= a && a <= b && b <= len(x)`");
        }
        Needs::NonNegativeCount => {
            let goal = term(1).map(|n| le(Term::Int(0), n));
            let texts = vec![format!("{} >= 0", text(c, 1))];
            prove(c, goal, texts, at(1), &format!("`{}` needs a count of 0 or more", b.name()));
        }
        // A literal pattern is compiled here, so a mistake in it is found before the run.
        Needs::Pattern => {
            if let Some(ExprKind::Str(p)) = args.get(1).map(|a| &a.kind)
                && let Err(why) = cordon_syntax::pattern::compile(p)
            {
                c.error(Code::InvalidPattern, at(1), format!("invalid pattern: {why}")).help = Some(
                    "patterns use the `regex` crate's syntax (no backreferences or look-around); write `\\\\` for a \
                     backslash in a string"
                        .into(),
                );
            }
        }
        Needs::OneCharFill => {
            let goal = term(2).map(|f| Term::Eq(Box::new(Term::StrLen(Box::new(f))), Box::new(Term::Int(1))));
            let texts = vec![format!("len({}) == 1", text(c, 2))];
            prove(c, goal, texts, at(2), "the fill must be one character");
        }
        Needs::Nothing => {}
    }
}

fn prove(c: &mut Checker<'_>, goal: Option<Term>, texts: Vec<String>, span: Span, why: &str) {
    match goal {
        Some(goal) => c.prove_goal(goal, texts, span, why),
        None => {
            c.error(Code::RefinementUnproven, span, format!("cannot prove {}", texts.join(" and ")));
        }
    }
}

/// The exact term of a result where logic can say it.
fn result_term(c: &mut Checker<'_>, gives: Gives, first: &Ty, terms: &[Option<Term>]) -> Option<Term> {
    let a = terms.first()?.clone()?;
    let b = || terms.get(1).cloned().flatten();
    let zero = || if matches!(first, Ty::Float | Ty::Decimal) { Term::real(0, 1) } else { Term::Int(0) };
    match gives {
        Gives::Length => c.length(&a, first),
        Gives::IsEmpty => {
            let len = c.length(&a, first)?;
            Some(Term::Eq(Box::new(len), Box::new(Term::Int(0))))
        }
        Gives::Concat if matches!(first, Ty::Str) => Some(Term::StrConcat(vec![a, b()?])),
        Gives::StrTest(test) if matches!(first, Ty::Str) => Some(Term::StrTest(test, Box::new(a), Box::new(b()?))),
        Gives::AddDays => Some(Term::Add(vec![a, b()?])),
        Gives::DaysBetween => Some(Term::Sub(Box::new(b()?), Box::new(a))),
        Gives::Duration(unit) => Some(Term::Mul(Box::new(Term::Int(unit)), Box::new(a))),
        Gives::Abs => Some(Term::Ite(
            Box::new(Term::Le(Box::new(zero()), Box::new(a.clone()))),
            Box::new(a.clone()),
            Box::new(Term::Neg(Box::new(a))),
        )),
        Gives::Min | Gives::Max => {
            let b = b()?;
            let le = Box::new(Term::Le(Box::new(a.clone()), Box::new(b.clone())));
            Some(if gives == Gives::Min {
                Term::Ite(le, Box::new(a), Box::new(b))
            } else {
                Term::Ite(le, Box::new(b), Box::new(a))
            })
        }
        Gives::Concat
        | Gives::StrTest(_)
        | Gives::Nothing
        | Gives::LengthIs(_)
        | Gives::SliceLength
        | Gives::ZipLength => None,
    }
}

/// `len(zip(xs, ys)) == min(len(xs), len(ys))`.
fn zip_length(c: &mut Checker<'_>, first: &Ty, terms: &[Option<Term>], ys: &Term, ys_ty: &Ty, result: &Term, ret: &Ty) {
    let Some(Some(xs)) = terms.first() else { return };
    let (Some(a), Some(b), Some(r)) = (c.length(xs, first), c.length(ys, ys_ty), c.length(result, ret)) else {
        return;
    };
    let min = Term::Ite(Box::new(Term::Le(Box::new(a.clone()), Box::new(b.clone()))), Box::new(a), Box::new(b));
    c.add_fact(Term::Eq(Box::new(r), Box::new(min)), "the length of `zip`'s result".to_string());
}

/// Facts about a fresh result of `b`: list lengths.
fn result_facts(
    c: &mut Checker<'_>,
    b: Builtin,
    gives: Gives,
    first: &Ty,
    terms: &[Option<Term>],
    result: &Term,
    ret: &Ty,
) {
    let Some(Some(a)) = terms.first() else { return };
    if gives == Gives::SliceLength {
        let (Some(Some(from)), Some(Some(to)), Some(len_r)) = (terms.get(1), terms.get(2), c.length(result, ret))
        else {
            return;
        };
        let fact = Term::Eq(Box::new(len_r), Box::new(Term::Sub(Box::new(to.clone()), Box::new(from.clone()))));
        c.add_fact(fact, "the length of `slice`'s result".to_string());
        return;
    }
    if !matches!(first, Ty::List(_) | Ty::Map(..)) {
        return;
    }
    let (Some(len_a), Some(len_r)) = (c.length(a, first), c.length(result, ret)) else { return };
    let fact = match gives {
        Gives::LengthIs(Relation::OneMore) => Term::Eq(Box::new(len_r), Box::new(Term::Add(vec![len_a, Term::Int(1)]))),
        Gives::LengthIs(Relation::Same) => Term::Eq(Box::new(len_r), Box::new(len_a)),
        Gives::LengthIs(Relation::AtMost) => Term::Le(Box::new(len_r), Box::new(len_a)),
        Gives::Concat => {
            let Some(Some(b)) = terms.get(1) else { return };
            let Some(len_b) = c.length(b, first) else { return };
            Term::Eq(Box::new(len_r), Box::new(Term::Add(vec![len_a, len_b])))
        }
        _ => return,
    };
    c.add_fact(fact, format!("the length of `{}`'s result", b.name()));
}
