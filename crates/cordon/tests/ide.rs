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
