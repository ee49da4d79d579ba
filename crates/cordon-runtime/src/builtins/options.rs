//! Options and results: which variant a value is, its payload or a default. Which variant it is
//! depends on the value's own label; a payload keeps its own too.

use std::sync::Arc;

use cordon_syntax::Builtin;

use super::common::Call;
use crate::error::RunError;
use crate::value::{Val, Value, Variant};

/// `is_some`, `is_none`, `is_ok` and `is_err`.
pub(super) fn is_variant(c: &Call) -> Result<Val, RunError> {
    let [x] = c.args else { return c.bad() };
    let Value::Variant(v) = &x.value else { return c.bad() };
    let want = match c.b {
        Builtin::IsSome => "Some",
        Builtin::IsNone => "None",
        Builtin::IsOk => "Ok",
        _ => "Err",
    };
    c.plain(Value::Bool(&*v.name == want))
}

pub(super) fn unwrap_or(c: &Call) -> Result<Val, RunError> {
    let [x, d] = c.args else { return c.bad() };
    let Value::Variant(v) = &x.value else { return c.bad() };
    match (&*v.name, v.payload.first()) {
        ("Some" | "Ok", Some(inner)) => c.labelled(inner.value.clone(), x.label.join(&inner.label)),
        _ => c.labelled(d.value.clone(), x.label.join(&d.label)),
    }
}

/// `ok_or(o, e)`: the payload keeps its own label; which variant it becomes depends on the
/// option.
pub(super) fn ok_or(c: &Call) -> Result<Val, RunError> {
    let [x, e] = c.args else { return c.bad() };
    let Value::Variant(v) = &x.value else { return c.bad() };
    let (name, payload) = match (&*v.enum_name, &*v.name, v.payload.first()) {
        ("Option", "Some", Some(inner)) => ("Ok", inner.clone()),
        ("Option", "None", None) => ("Err", e.clone()),
        _ => return c.bad(),
    };
    let value = Value::Variant(Arc::new(Variant::new("Result".into(), name.into(), vec![payload])));
    c.labelled(value, x.label.clone())
}
