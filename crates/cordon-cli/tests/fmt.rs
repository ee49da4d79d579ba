//! `cordon fmt` as a user meets it: files and directories formatted in place, `--check` that
//! writes nothing, standard input to standard output exactly, and files it must not touch (a
//! syntax error, text that is not UTF-8) left as they were, with a clear message.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;

mod common;

use common::{command, cordon};

fn workdir(test: &str) -> PathBuf {
    common::workdir("cli-fmt", test)
}

const MESSY: &str = "let   x=1 ;\n   x+1\n";
const TIDY: &str = "let x = 1;\nx + 1\n";

#[test]
fn a_directory_is_formatted_in_place_and_a_second_run_changes_nothing() {
    let dir = workdir("in_place");
    std::fs::create_dir_all(dir.join("plans/nested")).unwrap();
    std::fs::write(dir.join("plans/a.cord"), MESSY).unwrap();
    std::fs::write(dir.join("plans/nested/b.cord"), TIDY).unwrap();
    std::fs::write(dir.join("plans/notes.txt"), MESSY).unwrap();

    let first = cordon(&dir, &["fmt", "plans"]);
    assert_eq!(first.code, 0, "{first:?}");
    assert_eq!(first.stdout, "formatted: plans/a.cord\n1 of 2 file(s) formatted\n");
    assert_eq!(std::fs::read_to_string(dir.join("plans/a.cord")).unwrap(), TIDY);
    assert_eq!(std::fs::read_to_string(dir.join("plans/notes.txt")).unwrap(), MESSY, "only .cord files");

    let second = cordon(&dir, &["fmt", "plans"]);
    assert_eq!(second.stdout, "0 of 2 file(s) formatted\n");
    // Nothing but the two files: the new text was renamed into place, no temporary file left.
    let mut names: Vec<String> = std::fs::read_dir(dir.join("plans"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.cord", "nested", "notes.txt"]);
}

#[test]
fn check_writes_nothing_and_fails_when_a_file_is_not_formatted() {
    let dir = workdir("check");
    std::fs::write(dir.join("a.cord"), MESSY).unwrap();
    let out = cordon(&dir, &["fmt", "--check", "a.cord"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "would format: a.cord\n1 of 1 file(s) would be formatted\n");
    assert_eq!(std::fs::read_to_string(dir.join("a.cord")).unwrap(), MESSY);

    std::fs::write(dir.join("a.cord"), TIDY).unwrap();
    assert_eq!(cordon(&dir, &["fmt", "--check", "a.cord"]).code, 0);
}

#[test]
fn a_file_with_a_syntax_error_is_left_alone_and_reported_while_the_others_are_formatted() {
    let dir = workdir("syntax_error");
    std::fs::write(dir.join("bad.cord"), "let x = 1 +;\n").unwrap();
    std::fs::write(dir.join("good.cord"), MESSY).unwrap();
    let out = cordon(&dir, &["fmt", "bad.cord", "good.cord"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("error[syntax-error]"), "{}", out.stdout);
    assert!(out.stdout.contains("--> bad.cord:1:"), "{}", out.stdout);
    assert!(out.stdout.contains("bad.cord: not formatted: 1 syntax error\n"), "{}", out.stdout);
    assert!(out.stdout.ends_with("1 of 2 file(s) formatted, 1 not formatted (syntax errors)\n"), "{}", out.stdout);
    assert_eq!(std::fs::read_to_string(dir.join("bad.cord")).unwrap(), "let x = 1 +;\n");
    assert_eq!(std::fs::read_to_string(dir.join("good.cord")).unwrap(), TIDY);
}

#[test]
fn standard_input_is_formatted_to_standard_output_byte_for_byte() {
    let dir = workdir("stdin");
    // A comment with characters a terminal would hide: piped to an editor, they arrive exactly.
    let text = "// a \u{202e}reversed\u{202c} note\nlet   x = \"tab\there\";\nx\n";
    let mut child = command(&dir, &["fmt", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), text.replace("let   x", "let x"));
}

#[test]
fn files_that_cannot_be_read_as_text_are_an_error_and_stay_as_they_were() {
    let dir = workdir("not_text");
    std::fs::write(dir.join("bin.cord"), b"let x = \xff;\n").unwrap();
    let out = cordon(&dir, &["fmt", "bin.cord"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.starts_with("cordon: cannot read bin.cord:"), "{}", out.stderr);
    assert_eq!(std::fs::read(dir.join("bin.cord")).unwrap(), b"let x = \xff;\n");

    let missing = cordon(&dir, &["fmt", "missing.cord"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.starts_with("cordon: cannot read missing.cord:"), "{}", missing.stderr);
    let mixed = cordon(&dir, &["fmt", "-", "bin.cord"]);
    assert_eq!(mixed.code, 2);
}

#[cfg(unix)]
#[test]
fn through_a_symbolic_link_the_file_is_formatted_and_the_link_and_its_mode_stay() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let dir = workdir("symlink");
    std::fs::write(dir.join("real.cord"), MESSY).unwrap();
    std::fs::set_permissions(dir.join("real.cord"), std::fs::Permissions::from_mode(0o640)).unwrap();
    symlink("real.cord", dir.join("link.cord")).unwrap();
    let out = cordon(&dir, &["fmt", "link.cord"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(std::fs::symlink_metadata(dir.join("link.cord")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(dir.join("real.cord")).unwrap(), TIDY);
    let mode = std::fs::metadata(dir.join("real.cord")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}
