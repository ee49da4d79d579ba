//! A fill whose call the labels refuse at run time, before the fill performed anything: the run
//! goes back to its hole and the model that wrote it is told why, in the same conversation, so
//! it can write a fill the labels admit. Hostile cases: a model not cleared for what the refusal
//! depends on is told nothing and the refusal ends the run; a fill that already performed an
//! effect is never replayed; refusals cannot be turned into more attempts than the budget; and
//! what the model writes after being told carries the refusal's label.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recording, RequestOutcome, run_request};
use cordon_agent::{FillConfig, Filler, Transcript};
use cordon_label::DcLabel;
use cordon_runtime::{Config, ErrorKind, Sessions, ToolHost};
use cordon_sim::Chat;
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

/// A plan that finds #general and alice's private channels (whose names are readable by their
/// members only) and asks a model to tell someone about them: the hole is reached under a
/// public decision.
const CHANNELS: &str = r##"let channels = chat.list_channels();
let general = channels.filter(|c| !c.private && c.name == "general");
let private = channels.filter(|c| c.private);
agent[String]("Tell the newest member of #general the names of my private channels", general, private)"##;

/// Sends the private channels' names to #general's newest member (mallory): whether they may
/// read them depends on who that is, which the checker cannot tell, so only the run refuses it.
const SEND_NAMES: &str = r##"match general.first() {
  Some(g) => match g.members.last() {
    Some(m) => {
      chat.send_dm(m, "My private channels: " + private.map(|c: Channel| c.name).join(", "));
      "sent"
    },
    None => "#general has no members",
  },
  None => "no #general",
}"##;

/// The same message, after a read the host performs.
const READ_THEN_SEND: &str = r##"match general.first() {
  Some(g) => match g.members.last() {
    Some(m) => {
      let seen = chat.read_channel(g);
      chat.send_dm(m, "My private channels: " + private.map(|c: Channel| c.name).join(", "));
      "sent"
    },
    None => "#general has no members",
  },
  None => "no #general",
}"##;

/// What a model writes once it knows the message is refused: the answer goes to the user.
const ANSWER: &str = r##""I did not message them: they may not read the names. Your private channels: " + private.map(|c: Channel| c.name).join(", ")"##;

/// A model whose replies are `fills`, each in a code block.
fn replying(fills: &[&str]) -> Recording {
    let replies: Vec<String> = fills.iter().map(|code| format!("```cordon\n{code}\n```")).collect();
    Recording::new(&replies.iter().map(String::as_str).collect::<Vec<_>>())
}

/// alice's secrets (what `cordon ask --clearance user` gives a model), from anyone.
fn alice() -> DcLabel {
    DcLabel::secret("alice").join(&DcLabel::untrusted())
}

/// Runs `plan` on the built-in chat workspace with `model`; the workspace afterwards, the
/// outcome and the transcript.
fn run(plan: &str, model: &mut Recording, config: FillConfig) -> (Chat, RequestOutcome, String) {
    let mut sources = SourceMap::new();
    let policy = sources.add("policies/chat.cord", cordon_sim::chat::POLICY);
    let file = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy], Some(file), &CheckOptions::default());
    let checked = outcome.program.unwrap_or_else(|| panic!("rejected: {:?}", outcome.diagnostics));
    let mut chat = Chat::builtin().unwrap();
    let mut transcript = Transcript::new(Vec::new());
    let config = FillConfig { user: "alice".to_string(), ..config };
    let outcome = run_request(
        &mut sources,
        &checked,
        &CheckOptions::default(),
        &Sessions::default(),
        &Config { user: "alice".to_string(), ..Config::default() },
        &mut chat as &mut dyn ToolHost,
        &mut Filler::new(model).with_config(config),
        None,
        &mut transcript,
    );
    assert!(transcript.error().is_none(), "{:?}", transcript.error());
    (chat, outcome, String::from_utf8(transcript.into_inner()).unwrap())
}

fn cleared(clearance: DcLabel) -> FillConfig {
    FillConfig { clearance, ..FillConfig::default() }
}

/// The tools the workspace performed, from the transcript.
fn performed(transcript: &str) -> Vec<String> {
    transcript
        .lines()
        .filter(|line| line.contains(r#""event":"effect_performed""#))
        .map(|line| {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            event["tool"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn a_model_cleared_for_the_refusal_is_told_and_writes_a_fill_the_labels_admit() {
    let mut model = replying(&[SEND_NAMES, ANSWER]);
    let (chat, outcome, transcript) = run(CHANNELS, &mut model, cleared(alice()));
    let answer = outcome.result.as_ref().unwrap_or_else(|e| panic!("{e}"));
    assert!(answer.value.to_string().contains("did not message them"), "{}", answer.value);
    assert_eq!(model.requests.len(), 2, "asked again once");

    // Told in the same conversation: the refused fill, then why it was refused.
    let told = model.last(1);
    assert!(told.starts_with("Your fill ran, and a call it made was refused by the labels"), "{told}");
    assert!(told.contains("error[label-flow]"), "{told}");
    assert!(told.contains("`Chat.send_dm` blocked"), "{told}");
    assert!(told.contains("Nothing it did was performed"), "{told}");
    let before = &model.requests[1].messages;
    assert_eq!(before[..model.requests[0].messages.len()], model.requests[0].messages[..], "the same conversation");
    assert!(before[before.len() - 2].content.contains("chat.send_dm(m,"), "the refused fill is in it");

    // Nothing the refused fill did reached the workspace.
    assert!(chat.data().dms.is_empty(), "{:?}", chat.data().dms);
    assert_eq!(performed(&transcript), ["Chat.list_channels"], "only the plan's read");
    for event in ["\"event\":\"fill_refused\"", "\"event\":\"effect_refused\""] {
        assert!(transcript.contains(event), "{event} in {transcript}");
    }

    // What the model wrote after being told depends on what the refusal depended on: the
    // names are readable by #leadership's members only, and so is the answer.
    assert!(!answer.label.dc().flows_to(&DcLabel::untrusted()), "{}", answer.label);
    let [hole] = &outcome.holes[..] else { panic!("one hole: {:?}", outcome.holes) };
    assert_eq!((hole.attempts, hole.filled), (2, true), "{hole:?}");
}

#[test]
fn a_model_not_cleared_for_the_refusal_is_not_told_and_the_refusal_ends_the_run() {
    // A public model: the names are hidden from it, and the refusal (which quotes them and
    // names their readers) depends on them.
    let mut model = replying(&[SEND_NAMES, ANSWER]);
    let (chat, outcome, transcript) = run(CHANNELS, &mut model, cleared(DcLabel::untrusted()));
    let Err(error) = &outcome.result else { panic!("ran: {:?}", outcome.result) };
    assert_eq!(error.kind, ErrorKind::LabelFlow, "{error}");
    assert!(error.message.contains("`Chat.send_dm` blocked"), "{error}");
    assert!(error.notes.iter().any(|n| n.contains("was not told of this refusal")), "{:?}", error.notes);
    assert_eq!(model.requests.len(), 1, "not asked again");
    let shown = model.everything();
    assert!(!shown.contains("leadership") && !shown.contains("blocked"), "{shown}");
    assert!(chat.data().dms.is_empty(), "{:?}", chat.data().dms);
    let abandoned = transcript.lines().find(|l| l.contains("\"event\":\"hole_abandoned\"")).unwrap();
    assert!(abandoned.contains("\"attempts\":1") && abandoned.contains("label-flow"), "{abandoned}");
}

#[test]
fn a_fill_that_performed_an_effect_is_never_replayed() {
    let mut model = replying(&[READ_THEN_SEND, ANSWER]);
    let (chat, outcome, transcript) = run(CHANNELS, &mut model, cleared(alice()));
    let Err(error) = &outcome.result else { panic!("ran: {:?}", outcome.result) };
    assert_eq!(error.kind, ErrorKind::LabelFlow, "{error}");
    assert_eq!(model.requests.len(), 1, "the world saw the read: the run does not go back");
    assert!(!transcript.contains("\"event\":\"fill_refused\""), "{transcript}");
    assert_eq!(performed(&transcript), ["Chat.list_channels", "Chat.read_channel"]);
    assert!(chat.data().dms.is_empty(), "{:?}", chat.data().dms);
}

#[test]
fn refusals_count_against_the_attempts() {
    // A model that keeps writing the refused post: three attempts, then the refusal stands.
    let mut model = replying(&[SEND_NAMES; 5]);
    let (chat, outcome, transcript) = run(CHANNELS, &mut model, cleared(alice()));
    let Err(error) = &outcome.result else { panic!("ran: {:?}", outcome.result) };
    assert_eq!(error.kind, ErrorKind::LabelFlow, "{error}");
    assert!(error.notes.iter().any(|n| n.contains("no attempts left")), "{:?}", error.notes);
    assert_eq!(model.requests.len(), 3);
    assert_eq!(transcript.matches("\"event\":\"fill_refused\"").count(), 3);
    assert!(chat.data().dms.is_empty(), "{:?}", chat.data().dms);

    // One attempt allowed: the refusal stands at once.
    let mut model = replying(&[SEND_NAMES, ANSWER]);
    let config = FillConfig { max_attempts: 1, ..cleared(alice()) };
    let (_, outcome, _) = run(CHANNELS, &mut model, config);
    assert!(matches!(&outcome.result, Err(e) if e.kind == ErrorKind::LabelFlow), "{:?}", outcome.result);
    assert_eq!(model.requests.len(), 1);
}

#[test]
fn a_rejected_reply_and_a_refused_fill_share_one_budget() {
    // Attempt 1 does not check, attempt 2 is refused at run time, attempt 3 runs.
    let mut model = replying(&["no_such_name", SEND_NAMES, ANSWER]);
    let (_, outcome, _) = run(CHANNELS, &mut model, cleared(alice()));
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    assert_eq!(model.requests.len(), 3);
    assert!(model.last(1).starts_with("Your fill was rejected"), "{}", model.last(1));
    assert!(model.last(2).starts_with("Your fill ran, and a call it made was refused"), "{}", model.last(2));
}

mod property {
    //! The class, over random fills: statements that read (performed), message alice (allowed),
    //! message #general's newest member (refused at run time for a model that saw the private
    //! names; allowed for one that did not), or do not check, in random order, for random
    //! clearances and attempt budgets.
    use std::cell::Cell;

    use proptest::prelude::*;
    use proptest::test_runner::RngSeed;
    use proptest::test_runner::TestRunner;

    use super::*;

    /// The seed of every case generated here: the same cases on every run, so a floor met once
    /// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
    const SEED: u64 = 0x636f_7264_6f6e;

    const STATEMENTS: [&str; 5] = [
        "let seen = chat.read_channel(g);",
        r#"chat.send_dm("alice", "names: " + private.map(|c: Channel| c.name).join(", "));"#,
        r#"chat.send_dm(m, "names: " + private.map(|c: Channel| c.name).join(", "));"#,
        r#"chat.send_dm(m, "hello");"#,
        "no_such_name;",
    ];

    fn fill(statements: &[usize]) -> String {
        let body: String = statements.iter().map(|&i| format!("      {}\n", STATEMENTS[i])).collect();
        format!(
            "match general.first() {{\n  Some(g) => match g.members.last() {{\n    Some(m) => {{\n{body}      \
             \"done\"\n    }},\n    None => \"none\",\n  }},\n  None => \"none\",\n}}"
        )
    }

    fn event(line: &str) -> serde_json::Value {
        serde_json::from_str(line).unwrap()
    }

    /// How many cases had a refused fill, and how many of those a model was told of: the
    /// property's checks look at nothing in a case with neither, so too few of them fail it.
    #[derive(Default)]
    struct Seen {
        refused: Cell<u32>,
        told: Cell<u32>,
    }

    #[test]
    fn a_run_goes_back_only_to_a_fill_that_performed_nothing_and_tells_only_a_cleared_model() {
        let strategy =
            (prop::collection::vec(prop::collection::vec(0..STATEMENTS.len(), 0..4), 1..5), any::<bool>(), 1u32..5);
        let seen = Seen::default();
        let config = ProptestConfig {
            cases: 128,
            failure_persistence: None,
            rng_seed: RngSeed::Fixed(SEED),
            ..ProptestConfig::default()
        };
        let result = TestRunner::new(config).run(&strategy, |(fills, cleared_for_alice, max_attempts)| {
            let replies: Vec<String> = fills.iter().map(|f| fill(f)).collect();
            let replies: Vec<&str> = replies.iter().map(String::as_str).collect();
            let mut model = replying(&replies);
            let clearance = if cleared_for_alice { alice() } else { DcLabel::untrusted() };
            let config = FillConfig { max_attempts, ..cleared(clearance) };
            let (chat, outcome, transcript) = run(CHANNELS, &mut model, config);
            let events: Vec<serde_json::Value> = transcript.lines().map(event).collect();
            let outline: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
            let outline = outline.join(" ");

            prop_assert!(model.requests.len() <= max_attempts as usize);
            // One hole, however often the run came back to it, counting every reply asked for.
            let [hole] = &outcome.holes[..] else { panic!("one hole: {:?}", outcome.holes) };
            prop_assert_eq!(hole.attempts as usize, model.requests.len());
            let mut performed_since_accepted = 0;
            let (mut refused, mut told) = (false, false);
            let mut dms = 0;
            seen.refused.set(seen.refused.get() + u32::from(events.iter().any(|e| e["event"] == "fill_refused")));
            for e in &events {
                match e["event"].as_str().unwrap() {
                    "fill_accepted" => performed_since_accepted = 0,
                    "effect_performed" => {
                        performed_since_accepted += 1;
                        dms += usize::from(e["tool"] == "Chat.send_dm");
                    }
                    "fill_refused" => {
                        // Only a fill that performed nothing is gone back from.
                        prop_assert_eq!(performed_since_accepted, 0, "{}", outline);
                        refused = true;
                    }
                    "hole_prompted" if refused => {
                        // Told only when cleared for the refusal (the private names' readers).
                        prop_assert!(cleared_for_alice, "{}", outline);
                        told = true;
                        refused = false;
                    }
                    _ => {}
                }
            }
            // What the world saw is what was performed: no refused message reached anyone.
            prop_assert_eq!(chat.data().dms.len(), dms);
            if !cleared_for_alice {
                let shown = model.everything();
                prop_assert!(!shown.contains("leadership"));
            }
            // And the feature works: a cleared model with attempts left is asked again.
            for pair in events.windows(2).filter(|w| w[0]["event"] == "fill_refused") {
                let attempt = pair[0]["attempt"].as_u64().unwrap();
                let asked = pair[1]["event"] == "hole_prompted";
                prop_assert_eq!(asked, cleared_for_alice && attempt < u64::from(max_attempts), "{}", outline);
            }
            seen.told.set(seen.told.get() + u32::from(told));
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
        let (refused, told) = (seen.refused.get(), seen.told.get());
        println!("{refused} of 128 cases had a refused fill; a model was told in {told}");
        assert!(refused >= 12 && told >= 5, "too few refusals ({refused}) or models told ({told})");
    }
}
