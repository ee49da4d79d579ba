//! `cordon chat`: requests typed one per line, each run like `cordon ask`, over one
//! environment and one session: what a request does to the world and to the session (a taint)
//! is there for the next. A one-line hint says how to stop; an empty line is skipped; `/help`
//! lists the commands; `/quit` (or `quit`, `exit`, `/exit` alone on a line) or the end of input
//! stops, and never goes to the model. A request's answer goes to stdout and, when it got no
//! answer, why to stderr; the chat goes on. The requests so far and their answers go into the
//! next request's prompt (as labels allow: `cordon::api::models::add_history`). Each request is
//! recorded in the store, and the sessions are kept after each, so stopping at any point loses
//! nothing.
//!
//! At a terminal the requests are typed into a line editor (rustyline): the cursor moves,
//! Ctrl-A and Ctrl-E go to the ends, Up and Down recall the chat's earlier requests (kept for
//! this chat only, never written to a file: they may hold what is private), Ctrl-C drops the
//! line. Elsewhere the requests are read a line at a time from standard input.

use std::io::{self, Write};
use std::path::Path;

use cordon::api::approval::ReadLine;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use crate::ask::{Conversation, Setup};
use crate::outcome::{Error, Report};

/// Printed when the chat starts.
const HINT: &str = "Type a request and press Enter; /help for commands, /quit (or Ctrl-D) to stop.";

/// What `/help` prints.
const HELP: &str = "\
Each line is a request to the model, run against the environment like `cordon ask`.
  /help   this list
  /quit   stop (so do `quit`, `exit` and Ctrl-D); the session is saved
";

/// Lines that stop the chat instead of going to the model.
const QUIT: [&str; 4] = ["/quit", "/exit", "quit", "exit"];

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub setup: Setup,
}

/// The prompt before each request.
const PROMPT: &str = "> ";

/// Where the chat reads its requests.
pub enum Requests<'a> {
    /// A line editor on the terminal: it draws the prompt and the line itself, and lets the
    /// terminal go between two requests, for the approver's answers.
    Editor(Box<DefaultEditor>),
    /// Lines of an input, a line at a time (the approver may read the same input between two).
    Lines(&'a mut dyn ReadLine),
}

impl<'a> Requests<'a> {
    /// The line editor, where standard input and output are both a terminal.
    pub fn at_a_terminal() -> Option<Requests<'a>> {
        use std::io::IsTerminal;
        if !(io::stdin().is_terminal() && io::stdout().is_terminal()) {
            return None;
        }
        DefaultEditor::new().ok().map(|editor| Requests::Editor(Box::new(editor)))
    }

    /// The next request as typed, or `None` at the end of input.
    fn next(&mut self, output: &mut dyn Write) -> Result<Option<String>, Error> {
        let read_error = |e: String| Error::Usage(format!("cannot read the request: {e}"));
        match self {
            Requests::Editor(editor) => loop {
                match editor.readline(PROMPT) {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            // A history that cannot grow leaves the request as typed.
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        return Ok(Some(line));
                    }
                    // Ctrl-C drops the line being typed.
                    Err(ReadlineError::Interrupted) => continue,
                    Err(ReadlineError::Eof) => return Ok(None),
                    Err(e) => return Err(read_error(e.to_string())),
                }
            },
            Requests::Lines(input) => {
                let write_error = |error: io::Error| Error::Usage(format!("cannot write the prompt: {error}"));
                write!(output, "{PROMPT}").and_then(|()| output.flush()).map_err(write_error)?;
                let mut line = String::new();
                match input.read_line(&mut line).map_err(|e| read_error(e.to_string()))? {
                    0 => Ok(None),
                    _ => Ok(Some(line)),
                }
            }
        }
    }
}

/// Reads requests from `requests` and prints each answer to `output` as it comes; the report
/// says whether every request ran to the end.
pub fn run(
    args: &Args,
    read: &dyn Fn(&Path) -> io::Result<String>,
    requests: &mut Requests<'_>,
    output: &mut dyn Write,
) -> Result<Report, Error> {
    let mut conversation = Conversation::open(&args.setup, read)?;
    let mut all_ran = true;
    let write_error = |error: io::Error| Error::Usage(format!("cannot write the answer: {error}"));
    writeln!(output, "{HINT}").map_err(write_error)?;
    while let Some(line) = requests.next(output)? {
        let request = line.trim();
        if QUIT.contains(&request.to_ascii_lowercase().as_str()) {
            break;
        }
        if request.is_empty() {
            continue;
        }
        if request == "/help" || request == "/?" {
            write!(output, "{HELP}").map_err(write_error)?;
            continue;
        }
        let report = conversation.ask(request, output, false)?;
        all_ran &= report.accepted;
        write!(output, "{}", report.stdout).map_err(write_error)?;
        match report.error {
            None => {}
            // No answer to this request (the reason on stderr); the next may have one.
            Some(Error::Unanswered { diagnostic, .. }) => eprintln!("{}", diagnostic.trim_end()),
            // The store failed: no further request may run unrecorded.
            Some(error) => return Err(error),
        }
    }
    writeln!(output).map_err(write_error)?;
    conversation.finish()?;
    Ok(Report { stdout: String::new(), accepted: all_ran, error: None })
}
