//! `cordon demo`: the seed examples, checked offline, as a newcomer's first look. Each story is
//! a policy and plans a model might write; Cordon accepts the safe ones and rejects the others
//! before anything runs, with the diagnostic a user would read. The files are built in, so the
//! demo runs from anywhere.

use cordon_syntax::{SourceMap, render};
use cordon_types::{CheckOptions, check};

use crate::Report;

struct Plan {
    path: &'static str,
    text: &'static str,
    /// What Cordon must say about it.
    accepted: bool,
}

struct Story {
    title: &'static str,
    intro: &'static str,
    policy: (&'static str, &'static str),
    plans: &'static [Plan],
}

macro_rules! file {
    ($path:literal) => {
        ($path, include_str!(concat!("../../../", $path)))
    };
}

macro_rules! plan {
    ($path:literal, $accepted:expr) => {
        Plan { path: $path, text: include_str!(concat!("../../../", $path)), accepted: $accepted }
    };
}

const STORIES: &[Story] = &[
    Story {
        title: "Refinements: a divisor that cannot be zero",
        intro: "`divide(x: Int, y: {v: Int | v != 0})` is only callable where the solver can prove y != 0.",
        policy: file!("policies/console.cord"),
        plans: &[
            plan!("examples/divide/reject_zero.cord", false),
            plan!("examples/divide/reject_unchecked_input.cord", false),
            plan!("examples/divide/accept_guarded.cord", true),
        ],
    },
    Story {
        title: "The lethal trifecta: private data must not reach a public issue",
        intro: "Reading a private repository taints the linear session; `create_issue` needs an untainted one.",
        policy: file!("policies/github.cord"),
        plans: &[
            plan!("examples/github/benign.cord", true),
            plan!("examples/github/exfiltrate_private.cord", false),
            plan!("examples/github/reuse_session.cord", false),
        ],
    },
    Story {
        title: "Opaque types: citations only from the trusted source",
        intro: "`Trusted[Bib]` has no constructor: only `fetch_bib` makes one, and `append` takes nothing else.",
        policy: file!("policies/citations.cord"),
        plans: &[
            plan!("examples/citations/fetch_and_append.cord", true),
            plan!("examples/citations/forge_entry.cord", false),
            plan!("examples/citations/write_plain_bib.cord", false),
        ],
    },
];

/// Checks every story's plans; the report is "accepted" when each verdict is the expected one.
pub fn run() -> Report {
    let mut out = String::from("Cordon checks a plan completely before any of it runs.\n");
    let mut all_as_expected = true;
    for (i, story) in STORIES.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", i + 1, story.title, story.intro));
        for plan in story.plans {
            let mut sources = SourceMap::new();
            let policy = sources.add(story.policy.0, story.policy.1);
            let file = sources.add(plan.path, plan.text);
            let outcome = check(&sources, &[policy], Some(file), &CheckOptions::default());
            let as_expected = outcome.accepted() == plan.accepted;
            all_as_expected &= as_expected;
            out.push_str(&format!("\n   $ cordon check --policy {} {}\n", story.policy.0, plan.path));
            for line in wrap(&describe(plan.text), 88) {
                out.push_str(&format!("   # {line}\n"));
            }
            let summary = render::summary(&outcome.diagnostics);
            out.push_str(&format!("   => {summary}{}\n", if as_expected { "" } else { "  (UNEXPECTED)" }));
            for d in &outcome.diagnostics {
                for line in render::human(d, &sources).lines() {
                    out.push_str(&format!("     {line}\n"));
                }
            }
        }
    }
    out.push_str(if all_as_expected {
        "\nEvery safe plan was accepted and every unsafe one rejected, statically.\n"
    } else {
        "\nSome verdicts differ from what the examples expect: this is a bug.\n"
    });
    Report { stdout: out, accepted: all_as_expected }
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
        Some((head, rest)) if head.starts_with("Accepted") || head.starts_with("Rejected") => rest,
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
        assert_eq!(report.stdout.matches("=> accepted").count(), 3, "{}", report.stdout);
        assert_eq!(report.stdout.matches("=> rejected").count(), 6, "{}", report.stdout);
    }
}
