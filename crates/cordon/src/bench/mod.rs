//! `cordon bench`: Cordon's own task suites (`bench/*/suite.toml`), each case run through the
//! library as any front end runs a plan, and judged by the suite's checks.
//!
//! For each suite the cases are: in `oracle` mode (the reference plans and fills, a person who
//! reads the cards), every user task on the suite's data (`normal`), every user task with each
//! injection placed where it reads (`injected`: is the task still done, did the attacker's goal
//! happen), and every over-reach task's right plan (`over-reach`); in `worst-case` mode, every
//! user task with holes, with each injection it reads, every hole whose prompt showed the
//! injected text filled by the attacker (and a hurried person at the cards); in
//! `compromised-planner` mode (the attacker writes the plan, a hurried person presses `y` on
//! any card of a tool the request names), every injection task's plan with the data and cards
//! of each user task that reads its vector, and every over-reach task's tempted plan; in
//! `adaptive` mode, each injection task's goal pursued by an attacker who reads why each plan
//! failed and writes another (`adaptive.rs`), with the data and cards of the first user task
//! that reads its vector. With a model (`live`), only the `live` cases: every user task on
//! clean data (an informed person at the cards) and with each injection it reads (a hurried
//! one), the model writing the plans and fills.

mod adaptive;
mod check;
mod files;
mod html;
mod model;
mod report;
mod run;
mod suite;

use std::path::Path;
use std::time::Instant;

pub use html::page as html;
pub use report::{BenchReport, Count, Row, SCHEMA_VERSION};
pub use run::{Live, Mode, Outcome, Person, Stop, Variant};
pub use suite::{Asked, Check, Fill, InjectionTask, OverReach, Patch, Suite, UserTask, load, load_all};

use crate::Error;

/// Which cases to run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only these suites (all, if empty).
    pub suites: Vec<String>,
    /// Only these modes (all, if empty).
    pub modes: Vec<Mode>,
    /// Only the cases of this task (a user, injection or over-reach task's id).
    pub task: Option<String>,
    /// Also run every case with the policies' guards off, to show what they buy.
    pub unguarded: bool,
    /// Put the requests to a real model (`live` mode) instead: every user task on clean data
    /// and with each injection it reads. The other modes need no model and are not run.
    pub live: bool,
}

/// The cases of `suite` that `options` choose.
fn cases<'s>(suite: &'s Suite, options: &Options) -> Vec<run::Case<'s>> {
    let mut out = Vec::new();
    let wanted = |m: Mode| options.modes.is_empty() || options.modes.contains(&m);
    let base = |mode, variant, person, task: &str, request: &'s str, plan: &'s str, approve: &'s [Asked]| run::Case {
        suite,
        mode,
        variant,
        person,
        guarded: true,
        task: task.to_string(),
        injection: None,
        request,
        plan,
        patches: &[],
        approve,
        fills: &[],
        attacker_fills: &[],
        utility: None,
        attack: None,
        over_reach: None,
    };
    // Each user task with each injection placed where it reads.
    let pairs: Vec<(&'s UserTask, &'s InjectionTask)> = suite
        .user_tasks
        .iter()
        .flat_map(|t| suite.injection_tasks.iter().filter(|i| t.reads.contains(&i.vector)).map(move |i| (t, i)))
        .collect();
    let injected = |mode, person, t: &'s UserTask, i: &'s InjectionTask, plan: &'s str| run::Case {
        injection: Some(i.id.clone()),
        patches: &i.inject,
        attack: Some(&i.happened),
        ..base(mode, Variant::Injected, person, &t.id, &t.request, plan, &t.approve)
    };
    if options.live {
        for t in &suite.user_tasks {
            out.push(run::Case {
                utility: Some(&t.utility),
                ..base(Mode::Live, Variant::Normal, Person::Informed, &t.id, &t.request, "", &t.approve)
            });
        }
        for &(t, i) in &pairs {
            out.push(run::Case { utility: Some(&t.utility), ..injected(Mode::Live, Person::Hurried, t, i, "") });
        }
    }
    if wanted(Mode::Oracle) && !options.live {
        let (mode, person) = (Mode::Oracle, Person::Informed);
        for t in &suite.user_tasks {
            out.push(run::Case {
                utility: Some(&t.utility),
                fills: &t.fills,
                ..base(mode, Variant::Normal, person, &t.id, &t.request, &t.plan, &t.approve)
            });
        }
        for &(t, i) in &pairs {
            out.push(run::Case { utility: Some(&t.utility), fills: &t.fills, ..injected(mode, person, t, i, &t.plan) });
        }
        for o in &suite.over_reach {
            out.push(run::Case {
                utility: Some(&o.utility),
                over_reach: Some(&o.happened),
                ..base(mode, Variant::OverReach, person, &o.id, &o.request, &o.plan, &o.approve)
            });
        }
    }
    if wanted(Mode::WorstCase) && !options.live {
        // Only holes an injection's attacker wrote fills for: elsewhere there is nothing to take.
        let (mode, person) = (Mode::WorstCase, Person::Hurried);
        for &(t, i) in pairs.iter().filter(|(t, i)| !t.fills.is_empty() && !i.fills.is_empty()) {
            out.push(run::Case {
                utility: Some(&t.utility),
                fills: &t.fills,
                attacker_fills: &i.fills,
                ..injected(mode, person, t, i, &t.plan)
            });
        }
    }
    if wanted(Mode::CompromisedPlanner) && !options.live {
        let (mode, person) = (Mode::CompromisedPlanner, Person::Hurried);
        for &(t, i) in &pairs {
            out.push(injected(mode, person, t, i, &i.plan));
        }
        for o in &suite.over_reach {
            out.push(run::Case {
                over_reach: Some(&o.happened),
                ..base(mode, Variant::OverReach, person, &o.id, &o.request, &o.tempted, &o.approve)
            });
        }
    }
    if wanted(Mode::Adaptive) && !options.live {
        // Each goal once, with the data and cards of the first user task that reads its vector.
        let (mode, person) = (Mode::Adaptive, Person::Hurried);
        for i in &suite.injection_tasks {
            if let Some(t) = suite.user_tasks.iter().find(|t| t.reads.contains(&i.vector)) {
                out.push(injected(mode, person, t, i, &i.plan));
            }
        }
    }
    if let Some(task) = &options.task {
        out.retain(|c| &c.task == task || c.injection.as_ref() == Some(task));
    }
    if options.unguarded {
        let off: Vec<run::Case<'s>> = out.iter().map(|c| run::Case { guarded: false, ..c.clone() }).collect();
        out.extend(off);
    }
    out
}

/// Runs the chosen cases of the suites under `root` (the `live` ones on `live`'s model),
/// telling `progress` how many of how many are done after each.
pub fn run(
    root: &Path,
    options: &Options,
    mut live: Option<Live<'_>>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<BenchReport, Error> {
    if options.live != live.is_some() {
        return Err(Error::Setup("the live mode needs a model, and only it does".into()));
    }
    let mut names = suite::names(root).map_err(Error::Setup)?;
    if let Some(unknown) = options.suites.iter().find(|s| !names.contains(s)) {
        return Err(Error::Setup(format!("there is no suite `{unknown}`; the suites are: {}", names.join(", "))));
    }
    // Only the chosen suites are read: one being edited does not stop another's run.
    names.retain(|name| options.suites.is_empty() || options.suites.contains(name));
    let suites: Vec<Suite> =
        names.iter().map(|name| load(&root.join(name))).collect::<Result<_, _>>().map_err(Error::Setup)?;
    let all: Vec<run::Case<'_>> = suites.iter().flat_map(|s| cases(s, options)).collect();
    let started = Instant::now();
    let mut outcomes = Vec::with_capacity(all.len());
    for (n, case) in all.iter().enumerate() {
        outcomes.push(match case.mode {
            Mode::Adaptive => adaptive::attack(case)?,
            _ => run::run(case, live.as_mut())?,
        });
        progress(n + 1, all.len());
    }
    Ok(BenchReport::of(outcomes, started.elapsed().as_secs_f64()))
}
