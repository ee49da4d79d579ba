//! The vault as a user and an attacker meet it: secrets kept encrypted and private, listed
//! without their values, bound to exact destinations; a wrong key, a changed byte, a cut file
//! or a foreign one each a clear error, never an empty vault, never a secret in a message.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use cordon_vault::{Destination, Entry, Key, SecretValue, Vault, VaultError};
use proptest::prelude::*;

const CANARY: &str = "ghp_CanaryCanaryCanaryCanaryCanary0001";

fn entry(name: &str, hosts: &[&str]) -> Entry {
    Entry {
        name: name.into(),
        destinations: hosts.iter().map(|h| Destination::parse(h).unwrap()).collect(),
        header: "Authorization".into(),
        scheme: None,
        programs: Vec::new(),
    }
}

/// A vault at `dir/vault` holding the canary as `GITHUB_TOKEN`, and its key.
fn with_canary(dir: &Path) -> (std::path::PathBuf, Key) {
    let path = dir.join("vault");
    let key = Key::load_or_create(None, &dir.join("vault.key")).unwrap();
    let mut vault = Vault::open(&path, &key).unwrap();
    vault.add(entry("GITHUB_TOKEN", &["api.github.com"]), SecretValue::new(CANARY.into()), &key).unwrap();
    (path, key)
}

#[test]
fn a_secret_is_kept_encrypted_and_listed_without_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let (path, key) = with_canary(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains(CANARY), "the vault is encrypted at rest");
    assert!(!String::from_utf8_lossy(&bytes).contains("GITHUB_TOKEN"), "names too");
    for file in ["vault", "vault.key"] {
        let mode = std::fs::metadata(dir.path().join(file)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{file}");
    }
    let vault = Vault::open(&path, &key).unwrap();
    let entries = vault.entries();
    assert_eq!(entries, [entry("GITHUB_TOKEN", &["api.github.com"])]);
    assert_eq!(entries[0].destinations[0].to_string(), "https://api.github.com:443");
    assert_eq!(vault.value("GITHUB_TOKEN").unwrap().expose(), CANARY);
    for shown in [format!("{vault:?}"), format!("{:?}", vault.value("GITHUB_TOKEN")), format!("{key:?}")] {
        assert!(!shown.contains(CANARY) && !shown.contains("Canary"), "{shown}");
    }
}

#[test]
fn adding_replaces_and_removing_removes_and_both_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let (path, key) = with_canary(dir.path());
    let mut vault = Vault::open(&path, &key).unwrap();
    vault.add(entry("GITHUB_TOKEN", &["ghe.example.com:8443"]), SecretValue::new("second".into()), &key).unwrap();
    vault.add(entry("A_KEY", &["https://api.example.com"]), SecretValue::new("third".into()), &key).unwrap();
    let vault = Vault::open(&path, &key).unwrap();
    let names: Vec<String> = vault.entries().into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["A_KEY", "GITHUB_TOKEN"]);
    assert_eq!(vault.value("GITHUB_TOKEN").unwrap().expose(), "second");
    assert_eq!(vault.entries()[1].destinations[0].to_string(), "https://ghe.example.com:8443");
    let mut vault = vault;
    vault.remove("GITHUB_TOKEN", &key).unwrap();
    let error = vault.remove("GITHUB_TOKEN", &key).unwrap_err();
    assert!(error.to_string().contains("no secret `GITHUB_TOKEN`"), "{error}");
    let vault = Vault::open(&path, &key).unwrap();
    assert_eq!(vault.entries().len(), 1);
    assert!(!dir.path().join("vault.new").exists(), "no temporary file is left behind");
}

#[test]
fn a_wrong_key_is_an_error_never_an_empty_vault() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = with_canary(dir.path());
    let other = Key::generate().unwrap();
    let error = Vault::open(&path, &other).unwrap_err();
    assert!(matches!(error, VaultError::WrongKeyOrTampered { .. }), "{error:?}");
    assert!(error.to_string().contains("does not open with this key"), "{error}");
}

#[test]
fn the_key_comes_from_the_environment_before_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let hex = "00".repeat(31) + "01";
    let from_env = Key::load(Some(hex.clone()), &dir.path().join("none")).unwrap().unwrap();
    let path = dir.path().join("vault");
    let mut vault = Vault::open(&path, &from_env).unwrap();
    vault.add(entry("T", &["api.example.com"]), SecretValue::new("v".into()), &from_env).unwrap();
    let again = Key::load_or_create(Some(hex), &dir.path().join("none")).unwrap();
    assert_eq!(Vault::open(&path, &again).unwrap().entries().len(), 1);
    assert!(!dir.path().join("none").exists(), "a key from the environment makes no key file");
    // An empty variable is no variable.
    assert!(Key::load(Some(String::new()), &dir.path().join("none")).unwrap().is_none());
    for bad in ["c0ffee", &"zz".repeat(32), &"ab".repeat(33)] {
        let error = Key::load(Some(bad.to_string()), &dir.path().join("none")).unwrap_err();
        assert!(error.to_string().contains("64 hexadecimal digits"), "{bad}: {error}");
        assert!(!error.to_string().contains(bad), "the bad key is not echoed: {error}");
    }
}

#[test]
fn a_foreign_or_cut_file_is_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let (path, key) = with_canary(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("sqlite", b"SQLite format 3\0....".to_vec(), "does not start as a vault does"),
        ("newer", b"cordon-vault 2\n............................................".to_vec(), "another version"),
        ("cut", bytes[..bytes.len().min(20)].to_vec(), "cut short"),
    ];
    for (what, contents, expected) in cases {
        std::fs::write(&path, &contents).unwrap();
        let error = Vault::open(&path, &key).unwrap_err();
        assert!(error.to_string().contains(expected), "{what}: {error}");
    }
}

#[test]
fn a_vault_another_user_could_have_written_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (path, key) = with_canary(dir.path());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let error = Vault::open(&path, &key).unwrap_err();
    assert!(matches!(error, VaultError::File(_)), "{error:?}");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    assert!(Vault::open(&link, &key).is_err(), "a symbolic link is never followed");
}

#[test]
fn destinations_are_exact_and_normalised() {
    let parse = |text: &str| Destination::parse(text).map(|d| d.to_string());
    assert_eq!(parse("API.GitHub.com").unwrap(), "https://api.github.com:443");
    assert_eq!(parse("api.github.com.").unwrap(), "https://api.github.com:443");
    assert_eq!(parse("https://bücher.example").unwrap(), "https://xn--bcher-kva.example:443");
    assert_eq!(parse("http://127.0.0.1:8080").unwrap(), "http://127.0.0.1:8080");
    assert_eq!(parse("http://[::1]:9").unwrap(), "http://[::1]:9");
    for refused in [
        "http://api.example.com",
        "https://api.example.com/repos",
        "https://user:pw@api.example.com",
        "https://api.example.com?x=1",
        "ftp://api.example.com",
        "https://",
        "",
    ] {
        let error = Destination::parse(refused).unwrap_err();
        assert!(error.to_string().contains("not a host a secret may go to"), "{refused}: {error}");
    }
}

#[test]
fn names_headers_and_values_are_checked_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (path, key) = with_canary(dir.path());
    let before = std::fs::read(&path).unwrap();
    let mut vault = Vault::open(&path, &key).unwrap();
    let bad_name = vault.add(entry("1BAD", &["a.example"]), SecretValue::new("v".into()), &key).unwrap_err();
    assert!(bad_name.to_string().contains("not a secret's name"), "{bad_name}");
    let mut bad_header = entry("OK", &["a.example"]);
    bad_header.header = "X-Token\r\nInjected: yes".into();
    let error = vault.add(bad_header, SecretValue::new("v".into()), &key).unwrap_err();
    assert!(error.to_string().contains("not a header's name"), "{error}");
    let empty = vault.add(entry("OK", &["a.example"]), SecretValue::new(String::new()), &key).unwrap_err();
    assert!(empty.to_string().contains("1 to"), "{empty}");
    let nowhere = vault.add(entry("OK", &[]), SecretValue::new("v".into()), &key).unwrap_err();
    assert!(nowhere.to_string().contains("needs a host"), "{nowhere}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing was written");
    assert_eq!(vault.entries().len(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(26), ..ProptestConfig::default() })]

    /// Any change to a vault file, at any byte, is refused: the contents are authenticated.
    #[test]
    fn every_changed_byte_is_refused(at in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let dir = tempfile::tempdir().unwrap();
        let (path, key) = with_canary(dir.path());
        let mut bytes = std::fs::read(&path).unwrap();
        let i = at.index(bytes.len());
        bytes[i] ^= flip;
        std::fs::write(&path, &bytes).unwrap();
        let error = Vault::open(&path, &key).unwrap_err();
        prop_assert!(matches!(error, VaultError::WrongKeyOrTampered { .. } | VaultError::Malformed { .. }), "{:?}", error);
        prop_assert!(!error.to_string().contains(CANARY));
    }
}

#[test]
fn the_key_file_is_kept_with_the_configuration_apart_from_the_data() {
    use std::ffi::OsString;
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
    };
    let at = |p: &str| Some(std::path::PathBuf::from(p));
    assert_eq!(cordon_vault::key_location(env(&[("HOME", "/home/a")])), at("/home/a/.config/cordon/vault.key"));
    let xdg = env(&[("HOME", "/home/a"), ("XDG_CONFIG_HOME", "/cfg")]);
    assert_eq!(cordon_vault::key_location(xdg), at("/cfg/cordon/vault.key"));
    // A relative XDG_CONFIG_HOME is invalid, as the XDG spec says, and ignored.
    let relative = env(&[("HOME", "/home/a"), ("XDG_CONFIG_HOME", "cfg")]);
    assert_eq!(cordon_vault::key_location(relative), at("/home/a/.config/cordon/vault.key"));
    assert_eq!(cordon_vault::key_location(env(&[])), None);
}
