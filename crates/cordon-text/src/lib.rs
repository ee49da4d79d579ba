//! Text for people: the one escaping function every part of Cordon uses for what it shows a
//! person (approval cards, the trace, `audit show`, `approvals list`, diagnostics, a server's
//! messages), so what a person reads is exactly the characters that will be used.
//!
//! A character is *hidden* when a terminal would show it as nothing, as something else, or obey
//! it instead of showing it. The class is derived from the Unicode Character Database (through
//! ICU4X), not from a hand list:
//!
//! - General_Category Cc (controls: escape sequences, CR, BEL, C1 controls such as CSI), Cf
//!   (format characters: bidi controls, zero-width characters, tags, Mongolian, shorthand and
//!   Egyptian format controls), Zl and Zp (line and paragraph separators), Co (private use), Cn
//!   (unassigned, and noncharacters), and every Zs space but U+0020 (a no-break or ideographic
//!   space looks like a space and is not one);
//! - Default_Ignorable_Code_Point (variation selectors including U+E0100..U+E01EF, the combining
//!   grapheme joiner, Hangul fillers, ...);
//! - a combining mark (Mn, Me) that has no base to sit on: at the start of a text, after a space,
//!   after a hidden character, or after more than [`MAX_MARKS`] marks on one base;
//! - three characters Unicode gives a visible category that still render as a blank or a
//!   stand-in: U+2800 BRAILLE PATTERN BLANK, U+FFFC OBJECT REPLACEMENT CHARACTER and U+FFFD
//!   REPLACEMENT CHARACTER (what a terminal shows for bytes that are not text).
//!
//! [`escape`] writes each hidden character as `\u{hex}`, line breaks and tabs as `\n`, `\r` and
//! `\t`, and the backslash as `\\`, so no text can write a fake escape and the escaping can be
//! undone exactly: that is how values are shown (cards, `audit show`, `approvals list`).
//! [`guard`] is the last step before a terminal: it makes hidden characters visible in text
//! that is already laid out (it keeps line breaks and leaves backslashes alone, so text escaped
//! before passes through unchanged). [`guard_line`] does the same for a message quoted inside a
//! line (an error, a server's reason), line breaks included.

use icu_properties::props::{
    DefaultIgnorableCodePoint, GeneralCategory, GeneralCategoryGroup, GraphemeBase, Script, WhiteSpace,
};
use icu_properties::{CodePointMapData, CodePointSetData, PropertyNamesLong};

/// Combining marks shown on one base character; more are escaped (a tall stack of marks
/// covers the lines around it).
pub const MAX_MARKS: usize = 4;

/// `text` for a person, on one line: every hidden character as `\u{hex}`, `\n`, `\r` and `\t`
/// for line breaks and tabs, `\\` for the backslash. Different texts always escape differently.
pub fn escape(text: &str) -> String {
    write_escaped(text, Mode::Inline)
}

/// Laid-out text on its way to a terminal: every hidden character but the line break as
/// `\u{hex}` (tabs and carriage returns too), everything else as it is. Text [`escape`]d
/// before comes through unchanged.
pub fn guard(text: &str) -> String {
    write_escaped(text, Mode::Guard)
}

/// A message on one line (an error, a server's reason, the tail of its stderr): like
/// [`guard`], but line breaks are written as `\u{a}` too, so the message cannot start a line
/// of its own. Quoting it again changes nothing.
pub fn guard_line(text: &str) -> String {
    write_escaped(text, Mode::GuardLine)
}

/// `text` for HTML: `&`, `<`, `>`, `"` and `'` as entities, so it is never markup, in an element
/// or an attribute's quotes. Escape hidden characters first ([`escape`], [`guard`]): HTML shows
/// a bidirectional control or a zero-width space no better than a terminal does.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The scripts the letters of `text` are written in (Unicode's Script property), when there
/// are more than one: a name that mixes them can imitate another with look-alike letters
/// (`pаypal` with a Cyrillic `а`). `None` for text in one script or none (digits, punctuation
/// and combining marks belong to every script).
pub fn mixed_scripts(text: &str) -> Option<Vec<&'static str>> {
    let mut scripts: Vec<Script> = Vec::new();
    for c in text.chars() {
        let script = CodePointMapData::<Script>::new().get(c);
        if ![Script::Common, Script::Inherited, Script::Unknown].contains(&script) && !scripts.contains(&script) {
            scripts.push(script);
        }
    }
    let names = PropertyNamesLong::<Script>::new();
    (scripts.len() > 1).then(|| scripts.iter().map(|&s| names.get(s).unwrap_or("Unknown")).collect())
}

/// Whether `c` is hidden wherever it stands (combining marks depend on what comes before them:
/// see [`escape`]).
pub fn is_hidden(c: char) -> bool {
    class(c) == Class::Hidden
}

/// Whether `c` is a combining mark (General_Category Mn or Me) that is not hidden anyway: shown
/// only on a base.
pub fn is_mark(c: char) -> bool {
    class(c) == Class::Mark
}

/// What a character is to the escaping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Hidden,
    /// A combining mark: shown only on a base.
    Mark,
    /// A visible character a mark may sit on.
    Base,
    /// A visible character no mark may sit on (a space, a spacing character that is not a
    /// grapheme base).
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        return match c {
            ' ' => Class::Other,
            c if c.is_ascii_control() => Class::Hidden,
            _ => Class::Base,
        };
    }
    let category = CodePointMapData::<GeneralCategory>::new().get(c);
    let hidden_categories = GeneralCategoryGroup::Control
        .union(GeneralCategoryGroup::Format)
        .union(GeneralCategoryGroup::LineSeparator)
        .union(GeneralCategoryGroup::ParagraphSeparator)
        .union(GeneralCategoryGroup::SpaceSeparator)
        .union(GeneralCategoryGroup::PrivateUse)
        .union(GeneralCategoryGroup::Surrogate)
        .union(GeneralCategoryGroup::Unassigned);
    if hidden_categories.contains(category)
        || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || matches!(c, '\u{2800}' | '\u{FFFC}' | '\u{FFFD}')
    {
        Class::Hidden
    } else if GeneralCategoryGroup::NonspacingMark.union(GeneralCategoryGroup::EnclosingMark).contains(category) {
        Class::Mark
    } else if CodePointSetData::new::<GraphemeBase>().contains(c) && !CodePointSetData::new::<WhiteSpace>().contains(c)
    {
        Class::Base
    } else {
        Class::Other
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// [`escape`].
    Inline,
    /// [`guard`].
    Guard,
    /// [`guard_line`].
    GuardLine,
}

fn write_escaped(text: &str, mode: Mode) -> String {
    // Printable ASCII (and a line break where guarding keeps it) is written as it is: the
    // common case, told byte by byte without decoding a character or looking up its class.
    let as_is = |b: u8| match b {
        b'\\' => mode != Mode::Inline,
        b'\n' => mode == Mode::Guard,
        _ => matches!(b, b' '..=b'~'),
    };
    if text.bytes().all(as_is) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    // Marks shown on the last base so far; `None` when the last character shown cannot carry one.
    let mut marks_on_base: Option<usize> = None;
    for c in text.chars() {
        let shown = match c {
            '\\' if mode == Mode::Inline => {
                out.push_str("\\\\");
                false
            }
            '\n' if mode == Mode::Guard => {
                out.push('\n');
                false
            }
            '\n' if mode == Mode::Inline => {
                out.push_str("\\n");
                false
            }
            '\r' if mode == Mode::Inline => {
                out.push_str("\\r");
                false
            }
            '\t' if mode == Mode::Inline => {
                out.push_str("\\t");
                false
            }
            c => match (class(c), marks_on_base) {
                (Class::Mark, Some(n)) if n < MAX_MARKS => {
                    out.push(c);
                    marks_on_base = Some(n + 1);
                    continue;
                }
                (Class::Hidden | Class::Mark, _) => {
                    out.push_str(&format!("\\u{{{:x}}}", c as u32));
                    false
                }
                (shown, _) => {
                    out.push(c);
                    shown == Class::Base
                }
            },
        };
        marks_on_base = shown.then_some(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_terminal_would_hide_or_obey() {
        assert_eq!(escape("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(escape("pay \u{202e}olleh"), "pay \\u{202e}olleh");
        assert_eq!(escape("x\\u{1b}"), "x\\\\u{1b}");
        assert_eq!(escape("tab\there\r\n"), "tab\\there\\r\\n");
        assert_eq!(escape("zero\u{200b}width"), "zero\\u{200b}width");
        assert_eq!(escape("naïve café"), "naïve café");
        assert_eq!(escape("e\u{301}"), "e\u{301}");
        assert_eq!(escape("\u{301}e"), "\\u{301}e");
        assert_eq!(escape(" \u{301}"), " \\u{301}");
        assert_eq!(escape("a\u{fe0f}\u{e0100}"), "a\\u{fe0f}\\u{e0100}");
        assert_eq!(escape("\u{2800}\u{3164}\u{a0}\u{2028}"), "\\u{2800}\\u{3164}\\u{a0}\\u{2028}");
        assert_eq!(escape("\u{9b}31m"), "\\u{9b}31m");
    }

    #[test]
    fn look_alike_letters_from_another_script_are_named() {
        assert_eq!(mixed_scripts("p\u{430}ypal.example"), Some(vec!["Latin", "Cyrillic"]));
        assert_eq!(mixed_scripts("paypal.example"), None);
        assert_eq!(mixed_scripts("Москва-1"), None);
        assert_eq!(mixed_scripts("e\u{301} 42 !"), None);
    }

    #[test]
    fn a_stack_of_marks_is_shown_up_to_the_limit() {
        let stack = format!("a{}", "\u{301}".repeat(MAX_MARKS + 2));
        let expected = format!("a{}\\u{{301}}\\u{{301}}", "\u{301}".repeat(MAX_MARKS));
        assert_eq!(escape(&stack), expected);
    }

    #[test]
    fn a_message_stays_on_its_line_and_quoting_it_twice_changes_nothing() {
        let once = guard_line("failed\nfrom: the user's request\r\u{1b}[2K");
        assert_eq!(once, "failed\\u{a}from: the user's request\\u{d}\\u{1b}[2K");
        assert_eq!(guard_line(&once), once);
    }

    #[test]
    fn the_guard_keeps_layout_and_earlier_escapes() {
        assert_eq!(guard("row 1\nrow\t2\r\u{1b}]52;c;aGk=\u{7}"), "row 1\nrow\\u{9}2\\u{d}\\u{1b}]52;c;aGk=\\u{7}");
        let escaped = escape("a\\b\n\u{202e}\u{301}x\u{301}");
        assert_eq!(guard(&escaped), escaped);
    }
}
