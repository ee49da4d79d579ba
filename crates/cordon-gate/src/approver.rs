//! Who answers a card. Every approver is behind one trait, and none of them reads anything a
//! model wrote or a tool returned: the terminal reads a person's keys, the scripted approver a
//! file the host was given, and the other two answer the same whatever they are shown.
//!
//! - [`Terminal`]: the card on a terminal, paged; `y`, `n` or `always`. A flagged card is
//!   approved only by typing the last characters of the flagged value, never by `y`, and never
//!   with "always". A terminal that closes (end of input, a read error) before an answer is a
//!   denial.
//! - [`Scripted`]: answers from a file, in order (tests, demos). A missing answer is a denial,
//!   by no one: the gate's record says the file ran out (or named another tool next).
//! - [`DenyAll`] (`--approve none`): denies every card; the default when there is no terminal.
//! - [`ApproveAll`] (`--approve all`): approves every card without showing it; for benchmarks
//!   only (the caller must print [`ApproveAll::WARNING`]). It never vouches for or releases a
//!   value the labels refused, and never makes a grant.

use std::fmt;
use std::io::{self, BufRead, Write};
use std::path::Path;

use serde::Serialize;

use crate::card::{CONFIRM_CHARS, Card};

/// A person's answer to a card.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Yes,
    No,
    /// Yes, and do not ask again for this tool, these destinations and this label class (a
    /// grant). Where no grant may be made (`ask_always`, a flagged card, a label approval) it
    /// counts as `Yes` for this call only.
    Always,
}

impl Answer {
    /// `y`/`yes`, `n`/`no`, `a`/`always` (any case, surrounding spaces ignored).
    pub fn parse(text: &str) -> Option<Answer> {
        match text.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Some(Answer::Yes),
            "n" | "no" => Some(Answer::No),
            "a" | "always" => Some(Answer::Always),
            _ => None,
        }
    }
}

/// What an approver says about a card.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    Answer(Answer),
    /// The answer will come later (a card sent to a phone, a web page): the gate holds the run,
    /// and the host gives the answer with [`crate::Gate::answer`] and resumes the run.
    Later,
}

/// Answers cards.
pub trait Approver {
    /// Its name, for the gate's records (`terminal`, `scripted`, `none`, `all`).
    fn name(&self) -> &str;

    /// Shows `card` and answers it.
    fn review(&mut self, card: &Card) -> Reply;

    /// Whether its answers are the user's own (a person at the terminal, or a script standing
    /// in for one): only such an approver may vouch for or release values the labels refused.
    fn speaks_for_user(&self) -> bool {
        false
    }
}

/// Denies every card (`--approve none`).
#[derive(Debug, Default, Clone, Copy)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn name(&self) -> &str {
        "none"
    }

    fn review(&mut self, _card: &Card) -> Reply {
        Reply::Answer(Answer::No)
    }
}

/// Approves every card it is shown, once, without showing it (`--approve all`). For
/// benchmarks only.
#[derive(Debug, Default, Clone, Copy)]
pub struct ApproveAll;

impl ApproveAll {
    /// What the front end must print before a run with it.
    pub const WARNING: &'static str = "warning: --approve all approves every card without showing it (benchmarks only); \
         `deny` tools and calls the labels refuse are still refused";
}

impl Approver for ApproveAll {
    fn name(&self) -> &str {
        "all"
    }

    fn review(&mut self, _card: &Card) -> Reply {
        Reply::Answer(Answer::Yes)
    }
}

/// A file of scripted answers could not be used.
#[derive(Debug)]
pub struct ScriptError {
    pub message: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScriptError {}

/// Answers from a script, in order: one answer a line (`yes`, `no`, `always`), optionally
/// after the tool it is meant for (`Shop.pay yes`); blank lines and lines starting with `#` are
/// skipped. A card whose tool is not the one the next line names is denied (and that line used
/// up); a card after the last line is denied.
#[derive(Debug, Clone, Default)]
pub struct Scripted {
    answers: Vec<(Option<String>, Answer)>,
    next: usize,
    /// Who answered the last card: `scripted`, or why no line of the file did.
    name: String,
    /// Every card shown, rendered at 80 columns, with the answer given.
    pub shown: Vec<(String, Answer)>,
}

impl Scripted {
    /// Parses a script; an unreadable line is an error naming it.
    pub fn parse(text: &str) -> Result<Scripted, ScriptError> {
        let mut answers = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (tool, answer) = match line.rsplit_once(char::is_whitespace) {
                Some((tool, answer)) => (Some(tool.trim().to_string()), answer),
                None => (None, line),
            };
            let Some(answer) = Answer::parse(answer) else {
                let message = format!(
                    "line {}: expected `yes`, `no` or `always` (after a tool, optionally), found `{line}`",
                    i + 1
                );
                return Err(ScriptError { message });
            };
            answers.push((tool, answer));
        }
        Ok(Scripted { answers, next: 0, name: "scripted".into(), shown: Vec::new() })
    }

    /// Reads and parses a script file.
    pub fn from_file(path: &Path) -> Result<Scripted, ScriptError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScriptError { message: format!("cannot read the answers in {}: {e}", path.display()) })?;
        Scripted::parse(&text).map_err(|e| ScriptError { message: format!("{}: {}", path.display(), e.message) })
    }

    /// The answers not used yet.
    pub fn remaining(&self) -> usize {
        self.answers.len().saturating_sub(self.next)
    }
}

impl Approver for Scripted {
    fn name(&self) -> &str {
        &self.name
    }

    fn review(&mut self, card: &Card) -> Reply {
        let (answer, name) = match self.answers.get(self.next) {
            Some((Some(tool), _)) if *tool != card.tool => {
                (Answer::No, format!("no one (the file of answers has `{tool}` next, not this tool)"))
            }
            Some((_, answer)) => (*answer, "scripted".to_string()),
            None => {
                let n = self.answers.len();
                (
                    Answer::No,
                    format!(
                        "no one (the file of answers ran out: it holds {n} answer{})",
                        if n == 1 { "" } else { "s" }
                    ),
                )
            }
        };
        self.name = name;
        self.next += 1;
        self.shown.push((card.render(80), answer));
        Reply::Answer(answer)
    }

    fn speaks_for_user(&self) -> bool {
        true
    }
}

/// Where a terminal approver reads its answers, a line at a time.
pub trait ReadLine {
    /// Appends the next line (with its newline) to `line`; `Ok(0)` at the end of input.
    fn read_line(&mut self, line: &mut String) -> io::Result<usize>;
}

impl<R: BufRead> ReadLine for R {
    fn read_line(&mut self, line: &mut String) -> io::Result<usize> {
        BufRead::read_line(self, line)
    }
}

/// This process's standard input, locked for one line at a time and never longer: a chat
/// reading its requests and the terminal approver reading answers take turns on it (holding
/// its lock across reads deadlocks the second reader).
#[derive(Debug, Default, Clone, Copy)]
pub struct StdinLines;

impl ReadLine for StdinLines {
    fn read_line(&mut self, line: &mut String) -> io::Result<usize> {
        io::stdin().read_line(line)
    }
}

/// A card on a terminal: the card, a page at a time, then a prompt for `y`, `n` or `always`.
/// Only `n` is taken before the last page: approval comes after everything was shown. The end
/// of input or a read error, at any point, is a denial, and so are three unreadable answers.
#[derive(Debug)]
pub struct Terminal<R, W> {
    input: R,
    output: W,
    /// Columns.
    pub width: usize,
    /// Lines per page.
    pub rows: usize,
}

/// Standard input is not a terminal, so no one can be asked there.
#[derive(Debug)]
pub struct NotATerminal;

impl fmt::Display for NotATerminal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "standard input is not a terminal: no one can answer a card here (use --approve FILE or --approve none)",
        )
    }
}

impl std::error::Error for NotATerminal {}

impl<R: ReadLine, W: Write> Terminal<R, W> {
    /// Reads answers from `input` and writes cards to `output`, 80 columns by 24 rows.
    pub fn new(input: R, output: W) -> Terminal<R, W> {
        Terminal { input, output, width: 80, rows: 24 }
    }

    /// Reads one line; `None` at the end of input or on an error (the terminal closed).
    fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    }

    fn ask(&mut self, card: &Card) -> Option<Answer> {
        let text = card.render(self.width);
        let lines: Vec<&str> = text.lines().collect();
        let page = self.rows.saturating_sub(2).max(4);
        let pages: Vec<&[&str]> = lines.chunks(page).collect();
        for (i, chunk) in pages.iter().enumerate() {
            for line in *chunk {
                writeln!(self.output, "{line}").ok()?;
            }
            if i + 1 < pages.len() {
                let shown = (i + 1) * page;
                write!(self.output, "-- {shown} of {} lines: Enter for more, n to deny -- ", lines.len()).ok()?;
                self.output.flush().ok()?;
                if Answer::parse(&self.read_line()?) == Some(Answer::No) {
                    return Some(Answer::No);
                }
            }
        }
        match card.confirmation() {
            Some((what, tail)) => self.confirm(card, &what, &tail),
            None => self.yes_or_no(card),
        }
    }

    /// The prompt for a card with no flag: `y`, `n`, or `always` where a grant may be made.
    fn yes_or_no(&mut self, card: &Card) -> Option<Answer> {
        let choices = if card.grantable { "[y]es / [n]o / [a]lways" } else { "[y]es / [n]o" };
        for _ in 0..3 {
            write!(self.output, "approve {}? {choices}: ", cordon_text::escape(&card.tool)).ok()?;
            self.output.flush().ok()?;
            match Answer::parse(&self.read_line()?) {
                Some(Answer::Always) if !card.grantable => return Some(Answer::Yes),
                Some(answer) => return Some(answer),
                None => writeln!(self.output, "please answer y or n{}", if card.grantable { " or always" } else { "" })
                    .ok()?,
            }
        }
        Some(Answer::No)
    }

    /// The prompt for a flagged card: approved only by typing `tail`, the end of the flagged
    /// value as shown; `y` or `always` is refused and asked again, `n` denies, and so do three
    /// answers that are not `tail`.
    fn confirm(&mut self, card: &Card, what: &str, tail: &str) -> Option<Answer> {
        let what = cordon_text::escape(what);
        for _ in 0..3 {
            write!(
                self.output,
                "FLAGGED: approve {}? type the last {CONFIRM_CHARS} characters of {what} to approve, or n: ",
                cordon_text::escape(&card.tool)
            )
            .ok()?;
            self.output.flush().ok()?;
            let line = self.read_line()?;
            let typed = line.trim_end_matches(['\n', '\r']).trim();
            if typed == tail.trim() {
                return Some(Answer::Yes);
            }
            let said = match Answer::parse(typed) {
                Some(Answer::No) => return Some(Answer::No),
                Some(Answer::Yes | Answer::Always) => "a flagged card is not approved by y or always",
                None => "that is not the end of the flagged value",
            };
            writeln!(self.output, "{said}: type the last {CONFIRM_CHARS} characters of {what}, or n").ok()?;
        }
        Some(Answer::No)
    }
}

impl Terminal<StdinLines, io::Stderr> {
    /// The terminal of this process: answers from standard input (locked only while a line is
    /// read), cards on standard error. Fails when standard input is not a terminal.
    pub fn stdio() -> Result<Self, NotATerminal> {
        use std::io::IsTerminal;
        if !io::stdin().is_terminal() {
            return Err(NotATerminal);
        }
        Ok(Terminal::new(StdinLines, io::stderr()))
    }
}

impl<R: ReadLine, W: Write> Approver for Terminal<R, W> {
    fn name(&self) -> &str {
        "terminal"
    }

    fn review(&mut self, card: &Card) -> Reply {
        let answer = self.ask(card).unwrap_or(Answer::No);
        let said = match answer {
            Answer::Yes => "approved",
            Answer::No => "denied",
            Answer::Always => "approved, and remembered",
        };
        // The terminal may be gone; the answer stands either way.
        let _ = writeln!(self.output, "{said}");
        Reply::Answer(answer)
    }

    fn speaks_for_user(&self) -> bool {
        true
    }
}

/// An approver borrowed: the caller keeps it, to look at what it was shown afterwards.
impl<A: Approver + ?Sized> Approver for &mut A {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn review(&mut self, card: &Card) -> Reply {
        (**self).review(card)
    }

    fn speaks_for_user(&self) -> bool {
        (**self).speaks_for_user()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test may fail loudly
mod tests {
    use super::*;

    #[test]
    fn a_file_of_answers_that_runs_out_says_so() {
        let mut scripted = Scripted::parse("yes\n").unwrap();
        let card = Card {
            id: 1,
            tool: "Shop.pay".into(),
            tier: cordon_label::Tier::Ask,
            action: "pay".into(),
            destination: None,
            recipients: Vec::new(),
            content: None,
            fields: Vec::new(),
            decided_by: Vec::new(),
            flows: Vec::new(),
            flags: Vec::new(),
            sensitive: Vec::new(),
            grantable: true,
            label_class: "public".into(),
            by_model: false,
        };
        assert_eq!(scripted.review(&card), Reply::Answer(Answer::Yes));
        assert_eq!(scripted.name(), "scripted");
        assert_eq!(scripted.review(&card), Reply::Answer(Answer::No));
        assert_eq!(scripted.name(), "no one (the file of answers ran out: it holds 1 answer)");
    }
}
