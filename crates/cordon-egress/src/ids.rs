//! The never tier's identifiers made of letters and digits: IBANs (the country's format and
//! the mod-97 check digits, by the `iban_validate` crate), UK National Insurance numbers
//! (prefix rules) and Spanish DNIs and NIEs (the check letter).

use std::ops::Range;

use regex::Regex;

use crate::category::Category;
use crate::checksum;
use crate::context::preceded_by;
use crate::finding::Finding;
use crate::patterns::fixed;

/// The identifier patterns, compiled once per scanner.
#[derive(Debug)]
pub struct Ids {
    iban: Regex,
    nino: Regex,
    dni: Regex,
}

/// Words that, just before a code, say it is a product's or an error's, not a person's.
pub const NOT_AN_ID: &[&str] = &[
    "part", "sku", "model", "serial", "code", "error", "ref", "order", "item", "product", "ticket", "invoice", "flight",
];

impl Ids {
    /// The compiled patterns.
    pub fn new() -> Ids {
        Ids {
            // A country code, two check digits, then 10 to 30 letters and digits, in groups of
            // four or not; the candidate is cut back to the length that validates.
            iban: fixed(r"(?-u:\b)[A-Za-z]{2}[0-9]{2}(?: ?[A-Za-z0-9]){10,30}(?-u:\b)"),
            nino: fixed(r"(?-u:\b)[A-Z]{2} ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D](?-u:\b)"),
            dni: fixed(r"(?-u:\b)(?:[0-9]{8}|[XYZ]-?[0-9]{7})-?[A-Z](?-u:\b)"),
        }
    }

    /// The IBANs, National Insurance numbers and DNIs of `text`.
    pub fn find(&self, text: &str, out: &mut Vec<Finding>) {
        for m in self.iban.find_iter(text) {
            if let Some(span) = iban(text, m.range()) {
                out.push(Finding::new(Category::Iban, span));
            }
        }
        for m in self.nino.find_iter(text) {
            let compact = compact(m.as_str());
            let &[first, second, ..] = compact.as_slice() else { continue };
            if checksum::nino_prefix(first, second) && !preceded_by(text, m.start(), 24, 3, NOT_AN_ID) {
                out.push(Finding::new(Category::UkNino, m.range()));
            }
        }
        for m in self.dni.find_iter(text) {
            let compact = compact(m.as_str());
            let Some((&letter, number)) = compact.split_last() else { continue };
            if checksum::dni(number, letter) && !preceded_by(text, m.start(), 24, 3, NOT_AN_ID) {
                out.push(Finding::new(Category::EsDni, m.range()));
            }
        }
    }
}

impl Default for Ids {
    fn default() -> Self {
        Ids::new()
    }
}

fn compact(s: &str) -> Vec<u8> {
    s.bytes().filter(|b| b.is_ascii_alphanumeric()).collect()
}

/// The longest IBAN at the start of the candidate `range` (a word in capitals may follow it).
fn iban(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let candidate = text.get(range.clone())?;
    let mut compact = String::with_capacity(candidate.len());
    // The end in the text after each character of the compact form.
    let mut ends = Vec::with_capacity(candidate.len());
    for (at, c) in candidate.char_indices().filter(|(_, c)| *c != ' ') {
        compact.push(c.to_ascii_uppercase());
        ends.push(range.start + at + c.len_utf8());
    }
    (15..=compact.len()).rev().find_map(|len| {
        let prefix = compact.get(..len)?;
        let end = *ends.get(len - 1)?;
        let at_boundary = !text.as_bytes().get(end).is_some_and(u8::is_ascii_alphanumeric);
        let valid = at_boundary && prefix.parse::<iban::Iban>().is_ok() && !checksum::documented_example(prefix);
        valid.then_some(range.start..end)
    })
}
