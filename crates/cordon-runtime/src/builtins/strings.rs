//! Strings: tests, changes, splitting and joining, patterns. Positions and lengths count
//! characters, never bytes.

use std::sync::Arc;

use cordon_syntax::{Builtin, pattern};

use super::common::{
    Budget, Call, bounds, check_list_len, check_string_len, elements_label, int_text, list_of, out_of_range, overflow,
    str_of, string,
};
use crate::error::{ErrorKind, RunError};
use crate::value::{Val, Value};

/// `contains` of two strings (`lists::contains` takes lists).
pub(super) fn contains(c: &Call) -> Result<Val, RunError> {
    let [s, t] = c.args else { return c.bad() };
    let (Some(s), Some(t)) = (str_of(s), str_of(t)) else { return c.bad() };
    c.plain(Value::Bool(s.contains(t)))
}

pub(super) fn starts_or_ends_with(c: &Call) -> Result<Val, RunError> {
    let [s, t] = c.args else { return c.bad() };
    let (Some(s), Some(t)) = (str_of(s), str_of(t)) else { return c.bad() };
    c.plain(Value::Bool(if c.b == Builtin::StartsWith { s.starts_with(t) } else { s.ends_with(t) }))
}

/// `to_upper`, `to_lower` and `trim`.
pub(super) fn changed(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [s] = c.args else { return c.bad() };
    let Some(s) = str_of(s) else { return c.bad() };
    let out = match c.b {
        Builtin::ToUpper => s.to_uppercase(),
        Builtin::ToLower => s.to_lowercase(),
        _ => s.trim().to_string(),
    };
    c.plain(string(out, budget)?)
}

pub(super) fn split(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [s, sep] = c.args else { return c.bad() };
    let (Some(s), Some(sep)) = (str_of(s), str_of(sep)) else { return c.bad() };
    let parts: Vec<&str> =
        if sep.is_empty() { s.split_terminator("").skip(1).collect() } else { s.split(sep).collect() };
    check_list_len(parts.len(), budget)?;
    budget.allocate(s.len() as u64)?;
    c.plain(Value::List(Arc::new(parts.into_iter().map(|p| Val::plain(Value::str(p))).collect())))
}

/// `join` of a list of strings with a separator, or of two labels (in `@label` values).
pub(super) fn join(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [xs, sep] = c.args else { return c.bad() };
    if let (Value::Label(a), Value::Label(b)) = (&xs.value, &sep.value) {
        return c.plain(Value::Label(Arc::new(a.join(b))));
    }
    let (Some(list), Some(sep)) = (list_of(xs), str_of(sep)) else { return c.bad() };
    let mut len = sep.len().saturating_mul(list.len());
    for x in list.iter() {
        len = len.saturating_add(str_of(x).map_or(0, str::len));
    }
    check_string_len(len, budget)?;
    let mut out = String::with_capacity(len);
    for (i, x) in list.iter().enumerate() {
        let Some(s) = str_of(x) else { return c.bad() };
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(s);
    }
    c.labelled(string(out, budget)?, c.label.join(&elements_label(list)))
}

pub(super) fn to_string(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [x] = c.args else { return c.bad() };
    match &x.value {
        Value::Int(i) => c.plain(int_text(*i, budget)?),
        Value::Float(f) => c.plain(string(format!("{f:?}"), budget)?),
        Value::Decimal(d) => c.plain(string(d.to_string(), budget)?),
        Value::Time(t) => c.plain(string(t.to_string(), budget)?),
        Value::Bool(v) => c.plain(string(v.to_string(), budget)?),
        Value::Str(s) => c.plain(Value::Str(s.clone())),
        _ => c.bad(),
    }
}

pub(super) fn parse_int(c: &Call) -> Result<Val, RunError> {
    let [s] = c.args else { return c.bad() };
    let Some(s) = str_of(s) else { return c.bad() };
    c.plain(match s.trim().parse::<i64>() {
        Ok(i) => Value::some(Value::Int(i)),
        Err(_) => Value::none(),
    })
}

pub(super) fn find(c: &Call) -> Result<Val, RunError> {
    let [s, t] = c.args else { return c.bad() };
    let (Some(s), Some(t)) = (str_of(s), str_of(t)) else { return c.bad() };
    c.plain(match s.find(t) {
        Some(at) => Value::some(Value::Int(char_count(s.get(..at).unwrap_or(""))?)),
        None => Value::none(),
    })
}

pub(super) fn replace(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [s, from, to] = c.args else { return c.bad() };
    let (Some(s), Some(from), Some(to)) = (str_of(s), str_of(from), str_of(to)) else { return c.bad() };
    // The result's size is known before it is built: an empty pattern matches at every
    // character boundary, as `str::replace` replaces it.
    let n = s.matches(from).count();
    let len = (s.len() - n.saturating_mul(from.len()).min(s.len())).saturating_add(n.saturating_mul(to.len()));
    check_string_len(len, budget)?;
    c.plain(string(s.replace(from, to), budget)?)
}

/// The characters `a..b` of the string `s` (`slice(s, a, b)`).
pub(super) fn slice(c: &Call, s: &str, a: i64, b: i64, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let (from, to) = char_range(s, a, b)?;
    c.plain(string(s.get(from..to).unwrap_or("").to_string(), budget)?)
}

pub(super) fn lines_or_words(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [s] = c.args else { return c.bad() };
    let Some(s) = str_of(s) else { return c.bad() };
    let parts: Vec<&str> = if c.b == Builtin::Lines { s.lines().collect() } else { s.split_whitespace().collect() };
    check_list_len(parts.len(), budget)?;
    budget.allocate(s.len() as u64)?;
    c.plain(Value::List(Arc::new(parts.into_iter().map(|p| Val::plain(Value::str(p))).collect())))
}

pub(super) fn repeat(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [s, n] = c.args else { return c.bad() };
    let (Some(s), Value::Int(n)) = (str_of(s), &n.value) else { return c.bad() };
    let Ok(n) = usize::try_from(*n) else {
        return Err(out_of_range(format!("`repeat` needs a count of 0 or more, not {n}")));
    };
    check_string_len(s.len().saturating_mul(n), budget)?;
    c.plain(string(s.repeat(n), budget)?)
}

/// `pad_left` and `pad_right`: to `width` characters with one fill character.
pub(super) fn pad(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [s, width, fill] = c.args else { return c.bad() };
    let (Some(s), Value::Int(width), Some(fill)) = (str_of(s), &width.value, str_of(fill)) else {
        return c.bad();
    };
    let mut fills = fill.chars();
    let (Some(fill), None) = (fills.next(), fills.next()) else {
        return Err(out_of_range(format!("the fill of `{}` must be one character, not {fill:?}", c.b.name())));
    };
    let have = s.chars().count();
    let extra = usize::try_from(*width).unwrap_or(0).saturating_sub(have);
    check_string_len(s.len().saturating_add(extra.saturating_mul(fill.len_utf8())), budget)?;
    let padding: String = std::iter::repeat_n(fill, extra).collect();
    let out = if c.b == Builtin::PadLeft { padding + s } else { format!("{s}{padding}") };
    c.plain(string(out, budget)?)
}

/// `matches`, `find_all` and `captures`: a pattern in linear time, on text of a bounded size.
pub(super) fn pattern(c: &Call, budget: &mut dyn Budget) -> Result<Val, RunError> {
    let [s, p] = c.args else { return c.bad() };
    let (Some(s), Some(p)) = (str_of(s), str_of(p)) else { return c.bad() };
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
    match c.b {
        Builtin::Matches => c.plain(Value::Bool(re.is_match(s))),
        Builtin::FindAll => {
            let mut found = Vec::new();
            for m in re.find_iter(s) {
                check_list_len(found.len() + 1, budget)?;
                found.push(Val::plain(Value::str(m.as_str())));
            }
            budget.allocate(s.len() as u64)?;
            c.plain(Value::List(Arc::new(found)))
        }
        _ => match re.captures(s) {
            Some(groups) => {
                check_list_len(groups.len(), budget)?;
                budget.allocate(s.len() as u64)?;
                let parts = groups.iter().map(|g| Val::plain(Value::str(g.map_or("", |g| g.as_str())))).collect();
                c.plain(Value::some(Value::List(Arc::new(parts))))
            }
            None => c.plain(Value::none()),
        },
    }
}

/// The number of characters in `s`, as an `Int`.
fn char_count(s: &str) -> Result<i64, RunError> {
    i64::try_from(s.chars().count()).map_err(|_| overflow())
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
