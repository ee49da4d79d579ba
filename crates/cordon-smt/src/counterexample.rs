//! Reading a counterexample out of a Z3 model.
//!
//! Every free constant of the query gets a value, and so does every application of a declared
//! function to constants and literals that occurs in the query (`tainted(s)`, `len(xs)`): those
//! are what make a counterexample readable. Values are printed for people: `-3`, `1/2`, `true`,
//! `"abc"`, and uninterpreted values the way Z3 names them (`Repo!val!0`).

use std::fmt::{self, Write as _};

use z3::Model;
use z3::ast::{self, Ast, Int};

use crate::encode::{self, Encoder, Internal, Z};
use crate::sortcheck::WellSorted;

/// Strings longer than this are not read character by character (see
/// [`encode::decode_z3_string`]); their possibly ambiguous text is shown as Z3 gives it.
const MAX_CHAR_BY_CHAR: i64 = 4096;

pub(crate) fn read(
    model: &Model,
    ws: &WellSorted<'_>,
    encoder: &mut Encoder<'_, '_>,
) -> Result<Vec<(String, String)>, Internal> {
    let mut entries = Vec::with_capacity(ws.vars.len() + ws.shown_apps.len());
    for (i, &(name, _)) in ws.vars.iter().enumerate() {
        let constant = encoder.var(i).cloned().ok_or_else(|| "internal error: lost a constant".to_owned())?;
        entries.push((name.to_owned(), value(model, &constant, encoder)));
    }
    for app in &ws.shown_apps {
        let z = encoder.term(app)?;
        entries.push((app.to_string(), value(model, &z, encoder)));
    }
    entries.sort();
    entries.dedup_by(|a, b| a.0 == b.0);
    Ok(entries)
}

fn value(model: &Model, z: &Z, encoder: &Encoder<'_, '_>) -> String {
    const UNAVAILABLE: &str = "?";
    match z {
        Z::Bool(b) => match model.eval(b, true).and_then(|v| v.as_bool()) {
            Some(v) => v.to_string(),
            None => UNAVAILABLE.to_owned(),
        },
        Z::Int(i) => match model.eval(i, true) {
            Some(v) => match v.as_i128() {
                Some(n) => n.to_string(),
                None => numeral_text(&text(&v)),
            },
            None => UNAVAILABLE.to_owned(),
        },
        Z::Real(r) => match model.eval(r, true) {
            Some(v) => match v.as_rational() {
                Some((num, 1)) => num.to_string(),
                Some((num, den)) => format!("{num}/{den}"),
                None => numeral_text(&text(&v)),
            },
            None => UNAVAILABLE.to_owned(),
        },
        Z::Str(s) => match model.eval(s, true) {
            Some(v) => string_value(model, &v, encoder),
            None => UNAVAILABLE.to_owned(),
        },
        Z::Named(d) => match model.eval(d, true) {
            Some(v) => {
                // Z3 quotes names like `|List[Int]!val!0|` as SMT-LIB symbols; people need not see that.
                let name = text(&v);
                match name.strip_prefix('|').and_then(|t| t.strip_suffix('|')) {
                    Some(inner) => inner.to_owned(),
                    None => name,
                }
            }
            None => UNAVAILABLE.to_owned(),
        },
    }
}

/// A string value, quoted and escaped like a Rust string literal.
fn string_value(model: &Model, value: &ast::String, encoder: &Encoder<'_, '_>) -> String {
    let Some(z3_text) = value.as_string() else { return text(value) };
    let codes = encode::decode_z3_string(&z3_text).or_else(|| char_by_char(model, value));
    let Some(codes) = codes else { return format!("{z3_text:?}") };
    let mut out = String::from('"');
    for code in codes {
        match encoder.alphabet.char_of(code) {
            Some(c) => out.extend(c.escape_debug()),
            None => {
                let _ = write!(out, "\\u{{{code:x}}}");
            }
        }
    }
    out.push('"');
    out
}

fn char_by_char(model: &Model, value: &ast::String) -> Option<Vec<u32>> {
    let len = model.eval(&value.length(), true)?.as_i64()?;
    if !(0..=MAX_CHAR_BY_CHAR).contains(&len) {
        return None;
    }
    (0..len)
        .map(|i| {
            let c = model.eval(&value.at(Int::from_i64(i)), true)?.simplify();
            encode::decode_z3_char(&c.as_string()?)
        })
        .collect()
}

/// Z3's text for a term. (`to_string` would panic if Z3 failed to print it.)
fn text(term: &impl fmt::Display) -> String {
    let mut out = String::new();
    match write!(out, "{term}") {
        Ok(()) => out,
        Err(_) => "?".to_owned(),
    }
}

/// Z3 prints numerals that do not fit in machine integers as SMT-LIB: `(- 12)`, `(/ 1.0 3.0)`.
fn numeral_text(smt: &str) -> String {
    let s = smt.trim();
    if let Some(inner) = s.strip_prefix("(- ").and_then(|r| r.strip_suffix(')')) {
        return format!("-{}", numeral_text(inner));
    }
    if let Some(inner) = s.strip_prefix("(/ ").and_then(|r| r.strip_suffix(')'))
        && let Some((num, den)) = inner.split_once(' ')
    {
        return format!("{}/{}", numeral_text(num), numeral_text(den));
    }
    s.strip_suffix(".0").unwrap_or(s).to_owned()
}
