//! Maps: a `Map` at run time is the variant `Map::Map` (no program can name it) holding the
//! entries, `(key, value)` tuples in the order of their keys, each key once. Which entries there
//! are and where depends on the keys; what an entry holds does not change the others.

use std::cmp::Ordering;
use std::sync::Arc;

use cordon_label::Label;
use cordon_syntax::Builtin;

use super::common::{
    Budget, Call, SLOT_BYTES, check_list_len, compare, deep_label, elements_label, equal, list_of, ordered,
};
use crate::error::{ErrorKind, RunError};
use crate::value::{Val, Value, Variant};

/// The entries of a `Map`.
pub(super) fn entries_of(v: &Val) -> Option<&Arc<Vec<Val>>> {
    match &v.value {
        Value::Variant(x) if &*x.enum_name == "Map" => match x.payload.first().map(|p| &p.value) {
            Some(Value::List(entries)) => Some(entries),
            _ => None,
        },
        _ => None,
    }
}

fn map_val(entries: Vec<Val>, label: Label) -> Val {
    let list = Val::plain(Value::List(Arc::new(entries)));
    Val { value: Value::Variant(Arc::new(Variant::new("Map".into(), "Map".into(), vec![list]))), label }
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

pub(super) fn map_from(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [pairs] = c.args else { return c.bad() };
    let Some(list) = list_of(pairs) else { return c.bad() };
    let mut keys = Vec::with_capacity(list.len());
    for p in list.iter() {
        let Some((k, _)) = pair(p) else { return c.bad() };
        keys.push(k.clone());
    }
    let Some(order) = ordered(&keys, list) else { return c.bad() };
    // In sorted order equal keys are neighbours, the latest last (a stable sort): it wins.
    let mut entries: Vec<Val> = Vec::with_capacity(list.len());
    let mut last_key: Option<&Val> = None;
    for &i in &order {
        let (Some(p), Some(k)) = (list.get(i), keys.get(i)) else { return c.bad() };
        match (last_key, entries.last_mut()) {
            (Some(prev), Some(slot)) if equal(&prev.value, &k.value) => *slot = p.clone(),
            _ => entries.push(p.clone()),
        }
        last_key = Some(k);
    }
    check_list_len(entries.len(), budget)?;
    // Which entries there are, and in which order, depends on every key.
    Ok(map_val(entries, c.label.join(&elements_label(&keys))))
}

/// `get(m, k)` (`lists::get` takes lists too).
pub(super) fn get(c: &Call) -> Result<Val, RunError> {
    let [m, k] = c.args else { return c.bad() };
    let Some(entries) = entries_of(m) else { return c.bad() };
    let label = c.label.join(&deep_label(k));
    match search(entries, k)? {
        Ok(at) => match entries.get(at).and_then(|e| pair(e).map(|(_, v)| (e, v))) {
            Some((e, v)) => c.labelled(Value::some(v.value.clone()), label.join(&e.label).join(&v.label)),
            None => c.bad(),
        },
        Err(_) => c.plain(Value::none()),
    }
}

pub(super) fn contains_key(c: &Call) -> Result<Val, RunError> {
    let [m, k] = c.args else { return c.bad() };
    let Some(entries) = entries_of(m) else { return c.bad() };
    c.labelled(Value::Bool(search(entries, k)?.is_ok()), c.label.join(&deep_label(k)))
}

pub(super) fn insert(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [m, k, v] = c.args else { return c.bad() };
    let Some(entries) = entries_of(m) else { return c.bad() };
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

pub(super) fn remove(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [m, k] = c.args else { return c.bad() };
    let Some(entries) = entries_of(m) else { return c.bad() };
    let mut out: Vec<Val> = entries.to_vec();
    if let Ok(at) = search(entries, k)?
        && at < out.len()
    {
        out.remove(at);
    }
    budget.allocate(out.len() as u64 * SLOT_BYTES)?;
    Ok(map_val(out, m.label.join(&deep_label(k))))
}

/// `keys`, `values` and `entries`, in the keys' order.
pub(super) fn contents(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [m] = c.args else { return c.bad() };
    let Some(entries) = entries_of(m) else { return c.bad() };
    check_list_len(entries.len(), budget)?;
    let mut out = Vec::with_capacity(entries.len());
    for e in entries.iter() {
        let Some((k, v)) = pair(e) else { return c.bad() };
        out.push(match c.b {
            Builtin::Keys => Val { value: k.value.clone(), label: e.label.join(&k.label) },
            Builtin::Values => Val { value: v.value.clone(), label: e.label.join(&v.label) },
            _ => e.clone(),
        });
    }
    c.plain(Value::List(Arc::new(out)))
}
