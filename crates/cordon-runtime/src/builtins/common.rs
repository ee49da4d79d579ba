//! What the families of builtins share: the call being applied, the run's budget, size checks
//! made before anything is allocated, structural equality and order, and the labels of values
//! and of everything inside them.

use std::cmp::Ordering;
use std::sync::Arc;

use cordon_label::Label;
use cordon_syntax::Builtin;

use crate::error::{ErrorKind, RunError};
use crate::value::{Record, Val, Value};

/// A call of a first-order builtin: what it was given, and the join of the arguments' labels,
/// which most results carry.
pub(super) struct Call<'a> {
    pub(super) b: Builtin,
    pub(super) args: &'a [Val],
    pub(super) label: Label,
}

impl Call<'_> {
    /// A result that depends on the arguments' own labels.
    pub(super) fn plain(&self, value: Value) -> Result<Val, RunError> {
        Ok(Val { value, label: self.label.clone() })
    }

    /// A result with `label`.
    pub(super) fn labelled(&self, value: Value, label: Label) -> Result<Val, RunError> {
        Ok(Val { value, label })
    }

    /// Arguments this builtin does not take: only unchecked code passes them.
    pub(super) fn bad<T>(&self) -> Result<T, RunError> {
        Err(type_error(self.b, self.args))
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
    let kinds = kinds.join(", ").to_lowercase();
    RunError::new(ErrorKind::Type, Default::default(), format!("`{}` cannot take {kinds}", b.name()))
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

/// Every text in `v` and everything inside it (the content of a `Labeled` box aside).
pub fn texts(v: &Val) -> Vec<&str> {
    let mut texts = Vec::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if let Value::Str(s) = &v.value {
            texts.push(s.as_str());
        }
        push_parts(&v.value, &mut stack, &|_| true);
    }
    texts
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

pub(super) fn list_of(v: &Val) -> Option<&Arc<Vec<Val>>> {
    match &v.value {
        Value::List(xs) => Some(xs),
        _ => None,
    }
}

pub(super) fn str_of(v: &Val) -> Option<&str> {
    match &v.value {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

pub(super) fn all_labels(args: &[Val]) -> Label {
    let mut l = Label::bottom();
    for a in args {
        l.join_mut(&a.label);
    }
    l
}

pub(super) fn elements_label(xs: &[Val]) -> Label {
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
pub(super) fn ordered(keys: &[Val], items: &[Val]) -> Option<Vec<usize>> {
    if keys.len() != items.len() {
        return None;
    }
    if let Some(order) = packed_int_order(keys) {
        return Some(order);
    }
    // Other integer keys, sorted as (key, position) pairs: equal keys in the order of their
    // positions, as the stable sort below leaves them, with no call per comparison.
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

/// The positions of integer `keys` in their stable order, if every key is an integer, the
/// keys span less than 2³² and there are fewer than 2³² of them: each key and its position
/// packed into one `u64` (the key less the smallest above, the position below), so sorting the
/// numbers sorts by key, then position. They are turned into the positions where they lie: 8
/// bytes a key in all, where (key, position) pairs take 16.
fn packed_int_order(keys: &[Val]) -> Option<Vec<usize>> {
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    for k in keys {
        let Value::Int(x) = k.value else { return None };
        min = min.min(x);
        max = max.max(x);
    }
    if u32::try_from(keys.len()).is_err() || u32::try_from(max.abs_diff(min)).is_err() {
        return None;
    }
    let mut packed: Vec<u64> = Vec::with_capacity(keys.len());
    for (i, k) in keys.iter().enumerate() {
        let Value::Int(x) = k.value else { return None };
        packed.push((x.abs_diff(min) << 32) | i as u64);
    }
    packed.sort_unstable();
    // In place: a `u64` and a `usize` have the same size here (`usize` is 64 bits wide on the
    // targets this runs on; elsewhere the positions get a buffer of their own).
    Some(packed.into_iter().map(|p| (p & u64::from(u32::MAX)) as usize).collect())
}

pub(super) fn out_of_range(message: String) -> RunError {
    RunError::new(ErrorKind::OutOfRange, Default::default(), message)
}

/// `a..b` as positions in a sequence of `len`, if `0 <= a <= b <= len`.
pub(super) fn bounds(len: usize, a: i64, b: i64) -> Result<(usize, usize), RunError> {
    match (usize::try_from(a), usize::try_from(b)) {
        (Ok(from), Ok(to)) if from <= to && to <= len => Ok((from, to)),
        _ => Err(out_of_range(format!("`slice` from {a} to {b} is out of range for a length of {len}"))),
    }
}

pub fn overflow() -> RunError {
    RunError::new(ErrorKind::Arithmetic, Default::default(), "integer overflow")
}
