//! The harness the workspaces' example tables share: each plan of an `examples/` folder with
//! what it must come to (runs, blocked at the boundary, rejected by the checker), checked and
//! run on a fresh workspace, with what must hold of the workspace afterwards; and the checks
//! that every plan of the folder is in the table and that the policy lints clean.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)] // each test binary uses a part; tests fail loudly

use cordon_engine::Report;
use cordon_runtime::{Config, Program, RunError, Sessions};
use cordon_sim::Environment;
use cordon_syntax::SourceMap;

use crate::common::{Recorder, Source};

/// What a plan should come to.
#[derive(Clone, Copy, Debug)]
pub enum Expect {
    /// Accepted and runs to the end.
    Runs,
    /// Accepted, and refused at run time by a label-flow whose message contains this.
    Blocked(&'static str),
    /// Refused by the checker with exactly this error.
    Rejected(&'static str),
}

/// One plan of the table.
pub struct Case<W> {
    pub file: &'static str,
    pub text: &'static str,
    pub expect: Expect,
    /// The tools the workspace performed (a refused call never reaches it).
    pub calls: &'static [&'static str],
    /// What must hold of the workspace afterwards.
    pub after: fn(&W),
}

/// `case!("mail", "todays_meetings", Runs, &["today"], unchanged)`: the plan
/// `examples/mail/todays_meetings.cord` and what it must come to.
#[macro_export]
macro_rules! case {
    ($folder:literal, $name:literal, $expect:expr, $calls:expr, $after:expr) => {
        $crate::table::Case {
            file: concat!("examples/", $folder, "/", $name, ".cord"),
            text: include_str!(concat!("../../../examples/", $folder, "/", $name, ".cord")),
            expect: $expect,
            calls: $calls,
            after: $after,
        }
    };
}

/// A run on a workspace: the workspace afterwards, the report, the tools performed.
pub struct Outcome<W> {
    pub world: W,
    pub report: Report,
    pub calls: Vec<String>,
}

/// Runs `program` on `world`, for its principal, recording the tools performed.
pub fn run_on<W: Environment>(mut world: W, program: &Program) -> Outcome<W> {
    let config = Config { user: world.principal().unwrap_or_default().to_string(), ..Config::default() };
    let mut host = Recorder::around(&mut world);
    let report = cordon_engine::run(program, &Sessions::default(), &config, &mut host);
    let calls = host.calls.iter().map(|c| c.tool.clone()).collect();
    drop(host);
    Outcome { world, report, calls }
}

/// The run's `label-flow` refusal.
pub fn label_flow<W>(out: &Outcome<W>) -> &RunError {
    match &out.report.result {
        Err(e) if e.kind.code().as_str() == "label-flow" => e,
        other => panic!("expected a label-flow, got {other:?}"),
    }
}

/// What a workspace's table needs besides its cases.
pub struct Table<W> {
    pub policy: &'static str,
    pub fresh: fn() -> W,
    /// What must hold after every plan, whatever it came to.
    pub kept: fn(&W),
    /// For a plan the checker rejects with a code, run without the checker: the boundary's
    /// code for it, and whether the calls performed before it are fine.
    pub unchecked: fn(&str) -> &'static str,
    pub unchecked_calls_ok: fn(&[String]) -> bool,
}

impl<W: Environment> Table<W> {
    /// Checks and runs one case, asserting what it expects; says whether the checked plan ran to
    /// its end (`false` if the checker or the boundary stopped it).
    pub fn play(&self, case: &Case<W>) -> bool {
        let source = Source::new(Some(self.policy), case.text);
        match case.expect {
            Expect::Rejected(code) => {
                let refused = source.check_with(None).err().unwrap_or_else(|| panic!("{}: accepted", case.file));
                assert_eq!(refused, [code], "{}", case.file);
                // Without the checker, the boundary refuses the call before the workspace sees it.
                let out = run_on((self.fresh)(), &source.unchecked());
                let e = out.report.result.as_ref().unwrap_err();
                assert_eq!(e.kind.code().as_str(), (self.unchecked)(code), "{}: {e}", case.file);
                assert!((self.unchecked_calls_ok)(&out.calls), "{}: {:?}", case.file, out.calls);
                (case.after)(&out.world);
                (self.kept)(&out.world);
                false
            }
            Expect::Runs | Expect::Blocked(_) => {
                let out = run_on((self.fresh)(), &source.checked());
                assert_eq!(out.calls, case.calls, "{}", case.file);
                match case.expect {
                    Expect::Blocked(message) => {
                        let e = label_flow(&out);
                        assert!(e.message.contains(message), "{}: {}", case.file, e.message);
                    }
                    _ => assert!(out.report.result.is_ok(), "{}: {:?}", case.file, out.report.result),
                }
                (case.after)(&out.world);
                (self.kept)(&out.world);
                out.report.result.is_ok()
            }
        }
    }

    /// Plays every case: how many ran to their end and how many were stopped, after checking
    /// that exactly the benign ones ran.
    pub fn play_all(&self, cases: &[Case<W>]) -> (usize, usize) {
        let benign = cases.iter().filter(|c| matches!(c.expect, Expect::Runs)).count();
        let ran = cases.iter().filter(|case| self.play(case)).count();
        let stopped = cases.len() - ran;
        assert_eq!((ran, stopped), (benign, cases.len() - benign));
        (ran, stopped)
    }
}

/// Every `.cord` file of `examples/<folder>` is a case of the table, and no case is missing.
pub fn assert_folder_listed<W>(folder: &str, cases: &[Case<W>]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(folder);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| format!("examples/{folder}/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|f| f.ends_with(".cord"))
        .collect();
    files.sort();
    let mut listed: Vec<String> = cases.iter().map(|c| c.file.to_string()).collect();
    listed.sort();
    assert_eq!(files, listed);
}

/// The policy checks with no diagnostic and lints clean.
pub fn assert_lints_clean(path: &str, policy: &str) {
    let mut sources = SourceMap::new();
    let policy = sources.add(path, policy);
    let outcome = cordon_types::check(&sources, &[policy], None, &cordon_types::CheckOptions::default());
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
    let lint = cordon_types::lint(&sources, &[policy]);
    assert!(lint.is_empty(), "{lint:?}");
}
