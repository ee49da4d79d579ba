//! The escaping over all of Unicode: every code point alone, after a base and after a mark, and
//! arbitrary strings (a fixed seed): nothing hidden comes out, the escaping can be undone
//! exactly, and text hidden in invisible characters comes out readable. The checker here reads
//! the Unicode properties itself rather than asking the function under test.

use cordon_text::{MAX_MARKS, escape, guard, guard_line};
use icu_properties::props::{
    DefaultIgnorableCodePoint, GeneralCategory, GeneralCategoryGroup, GraphemeBase, WhiteSpace,
};
use icu_properties::{CodePointMapData, CodePointSetData};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// The escaping undone: `None` when `text` is not something [`escape`] writes.
fn unescape(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'u' => {
                if chars.next()? != '{' {
                    return None;
                }
                let hex: String = chars.by_ref().take_while(|&c| c != '}').collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Whether a terminal could hide or misrender `c` after `before` (`marks` marks already on it):
/// read from the properties directly.
fn renders_wrongly(c: char, before: Option<char>, marks: usize) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    let gc = CodePointMapData::<GeneralCategory>::new().get(c);
    let invisible = GeneralCategoryGroup::Control
        .union(GeneralCategoryGroup::Format)
        .union(GeneralCategoryGroup::Separator)
        .union(GeneralCategoryGroup::PrivateUse)
        .union(GeneralCategoryGroup::Unassigned);
    if c == ' ' {
        return false;
    }
    if invisible.contains(gc) || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c) {
        return true;
    }
    if matches!(c, '\u{2800}' | '\u{FFFC}' | '\u{FFFD}') {
        return true;
    }
    let mark = GeneralCategoryGroup::NonspacingMark.union(GeneralCategoryGroup::EnclosingMark).contains(gc);
    let on_base = before.is_some_and(|b| {
        CodePointSetData::new::<GraphemeBase>().contains(b) && !CodePointSetData::new::<WhiteSpace>().contains(b)
    });
    mark && (!on_base || marks >= MAX_MARKS)
}

/// Panics with the offending character when `shown` holds one a terminal could hide.
fn assert_all_visible(shown: &str, input: &str) {
    let mut base = None;
    let mut marks = 0;
    for c in shown.chars() {
        assert!(!renders_wrongly(c, base, marks), "{:?} shows U+{:04X} as it is (from {input:?})", shown, c as u32);
        let gc = CodePointMapData::<GeneralCategory>::new().get(c);
        if GeneralCategoryGroup::NonspacingMark.union(GeneralCategoryGroup::EnclosingMark).contains(gc) {
            marks += 1;
        } else {
            base = Some(c);
            marks = 0;
        }
    }
}

fn every_char() -> impl Iterator<Item = char> {
    (0..=0x10FFFFu32).filter_map(char::from_u32)
}

#[test]
fn every_code_point_at_the_start_after_a_mark_and_under_one_is_visible_and_comes_back() {
    for c in every_char() {
        // At the start, after a mark on a base, and with a mark after it.
        let input = format!("{c}e\u{301}{c}\u{301}");
        let shown = escape(&input);
        assert_all_visible(&shown, &input);
        assert_eq!(unescape(&shown).as_deref(), Some(input.as_str()), "U+{:04X}", c as u32);
    }
}

#[test]
fn the_class_covers_what_renders_as_nothing() {
    let hidden = [
        0x1B, 0x9B, 0x07, 0x0B, 0x7F, 0x85, 0xAD, 0xA0, 0x34F, 0x61C, 0x115F, 0x1160, 0x17B4, 0x180B, 0x180E, 0x180F,
        0x200B, 0x200D, 0x200E, 0x2028, 0x2029, 0x202A, 0x202E, 0x2060, 0x2066, 0x2069, 0x3000, 0x3164, 0x2800, 0xFE00,
        0xFE0F, 0xFEFF, 0xFFA0, 0xFFF9, 0xFFFC, 0xFFFD, 0x13430, 0x1BCA0, 0x1D173, 0xE0001, 0xE0041, 0xE007F, 0xE0100,
        0xE01EF, 0xE000, 0xF0000, 0x10FFFD, 0xFDD0, 0xFFFF, 0x0378,
    ];
    for code in hidden {
        let c = char::from_u32(code).expect("a scalar value");
        let shown = escape(&format!("a{c}"));
        assert_eq!(shown, format!("a\\u{{{code:x}}}"), "U+{code:04X}");
    }
}

#[test]
fn arbitrary_strings_escape_to_visible_text_that_decodes_back() {
    let config = Config { cases: 2000, failure_persistence: None, ..Config::default() };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[25; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let chars = prop_oneof![
        any::<char>(),
        prop::char::range('\u{0}', '\u{7f}'),
        prop::char::range('\u{300}', '\u{36f}'),
        prop::char::range('\u{e0000}', '\u{e01ef}'),
        prop::char::range('\u{2000}', '\u{206f}'),
    ];
    let strings = prop::collection::vec(chars, 0..40).prop_map(|v| v.into_iter().collect::<String>());
    runner
        .run(&strings, |input| {
            let shown = escape(&input);
            assert_all_visible(&shown, &input);
            prop_assert_eq!(unescape(&shown), Some(input.clone()));
            prop_assert_eq!(guard(&shown), shown.clone());
            let line = guard_line(&input);
            assert_all_visible(&line, &input);
            prop_assert_eq!(guard_line(&line), line);
            Ok(())
        })
        .expect("the escaping holds for every string");
}

/// Text hidden in tag characters ("ASCII smuggling") and in variation selectors (one selector
/// per byte after an emoji) is readable once escaped.
#[test]
fn secret_text_hidden_in_invisible_characters_is_shown() {
    let secret = "IBAN DE99";
    let tags: String = secret.chars().map(|c| char::from_u32(0xE0000 + c as u32).expect("a tag")).collect();
    let shown = escape(&format!("innocent{tags}"));
    assert!(shown.starts_with("innocent\\u{e0049}\\u{e0042}"), "{shown}");
    let decoded: String = shown
        .split("\\u{")
        .skip(1)
        .map(|h| char::from_u32(u32::from_str_radix(&h[..h.len() - 1], 16).expect("hex") - 0xE0000).expect("ascii"))
        .collect();
    assert_eq!(decoded, secret);

    let selectors: String = secret
        .bytes()
        .map(|b| char::from_u32(if b < 16 { 0xFE00 + b as u32 } else { 0xE0100 + b as u32 - 16 }).expect("a selector"))
        .collect();
    let shown = escape(&format!("\u{1F600}{selectors}"));
    assert_eq!(shown.matches("\\u{e01").count(), secret.len(), "{shown}");
}
