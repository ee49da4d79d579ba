//! `cordon` at a user's shell: the completion scripts and the man pages name every subcommand,
//! `--version` names the build, `--model-timeout` bounds how long a silent model server is
//! waited for, and a wait for the model shows, at a terminal, who is waited for and how long.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{cordon, workdir as dir_of};

/// A fresh directory for one test.
fn workdir(test: &str) -> std::path::PathBuf {
    dir_of("cli-terminal", test)
}

/// The subcommands `cordon --help` lists (without `help`, which the man pages leave out).
fn subcommands(dir: &std::path::Path) -> Vec<String> {
    let help = cordon(dir, &["--help"]).stdout;
    let listed = help.split("Commands:\n").nth(1).unwrap().split("\n\n").next().unwrap();
    let names: Vec<String> = listed
        .lines()
        .filter_map(|line| line.strip_prefix("  ")?.split_whitespace().next().map(str::to_string))
        .filter(|name| name != "help")
        .collect();
    for expected in ["check", "run", "ask", "chat", "audit", "serve", "completions", "man"] {
        assert!(names.iter().any(|name| name == expected), "{expected} in {names:?}");
    }
    names
}

#[test]
fn every_shell_has_a_completion_script_naming_every_subcommand() {
    let dir = workdir("completions");
    let names = subcommands(&dir);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = cordon(&dir, &["completions", shell]);
        assert_eq!(script.code, 0, "{script:?}");
        for name in &names {
            assert!(script.stdout.contains(name.as_str()), "{shell}: no {name}");
        }
    }
    let bash = cordon(&dir, &["completions", "bash"]).stdout;
    assert!(bash.contains("complete -F _cordon"), "{bash}");
    // Nested subcommands and flags are there too.
    assert!(bash.contains("verify") && bash.contains("--model-timeout"), "{bash}");
    let path = dir.join("cordon.bash");
    std::fs::write(&path, &bash).unwrap();
    // `bash -n` parses without running; a machine without bash skips this.
    if let Ok(status) = std::process::Command::new("bash").arg("-n").arg(&path).status() {
        assert!(status.success(), "bash -n rejected the script");
    }
    let unknown = cordon(&dir, &["completions", "tcsh"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
}

#[test]
fn the_man_page_is_roff_and_names_every_subcommand() {
    let dir = workdir("man");
    let names = subcommands(&dir);
    let man = cordon(&dir, &["man"]);
    assert_eq!(man.code, 0, "{man:?}");
    assert!(man.stdout.contains("\n.TH CORDON 1 "), "{}", man.stdout);
    assert!(man.stdout.contains(".SH SYNOPSIS"), "{}", man.stdout);
    for name in &names {
        // roff writes a hyphen as `\-`.
        assert!(man.stdout.contains(&format!("cordon\\-{name}(1)")), "no {name}: {}", man.stdout);
    }
    // With `--dir`: a page for `cordon` and one for each subcommand, nested ones too.
    let pages = dir.join("man1");
    let written = cordon(&dir, &["man", "--dir", pages.to_str().unwrap()]);
    assert_eq!(written.code, 0, "{written:?}");
    let mut expected: Vec<String> = names.iter().map(|name| format!("cordon-{name}")).collect();
    expected.extend(["cordon".to_string(), "cordon-audit-verify".to_string()]);
    for name in expected {
        let path = pages.join(format!("{name}.1"));
        assert!(written.stdout.contains(&format!("{}\n", path.display())), "{}", written.stdout);
        let page = std::fs::read_to_string(&path).unwrap();
        let title = format!("\n.TH {} 1 ", name.to_uppercase());
        assert!(page.contains(&title), "{name}: {page}");
    }
}

#[test]
fn the_version_names_the_crate_and_the_commit_when_there_is_one() {
    let dir = workdir("version");
    let version = cordon(&dir, &["--version"]);
    assert_eq!(version.code, 0, "{version:?}");
    let line = version.stdout.strip_suffix('\n').unwrap();
    let rest = line.strip_prefix(&format!("cordon {}", env!("CARGO_PKG_VERSION"))).unwrap();
    // Built from a checkout: ` (abc1234 2026-12-06)`; from a tarball: nothing more.
    if !rest.is_empty() {
        let inside = rest.strip_prefix(" (").and_then(|rest| rest.strip_suffix(')')).unwrap();
        let (hash, date) = inside.split_once(' ').unwrap();
        assert!(hash.len() >= 4 && hash.chars().all(|c| c.is_ascii_hexdigit()), "{line}");
        assert_eq!(date.len(), 10, "{line}");
        assert!(date.chars().all(|c| c.is_ascii_digit() || c == '-'), "{line}");
    }
}

/// A model server that takes connections and never answers: `--model-timeout 1` gives up after
/// a second, on `ask` and on `run`, saying that it timed out.
#[test]
fn a_silent_model_server_is_given_up_on_after_the_model_timeout() {
    let dir = workdir("model_timeout");
    let model = format!("openai:silent@{}", silent_model());
    let plan = dir.join("plan.cord");
    std::fs::write(&plan, "agent[(String, Session)](\"How long is the roadmap?\", s)\n").unwrap();
    let plan = plan.display().to_string();
    let commands: [&[&str]; 2] = [
        &["ask", "--env", "github", "--model", &model, "--model-timeout", "1", "How many open issues?"],
        &["run", "--model", &model, "--model-timeout", "1", &plan],
    ];
    for args in commands {
        let started = Instant::now();
        let output = cordon(&dir, args);
        let took = started.elapsed();
        assert_ne!(output.code, 0, "{output:?}");
        let said = format!("{}{}", output.stdout, output.stderr);
        assert!(said.contains("after 1.0s (timed out)"), "{args:?}: {said}");
        // One attempt per fill, each a second: well under the default of 300.
        assert!(took < Duration::from_secs(20), "{args:?} took {took:?}");
    }
}

/// A model server that takes connections and never answers: the address of its API.
fn silent_model() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    // Connections are held open, unanswered, until the test's process ends.
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().map_while(Result::ok).collect();
        drop(held);
    });
    url
}

/// At a terminal, the wait for a model is a line naming the model and the time so far, redrawn
/// as it grows; where standard error is no terminal, nothing of it is written.
#[test]
fn a_wait_for_the_model_shows_the_time_so_far_at_a_terminal_only() {
    let dir = workdir("model_wait");
    let model = format!("openai:slow@{}", silent_model());
    let store = dir.join("cordon.db");
    let flags = ["ask", "--env", "github", "--model", &model, "--model-timeout", "3", "--store"];
    let mut args: Vec<&std::ffi::OsStr> = flags.iter().map(std::ffi::OsStr::new).collect();
    args.extend([store.as_os_str(), std::ffi::OsStr::new("How many open issues?")]);
    let steps = serde_json::json!([["expect", "waiting for openai:slow: 1s"], ["expect", "2s"]]);
    let (shown, code) = common::at_a_terminal(&steps, &args);
    assert!(!shown.contains("[pty_drive:"), "{shown}");
    assert_ne!(code, Some(0), "the model never answered:\n{shown}");
    assert!(shown.contains("(timed out)"), "{shown}");

    let output =
        cordon(&dir, &["ask", "--env", "github", "--model", &model, "--model-timeout", "3", "How many open issues?"]);
    assert_ne!(output.code, 0, "{output:?}");
    assert!(output.stderr.contains("(timed out)"), "{output:?}");
    assert!(!output.stderr.contains("waiting for"), "no terminal, no line: {output:?}");
}

/// The escapes `cordon` paints with; any other escape in its output came from data.
const OWN_ESCAPES: [&str; 6] = ["\u{1b}[0m", "\u{1b}[1m", "\u{1b}[1;31m", "\u{1b}[1;33m", "\u{1b}[32m", "\u{1b}[1;34m"];

fn without_own_escapes(shown: &str) -> String {
    OWN_ESCAPES.iter().fold(shown.to_string(), |text, escape| text.replace(escape, ""))
}

#[test]
fn a_check_at_a_terminal_is_in_colour_unless_told_otherwise_and_data_paints_nothing() {
    let dir = workdir("colour");
    // An escape sequence and a bidi override in the plan's own text, on the line the error is
    // shown on: they must reach the terminal as visible escapes, not as colour.
    let plan = dir.join("plan.cord");
    std::fs::write(&plan, "let x = \"\u{1b}[32mfine\u{202e}\" + 1;\nx\n").unwrap();
    let args = [std::ffi::OsStr::new("check"), plan.as_os_str()];
    let steps = serde_json::json!([["expect", "rejected"]]);

    let (shown, code) = common::at_a_terminal_with(&steps, &args, &[]);
    assert_eq!(code, Some(1), "{shown}");
    assert!(shown.contains("\u{1b}[1;31merror[type-mismatch]\u{1b}[0m"), "{shown:?}");
    assert!(shown.contains("\u{1b}[1;34m-->\u{1b}[0m"), "{shown:?}");
    assert!(shown.contains(": \u{1b}[1;31mrejected: 1 error\u{1b}[0m"), "{shown:?}");
    let rest = without_own_escapes(&shown);
    assert!(!rest.contains('\u{1b}') && !rest.contains('\u{202e}'), "{rest:?}");
    assert!(rest.contains("\\u{1b}[32mfine\\u{202e}"), "{rest:?}");

    for (env, flags) in
        [(&[("NO_COLOR", "1")][..], &[][..]), (&[("TERM", "dumb")][..], &[][..]), (&[][..], &["--color", "never"][..])]
    {
        let args: Vec<&std::ffi::OsStr> = args.iter().copied().chain(flags.iter().map(std::ffi::OsStr::new)).collect();
        let (plain, code) = common::at_a_terminal_with(&steps, &args, env);
        assert_eq!(code, Some(1));
        assert!(!plain.contains('\u{1b}') && plain.contains("error[type-mismatch]"), "{env:?} {flags:?}: {plain:?}");
    }

    // Piped: no colour, unless asked for.
    let piped = cordon(&dir, &["check", "plan.cord"]);
    assert!(!piped.stdout.contains('\u{1b}') && piped.stdout.contains("error[type-mismatch]"), "{piped:?}");
    let asked = cordon(&dir, &["check", "plan.cord", "--color", "always"]);
    assert!(asked.stdout.contains("\u{1b}[1;31merror[type-mismatch]"), "{asked:?}");
}
