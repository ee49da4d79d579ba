//! End-to-end tests of the `cordon` binary on small files in a temporary directory: exit codes,
//! stdout and stderr. The tests in the second half need the type checker
//! (`cordon_types::check`) and fail until it lands.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;

/// What one run of `cordon` did.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `cordon args` in a fresh directory named after the test that holds `files`, so the
/// paths in arguments and diagnostics are short and relative.
fn cordon(test: &str, files: &[(&str, &str)], args: &[&str]) -> Run {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    // The store, should a command open one, is the test's (never the user's).
    let output = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(args)
        .current_dir(&dir)
        .env("CORDON_STORE", dir.join("cordon.db"))
        .output()
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

// Host-side failures: these do not reach the checker.

#[test]
fn missing_plan_exits_2() {
    let run = cordon("missing_plan", &[], &["check", "nope.cord"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("cannot read `nope.cord`"), "{run:?}");
    assert_eq!(run.stdout, "");
}

#[test]
fn missing_policy_exits_2() {
    let run = cordon("missing_policy", &[("plan.cord", "1\n")], &["check", "--policy", "nope.cord", "plan.cord"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("cannot read `nope.cord`"), "{run:?}");
}

/// A plan checked with no policy: the names it uses that nothing declares are said once, with
/// why, not one error each; its other errors stay.
#[test]
fn a_plan_checked_with_no_policy_is_told_it_needs_one() {
    let plan = "let r = gh.list_repos();\nlet t = fs.root(\"notes\");\nlet x: Int = \"a\";\n(to_string(len(r)), s)\n";
    let run = cordon("no_policy", &[("plan.cord", plan)], &["check", "plan.cord"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("`gh`, `fs`, `s` are not defined: no policy was given"), "{}", run.stdout);
    assert!(run.stdout.contains("--policy FILE"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("error[undefined-name]").count(), 1, "{}", run.stdout);
    assert!(run.stdout.contains("error[type-mismatch]"), "the plan's own errors stay: {}", run.stdout);
}

#[test]
fn non_utf8_plan_exits_2() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli").join("non_utf8");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("plan.cord"), [0xff, 0xfe, b'\n']).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["check", "plan.cord"])
        .current_dir(&dir)
        .env("CORDON_STORE", dir.join("cordon.db"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

#[test]
fn bad_flag_exits_2() {
    let run = cordon("bad_flag", &[("plan.cord", "1\n")], &["check", "--frobnicate", "plan.cord"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("--frobnicate"), "{run:?}");
}

#[test]
fn bad_format_exits_2() {
    let run = cordon("bad_format", &[("plan.cord", "1\n")], &["check", "--format", "xml", "plan.cord"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn bad_timeout_exits_2() {
    let run = cordon("bad_timeout", &[("plan.cord", "1\n")], &["check", "--solver-timeout-ms", "-5", "plan.cord"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn a_check_out_of_time_is_rejected_saying_where_the_time_went() {
    let plan = "let a = 1;\nlet b = a + 1;\nb\n";
    let run = cordon("check_timeout", &[("plan.cord", plan)], &["check", "--check-timeout-ms", "0", "plan.cord"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("error[check-timeout]"), "{run:?}");
    assert!(run.stdout.contains("time went:"), "{run:?}");
    let run = cordon("check_in_time", &[("plan.cord", plan)], &["check", "--check-timeout-ms", "20000", "plan.cord"]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn nothing_to_check_exits_2() {
    let run = cordon("nothing_to_check", &[], &["check"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn no_subcommand_exits_2() {
    let run = cordon("no_subcommand", &[], &[]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn version() {
    let run = cordon("version", &[], &["--version"]);
    assert_eq!(run.code, 0, "{run:?}");
    // Then the commit, when built from a checkout (tests/terminal.rs).
    assert!(run.stdout.starts_with(&format!("cordon {}", env!("CARGO_PKG_VERSION"))), "{run:?}");
}

#[test]
fn help_lists_the_options() {
    let run = cordon("help", &[], &["check", "--help"]);
    assert_eq!(run.code, 0, "{run:?}");
    for option in ["--policy", "--format", "--solver-timeout-ms", "--check-timeout-ms", "[PLAN]"] {
        assert!(run.stdout.contains(option), "{option} missing from\n{}", run.stdout);
    }
}

// These need the type checker.

const POLICY: &str = "\
linear type Session
capability Notes {
  tool note(s: Session, text: {t: String | t != \"\"}) -> Session
}
entry(n: Notes, s: Session) -> Session
";

#[test]
fn accepted_plan_exits_0() {
    let run = cordon("accepted_plan", &[("plan.cord", "let x = 1;\nx + 1\n")], &["check", "plan.cord"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "plan.cord: accepted\n");
}

#[test]
fn accepted_plan_with_policy_exits_0() {
    let files = [("notes.cord", POLICY), ("plan.cord", "n.note(s, \"hello\")\n")];
    let run = cordon("accepted_plan_with_policy", &files, &["check", "--policy", "notes.cord", "plan.cord"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.ends_with("plan.cord: accepted\n"), "{run:?}");
}

#[test]
fn policy_alone_is_checked() {
    let run = cordon("policy_alone", &[("notes.cord", POLICY)], &["check", "--policy", "notes.cord"]);
    assert_eq!(run.code, 0, "{run:?}");
    // A policy checked alone is linted: each default label it relies on is named.
    assert!(run.stdout.ends_with("notes.cord: accepted with 3 warnings\n"), "{run:?}");
    for default in ["the parameter `s` of `Notes.note` has no sink", "the parameter `text`", "no `returns` label"] {
        assert!(run.stdout.contains(default), "{default}: {run:?}");
    }
}

#[test]
fn a_policy_that_labels_everything_lints_clean() {
    let labels = "@label(s = endorsed(user()), text = endorsed(user()), returns = public())";
    let policy = POLICY.replace("-> Session\n}", &format!("-> Session {labels}\n}}"));
    let run = cordon("policy_labelled", &[("notes.cord", &policy)], &["check", "--policy", "notes.cord"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "notes.cord: accepted\n");
}

#[test]
fn the_shipped_policies_lint_clean() {
    // Every policy in `policies/`, not a list that a new one could miss.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies");
    let mut policies: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".cord"))
        .collect();
    policies.sort();
    assert!(policies.len() >= 8, "{policies:?}");
    for policy in &policies {
        let text = std::fs::read_to_string(dir.join(policy)).unwrap();
        let run = cordon("shipped_policy", &[(policy, &text)], &["check", "--policy", policy]);
        // Nothing but the releases it declares, and that it is accepted.
        let said: Vec<&str> = run.stdout.lines().filter(|l| !l.starts_with("release: ")).collect();
        assert_eq!(said, [format!("{policy}: accepted")], "{run:?}");
    }
}

#[test]
fn syntax_error_human() {
    let run = cordon("syntax_error_human", &[("plan.cord", "let x = 1 +;\nx\n")], &["check", "plan.cord"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.starts_with("error[syntax-error]: "), "{run:?}");
    assert!(run.stdout.contains(" --> plan.cord:1:"), "{run:?}");
    assert!(run.stdout.contains("\nplan.cord: rejected: "), "{run:?}");
}

#[test]
fn syntax_error_concise() {
    let args = ["check", "--format", "concise", "plan.cord"];
    let run = cordon("syntax_error_concise", &[("plan.cord", "let x = 1 +;\nx\n")], &args);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.starts_with("plan.cord:1:"), "{run:?}");
    assert!(run.stdout.contains(": error[syntax-error]: "), "{run:?}");
}

#[test]
fn syntax_error_json() {
    let args = ["check", "--format", "json", "plan.cord"];
    let run = cordon("syntax_error_json", &[("plan.cord", "let x = 1 +;\nx\n")], &args);
    assert_eq!(run.code, 1, "{run:?}");
    let value: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(value["version"], 1);
    let first = &value["diagnostics"][0];
    assert_eq!(first["code"], "syntax-error");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["file"], "plan.cord");
    assert_eq!(first["line"], 1);
}

#[test]
fn json_output_of_an_accepted_plan_has_version_1() {
    let args = ["check", "--format", "json", "plan.cord"];
    let run = cordon("json_accepted", &[("plan.cord", "1 + 1\n")], &args);
    assert_eq!(run.code, 0, "{run:?}");
    let value: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(value, serde_json::json!({ "version": 1, "diagnostics": [] }));
}

#[test]
fn type_error_exits_1() {
    let run = cordon("type_error", &[("plan.cord", "let x: Int = \"a\";\nx\n")], &["check", "plan.cord"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("error[type-mismatch]"), "{run:?}");
    assert!(run.stdout.ends_with("plan.cord: rejected: 1 error\n"), "{run:?}");
}

#[test]
fn refinement_error_points_into_the_policy() {
    let files = [("notes.cord", POLICY), ("plan.cord", "n.note(s, \"\")\n")];
    let args = ["check", "--policy", "notes.cord", "--format", "json", "plan.cord"];
    let run = cordon("refinement_error", &files, &args);
    assert_eq!(run.code, 1, "{run:?}");
    let value: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let first = &value["diagnostics"][0];
    assert_eq!(first["code"], "refinement-unproven");
    assert_eq!(first["file"], "plan.cord");
}
