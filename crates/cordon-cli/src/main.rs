//! The `cordon` command. This file parses arguments and prints; each subcommand lives in its own
//! module and returns a [`Report`] (what to print, how to exit) or an [`Error`]. This crate is
//! the only one in the workspace that prints.
//!
//! Exit codes: 0 accepted, 1 rejected, 2 usage or IO error (clap's usage errors exit 2 too).

mod ask;
mod chat;
mod check;
mod demo;
mod run;

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "cordon", version, about = "Check agent plans against policies before they run")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Type-check a plan (and its policy modules) without running it
    Check(check::Args),
    /// Check a plan, then run it against a simulated environment, printing every tool call
    /// and decision
    Run(run::Args),
    /// Ask a model: the request becomes a typed hole at the policy's entry, filled with
    /// checked code and run against a simulated environment
    Ask(ask::Args),
    /// Requests typed one per line, each run like `ask`, over one environment and session
    Chat(chat::Args),
    /// Check the seed examples offline and show what Cordon says about each
    Demo,
}

/// What a subcommand has to say: text for stdout and whether the program was accepted.
#[derive(Debug)]
pub struct Report {
    pub stdout: String,
    pub accepted: bool,
}

/// A host-side failure (not a problem in the checked program): printed on stderr, exit 2.
#[derive(Debug)]
pub enum Error {
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A bad argument or input file, with a message that says what is wrong.
    Usage(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Read { path, error } => write!(f, "cannot read `{}`: {error}", path.display()),
            Error::Write { path, error } => write!(f, "cannot write `{}`: {error}", path.display()),
            Error::Usage(message) => f.write_str(message),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Check(args) => check::run(args, &|path| std::fs::read_to_string(path)),
        Command::Run(args) => run::run(args, &|path| std::fs::read_to_string(path)),
        Command::Ask(args) => ask::run(args, &|path| std::fs::read_to_string(path)),
        Command::Chat(args) => {
            let stdin = std::io::stdin();
            chat::run(args, &|path| std::fs::read_to_string(path), &mut stdin.lock(), &mut std::io::stdout())
        }
        Command::Demo => Ok(demo::run()),
    };
    match result {
        Ok(report) => {
            print!("{}", report.stdout);
            ExitCode::from(if report.accepted { 0 } else { 1 })
        }
        Err(error) => {
            eprintln!("cordon: {error}");
            ExitCode::from(2)
        }
    }
}
