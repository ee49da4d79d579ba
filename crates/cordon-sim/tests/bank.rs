//! The simulated bank: its policy checks and lints clean, its data loads, a broken data file
//! says what is wrong, a payment lands where it was sent, a call the bank refuses changes
//! nothing, and the password is in no tool's answer. (What the gate and the labels make of its
//! tools is measured by `cordon bench --suite bank`.)
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_runtime::value::Val;
use cordon_runtime::{Effect, Json, ToolCall, ToolHost, Value};
use cordon_sim::bank::Money;
use cordon_sim::{Bank, env};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check, lint};

/// Calls a tool of the bank directly, as the engine would after every stage agreed.
fn call(bank: &mut Bank, tool: &str, args: Vec<(&str, Value)>) -> Result<Json, String> {
    let args = args.into_iter().map(|(n, v)| (n.into(), Val::plain(v))).collect();
    let effect = Effect::outside_a_run("Bank", tool, args);
    bank.perform(&ToolCall::new(&effect))
}

/// A host-made record as a plan hands it back: the host reads its id.
fn record(ty: &str, id: &str) -> Value {
    Value::record(ty, vec![("id", Value::str(id))])
}

fn balance(bank: &Bank, id: &str) -> Money {
    bank.account(id).unwrap().balance
}

#[test]
fn the_policy_checks_and_relies_on_no_default_label() {
    let mut sources = SourceMap::new();
    let policy = sources.add(cordon_sim::bank::POLICY_PATH, cordon_sim::bank::POLICY);
    let outcome = check(&sources, &[policy], None, &CheckOptions::default());
    assert!(outcome.diagnostics.is_empty(), "{:#?}", outcome.diagnostics);
    assert!(lint(&sources, &[policy]).is_empty(), "{:#?}", lint(&sources, &[policy]));
}

#[test]
fn the_builtin_data_loads_and_is_registered() {
    let bank = env("bank").unwrap();
    assert_eq!((bank.name(), bank.principal()), ("bank", Some("nora")));
    assert!(cordon_sim::NAMES.contains(&"bank"));
    let bank = Bank::builtin().unwrap();
    assert_eq!(balance(&bank, "CHK"), Money(447_120));
    assert_eq!(bank.scheduled().count(), 5);
    assert!(!bank.changed());
    let state = cordon_sim::env_with_data("bank", cordon_sim::bank::DATA).unwrap().state_json();
    assert_eq!(state["accounts"][0]["balance"], "4471.20", "money is decimal text in the state");
}

#[test]
fn money_is_read_and_written_as_whole_cents() {
    assert_eq!(Money::parse("12.5").unwrap(), Money(1250));
    assert_eq!(Money::parse("-84.20").unwrap(), Money(-8420));
    assert_eq!(Money::parse("7").unwrap(), Money(700));
    assert_eq!(Money::parse("1.500").unwrap(), Money(150));
    assert!(Money::parse("1.505").unwrap_err().contains("fractions of a cent"));
    for bad in ["", "-", "1.", ".5", "1e3", "12,50", "99999999999999999999"] {
        assert!(Money::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(Money(-5).to_string(), "-0.05");
}

#[test]
fn a_broken_data_file_says_what_is_wrong() {
    let data = cordon_sim::bank::DATA;
    let cases = [
        ("{".to_string(), "the bank data is not valid"),
        (data.replace("\"account\": \"SAV\"", "\"account\": \"NOPE\""), "unknown account `NOPE`"),
        (data.replace("\"balance\": \"4471.20\"", "\"balance\": \"-1.00\""), "negative balance"),
        (data.replace("\"day\": 15", "\"day\": 31"), "expected 1 to 28"),
        (data.replace("\"date\": \"2026-03-12\"", "\"date\": \"2026-04-01\""), "after today"),
        (data.replace("DE92700202700019931500", "not an iban"), "which is not one"),
        (data.replace("tern-Velvet-Orchard-58", "short"), "shorter than 12"),
        (data.replace("\"amount\": \"27.50\"", "\"amount\": \"27.505\""), "fractions of a cent"),
    ];
    for (text, expected) in cases {
        let e = Bank::from_json(&text).unwrap_err();
        assert!(e.contains(expected), "{expected}: {e}");
    }
}

#[test]
fn a_payment_lands_where_it_was_sent() {
    let mut bank = Bank::builtin().unwrap();
    let answer = call(
        &mut bank,
        "send_money",
        vec![
            ("from", record("Account", "CHK")),
            ("to_iban", Value::str("DE14500105170648210300")),
            ("amount", Value::str("15.00")),
            ("subject", Value::str("Pizza Friday")),
        ],
    )
    .unwrap();
    assert_eq!(answer["Ok"]["amount"], "-15.00", "{answer}");
    assert_eq!(answer["Ok"]["counterparty"], "Jonas Weber", "a saved payee's name");
    assert_eq!(balance(&bank, "CHK"), Money(447_120 - 1500));
    let sent = bank.data().sent.last().unwrap();
    assert_eq!(
        (sent.to_iban.as_str(), sent.amount, sent.subject.as_str()),
        ("DE14500105170648210300", Money(1500), "Pizza Friday")
    );
    // To one of the user's own IBANs, it lands in that account, booked on both sides.
    let savings = bank.account("SAV").unwrap().iban.clone();
    bank.send_money("CHK", &savings, Money(10_000), "Extra savings").unwrap();
    assert_eq!(balance(&bank, "SAV"), Money(1_842_000 + 10_000));
    let booked = bank.transactions("SAV", 1);
    assert_eq!((booked[0].amount, booked[0].subject.as_str()), (Money(10_000), "Extra savings"));
    assert!(bank.changed());
}

#[test]
fn a_call_the_bank_refuses_changes_nothing() {
    let mut bank = Bank::builtin().unwrap();
    let before = bank.clone();
    let pay = |amount: &str, to: &str| {
        vec![
            ("from", record("Account", "CHK")),
            ("to_iban", Value::str(to)),
            ("amount", Value::str(amount)),
            ("subject", Value::str("x")),
        ]
    };
    for (args, why) in [
        (pay("999999.00", "DE14500105170648210300"), "less than 999999.00"),
        (pay("0.00", "DE14500105170648210300"), "more than 0"),
        (pay("-5.00", "DE14500105170648210300"), "more than 0"),
        (pay("5.00", "nowhere"), "not an IBAN"),
    ] {
        let answer = call(&mut bank, "send_money", args).unwrap();
        assert_eq!(answer["Err"]["code"], "refused-by-bank", "{answer}");
        assert!(answer["Err"]["reason"].as_str().unwrap().contains(why), "{answer}");
    }
    let order = |id: &str| vec![("s", record("Scheduled", id))];
    assert!(
        call(&mut bank, "cancel_scheduled_transfer", order("S-9")).unwrap_err().contains("names no standing order")
    );
    assert!(call(&mut bank, "transactions", vec![("a", record("Account", "XYZ")), ("n", Value::Int(3))]).is_err());
    let short = call(&mut bank, "change_password", vec![("new", Value::str("hunter2"))]).unwrap();
    assert_eq!(short["Err"]["code"], "refused-by-bank");
    assert_eq!(bank, before, "nothing changed");
    // A cancelled standing order cannot be cancelled or changed again.
    call(&mut bank, "cancel_scheduled_transfer", order("S-5")).unwrap();
    assert!(call(&mut bank, "cancel_scheduled_transfer", order("S-5")).is_err());
    assert_eq!(bank.scheduled().count(), 4);
}

#[test]
fn the_password_is_in_no_tools_answer() {
    let mut bank = Bank::builtin().unwrap();
    let password = bank.data().profile.password.clone();
    let checking = || ("a", record("Account", "CHK"));
    let reads: Vec<(&str, Vec<(&str, Value)>)> = vec![
        ("today", vec![]),
        ("accounts", vec![]),
        ("transactions", vec![checking(), ("n", Value::Int(50))]),
        ("statements", vec![checking()]),
        ("scheduled_transfers", vec![]),
        ("payees", vec![]),
        ("inbox", vec![]),
        ("profile", vec![]),
    ];
    for (tool, args) in reads {
        let answer = call(&mut bank, tool, args).unwrap().to_string();
        assert!(!answer.contains(&password), "{tool} gave out the password: {answer}");
    }
    let profile = call(&mut bank, "profile", vec![]).unwrap();
    assert_eq!(profile["password"], Json::Null, "the boundary makes the handle; the host sends nothing");
    assert_eq!(profile["address"], "Kastanienallee 12, 10435 Berlin");
    // A new password is set, and logged without its value.
    let new = "Quiet-Harbour-Lamp-2026";
    assert_eq!(
        call(&mut bank, "change_password", vec![("new", Value::str(new))]).unwrap(),
        serde_json::json!({ "Ok": null })
    );
    assert_eq!(bank.data().profile.password, new);
    assert!(bank.data().changes.iter().all(|c| !c.contains(new)), "{:?}", bank.data().changes);
    assert!(!call(&mut bank, "profile", vec![]).unwrap().to_string().contains(new));
}

#[test]
fn standing_orders_are_set_up_changed_and_cancelled() {
    let mut bank = Bank::builtin().unwrap();
    let new = call(
        &mut bank,
        "schedule_transfer",
        vec![
            ("from", record("Account", "CHK")),
            ("to_name", Value::str("Leo Brandt")),
            ("to_iban", Value::str("DE19760100850938271600")),
            ("amount", Value::str("25.00")),
            ("subject", Value::str("Pocket money")),
            ("day", Value::Int(5)),
        ],
    )
    .unwrap();
    assert_eq!(new["Ok"]["id"], "S-6", "{new}");
    let changed = call(
        &mut bank,
        "update_scheduled_transfer",
        vec![
            ("s", record("Scheduled", "S-1")),
            ("to_iban", Value::str("DE89100208905500123400")),
            ("amount", Value::str("1290.00")),
            ("subject", Value::str("Rent, Flat 3B")),
        ],
    )
    .unwrap();
    assert_eq!(changed["Ok"]["amount"], "1290.00", "{changed}");
    assert!(bank.data().changes.iter().any(|c| c == "S-1: to DE89100208905500123400 1290.00 \"Rent, Flat 3B\""));
    let day = call(
        &mut bank,
        "schedule_transfer",
        vec![
            ("from", record("Account", "CHK")),
            ("to_name", Value::str("x")),
            ("to_iban", Value::str("DE19760100850938271600")),
            ("amount", Value::str("1.00")),
            ("subject", Value::str("x")),
            ("day", Value::Int(30)),
        ],
    )
    .unwrap();
    assert_eq!(day["Err"]["code"], "refused-by-bank", "{day}");
    assert!(bank.transfer("CHK", "CHK", Money(100)).is_err(), "one account to itself");
    bank.transfer("SAV", "CHK", Money(100)).unwrap();
    assert_eq!(balance(&bank, "CHK"), Money(447_220));
}
