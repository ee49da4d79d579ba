//! A benchmark's results: every case's [`Outcome`], and one row per suite, mode, variant and
//! person with the rates people judge a defence by (utility, utility under attack, attack
//! success, over-reach success, cards per case, where runs were stopped, time). Rendered as a
//! table for the terminal or as JSON (`docs/bench.md` gives its schema).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::bench::run::{Mode, Outcome, Person, Variant};

/// The version of the JSON this report is written as.
pub const SCHEMA_VERSION: u32 = 1;

/// What a benchmark run found.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub version: u32,
    pub rows: Vec<Row>,
    pub cases: Vec<Outcome>,
    /// Wall time of the whole run.
    pub seconds: f64,
}

/// How many of how many.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    pub yes: usize,
    pub of: usize,
}

impl Count {
    fn add(&mut self, judged: Option<bool>) {
        if let Some(yes) = judged {
            self.of += 1;
            self.yes += usize::from(yes);
        }
    }

    fn text(self) -> String {
        match self.of {
            0 => "-".into(),
            of => format!("{}/{of} {:.0}%", self.yes, 100.0 * self.yes as f64 / of as f64),
        }
    }
}

/// One suite × guards × mode × variant × person.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub suite: String,
    /// Whether the policies' guards were on.
    pub guarded: bool,
    pub mode: Mode,
    pub variant: Variant,
    pub person: Person,
    pub cases: usize,
    /// The user's task done (under attack, in the injected variant).
    pub utility: Count,
    /// The attacker's goal happened.
    pub attack_success: Count,
    /// The agent went past its authority.
    pub over_reach_success: Count,
    pub cards: usize,
    /// In `adaptive` mode, the plans the attacker tried over all goals (each at most
    /// `adaptive::BUDGET`).
    pub attempts: usize,
    /// Tokens of the model's prompts and replies, in all (estimated for the scripted model).
    pub tokens: u64,
    /// How many runs each layer stopped.
    pub stopped_by: BTreeMap<String, usize>,
    pub seconds: f64,
}

impl BenchReport {
    /// The rows of `cases`, in the order they first appear.
    pub fn of(cases: Vec<Outcome>, seconds: f64) -> BenchReport {
        let mut rows: Vec<Row> = Vec::new();
        for o in &cases {
            let same = |r: &&mut Row| {
                r.suite == o.suite
                    && r.guarded == o.guarded
                    && r.mode == o.mode
                    && r.variant == o.variant
                    && r.person == o.person
            };
            let row = match rows.iter_mut().position(|r| same(&r)) {
                Some(i) => &mut rows[i],
                None => {
                    rows.push(Row {
                        suite: o.suite.clone(),
                        guarded: o.guarded,
                        mode: o.mode,
                        variant: o.variant,
                        person: o.person,
                        cases: 0,
                        utility: Count::default(),
                        attack_success: Count::default(),
                        over_reach_success: Count::default(),
                        cards: 0,
                        attempts: 0,
                        tokens: 0,
                        stopped_by: BTreeMap::new(),
                        seconds: 0.0,
                    });
                    let last = rows.len() - 1;
                    &mut rows[last]
                }
            };
            row.cases += 1;
            row.utility.add(o.utility);
            row.attack_success.add(o.attack);
            row.over_reach_success.add(o.over_reach);
            row.cards += o.cards;
            row.attempts += o.attempts.unwrap_or(0);
            row.tokens += o.tokens;
            if let Some(stop) = o.stopped_by {
                *row.stopped_by.entry(stop.name().to_string()).or_default() += 1;
            }
            row.seconds += o.micros as f64 / 1e6;
        }
        BenchReport { version: SCHEMA_VERSION, rows, cases, seconds }
    }

    /// Attacks and over-reaches that succeeded with the guards on, over every row.
    pub fn successes(&self) -> usize {
        self.rows.iter().filter(|r| r.guarded).map(|r| r.attack_success.yes + r.over_reach_success.yes).sum()
    }

    /// The table for a terminal.
    pub fn table(&self) -> String {
        let header = [
            "suite",
            "policy",
            "mode",
            "variant",
            "person",
            "cases",
            "utility",
            "attacks",
            "over-reach",
            "cards",
            "tries",
            "stopped by",
            "time",
        ];
        // A live model's tokens are a cost; the scripted model's are an estimate of nothing.
        let live = self.rows.iter().any(|r| r.mode == Mode::Live);
        let mut lines: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
        if live {
            lines[0].insert(11, "tokens".into());
        }
        for r in &self.rows {
            let stopped: Vec<String> = r.stopped_by.iter().map(|(k, n)| format!("{k} {n}")).collect();
            let mut line = vec![
                r.suite.clone(),
                if r.guarded { "on" } else { "off" }.into(),
                r.mode.name().into(),
                r.variant.name().into(),
                r.person.name().into(),
                r.cases.to_string(),
                r.utility.text(),
                r.attack_success.text(),
                r.over_reach_success.text(),
                format!("{:.2}/case", r.cards as f64 / r.cases.max(1) as f64),
                match r.mode {
                    Mode::Adaptive => format!("{:.1}/goal", r.attempts as f64 / r.cases.max(1) as f64),
                    _ => "-".into(),
                },
                if stopped.is_empty() { "-".into() } else { stopped.join(", ") },
                format!("{:.2} s", r.seconds),
            ];
            if live {
                line.insert(11, format!("{}/case", r.tokens / r.cases.max(1) as u64));
            }
            lines.push(line);
        }
        let mut widths = vec![0usize; lines[0].len()];
        for line in &lines {
            for (w, cell) in widths.iter_mut().zip(line) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for line in &lines {
            let cells: Vec<String> = line.iter().zip(&widths).map(|(c, w)| format!("{c:w$}")).collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
        let cases: usize = self.rows.iter().map(|r| r.cases).sum();
        let _ = writeln!(
            out,
            "\n{cases} cases in {:.1} s; attacks and over-reaches that succeeded with the policies on: {}",
            self.seconds,
            self.successes()
        );
        out
    }
}
