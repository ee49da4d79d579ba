//! `cordon bench`: runs the benchmark's suites (`bench/`) through the library and prints the
//! table, or the report as JSON, and writes it as a web page if asked; exits 1 if any attack
//! or over-reach succeeded.

use std::fmt::Write as _;
use std::path::PathBuf;

use cordon::api::events::{Event, Observer};
use cordon::api::models::{ProviderConfig, Transcript};
use cordon::api::store::{StoreError, private};
use cordon::bench::{BenchReport, Live, Mode, Options};

use crate::outcome::{Error, Report};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this suite (repeatable; default: every suite)
    #[arg(long = "suite", value_name = "NAME")]
    pub suites: Vec<String>,
    /// Only this mode (repeatable): oracle, worst-case, compromised-planner, adaptive (live: --model)
    #[arg(long = "mode", value_name = "MODE")]
    pub modes: Vec<String>,
    /// Only the cases of this task (a user, injection or over-reach task's id)
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,
    /// The report as a table for people, or as JSON (its schema: docs/bench.md)
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also list every case: how it ended, the calls it proposed, and its answer or why it
    /// stopped (with --task, one case's replay)
    #[arg(short, long)]
    pub verbose: bool,
    /// Where the suites are
    #[arg(long, value_name = "DIR", default_value = "bench")]
    pub suites_dir: PathBuf,
    /// Also run every case with the policies' guards off (every label lets anything through,
    /// nothing asks), to show what they buy
    #[arg(long)]
    pub policy_off: bool,
    /// Also write the report as a self-contained web page (tables and charts)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The live mode: put every user task's request, on clean data and with each injection it
    /// reads, to this model (openai:MODEL[@BASE_URL], anthropic:MODEL[@BASE_URL],
    /// scripted:PATH or replay:PATH) instead of running the other modes
    #[arg(long, value_name = "SPEC")]
    pub model: Option<String>,
    /// With --model: write a JSONL transcript of every request's events here, to replay the
    /// run offline (`--model replay:FILE`)
    #[arg(long, value_name = "FILE", requires = "model")]
    pub transcript: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Runs the chosen cases; accepted unless an attack or an over-reach succeeded.
pub fn run(args: &Args) -> Result<Report, Error> {
    let mut modes = Vec::new();
    for name in &args.modes {
        let known: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
        let mode = Mode::named(name)
            .ok_or_else(|| Error::Usage(format!("there is no mode `{name}`; the modes are: {}", known.join(", "))))?;
        modes.push(mode);
    }
    if modes.contains(&Mode::Live) && args.model.is_none() {
        return Err(Error::Usage("the live mode puts the requests to a model: give one with --model SPEC".into()));
    }
    let options = Options {
        suites: args.suites.clone(),
        modes,
        task: args.task.clone(),
        unguarded: args.policy_off,
        live: args.model.is_some(),
    };
    let mut model = match &args.model {
        Some(spec) => {
            let config = ProviderConfig::parse(spec).map_err(|e| Error::Usage(e.to_string()))?;
            Some(cordon::api::models::open(&config).map_err(|e| Error::Usage(e.to_string()))?)
        }
        None => None,
    };
    let mut transcript = match &args.transcript {
        // What the model was shown: the user's alone, and never written through a link.
        Some(path) => Some(Transcript::new(private::create_private(path).map_err(|e| match e {
            StoreError::Io { path, error } => Error::Cordon(cordon::Error::Write { path, error }),
            refused => Error::Usage(refused.to_string()),
        })?)),
        None => None,
    };
    let mut unheard = |_: &Event<'_>| {};
    let live = model.as_mut().map(|model| Live {
        model: &mut **model,
        observer: match transcript.as_mut() {
            Some(t) => t as &mut dyn Observer,
            None => &mut unheard,
        },
    });
    // A bar on stderr while the cases run; indicatif draws nothing where stderr is no terminal.
    let bar = indicatif::ProgressBar::new(0);
    let progress = |done: usize, all: usize| {
        bar.set_length(all as u64);
        bar.set_position(done as u64);
    };
    let report = cordon::bench::run(&args.suites_dir, &options, live, &mut { progress }).map_err(Error::Cordon)?;
    bar.finish_and_clear();
    if let Some(error) = transcript.as_ref().and_then(Transcript::error) {
        return Err(Error::Usage(format!("cannot write the transcript: {error}")));
    }
    // A replayed transcript with replies left over says so.
    if let Some(model) = model.as_mut() {
        model.finish().map_err(|e| Error::Usage(e.to_string()))?;
    }
    if let Some(path) = &args.html {
        std::fs::write(path, cordon::bench::html(&report))
            .map_err(|error| Error::Cordon(cordon::Error::Write { path: path.clone(), error }))?;
    }
    let stdout = match args.format {
        Format::Json => serde_json::to_string_pretty(&report).unwrap_or_default() + "\n",
        Format::Text if args.verbose => cases(&report) + "\n" + &report.table(),
        Format::Text => report.table(),
    };
    Ok(Report { stdout, accepted: report.successes() == 0, error: None })
}

/// One line per case, then each call it proposed and what it said.
fn cases(report: &BenchReport) -> String {
    let mut out = String::new();
    for c in &report.cases {
        let judged = [("utility", c.utility), ("attack", c.attack), ("over-reach", c.over_reach)];
        let verdicts: Vec<String> = judged
            .iter()
            .filter_map(|(what, v)| v.map(|yes| format!("{what} {}", if yes { "yes" } else { "no" })))
            .collect();
        let injection = c.injection.as_deref().map(|i| format!(" + {i}")).unwrap_or_default();
        let stopped = c.stopped_by.map(|s| format!(" by {}", s.name())).unwrap_or_default();
        // An adaptive case's attempts, then the last one's calls.
        let calls: String = c.tried.iter().chain(&c.calls).map(|line| format!("    {line}\n")).collect();
        let _ = write!(
            out,
            "{} {} {} {}{injection}: {}{stopped}; {} card(s); {}\n{calls}    => {}\n",
            c.suite,
            c.mode.name(),
            c.variant.name(),
            c.task,
            c.ended,
            c.cards,
            verdicts.join(", "),
            c.said.lines().next().unwrap_or("")
        );
    }
    out
}
