//! Dates, instants and durations (`jiff`): ISO 8601 text in and out, and arithmetic that is
//! exact or an error. A `DateTime` is an instant, always written in UTC; a plan has no clock of
//! its own (the host's time reaches it only through a tool a policy declares).

use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::error::{ErrorKind, RunError};

/// The longest text `parse_date`/`parse_datetime` read; longer text is not a date.
const MAX_TEXT: usize = 64;

/// A date, an instant or a duration: the three kinds of time a plan can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Time {
    /// A calendar date, `2026-12-01`.
    Date(#[serde(with = "text")] Date),
    /// An instant, `2026-12-01T09:30:00Z`.
    DateTime(#[serde(with = "text")] Timestamp),
    /// A signed duration, `PT1H30M`.
    Duration(#[serde(with = "text")] SignedDuration),
}

impl Time {
    /// `Date`, `DateTime` or `Duration`, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Time::Date(_) => "a Date",
            Time::DateTime(_) => "a DateTime",
            Time::Duration(_) => "a Duration",
        }
    }
}

/// ISO 8601: `2026-12-01`, `2026-12-01T09:30:00Z`, `PT1H30M`.
impl std::fmt::Display for Time {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Time::Date(d) => write!(f, "{d}"),
            Time::DateTime(t) => write!(f, "{t}"),
            Time::Duration(d) => write!(f, "{d}"),
        }
    }
}

/// Saved as its ISO 8601 text.
mod text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<T: std::fmt::Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, T: std::str::FromStr, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(|_| serde::de::Error::custom("not an ISO 8601 date, instant or duration"))
    }
}

fn error(message: impl Into<String>) -> RunError {
    RunError::new(ErrorKind::Arithmetic, Default::default(), message)
}

/// A date written `YYYY-MM-DD`, nothing else.
pub fn parse_date(s: &str) -> Option<Time> {
    let s = s.trim();
    let plain = s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    if !plain {
        return None;
    }
    s.parse::<Date>().ok().map(Time::Date)
}

/// An instant written as RFC 3339 / ISO 8601 with its offset (`Z` or `+01:00`); text without
/// an offset names no instant and is refused.
pub fn parse_datetime(s: &str) -> Option<Time> {
    let s = s.trim();
    if s.is_empty() || s.len() > MAX_TEXT {
        return None;
    }
    s.parse::<Timestamp>().ok().map(Time::DateTime)
}

/// A duration written in ISO 8601 (`PT1H30M`, `-PT5S`), as tools send one; `jiff`'s other
/// ("friendly") forms are refused, so that one text means one thing everywhere.
pub fn parse_duration(s: &str) -> Option<Time> {
    let s = s.trim();
    if s.len() > MAX_TEXT || !s.trim_start_matches(['-', '+']).starts_with(['P', 'p']) {
        return None;
    }
    s.parse::<SignedDuration>().ok().map(Time::Duration)
}

/// `n` seconds (`unit` seconds each: 1, 60, 3600 or 86400), or an error where that is more
/// than a duration holds.
pub fn duration(n: i64, unit: i64) -> Result<Time, RunError> {
    n.checked_mul(unit)
        .map(|secs| Time::Duration(SignedDuration::from_secs(secs)))
        .ok_or_else(|| error(format!("a duration of {n} × {unit} seconds is out of range")))
}

/// `d` moved by `n` days, or an error outside the years -9999 to 9999.
pub fn add_days(d: Time, n: i64) -> Option<Result<Time, RunError>> {
    let Time::Date(d) = d else { return None };
    let moved = jiff::Span::new().try_days(n).and_then(|span| d.checked_add(span));
    Some(moved.map(Time::Date).map_err(|_| error(format!("{d} moved by {n} days is out of the range of dates"))))
}

/// The days from `a` to `b` (negative if `b` is earlier).
pub fn days_between(a: Time, b: Time) -> Option<i64> {
    let (Time::Date(a), Time::Date(b)) = (a, b) else { return None };
    a.until((jiff::Unit::Day, b)).ok().map(|span| i64::from(span.get_days()))
}

/// `a + b` or `a - b`: an instant and a duration, two durations, or (for `-`) two instants.
pub fn add_or_sub(a: Time, b: Time, sub: bool) -> Option<Result<Time, RunError>> {
    let out_of_range = || error("the result is out of the range of dates (years -9999 to 9999) or durations");
    Some(match (a, b) {
        (Time::DateTime(t), Time::Duration(d)) => {
            let r = if sub { t.checked_sub(d) } else { t.checked_add(d) };
            r.map(Time::DateTime).map_err(|_| out_of_range())
        }
        (Time::Duration(x), Time::Duration(y)) => {
            let r = if sub { x.checked_sub(y) } else { x.checked_add(y) };
            r.map(Time::Duration).ok_or_else(out_of_range)
        }
        (Time::DateTime(x), Time::DateTime(y)) if sub => Ok(Time::Duration(x.duration_since(y))),
        _ => return None,
    })
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "a test fails loudly")]
mod tests {
    use super::*;

    #[test]
    fn text_is_iso_8601_and_nothing_else() {
        assert_eq!(parse_date(" 2026-12-01 ").unwrap().to_string(), "2026-12-01");
        for bad in ["2026-02-30", "2026-13-01", "26-12-01", "2026/12/01", "2026-12-1", "", "2026-12-01T00:00:00Z"] {
            assert_eq!(parse_date(bad), None, "{bad:?}");
        }
        let t = parse_datetime("2026-12-01T10:30:00+01:00").unwrap();
        assert_eq!(t.to_string(), "2026-12-01T09:30:00Z");
        for bad in ["2026-12-01T10:30:00", "2026-12-01", "yesterday", "", "2026-12-01T25:00:00Z", &"9".repeat(5000)] {
            assert_eq!(parse_datetime(bad), None, "{bad:?}");
        }
        assert_eq!(parse_duration("PT1H30M").unwrap().to_string(), "PT1H30M");
        assert_eq!(parse_duration("-PT5S").unwrap().to_string(), "-PT5S");
        for bad in ["1 hour", "45m", "", "P", "PT", "P1Y"] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn arithmetic_is_exact_or_an_error() {
        let t = parse_datetime("2026-12-01T09:30:00Z").unwrap();
        let hour = duration(1, 3600).unwrap();
        assert_eq!(add_or_sub(t, hour, false).unwrap().unwrap().to_string(), "2026-12-01T10:30:00Z");
        assert_eq!(add_or_sub(t, hour, true).unwrap().unwrap().to_string(), "2026-12-01T08:30:00Z");
        let later = add_or_sub(t, duration(2, 86_400).unwrap(), false).unwrap().unwrap();
        assert_eq!(add_or_sub(later, t, true).unwrap().unwrap(), duration(48, 3600).unwrap());
        assert!(duration(i64::MAX, 60).is_err());
        assert!(add_or_sub(t, duration(i64::MAX / 86_400, 86_400).unwrap(), false).unwrap().is_err());
        let max = duration(i64::MAX, 1).unwrap();
        assert!(add_or_sub(max, hour, false).unwrap().is_err());
        assert!(add_or_sub(hour, t, false).is_none(), "a duration plus an instant is not defined");
        assert!(add_or_sub(t, t, false).is_none());
    }

    #[test]
    fn dates_move_and_count_by_whole_days() {
        let d = parse_date("2028-02-28").unwrap();
        assert_eq!(add_days(d, 1).unwrap().unwrap().to_string(), "2028-02-29");
        assert_eq!(add_days(d, 2).unwrap().unwrap().to_string(), "2028-03-01");
        assert_eq!(add_days(d, -365).unwrap().unwrap().to_string(), "2027-02-28");
        let later = parse_date("2029-03-01").unwrap();
        assert_eq!(days_between(d, later), Some(367));
        assert_eq!(days_between(later, d), Some(-367));
        assert!(add_days(d, 10_000_000).unwrap().is_err());
        assert!(add_days(d, i64::MAX).unwrap().is_err());
        assert!(add_days(duration(1, 1).unwrap(), 1).is_none());
        let (first, last) = (parse_date("0001-01-01").unwrap(), parse_date("9999-12-31").unwrap());
        assert_eq!(days_between(first, last), Some(3_652_058));
        assert!(add_days(last, 1).unwrap().is_err());
    }
}
