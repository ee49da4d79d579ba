//! What an editor asks (`cordon::ide`), at every offset of texts an editor holds while someone
//! types: each prefix of a plan, line by line, and texts that are not Cordon at all. Nothing
//! panics, every place answered is within its file, and, once the plan is whole, what the
//! cursor is on is found (a floor, so the walk cannot pass by answering nothing).
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon::Source;
use cordon::api::CheckOptions;
use cordon::ide::{Analysis, Place};

fn repo(path: &str) -> Source {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path);
    Source::new(path, std::fs::read_to_string(full).unwrap())
}

/// Asks everything at every offset of the plan (and past its end); the number of hovers found.
fn ask_everywhere(analysis: &Analysis, plan: &Source, sources: &[&Source]) -> usize {
    let within = |place: &Place| {
        let source = sources.iter().find(|s| s.name == place.file).unwrap_or_else(|| panic!("{place:?}: no such file"));
        assert!(place.start <= place.end && place.end <= source.text.len(), "{place:?} is out of its file");
    };
    let mut found = 0;
    for offset in 0..plan.text.len() + 3 {
        if let Some(hover) = analysis.hover(&plan.name, offset) {
            within(&hover.place);
            assert!(!hover.text.is_empty());
            found += 1;
        }
        if let Some(place) = analysis.definition(&plan.name, offset) {
            within(&place);
        }
        analysis.completions(&plan.name, offset, None);
    }
    for problem in analysis.problems(&plan.name) {
        within(&problem.place);
        problem.related.iter().for_each(|(place, _)| within(place));
    }
    analysis.effects();
    found
}

#[test]
fn every_offset_of_every_prefix_is_answered_without_a_panic() {
    let policy = repo("policies/github.cord");
    let whole = repo("examples/github/weekly_triage.cord");
    let options = CheckOptions::default();
    let mut end = 0;
    let mut last = 0;
    while end < whole.text.len() {
        end = whole.text[end..].find('\n').map_or(whole.text.len(), |i| end + i + 1);
        let plan = Source::new(whole.name.clone(), &whole.text[..end]);
        let analysis = Analysis::check(std::slice::from_ref(&policy), Some(&plan), &options, "user");
        last = ask_everywhere(&analysis, &plan, &[&policy, &plan]);
    }
    assert!(last >= 200, "only {last} offsets of the whole plan have a hover");
}

#[test]
fn text_that_is_not_cordon_is_answered_without_a_panic() {
    let policy = repo("policies/github.cord");
    let texts = [
        "\u{0}\u{1}\u{7}\u{1b}[2J\u{fffe}\u{ffff} \u{1f389} let \u{202e} x = 1;\r\r\n\t\u{85}",
        "gh.\n.\n..x.\nlet = gh.repo(.;",
        "let x = é😀.ab.;\nx.",
        &"(".repeat(5000),
        &"{ let a = 1; ".repeat(300),
        "fn f(x: {v: Int | v > }) -> { x }\nmatch f( { Some(",
    ];
    for text in texts {
        let plan = Source::new("plan.cord", text);
        let analysis = Analysis::check(std::slice::from_ref(&policy), Some(&plan), &CheckOptions::default(), "user");
        ask_everywhere(&analysis, &plan, &[&policy, &plan]);
        // The same text as a policy, checked alone.
        let alone = Analysis::check(std::slice::from_ref(&plan), None, &CheckOptions::default(), "user");
        ask_everywhere(&alone, &plan, &[&plan]);
    }
}

#[test]
fn hovering_a_binding_shows_the_label_the_analysis_found_for_it() {
    let policy = repo("policies/github.cord");
    let plan = Source::new(
        "plan.cord",
        "let secret = gh.private_repo(\"roadmap\");\nlet n = 1 + 2;\nmatch secret {\n  Some(r) => (r.name, s),\n  None => (\"none\", s),\n}\n",
    );
    let analysis = Analysis::check(std::slice::from_ref(&policy), Some(&plan), &CheckOptions::default(), "alice");
    let hover = |name: &str| {
        let offset = plan.text.find(name).unwrap();
        analysis.hover("plan.cord", offset).unwrap_or_else(|| panic!("no hover on {name}")).text
    };
    // What the private repository's lookup returned is the user's secret, and so is what a
    // pattern takes out of it; a sum of literals is public.
    let secret = hover("secret =");
    assert!(secret.contains("**Label**: ") && secret.contains("alice"), "{secret}");
    let r = hover("r)");
    assert!(r.contains("**Label**: ") && r.contains("alice"), "{r}");
    let n = hover("n =");
    assert!(n.contains("**Label**: public"), "{n}");
}

#[test]
fn before_the_plan_checks_a_binding_of_a_tool_result_shows_the_policys_label_for_it() {
    let policy = repo("policies/github.cord");
    // The last line is a type error: no label analysis, but the policy still says.
    let plan = Source::new("plan.cord", "let secret = gh.private_repo(\"roadmap\");\n1 + \"x\"\n");
    let analysis = Analysis::check(std::slice::from_ref(&policy), Some(&plan), &CheckOptions::default(), "alice");
    let hover = analysis.hover("plan.cord", 4).unwrap().text;
    assert!(hover.contains("**Label**: that of `GitHub.private_repo`'s result, `secret(user())`."), "{hover}");
}
