//! Colour at a terminal: Cordon's own structure in a line of output painted with the terminal's
//! SGR escapes (a diagnostic's severity and code, its arrow, gutter and carets, a verdict, a
//! call's decision in a trace). A line is painted after it was guarded (`shown`), by where
//! things stand in it, never by what data says: data can neither write an escape nor choose a
//! colour, and what is painted is only ever the renderers' own words and marks.
//!
//! Whether to paint: `--color always` or `never`; by default (`auto`) only where the stream is
//! a terminal, `NO_COLOR` is unset or empty (<https://no-color.org>), and `TERM` is not `dumb`.

/// The `--color` flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Choice {
    /// Where the output is a terminal and `NO_COLOR` is not set
    #[default]
    Auto,
    Always,
    Never,
}

impl Choice {
    /// Whether to paint a stream that `is_terminal` (or not), given the environment's
    /// `NO_COLOR` and `TERM`.
    pub(crate) fn paints(self, is_terminal: bool, no_color: Option<&str>, term: Option<&str>) -> bool {
        match self {
            Choice::Always => true,
            Choice::Never => false,
            Choice::Auto => is_terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb"),
        }
    }
}

const RESET: &str = "\u{1b}[0m";
const BOLD: &str = "\u{1b}[1m";
const RED: &str = "\u{1b}[1;31m";
const YELLOW: &str = "\u{1b}[1;33m";
const GREEN: &str = "\u{1b}[32m";
const BLUE: &str = "\u{1b}[1;34m";

/// Every escape a painter writes: the only ones painted output holds.
#[cfg(test)]
pub(crate) const ESCAPES: [&str; 6] = [RESET, BOLD, RED, YELLOW, GREEN, BLUE];

/// Paints lines one after another; it remembers the severity of the diagnostic it is in, for
/// the colour of its carets.
#[derive(Debug)]
pub(crate) struct Painter {
    carets: &'static str,
}

impl Default for Painter {
    fn default() -> Painter {
        Painter { carets: RED }
    }
}

impl Painter {
    /// `line` (guarded, without its line break) painted.
    pub(crate) fn paint(&mut self, line: &str) -> String {
        if let Some(painted) = self.header(line) {
            return painted;
        }
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        if let Some(rest) = trimmed.strip_prefix("--> ") {
            return format!("{indent}{BLUE}-->{RESET} {rest}");
        }
        for note in ["= help:", "= note:"] {
            if let Some(rest) = trimmed.strip_prefix(note) {
                return format!("{indent}{BOLD}{note}{RESET}{rest}");
            }
        }
        if let Some(painted) = self.gutter(line) {
            return painted;
        }
        if let Some(painted) = decision(line) {
            return painted;
        }
        verdict(line).unwrap_or_else(|| line.to_string())
    }

    /// `error[code]: message`, `warning: ..`, `cordon: ..`: the severity and code in its colour,
    /// the message bold.
    fn header(&mut self, line: &str) -> Option<String> {
        let (word, colour) = [("error", RED), ("warning", YELLOW), ("cordon", RED)]
            .into_iter()
            .find(|(word, _)| line.starts_with(word))?;
        let rest = &line[word.len()..];
        let code_end = match rest.strip_prefix('[') {
            Some(inside) => 1 + inside.find(']')? + 1,
            None => 0,
        };
        let message = rest[code_end..].strip_prefix(": ")?;
        if word != "cordon" {
            self.carets = colour;
        }
        Some(format!("{colour}{word}{}{RESET}{BOLD}: {message}{RESET}", &rest[..code_end]))
    }

    /// ` 12 | source`, `    |     ^^^ label`: the gutter blue, the carets and their label in
    /// the diagnostic's colour.
    fn gutter(&self, line: &str) -> Option<String> {
        let bar = line.find('|')?;
        let (left, right) = (&line[..bar], &line[bar + 1..]);
        if !left.chars().all(|c| c == ' ' || c.is_ascii_digit()) {
            return None;
        }
        let marks = right.trim_start();
        let is_marks = marks.starts_with(['^', '-'])
            && marks.chars().take_while(|c| !c.is_whitespace()).all(|c| c == '^' || c == '-');
        let right = if is_marks {
            let lead = &right[..right.len() - marks.len()];
            // The primary label's carets in the diagnostic's colour, a secondary one's dashes blue.
            let colour = if marks.starts_with('^') { self.carets } else { BLUE };
            format!("{lead}{colour}{marks}{RESET}")
        } else {
            right.to_string()
        };
        Some(format!("{BLUE}{left}|{RESET}{right}"))
    }
}

/// `  1. allowed  ..`, `  2. BLOCKED  ..`, `     FAILED   ..`: the decision in its colour.
fn decision(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    let after_number = trimmed.split_once(". ").filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    let (head, rest) = match after_number {
        Some((_, rest)) => (&line[..line.len() - rest.len()], rest),
        None => (&line[..line.len() - trimmed.len()], trimmed),
    };
    let (word, colour) =
        [("allowed", GREEN), ("BLOCKED", RED), ("FAILED", RED)].into_iter().find(|(w, _)| rest.starts_with(w))?;
    if after_number.is_none() && word == "allowed" {
        return None;
    }
    Some(format!("{head}{colour}{word}{RESET}{}", &rest[word.len()..]))
}

/// `plan.cord: accepted`, `plan.cord: rejected: 2 errors`: the verdict in its colour.
fn verdict(line: &str) -> Option<String> {
    if line.starts_with(' ') {
        return None;
    }
    for (word, colour) in [("accepted", GREEN), ("rejected", RED)] {
        let needle = format!(": {word}");
        if let Some(at) = line.rfind(&needle) {
            let tail = &line[at + needle.len()..];
            let ends_verdict = tail.is_empty() || tail.starts_with(" with ") || tail.starts_with(": ");
            if ends_verdict {
                return Some(format!("{}: {colour}{word}{tail}{RESET}", &line[..at]));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnostic_is_painted_by_its_structure() {
        let mut p = Painter::default();
        assert_eq!(p.paint("warning[unused]: x"), format!("{YELLOW}warning[unused]{RESET}{BOLD}: x{RESET}"));
        assert_eq!(p.paint(" --> plan.cord:1:5"), format!(" {BLUE}-->{RESET} plan.cord:1:5"));
        assert_eq!(p.paint("1 | let x = 1 +;"), format!("{BLUE}1 |{RESET} let x = 1 +;"));
        assert_eq!(p.paint("  |     ^^ here"), format!("{BLUE}  |{RESET}     {YELLOW}^^ here{RESET}"));
        assert_eq!(p.paint("    = help: try"), format!("    {BOLD}= help:{RESET} try"));
        assert_eq!(p.paint("  |  --- there"), format!("{BLUE}  |{RESET}  {BLUE}--- there{RESET}"));
        assert_eq!(p.paint("plan.cord: rejected: 1 error"), format!("plan.cord: {RED}rejected: 1 error{RESET}"));
        assert_eq!(p.paint("  1. allowed  T.f()  at p:1:1"), format!("  1. {GREEN}allowed{RESET}  T.f()  at p:1:1"));
        // Text that only mentions these words is left as it is.
        for plain in ["answer: accepted later", "   returned \"error[x]: no\"", "allowed", "x | y"] {
            assert_eq!(p.paint(plain), plain);
        }
    }

    #[test]
    fn colour_is_chosen_by_flag_terminal_and_environment() {
        assert!(Choice::Auto.paints(true, None, Some("xterm")));
        assert!(Choice::Auto.paints(true, Some(""), None));
        assert!(!Choice::Auto.paints(false, None, None));
        assert!(!Choice::Auto.paints(true, Some("1"), None));
        assert!(!Choice::Auto.paints(true, None, Some("dumb")));
        assert!(Choice::Always.paints(false, Some("1"), Some("dumb")));
        assert!(!Choice::Never.paints(true, None, None));
    }
}
