//! What the CLI's end-to-end tests share: a fresh directory per test, `cordon` run there with
//! a store of its own (never the user's), the example plans, and answer files for the gate.
#![allow(dead_code, clippy::unwrap_used)] // each test binary uses some of these; a test may fail loudly

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod served;

/// What one run of `cordon` did.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// A fresh directory for the test `test` of the group `group`.
pub fn workdir(group: &str, test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(group).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `cordon args` in `dir`, with `dir/cordon.db` as the store unless the arguments name one.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cordon"));
    command.args(args).current_dir(dir).env("CORDON_STORE", dir.join("cordon.db"));
    command
}

/// Runs `cordon args` in `dir` to its end.
pub fn cordon(dir: &Path, args: &[&str]) -> Output {
    let output = command(dir, args).output().unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// The path of an example plan, `examples/<path>`.
pub fn example(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(path).display().to_string()
}

/// `--approve FILE` with a file in `dir` holding `text`, the approver's answers.
pub fn answers(dir: &Path, text: &str) -> String {
    let path = dir.join("answers.txt");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `--approve FILE` with a file that says yes to every card: the person at the gate approves
/// what a plan publishes (the gate's own rules are tested in `gate.rs`). Plans that try to leak
/// run without it, so their calls stay refused.
pub fn yes(dir: &Path) -> String {
    answers(dir, &"yes\n".repeat(8))
}

/// Runs `cordon ARGS` at a pseudo-terminal, driven by `steps` (see `fixtures/pty_drive.py`):
/// everything the terminal showed, and the exit code.
pub fn at_a_terminal(steps: &serde_json::Value, args: &[&std::ffi::OsStr]) -> (String, Option<i32>) {
    at_a_terminal_with(steps, args, &[])
}

/// As [`at_a_terminal`], with `TERM=xterm` and without `NO_COLOR` (whatever the test's own
/// environment), then the environment variables `env` set.
pub fn at_a_terminal_with(
    steps: &serde_json::Value,
    args: &[&std::ffi::OsStr],
    env: &[(&str, &str)],
) -> (String, Option<i32>) {
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pty_drive.py");
    let output = Command::new("python3")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .envs(env.iter().copied())
        .arg(driver)
        .arg(steps.to_string())
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_cordon"))
        .args(args)
        .output()
        .unwrap();
    (String::from_utf8_lossy(&output.stdout).into_owned(), output.status.code())
}

/// The vault key the tests use (`CORDON_VAULT_KEY`).
pub const VAULT_KEY: &str = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

/// `cordon secrets add ARGS` in `dir`, the value given on standard input, under [`VAULT_KEY`].
pub fn add_secret(dir: &Path, args: &[&str], value: &str) {
    use std::io::Write;
    let mut command = command(dir, &[&["secrets", "add"], args].concat());
    let mut child = command
        .env("CORDON_VAULT_KEY", VAULT_KEY)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(value.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success(), "cordon secrets add {args:?}");
}
