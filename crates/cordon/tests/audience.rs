//! A calling agent is a model, and so a sink: a report written for it (`Report::to_json` with
//! `Audience::Agent`, what `cordon mcp serve` answers) shows only what its clearance allows,
//! and never a refusal's own words, which can quote the data. The user's own report shows all.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon::{Audience, Clearance, Report, Request, Settings, Source, Storage, ToolChoice, Tools, Workspace};
use cordon_engine::Observers;
use cordon_gate::DenyAll;

/// Runs `plan` on a fresh simulated GitHub, with every card denied.
fn run(plan: &str) -> (Report, String) {
    let tools = Tools::open(&ToolChoice { envs: vec!["github".into()], ..ToolChoice::default() }, Vec::new()).unwrap();
    let mut workspace = Workspace::new(tools, Storage::in_memory().unwrap(), Settings::default());
    let report = workspace.run(&Source::new("plan.cord", plan), &mut DenyAll, &mut Observers::new()).unwrap();
    (report, workspace.principal().to_string())
}

/// The report as an agent cleared for `clearance` reads it.
fn for_agent(report: &Report, clearance: Clearance, user: &str) -> serde_json::Value {
    let label = clearance.label(user);
    report.to_json(Audience::Agent { name: clearance.name(), clearance: &label })
}

/// Reads the private roadmap and answers with it.
const LEAK: &str = r#"match gh.private_repo("secret-plans") {
  Some(secret) => gh.read_file(s, secret, "roadmap.md"),
  None => ("No secret-plans repository.", s),
}"#;

/// Words of the roadmap, which is secret to alice.
const SECRETS: [&str; 3] = ["Initech", "CONFIDENTIAL", "sandbox beta"];

#[test]
fn a_public_agent_sees_neither_the_secret_result_nor_the_calls_that_read_it() {
    let (report, user) = run(LEAK);
    assert_eq!(report.status(), "done", "{:?}", report.diagnostics);
    let mine = serde_json::to_value(&report).unwrap().to_string();
    assert!(SECRETS.iter().all(|s| mine.contains(s)), "the user's own report shows everything: {mine}");

    let public = for_agent(&report, Clearance::Public, &user);
    let text = public.to_string();
    for secret in SECRETS {
        assert!(!text.contains(secret), "{secret} reached a public agent: {text}");
    }
    assert_eq!(public["status"], "done");
    assert_eq!(public["clearance"], "public");
    assert!(public["result"].is_null() && public["label"].is_null(), "{public}");
    let withheld: Vec<&str> = public["withheld"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    assert!(withheld.contains(&"result"), "{withheld:?}");
    // The lookup's own decision is public: it is listed, its secret answer hidden. The read,
    // decided by that answer, is not listed at all.
    let trace = public["trace"].as_array().unwrap();
    assert!(trace.iter().any(|row| row["tool"] == "GitHub.private_repo" && row["decision"] == "allowed"), "{public}");
    assert!(trace.iter().all(|row| row["tool"] != "GitHub.read_file"), "{public}");
    assert!(trace.iter().any(|row| row["detail"] == "<hidden>"), "{public}");

    let trusted = for_agent(&report, Clearance::User, &user).to_string();
    assert!(SECRETS.iter().all(|s| trusted.contains(s)), "an agent cleared for the user's data sees it: {trusted}");
}

#[test]
fn a_refusal_is_told_to_an_agent_in_words_that_quote_nothing() {
    let plan =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/github/injected_issue.cord"))
            .unwrap();
    let (report, user) = run(&plan);
    assert_eq!(report.status(), "failed");
    let own = report.error().unwrap().message.clone();
    assert!(own.contains("The build fails"), "the refusal quotes the argument: {own}");

    let public = for_agent(&report, Clearance::Public, &user);
    let error = &public["diagnostics"]["diagnostics"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(error["code"], "label-flow", "{public}");
    assert!(!error.to_string().contains("The build fails"), "{error}");
    let blocked = public["trace"].as_array().unwrap().iter().find(|row| row["decision"] == "blocked").unwrap().clone();
    assert!(!blocked["reason"].to_string().contains("The build fails"), "{blocked}");
    assert_eq!(blocked["code"], "label-flow");
}

/// Messages a merchant the plan names itself (the card's recipient).
const MESSAGE: &str = r#"match shop.message_merchant("tea-house", "No rush on my order, thank you.") {
  Ok(_) => "Sent.",
  Err(r) => "Not sent: " + r.code + ".",
}"#;

/// The card the gate showed for the plan's one call, on a fresh simulated shop: the plan as the
/// user's, or as another agent's.
fn card_for(by_agent: bool) -> cordon_gate::Card {
    let tools = Tools::open(&ToolChoice { envs: vec!["shop".into()], ..ToolChoice::default() }, Vec::new()).unwrap();
    let mut workspace = Workspace::new(tools, Storage::in_memory().unwrap(), Settings::default());
    let plan = Source::new("plan.cord", MESSAGE);
    let mut answers = cordon_gate::Scripted::parse("no").unwrap();
    let request = if by_agent { Request::AgentPlan(&plan) } else { Request::Plan(&plan) };
    let prepared = workspace.prepare(request, &mut answers).unwrap();
    let report = prepared.run(&mut Observers::new()).unwrap();
    report.approvals.records.iter().find_map(|r| r.card.as_deref().cloned()).unwrap()
}

#[test]
fn a_recipient_another_agent_wrote_is_the_models_and_flagged() {
    let users = card_for(false);
    let recipient = &users.recipients[0];
    assert_eq!(recipient.text, "tea-house");
    assert_ne!(recipient.origin, cordon_gate::Origin::Model, "the user wrote this plan");
    assert!(users.flags.is_empty(), "{:?}", users.flags);

    let agents = card_for(true);
    assert_eq!(agents.recipients[0].origin, cordon_gate::Origin::Model);
    assert!(!agents.flags.is_empty(), "a destination the calling agent chose is flagged");
}
