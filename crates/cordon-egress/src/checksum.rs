//! The checksums and number rules that keep the never tier precise: Luhn and the card
//! issuers' prefixes and lengths, the ABA routing checksum, the US social security number's
//! area, group and serial rules, the UK National Insurance number's prefixes, and the check
//! letter of a Spanish DNI or NIE. Each takes ASCII digits (and letters) already extracted.
//!
//! Also the documented example values (`lexicon/documented_examples.txt`): published test card
//! numbers, the IBAN registry's examples, the AWS documentation's keys. They pass every check
//! and belong to nobody, so they are not findings anywhere, in documentation or not.

use std::collections::HashSet;
use std::sync::LazyLock;

/// Whether `digits` (ASCII digits only) end in a valid Luhn check digit.
pub fn luhn(digits: &[u8]) -> bool {
    let mut sum = 0u32;
    for (i, d) in digits.iter().rev().enumerate() {
        let mut value = u32::from(d.wrapping_sub(b'0'));
        if value > 9 {
            return false;
        }
        if i % 2 == 1 {
            value *= 2;
            if value > 9 {
                value -= 9;
            }
        }
        sum += value;
    }
    !digits.is_empty() && sum.is_multiple_of(10)
}

/// The value of the first `n` digits (at most 8).
fn prefix(digits: &[u8], n: usize) -> Option<u32> {
    let head = digits.get(..n)?;
    head.iter().try_fold(0u32, |acc, d| d.is_ascii_digit().then(|| acc * 10 + u32::from(d - b'0')))
}

/// An issuer's prefix range (inclusive, both `digits` long) and card lengths.
struct Issuer {
    digits: usize,
    low: u32,
    high: u32,
    lengths: &'static [usize],
}

const fn issuer(digits: usize, low: u32, high: u32, lengths: &'static [usize]) -> Issuer {
    Issuer { digits, low, high, lengths }
}

const SIXTEEN_TO_NINETEEN: &[usize] = &[16, 17, 18, 19];

/// The issuers' prefixes (ISO/IEC 7812 IINs as the networks publish them) and lengths.
const ISSUERS: &[Issuer] = &[
    issuer(1, 4, 4, &[13, 16, 19]),                       // Visa
    issuer(2, 51, 55, &[16]),                             // Mastercard
    issuer(4, 2221, 2720, &[16]),                         // Mastercard, 2-series
    issuer(2, 34, 34, &[15]),                             // American Express
    issuer(2, 37, 37, &[15]),                             // American Express
    issuer(4, 6011, 6011, SIXTEEN_TO_NINETEEN),           // Discover
    issuer(3, 644, 649, SIXTEEN_TO_NINETEEN),             // Discover
    issuer(2, 65, 65, SIXTEEN_TO_NINETEEN),               // Discover, RuPay
    issuer(4, 3528, 3589, SIXTEEN_TO_NINETEEN),           // JCB
    issuer(3, 300, 305, &[14, 15, 16, 17, 18, 19]),       // Diners Club
    issuer(4, 3095, 3095, &[14, 15, 16, 17, 18, 19]),     // Diners Club
    issuer(2, 36, 36, &[14, 15, 16, 17, 18, 19]),         // Diners Club
    issuer(2, 38, 39, &[14, 15, 16, 17, 18, 19]),         // Diners Club
    issuer(2, 62, 62, SIXTEEN_TO_NINETEEN),               // UnionPay
    issuer(2, 81, 81, SIXTEEN_TO_NINETEEN),               // UnionPay
    issuer(4, 2200, 2204, SIXTEEN_TO_NINETEEN),           // Mir
    issuer(4, 5018, 5018, &[13, 14, 15, 16, 17, 18, 19]), // Maestro
    issuer(4, 5020, 5020, &[13, 14, 15, 16, 17, 18, 19]), // Maestro
    issuer(4, 5038, 5038, &[13, 14, 15, 16, 17, 18, 19]), // Maestro
    issuer(4, 5893, 5893, &[13, 14, 15, 16, 17, 18, 19]), // Maestro
    issuer(4, 6304, 6304, &[13, 14, 15, 16, 17, 18, 19]), // Maestro
    issuer(4, 6759, 6759, &[13, 14, 15, 16, 17, 18, 19]), // Maestro
    issuer(4, 6761, 6763, &[13, 14, 15, 16, 17, 18, 19]), // Maestro
];

/// Whether `digits` are a card number: an issuer's prefix and length, and a valid Luhn digit.
pub fn card_number(digits: &[u8]) -> bool {
    let known = ISSUERS.iter().any(|i| {
        prefix(digits, i.digits).is_some_and(|p| (i.low..=i.high).contains(&p)) && i.lengths.contains(&digits.len())
    });
    known && luhn(digits)
}

/// Whether nine `digits` are an ABA routing number: a Federal Reserve prefix and the
/// 3-7-1 weighted checksum.
pub fn aba_routing(digits: &[u8]) -> bool {
    let Some(head) = prefix(digits, 2) else { return false };
    let valid_head = matches!(head, 0..=12 | 21..=32 | 61..=72 | 80);
    if digits.len() != 9 || !valid_head {
        return false;
    }
    let sum: u32 = digits.iter().zip([3, 7, 1].iter().cycle()).map(|(d, w)| u32::from(d - b'0') * w).sum();
    sum.is_multiple_of(10)
}

/// Whether nine `digits` follow the social security number's rules: area not 000, 666 or
/// 900–999, group not 00, serial not 0000.
pub fn ssn(digits: &[u8]) -> bool {
    if digits.len() != 9 || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let area = prefix(digits, 3).unwrap_or(0);
    let group = prefix(&digits[3..], 2).unwrap_or(0);
    let serial = prefix(&digits[5..], 4).unwrap_or(0);
    area != 0 && area != 666 && area < 900 && group != 0 && serial != 0
}

/// Whether the two letters begin a UK National Insurance number: D, F, I, Q, U and V are
/// never used, O never second, and BG, GB, KN, NK, NT, TN and ZZ are never allocated.
pub fn nino_prefix(first: u8, second: u8) -> bool {
    let first_ok = first.is_ascii_uppercase() && !b"DFIQUV".contains(&first);
    let second_ok = second.is_ascii_uppercase() && !b"DFIOQUV".contains(&second);
    let pair = [first, second];
    first_ok && second_ok && ![b"BG", b"GB", b"KN", b"NK", b"NT", b"TN", b"ZZ"].contains(&&pair)
}

/// The check letters of the Spanish DNI and NIE, by the number modulo 23.
const DNI_LETTERS: &[u8; 23] = b"TRWAGMYFPDXBNJZSQVHLCKE";

/// Whether `number` (eight digits) and `letter` are a DNI, or (an X, Y or Z and seven
/// digits) a NIE.
pub fn dni(number: &[u8], letter: u8) -> bool {
    let digits: Option<u32> = match number.first() {
        Some(b'X' | b'Y' | b'Z') if number.len() == 8 => {
            let lead = u32::from(number[0] - b'X');
            prefix(&number[1..], 7).map(|rest| lead * 10_000_000 + rest)
        }
        Some(_) if number.len() == 8 => prefix(number, 8),
        _ => None,
    };
    digits.and_then(|n| DNI_LETTERS.get(usize::try_from(n % 23).ok()?)).is_some_and(|&l| l == letter)
}

static DOCUMENTED: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    include_str!("lexicon/documented_examples.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
});

/// Whether `value` (compact: no spaces or dashes) is a documented example value.
pub fn documented_example(value: &str) -> bool {
    DOCUMENTED.contains(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checks_accept_known_good_values_and_refuse_one_digit_off() {
        assert!(card_number(b"4539148803436467"));
        assert!(!card_number(b"4539148803436468"));
        assert!(!card_number(b"490154203237518"), "a Luhn-valid IMEI is no Visa length");
        assert!(aba_routing(b"021000021"));
        assert!(!aba_routing(b"021000022"));
        assert!(ssn(b"214359012") && !ssn(b"666123456") && !ssn(b"900123456") && !ssn(b"214009012"));
        assert!(nino_prefix(b'P', b'M') && !nino_prefix(b'Q', b'Q') && !nino_prefix(b'G', b'B'));
        assert!(dni(b"46248112", b'B') && !dni(b"46248112", b'C'));
        assert!(dni(b"X2198008", b'J') && dni(b"Z9371212", b'M'));
        assert!(documented_example("4242424242424242"));
    }
}
