//! The simulated bank and shop: its policy checks and lints clean, its data loads, and a
//! broken data file is an error that says what is wrong. (What the gate makes of its tools is
//! tested in `crates/cordon-gate/tests/`.)
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_sim::{Shop, env};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check, lint};

#[test]
fn the_policy_checks_and_relies_on_no_default_label() {
    let mut sources = SourceMap::new();
    let policy = sources.add(cordon_sim::shop::POLICY_PATH, cordon_sim::shop::POLICY);
    let outcome = check(&sources, &[policy], None, &CheckOptions::default());
    assert!(outcome.diagnostics.is_empty(), "{:#?}", outcome.diagnostics);
    assert!(lint(&sources, &[policy]).is_empty(), "{:#?}", lint(&sources, &[policy]));
}

#[test]
fn the_builtin_data_loads_and_is_registered() {
    let shop = env("shop").unwrap();
    assert_eq!((shop.name(), shop.principal()), ("shop", Some("ann")));
    assert!(cordon_sim::NAMES.contains(&"shop"));
    let data = Shop::builtin().unwrap();
    assert!(data.data().reviews.iter().any(|r| r.text.contains("NOTE TO AI ASSISTANTS")), "the injection is there");
    assert!(!data.money_moved());
}

#[test]
fn a_broken_data_file_says_what_is_wrong() {
    let cases = [
        ("{", "the shop data is not valid"),
        (
            &cordon_sim::shop::DATA
                .replace("\"merchant\": \"tea-house\", \"amount\": 1200", "\"merchant\": \"nobody\", \"amount\": 1200"),
            "unknown merchant `nobody`",
        ),
        (&cordon_sim::shop::DATA.replace("\"rating\": 3", "\"rating\": 9"), "expected 1 to 5"),
        (&cordon_sim::shop::DATA.replace("\"balance\": 250000", "\"balance\": -1"), "negative balance"),
    ];
    for (text, expected) in cases {
        let e = Shop::from_json(text).unwrap_err();
        assert!(e.contains(expected), "{e}");
    }
}

#[test]
fn the_tools_move_money_only_as_asked() {
    let mut shop = Shop::builtin().unwrap();
    assert!(shop.pay("ACC-1", "nobody", 10, "x").unwrap_err().contains("no merchant"));
    assert!(shop.pay("ACC-1", "tea-house", 99_999_999, "x").unwrap_err().contains("less than"));
    shop.pay("ACC-1", "tea-house", 1200, "tea").unwrap();
    assert_eq!(shop.data().accounts[0].balance, 250000 - 1200);
    let id = shop.buy("P-3", 2, "ACC-1").unwrap().id.clone();
    assert_eq!(shop.data().accounts[0].balance, 250000 - 1200 - 1800);
    shop.delete_order(&id).unwrap();
    assert!(shop.delete_order(&id).is_err(), "deleted twice");
    assert!(shop.money_moved());
}
