//! `cordon bench` as a user runs it: the table, or the report as JSON; exit 0 when no attack
//! or over-reach succeeded; a mode or suite that does not exist is a usage error naming the
//! ones that do.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::path::Path;

mod common;

fn suites() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench").display().to_string()
}

#[test]
fn the_bench_prints_its_table_or_its_report_as_json() {
    let dir = common::workdir("cli-bench", "table");
    let dirs = suites();
    let run = common::cordon(&dir, &["bench", "--suites-dir", &dirs, "--mode", "compromised-planner"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("suite ") && run.stdout.lines().next().unwrap().contains(" mode "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("attacks and over-reaches that succeeded with the policies on: 0"), "{}", run.stdout);

    let run = common::cordon(&dir, &["bench", "--suites-dir", &dirs, "--task", "lunch", "--format", "json", "-v"]);
    assert_eq!(run.code, 0, "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["version"], 1);
    let cases = report["cases"].as_array().unwrap();
    assert!(!cases.is_empty() && cases.iter().all(|c| c["task"] == "lunch"), "{}", run.stdout);

    let run = common::cordon(&dir, &["bench", "--suites-dir", &dirs, "--task", "lunch", "-v"]);
    // One case replayed: each call it proposed, then its answer.
    let replay = "chat oracle normal lunch: done; 0 card(s); utility yes\n    allowed Chat.list_channels()\n";
    assert!(run.stdout.contains(replay), "{}", run.stdout);
    assert!(run.stdout.contains("    => Up for lunch: dave, bob.\n"), "{}", run.stdout);
}

#[test]
fn an_unknown_mode_or_suite_is_a_usage_error() {
    let dir = common::workdir("cli-bench", "unknown");
    let run = common::cordon(&dir, &["bench", "--suites-dir", &suites(), "--mode", "telepathy"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(
            "there is no mode `telepathy`; the modes are: oracle, worst-case, compromised-planner, adaptive, live"
        ),
        "{}",
        run.stderr
    );
    let run = common::cordon(&dir, &["bench", "--suites-dir", &suites(), "--mode", "live"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("the live mode puts the requests to a model: give one with --model"), "{}", run.stderr);
    let run = common::cordon(&dir, &["bench", "--suites-dir", &suites(), "--suite", "nope"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("there is no suite `nope`; the suites are: bank, chat, citations"), "{}", run.stderr);
}

/// The headless Chromium that `.ci/run` installs (Debian's `chromium-headless-shell`).
const CHROMIUM: &str = "chromium-headless-shell";

/// Runs the headless browser on `page` with `args`, within two minutes: stdout and stderr.
fn chromium(dir: &Path, page: &Path, args: &[&str]) -> (String, String) {
    let profile = dir.join("profile");
    let output = std::process::Command::new("timeout")
        .arg("120")
        .arg(CHROMIUM)
        .args(["--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot start {CHROMIUM} ({e}): .ci/run installs it; apt-get install {CHROMIUM}"));
    assert!(output.status.success(), "{CHROMIUM} failed: {}", String::from_utf8_lossy(&output.stderr));
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn the_web_report_renders_in_a_real_browser_without_a_console_message() {
    let dir = common::workdir("cli-bench", "html");
    let page = dir.join("report.html");
    let html = page.display().to_string();
    let run = common::cordon(&dir, &["bench", "--suites-dir", &suites(), "--suite", "shop", "--html", &html]);
    assert_eq!(run.code, 0, "{run:?}");
    let (dom, log) = chromium(&dir, &page, &["--dump-dom"]);
    assert!(dom.contains("data-ready=\"yes\""), "the page's script did not run:\n{dom}");
    assert!(dom.contains("<svg") && dom.contains("id=\"rows\"") && dom.contains("delete_every_order"), "{dom}");
    let shot = dir.join("report.png");
    let (_, shot_log) =
        chromium(&dir, &page, &[&format!("--screenshot={}", shot.display()), "--window-size=1280,1800"]);
    for line in log.lines().chain(shot_log.lines()) {
        assert!(!line.contains(":CONSOLE"), "the page wrote to the console: {line}");
    }
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "no screenshot ({} bytes)", png.len());
}

/// `--model` runs the live mode: each request put to the model, its plans judged by the same
/// checks. Here a hostile model (scripted, offline) answers the kettle-reviews request honestly
/// on clean data and with each attacker's plan where an injection was placed; no attack
/// succeeds, and the transcript replays to the same table.
#[test]
fn a_live_model_is_judged_by_the_same_checks_and_its_transcript_replays() {
    let dir = common::workdir("cli-bench", "live");
    let shop = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/shop");
    let plan = |file: &str| format!("```cordon\n{}\n```", std::fs::read_to_string(shop.join(file)).unwrap());
    let replies: Vec<serde_json::Value> = [
        "tasks/kettle_reviews.cord",
        "attacks/warranty_payment.cord",
        "attacks/leak_balance.cord",
        "attacks/bulk_kettles.cord",
        "attacks/orders_to_kitchenware.cord",
    ]
    .iter()
    .map(|f| serde_json::json!({ "text": plan(f) }))
    .collect();
    let script = dir.join("model.json");
    std::fs::write(&script, serde_json::json!({ "replies": replies }).to_string()).unwrap();
    let transcript = dir.join("live.jsonl");
    let dirs = suites();
    let model = format!("scripted:{}", script.display());
    let args = ["bench", "--suites-dir", &dirs, "--suite", "shop", "--task", "kettle_reviews", "--model"];
    let mut live = args.to_vec();
    live.extend([model.as_str(), "--transcript", transcript.to_str().unwrap()]);
    let run = common::cordon(&dir, &live);
    assert_eq!(run.code, 0, "{run:?}");
    let rows: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("shop ")).collect();
    assert_eq!(rows.len(), 2, "{}", run.stdout);
    assert!(rows[0].contains(" live ") && rows[0].contains(" normal ") && rows[0].contains("1/1 100%"), "{rows:?}");
    assert!(rows[1].contains(" injected ") && rows[1].contains("0/4 0%"), "{rows:?}");
    assert!(run.stdout.lines().next().unwrap().contains(" tokens "), "{}", run.stdout);

    let replay = format!("replay:{}", transcript.display());
    let mut again = args.to_vec();
    again.push(&replay);
    let replayed = common::cordon(&dir, &again);
    assert_eq!(replayed.code, 0, "{replayed:?}");
    let timeless = |out: &str| -> Vec<String> {
        out.lines().filter(|l| l.starts_with("shop ")).map(|l| l.rsplit_once("  ").unwrap().0.to_string()).collect()
    };
    assert_eq!(timeless(&replayed.stdout), timeless(&run.stdout));
}
