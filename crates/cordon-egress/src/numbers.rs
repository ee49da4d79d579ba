//! The never tier's numbers: payment card numbers, US social security numbers, and US routing
//! numbers with the account number next to them.
//!
//! One pass over the text's bytes cuts it into *runs*: groups of ASCII digits joined by single
//! spaces or dashes (`4539 1488 0343 6467`, `707-89-0613`), not part of a word, an identifier
//! or a decimal number. Each run is then checked against the formats, each check bounded
//! (a card is at most 19 digits), so the whole is linear in the text.

use std::ops::Range;

use crate::category::Category;
use crate::checksum;
use crate::context::preceded_by;
use crate::finding::Finding;

/// A group of digits, as a byte range of the text.
type Group = Range<usize>;

/// Digit groups joined by single spaces or dashes.
#[derive(Debug)]
struct Run {
    groups: Vec<Group>,
}

impl Run {
    fn span(&self) -> Range<usize> {
        let start = self.groups.first().map_or(0, |g| g.start);
        start..self.groups.last().map_or(start, |g| g.end)
    }

    fn digits(&self, text: &str, groups: Range<usize>) -> Vec<u8> {
        let bytes = text.as_bytes();
        self.groups.get(groups).unwrap_or_default().iter().flat_map(|g| bytes[g.clone()].iter().copied()).collect()
    }
}

/// The runs of `text`, in order.
fn runs(text: &str) -> Vec<Run> {
    let bytes = text.as_bytes();
    let mut runs = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let first: Group = at..digits_end(bytes, at);
        let mut groups = Vec::new();
        groups.push(first);
        let mut end = groups[0].end;
        while let Some(&sep) = bytes.get(end)
            && (sep == b' ' || sep == b'-')
            && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)
        {
            let next = digits_end(bytes, end + 1);
            groups.push(end + 1..next);
            end = next;
        }
        let start = at;
        at = end;
        if standalone(bytes, start, end) {
            runs.push(Run { groups });
        }
    }
    runs
}

fn digits_end(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    at
}

/// Whether the digits `start..end` stand alone: not inside a word or identifier, not the
/// fraction or the whole part of a decimal number (with a point).
fn standalone(bytes: &[u8], start: usize, end: usize) -> bool {
    let word = |b: &u8| b.is_ascii_alphabetic() || *b == b'_';
    // A comma is not glue: CSV fields are separated by commas more often than cards are split by them.
    let decimal = |b: &u8| *b == b'.';
    let before = start.checked_sub(1).and_then(|i| bytes.get(i));
    let before_that = start.checked_sub(2).and_then(|i| bytes.get(i));
    let after = bytes.get(end);
    let after_that = bytes.get(end + 1);
    let glued_before =
        before.is_some_and(word) || (before.is_some_and(decimal) && before_that.is_some_and(u8::is_ascii_digit));
    let glued_after =
        after.is_some_and(word) || (after.is_some_and(decimal) && after_that.is_some_and(u8::is_ascii_digit));
    !glued_before && !glued_after
}

/// Words that, just before a number, say it is not a card: an order or tracking number, a
/// device's serial or IMEI, a reference.
const NOT_A_CARD: &[&str] = &[
    "order",
    "tracking",
    "imei",
    "serial",
    "invoice",
    "ref",
    "reference",
    "isbn",
    "gtin",
    "ean",
    "upc",
    "sku",
    "parcel",
    "shipment",
    "batch",
    "seed",
    "crm",
    "transaction",
    "txn",
    "id",
    "ticket",
    "booking",
    "confirmation",
];

/// Words that, just before a number, say it is a telephone number.
const PHONE: &[&str] = &["call", "phone", "tel", "telephone", "fax", "mobile", "cell", "ring", "whatsapp"];

/// Words that name a social security number.
const SSN_NAMES: &[&str] = &["ssn", "social", "security"];

/// Words that name a routing number.
const ROUTING_NAMES: &[&str] = &["routing", "aba", "rtn"];

/// Words that name an account number.
const ACCOUNT_NAMES: &[&str] = &["account", "acct", "acc"];

/// How close (in bytes) the account number must be to its routing number.
const ACCOUNT_REACH: usize = 80;

/// The cards, social security numbers and bank accounts of `text`.
pub fn find(text: &str, out: &mut Vec<Finding>) {
    let runs = runs(text);
    for (index, run) in runs.iter().enumerate() {
        if let Some(span) = card(text, run) {
            out.push(Finding::new(Category::CardNumber, span));
        } else if let Some(span) = ssn(text, run) {
            out.push(Finding::new(Category::UsSsn, span));
        } else if routing(text, run)
            && let Some(account) = account_near(text, &runs, index)
        {
            out.push(Finding::new(Category::BankAccount, run.span()));
            out.push(Finding::new(Category::BankAccount, account));
        }
    }
}

/// The longest card number at the start of the run (a card may be followed by its security
/// code: `4539148803436467 123`).
fn card(text: &str, run: &Run) -> Option<Range<usize>> {
    let start = run.groups.first()?.start;
    if preceded_by(text, start, 32, 3, NOT_A_CARD) {
        return None;
    }
    let mut best = None;
    let mut count = 0;
    for (last, group) in run.groups.iter().enumerate() {
        count += group.len();
        if count > 19 {
            break;
        }
        let digits = run.digits(text, 0..last + 1);
        if count >= 13 && card_grouping(&run.groups[..=last]) && checksum::card_number(&digits) {
            let compact = String::from_utf8_lossy(&digits);
            best = (!checksum::documented_example(&compact)).then_some(start..group.end);
        }
    }
    best
}

/// Whether the groups are printed as cards are: one group, fours (the last may be shorter),
/// 4-6-4 and 4-6-5 (Diners Club, American Express), or one digit at a time.
fn card_grouping(groups: &[Group]) -> bool {
    let sizes: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    match sizes.as_slice() {
        [_] | [4, 6, 4] | [4, 6, 5] => true,
        ones if ones.iter().all(|&s| s == 1) => true,
        [fours @ .., last] => fours.iter().all(|&s| s == 4) && (1..=4).contains(last),
        [] => false,
    }
}

/// A social security number: the run (`123-45-6789`, or nine digits named as one), or a
/// dashed `123-45-6789` standing between spaces inside a longer run (`2.29448 214-35-9012`).
fn ssn(text: &str, run: &Run) -> Option<Range<usize>> {
    if ssn_groups(text, &run.groups) {
        return Some(run.span());
    }
    let bytes = text.as_bytes();
    let separator = |g: &Group| bytes.get(g.end).copied();
    run.groups.windows(3).enumerate().find_map(|(k, triple)| {
        let sizes = [triple[0].len(), triple[1].len(), triple[2].len()];
        let dashed = separator(&triple[0]) == Some(b'-') && separator(&triple[1]) == Some(b'-');
        let spaced_before = k == 0 || run.groups.get(k - 1).and_then(separator) == Some(b' ');
        let spaced_after = k + 3 == run.groups.len() || separator(&triple[2]) == Some(b' ');
        let alone = sizes == [3, 2, 4] && dashed && spaced_before && spaced_after;
        (alone && k > 0 && ssn_groups(text, triple)).then(|| triple[0].start..triple[2].end)
    })
}

fn ssn_groups(text: &str, groups: &[Group]) -> bool {
    let Some(start) = groups.first().map(|g| g.start) else { return false };
    let sizes: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    let dashed = sizes == [3, 2, 4] && text.as_bytes().get(start + 3) == Some(&b'-');
    let named = preceded_by(text, start, 40, 4, SSN_NAMES);
    let shaped = dashed || (named && (sizes == [9] || sizes == [3, 2, 4]));
    if !shaped || preceded_by(text, start, 24, 3, PHONE) || preceded_by(text, start, 24, 3, crate::ids::NOT_AN_ID) {
        return false;
    }
    let bytes = text.as_bytes();
    let digits: Vec<u8> = groups.iter().flat_map(|g| bytes[g.clone()].iter().copied()).collect();
    checksum::ssn(&digits) && !checksum::documented_example(&String::from_utf8_lossy(&digits))
}

fn routing(text: &str, run: &Run) -> bool {
    let span = run.span();
    run.groups.len() == 1
        && span.len() == 9
        && preceded_by(text, span.start, 32, 3, ROUTING_NAMES)
        && checksum::aba_routing(&run.digits(text, 0..1))
}

/// An account number (4 to 17 digits, named as one) within [`ACCOUNT_REACH`] of the
/// routing number `runs[index]`, after it or before it.
fn account_near(text: &str, runs: &[Run], index: usize) -> Option<Range<usize>> {
    let routing = runs.get(index)?.span();
    let is_account = |run: &Run| {
        let span = run.span();
        let digits = run.groups.iter().map(|g| g.len()).sum::<usize>();
        (4..=17).contains(&digits) && preceded_by(text, span.start, 24, 3, ACCOUNT_NAMES)
    };
    let after = runs
        .iter()
        .skip(index + 1)
        .take_while(|r| r.span().start <= routing.end + ACCOUNT_REACH)
        .find(|r| is_account(r));
    let before = || {
        runs[..index].iter().rev().take_while(|r| r.span().end + ACCOUNT_REACH >= routing.start).find(|r| is_account(r))
    };
    after.or_else(before).map(Run::span)
}
