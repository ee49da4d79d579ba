//! A model is a sink whose label is its clearance: a hole reached under a decision on data the
//! model may not see is not asked of it at all (the run ends with `label-flow`), a hidden value
//! says `<hidden>` and nothing of its label, and a `Labeled` box shows its label and content
//! only where they may flow.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recording, RequestOutcome, run_request};
use cordon_agent::{FillConfig, Filler, Provider, Transcript};
use cordon_label::DcLabel;
use cordon_runtime::{Config, ErrorKind, Sessions};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

fn reply(code: &str) -> String {
    format!("```cordon\n{code}\n```")
}

/// Runs `plan` (checked against the GitHub policy) on the built-in GitHub with `provider`
/// filling its holes; the transcript's text comes back too.
fn run(plan: &str, provider: &mut dyn Provider, clearance: DcLabel) -> (RequestOutcome, String) {
    let mut sources = SourceMap::new();
    let policy = sources.add("policies/github.cord", cordon_sim::github::POLICY);
    let file = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(file), &CheckOptions::default());
    let checked = outcome.program.unwrap_or_else(|| panic!("rejected: {:?}", outcome.diagnostics));
    let mut env = cordon_sim::env("github").unwrap();
    let run_config = Config { user: env.principal().unwrap_or_default().to_string(), ..Config::default() };
    let mut transcript = Transcript::new(Vec::new());
    let config = FillConfig { clearance, ..FillConfig::default() };
    let outcome = {
        let mut filler = Filler::new(provider).with_config(config);
        let options = CheckOptions::default();
        let sessions = Sessions::default();
        run_request(
            &mut sources,
            &checked,
            &options,
            &sessions,
            &run_config,
            env.as_mut(),
            &mut filler,
            None,
            &mut transcript,
        )
    };
    assert!(transcript.error().is_none(), "{:?}", transcript.error());
    (outcome, String::from_utf8(transcript.into_inner()).unwrap())
}

fn public() -> DcLabel {
    DcLabel::untrusted()
}

/// What `cordon ask --clearance user` gives a model: alice's secrets, from anyone.
fn alice() -> DcLabel {
    DcLabel::secret("alice").join(&DcLabel::untrusted())
}

fn result_text(outcome: &RequestOutcome) -> String {
    match &outcome.result {
        Ok(v) => v.value.to_string(),
        Err(e) => format!("error[{}]: {}", e.kind.code().as_str(), e.message),
    }
}

/// A hole per line of alice's private roadmap.
const PER_LINE: &str = r#"match gh.private_repo("secret-plans") {
  Some(p) => {
    let (text, s) = gh.read_file(s, p, "roadmap.md");
    let counts = text.split("\n").map(|l: String| agent[Int]("count the words of this line", l));
    (to_string(counts.sum()), s)
  },
  None => ("none", s),
}"#;

#[test]
fn a_hole_per_private_line_is_not_asked_of_a_public_model() {
    let mut model = Recording::new(&[reply("1").as_str(); 8]);
    let (outcome, transcript) = run(PER_LINE, &mut model, public());
    assert_eq!(model.requests.len(), 0, "the model was asked: {}", model.everything());
    let Err(error) = &outcome.result else { panic!("ran: {}", result_text(&outcome)) };
    assert_eq!(error.kind, ErrorKind::LabelFlow, "{error}");
    assert!(error.message.contains("`recording`"), "names the model: {}", error.message);
    assert!(error.message.contains("secret to alice"), "says why: {}", error.message);
    assert!(error.message.contains("would need clearance"), "says what would do: {}", error.message);
    assert!(error.message.contains("<secrecy: alice"), "names the clearance needed: {}", error.message);
    assert!(error.span.start < error.span.end && PER_LINE[error.span.start as usize..].starts_with("agent[Int]"));
    assert!(
        error.related.iter().any(|(_, why)| why.contains("read_file")),
        "the pc's sources are related: {:?}",
        error.related
    );
    assert!(transcript.contains("label-flow"), "the transcript records it: {transcript}");
    assert!(!transcript.contains(r#""event":"hole_prompted""#), "no prompt was recorded: {transcript}");
    assert_eq!(outcome.holes.len(), 1, "the hole is counted");
    assert!(!outcome.holes[0].filled);
    assert_eq!(outcome.holes[0].attempts, 0);

    // A model cleared for alice's secrets is asked once per line, and sees each line.
    let mut model = Recording::new(&[reply("1").as_str(); 8]);
    let (outcome, _) = run(PER_LINE, &mut model, alice());
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    assert_eq!(model.requests.len(), 6, "one request per line of the roadmap (the last one empty)");
    assert!(model.everything().contains("CONFIDENTIAL"));
}

/// A hole reached only if a search of alice's code finds something.
const ON_HITS: &str = r#"let hits = gh.search_code("Initech");
if hits.len() > 0 { agent[(String, Session)]("tell alice about the hits", s) } else { ("no hits", s) }"#;

#[test]
fn a_hole_in_a_branch_on_secret_data_is_not_asked_of_a_public_model() {
    let mut model = Recording::new(&[&reply(r#"("found", s)"#)]);
    let (outcome, _) = run(ON_HITS, &mut model, public());
    assert_eq!(model.requests.len(), 0, "which branch ran was shown: {}", model.everything());
    let Err(error) = &outcome.result else { panic!("ran: {}", result_text(&outcome)) };
    assert_eq!(error.kind, ErrorKind::LabelFlow, "{error}");
    assert!(error.related.iter().any(|(_, why)| why.contains("search_code")), "{:?}", error.related);

    let mut model = Recording::new(&[&reply(r#"("found", s)"#)]);
    let (outcome, _) = run(ON_HITS, &mut model, alice());
    assert!(result_text(&outcome).starts_with(r#"("found", "#), "{}", result_text(&outcome));
    assert_eq!(model.requests.len(), 1);
}

#[test]
fn a_hidden_value_shows_no_label() {
    // Under a public decision, the secret hits are in scope but hidden; their label (which
    // could differ between branches) is not shown either.
    let plan = r#"let hits = gh.search_code("Initech");
let n: Int = agent[Int]("pick a number", 3);
(to_string(n + hits.len()), s)"#;
    let mut model = Recording::new(&[&reply("arg1")]);
    let (outcome, _) = run(plan, &mut model, public());
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    let prompt = model.last(0);
    assert!(prompt.contains("hits: List[String] = <hidden>\n"), "{prompt}");
    assert!(prompt.contains("arg1: Int = 3"), "{prompt}");
    assert!(!prompt.contains("secrecy"), "a hidden value's label is shown: {prompt}");
    assert!(!prompt.contains("Initech due"), "{prompt}");
}

#[test]
fn a_labeled_box_is_shown_only_where_its_content_may_flow() {
    let plan = r#"let boxed = to_labeled { gh.search_code("Initech") };
let open = to_labeled { "a public note" };
let n: Int = agent[Int]("pick a number", boxed, open);
(to_string(n), s)"#;
    let mut model = Recording::new(&[&reply("1")]);
    let (outcome, _) = run(plan, &mut model, public());
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    let prompt = model.last(0);
    assert!(prompt.contains("boxed: Labeled[List[String]] = <labeled: hidden>\n"), "{prompt}");
    assert!(prompt.contains("a public note"), "a public box is shown: {prompt}");
    assert!(!prompt.contains("secrecy: alice"), "a hidden box's label is shown: {prompt}");
    assert!(!prompt.contains("Initech due"), "{prompt}");

    let mut model = Recording::new(&[&reply("1")]);
    let (outcome, transcript) = run(plan, &mut model, alice());
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    let prompt = model.last(0);
    assert!(prompt.contains("Initech due diligence"), "a cleared model sees the content: {prompt}");
    assert!(prompt.contains("secrecy: alice"), "and the label: {prompt}");
    assert!(transcript.contains(r#""label":"<secrecy: alice"#), "the prompt's label covers it: {transcript}");
}
