//! Holes filled by a (scripted) model on the simulated GitHub: the prompt, diagnostics fed
//! back on retry, hostile replies, the retry budget, nested holes and their depth limit, and a
//! sub-agent that read untrusted issue text unable to act for the user.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recording, RequestOutcome, run_request};
use cordon_agent::{FillConfig, Filler, Provider, Request, Transcript, prompt, replay};
use cordon_label::DcLabel;
use cordon_runtime::{Config, Program, Run, Sessions, Step};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

/// A reply holding `code` in one block, with some prose around it.
fn reply(code: &str) -> String {
    format!("Here is the fill.\n```cordon\n{code}\n```\nIt has the expected type.")
}

/// The root plan `cordon ask` builds for `request`.
fn root_plan(request: &str) -> String {
    format!("agent[(String, Session)]({request:?}, s)")
}

/// The GitHub policy and `plan` in one source map, checked.
fn checked(plan: &str) -> (SourceMap, cordon_types::Checked) {
    let mut sources = SourceMap::new();
    let policy = sources.add("policies/github.cord", cordon_sim::github::POLICY);
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let checked = outcome.program.unwrap_or_else(|| panic!("rejected: {:?}", outcome.diagnostics));
    (sources, checked)
}

/// Runs `plan` on the built-in GitHub with `provider` filling its holes.
fn run(plan: &str, provider: &mut dyn Provider, config: FillConfig) -> (RequestOutcome, String) {
    let (mut sources, checked) = checked(plan);
    let mut env = cordon_sim::env("github").unwrap();
    let run_config = Config { user: env.principal().unwrap_or_default().to_string(), ..Config::default() };
    let mut transcript = Transcript::new(Vec::new());
    let outcome = {
        let mut filler = Filler::new(provider).with_config(config);
        run_request(
            &mut sources,
            &checked,
            &CheckOptions::default(),
            &Sessions::default(),
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

fn result_text(outcome: &RequestOutcome) -> String {
    match &outcome.result {
        Ok(v) => v.value.to_string(),
        Err(e) => format!("error[{}]: {}", e.kind.code().as_str(), e.message),
    }
}

/// The last user message of a request.
fn last_user(request: &Request) -> &str {
    &request.messages.last().unwrap().content
}

#[test]
fn the_github_root_prompt() {
    let (sources, checked) = checked(&root_plan("How many open issues does alice/website have?"));
    let program = Program::new(&checked).unwrap();
    let mut run = Run::start(&program, &Sessions::default(), &Config::default()).unwrap();
    let Ok(Step::Hole(request)) = run.proceed() else { panic!("no hole") };
    let p = prompt(&sources, &checked, &checked.holes()[0], &request, &DcLabel::untrusted()).unwrap();
    let text: Vec<String> = p.messages.iter().map(|m| format!("=== {} ===\n{}", m.role.as_str(), m.content)).collect();
    insta::assert_snapshot!("github_root_prompt", text.join("\n"));
    // The outgoing-data check reads every prompt: it must find nothing in the prompt itself
    // (the language reference, the policy, the task), or it would garble what the model learns.
    let scanner = cordon_egress::Scanner::new(&[]);
    for message in &p.messages {
        assert_eq!(scanner.scan(&message.content), Vec::new(), "{}", message.content);
    }
    assert!(p.label.is_bottom(), "only the user's own request was shown");
    eprintln!("github root prompt: {} chars, ~{} tokens (chars/4)", p.stats.chars, p.stats.estimated_tokens);
    // About 2,470 tokens before the organisations' internal repositories, whose label (the
    // group when the repository is internal, public otherwise) each of their sinks spells out;
    // a policy-level name for a label would bring it back under 2,500.
    assert!(p.stats.estimated_tokens < 3200, "{} tokens", p.stats.estimated_tokens);
}

#[test]
fn a_correct_first_reply_runs() {
    let mut model = Recording::new(&[&reply(r#"("Hello from the fill", s)"#)]);
    let (outcome, transcript) = run(&root_plan("Say hello"), &mut model, FillConfig::default());
    assert!(result_text(&outcome).starts_with(r#"("Hello from the fill", "#), "{}", result_text(&outcome));
    assert_eq!(outcome.holes.len(), 1);
    assert_eq!(outcome.holes[0].attempts, 1);
    assert!(outcome.usage.prompt_tokens > 0 && outcome.usage.completion_tokens > 0);
    for kind in ["\"hole_prompted\"", "\"fill_received\"", "\"fill_accepted\""] {
        assert!(transcript.contains(kind), "{kind} missing from {transcript}");
    }
}

#[test]
fn a_type_error_is_fed_back_and_the_second_reply_is_used() {
    let mut model = Recording::new(&[&reply("(42, s)"), &reply(r#"("forty-two", s)"#)]);
    let (outcome, transcript) = run(&root_plan("Answer"), &mut model, FillConfig::default());
    assert!(result_text(&outcome).starts_with(r#"("forty-two", "#), "{}", result_text(&outcome));
    assert_eq!(outcome.holes[0].attempts, 2);
    assert_eq!(model.requests.len(), 2);
    let second = &model.requests[1];
    assert_eq!(second.messages.len(), 4, "prompt, reply, diagnostics");
    assert!(second.messages[2].content.contains("(42, s)"), "the rejected reply is in the conversation");
    let feedback = last_user(second);
    assert!(feedback.contains("error[type-mismatch]"), "{feedback}");
    assert!(feedback.contains("<fill 0 attempt 1>:1:"), "{feedback}");
    assert!(transcript.contains("\"fill_rejected\""), "{transcript}");
}

#[test]
fn a_reply_without_code_counts_as_an_attempt() {
    let mut model = Recording::new(&["I would list the issues first.", &reply(r#"("done", s)"#)]);
    let (outcome, _) = run(&root_plan("Answer"), &mut model, FillConfig::default());
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    assert_eq!(outcome.holes[0].attempts, 2);
    assert!(last_user(&model.requests[1]).contains("no code block"), "{}", last_user(&model.requests[1]));
}

#[test]
fn several_blocks_and_undeclared_names_are_rejected() {
    let two = format!("{}\n{}", reply(r#"("a", s)"#), reply(r#"("b", s)"#));
    let mut model = Recording::new(&[&two, &reply("(steal_everything(), s)"), &reply(r#"("ok", s)"#)]);
    let (outcome, _) = run(&root_plan("Answer"), &mut model, FillConfig::default());
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    assert!(last_user(&model.requests[1]).contains("2 code blocks"));
    assert!(last_user(&model.requests[2]).contains("steal_everything"), "{}", last_user(&model.requests[2]));
}

#[test]
fn a_fill_that_never_checks_ends_the_hole_after_the_budget() {
    let bad = reply("(1, 2)");
    let mut model = Recording::new(&[&bad, &bad, &bad, &bad]);
    let config = FillConfig { max_attempts: 3, ..FillConfig::default() };
    let (outcome, _) = run(&root_plan("Answer"), &mut model, config);
    let text = result_text(&outcome);
    assert!(text.starts_with("error[hole-unfilled]"), "{text}");
    assert!(text.contains("no fill checked in 3 attempts"), "{text}");
    assert_eq!(model.requests.len(), 3);
    assert_eq!(outcome.holes[0].attempts, 3);
    assert!(!outcome.holes[0].filled);
}

#[test]
fn a_model_error_ends_the_hole_cleanly() {
    let mut model = Recording::new(&[]);
    let (outcome, _) = run(&root_plan("Answer"), &mut model, FillConfig::default());
    let text = result_text(&outcome);
    assert!(text.contains("the model gave no answer"), "{text}");
}

const OUTER: &str = "let n: Int = agent[Int](\"add two to the argument\", 40);\n(to_string(n), s)";

#[test]
fn a_hole_in_a_fill_is_filled_recursively() {
    let mut model = Recording::new(&[&reply(OUTER), &reply("arg1 + 2")]);
    let (outcome, _) = run(&root_plan("Compute"), &mut model, FillConfig::default());
    assert!(result_text(&outcome).starts_with(r#"("42", "#), "{}", result_text(&outcome));
    let ids: Vec<&str> = outcome.holes.iter().map(|h| h.hole.as_str()).collect();
    assert_eq!(ids, ["0", "0.0"]);
    assert_eq!(model.requests[1].hole.as_deref(), Some("0.0"));
    let inner = last_user(&model.requests[1]);
    assert!(inner.contains("Task: add two to the argument"), "{inner}");
    assert!(inner.contains("arg1: Int = 40"), "{inner}");
    assert!(inner.contains("⟪HOLE agent[Int]"), "{inner}");
}

#[test]
fn the_depth_limit_is_enforced() {
    let mut model = Recording::new(&[&reply(OUTER), &reply("arg1 + 2")]);
    let config = FillConfig { max_depth: 1, ..FillConfig::default() };
    let (outcome, _) = run(&root_plan("Compute"), &mut model, config);
    let text = result_text(&outcome);
    assert!(text.contains("deeper than the limit of 1"), "{text}");
    assert_eq!(model.requests.len(), 1);
}

/// A fill that lists alice/website's issues and hands them to a sub-agent.
const READ_ISSUES: &str = r#"match gh.repo("alice", "website") {
  Some(r) => if r.private { ("private", s) } else {
    let (issues, s) = gh.list_issues(s, r);
    agent[(String, Session)]("act on these issues", s, issues)
  },
  None => ("none", s),
}"#;

/// What the sub-agent writes: it type-checks (the session is untainted, the repo public).
const OPEN_ISSUE: &str = r#"let (i, s) = gh.create_issue(s, r, "Build fixed", "Done as the issue asked.");
("opened", s)"#;

/// What the sub-agent writes when told it may not post: it only answers.
const ANSWER_ONLY: &str = r#"("I read the issues; nothing to post.", s)"#;

#[test]
fn a_sub_agent_shown_untrusted_issue_text_cannot_open_an_issue() {
    // Its fill checks, but it runs under what the model was shown (an outsider's text), so the
    // labels' analysis of the fill refuses the post before anything runs, and tells the model.
    let mut model = Recording::new(&[&reply(READ_ISSUES), &reply(OPEN_ISSUE), &reply(ANSWER_ONLY)]);
    let (outcome, _) = run(&root_plan("Triage alice/website"), &mut model, FillConfig::default());
    let inner = last_user(&model.requests[1]);
    assert!(inner.contains("IMPORTANT NOTE FOR AI ASSISTANTS"), "the issue text was shown: {inner}");
    let feedback = last_user(&model.requests[2]);
    assert!(feedback.contains("error[label-flow]"), "{feedback}");
    assert!(feedback.contains("the decision to make this call depends on data"), "{feedback}");
    assert!(result_text(&outcome).starts_with(r#"("I read the issues"#), "{}", result_text(&outcome));
    assert!(!outcome.trace.iter().any(|e| e.tool.contains("create_issue")), "no post was even attempted");
}

#[test]
fn the_same_sub_agent_shown_no_untrusted_text_may_open_an_issue() {
    // A model cleared for trusted data only: the issues are hidden from it, so its prompt (and
    // its fill) stays trusted.
    let mut model = Recording::new(&[&reply(READ_ISSUES), &reply(OPEN_ISSUE)]);
    let config = FillConfig { clearance: DcLabel::bottom(), ..FillConfig::default() };
    let (outcome, _) = run(&root_plan("Triage alice/website"), &mut model, config);
    let inner = last_user(&model.requests[1]);
    assert!(inner.contains("issues: List[Issue] = <hidden>\n"), "{inner}");
    assert!(!inner.contains("IMPORTANT NOTE"), "{inner}");
    assert!(result_text(&outcome).starts_with(r#"("opened", "#), "{}", result_text(&outcome));
}

/// The root's fill reads the private roadmap and hands the rest to a sub-agent, whose scope
/// then holds the secret text. (The sub-agent is asked after the `match`: inside it, the
/// decision to ask would depend on whether the private repository exists, a secret.)
const READ_ROADMAP: &str = r#"let (roadmap, s) = match gh.private_repo("secret-plans") {
  Some(p) => gh.read_file(s, p, "roadmap.md"),
  None => ("none", s),
};
agent[(String, Session)]("summarize the roadmap for alice", s)"#;

#[test]
fn a_secret_never_reaches_the_prompt_of_a_model_not_cleared_for_it() {
    let summary = r#"("a summary", s)"#;
    let mut model = Recording::new(&[&reply(READ_ROADMAP), &reply(summary)]);
    let (outcome, _) = run(&root_plan("Summarize my roadmap"), &mut model, FillConfig::default());
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    let inner = last_user(&model.requests[1]);
    assert!(inner.contains("roadmap: String = <hidden>\n"), "{inner}");
    assert!(!inner.contains("secrecy: alice"), "the hidden value's label is not shown either: {inner}");
    let everything = model.everything();
    assert!(!everything.contains("CONFIDENTIAL"), "a secret reached the prompt");

    // A model cleared for alice's secrets (say, one on her machine) may be shown it.
    let mut model = Recording::new(&[&reply(READ_ROADMAP), &reply(summary)]);
    let cleared = DcLabel::secret("alice").join(&DcLabel::untrusted());
    let config = FillConfig { clearance: cleared, ..FillConfig::default() };
    run(&root_plan("Summarize my roadmap"), &mut model, config);
    assert!(last_user(&model.requests[1]).contains("CONFIDENTIAL"));
}

#[test]
fn a_transcript_replays_to_the_same_fills_and_the_same_end() {
    // A rejected reply, a fill that hands the issues to a sub-agent, the sub-agent's fill,
    // which checks and is then refused by the labels before it runs, and its second fill.
    let mut model = Recording::new(&[&reply("(42, s)"), &reply(READ_ISSUES), &reply(OPEN_ISSUE), &reply(ANSWER_ONLY)]);
    let plan = root_plan("Triage alice/website");
    let (recorded, transcript) = run(&plan, &mut model, FillConfig::default());
    assert!(result_text(&recorded).starts_with(r#"("I read the issues"#), "{}", result_text(&recorded));

    let mut replayed_model = replay(transcript.as_bytes()).unwrap();
    assert_eq!(replayed_model.remaining(), 4);
    let (replayed, again) = run(&plan, &mut replayed_model, FillConfig::default());
    assert_eq!(replayed_model.remaining(), 0, "every recorded reply was used");
    assert_eq!(result_text(&replayed), result_text(&recorded));
    assert_eq!(replayed.holes, recorded.holes);
    // The same calls, with the same values and labels, at the same places.
    let calls = |t: &[cordon_runtime::TraceEntry]| -> Vec<(serde_json::Value, String, cordon_syntax::Span)> {
        t.iter().map(|e| (e.to_json(), format!("{:?}", e.values), e.span)).collect()
    };
    assert_eq!(calls(&replayed.trace), calls(&recorded.trace));
    // Event for event, the same request: only the model's name differs.
    let lines = |t: &str| -> Vec<serde_json::Value> {
        t.lines()
            .map(|l| {
                let mut event: serde_json::Value = serde_json::from_str(l).unwrap();
                if event["event"] == "hole_prompted" {
                    event["model"] = "the model".into();
                }
                event
            })
            .collect()
    };
    assert_eq!(lines(&again), lines(&transcript));
    let rejected: Vec<_> = lines(&again).into_iter().filter(|e| e["event"] == "fill_rejected").collect();
    assert_eq!(rejected.len(), 2);
    assert_eq!(rejected[0]["first"]["code"], "type-mismatch");
    assert_eq!(rejected[1]["first"]["code"], "label-flow");
}

#[test]
fn the_cause_comes_before_the_values_it_left_unused() {
    // `s2` on line 1 is reported unused, but the mistakes are on the lines after it; the
    // summary quotes the first of those.
    let fill = "let s2 = s;\nlet m: Int = \"many\";\n(\"done\", s)";
    let mut model = Recording::new(&[&reply(fill)]);
    let config = FillConfig { max_attempts: 1, ..FillConfig::default() };
    let (outcome, transcript) = run(&root_plan("Answer"), &mut model, config);
    let text = result_text(&outcome);
    assert!(text.contains("(last: <fill 0 attempt 1>:2:"), "{text}");
    let rejected = transcript.lines().find(|l| l.contains("\"fill_rejected\"")).unwrap();
    let value: serde_json::Value = serde_json::from_str(rejected).unwrap();
    let feedback = value["feedback"].as_str().unwrap();
    let first = feedback.find("error[").unwrap();
    let unused = feedback.find("error[linear-unused]").unwrap_or(usize::MAX);
    assert!(first < unused && !feedback[first..].starts_with("error[linear-unused]"), "{feedback}");
}

#[test]
fn an_example_block_and_the_fill_are_told_apart() {
    let two = format!("For example:\n```text\nnot code\n```\n{}", reply("(42, s)"));
    let mut model = Recording::new(&[&two, &reply(r#"("ok", s)"#)]);
    let (outcome, _) = run(&root_plan("Answer"), &mut model, FillConfig::default());
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    // The tagged block was checked, and the model is told which block that was.
    let feedback = last_user(&model.requests[1]);
    assert!(feedback.contains("error[type-mismatch]"), "{feedback}");
    assert!(feedback.contains("the fill checked is block 2 of 2, the one tagged `cordon`"), "{feedback}");
}

#[test]
fn a_prompt_states_what_is_known_of_a_session_and_what_is_not() {
    // The first hole gets the fresh session (known untainted); the second gets whatever the
    // first fill gave back, of which nothing is known.
    let plan = "let (a, s) = agent[(String, Session)](\"first\", s);\nagent[(String, Session)](\"second\", s)";
    let mut model = Recording::new(&[&reply(r#"("a", s)"#), &reply(r#"("b", s)"#)]);
    let (outcome, _) = run(plan, &mut model, FillConfig::default());
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    let first = &model.requests[0].messages[1].content;
    assert!(first.contains("  s: {s: Session | !tainted(s)}  (linear: use exactly once)\n"), "{first}");
    let second = &model.requests[1].messages[1].content;
    insta::assert_snapshot!("second_hole_prompt", second);
}

/// A fill that would post a search result (secret to the user) publicly: checked, then the
/// labels' analysis of the fill, with the hole's real values, refuses it before it runs; the
/// model is told why in the concise form, and its second fill returns the result instead.
#[test]
fn a_fill_whose_call_is_refused_on_every_path_goes_back_to_the_model() {
    let leak = r#"match gh.repo("alice", "website") {
  Some(r) => if r.private { ("private", s) } else {
    let hits = gh.search_code("password");
    let (i, s) = gh.create_issue(s, r, "Found", hits.join(", "));
    ("posted", s)
  },
  None => ("none", s),
}"#;
    let mut model = Recording::new(&[&reply(leak), &reply(r#"(gh.search_code("password").join(", "), s)"#)]);
    let config = FillConfig { user: "alice".into(), ..FillConfig::default() };
    let (outcome, transcript) = run(&root_plan("Find passwords"), &mut model, config);
    assert!(outcome.result.is_ok(), "{}", result_text(&outcome));
    assert_eq!(outcome.holes[0].attempts, 2);
    let feedback = last_user(&model.requests[1]);
    assert!(feedback.contains("error[label-flow]"), "{feedback}");
    assert!(feedback.contains("`GitHub.create_issue` would be blocked: the argument `body`"), "{feedback}");
    assert!(!transcript.contains("\"tool\":\"create_issue\""), "nothing was posted: {transcript}");
}
