//! No control sequence from data reaches the terminal: the binary is run on files, tool answers,
//! plans and a model's fills that hold terminal escapes (erase the line, move up, set the title,
//! OSC 52 to write the clipboard, a C1 CSI, a carriage return, bidi overrides, tag characters),
//! and everything it writes, stdout and stderr, is scanned. Cordon writes no control sequence
//! of its own, so none may appear: no ESC, BEL, CR or CSI byte, no control, format or other
//! hidden character, no combining mark on nothing. JSON output still parses, to the same text.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use cordon::api::text::{is_hidden, is_mark};

mod common;

/// Every escape an attacker reaches for, as raw characters.
const HOSTILE: &str = "\u{1b}[2K\u{1b}[1A\u{1b}]0;pwned\u{7}\u{1b}]52;c;c2VjcmV0\u{7}\r\u{9b}31m\u{202e}evil\u{2066}\u{e0041}\u{200b}\u{301}";

fn workdir(test: &str) -> PathBuf {
    common::workdir("cli-shown", test)
}

/// Panics, naming the command, if `text` holds anything a terminal would obey or hide.
fn assert_nothing_hidden(what: &str, text: &str) {
    for byte in [0x1b, 0x07, 0x0d] {
        assert!(!text.as_bytes().contains(&byte), "{what} wrote the byte {byte:#04x}:\n{text}");
    }
    let mut after_base = false;
    for c in text.chars() {
        let hidden = c != '\n' && (is_hidden(c) || c.is_control() || ('\u{80}'..='\u{9f}').contains(&c));
        assert!(!hidden, "{what} wrote U+{:04X} as it is:\n{text}", c as u32);
        assert!(!is_mark(c) || after_base, "{what} wrote the mark U+{:04X} on nothing:\n{text}", c as u32);
        after_base = !c.is_whitespace() && !is_mark(c);
    }
}

/// Runs `cordon args` in `dir` and checks all it wrote; the run.
fn run_clean(dir: &Path, args: &[&str]) -> common::Output {
    let run = common::cordon(dir, args);
    assert_nothing_hidden(&format!("`cordon {}` (stdout)", args.join(" ")), &run.stdout);
    assert_nothing_hidden(&format!("`cordon {}` (stderr)", args.join(" ")), &run.stderr);
    run
}

#[test]
fn files_and_their_names_with_escapes_are_shown_escaped_in_the_trace_result_and_audit() {
    let dir = workdir("files");
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(dir.join("notes/todo.txt"), format!("buy milk{HOSTILE}\nline two")).unwrap();
    std::fs::write(dir.join(format!("notes/name{}.txt", "\u{1b}[31m\u{202e}")), "x").unwrap();
    let plan = r#"match (fs.root("notes"), fs.root("out")) {
  (Some(notes), Some(out)) => {
    let todo = fs.read(notes, "todo.txt").unwrap_or("");
    let missing = match fs.read(notes, "gone\u{1b}]52;c;eA==\u{7}.txt") { Ok(t) => t, Err(e) => e.reason };
    let names = match fs.list(notes) { Ok(es) => es.map(|e| e.name), Err(_) => [] };
    if out.writable {
      match fs.write(out, "copy.txt", todo) { Ok(_) => todo + missing + names.join(", "), Err(e) => e.reason }
    } else { "read-only" }
  },
  _ => "grant notes and out",
}
"#;
    std::fs::write(dir.join("plan.cord"), plan).unwrap();
    // Every write asks: the person says yes.
    std::fs::write(dir.join("yes.txt"), "yes\n").unwrap();
    let args = ["run", "--dir", "notes=notes", "--dir", "out=out:rw", "--approve", "yes.txt", "plan.cord"];
    let run = run_clean(&dir, &args);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("\\u{1b}]52;c;c2VjcmV0\\u{7}"), "the clipboard write is shown: {}", run.stdout);
    assert!(run.stdout.contains("name\\u{1b}[31m\\u{202e}.txt"), "{}", run.stdout);
    // What was written is the file's exact text: only the showing is escaped.
    let copied = std::fs::read_to_string(dir.join("out/copy.txt")).unwrap();
    assert_eq!(copied, format!("buy milk{HOSTILE}\nline two"));

    let json = run_clean(
        &dir,
        &[
            "run",
            "--dir",
            "notes=notes",
            "--dir",
            "out=out:rw",
            "--approve",
            "yes.txt",
            "--format",
            "json",
            "plan.cord",
        ],
    );
    let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(value.to_string().contains("\\u001b]52;c;c2VjcmV0"), "the JSON keeps the text: {value}");

    let shown = run_clean(&dir, &["audit", "show"]);
    assert!(shown.stdout.contains("Fs.write(content: \"buy milk\\u001b[2K"), "{}", shown.stdout);
    let shown = run_clean(&dir, &["audit", "show", "--format", "json"]);
    serde_json::from_str::<serde_json::Value>(&shown.stdout).unwrap();
}

#[test]
fn a_destination_with_escapes_is_shown_escaped_in_the_trace_and_approvals_list() {
    let dir = workdir("grants");
    let plan = format!(
        "match shop.message_merchant(\"tea{}house\", \"hi{}\") {{ Ok(_) => \"sent\", Err(r) => r.code }}\n",
        r"\u{1b}]52;c;eA==\u{7}\u{202e}\u{2028}", r"\u{1b}[2K\r"
    );
    std::fs::write(dir.join("plan.cord"), plan).unwrap();
    let always = common::answers(&dir, "always\n");
    let run = run_clean(&dir, &["run", "--env", "shop", "--approve", &always, "plan.cord"]);
    assert!(run.stdout.contains("grant 1 made"), "{run:?}");
    assert!(run.stdout.contains("FAILED   `Shop.message_merchant` failed: there is no merchant"), "{run:?}");
    let listed = run_clean(&dir, &["approvals", "list"]);
    assert!(listed.stdout.contains("to tea\\u{1b}]52;c;eA==\\u{7}\\u{202e}\\u{2028}house"), "{}", listed.stdout);
}

#[test]
fn a_diagnostic_quoting_hostile_source_shows_it_escaped() {
    let dir = workdir("diagnostic");
    std::fs::write(dir.join("plan.cord"), format!("let s: Int = \"{HOSTILE}\";\ns\n")).unwrap();
    let run = run_clean(&dir, &["check", "plan.cord"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("\\u{1b}]52;c;c2VjcmV0\\u{7}\\u{d}\\u{9b}31m\\u{202e}"), "{}", run.stdout);
    run_clean(&dir, &["check", "--format", "json", "plan.cord"]);
    run_clean(&dir, &["check", "--format", "concise", "plan.cord"]);
}

#[test]
fn a_hostile_models_fills_are_shown_escaped_in_the_trace_diagnostics_and_audit() {
    let dir = workdir("model");
    // First a fill that does not check (its diagnostic quotes it), then one that does, both
    // with raw escapes in their text.
    let replies = serde_json::json!({ "replies": [
        { "text": format!("```cordon\nlet n: Int = \"{HOSTILE}\";\n(n, s)\n```") },
        { "text": format!("```cordon\n(\"done{HOSTILE}\", s)\n```") },
    ]});
    std::fs::write(dir.join("model.json"), replies.to_string()).unwrap();
    let model = format!("scripted:{}", dir.join("model.json").display());
    let run = run_clean(&dir, &["ask", &format!("say done{HOSTILE}"), "--model", &model]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("answer: done\\u{1b}[2K"), "{}", run.stdout);
    let shown = run_clean(&dir, &["audit", "show"]);
    assert!(
        shown.stdout.contains("| (\"done\\u{1b}[2K\\u{1b}[1A"),
        "the fill's code is shown escaped: {}",
        shown.stdout
    );
    assert!(shown.stdout.contains("text     say done\\u{1b}[2K"), "{}", shown.stdout);
}
