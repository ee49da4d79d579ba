//! `cordon secrets` as a user runs it: a value typed at a terminal is not echoed, one piped in
//! is taken whole; `list` shows names, headers and hosts, never a value; the vault on disk
//! holds no value in the clear; a wrong key or a changed vault is a clear error that shows no
//! secret. Every test uses a vault and key in its own directory, never the user's.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

mod common;

use common::{Output, at_a_terminal, command, workdir};

const CANARY: &str = "ghp_SecretsCliCanary0000000000000000042";

/// `cordon secrets ARGS --vault .. --key-file ..` in `dir`, with `stdin` piped in and
/// `CORDON_VAULT_KEY` set to `key` if given.
fn secrets(dir: &Path, args: &[&str], stdin: &str, key: Option<&str>) -> Output {
    let (vault, key_file) = files(dir);
    let mut all = vec!["secrets"];
    all.extend_from_slice(args);
    let store = vault.with_file_name("cordon.db");
    all.extend_from_slice(&["--store", store.to_str().unwrap(), "--key-file", key_file.to_str().unwrap()]);
    let mut command = command(dir, &all);
    command.env_remove("CORDON_VAULT_KEY");
    if let Some(key) = key {
        command.env("CORDON_VAULT_KEY", key);
    }
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn files(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("vault"), dir.join("config/vault.key"))
}

#[test]
fn a_piped_secret_is_kept_and_listed_without_its_value() {
    let dir = workdir("cli-secrets", "piped");
    let added = secrets(&dir, &["add", "GITHUB_TOKEN", "--host", "api.github.com"], &format!("{CANARY}\n"), None);
    assert_eq!(added.code, 0, "{added:?}");
    assert_eq!(added.stdout, "added `GITHUB_TOKEN`: sent only in `Authorization` to https://api.github.com:443\n");
    let listed = secrets(&dir, &["list"], "", None);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert_eq!(listed.stdout, "GITHUB_TOKEN  Authorization  https://api.github.com:443\n");
    let (vault, key_file) = files(&dir);
    for file in [&vault, &key_file] {
        let bytes = std::fs::read(file).unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains(CANARY), "{}", file.display());
    }
    for output in [&added, &listed] {
        assert!(!output.stdout.contains(CANARY) && !output.stderr.contains(CANARY), "{output:?}");
    }
    let removed = secrets(&dir, &["remove", "GITHUB_TOKEN"], "", None);
    assert_eq!((removed.code, removed.stdout.as_str()), (0, "removed `GITHUB_TOKEN`\n"), "{removed:?}");
    assert_eq!(secrets(&dir, &["list"], "", None).stdout, "no secrets\n");
    let again = secrets(&dir, &["remove", "GITHUB_TOKEN"], "", None);
    assert_eq!(again.code, 2, "{again:?}");
    assert!(again.stderr.contains("no secret `GITHUB_TOKEN`"), "{again:?}");
}

#[test]
fn a_secret_typed_at_a_terminal_is_not_echoed() {
    let dir = workdir("cli-secrets", "terminal");
    let (vault, key_file) = files(&dir);
    let steps =
        serde_json::json!([["expect", "(not shown): "], ["send", format!("{CANARY}\n")], ["expect", "added `T`"],]);
    let store = vault.with_file_name("cordon.db");
    let args: Vec<&std::ffi::OsStr> = ["secrets", "add", "T", "--host", "api.example.com", "--store"]
        .iter()
        .map(std::ffi::OsStr::new)
        .chain([store.as_os_str(), std::ffi::OsStr::new("--key-file"), key_file.as_os_str()])
        .collect();
    let (shown, code) = at_a_terminal(&steps, &args);
    assert_eq!(code, Some(0), "{shown}");
    assert!(!shown.contains("SecretsCliCanary"), "the terminal showed the value: {shown}");
    let listed = secrets(&dir, &["list"], "", None);
    assert_eq!(listed.stdout, "T  Authorization  https://api.example.com:443\n", "{listed:?}");
}

#[test]
fn a_wrong_key_or_a_changed_vault_is_a_clear_error_that_shows_no_secret() {
    let dir = workdir("cli-secrets", "wrong_key");
    let key = "ab".repeat(32);
    let added = secrets(&dir, &["add", "T", "--host", "api.example.com"], CANARY, Some(&key));
    assert_eq!(added.code, 0, "{added:?}");
    assert!(!files(&dir).1.exists(), "a key from the environment makes no key file");
    let wrong = secrets(&dir, &["list"], "", Some(&"cd".repeat(32)));
    assert_eq!(wrong.code, 2, "{wrong:?}");
    assert!(wrong.stderr.contains("does not open with this key"), "{wrong:?}");
    let (vault, _) = files(&dir);
    let mut bytes = std::fs::read(&vault).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&vault, &bytes).unwrap();
    let changed = secrets(&dir, &["list"], "", Some(&key));
    assert_eq!(changed.code, 2, "{changed:?}");
    assert!(changed.stderr.contains("the vault was changed"), "{changed:?}");
    for output in [&wrong, &changed] {
        assert!(!output.stdout.contains(CANARY) && !output.stderr.contains(CANARY), "{output:?}");
    }
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let dir = workdir("cli-secrets", "bad_input");
    let cases: &[(&[&str], &str)] = &[
        (&["add", "T", "--host", "http://api.example.com"], "plain HTTP"),
        (&["add", "T", "--host", "api.example.com/path"], "not to a path"),
        (&["add", "T", "--host", "api.example.com", "--header", "X\r\nY"], "not a header's name"),
        (&["add", "1T", "--host", "api.example.com"], "not a secret's name"),
    ];
    for (args, expected) in cases {
        let output = secrets(&dir, args, CANARY, None);
        assert_eq!(output.code, 2, "{args:?}: {output:?}");
        assert!(output.stderr.contains(expected), "{args:?}: {output:?}");
        assert!(!output.stderr.contains(CANARY), "{output:?}");
    }
    let (vault, key_file) = files(&dir);
    assert!(!key_file.exists(), "no key was made for an entry the vault refuses");
    let empty = secrets(&dir, &["add", "T", "--host", "api.example.com"], "\n", None);
    assert!(empty.code == 2 && empty.stderr.contains("1 to"), "{empty:?}");
    assert!(!vault.exists(), "no vault was written");
}
