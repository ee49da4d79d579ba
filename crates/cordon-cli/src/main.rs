//! The `cordon` command. This file parses arguments and prints; each subcommand lives in its own
//! module and returns a [`Report`] (what to print, how to exit) or an [`Error`]. This crate is
//! the only one in the workspace that prints.
//!
//! Exit codes: 0 accepted, 1 rejected (or no fill checked), 2 usage, IO or store error (clap's
//! usage errors exit 2 too), 3 the model could not be reached. Errors go to stderr.

mod approve;
mod ask;
mod audit;
mod bench;
mod broker;
mod chat;
mod check;
mod clearance;
mod colour;
mod completions;
mod demo;
mod fmt;
mod interrupt;
mod limits;
mod lsp;
mod mcp;
mod origin;
mod outcome;
mod run;
mod secrets;
mod serve;
mod shown;
mod store;
mod tools;
mod trace;
mod waiting;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::outcome::{Error, Report};
use crate::shown::Guarded;

/// A plan's values are many small blocks, made and freed together (see the workspace's
/// `Cargo.toml`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(name = "cordon", version = env!("CORDON_VERSION"), about = "Check agent plans against policies before they run")]
struct Cli {
    #[command(subcommand)]
    command: Command,

    /// Colour: `auto` (where the output is a terminal and `NO_COLOR` is not set), `always` or
    /// `never`
    #[arg(long, global = true, value_enum, default_value_t = colour::Choice::Auto, value_name = "WHEN")]
    color: colour::Choice,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Type-check a plan (and its policy modules) without running it
    Check(check::Args),
    /// Format Cordon files in place: indentation and spacing made canonical, every token,
    /// comment and line break kept (`--check` changes nothing; `-` is standard input)
    Fmt(fmt::Args),
    /// Check a plan, then run it against a simulated environment, printing every tool call
    /// and decision
    Run(run::Args),
    /// Ask a model: the request becomes a typed hole at the policy's entry, filled with
    /// checked code and run against a simulated environment
    Ask(ask::Args),
    /// Requests typed one per line, each run like `ask`, over one environment and session
    Chat(chat::Args),
    /// Run the benchmark's suites (bench/): each task's plan under its policy, with injections
    /// and an attacker writing plans, judged by the suite's checks
    Bench(bench::Args),
    /// Check the seed examples offline and show what Cordon says about each (in a store in
    /// memory: the demo writes no file)
    Demo,
    /// The audit log: verify its chain, show what a request did, print its head
    #[command(subcommand)]
    Audit(audit::Command),
    /// The store itself: remove old transcripts
    #[command(subcommand)]
    Store(store::Command),
    /// The approvals the gate remembers: list them, revoke one
    #[command(subcommand)]
    Approvals(approve::Command),
    /// The vault's credentials: add one (bound to hosts and a header), list them, remove one
    #[command(subcommand)]
    Secrets(secrets::Command),
    /// The credential broker: the one process that opens the vault, putting a secret into a
    /// request only where it is bound, and sending the web's requests (`run --web` starts its
    /// own; this one serves `--broker`)
    Broker(broker::Args),
    /// The Model Context Protocol: import a server's tools as a policy, serve Cordon to
    /// another agent
    #[command(subcommand)]
    Mcp(mcp::Command),
    /// Run requests in the background: each waits at its cards until a person answers them on
    /// the web page or over the HTTP API (`--add-user NAME` lets a person in)
    Serve(serve::Args),
    /// A language server for Cordon policies and plans on stdio, for editors: diagnostics as
    /// you type, hover, go to definition, completion, formatting, a plan's effect summary
    Lsp(lsp::Args),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell (e.g.
    /// `source <(cordon completions bash)`)
    Completions(completions::CompletionArgs),
    /// Print the man page (roff), or write one for each subcommand into a directory with
    /// `--dir`
    Man(completions::ManArgs),
}

/// Everything goes to the terminal guarded (`shown`): no control sequence from data reaches
/// it.
fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Run(args) => interrupt::watch(&args.store),
        Command::Ask(args) => interrupt::watch(&args.setup.store),
        Command::Chat(args) => interrupt::watch(&args.setup.store),
        _ => {}
    }
    let no_color = std::env::var("NO_COLOR").ok();
    let term = std::env::var("TERM").ok();
    let paints = |is_terminal| cli.color.paints(is_terminal, no_color.as_deref(), term.as_deref());
    let mut stdout = Guarded::painted(std::io::stdout(), paints(std::io::stdout().is_terminal()));
    let result = match &cli.command {
        Command::Check(args) => check::run(args, &|path| std::fs::read_to_string(path)),
        Command::Fmt(args) => fmt::run(args),
        Command::Run(args) => run::run(args, &|path| std::fs::read_to_string(path), &mut stdout),
        Command::Ask(args) => ask::run(args, &|path| std::fs::read_to_string(path), &mut stdout),
        Command::Chat(args) => {
            let mut stdin = cordon::api::approval::StdinLines;
            let mut requests = chat::Requests::at_a_terminal().unwrap_or(chat::Requests::Lines(&mut stdin));
            chat::run(args, &|path| std::fs::read_to_string(path), &mut requests, &mut stdout)
        }
        Command::Demo => Ok(demo::run()),
        Command::Bench(args) => bench::run(args),
        Command::Audit(command) => audit::run(command),
        Command::Store(command) => store::run(command),
        Command::Approvals(command) => approve::run(command),
        Command::Secrets(command) => {
            secrets::run(command).map(|stdout| Report { stdout, accepted: true, error: None }).map_err(Error::from)
        }
        Command::Mcp(command) => mcp::run(command),
        Command::Serve(args) => serve::run(args),
        Command::Lsp(args) => lsp::run(args),
        Command::Completions(args) => completions::completions(args, <Cli as clap::CommandFactory>::command()),
        Command::Man(args) => completions::man(args, <Cli as clap::CommandFactory>::command()),
        Command::Broker(args) => broker::run(args)
            .map(|()| Report { stdout: String::new(), accepted: true, error: None })
            .map_err(Error::from),
    };
    let mut stderr = Guarded::painted(std::io::stderr(), paints(std::io::stderr().is_terminal()));
    // A terminal that is gone cannot be told so.
    match result {
        Ok(Report { stdout: text, error: Some(error), .. }) => {
            let _ = write!(stdout, "{text}").and_then(|()| stdout.flush());
            let _ = match error {
                Error::Unanswered { .. } => writeln!(stderr, "{error}"),
                _ => writeln!(stderr, "cordon: {error}"),
            };
            ExitCode::from(error.exit_code())
        }
        Ok(report) => {
            let _ = write!(stdout, "{}", report.stdout);
            ExitCode::from(if report.accepted { 0 } else { 1 })
        }
        Err(error) => {
            let _ = writeln!(stderr, "cordon: {error}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every subcommand's arguments are well formed (clap checks a command only when it is
    /// parsed: two flags of one name would panic only when that subcommand is used).
    #[test]
    fn the_command_line_is_well_formed() {
        <super::Cli as clap::CommandFactory>::command().debug_assert();
    }
}
