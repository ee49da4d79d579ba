//! A calling agent is a model, and so a sink: a report written for it (`Report::to_json` with
//! `Audience::Agent`, what `cordon mcp serve` answers) shows only what its clearance allows,
//! and never a refusal's own words, which can quote the data. The user's own report shows all.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon::{Audience, Clearance, Report, Settings, Source, Storage, ToolChoice, Tools, Workspace};
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
