//! `cordon chat`: requests typed one per line, each run like `cordon ask`, over one
//! environment and one session: what a request does to the world and to the session (a taint)
//! is there for the next. An empty line is skipped; `/quit` or the end of input stops. Each
//! request is recorded in the store; the session file's session in the store is held until the
//! chat ends.

use std::io::{self, BufRead, Write};
use std::path::Path;

use crate::ask::{Conversation, Setup};
use crate::{Error, Report};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub setup: Setup,
}

/// Reads requests from `input` and prints each answer to `output` as it comes; the report
/// says whether every request ran to the end.
pub fn run(
    args: &Args,
    read: &dyn Fn(&Path) -> io::Result<String>,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<Report, Error> {
    let mut conversation = Conversation::open(&args.setup, read)?;
    let mut all_ran = true;
    let write_error = |error: io::Error| Error::Usage(format!("cannot write the answer: {error}"));
    loop {
        write!(output, "> ").and_then(|()| output.flush()).map_err(write_error)?;
        let mut line = String::new();
        let read = input.read_line(&mut line).map_err(|e| Error::Usage(format!("cannot read the request: {e}")))?;
        let request = line.trim();
        if read == 0 || request == "/quit" {
            break;
        }
        if request.is_empty() {
            continue;
        }
        let report = conversation.ask(request)?;
        all_ran &= report.accepted;
        write!(output, "{}", report.stdout).map_err(write_error)?;
        // Kept after every request, so that stopping at any point loses nothing.
        conversation.save()?;
        if let Some(error) = report.error {
            // The store failed: no further request may run unrecorded.
            return Err(error);
        }
    }
    writeln!(output).map_err(write_error)?;
    conversation.close()?;
    Ok(Report { stdout: String::new(), accepted: all_ran, error: None })
}
