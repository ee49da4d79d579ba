//! What needs no server: the scripted provider, transcripts and replay, model spec parsing.

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::io::{self, Write};
use std::path::PathBuf;

use cordon_agent::{
    Message, Problem, Provider, ProviderConfig, ProviderError, Request, Scripted, ScriptedReply, Transcript,
    TranscriptError, Usage, open, replay,
};
use cordon_engine::{Event, Observer, Turn};
use cordon_label::Label;
use cordon_syntax::Code;
use serde_json::{Value, json};

fn ask(hole: Option<&str>) -> Request {
    Request { messages: vec![Message::user("12345678")], max_tokens: 64, hole: hole.map(str::to_string) }
}

fn text(provider: &mut impl Provider, hole: Option<&str>) -> Result<String, ProviderError> {
    provider.complete(&ask(hole)).map(|completion| completion.text)
}

/// A fresh file under the target directory's temporary area.
fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cordon-agent-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn scripted_answers_in_order_then_is_exhausted() {
    let mut scripted = Scripted::new(vec![ScriptedReply::next("one"), ScriptedReply::next("two")]);
    assert_eq!(text(&mut scripted, None).unwrap(), "one");
    assert_eq!(text(&mut scripted, Some("h")).unwrap(), "two", "a hole without its own reply takes the next");
    assert_eq!(text(&mut scripted, Some("h")), Err(ProviderError::Exhausted { hole: Some("h".into()) }));
    assert_eq!(text(&mut scripted, None), Err(ProviderError::Exhausted { hole: None }));
    scripted.reset();
    assert_eq!(scripted.remaining(), 2);
    assert_eq!(text(&mut scripted, None).unwrap(), "one");
}

#[test]
fn scripted_matches_by_hole() {
    let mut scripted = Scripted::from_json(
        r#"{"replies": [
            {"hole": "b", "text": "for b"},
            {"text": "anyone"},
            {"hole": "a", "text": "for a, first"},
            {"hole": "a", "text": "for a, second"}
        ]}"#,
    )
    .unwrap();
    assert_eq!(text(&mut scripted, Some("a")).unwrap(), "for a, first");
    assert_eq!(text(&mut scripted, None).unwrap(), "anyone");
    assert_eq!(text(&mut scripted, Some("a")).unwrap(), "for a, second");
    assert_eq!(text(&mut scripted, None), Err(ProviderError::Exhausted { hole: None }), "b's reply is b's");
    assert_eq!(text(&mut scripted, Some("b")).unwrap(), "for b");
    assert_eq!(scripted.remaining(), 0);
}

#[test]
fn scripted_usage_is_estimated_deterministically() {
    let mut scripted = Scripted::new(vec![ScriptedReply::next("abcde")]);
    let completion = scripted.complete(&ask(None)).unwrap();
    assert_eq!(completion.usage, Usage { prompt_tokens: 2, completion_tokens: 2 });
}

#[test]
fn bad_scripts_are_configuration_errors() {
    for bad in ["", "[]", r#"{"replies": [{"txt": "typo"}]}"#, r#"{"replies": [{"text": 1}]}"#] {
        assert!(matches!(Scripted::from_json(bad), Err(ProviderError::Config(_))), "{bad}");
    }
    let missing = Scripted::from_file(&std::env::temp_dir().join("cordon-agent-no-such-script.json"));
    assert!(matches!(missing, Err(ProviderError::Io(_))));
}

#[test]
fn scripts_round_trip_through_json_and_files() {
    let scripted = Scripted::new(vec![ScriptedReply::for_hole("h", "x"), ScriptedReply::next("y")]);
    let path = temp_file("script.json", &scripted.to_json());
    let mut opened = open(&ProviderConfig::parse(&format!("scripted:{}", path.display())).unwrap()).unwrap();
    assert!(opened.name().starts_with("scripted:"));
    assert_eq!(text(&mut opened, Some("h")).unwrap(), "x");
    assert_eq!(text(&mut opened, None).unwrap(), "y");
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8(bytes.to_vec()).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// The events of one attempt at `hole`: prompted, the reply `text`, and accepted if `accepted`
/// (else rejected).
fn attempt(transcript: &mut Transcript<Vec<u8>>, hole: &str, text: &str, accepted: bool) {
    let label = Label::bottom();
    let messages = [Turn { role: "user", content: "12345678" }];
    let usage = Usage { prompt_tokens: 2, completion_tokens: 3 };
    let (attempt, max_attempts) = (1, 3);
    let prompted = Event::HolePrompted {
        hole,
        attempt,
        max_attempts,
        model: "scripted",
        label: &label,
        max_tokens: 64,
        messages: &messages,
    };
    transcript.write(&prompted).unwrap();
    transcript.write(&Event::FillReceived { hole, attempt, text, usage }).unwrap();
    let verdict = if accepted {
        Event::FillAccepted { hole, attempt, code: text, file: cordon_syntax::FileId(0) }
    } else {
        Event::FillRejected { hole, attempt, feedback: "error: no code block", first: None }
    };
    transcript.write(&verdict).unwrap();
}

#[test]
fn transcripts_write_one_versioned_event_per_line() {
    let mut transcript = Transcript::new(Vec::new());
    attempt(&mut transcript, "h1", "let x = 1;", false);
    let problem = Problem { code: Code::UndefinedName, line: 2, message: "unknown name `y`".into() };
    let rejected =
        Event::FillRejected { hole: "h1", attempt: 2, feedback: "error[undefined-name]: ..", first: Some(&problem) };
    transcript.write(&rejected).unwrap();
    assert_eq!(transcript.len(), 4);

    let written = transcript.into_inner();
    let text = String::from_utf8(written.clone()).unwrap();
    assert!(text.starts_with(r#"{"v":1,"seq":0,"event":"hole_prompted","#), "{text}");
    let records = lines(&written);
    assert_eq!(records[0]["messages"][0], json!({ "role": "user", "content": "12345678" }));
    assert_eq!(records[0]["label"], Label::bottom().to_string(), "a label is written as text");
    assert_eq!(
        records[1],
        json!({
            "v": 1, "seq": 1, "event": "fill_received", "hole": "h1", "attempt": 1, "text": "let x = 1;",
            "usage": { "prompt_tokens": 2, "completion_tokens": 3 }
        })
    );
    assert_eq!(records[2]["event"], "fill_rejected");
    assert_eq!(records[2]["first"], Value::Null);
    assert_eq!(records[3]["first"], json!({ "code": "undefined-name", "line": 2, "message": "unknown name `y`" }));
}

/// A writer that always fails.
struct Broken;

impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::other("disk full"))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn write_errors_are_returned_and_kept() {
    let accepted = Event::FillAccepted { hole: "h", attempt: 1, code: "1", file: cordon_syntax::FileId(0) };
    let mut transcript = Transcript::new(Broken);
    let error = transcript.write(&accepted).unwrap_err();
    assert!(matches!(error, TranscriptError::Io(_)));
    assert!(error.to_string().contains("disk full"), "{error}");
    // As an observer it cannot return the error: it keeps the first one and writes no more.
    let mut transcript = Transcript::new(Broken);
    assert!(transcript.error().is_none());
    transcript.event(&accepted);
    transcript.event(&accepted);
    assert!(transcript.error().is_some_and(|e| e.to_string().contains("disk full")), "{:?}", transcript.error());
    assert!(transcript.is_empty());
}

#[test]
fn a_recorded_run_replays_offline() {
    // Record a run of a scripted "model": two attempts at hole a (the first rejected), then b.
    let mut model = Scripted::new(vec![
        ScriptedReply::for_hole("a", "bad"),
        ScriptedReply::for_hole("a", "good"),
        ScriptedReply::for_hole("b", "bee"),
    ]);
    let mut transcript = Transcript::new(Vec::new());
    for hole in ["a", "a", "b"] {
        let completion = model.complete(&ask(Some(hole))).unwrap();
        attempt(&mut transcript, hole, &completion.text, completion.text != "bad");
    }
    let recorded = transcript.into_inner();

    let mut replayed = replay(io::Cursor::new(&recorded)).unwrap();
    assert_eq!(replayed.remaining(), 3);
    assert_eq!(text(&mut replayed, Some("a")).unwrap(), "bad");
    assert_eq!(text(&mut replayed, Some("b")).unwrap(), "bee");
    assert_eq!(text(&mut replayed, Some("a")).unwrap(), "good");

    let path = temp_file("run.jsonl", &String::from_utf8(recorded).unwrap());
    let mut opened = open(&ProviderConfig::parse(&format!("replay:{}", path.display())).unwrap()).unwrap();
    assert!(opened.name().starts_with("replay:"));
    assert_eq!(text(&mut opened, Some("a")).unwrap(), "bad");
}

/// A transcript of one accepted attempt at hole `0`, whose prompt was `prompt`.
fn recorded_for(prompt: &str) -> Vec<u8> {
    let mut transcript = Transcript::new(Vec::new());
    let label = Label::bottom();
    let messages = [Turn { role: "system", content: "reference" }, Turn { role: "user", content: prompt }];
    let prompted = Event::HolePrompted {
        hole: "0",
        attempt: 1,
        max_attempts: 3,
        model: "m",
        label: &label,
        max_tokens: 64,
        messages: &messages,
    };
    transcript.write(&prompted).unwrap();
    let usage = Usage { prompt_tokens: 1234, completion_tokens: 56 };
    transcript.write(&Event::FillReceived { hole: "0", attempt: 1, text: "```cordon\nsend(s)\n```", usage }).unwrap();
    transcript.into_inner()
}

/// A request for hole `0` with `prompt`.
fn asking(prompt: &str) -> Request {
    Request {
        messages: vec![Message::system("reference"), Message::user(prompt)],
        max_tokens: 64,
        hole: Some("0".into()),
    }
}

#[test]
fn a_transcript_recorded_for_another_request_is_refused() {
    // Hostile first: the transcript answered "delete every repository"; this run asks something
    // else, and the recorded fill must not answer it.
    let recorded = recorded_for("Task: delete every repository\nExpected type: String");
    let mut replayed = replay(io::Cursor::new(&recorded)).unwrap();
    let error = replayed.complete(&asking("Task: count the open issues\nExpected type: String")).unwrap_err();
    let ProviderError::Mismatch(message) = &error else { panic!("{error:?}") };
    assert!(message.contains("hole `0` attempt 1 was recorded for another request"), "{message}");
    assert!(message.contains("message 2 differs at line 1"), "{message}");
    assert!(message.contains("delete every repository") && message.contains("count the open issues"), "{message}");
    assert!(error.to_string().starts_with("replay: "), "{error}");
    assert_eq!(replayed.remaining(), 1, "a refused reply is not used up");
    // A hole the transcript never reached.
    let other = Request { hole: Some("1".into()), ..asking("x") };
    assert!(matches!(replayed.complete(&other), Err(ProviderError::Mismatch(_))));
    // A prompt with a message more than recorded.
    let mut longer = asking("Task: delete every repository\nExpected type: String");
    longer.messages.push(Message::user("and more"));
    assert!(matches!(replayed.complete(&longer), Err(ProviderError::Mismatch(m)) if m.contains("3 messages")));
}

#[test]
fn leftover_replies_are_refused_when_the_run_is_done() {
    let mut recorded = recorded_for("Task: a");
    recorded.extend(recorded_for("Task: a"));
    let mut replayed = replay(io::Cursor::new(&recorded)).unwrap();
    replayed.complete(&asking("Task: a")).unwrap();
    let Err(ProviderError::Mismatch(message)) = replayed.finish() else { panic!("leftovers were ignored") };
    assert!(message.contains("1 recorded reply was never asked for (hole `0` attempt 1)"), "{message}");
    replayed.complete(&asking("Task: a")).unwrap();
    assert_eq!(replayed.finish(), Ok(()));
}

#[test]
fn a_replay_reports_the_recorded_token_counts() {
    let mut replayed = replay(io::Cursor::new(recorded_for("Task: a"))).unwrap();
    let completion = replayed.complete(&asking("Task: a")).unwrap();
    assert_eq!(completion.usage, Usage { prompt_tokens: 1234, completion_tokens: 56 }, "not an estimate");
}

#[test]
fn a_reply_without_its_prompt_is_refused() {
    let line = r#"{"v":1,"seq":0,"event":"fill_received","hole":"0","attempt":1,"text":"x","usage":{"prompt_tokens":1,"completion_tokens":1}}"#;
    let error = replay_error(line);
    assert!(
        matches!(error, TranscriptError::Line { line: 1, .. }) && error.to_string().contains("hole_prompted"),
        "{error}"
    );
}

/// The error replaying `transcript` gives.
fn replay_error(transcript: &str) -> TranscriptError {
    replay(io::Cursor::new(transcript)).unwrap_err()
}

#[test]
fn replay_reports_bad_lines_by_number() {
    let error =
        replay_error("{\"v\":1,\"seq\":0,\"event\":\"run_resumed\"}\n\n{\"v\":1,\"event\":\"fill_received\"}\n");
    assert!(matches!(error, TranscriptError::Line { line: 3, .. }), "{error:?}");
    assert!(error.to_string().contains("hole"), "{error}");
    let error = replay_error("{\"v\":1,\"event\":\"fill_received\",\"hole\":\"0\",\"text\":7}\n");
    assert!(matches!(error, TranscriptError::Line { line: 1, .. }) && error.to_string().contains("text"), "{error}");
    let error = replay_error("{\"v\":1,\"event\":\"fill_received\",\"hole\":null,\"text\":\"x\"}\n");
    assert!(matches!(error, TranscriptError::Line { line: 1, .. }) && error.to_string().contains("hole"), "{error}");
    let error = replay_error("{\"v\":1,\"event\":[]}\n");
    assert!(matches!(error, TranscriptError::Line { line: 1, .. }) && error.to_string().contains("event"), "{error}");
    let error = replay_error("not json\n");
    assert!(matches!(error, TranscriptError::Line { line: 1, .. }), "{error:?}");
    let error = replay_error("[1, 2]\n");
    assert!(matches!(error, TranscriptError::Line { line: 1, .. }), "{error:?}");
}

#[test]
fn replay_refuses_a_newer_format_naming_the_line() {
    let newer = "{\"v\":1,\"seq\":0,\"event\":\"run_resumed\"}\n{\"v\":2,\"seq\":1,\"event\":\"something_new\"}\n";
    let error = replay_error(newer);
    assert!(matches!(error, TranscriptError::Newer { line: 2, version: 2 }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("line 2") && message.contains("newer"), "{message}");
    // Not a version at all, or none: a line from before versions, or not a transcript.
    for bad in [r#"{"v":"1","event":"fill_received"}"#, r#"{"v":0,"event":"run_resumed"}"#, r#"{"v":-1}"#] {
        let error = replay_error(bad);
        assert!(matches!(error, TranscriptError::Line { line: 1, .. }), "{bad}: {error:?}");
        assert!(error.to_string().contains("`v`"), "{error}");
    }
    let error = replay_error(r#"{"seq":0,"kind":"reply","hole":"0","text":"x"}"#);
    assert!(matches!(error, TranscriptError::Line { line: 1, .. }) && error.to_string().contains("`v`"), "{error}");
}

#[test]
fn model_specs_parse_with_defaults() {
    let ProviderConfig::OpenAi(config) = ProviderConfig::parse("openai:gpt-4o-mini").unwrap() else { panic!() };
    assert_eq!((config.model.as_str(), config.base_url.as_str()), ("gpt-4o-mini", "https://api.openai.com/v1"));
    assert_eq!(config.api_key_env, "OPENAI_API_KEY");

    let ProviderConfig::OpenAi(config) = ProviderConfig::parse("openai:llama3.1:8b@http://127.0.0.1:11434/v1").unwrap()
    else {
        panic!()
    };
    assert_eq!((config.model.as_str(), config.base_url.as_str()), ("llama3.1:8b", "http://127.0.0.1:11434/v1"));

    let ProviderConfig::Anthropic(config) = ProviderConfig::parse("anthropic:claude-3-5-sonnet@20240620").unwrap()
    else {
        panic!()
    };
    assert_eq!(config.model, "claude-3-5-sonnet@20240620", "an @ not followed by a URL is part of the model");
    assert_eq!(
        (config.base_url.as_str(), config.api_key_env.as_str()),
        ("https://api.anthropic.com", "ANTHROPIC_API_KEY")
    );

    assert_eq!(
        ProviderConfig::parse("scripted:demo/replies.json").unwrap(),
        ProviderConfig::Scripted("demo/replies.json".into())
    );
    assert_eq!(ProviderConfig::parse("replay:run.jsonl").unwrap(), ProviderConfig::Replay("run.jsonl".into()));
}

#[test]
fn model_specs_round_trip_through_display() {
    for spec in [
        "openai:gpt-4o-mini",
        "openai:qwen@http://127.0.0.1:8000/v1",
        "anthropic:claude-sonnet-4-5",
        "anthropic:m@https://proxy.example",
        "scripted:a.json",
        "replay:b.jsonl",
    ] {
        let config: ProviderConfig = spec.parse().unwrap();
        assert_eq!(config.to_string(), spec);
    }
}

#[test]
fn bad_model_specs_say_what_is_expected() {
    for bad in ["gpt-4o", "openai:", "openai:@http://x", "scripted:", "gemini:pro", ""] {
        let Err(ProviderError::Config(message)) = ProviderConfig::parse(bad) else { panic!("`{bad}` parsed") };
        assert!(message.contains(bad.split(':').next().unwrap_or_default()), "{message}");
    }
    let Err(ProviderError::Config(message)) = ProviderConfig::parse("gemini:pro") else { panic!() };
    assert!(message.contains("openai:MODEL"), "{message}");
}

#[test]
fn reply_parsers_are_usable_without_a_server() {
    let completion =
        cordon_agent::openai::parse_reply(&json!({ "choices": [{ "message": { "content": "hi" } }] })).unwrap();
    assert_eq!(completion.text, "hi");
    let refusal = json!({ "choices": [{ "message": { "content": null, "refusal": "I can't" } }] });
    assert!(
        matches!(cordon_agent::openai::parse_reply(&refusal), Err(ProviderError::Malformed(m)) if m.contains("refused"))
    );
    let cached =
        json!({ "content": [], "usage": { "input_tokens": 1, "cache_read_input_tokens": 10, "output_tokens": 2 } });
    let completion = cordon_agent::anthropic::parse_reply(&cached).unwrap();
    assert_eq!((completion.text.as_str(), completion.usage.prompt_tokens), ("", 11));
}
