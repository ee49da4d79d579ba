//! Exact decimal arithmetic for `Decimal` values (`rust_decimal`: a 96-bit integer over a power
//! of ten, at most 28 places). The checker reasons about decimals as real numbers, so every
//! operation here gives the exact result or an error, never a rounded one: `rust_decimal`
//! rounds silently where a result does not fit, and each function below detects that and stops.
//! Only `round` and `div_round` round, as their names say (halves away from zero).

use rust_decimal::{Decimal, RoundingStrategy};

use crate::error::{ErrorKind, RunError};

/// The most places a `Decimal` has after the point.
pub const MAX_PLACES: u32 = 28;

/// The most characters `parse_decimal` reads: a sign, 29 digits and a point fit with room to
/// spare; a longer text is not a `Decimal`.
const MAX_TEXT: usize = 64;

fn error(message: impl Into<String>) -> RunError {
    RunError::new(ErrorKind::Arithmetic, Default::default(), message)
}

fn too_large(op: &str) -> RunError {
    error(format!("decimal overflow in `{op}`: the exact result does not fit in a Decimal"))
}

pub fn add(a: Decimal, b: Decimal) -> Result<Decimal, RunError> {
    sum_or_difference(a, b, false)
}

pub fn sub(a: Decimal, b: Decimal) -> Result<Decimal, RunError> {
    sum_or_difference(a, b, true)
}

/// `rust_decimal` adds at the larger scale and, only when the result overflows there, drops
/// places with rounding: a result with fewer places than its operands' may have been rounded,
/// and is refused.
fn sum_or_difference(a: Decimal, b: Decimal, sub: bool) -> Result<Decimal, RunError> {
    let op = if sub { "-" } else { "+" };
    let r = if sub { a.checked_sub(b) } else { a.checked_add(b) }.ok_or_else(|| too_large(op))?;
    if r.scale() < a.scale().max(b.scale()) {
        return Err(too_large(op));
    }
    Ok(r)
}

/// `a * b`, exact, with the places of both operands (`12.50d * 3d` is `37.50`). Where those
/// would be more than 28 places or 96 bits, the operands' trailing zeros are dropped and it is
/// tried again; a product that still does not fit is an error.
pub fn mul(a: Decimal, b: Decimal) -> Result<Decimal, RunError> {
    exact_product(a, b)
        .or_else(|| exact_product(a.normalize(), b.normalize()))
        .ok_or_else(|| error("decimal overflow in `*`: the exact product needs more than 28 places or 96 bits"))
}

/// `rust_decimal` multiplies at the sum of the scales and rounds only when that does not fit.
fn exact_product(a: Decimal, b: Decimal) -> Option<Decimal> {
    let places = a.scale() + b.scale();
    let r = a.checked_mul(b)?;
    (places <= MAX_PLACES && r.scale() == places).then_some(r)
}

/// `a / b`, exact: a quotient with no exact Decimal form (`1d / 3d`) is an error
/// (`div_round` rounds it).
pub fn div(a: Decimal, b: Decimal) -> Result<Decimal, RunError> {
    if b.is_zero() {
        return Err(error("division by zero"));
    }
    let q = a.checked_div(b).ok_or_else(|| too_large("/"))?;
    match mul(q, b) {
        Ok(back) if back == a => Ok(q.normalize()),
        _ => Err(error(format!("{a} / {b} has no exact decimal form: round it with `div_round(a, b, places)`"))),
    }
}

fn places(places: i64) -> Result<u32, RunError> {
    u32::try_from(places)
        .ok()
        .filter(|p| *p <= MAX_PLACES)
        .ok_or_else(|| error(format!("cannot round to {places} places: from 0 to {MAX_PLACES}")))
}

/// `d` rounded to `places` places, halves away from zero (`2.345d` to 2 places is `2.35`).
pub fn round(d: Decimal, to: i64) -> Result<Decimal, RunError> {
    let to = places(to)?;
    Ok(d.round_dp_with_strategy(to, RoundingStrategy::MidpointAwayFromZero))
}

/// `a / b` rounded to `places` places, halves away from zero. `rust_decimal`'s quotient is
/// itself rounded (to 28 significant digits), so the result is checked against `a` exactly: the
/// remainder `a - r * b` must be at most half a unit of the last place, on the side the rounding
/// rule allows; where that cannot be shown exactly, the run stops rather than guess.
pub fn div_round(a: Decimal, b: Decimal, to: i64) -> Result<Decimal, RunError> {
    let to = places(to)?;
    if b.is_zero() {
        return Err(error("division by zero"));
    }
    let q = a.checked_div(b).ok_or_else(|| too_large("div_round"))?;
    let r = q.round_dp_with_strategy(to, RoundingStrategy::MidpointAwayFromZero);
    let unclear = || error(format!("cannot round {a} / {b} to {to} places exactly"));
    // The exact quotient is r + e / b; r is right when 2|e| * 10^to < |b|, or on a tie when r
    // lies away from zero.
    let e = sub(a, mul(r, b).map_err(|_| unclear())?).map_err(|_| unclear())?;
    let scaled = mul(e.abs(), Decimal::TWO).and_then(|x| mul(x, pow10(to)?)).map_err(|_| unclear())?;
    match scaled.cmp(&b.abs()) {
        std::cmp::Ordering::Less => Ok(r),
        // A tie: the exact quotient is r + e/b, and r must be the one farther from zero.
        std::cmp::Ordering::Equal
            if !r.is_zero() && (e.is_sign_negative() != b.is_sign_negative()) == r.is_sign_positive() =>
        {
            Ok(r)
        }
        _ => Err(unclear()),
    }
}

fn pow10(n: u32) -> Result<Decimal, RunError> {
    let ten = i128::from(10u8);
    let p = ten.checked_pow(n).ok_or_else(|| too_large("div_round"))?;
    Decimal::try_from_i128_with_scale(p, 0).map_err(|_| too_large("div_round"))
}

/// The text's Decimal: an optional sign, digits and at most one point (`"12.50"`, `"-3"`), at
/// most 28 places, nothing else (no exponent, no separators; whitespace around is ignored).
pub fn parse(s: &str) -> Option<Decimal> {
    let s = s.trim();
    if s.is_empty() || s.len() > MAX_TEXT {
        return None;
    }
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !ok(whole) || !ok(frac) || (digits.contains('.') && frac.is_empty()) {
        return None;
    }
    Decimal::from_str_exact(s.strip_prefix('+').unwrap_or(s)).ok()
}

/// The Decimal of an `Int`, exactly (every `i64` fits).
pub fn from_int(i: i64) -> Decimal {
    Decimal::from(i)
}

/// The most significant digits a decimal may have and still be read back exactly from the
/// binary float a JSON parser made of it: every decimal of at most 15 digits is the shortest
/// text of the nearest float (IEEE 754 doubles hold 15 decimal digits exactly).
pub const FLOAT_DIGITS: u32 = 15;

/// The decimal a JSON number stands for, where a parser gave it to us as the binary float
/// `x`: the shortest text that reads back as `x`, if it has at most [`FLOAT_DIGITS`]
/// significant digits (then it is the number its sender wrote, if they wrote at most that
/// many). `None` for a float with more (its sender's text cannot be known) or not finite.
pub fn from_float_text(x: f64) -> Option<Decimal> {
    if !x.is_finite() {
        return None;
    }
    // `{}` of an f64 is its shortest round-trip text, never in exponent form.
    let text = format!("{x}");
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0').len();
    if significant as u32 > FLOAT_DIGITS {
        return None;
    }
    parse(&text)
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "a test fails loudly")]
mod tests {
    use super::*;

    #[test]
    fn a_float_is_a_decimal_only_where_its_text_is_exact() {
        assert_eq!(from_float_text(12.5), Some(d("12.5")));
        assert_eq!(from_float_text(0.1), Some(d("0.1")));
        assert_eq!(from_float_text(1000.01), Some(d("1000.01")));
        assert_eq!(from_float_text(-0.000123), Some(d("-0.000123")));
        assert_eq!(from_float_text(123456789012345.0), Some(d("123456789012345")));
        assert_eq!(from_float_text(1e20), Some(d("100000000000000000000")));
        // 16 and 17 significant digits: the sender's text cannot be known.
        assert_eq!(from_float_text(0.1 + 0.2), None);
        assert_eq!(from_float_text(1234567890123456.0), None);
        assert_eq!(from_float_text(1234567.890123456), None);
        assert_eq!(from_float_text(f64::NAN), None);
        assert_eq!(from_float_text(f64::INFINITY), None);
    }

    fn d(s: &str) -> Decimal {
        parse(s).unwrap()
    }

    #[test]
    fn arithmetic_is_exact_or_an_error() {
        assert_eq!(add(d("0.1"), d("0.2")).ok(), Some(d("0.3")));
        assert_eq!(sub(d("1000.00"), d("0.01")).map(|x| x.to_string()).ok(), Some("999.99".into()));
        assert_eq!(mul(d("1.50"), d("2.0")).map(|x| x.to_string()).ok(), Some("3.000".into()));
        assert_eq!(mul(d("12.50"), d("3")).map(|x| x.to_string()).ok(), Some("37.50".into()));
        assert_eq!(mul(d("0"), Decimal::MAX).ok(), Some(d("0")));
        assert_eq!(div(d("10"), d("4")).ok(), Some(d("2.5")));
        assert!(div(d("1"), d("3")).is_err(), "1/3 has no exact decimal form");
        assert!(div(d("1"), d("0")).is_err());
        let max = Decimal::MAX;
        assert!(add(max, d("1")).is_err());
        assert!(sub(Decimal::MIN, d("1")).is_err());
        // Near the largest value, rust_decimal would round away the fraction: refused.
        assert!(add(d("79228162514264337593543950334"), d("0.5")).is_err());
        assert!(sub(d("-79228162514264337593543950334"), d("0.5")).is_err());
        assert!(mul(max, d("2")).is_err());
        // 28 places times 28 places needs 56: refused rather than rounded.
        let tiny = d("0.0000000000000000000000000001");
        assert!(mul(tiny, tiny).is_err());
        assert!(mul(d("0.00000000000001"), d("0.00000000000001")).is_ok());
    }

    #[test]
    fn rounding_is_half_away_from_zero_and_checked() {
        assert_eq!(round(d("2.345"), 2).ok(), Some(d("2.35")));
        assert_eq!(round(d("-2.345"), 2).ok(), Some(d("-2.35")));
        assert_eq!(round(d("2.5"), 0).ok(), Some(d("3")));
        assert!(round(d("2.5"), -1).is_err());
        assert!(round(d("2.5"), 29).is_err());
        assert_eq!(div_round(d("100"), d("3"), 2).ok(), Some(d("33.33")));
        assert_eq!(div_round(d("200"), d("3"), 2).ok(), Some(d("66.67")));
        assert_eq!(div_round(d("-200"), d("3"), 2).ok(), Some(d("-66.67")));
        assert_eq!(div_round(d("1"), d("8"), 2).ok(), Some(d("0.13")));
        assert_eq!(div_round(d("-1"), d("8"), 2).ok(), Some(d("-0.13")));
        assert_eq!(div_round(d("1"), d("-8"), 2).ok(), Some(d("-0.13")));
        assert!(div_round(d("1"), d("0"), 2).is_err());
        assert!(div_round(d("1"), d("3"), 40).is_err());
    }

    #[test]
    fn parsing_takes_plain_decimals_only() {
        assert_eq!(parse(" 12.50 ").map(|x| x.to_string()), Some("12.50".into()));
        assert_eq!(parse("+3"), Some(d("3")));
        assert_eq!(parse("-0.5"), Some(d("-0.5")));
        for bad in ["", "-", ".5", "5.", "1e3", "1,000", "NaN", "inf", "0x10", "1.2.3", "--1", "1_000"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        assert_eq!(parse("0.00000000000000000000000000001"), None, "29 places");
        assert_eq!(parse("79228162514264337593543950336"), None, "2^96");
        assert_eq!(parse(&"9".repeat(10_000)), None);
    }
}
