//! Dates, UTC instants and durations: ISO 8601 text and arithmetic, exact or an error.

use cordon_syntax::Builtin;

use super::common::{Call, str_of};
use crate::error::RunError;
use crate::time;
use crate::value::{Val, Value};

/// `parse_date` and `parse_datetime`: `None` for text that is not one.
pub(super) fn parse(c: &Call) -> Result<Val, RunError> {
    let [s] = c.args else { return c.bad() };
    let Some(s) = str_of(s) else { return c.bad() };
    let parsed = if c.b == Builtin::ParseDate { time::parse_date(s) } else { time::parse_datetime(s) };
    c.plain(parsed.map_or_else(Value::none, |t| Value::some(Value::time(t))))
}

/// `seconds`, `minutes`, `hours` and `days` (a day is 24 hours).
pub(super) fn duration(c: &Call) -> Result<Val, RunError> {
    let [n] = c.args else { return c.bad() };
    let Value::Int(n) = n.value else { return c.bad() };
    let unit = match c.b {
        Builtin::Seconds => 1,
        Builtin::Minutes => 60,
        Builtin::Hours => 3_600,
        _ => 86_400,
    };
    c.plain(Value::time(time::duration(n, unit)?))
}

pub(super) fn add_days(c: &Call) -> Result<Val, RunError> {
    let [d, n] = c.args else { return c.bad() };
    let (Value::Time(d), Value::Int(n)) = (&d.value, &n.value) else { return c.bad() };
    match time::add_days(**d, *n) {
        Some(moved) => c.plain(Value::time(moved?)),
        None => c.bad(),
    }
}

pub(super) fn days_between(c: &Call) -> Result<Val, RunError> {
    let [a, b] = c.args else { return c.bad() };
    let (Value::Time(a), Value::Time(b)) = (&a.value, &b.value) else { return c.bad() };
    match time::days_between(**a, **b) {
        Some(n) => c.plain(Value::Int(n)),
        None => c.bad(),
    }
}
