//! Lists: building, reading, ordering. A list's own label is its spine's (its length, its order);
//! what depends on the elements (`contains`, `sum`, a sort) carries theirs too.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::ops::Range;
use std::sync::Arc;

use cordon_syntax::Builtin;

use super::common::{
    Budget, Call, SLOT_BYTES, bounds, check_list_len, check_range_len, check_string_len, compare, deep_label,
    elements_label, equal, list_of, ordered, overflow, string, type_error,
};
use super::{maps, strings};
use crate::error::RunError;
use crate::value::{Val, Value};

/// `len` and `is_empty` of a list, a string (in characters) or a map.
pub(super) fn len_or_is_empty(c: &Call) -> Result<Val, RunError> {
    let [x] = c.args else { return c.bad() };
    let n = match (maps::entries_of(x), &x.value) {
        (Some(entries), _) => entries.len(),
        (None, Value::List(xs)) => xs.len(),
        (None, Value::Str(s)) if c.b == Builtin::Len => s.chars().count(),
        (None, Value::Str(s)) => s.len(),
        _ => return c.bad(),
    };
    c.plain(if c.b == Builtin::Len { Value::Int(n as i64) } else { Value::Bool(n == 0) })
}

/// `get(xs, i)` of a list, or `get(m, k)` of a map.
pub(super) fn get(c: &Call) -> Result<Val, RunError> {
    if let [m, _] = c.args
        && maps::entries_of(m).is_some()
    {
        return maps::get(c);
    }
    let [xs, i] = c.args else { return c.bad() };
    let (Some(list), Value::Int(i)) = (list_of(xs), &i.value) else { return c.bad() };
    match usize::try_from(*i).ok().and_then(|i| list.get(i)) {
        Some(v) => c.labelled(Value::some(v.value.clone()), c.label.join(&v.label)),
        None => c.plain(Value::none()),
    }
}

pub(super) fn push(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [xs, x] = c.args else { return c.bad() };
    let Some(list) = list_of(xs) else { return c.bad() };
    check_list_len(list.len() + 1, budget)?;
    let mut v = Vec::with_capacity(list.len() + 1);
    v.extend(list.iter().cloned());
    v.push(x.clone());
    c.labelled(Value::List(Arc::new(v)), xs.label.clone())
}

/// `concat` of two lists or two strings.
pub(super) fn concat(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [a, b] = c.args else { return c.bad() };
    match (&a.value, &b.value) {
        (Value::List(x), Value::List(y)) => {
            check_list_len(x.len() + y.len(), budget)?;
            let v: Vec<Val> = x.iter().chain(y.iter()).cloned().collect();
            c.plain(Value::List(Arc::new(v)))
        }
        (Value::Str(x), Value::Str(y)) => {
            check_string_len(x.len() + y.len(), budget)?;
            c.plain(string(format!("{x}{y}"), budget)?)
        }
        _ => c.bad(),
    }
}

/// `contains` of a list (on every element) or a string.
pub(super) fn contains(c: &Call) -> Result<Val, RunError> {
    let [a, x] = c.args else { return c.bad() };
    match (&a.value, &x.value) {
        (Value::List(xs), _) => {
            let found = xs.iter().any(|e| equal(&e.value, &x.value));
            c.labelled(Value::Bool(found), c.label.join(&elements_label(xs)).join(&deep_label(x)))
        }
        (Value::Str(_), Value::Str(_)) => strings::contains(c),
        _ => c.bad(),
    }
}

pub(super) fn sum(c: &Call) -> Result<Val, RunError> {
    let [xs] = c.args else { return c.bad() };
    let Some(list) = list_of(xs) else { return c.bad() };
    let mut total: i64 = 0;
    for x in list.iter() {
        let Value::Int(i) = x.value else { return c.bad() };
        total = total.checked_add(i).ok_or_else(overflow)?;
    }
    c.labelled(Value::Int(total), c.label.join(&elements_label(list)))
}

pub(super) fn reverse(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [xs] = c.args else { return c.bad() };
    let Some(list) = list_of(xs) else { return c.bad() };
    check_list_len(list.len(), budget)?;
    c.plain(Value::List(Arc::new(list.iter().rev().cloned().collect())))
}

pub(super) fn range(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [a, b] = c.args else { return c.bad() };
    let (Value::Int(a), Value::Int(b)) = (&a.value, &b.value) else { return c.bad() };
    check_range_len(*a, *b, budget)?;
    let v: Vec<Val> = (*a..*b.max(a)).map(|i| Val::plain(Value::Int(i))).collect();
    c.plain(Value::List(Arc::new(v)))
}

pub(super) fn first_or_last(c: &Call) -> Result<Val, RunError> {
    let [xs] = c.args else { return c.bad() };
    let Some(list) = list_of(xs) else { return c.bad() };
    let item = if c.b == Builtin::First { list.first() } else { list.last() };
    match item {
        Some(v) => c.labelled(Value::some(v.value.clone()), c.label.join(&v.label)),
        None => c.plain(Value::none()),
    }
}

pub(super) fn sort(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [xs] = c.args else { return c.bad() };
    let Some(list) = list_of(xs) else { return c.bad() };
    let Some(order) = ordered(list, list) else { return c.bad() };
    check_list_len(list.len(), budget)?;
    // Where each element lands depends on every element.
    c.labelled(Value::List(Arc::new(in_order(&order, list))), c.label.join(&elements_label(list)))
}

/// The elements of `list` at the positions `order` gives, in that order, in a list made as
/// long as it will be at once.
fn in_order(order: &[usize], list: &[Val]) -> Vec<Val> {
    let mut out = Vec::with_capacity(order.len());
    out.extend(order.iter().filter_map(|&i| list.get(i).cloned()));
    out
}

/// `sort_by`, `min_by` and `max_by`, given the keys (computed by a loop, in order) and the
/// list. The keys are let go once the list is ordered, before the sorted list is made: where
/// the caller gave them up (the machine moves them off its stack) their memory is free again
/// by then.
pub(crate) fn ordered_by_keys(b: Builtin, keys: Val, xs: &Val, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let bad = |keys: Val| Err(type_error(b, &[keys, xs.clone()]));
    let (Some(keys_list), Some(list)) = (list_of(&keys), list_of(xs)) else { return bad(keys) };
    if keys_list.len() != list.len() {
        return bad(keys);
    }
    let Some(order) = ordered(keys_list, list) else { return bad(keys) };
    // The arguments' labels and the keys'.
    let label = keys.label.join(&xs.label).join(&elements_label(keys_list));
    // The first of the smallest keys, or the first of the largest.
    let pick = match b {
        Builtin::SortBy => None,
        Builtin::MinBy => order.first().copied(),
        _ => {
            let last = order.last().and_then(|&i| keys_list.get(i));
            order.iter().copied().find(|&i| {
                let (Some(k), Some(l)) = (keys_list.get(i), last) else { return false };
                compare(&k.value, &l.value) == Some(Ordering::Equal)
            })
        }
    };
    drop(keys);
    if b == Builtin::SortBy {
        check_list_len(list.len(), budget)?;
        return Ok(Val { value: Value::List(Arc::new(in_order(&order, list))), label });
    }
    match pick.and_then(|i| list.get(i)) {
        Some(v) => Ok(Val { value: Value::some(v.value.clone()), label: label.join(&v.label) }),
        None => Ok(Val { value: Value::none(), label }),
    }
}

/// `group_by`, given the keys and the list, and `count_by`, given the keys alone.
pub(super) fn grouped_by_keys(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let (keys, elements) = match (c.b, c.args) {
        (Builtin::GroupBy, [keys, xs]) => match list_of(xs) {
            Some(xs) => (keys, Some(xs)),
            None => return c.bad(),
        },
        (Builtin::CountBy, [keys]) => (keys, None),
        _ => return c.bad(),
    };
    let Some(keys_list) = list_of(keys) else { return c.bad() };
    // Each group: the position of its first element, its size, and where its members are in
    // `order`. The groups come in the order their first elements do.
    let mut order = Vec::new();
    // `count_by` of integer keys, the commonest, counts them in one pass, with no sort.
    let counted = if elements.is_none() { int_counts(keys_list) } else { None };
    let groups: Vec<(usize, usize, Range<usize>)> = match counted {
        Some(counts) => counts.into_iter().map(|(first, size)| (first, size, 0..0)).collect(),
        None => {
            let Some(sorted) = ordered(keys_list, elements.unwrap_or(keys_list)) else { return c.bad() };
            order = sorted;
            runs(&order, keys_list)
        }
    };
    check_list_len(groups.len(), budget)?;
    budget.allocate(groups.len() as u64 * 2 * SLOT_BYTES)?;
    let mut out = Vec::with_capacity(groups.len());
    for (first, size, members) in groups {
        let Some(key) = keys_list.get(first) else { return c.bad() };
        let second = match elements {
            None => Val::plain(Value::Int(size as i64)),
            Some(list) => {
                let Some(members) = order.get(members) else { return c.bad() };
                check_list_len(members.len(), budget)?;
                Val::plain(Value::List(Arc::new(members.iter().filter_map(|&i| list.get(i).cloned()).collect())))
            }
        };
        out.push(Val::plain(Value::Tuple(Arc::new(vec![key.clone(), second]))));
    }
    // Which groups there are, their order and their sizes depend on every key.
    c.labelled(Value::List(Arc::new(out)), c.label.join(&elements_label(keys_list)))
}

/// The groups of equal keys in `order` (the keys' positions, stably sorted by key): equal keys
/// are neighbours there, each run in the list's order, so a group is a run `order[start..end]`.
/// As `(first position, size, start..end)`, in the order of their first positions.
fn runs(order: &[usize], keys: &[Val]) -> Vec<(usize, usize, Range<usize>)> {
    let mut groups: Vec<(usize, usize, Range<usize>)> = Vec::new();
    for (at, &i) in order.iter().enumerate() {
        let same = groups
            .last()
            .and_then(|(first, _, _)| keys.get(*first))
            .zip(keys.get(i))
            .is_some_and(|(a, k)| equal(&a.value, &k.value));
        match groups.last_mut() {
            Some((_, size, run)) if same => {
                *size += 1;
                run.end = at + 1;
            }
            _ => groups.push((i, 1, at..at + 1)),
        }
    }
    groups.sort_by_key(|(first, _, _)| *first);
    groups
}

/// If every key is an `Int`: each distinct key's first position and count, in the order of
/// their first positions.
fn int_counts(keys: &[Val]) -> Option<Vec<(usize, usize)>> {
    let mut group_of: HashMap<i64, usize> = HashMap::new();
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let Value::Int(k) = key.value else { return None };
        match group_of.entry(k) {
            Entry::Occupied(group) => {
                if let Some((_, count)) = groups.get_mut(*group.get()) {
                    *count += 1;
                }
            }
            Entry::Vacant(slot) => {
                slot.insert(groups.len());
                groups.push((i, 1));
            }
        }
    }
    Some(groups)
}

pub(super) fn unique(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [xs] = c.args else { return c.bad() };
    let Some(list) = list_of(xs) else { return c.bad() };
    let Some(order) = ordered(list, list) else { return c.bad() };
    // In sorted order equal elements are neighbours, the first of them (a stable sort) the
    // earliest; keep those, in their original order.
    let mut keep = vec![false; list.len()];
    let mut prev: Option<usize> = None;
    for &i in &order {
        let same = prev.and_then(|p| list.get(p)).zip(list.get(i)).is_some_and(|(p, x)| equal(&p.value, &x.value));
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
    c.labelled(Value::List(Arc::new(kept)), c.label.join(&elements_label(list)))
}

pub(super) fn enumerate(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [xs] = c.args else { return c.bad() };
    let Some(list) = list_of(xs) else { return c.bad() };
    check_list_len(list.len(), budget)?;
    budget.allocate(list.len() as u64 * 2 * SLOT_BYTES)?;
    let pairs: Vec<Val> = list
        .iter()
        .enumerate()
        .map(|(i, x)| Val::plain(Value::Tuple(Arc::new(vec![Val::plain(Value::Int(i as i64)), x.clone()]))))
        .collect();
    c.plain(Value::List(Arc::new(pairs)))
}

pub(super) fn zip(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [xs, ys] = c.args else { return c.bad() };
    let (Some(xs), Some(ys)) = (list_of(xs), list_of(ys)) else { return c.bad() };
    let n = xs.len().min(ys.len());
    check_list_len(n, budget)?;
    budget.allocate(n as u64 * 2 * SLOT_BYTES)?;
    let pairs: Vec<Val> =
        xs.iter().zip(ys.iter()).map(|(x, y)| Val::plain(Value::Tuple(Arc::new(vec![x.clone(), y.clone()])))).collect();
    c.plain(Value::List(Arc::new(pairs)))
}

pub(super) fn take_or_skip(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [xs, n] = c.args else { return c.bad() };
    let (Some(list), Value::Int(n)) = (list_of(xs), &n.value) else { return c.bad() };
    let n = usize::try_from(*n).unwrap_or(0).min(list.len());
    let part = if c.b == Builtin::Take { list.get(..n) } else { list.get(n..) }.unwrap_or(&[]);
    check_list_len(part.len(), budget)?;
    c.plain(Value::List(Arc::new(part.to_vec())))
}

/// `slice(x, a, b)` of a list, or of a string (in characters).
pub(super) fn slice(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [x, a, b] = c.args else { return c.bad() };
    let (Value::Int(a), Value::Int(b)) = (&a.value, &b.value) else { return c.bad() };
    match &x.value {
        Value::Str(s) => strings::slice(c, s, *a, *b, budget),
        Value::List(xs) => {
            let (from, to) = bounds(xs.len(), *a, *b)?;
            let part = xs.get(from..to).unwrap_or(&[]);
            check_list_len(part.len(), budget)?;
            c.plain(Value::List(Arc::new(part.to_vec())))
        }
        _ => c.bad(),
    }
}
