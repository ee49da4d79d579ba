//! `cordon chat`: requests typed one per line, each run like `cordon ask`, over one
//! environment and one session: what a request does to the world and to the session (a taint)
//! is there for the next. A one-line hint says how to stop; an empty line is skipped; `/help`
//! lists the commands; `/quit` (or `quit`, `exit`, `/exit` alone on a line) or the end of input
//! stops, and never goes to the model. A request's answer goes to stdout and, when it got no
//! answer, why to stderr; the chat goes on. The requests so far and their answers go into the
//! next request's prompt (as labels allow: `cordon::api::models::add_history`). Each request is
//! recorded in the store, and the sessions are kept after each, so stopping at any point loses
//! nothing.

use std::io::{self, Write};
use std::path::Path;

use cordon::api::approval::ReadLine;

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

/// Reads requests from `input` (a line at a time: at a terminal the approver reads the same
/// standard input between two requests) and prints each answer to `output` as it comes; the report
/// says whether every request ran to the end.
pub fn run(
    args: &Args,
    read: &dyn Fn(&Path) -> io::Result<String>,
    input: &mut dyn ReadLine,
    output: &mut dyn Write,
) -> Result<Report, Error> {
    let mut conversation = Conversation::open(&args.setup, read)?;
    let mut all_ran = true;
    let write_error = |error: io::Error| Error::Usage(format!("cannot write the answer: {error}"));
    writeln!(output, "{HINT}").map_err(write_error)?;
    loop {
        write!(output, "> ").and_then(|()| output.flush()).map_err(write_error)?;
        let mut line = String::new();
        let read = input.read_line(&mut line).map_err(|e| Error::Usage(format!("cannot read the request: {e}")))?;
        let request = line.trim();
        if read == 0 || QUIT.contains(&request.to_ascii_lowercase().as_str()) {
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
