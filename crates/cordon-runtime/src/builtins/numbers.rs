//! Numbers: `Int`, `Float` and `Decimal` (exact, or an error: never rounded unasked).

use cordon_syntax::Builtin;

use super::common::{Call, overflow, str_of};
use crate::decimal;
use crate::error::RunError;
use crate::value::{Val, Value};

pub(super) fn abs(c: &Call) -> Result<Val, RunError> {
    let [x] = c.args else { return c.bad() };
    match x.value {
        Value::Int(i) => c.plain(Value::Int(i.checked_abs().ok_or_else(overflow)?)),
        Value::Float(f) => c.plain(Value::Float(f.abs())),
        Value::Decimal(ref d) => c.plain(Value::decimal(d.abs())),
        _ => c.bad(),
    }
}

pub(super) fn min_or_max(c: &Call) -> Result<Val, RunError> {
    let [x, y] = c.args else { return c.bad() };
    let min = c.b == Builtin::Min;
    let pick_first = match (&x.value, &y.value) {
        (Value::Int(a), Value::Int(b)) => (a <= b) == min,
        (Value::Float(a), Value::Float(b)) => (a <= b) == min,
        (Value::Decimal(a), Value::Decimal(b)) => (a <= b) == min,
        _ => return c.bad(),
    };
    c.plain(if pick_first { x.value.clone() } else { y.value.clone() })
}

pub(super) fn round(c: &Call) -> Result<Val, RunError> {
    let [x, n] = c.args else { return c.bad() };
    let (Value::Decimal(x), Value::Int(n)) = (&x.value, &n.value) else { return c.bad() };
    c.plain(Value::decimal(decimal::round(**x, *n)?))
}

pub(super) fn div_round(c: &Call) -> Result<Val, RunError> {
    let [x, y, n] = c.args else { return c.bad() };
    let (Value::Decimal(x), Value::Decimal(y), Value::Int(n)) = (&x.value, &y.value, &n.value) else {
        return c.bad();
    };
    c.plain(Value::decimal(decimal::div_round(**x, **y, *n)?))
}

pub(super) fn parse_decimal(c: &Call) -> Result<Val, RunError> {
    let [s] = c.args else { return c.bad() };
    let Some(s) = str_of(s) else { return c.bad() };
    c.plain(match decimal::parse(s) {
        Some(d) => Value::some(Value::decimal(d)),
        None => Value::none(),
    })
}
