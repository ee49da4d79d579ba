//! `cordon demo`: the seed examples, offline, as a newcomer's first look. Each story is a
//! policy and plans a model might write; Cordon rejects the unsafe ones before anything runs,
//! with the diagnostic a user would read. In the GitHub story the accepted plans then run
//! against the simulated GitHub: the safe one to the end, the ones only labels can see through
//! stopped at the boundary. The files are built in, so the demo runs from anywhere.

use cordon_runtime::{Config, Decision, Program, Sessions};
use cordon_syntax::{SourceMap, render};
use cordon_types::{CheckOptions, check};

use crate::Report;

/// What Cordon must do with a plan.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Rejected,
    Accepted,
    /// Accepted, and runs to the end in the story's environment.
    Runs,
    /// Accepted, then stopped at run time.
    Blocked,
}

struct Plan {
    path: &'static str,
    text: &'static str,
    expect: Expect,
}

struct Story {
    title: &'static str,
    intro: &'static str,
    policy: (&'static str, &'static str),
    /// The simulated environment accepted plans run in, if any.
    env: Option<&'static str>,
    plans: &'static [Plan],
}

macro_rules! file {
    ($path:literal) => {
        ($path, include_str!(concat!("../../../", $path)))
    };
}

macro_rules! plan {
    ($path:literal, $expect:expr) => {
        Plan { path: $path, text: include_str!(concat!("../../../", $path)), expect: $expect }
    };
}

const STORIES: &[Story] = &[
    Story {
        title: "Refinements: a divisor that cannot be zero",
        intro: "`divide(x: Int, y: {v: Int | v != 0})` is only callable where the solver can prove y != 0.",
        policy: file!("policies/console.cord"),
        env: None,
        plans: &[
            plan!("examples/divide/reject_zero.cord", Expect::Rejected),
            plan!("examples/divide/reject_unchecked_input.cord", Expect::Rejected),
            plan!("examples/divide/accept_guarded.cord", Expect::Accepted),
        ],
    },
    Story {
        title: "The lethal trifecta: private data must not reach a public issue",
        intro: "Reading a private repository taints the linear session; `create_issue` needs an untainted one. \
                What the types cannot see, labels stop at run time: secrets cannot reach a public issue, \
                and outsiders' text cannot drive one.",
        policy: file!("policies/github.cord"),
        env: Some("github"),
        plans: &[
            plan!("examples/github/benign.cord", Expect::Runs),
            plan!("examples/github/exfiltrate_private.cord", Expect::Rejected),
            plan!("examples/github/reuse_session.cord", Expect::Rejected),
            plan!("examples/github/exfiltrate_via_search.cord", Expect::Blocked),
            plan!("examples/github/injected_issue.cord", Expect::Blocked),
        ],
    },
    Story {
        title: "Opaque types: citations only from the trusted source",
        intro: "`Trusted[Bib]` has no constructor: only `fetch_bib` makes one, and `append` takes nothing else.",
        policy: file!("policies/citations.cord"),
        env: None,
        plans: &[
            plan!("examples/citations/fetch_and_append.cord", Expect::Accepted),
            plan!("examples/citations/forge_entry.cord", Expect::Rejected),
            plan!("examples/citations/write_plain_bib.cord", Expect::Rejected),
        ],
    },
];

/// Checks every story's plans and runs the accepted ones that have an environment; the report
/// is "accepted" when each outcome is the expected one.
pub fn run() -> Report {
    let mut out =
        String::from("Cordon checks a plan completely before any of it runs, then checks every effect it makes.\n");
    let mut all_as_expected = true;
    for (i, story) in STORIES.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n", i + 1, story.title));
        for line in wrap(story.intro, 88) {
            out.push_str(&format!("   {line}\n"));
        }
        for plan in story.plans {
            let mut sources = SourceMap::new();
            let policy = sources.add(story.policy.0, story.policy.1);
            let file = sources.add(plan.path, plan.text);
            let outcome = check(&sources, &[policy], Some(file), &CheckOptions::default());
            let command = if story.env.is_some() && outcome.accepted() { "run --env github" } else { "check" };
            out.push_str(&format!("\n   $ cordon {command} --policy {} {}\n", story.policy.0, plan.path));
            for line in wrap(&describe(plan.text), 88) {
                out.push_str(&format!("   # {line}\n"));
            }
            let mut got = if outcome.accepted() { Expect::Accepted } else { Expect::Rejected };
            let mut lines = Vec::new();
            let summary = render::summary(&outcome.diagnostics);
            for d in &outcome.diagnostics {
                lines.extend(render::human(d, &sources).lines().map(String::from));
            }
            let mut verdict = summary;
            if let (Some(env), Some(checked)) = (story.env, outcome.program.as_ref()) {
                let (ran, run_lines, run_verdict) = run_plan(env, checked, &sources);
                got = ran;
                lines = run_lines;
                verdict = run_verdict;
            }
            let as_expected = got == plan.expect;
            all_as_expected &= as_expected;
            out.push_str(&format!("   => {verdict}{}\n", if as_expected { "" } else { "  (UNEXPECTED)" }));
            for line in lines {
                out.push_str(&format!("     {line}\n"));
            }
        }
    }
    out.push_str(if all_as_expected {
        "\nEvery safe plan was accepted (and ran, where there is an environment); every unsafe one was\nrejected before it ran or stopped at the boundary.\n"
    } else {
        "\nSome outcomes differ from what the examples expect: this is a bug.\n"
    });
    Report { stdout: out, accepted: all_as_expected }
}

/// Runs an accepted plan in a fresh environment: what happened, the lines to show (tool calls
/// and the run-time diagnostic), and a one-line verdict.
fn run_plan(env: &str, checked: &cordon_types::Checked, sources: &SourceMap) -> (Expect, Vec<String>, String) {
    let mut env = match cordon_envs::env(env) {
        Ok(env) => env,
        Err(e) => return (Expect::Accepted, vec![e], "accepted, but the environment is missing".into()),
    };
    let program = match Program::new(checked) {
        Ok(p) => p,
        Err(e) => return (Expect::Accepted, vec![e.message], "accepted, but it does not compile".into()),
    };
    let config = Config { user: env.principal().to_string(), ..Config::default() };
    let report = cordon_runtime::run(&program, &Sessions::default(), &config, env.as_mut());
    let mut lines: Vec<String> = report
        .trace
        .iter()
        .filter_map(|e| match &e.decision {
            Decision::Allowed => Some(format!("ran      {}", e.tool)),
            Decision::Blocked { code, .. } => Some(format!("BLOCKED  {} [{code}]", e.tool)),
            _ => None,
        })
        .collect();
    match report.result {
        Ok(v) => {
            lines.push(format!("result: {}", v.value));
            (Expect::Runs, lines, "accepted, and ran to the end".into())
        }
        Err(e) => {
            lines.extend(render::human(&e.to_diagnostic(), sources).lines().map(String::from));
            (Expect::Blocked, lines, format!("accepted, then stopped at run time ({})", e.kind.code().as_str()))
        }
    }
}

/// The example's own description: its first comment paragraph after the command line,
/// without the verdict it starts with ("Rejected (code): ", "Accepted: "), which the demo prints.
fn describe(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| l.starts_with("// cordon") || l.trim() == "//")
        .take_while(|l| l.starts_with("//") && l.trim() != "//")
        .map(|l| l.trim_start_matches('/').trim())
        .collect();
    let joined = lines.join(" ");
    let without_verdict = match joined.split_once(": ") {
        Some((head, rest))
            if (head.starts_with("Accepted") || head.starts_with("Rejected")) && !head.contains(". ") =>
        {
            rest
        }
        _ => &joined,
    };
    let mut chars = without_verdict.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// Splits text into lines of at most `width` characters at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let last = lines.len() - 1;
        if !lines[last].is_empty() && lines[last].chars().count() + 1 + word.chars().count() > width {
            lines.push(String::new());
        }
        let last = lines.len() - 1;
        if !lines[last].is_empty() {
            lines[last].push(' ');
        }
        lines[last].push_str(word);
    }
    lines
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_verdict_is_the_expected_one() {
        let report = super::run();
        assert!(report.accepted, "{}", report.stdout);
        assert_eq!(report.stdout.matches("=> accepted").count(), 5, "{}", report.stdout);
        assert_eq!(report.stdout.matches("ran to the end").count(), 1, "{}", report.stdout);
        assert_eq!(report.stdout.matches("stopped at run time (label-flow)").count(), 2, "{}", report.stdout);
        assert_eq!(report.stdout.matches("=> rejected").count(), 6, "{}", report.stdout);
    }
}
