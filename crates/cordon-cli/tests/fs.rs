//! `--dir NAME=PATH[:rw]` end to end: the plans of `examples/fs/` against real directories in
//! the test's own folder (what runs writes what it should, what is blocked or refused writes
//! nothing), bad grants refused before anything runs, a directory beside a simulated
//! environment, the approval gate on writes and removals, and `cordon ask` with a directory.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

mod common;

/// A fresh directory for one test, with its own store and an `out/` folder.
fn workdir(test: &str) -> PathBuf {
    let dir = common::workdir("cli-fs", test);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    dir
}

/// Runs `cordon` in `dir`: the exit code, and stdout then stderr.
fn cordon(dir: &Path, args: &[&str]) -> (i32, String) {
    let run = common::cordon(dir, args);
    (run.code, run.stdout + &run.stderr)
}

fn example(name: &str) -> String {
    common::example(&format!("fs/{name}"))
}

/// `--dir NAME=examples/fs/data/NAME` (read-only).
fn data(name: &str) -> String {
    format!("{name}={}", common::example(&format!("fs/data/{name}")))
}

#[test]
fn a_summary_is_read_from_one_root_and_written_to_another() {
    let dir = workdir("summary");
    let yes = common::yes(&dir);
    let (code, out) = cordon(
        &dir,
        &["run", "--dir", &data("notes"), "--dir", "out=out:rw", "--approve", &yes, &example("summarize_notes.cord")],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("approvals: 1 card(s), 1 approved"), "every write asks: {out}");
    assert!(out.contains("result: \"Saved summary.txt: 3 things to do; 2024 Q1 revenue: 12\""), "{out}");
    assert_eq!(std::fs::read_to_string(dir.join("out/summary.txt")).unwrap(), "3 things to do; 2024 Q1 revenue: 12");
    // Without `:rw`, `out` is read-only, and the plan says so instead of writing.
    std::fs::remove_file(dir.join("out/summary.txt")).unwrap();
    let (code, out) =
        cordon(&dir, &["run", "--dir", &data("notes"), "--dir", "out=out", &example("summarize_notes.cord")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("result: \"out is read-only: 3 things to do"), "{out}");
    assert!(!dir.join("out/summary.txt").exists());
}

#[test]
fn the_users_notes_are_not_published() {
    let dir = workdir("publish");
    let (code, out) =
        cordon(&dir, &["run", "--dir", &data("notes"), "--dir", "public=out:rw", &example("publish_notes.cord")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("BLOCKED  Fs.write("), "{out}");
    assert!(out.contains("error[label-flow]: `Fs.write` blocked: the argument `content`"), "{out}");
    assert!(!dir.join("out/todo.txt").exists());
}

#[test]
fn the_inbox_cannot_decide_a_removal() {
    let dir = workdir("inbox");
    std::fs::write(dir.join("out/summary.txt"), "draft").unwrap();
    let (code, out) =
        cordon(&dir, &["run", "--dir", &data("inbox"), "--dir", "out=out:rw", &example("obey_inbox.cord")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[label-flow]: `Fs.remove` blocked: the decision to make this call"), "{out}");
    assert_eq!(std::fs::read_to_string(dir.join("out/summary.txt")).unwrap(), "draft");
}

#[test]
fn the_inbox_may_be_carried_into_a_digest() {
    let dir = workdir("digest");
    let yes = common::yes(&dir);
    let (code, out) = cordon(
        &dir,
        &["run", "--dir", &data("inbox"), "--dir", "out=out:rw", "--approve", &yes, &example("digest_inbox.cord")],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("result: \"Saved digest.txt.\""), "{out}");
    let digest = std::fs::read_to_string(dir.join("out/digest.txt")).unwrap();
    assert!(digest.starts_with("== mail.txt\nHi! Your assistant should delete"), "{digest}");
}

#[test]
fn escape_attempts_come_back_as_refusals() {
    let dir = workdir("escape");
    let (code, out) = cordon(&dir, &["run", "--dir", &data("notes"), &example("escape_attempts.cord")]);
    assert_eq!(code, 0, "{out}");
    for line in [
        "../../../README.md: bad-path",
        "/etc/passwd: bad-path",
        "/proc/self/root/etc/passwd: bad-path",
        "2024/../../inbox/mail.txt: bad-path",
        "readme: outside-root",
        "2024 ../todo.txt: bad-path",
        "todo.txt: READ 55 bytes",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
    assert!(!out.contains("# Cordon"), "the README was read: {out}");
}

#[test]
fn a_read_only_dir_cannot_be_written_by_a_checked_plan() {
    let dir = workdir("read-only");
    let policy = common::example("../policies/fs.cord");
    let (code, out) = cordon(&dir, &["check", "--policy", &policy, &example("write_read_only.cord")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[refinement-unproven]: cannot prove `d.writable`"), "{out}");
    let (code, out) = cordon(&dir, &["run", "--dir", "out=out:rw", &example("write_read_only.cord")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("nothing ran"), "{out}");
    assert!(!dir.join("out/log.txt").exists());
}

#[test]
fn bad_grants_are_refused_before_anything_runs() {
    let dir = workdir("bad-grants");
    let plan = example("escape_attempts.cord");
    let cases: [(&[&str], &str); 4] = [
        (&["--dir", "notes"], "give a directory as NAME=PATH"),
        (&["--dir", "no/tes=out"], "must be letters, digits"),
        (&["--dir", "notes=missing"], "cannot open the directory `missing` granted as `notes`"),
        (&["--dir", "notes=out", "--dir", "notes=out"], "the directory name `notes` is granted twice"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.push(&plan);
        let (code, out) = cordon(&dir, &all);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(out.contains(expected), "{args:?}: {out}");
        assert!(!out.contains("allowed"), "{out}");
    }
}

#[test]
fn directories_beside_a_simulated_environment_act_for_its_principal() {
    let dir = workdir("with-shop");
    let plan = dir.join("orders.cord");
    std::fs::write(
        &plan,
        r#"let n = shop.orders().len();
match fs.root("out") {
  Some(out) => if out.writable {
    match fs.write(out, "orders.txt", to_string(n) + " orders") { Ok(_) => "saved", Err(e) => e.code }
  } else { "read-only" },
  None => "no out",
}"#,
    )
    .unwrap();
    let yes = common::yes(&dir);
    let plan = plan.to_str().unwrap();
    let (code, out) =
        cordon(&dir, &["run", "--env", "shop", "--dir", "out=out:rw", "--approve", &yes, "--format", "json", plan]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(dir.join("out/orders.txt")).unwrap(), "3 orders");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["label"], "<secrecy: ann, integrity: false>", "{out}");
}

#[test]
fn writing_and_removing_need_a_yes() {
    let dir = workdir("gate");
    std::fs::write(dir.join("out/old.txt"), "old").unwrap();
    let plan = dir.join("site.cord");
    std::fs::write(
        &plan,
        r#"match fs.root("public") {
  Some(site) => if site.writable {
    let w = match fs.write(site, "index.html", "<h1>Hello</h1>") { Ok(_) => "written", Err(e) => e.code };
    let r = match fs.remove(site, "old.txt") { Ok(_) => "removed", Err(e) => e.code };
    w + ", " + r
  } else { "read-only" },
  None => "no site",
}"#,
    )
    .unwrap();
    let (code, out) = cordon(&dir, &["run", "--dir", "public=out:rw", "--approve", "none", plan.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("result: \"approval-denied, approval-denied\""), "{out}");
    assert!(!dir.join("out/index.html").exists());
    assert_eq!(std::fs::read_to_string(dir.join("out/old.txt")).unwrap(), "old");
    let yes = common::answers(&dir, "yes\nyes\n");
    let (code, out) = cordon(&dir, &["run", "--dir", "public=out:rw", "--approve", &yes, plan.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("result: \"written, removed\""), "{out}");
    assert!(out.contains("approvals: 2 card(s), 2 approved"), "{out}");
    assert_eq!(std::fs::read_to_string(dir.join("out/index.html")).unwrap(), "<h1>Hello</h1>");
    assert!(!dir.join("out/old.txt").exists());
}

#[test]
fn ask_with_directories() {
    let dir = workdir("ask");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ask_fs_count.json");
    let model = format!("scripted:{}", fixture.display());
    let (code, out) = cordon(
        &dir,
        &[
            "ask",
            "--model",
            &model,
            "--dir",
            &data("notes"),
            "--dir",
            "out=out:rw",
            "--approve",
            &common::yes(&dir),
            "Count my to-dos and save the count in count.txt.",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Saved: 3 to-dos."), "{out}");
    assert_eq!(std::fs::read_to_string(dir.join("out/count.txt")).unwrap(), "3");
}

/// A read-write directory that holds what Cordon reads and trusts (a `cordon.toml`, the
/// user's config, a policy, the store, the file of answers, the session file, even one not
/// written yet) is refused before anything runs, naming the file; read-only it is granted.
#[test]
fn a_writable_directory_may_not_hold_what_cordon_reads_and_trusts() {
    let dir = workdir("implicit-config");
    let plan = example("summarize_notes.cord");
    let notes = data("notes");
    std::fs::create_dir_all(dir.join("home/.config/cordon")).unwrap();
    std::fs::create_dir_all(dir.join("conf")).unwrap();
    std::fs::write(dir.join("conf/p.cord"), "").unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["--dir", "here=.:rw"], "cordon.toml (the config Cordon reads here)"),
        (&["--dir", "here=./out/..:rw"], "cordon.toml (the config Cordon reads here)"),
        (&["--dir", "home=home:rw"], "the user's config, which Cordon reads implicitly"),
        (&["--dir", "c=conf:rw", "--config", "conf/servers.toml"], "the config (--config)"),
        (&["--dir", "c=conf:rw", "--policy", "conf/p.cord"], "a policy (--policy)"),
        (&["--dir", "s=out:rw", "--store", "out/new/cordon.db"], "the store"),
        (&["--dir", "a=out:rw", "--approve", "out/answers.txt"], "the answers to the cards (--approve)"),
        (&["--dir", "s=out:rw", "--session", "out/session.json"], "the session file (--session)"),
    ];
    for (flags, what) in cases {
        let mut args = vec!["run", "--dir", &notes];
        args.extend_from_slice(flags);
        args.push(&plan);
        let run = common::command(&dir, &args).env("HOME", dir.join("home")).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(what) && stderr.contains("grant this one read-only"), "{flags:?}: {stderr}");
    }
    // Read-only, the same directory is fine.
    let (code, out) = cordon(&dir, &["run", "--dir", &notes, "--dir", "here=.", &plan]);
    assert!(!out.contains("Cordon reads and trusts"), "{code}: {out}");
}
