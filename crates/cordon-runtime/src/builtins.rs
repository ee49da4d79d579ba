//! The builtin functions at run time. Results carry the labels of what they depend on: `len`
//! of a list depends on the list (its spine label), `contains` and `sum` on every element.
//! Sizes are checked before anything is allocated.

use std::cmp::Ordering;
use std::sync::Arc;

use cordon_syntax::pattern;

use crate::error::{ErrorKind, RunError};
use crate::value::{Record, Val, Value, Variant};
use cordon_label::{DcLabel, Label};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Len,
    IsEmpty,
    Get,
    Push,
    Concat,
    Contains,
    Map,
    Filter,
    Fold,
    Any,
    All,
    Sum,
    Reverse,
    Range,
    First,
    Last,
    Join,
    StartsWith,
    EndsWith,
    ToUpper,
    ToLower,
    Trim,
    Split,
    ToString,
    ParseInt,
    ParseDecimal,
    Round,
    DivRound,
    ParseDate,
    ParseDateTime,
    Seconds,
    Minutes,
    Hours,
    Days,
    AddDays,
    DaysBetween,
    Find,
    Replace,
    Slice,
    Lines,
    Words,
    Repeat,
    PadLeft,
    PadRight,
    Sort,
    SortBy,
    MinBy,
    MaxBy,
    Enumerate,
    Zip,
    Take,
    Skip,
    Unique,
    GroupBy,
    CountBy,
    MapFrom,
    Insert,
    Remove,
    Keys,
    Values,
    Entries,
    ContainsKey,
    Matches,
    FindAll,
    Captures,
    IsSome,
    IsNone,
    IsOk,
    IsErr,
    UnwrapOr,
    AndThen,
    MapErr,
    OkOr,
    Abs,
    Min,
    Max,
    Unlabel,
    Public,
    Untrusted,
    Secret,
    Endorsed,
    Readers,
    User,
}

impl Builtin {
    pub fn named(name: &str) -> Option<Builtin> {
        use Builtin::*;
        Some(match name {
            "len" => Len,
            "is_empty" => IsEmpty,
            "get" => Get,
            "push" => Push,
            "concat" => Concat,
            "contains" => Contains,
            "map" => Map,
            "filter" => Filter,
            "fold" => Fold,
            "any" => Any,
            "all" => All,
            "sum" => Sum,
            "reverse" => Reverse,
            "range" => Range,
            "first" => First,
            "last" => Last,
            "join" => Join,
            "starts_with" => StartsWith,
            "ends_with" => EndsWith,
            "to_upper" => ToUpper,
            "to_lower" => ToLower,
            "trim" => Trim,
            "split" => Split,
            "to_string" => ToString,
            "parse_int" => ParseInt,
            "parse_decimal" => ParseDecimal,
            "round" => Round,
            "div_round" => DivRound,
            "parse_date" => ParseDate,
            "parse_datetime" => ParseDateTime,
            "seconds" => Seconds,
            "minutes" => Minutes,
            "hours" => Hours,
            "days" => Days,
            "add_days" => AddDays,
            "days_between" => DaysBetween,
            "find" => Find,
            "replace" => Replace,
            "slice" => Slice,
            "lines" => Lines,
            "words" => Words,
            "repeat" => Repeat,
            "pad_left" => PadLeft,
            "pad_right" => PadRight,
            "sort" => Sort,
            "sort_by" => SortBy,
            "min_by" => MinBy,
            "max_by" => MaxBy,
            "enumerate" => Enumerate,
            "zip" => Zip,
            "take" => Take,
            "skip" => Skip,
            "unique" => Unique,
            "group_by" => GroupBy,
            "count_by" => CountBy,
            "map_from" => MapFrom,
            "insert" => Insert,
            "remove" => Remove,
            "keys" => Keys,
            "values" => Values,
            "entries" => Entries,
            "contains_key" => ContainsKey,
            "matches" => Matches,
            "find_all" => FindAll,
            "captures" => Captures,
            "is_some" => IsSome,
            "is_none" => IsNone,
            "is_ok" => IsOk,
            "is_err" => IsErr,
            "unwrap_or" => UnwrapOr,
            "and_then" => AndThen,
            "map_err" => MapErr,
            "ok_or" => OkOr,
            "abs" => Abs,
            "min" => Min,
            "max" => Max,
            "unlabel" => Unlabel,
            "public" => Public,
            "untrusted" => Untrusted,
            "secret" => Secret,
            "endorsed" => Endorsed,
            "readers" => Readers,
            "user" => User,
            _ => return None,
        })
    }

    /// Builtins that call a function argument: compiled to loops, so that a tool call inside
    /// the function suspends the run like any other.
    /// The label functions: callable only in a policy's `@label` values.
    pub fn is_label_fn(self) -> bool {
        matches!(
            self,
            Builtin::Public
                | Builtin::Untrusted
                | Builtin::Secret
                | Builtin::Endorsed
                | Builtin::Readers
                | Builtin::User
        )
    }

    pub fn is_higher_order(self) -> bool {
        matches!(
            self,
            Builtin::Map
                | Builtin::Filter
                | Builtin::Fold
                | Builtin::Any
                | Builtin::All
                | Builtin::AndThen
                | Builtin::MapErr
        ) || self.is_keyed()
    }

    /// Builtins that order a list by a key function (`sort_by(xs, key)`): compiled to a loop
    /// computing the keys, then applied to `[keys, xs]`, or to `[keys]` alone where the
    /// result holds no element (see [`Builtin::needs_elements`]).
    pub fn is_keyed(self) -> bool {
        matches!(self, Builtin::SortBy | Builtin::MinBy | Builtin::MaxBy | Builtin::GroupBy | Builtin::CountBy)
    }

    /// Does this keyed builtin need the list's elements, not only their keys? `count_by`
    /// returns keys and counts.
    pub fn needs_elements(self) -> bool {
        self.is_keyed() && self != Builtin::CountBy
    }
}

/// What builtins need from the run: size limits and memory accounting.
pub trait Budget {
    fn allocate(&mut self, bytes: u64) -> Result<(), RunError>;
    fn max_string_bytes(&self) -> usize;
    fn max_list_len(&self) -> usize;
}

/// The approximate size of one list element or field, for memory accounting. A fixed number,
/// not `size_of::<Val>()`: how much a program may allocate is part of its behaviour, and must
/// not change when the interpreter's representation of values does (a `Val` was 40 bytes when
/// the limits were set, and is 24 now).
pub const SLOT_BYTES: u64 = 40;

pub(crate) fn type_error(b: Builtin, args: &[Val]) -> RunError {
    let kinds: Vec<&str> = args.iter().map(|a| a.value.kind()).collect();
    RunError::new(
        ErrorKind::Type,
        Default::default(),
        format!("`{b:?}` cannot take {}", kinds.join(", ")).to_lowercase(),
    )
}

pub fn string(s: String, budget: &mut dyn Budget) -> Result<Value, RunError> {
    check_string_len(s.len(), budget)?;
    budget.allocate(s.len() as u64)?;
    Ok(Value::Str(s.into()))
}

/// `i.to_string()`: the text as a string value, within the budget's limits.
pub fn int_text(i: i64, budget: &mut dyn Budget) -> Result<Value, RunError> {
    string(int_to_string(i), budget)
}

/// The decimal text of `i`, as `i.to_string()` writes it, without the formatting machinery. The
/// string has room for a short prefix or suffix (the allocator rounds small requests up anyway),
/// so that `"item" + i.to_string()` extends it in place.
pub fn int_to_string(i: i64) -> String {
    let mut digits = [0u8; 20];
    let mut n = i.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut s = String::with_capacity(24);
    if i < 0 {
        s.push('-');
    }
    // ASCII digits: each byte is its own character (no UTF-8 check to make).
    s.extend(digits[at..].iter().map(|&d| char::from(d)));
    s
}

pub fn check_string_len(len: usize, budget: &dyn Budget) -> Result<(), RunError> {
    if len > budget.max_string_bytes() {
        return Err(RunError::new(
            ErrorKind::Limit,
            Default::default(),
            format!("a string of {len} bytes is over the limit of {} bytes", budget.max_string_bytes()),
        ));
    }
    Ok(())
}

/// Fails if `range(a, b)` would be a list over the length limit, and spends the memory it would
/// take (a loop over it counts the same, though it builds no list).
pub fn check_range_len(a: i64, b: i64, budget: &mut dyn Budget) -> Result<(), RunError> {
    let len = if b > a { (b as i128 - a as i128) as u128 } else { 0 };
    check_list_len(usize::try_from(len).unwrap_or(usize::MAX), budget)
}

pub fn check_list_len(len: usize, budget: &mut dyn Budget) -> Result<(), RunError> {
    if len > budget.max_list_len() {
        return Err(RunError::new(
            ErrorKind::Limit,
            Default::default(),
            format!("a list of {len} elements is over the limit of {}", budget.max_list_len()),
        ));
    }
    budget.allocate(len as u64 * SLOT_BYTES)
}

/// The join of the labels of a value and of everything inside it: what comparing or sending
/// the whole value reveals.
pub fn deep_label(v: &Val) -> Label {
    deep_label_within(v, &|_| true)
}

/// [`deep_label`], looking inside a record only where `enter` says so (the boundary does not
/// look inside the host's own records: passing one back says only which one it is).
pub fn deep_label_within(v: &Val, enter: &dyn Fn(&Record) -> bool) -> Label {
    let mut l = v.label.clone();
    if has_parts(&v.value) {
        let mut stack: Vec<&Val> = Vec::new();
        push_parts(&v.value, &mut stack, enter);
        join_deep(&mut l, &mut stack, enter);
    }
    l
}

/// Does `v` hold other values, whose labels [`deep_label`] joins?
fn has_parts(v: &Value) -> bool {
    matches!(v, Value::Tuple(_) | Value::List(_) | Value::Record(_) | Value::Variant(_) | Value::Func(_))
}

fn push_parts<'a>(v: &'a Value, stack: &mut Vec<&'a Val>, enter: &dyn Fn(&Record) -> bool) {
    match v {
        Value::Tuple(items) => stack.extend(items.iter()),
        Value::List(items) => stack.extend(items.iter()),
        Value::Record(r) if enter(r) => stack.extend(r.values()),
        Value::Variant(x) => stack.extend(x.payload.iter()),
        Value::Labeled(_) => {} // the box hides its content's label; `unlabel` raises it
        Value::Func(f) => stack.extend(f.captures.iter()),
        _ => {}
    }
}

/// Joins into `l` the labels of the values on `stack` and of everything inside them.
fn join_deep(l: &mut Label, stack: &mut Vec<&Val>, enter: &dyn Fn(&Record) -> bool) {
    while let Some(v) = stack.pop() {
        l.join_mut(&v.label);
        push_parts(&v.value, stack, enter);
    }
}

/// Structural equality, ignoring labels. Functions, capabilities and host-made values are equal
/// only to themselves.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| equal(&a.value, &b.value))
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| equal(&a.value, &b.value))
        }
        (Value::Record(x), Value::Record(y)) => {
            x.ty() == y.ty()
                && x.values().len() == y.values().len()
                && x.fields().all(|(n, v)| y.field(n).is_some_and(|w| equal(&v.value, &w.value)))
        }
        (Value::Variant(x), Value::Variant(y)) => {
            x.enum_name == y.enum_name
                && x.name == y.name
                && x.payload.len() == y.payload.len()
                && x.payload.iter().zip(&y.payload).all(|(a, b)| equal(&a.value, &b.value))
        }
        (Value::Func(x), Value::Func(y)) => Arc::ptr_eq(x, y),
        (Value::Labeled(x), Value::Labeled(y)) => Arc::ptr_eq(x, y),
        _ => a == b,
    }
}

fn list_of(v: &Val) -> Option<&Arc<Vec<Val>>> {
    match &v.value {
        Value::List(xs) => Some(xs),
        _ => None,
    }
}

fn str_of(v: &Val) -> Option<&str> {
    match &v.value {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

fn all_labels(args: &[Val]) -> Label {
    let mut l = Label::bottom();
    for a in args {
        l.join_mut(&a.label);
    }
    l
}

fn elements_label(xs: &[Val]) -> Label {
    let mut l = Label::bottom();
    let mut stack: Vec<&Val> = Vec::new();
    for x in xs {
        l.join_mut(&x.label);
        if has_parts(&x.value) {
            push_parts(&x.value, &mut stack, &|_| true);
            join_deep(&mut l, &mut stack, &|_| true);
        }
    }
    l
}

/// Applies a first-order builtin (not `map`/`filter`/`fold`/`any`/`all`, not `unlabel` and
/// `user`, which the interpreter handles).
pub fn apply(b: Builtin, args: &[Val], budget: &mut dyn Budget) -> Result<Val, RunError> {
    use Builtin::*;
    let label = all_labels(args);
    let plain = |v: Value| Ok(Val { value: v, label: label.clone() });
    let bad = || Err(type_error(b, args));
    match (b, args) {
        (Len | IsEmpty, [m]) if map_of(m).is_some() => {
            let n = map_of(m).map_or(0, |e| e.len());
            plain(if b == Len { Value::Int(n as i64) } else { Value::Bool(n == 0) })
        }
        (Len, [x]) => match &x.value {
            Value::List(xs) => plain(Value::Int(xs.len() as i64)),
            Value::Str(s) => plain(Value::Int(s.chars().count() as i64)),
            _ => bad(),
        },
        (IsEmpty, [x]) => match &x.value {
            Value::List(xs) => plain(Value::Bool(xs.is_empty())),
            Value::Str(s) => plain(Value::Bool(s.is_empty())),
            _ => bad(),
        },
        (MapFrom, [pairs]) => {
            let Some(list) = list_of(pairs) else { return bad() };
            let mut keys = Vec::with_capacity(list.len());
            for p in list.iter() {
                let Some((k, _)) = pair(p) else { return bad() };
                keys.push(k.clone());
            }
            let order = ordered(&keys, list).ok_or_else(|| type_error(b, args))?;
            // In sorted order equal keys are neighbours, the latest last (a stable sort): it wins.
            let mut entries: Vec<Val> = Vec::with_capacity(list.len());
            let mut last_key: Option<&Val> = None;
            for &i in &order {
                let (Some(p), Some(k)) = (list.get(i), keys.get(i)) else { return bad() };
                match (last_key, entries.last_mut()) {
                    (Some(prev), Some(slot)) if equal(&prev.value, &k.value) => *slot = p.clone(),
                    _ => entries.push(p.clone()),
                }
                last_key = Some(k);
            }
            check_list_len(entries.len(), budget)?;
            // Which entries there are, and in which order, depends on every key.
            Ok(map_val(entries, label.join(&elements_label(&keys))))
        }
        (Get, [m, k]) if map_of(m).is_some() => {
            let Some(entries) = map_of(m) else { return bad() };
            let label = label.join(&deep_label(k));
            match search(entries, k)? {
                Ok(at) => match entries.get(at).and_then(|e| pair(e).map(|(_, v)| (e, v))) {
                    Some((e, v)) => {
                        Ok(Val { value: Value::some(v.value.clone()), label: label.join(&e.label).join(&v.label) })
                    }
                    None => bad(),
                },
                Err(_) => plain(Value::none()),
            }
        }
        (ContainsKey, [m, k]) => {
            let Some(entries) = map_of(m) else { return bad() };
            Ok(Val { value: Value::Bool(search(entries, k)?.is_ok()), label: label.join(&deep_label(k)) })
        }
        (Insert, [m, k, v]) => {
            let Some(entries) = map_of(m) else { return bad() };
            let entry = Val::plain(Value::Tuple(Arc::new(vec![k.clone(), v.clone()])));
            let mut out: Vec<Val> = entries.to_vec();
            match search(entries, k)? {
                Ok(at) => {
                    if let Some(slot) = out.get_mut(at) {
                        *slot = entry;
                    }
                }
                Err(at) => {
                    check_list_len(out.len() + 1, budget)?;
                    out.insert(at.min(out.len()), entry);
                }
            }
            budget.allocate(out.len() as u64 * SLOT_BYTES)?;
            // Where the entry goes depends on the key; what it holds does not change the others.
            Ok(map_val(out, m.label.join(&deep_label(k))))
        }
        (Remove, [m, k]) => {
            let Some(entries) = map_of(m) else { return bad() };
            let mut out: Vec<Val> = entries.to_vec();
            if let Ok(at) = search(entries, k)?
                && at < out.len()
            {
                out.remove(at);
            }
            budget.allocate(out.len() as u64 * SLOT_BYTES)?;
            Ok(map_val(out, m.label.join(&deep_label(k))))
        }
        (Keys | Values | Entries, [m]) => {
            let Some(entries) = map_of(m) else { return bad() };
            check_list_len(entries.len(), budget)?;
            let mut out = Vec::with_capacity(entries.len());
            for e in entries.iter() {
                let Some((k, v)) = pair(e) else { return bad() };
                out.push(match b {
                    Keys => Val { value: k.value.clone(), label: e.label.join(&k.label) },
                    Values => Val { value: v.value.clone(), label: e.label.join(&v.label) },
                    _ => e.clone(),
                });
            }
            plain(Value::List(Arc::new(out)))
        }
        (Get, [xs, i]) => {
            let (Some(list), Value::Int(i)) = (list_of(xs), &i.value) else { return bad() };
            match usize::try_from(*i).ok().and_then(|i| list.get(i)) {
                Some(v) => Ok(Val { value: Value::some(v.value.clone()), label: label.join(&v.label) }),
                None => plain(Value::none()),
            }
        }
        (Push, [xs, x]) => {
            let Some(list) = list_of(xs) else { return bad() };
            check_list_len(list.len() + 1, budget)?;
            let mut v = Vec::with_capacity(list.len() + 1);
            v.extend(list.iter().cloned());
            v.push(x.clone());
            Ok(Val { value: Value::List(Arc::new(v)), label: xs.label.clone() })
        }
        (Concat, [a, c]) => match (&a.value, &c.value) {
            (Value::List(x), Value::List(y)) => {
                check_list_len(x.len() + y.len(), budget)?;
                let v: Vec<Val> = x.iter().chain(y.iter()).cloned().collect();
                plain(Value::List(Arc::new(v)))
            }
            (Value::Str(x), Value::Str(y)) => {
                check_string_len(x.len() + y.len(), budget)?;
                plain(string(format!("{x}{y}"), budget)?)
            }
            _ => bad(),
        },
        (Contains, [a, x]) => match (&a.value, &x.value) {
            (Value::List(xs), _) => {
                let found = xs.iter().any(|e| equal(&e.value, &x.value));
                Ok(Val { value: Value::Bool(found), label: label.join(&elements_label(xs)).join(&deep_label(x)) })
            }
            (Value::Str(s), Value::Str(t)) => plain(Value::Bool(s.contains(&**t))),
            _ => bad(),
        },
        (Sum, [xs]) => {
            let Some(list) = list_of(xs) else { return bad() };
            let mut total: i64 = 0;
            for x in list.iter() {
                let Value::Int(i) = x.value else { return bad() };
                total = total.checked_add(i).ok_or_else(overflow)?;
            }
            Ok(Val { value: Value::Int(total), label: label.join(&elements_label(list)) })
        }
        (Reverse, [xs]) => {
            let Some(list) = list_of(xs) else { return bad() };
            check_list_len(list.len(), budget)?;
            plain(Value::List(Arc::new(list.iter().rev().cloned().collect())))
        }
        (Range, [a, c]) => {
            let (Value::Int(a), Value::Int(c)) = (&a.value, &c.value) else { return bad() };
            check_range_len(*a, *c, budget)?;
            let v: Vec<Val> = (*a..*c.max(a)).map(|i| Val::plain(Value::Int(i))).collect();
            plain(Value::List(Arc::new(v)))
        }
        (First | Last, [xs]) => {
            let Some(list) = list_of(xs) else { return bad() };
            let item = if b == First { list.first() } else { list.last() };
            match item {
                Some(v) => Ok(Val { value: Value::some(v.value.clone()), label: label.join(&v.label) }),
                None => plain(Value::none()),
            }
        }
        (Join, [xs, sep]) => {
            if let (Value::Label(a), Value::Label(c)) = (&xs.value, &sep.value) {
                return plain(Value::Label(Arc::new(a.join(c))));
            }
            let (Some(list), Some(sep)) = (list_of(xs), str_of(sep)) else { return bad() };
            let mut len = sep.len().saturating_mul(list.len());
            for x in list.iter() {
                len = len.saturating_add(str_of(x).map_or(0, str::len));
            }
            check_string_len(len, budget)?;
            let mut out = String::with_capacity(len);
            for (i, x) in list.iter().enumerate() {
                let Some(s) = str_of(x) else { return bad() };
                if i > 0 {
                    out.push_str(sep);
                }
                out.push_str(s);
            }
            Ok(Val { value: string(out, budget)?, label: label.join(&elements_label(list)) })
        }
        (StartsWith | EndsWith, [s, t]) => {
            let (Some(s), Some(t)) = (str_of(s), str_of(t)) else { return bad() };
            plain(Value::Bool(if b == StartsWith { s.starts_with(t) } else { s.ends_with(t) }))
        }
        (ToUpper | ToLower | Trim, [s]) => {
            let Some(s) = str_of(s) else { return bad() };
            let out = match b {
                ToUpper => s.to_uppercase(),
                ToLower => s.to_lowercase(),
                _ => s.trim().to_string(),
            };
            plain(string(out, budget)?)
        }
        (Split, [s, sep]) => {
            let (Some(s), Some(sep)) = (str_of(s), str_of(sep)) else { return bad() };
            let parts: Vec<&str> =
                if sep.is_empty() { s.split_terminator("").skip(1).collect() } else { s.split(sep).collect() };
            check_list_len(parts.len(), budget)?;
            budget.allocate(s.len() as u64)?;
            plain(Value::List(Arc::new(parts.into_iter().map(|p| Val::plain(Value::str(p))).collect())))
        }
        (ToString, [x]) => match &x.value {
            Value::Int(i) => plain(int_text(*i, budget)?),
            Value::Float(f) => plain(string(format!("{f:?}"), budget)?),
            Value::Decimal(d) => plain(string(d.to_string(), budget)?),
            Value::Time(t) => plain(string(t.to_string(), budget)?),
            Value::Bool(v) => plain(string(v.to_string(), budget)?),
            Value::Str(s) => plain(Value::Str(s.clone())),
            _ => bad(),
        },
        (ParseInt, [s]) => {
            let Some(s) = str_of(s) else { return bad() };
            plain(match s.trim().parse::<i64>() {
                Ok(i) => Value::some(Value::Int(i)),
                Err(_) => Value::none(),
            })
        }
        (ParseDecimal, [s]) => {
            let Some(s) = str_of(s) else { return bad() };
            plain(match crate::decimal::parse(s) {
                Some(d) => Value::some(Value::decimal(d)),
                None => Value::none(),
            })
        }
        (ParseDate | ParseDateTime, [s]) => {
            let Some(s) = str_of(s) else { return bad() };
            let parsed = if b == ParseDate { crate::time::parse_date(s) } else { crate::time::parse_datetime(s) };
            plain(parsed.map_or_else(Value::none, |t| Value::some(Value::time(t))))
        }
        (Seconds | Minutes | Hours | Days, [n]) => {
            let Value::Int(n) = n.value else { return bad() };
            let unit = match b {
                Seconds => 1,
                Minutes => 60,
                Hours => 3_600,
                _ => 86_400,
            };
            plain(Value::time(crate::time::duration(n, unit)?))
        }
        (AddDays, [d, n]) => {
            let (Value::Time(d), Value::Int(n)) = (&d.value, &n.value) else { return bad() };
            match crate::time::add_days(**d, *n) {
                Some(moved) => plain(Value::time(moved?)),
                None => bad(),
            }
        }
        (DaysBetween, [a, c]) => {
            let (Value::Time(a), Value::Time(c)) = (&a.value, &c.value) else { return bad() };
            match crate::time::days_between(**a, **c) {
                Some(n) => plain(Value::Int(n)),
                None => bad(),
            }
        }
        (Round, [x, n]) => {
            let (Value::Decimal(x), Value::Int(n)) = (&x.value, &n.value) else { return bad() };
            plain(Value::decimal(crate::decimal::round(**x, *n)?))
        }
        (DivRound, [x, y, n]) => {
            let (Value::Decimal(x), Value::Decimal(y), Value::Int(n)) = (&x.value, &y.value, &n.value) else {
                return bad();
            };
            plain(Value::decimal(crate::decimal::div_round(**x, **y, *n)?))
        }
        (Find, [s, t]) => {
            let (Some(s), Some(t)) = (str_of(s), str_of(t)) else { return bad() };
            plain(match s.find(t) {
                Some(at) => Value::some(Value::Int(char_count(s.get(..at).unwrap_or(""))?)),
                None => Value::none(),
            })
        }
        (Replace, [s, from, to]) => {
            let (Some(s), Some(from), Some(to)) = (str_of(s), str_of(from), str_of(to)) else { return bad() };
            // The result's size is known before it is built: an empty pattern matches at every
            // character boundary, as `str::replace` replaces it.
            let n = s.matches(from).count();
            let len = (s.len() - n.saturating_mul(from.len()).min(s.len())).saturating_add(n.saturating_mul(to.len()));
            check_string_len(len, budget)?;
            plain(string(s.replace(from, to), budget)?)
        }
        (Slice, [x, a, c]) => {
            let (Value::Int(a), Value::Int(c)) = (&a.value, &c.value) else { return bad() };
            match &x.value {
                Value::Str(s) => {
                    let (from, to) = char_range(s, *a, *c)?;
                    plain(string(s.get(from..to).unwrap_or("").to_string(), budget)?)
                }
                Value::List(xs) => {
                    let (from, to) = bounds(xs.len(), *a, *c)?;
                    let part = xs.get(from..to).unwrap_or(&[]);
                    check_list_len(part.len(), budget)?;
                    plain(Value::List(Arc::new(part.to_vec())))
                }
                _ => bad(),
            }
        }
        (Lines | Words, [s]) => {
            let Some(s) = str_of(s) else { return bad() };
            let parts: Vec<&str> = if b == Lines { s.lines().collect() } else { s.split_whitespace().collect() };
            check_list_len(parts.len(), budget)?;
            budget.allocate(s.len() as u64)?;
            plain(Value::List(Arc::new(parts.into_iter().map(|p| Val::plain(Value::str(p))).collect())))
        }
        (Repeat, [s, n]) => {
            let (Some(s), Value::Int(n)) = (str_of(s), &n.value) else { return bad() };
            let Ok(n) = usize::try_from(*n) else {
                return Err(out_of_range(format!("`repeat` needs a count of 0 or more, not {n}")));
            };
            check_string_len(s.len().saturating_mul(n), budget)?;
            plain(string(s.repeat(n), budget)?)
        }
        (PadLeft | PadRight, [s, width, fill]) => {
            let (Some(s), Value::Int(width), Some(fill)) = (str_of(s), &width.value, str_of(fill)) else {
                return bad();
            };
            let mut fills = fill.chars();
            let (Some(fill), None) = (fills.next(), fills.next()) else {
                return Err(out_of_range(
                    format!("the fill of `{b:?}` must be one character, not {fill:?}").to_lowercase(),
                ));
            };
            let have = s.chars().count();
            let extra = usize::try_from(*width).unwrap_or(0).saturating_sub(have);
            check_string_len(s.len().saturating_add(extra.saturating_mul(fill.len_utf8())), budget)?;
            let padding: String = std::iter::repeat_n(fill, extra).collect();
            let out = if b == PadLeft { padding + s } else { format!("{s}{padding}") };
            plain(string(out, budget)?)
        }
        (Sort, [xs]) => {
            let Some(list) = list_of(xs) else { return bad() };
            let order = ordered(list, list).ok_or_else(|| type_error(b, args))?;
            check_list_len(list.len(), budget)?;
            let sorted: Vec<Val> = order.iter().filter_map(|&i| list.get(i).cloned()).collect();
            // Where each element lands depends on every element.
            Ok(Val { value: Value::List(Arc::new(sorted)), label: label.join(&elements_label(list)) })
        }
        (SortBy | MinBy | MaxBy, [keys, xs]) => {
            // Compiled from `sort_by(xs, key)`: the keys were computed by a loop, in order.
            let (Some(keys_list), Some(list)) = (list_of(keys), list_of(xs)) else { return bad() };
            if keys_list.len() != list.len() {
                return bad();
            }
            let order = ordered(keys_list, list).ok_or_else(|| type_error(b, args))?;
            let label = label.join(&elements_label(keys_list));
            if b == SortBy {
                check_list_len(list.len(), budget)?;
                let sorted: Vec<Val> = order.iter().filter_map(|&i| list.get(i).cloned()).collect();
                return Ok(Val { value: Value::List(Arc::new(sorted)), label });
            }
            // The first of the smallest keys, or the first of the largest.
            let pick = if b == MinBy {
                order.first().copied()
            } else {
                let last = order.last().and_then(|&i| keys_list.get(i));
                order.iter().copied().find(|&i| {
                    let (Some(k), Some(l)) = (keys_list.get(i), last) else { return false };
                    compare(&k.value, &l.value) == Some(Ordering::Equal)
                })
            };
            match pick.and_then(|i| list.get(i)) {
                Some(v) => Ok(Val { value: Value::some(v.value.clone()), label: label.join(&v.label) }),
                None => Ok(Val { value: Value::none(), label }),
            }
        }
        (GroupBy, [keys, _]) | (CountBy, [keys]) => {
            let elements = match args {
                [_, xs] => match list_of(xs) {
                    Some(xs) => Some(xs),
                    None => return bad(),
                },
                _ => None,
            };
            let Some(keys_list) = list_of(keys) else { return bad() };
            let order = ordered(keys_list, elements.unwrap_or(keys_list)).ok_or_else(|| type_error(b, args))?;
            // Equal keys are neighbours in sorted order, each run in the list's order (a stable
            // sort): a group is a run, `order[start..end]`. The groups come in the order their
            // first elements do.
            let mut groups: Vec<(usize, usize)> = Vec::new();
            for (at, &i) in order.iter().enumerate() {
                let same = groups
                    .last()
                    .and_then(|&(start, _)| order.get(start))
                    .and_then(|&first| keys_list.get(first))
                    .zip(keys_list.get(i))
                    .is_some_and(|(a, k)| equal(&a.value, &k.value));
                match groups.last_mut() {
                    Some((_, end)) if same => *end = at + 1,
                    _ => groups.push((at, at + 1)),
                }
            }
            groups.sort_by_key(|&(start, _)| order.get(start).copied());
            check_list_len(groups.len(), budget)?;
            budget.allocate(groups.len() as u64 * 2 * SLOT_BYTES)?;
            let mut out = Vec::with_capacity(groups.len());
            for (start, end) in groups {
                let (Some(members), Some(key)) =
                    (order.get(start..end), order.get(start).and_then(|&i| keys_list.get(i)))
                else {
                    return bad();
                };
                let second = match elements {
                    None => Val::plain(Value::Int(members.len() as i64)),
                    Some(list) => {
                        check_list_len(members.len(), budget)?;
                        Val::plain(Value::List(Arc::new(
                            members.iter().filter_map(|&i| list.get(i).cloned()).collect(),
                        )))
                    }
                };
                out.push(Val::plain(Value::Tuple(Arc::new(vec![key.clone(), second]))));
            }
            // Which groups there are, their order and their sizes depend on every key.
            Ok(Val { value: Value::List(Arc::new(out)), label: label.join(&elements_label(keys_list)) })
        }
        (Unique, [xs]) => {
            let Some(list) = list_of(xs) else { return bad() };
            let order = ordered(list, list).ok_or_else(|| type_error(b, args))?;
            // In sorted order equal elements are neighbours, the first of them (a stable sort)
            // the earliest; keep those, in their original order.
            let mut keep = vec![false; list.len()];
            let mut prev: Option<usize> = None;
            for &i in &order {
                let same =
                    prev.and_then(|p| list.get(p)).zip(list.get(i)).is_some_and(|(p, x)| equal(&p.value, &x.value));
                if !same {
                    if let Some(k) = keep.get_mut(i) {
                        *k = true;
                    }
                    prev = Some(i);
                }
            }
            let kept: Vec<Val> = list.iter().zip(&keep).filter(|(_, k)| **k).map(|(x, _)| x.clone()).collect();
            check_list_len(kept.len(), budget)?;
            // Which elements stay depends on every element.
            Ok(Val { value: Value::List(Arc::new(kept)), label: label.join(&elements_label(list)) })
        }
        (Enumerate, [xs]) => {
            let Some(list) = list_of(xs) else { return bad() };
            check_list_len(list.len(), budget)?;
            budget.allocate(list.len() as u64 * 2 * SLOT_BYTES)?;
            let pairs: Vec<Val> = list
                .iter()
                .enumerate()
                .map(|(i, x)| Val::plain(Value::Tuple(Arc::new(vec![Val::plain(Value::Int(i as i64)), x.clone()]))))
                .collect();
            plain(Value::List(Arc::new(pairs)))
        }
        (Zip, [xs, ys]) => {
            let (Some(xs), Some(ys)) = (list_of(xs), list_of(ys)) else { return bad() };
            let n = xs.len().min(ys.len());
            check_list_len(n, budget)?;
            budget.allocate(n as u64 * 2 * SLOT_BYTES)?;
            let pairs: Vec<Val> = xs
                .iter()
                .zip(ys.iter())
                .map(|(x, y)| Val::plain(Value::Tuple(Arc::new(vec![x.clone(), y.clone()]))))
                .collect();
            plain(Value::List(Arc::new(pairs)))
        }
        (Take | Skip, [xs, n]) => {
            let (Some(list), Value::Int(n)) = (list_of(xs), &n.value) else { return bad() };
            let n = usize::try_from(*n).unwrap_or(0).min(list.len());
            let part = if b == Take { list.get(..n) } else { list.get(n..) }.unwrap_or(&[]);
            check_list_len(part.len(), budget)?;
            plain(Value::List(Arc::new(part.to_vec())))
        }
        (Matches | FindAll | Captures, [s, p]) => {
            let (Some(s), Some(p)) = (str_of(s), str_of(p)) else { return bad() };
            if s.len() > pattern::MAX_INPUT_BYTES {
                return Err(RunError::new(
                    ErrorKind::Limit,
                    Default::default(),
                    format!("a pattern is matched against at most {} bytes, not {}", pattern::MAX_INPUT_BYTES, s.len()),
                ));
            }
            let re = pattern::compile(p).map_err(|why| {
                RunError::new(ErrorKind::InvalidPattern, Default::default(), format!("invalid pattern: {why}"))
            })?;
            match b {
                Matches => plain(Value::Bool(re.is_match(s))),
                FindAll => {
                    let mut found = Vec::new();
                    for m in re.find_iter(s) {
                        check_list_len(found.len() + 1, budget)?;
                        found.push(Val::plain(Value::str(m.as_str())));
                    }
                    budget.allocate(s.len() as u64)?;
                    plain(Value::List(Arc::new(found)))
                }
                _ => match re.captures(s) {
                    Some(groups) => {
                        check_list_len(groups.len(), budget)?;
                        budget.allocate(s.len() as u64)?;
                        let parts =
                            groups.iter().map(|g| Val::plain(Value::str(g.map_or("", |g| g.as_str())))).collect();
                        plain(Value::some(Value::List(Arc::new(parts))))
                    }
                    None => plain(Value::none()),
                },
            }
        }
        (IsSome | IsNone | IsOk | IsErr, [x]) => {
            let Value::Variant(v) = &x.value else { return bad() };
            let want = match b {
                IsSome => "Some",
                IsNone => "None",
                IsOk => "Ok",
                _ => "Err",
            };
            plain(Value::Bool(&*v.name == want))
        }
        (UnwrapOr, [x, d]) => {
            let Value::Variant(v) = &x.value else { return bad() };
            match (&*v.name, v.payload.first()) {
                ("Some" | "Ok", Some(inner)) => {
                    Ok(Val { value: inner.value.clone(), label: x.label.join(&inner.label) })
                }
                _ => Ok(Val { value: d.value.clone(), label: x.label.join(&d.label) }),
            }
        }
        // The payload keeps its own label; which variant it becomes depends on the option.
        (OkOr, [x, e]) => {
            let Value::Variant(v) = &x.value else { return bad() };
            let (name, payload) = match (&*v.enum_name, &*v.name, v.payload.first()) {
                ("Option", "Some", Some(inner)) => ("Ok", inner.clone()),
                ("Option", "None", None) => ("Err", e.clone()),
                _ => return bad(),
            };
            let value = Value::Variant(Arc::new(Variant::new("Result".into(), name.into(), vec![payload])));
            Ok(Val { value, label: x.label.clone() })
        }
        (Abs, [x]) => match x.value {
            Value::Int(i) => plain(Value::Int(i.checked_abs().ok_or_else(overflow)?)),
            Value::Float(f) => plain(Value::Float(f.abs())),
            Value::Decimal(ref d) => plain(Value::decimal(d.abs())),
            _ => bad(),
        },
        (Min | Max, [x, y]) => {
            let pick_first = match (&x.value, &y.value) {
                (Value::Int(a), Value::Int(c)) => (a <= c) == (b == Min),
                (Value::Float(a), Value::Float(c)) => (a <= c) == (b == Min),
                (Value::Decimal(a), Value::Decimal(c)) => (a <= c) == (b == Min),
                _ => return bad(),
            };
            plain(if pick_first { x.value.clone() } else { y.value.clone() })
        }
        (Public, []) => plain(Value::Label(Arc::new(DcLabel::bottom()))),
        (Untrusted, []) => plain(Value::Label(Arc::new(DcLabel::untrusted()))),
        (Secret | Endorsed, [p]) => {
            let Some(p) = str_of(p) else { return bad() };
            let l = if b == Secret { DcLabel::secret(p) } else { DcLabel::endorsed(p) };
            plain(Value::Label(Arc::new(l)))
        }
        (Readers, [ps]) => {
            let Value::List(items) = &ps.value else { return bad() };
            let mut names = Vec::with_capacity(items.len());
            for p in items.iter() {
                let Some(p) = str_of(p) else { return bad() };
                names.push(p);
            }
            plain(Value::Label(Arc::new(DcLabel::readers(&names))))
        }
        _ => bad(),
    }
}

/// How two values are ordered, as `<` orders them (numbers, strings by Unicode scalar values,
/// `false` before `true`), tuples part by part; `None` for values that have no order.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => Some(x.total_cmp(y)),
        (Value::Decimal(x), Value::Decimal(y)) => Some(x.cmp(y)),
        (Value::Time(x), Value::Time(y)) if std::mem::discriminant(&**x) == std::mem::discriminant(&**y) => {
            Some(x.cmp(y))
        }
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => {
            for (p, q) in x.iter().zip(y.iter()) {
                match compare(&p.value, &q.value)? {
                    Ordering::Equal => {}
                    o => return Some(o),
                }
            }
            Some(Ordering::Equal)
        }
        _ => None,
    }
}

/// The positions of `items` in the order of `keys` (one key per item), stable: equal keys keep
/// their order. `None` if two keys have no order.
fn ordered(keys: &[Val], items: &[Val]) -> Option<Vec<usize>> {
    if keys.len() != items.len() {
        return None;
    }
    // Integer keys, the commonest, sorted as (key, position) pairs: equal keys in the order of
    // their positions, as the stable sort below leaves them, with no call per comparison.
    let ints: Option<Vec<(i64, usize)>> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| match k.value {
            Value::Int(x) => Some((x, i)),
            _ => None,
        })
        .collect();
    if let Some(mut pairs) = ints {
        pairs.sort_unstable();
        return Some(pairs.into_iter().map(|(_, i)| i).collect());
    }
    if let Some(k0) = keys.first()
        && keys.iter().any(|k| compare(&k0.value, &k.value).is_none())
    {
        return None;
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let mut unordered = false;
    order.sort_by(|&i, &j| match keys.get(i).zip(keys.get(j)).and_then(|(a, b)| compare(&a.value, &b.value)) {
        Some(o) => o,
        None => {
            unordered = true;
            Ordering::Equal
        }
    });
    (!unordered).then_some(order)
}

/// A `Map` at run time: the variant `Map::Map` (no program can name it) holding the entries,
/// `(key, value)` tuples in the order of their keys, each key once.
fn map_val(entries: Vec<Val>, label: Label) -> Val {
    let list = Val::plain(Value::List(Arc::new(entries)));
    Val { value: Value::Variant(Arc::new(Variant::new("Map".into(), "Map".into(), vec![list]))), label }
}

/// The entries of a `Map`.
fn map_of(v: &Val) -> Option<&Arc<Vec<Val>>> {
    match &v.value {
        Value::Variant(x) if &*x.enum_name == "Map" => match x.payload.first().map(|p| &p.value) {
            Some(Value::List(entries)) => Some(entries),
            _ => None,
        },
        _ => None,
    }
}

/// The key and the value of an entry (or of any pair).
fn pair(v: &Val) -> Option<(&Val, &Val)> {
    match &v.value {
        Value::Tuple(parts) => match parts.as_slice() {
            [k, v] => Some((k, v)),
            _ => None,
        },
        _ => None,
    }
}

/// Where `key` is among a map's entries (`Ok`), or where it would go (`Err`).
fn search(entries: &[Val], key: &Val) -> Result<Result<usize, usize>, RunError> {
    let mut bad = false;
    let at = entries.binary_search_by(|e| match pair(e).and_then(|(k, _)| compare(&k.value, &key.value)) {
        Some(o) => o,
        None => {
            bad = true;
            Ordering::Equal
        }
    });
    if bad {
        return Err(RunError::new(ErrorKind::Type, Default::default(), "a map key that cannot be ordered"));
    }
    Ok(at)
}

fn out_of_range(message: String) -> RunError {
    RunError::new(ErrorKind::OutOfRange, Default::default(), message)
}

/// The number of characters in `s`, as an `Int`.
fn char_count(s: &str) -> Result<i64, RunError> {
    i64::try_from(s.chars().count()).map_err(|_| overflow())
}

/// `a..b` as positions in a sequence of `len`, if `0 <= a <= b <= len`.
fn bounds(len: usize, a: i64, b: i64) -> Result<(usize, usize), RunError> {
    match (usize::try_from(a), usize::try_from(b)) {
        (Ok(from), Ok(to)) if from <= to && to <= len => Ok((from, to)),
        _ => Err(out_of_range(format!("`slice` from {a} to {b} is out of range for a length of {len}"))),
    }
}

/// The characters `a..b` of `s` as byte offsets.
fn char_range(s: &str, a: i64, b: i64) -> Result<(usize, usize), RunError> {
    let len = s.chars().count();
    let (from, to) = bounds(len, a, b)?;
    let mut offsets = s.char_indices().map(|(i, _)| i).chain(std::iter::once(s.len()));
    let start = offsets.nth(from).unwrap_or(s.len());
    let end = if to == from { start } else { offsets.nth(to - from - 1).unwrap_or(s.len()) };
    Ok((start, end))
}

pub fn overflow() -> RunError {
    RunError::new(ErrorKind::Arithmetic, Default::default(), "integer overflow")
}

#[cfg(test)]
mod tests {
    use super::{Builtin, int_to_string};

    #[test]
    fn every_builtin_of_the_language_has_a_behaviour() {
        for name in cordon_syntax::builtins::names() {
            assert!(Builtin::named(name).is_some_and(|b| !b.is_label_fn()), "no run-time `{name}`");
        }
    }

    #[test]
    fn int_to_string_writes_what_to_string_writes() {
        for i in [0, 1, -1, 9, 10, -10, 12345, 99_999, i64::MAX, i64::MIN, i64::MIN + 1] {
            assert_eq!(int_to_string(i), i.to_string());
        }
    }
}
