//! The canary property: no prompt a public model is shown holds a secret, or anything derived
//! from it, whatever the plan around the holes does.
//!
//! Random checked plans put typed holes anywhere in maps, filters, `any`, branches, `let`s and
//! string operations over public values and over a secret: a private file of alice's and the
//! secret hits of a code search, both holding a random canary. A model that records every prompt
//! answers each hole with a constant of the expected type. For every plan:
//!
//! - at public clearance no prompt contains any 8-character window of the canary (in any
//!   case);
//! - at public clearance the prompts do not depend on the secret at all: run against a second
//!   secret (another canary, more lines), the prompts are the same, up to where either run
//!   stops (a run may stop earlier on one secret, e.g. when a limit is reached);
//! - at the user's clearance the same plans run, and the canary does reach some prompts (so the
//!   secret is within reach of the holes, and the first property is not vacuous);
//! - each run is recorded in a store (in memory) as `cordon ask` records it: at public
//!   clearance neither the audit log nor the store's transcript of what the models were shown
//!   and wrote holds the canary (the plans read it, and the transcript's record of what the
//!   tools returned holds it, as it should: it is the user's data, kept for the user), and at
//!   the user's clearance the stored prompts do hold it.
//!
//! The test counts the plans that asked a public model something, the plans that reached a
//! hole under a secret program counter (not asked), the plans that showed a public model a
//! hidden value, and the plans whose canary a user-cleared model saw, and requires each count
//! to be above a floor, so it cannot pass by testing nothing. Raise `PROPTEST_CASES` to search
//! longer.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::cell::Cell;

use common::{RequestOutcome, run_request};

use cordon_agent::{Completion, FillConfig, Filler, Provider, ProviderError, Request};
use cordon_audit::Recording;
use cordon_label::DcLabel;
use cordon_runtime::{Config, ErrorKind, Sessions};
use cordon_sim::GitHub;
use cordon_store::{NewRequest, SqliteStore, Store};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::RngSeed;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};

/// The seed of every case generated here: the same cases on every run, so a floor met once
/// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
const SEED: u64 = 0x636f_7264_6f6e;

// ---------------------------------------------------------------- the model and the world

/// A model that records every prompt and fills each hole with a constant of its type.
#[derive(Default)]
struct Oracle {
    /// Each request's messages, joined.
    prompts: Vec<String>,
}

impl Provider for Oracle {
    fn name(&self) -> &str {
        "oracle"
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        let text: String = request.messages.iter().map(|m| format!("{}\n", m.content)).collect();
        let expected = text.lines().find_map(|l| l.strip_prefix("Expected type of the fill: ")).unwrap_or_default();
        let fill = match expected {
            "Int" => "1",
            "Bool" => "true",
            _ => "\"filled\"",
        };
        self.prompts.push(text);
        Ok(Completion { text: format!("```cordon\n{fill}\n```"), usage: Default::default() })
    }
}

/// The built-in GitHub with one more private file of alice's, `secret-plans/canary.txt`.
fn github(content: &str) -> GitHub {
    let mut data: serde_json::Value = serde_json::from_str(cordon_sim::github::DATA).unwrap();
    let repos = data["repos"].as_array_mut().unwrap();
    let plans = repos.iter_mut().find(|r| r["name"] == "secret-plans").unwrap();
    let file = serde_json::json!({ "path": "canary.txt", "author": "alice", "content": content });
    plans["files"].as_array_mut().unwrap().push(file);
    GitHub::from_json(&data.to_string()).unwrap()
}

/// The secret file: two lines hold the canary and the word the plans search for.
fn secret_file(canary: &str) -> String {
    format!("marker {canary}\nplain line\n{canary} and a marker\n")
}

/// Another secret of another shape: more lines, more hits.
fn other_secret_file(canary: &str) -> String {
    format!("marker {canary}\n{canary} marker\nplain\nmarker, {canary}.\nthe end\n")
}

/// Every 8-character window of the canary, lower case.
fn windows(canary: &str) -> Vec<String> {
    let chars: Vec<char> = canary.to_lowercase().chars().collect();
    chars.windows(8).map(|w| w.iter().collect()).collect()
}

fn leaks(prompt: &str, canary: &str) -> bool {
    let prompt = prompt.to_lowercase();
    windows(canary).iter().any(|w| prompt.contains(w.as_str()))
}

/// What one run showed the model, how it ended, and what the store kept of it.
struct Ran {
    prompts: Vec<String>,
    outcome: RequestOutcome,
    /// Every audit row's content, and the transcript lines of what the models were shown and
    /// wrote.
    stored: Vec<String>,
}

/// The transcript's events about models: prompts, replies, fills.
const MODEL_EVENTS: [&str; 6] =
    ["hole_prompted", "fill_received", "fill_rejected", "fill_accepted", "model_failed", "hole_abandoned"];

impl Ran {
    /// Whether the run ended at a hole the model was not asked (the pc did not flow).
    fn not_asked(&self) -> bool {
        matches!(&self.outcome.result, Err(e) if e.kind == ErrorKind::LabelFlow && e.message.contains("hole is reached"))
    }
}

/// Runs `plan`, checked, against GitHub holding `secret` in the canary file.
fn run(sources: &SourceMap, checked: &cordon_types::Checked, secret: &str, clearance: DcLabel) -> Ran {
    let mut sources = sources.clone();
    let mut env = github(secret);
    let run_config = Config { user: env.user().to_string(), ..Config::default() };
    let mut model = Oracle::default();
    let config = FillConfig { clearance, max_attempts: 1, ..FillConfig::default() };
    let store = SqliteStore::open_in_memory().unwrap();
    let request = NewRequest { text: "canary", principal: "alice", session: None };
    let recording = Recording::begin(&store, &request).unwrap();
    let outcome = {
        let (mut stage, mut recorder) = (recording.stage(), recording.recorder());
        let mut filler = Filler::new(&mut model).with_config(config);
        let options = CheckOptions::default();
        let sessions = Sessions::default();
        run_request(
            &mut sources,
            checked,
            &options,
            &sessions,
            &run_config,
            &mut env,
            &mut filler,
            Some(&mut stage),
            &mut recorder,
        )
    };
    let id = recording.finish().unwrap();
    let mut stored: Vec<String> = store.rows(1, usize::MAX).unwrap().into_iter().map(|r| r.content).collect();
    let lines = store.transcript(id).unwrap();
    let about_models = lines.iter().filter(|l| MODEL_EVENTS.iter().any(|e| l["event"] == *e));
    stored.extend(about_models.map(|l| l.to_string()));
    Ran { prompts: model.prompts, outcome, stored }
}

// ---------------------------------------------------------------- a grammar of plans with holes

/// The plan around the generated body: public values (`x`, `k`, `pubs`, the names of the
/// repositories), secret ones (`hits` of a code search, the file `secret`, read where the pc is
/// secret: whether a private repository exists is), and the body as the answer, where the pc is
/// public again. Closures bind `x`, which is also in scope everywhere, so any expression fits anywhere.
fn plan(body: &str) -> String {
    format!(
        r#"let x = "ex";
let k = 2;
let pubs = ["alpha", "beta"];
let names = gh.list_repos().map(|r| r.name);
let hits = gh.search_code("marker");
let (secret, s) = match gh.private_repo("secret-plans") {{
  Some(p) => gh.read_file(s, p, "canary.txt"),
  None => ("none", s),
}};
let answer: String = {body};
(answer, s)"#
    )
}

/// A hole of type `ty`: a literal task or a computed one, and up to two arguments.
fn hole(ty: &'static str, depth: u32) -> BoxedStrategy<String> {
    let task = prop_oneof![3 => Just("\"do the task\"".to_string()), 1 => string(depth)];
    let arg = prop_oneof![string(depth), list(depth), int(depth), boolean(depth)];
    (task, prop::collection::vec(arg, 0..=2))
        .prop_map(move |(task, args)| {
            let args: String = args.iter().map(|a| format!(", {a}")).collect();
            format!("agent[{ty}]({task}{args})")
        })
        .boxed()
}

fn string(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop::sample::select(vec!["\"pub\"", "x", "secret", "\"a\\nb\""]).prop_map(String::from);
    if depth == 0 {
        return leaf.boxed();
    }
    let d = depth - 1;
    prop_oneof![
        2 => leaf,
        3 => hole("String", d),
        1 => (string(d), string(d)).prop_map(|(a, b)| format!("({a} + {b})")),
        1 => int(d).prop_map(|a| format!("to_string({a})")),
        1 => string(d).prop_map(|a| format!("{a}.to_upper()")),
        1 => list(d).prop_map(|a| format!("{a}.join(\",\")")),
        1 => (boolean(d), string(d), string(d)).prop_map(|(c, a, b)| format!("if {c} {{ {a} }} else {{ {b} }}")),
        1 => (string(d), string(d)).prop_map(|(a, b)| format!("{{ let y = {a}; y + {b} }}")),
    ]
    .boxed()
}

fn list(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop::sample::select(vec!["pubs", "names", "hits"]).prop_map(String::from);
    if depth == 0 {
        return leaf.boxed();
    }
    let d = depth - 1;
    prop_oneof![
        2 => leaf,
        1 => string(d).prop_map(|a| format!("{a}.split(\"\\n\")")),
        2 => (list(d), string(d)).prop_map(|(l, a)| format!("{l}.map(|x: String| {a})")),
        1 => (list(d), boolean(d)).prop_map(|(l, c)| format!("{l}.filter(|x: String| {c})")),
        1 => (string(d), string(d)).prop_map(|(a, b)| format!("[{a}, {b}]")),
        1 => (boolean(d), list(d), list(d)).prop_map(|(c, a, b)| format!("if {c} {{ {a} }} else {{ {b} }}")),
    ]
    .boxed()
}

fn int(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![(0i64..4).prop_map(|i| i.to_string()), Just("k".to_string())];
    if depth == 0 {
        return leaf.boxed();
    }
    let d = depth - 1;
    prop_oneof![
        2 => leaf,
        2 => hole("Int", d),
        1 => string(d).prop_map(|a| format!("len({a})")),
        1 => list(d).prop_map(|a| format!("{a}.len()")),
        1 => (int(d), int(d)).prop_map(|(a, b)| format!("({a} + {b})")),
        1 => (boolean(d), int(d), int(d)).prop_map(|(c, a, b)| format!("if {c} {{ {a} }} else {{ {b} }}")),
    ]
    .boxed()
}

fn boolean(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![Just("true".to_string()), Just("false".to_string())];
    if depth == 0 {
        return leaf.boxed();
    }
    let d = depth - 1;
    prop_oneof![
        1 => leaf,
        2 => hole("Bool", d),
        1 => (string(d), string(d)).prop_map(|(a, b)| format!("{a}.contains({b})")),
        1 => (string(d), string(d)).prop_map(|(a, b)| format!("({a} == {b})")),
        1 => (list(d), string(d)).prop_map(|(l, a)| format!("{l}.contains({a})")),
        1 => (list(d), boolean(d)).prop_map(|(l, c)| format!("{l}.any(|x: String| {c})")),
        1 => (int(d), int(d)).prop_map(|(a, b)| format!("({a} > {b})")),
        1 => boolean(d).prop_map(|a| format!("!{a}")),
    ]
    .boxed()
}

/// The body of a plan: any string expression, or one put where the decision to reach it
/// depends on the secret (in a branch on it, in a loop over its hits), so that holes are often
/// reached under a secret program counter, or a hole the secret is passed to.
fn body() -> BoxedStrategy<String> {
    let secret_condition = prop::sample::select(vec![
        "secret.contains(\"marker\")",
        "(hits.len() > 1)",
        "hits.any(|x: String| x.contains(\"zq\"))",
        "secret.starts_with(x)",
    ]);
    prop_oneof![
        2 => string(3),
        1 => (secret_condition, string(2), string(2)).prop_map(|(c, a, b)| format!("if {c} {{ {a} }} else {{ {b} }}")),
        1 => string(2).prop_map(|a| format!("hits.map(|x: String| {a}).join(\",\")")),
        1 => string(2).prop_map(|a| format!("secret.split(\"\\n\").map(|x: String| {a}).join(\",\")")),
        1 => (string(2), list(1)).prop_map(|(a, l)| format!("agent[String]({a}, secret, {l})")),
    ]
    .boxed()
}

/// A random canary: letters and digits that no prompt holds by chance.
fn canary() -> impl Strategy<Value = String> {
    "[a-z0-9]{14}".prop_map(|tail| format!("zq{tail}"))
}

// ---------------------------------------------------------------- the property

/// How many generated plans did what the property needs tested.
#[derive(Default, Debug)]
struct Counts {
    checked: Cell<usize>,
    /// A public model was asked at least once.
    asked: Cell<usize>,
    /// A hole was reached under a secret pc, and the public model was not asked it.
    not_asked: Cell<usize>,
    /// A public model was asked a hole whose task or an argument was hidden from it.
    hidden: Cell<usize>,
    /// A user-cleared model saw the canary.
    seen_when_cleared: Cell<usize>,
    /// The store kept a prompt to a user-cleared model that held the canary.
    stored_when_cleared: Cell<usize>,
}

fn bump(c: &Cell<usize>) {
    c.set(c.get() + 1);
}

#[test]
fn no_prompt_at_public_clearance_holds_the_canary() {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(128);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(SEED),
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new(config);
    let counts = Counts::default();
    let public = DcLabel::untrusted();
    let user = DcLabel::secret("alice").join(&DcLabel::untrusted());
    let strategy = (body(), canary(), canary());
    let result = runner.run(&strategy, |(body, canary, other)| {
        let plan = plan(&body);
        let mut sources = SourceMap::new();
        let policy = sources.add("policies/github.cord", cordon_sim::github::POLICY);
        let file = sources.add("plan.cord", plan.as_str());
        let outcome = check(&sources, &[policy], Some(file), &CheckOptions::default());
        let Some(checked) = outcome.program else {
            return Ok(()); // counted below: most plans must check
        };
        bump(&counts.checked);

        let first = run(&sources, &checked, &secret_file(&canary), public.clone());
        for prompt in &first.prompts {
            if leaks(prompt, &canary) {
                return Err(TestCaseError::fail(format!("the canary `{canary}` reached a public prompt:\n{prompt}")));
            }
        }
        if let Some(row) = first.stored.iter().find(|row| leaks(row, &canary)) {
            return Err(TestCaseError::fail(format!("the store kept the canary `{canary}` of a public run:\n{row}")));
        }
        let second = run(&sources, &checked, &other_secret_file(&other), public.clone());
        for prompt in &second.prompts {
            if leaks(prompt, &other) {
                return Err(TestCaseError::fail(format!("the canary `{other}` reached a public prompt:\n{prompt}")));
            }
        }
        let shared = first.prompts.len().min(second.prompts.len());
        for (a, b) in first.prompts.iter().zip(&second.prompts).take(shared) {
            if a != b {
                return Err(TestCaseError::fail(format!(
                    "the public prompts depend on the secret:\n--- with one secret\n{a}\n--- with another\n{b}"
                )));
            }
        }
        if first.prompts.len() != second.prompts.len() && first.outcome.result.is_ok() && second.outcome.result.is_ok()
        {
            return Err(TestCaseError::fail("how many times a public model is asked depends on the secret"));
        }

        if !first.prompts.is_empty() {
            bump(&counts.asked);
        }
        if first.not_asked() {
            bump(&counts.not_asked);
        }
        let hole_part = |p: &String| p.split("\nBindings in scope:").next().unwrap_or_default().to_string();
        if first.prompts.iter().any(|p| hole_part(p).contains("<hidden>")) {
            bump(&counts.hidden);
        }
        let cleared = run(&sources, &checked, &secret_file(&canary), user.clone());
        if cleared.prompts.iter().any(|p| leaks(p, &canary)) {
            bump(&counts.seen_when_cleared);
        }
        if cleared.stored.iter().any(|row| leaks(row, &canary)) {
            bump(&counts.stored_when_cleared);
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    eprintln!("{counts:?} of {cases} plans");
    let at_least = |what: &str, count: &Cell<usize>, floor: usize| {
        assert!(count.get() >= floor, "only {} plans {what} (need {floor}): {counts:?}", count.get());
    };
    let cases = cases as usize;
    at_least("checked", &counts.checked, cases * 3 / 4);
    at_least("asked a public model something", &counts.asked, cases / 8);
    at_least("reached a hole under a secret pc", &counts.not_asked, cases / 8);
    at_least("asked a public model a hole with a hidden task or argument", &counts.hidden, cases / 10);
    at_least("showed a cleared model the canary", &counts.seen_when_cleared, cases / 4);
    at_least("kept a cleared model's prompt with the canary in the store", &counts.stored_when_cleared, cases / 4);
}
