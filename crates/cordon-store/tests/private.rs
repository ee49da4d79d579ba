//! What is kept on disk is the user's alone (a new store's modes are in `umask.rs`): a store another user owns or may write, or that sits in a
//! directory another user may change, or that is a symbolic link, is refused with an error
//! naming the path and why. Run as root, these tests also play the second local user
//! (`nobody`); otherwise they say so and skip those cases.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use common::Scratch;
use cordon_store::{Durability, SqliteStore, StoreError};

/// The uid and gid of `nobody`.
const NOBODY: u32 = 65534;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o7777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, PermissionsExt::from_mode(mode)).unwrap();
}

/// Opening `path` fails, saying it refuses `refused` for a reason containing `why`.
fn refused(path: &Path, refused: &Path, why: &str) {
    let error = SqliteStore::open(path, Durability::SurvivesCrash).unwrap_err();
    let text = error.to_string();
    let StoreError::Open { cause, .. } = &error else { panic!("{text}") };
    let StoreError::NotPrivate { path: named, reason } = cause.as_ref() else { panic!("{text}") };
    assert_eq!(named, refused, "{text}");
    assert!(reason.contains(why), "{text}");
    assert!(text.contains(&refused.display().to_string()), "the error names the path: {text}");
}

fn is_root() -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        println!("skipped: not root, so no file can be given to another user here");
    }
    root
}

#[test]
fn a_store_others_may_write_is_refused_and_one_they_may_read_is_made_private() {
    let scratch = Scratch::new();
    drop(scratch.open());
    for writable in [0o666, 0o620, 0o602] {
        chmod(&scratch.db(), writable);
        refused(&scratch.db(), &scratch.db(), "writable by others");
    }
    chmod(&scratch.db(), 0o644);
    drop(scratch.open());
    assert_eq!(mode(&scratch.db()), 0o600);
}

#[test]
fn a_file_beside_the_store_that_others_may_write_is_refused() {
    let scratch = Scratch::new();
    drop(scratch.open());
    let wal = scratch.path("cordon.db-wal");
    std::fs::write(&wal, b"").unwrap();
    chmod(&wal, 0o666);
    refused(&scratch.db(), &wal, "writable by others");
}

#[test]
fn a_store_in_a_directory_others_may_change_is_refused_unless_it_is_sticky() {
    let scratch = Scratch::new();
    let dir = scratch.path("shared");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("cordon.db");
    for open in [0o777, 0o770, 0o733] {
        chmod(&dir, open);
        refused(&db, &dir, "without the sticky bit");
    }
    // A directory above counts as much as the store's own.
    let inner = dir.join("inner");
    chmod(&dir, 0o700);
    std::fs::create_dir(&inner).unwrap();
    chmod(&dir, 0o777);
    refused(&inner.join("cordon.db"), &dir, "without the sticky bit");
    // Like /tmp: others may add names but not rename or remove ours.
    chmod(&dir, 0o1777);
    drop(SqliteStore::open(&db, Durability::SurvivesCrash).unwrap());
}

#[test]
fn a_store_that_is_a_symbolic_link_is_refused() {
    let scratch = Scratch::new();
    let elsewhere = scratch.path("elsewhere.db");
    drop(SqliteStore::open(&elsewhere, Durability::SurvivesCrash).unwrap());
    std::os::unix::fs::symlink(&elsewhere, scratch.db()).unwrap();
    refused(&scratch.db(), &scratch.db(), "symbolic link");
    // A link to nowhere is not followed to create its target either.
    let dangling = scratch.path("dangling.db");
    std::os::unix::fs::symlink(scratch.path("nowhere.db"), &dangling).unwrap();
    refused(&dangling, &dangling, "symbolic link");
    assert!(!scratch.path("nowhere.db").exists());
}

#[test]
fn a_store_owned_by_another_user_is_refused_naming_the_owner() {
    if !is_root() {
        return;
    }
    let scratch = Scratch::new();
    drop(scratch.open());
    std::os::unix::fs::chown(scratch.db(), Some(NOBODY), Some(NOBODY)).unwrap();
    refused(&scratch.db(), &scratch.db(), &format!("uid {NOBODY}"));
    let text = SqliteStore::open(&scratch.db(), Durability::SurvivesCrash).unwrap_err().to_string();
    assert!(text.contains("owned by user nobody") || text.contains("owned by uid 65534"), "{text}");

    // A directory another user owns: they could swap the store.
    let dir = scratch.path("theirs");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
    refused(&dir.join("cordon.db"), &dir, "owned by");
}

#[test]
fn another_local_user_cannot_read_the_store() {
    if !is_root() {
        return;
    }
    let scratch = Scratch::new();
    let db = scratch.path("home").join("cordon.db");
    let store = SqliteStore::open(&db, Durability::SurvivesCrash).unwrap();
    cordon_store::Store::append(&store, None, "note", &serde_json::json!({ "secret": "s3cr3t" })).unwrap();
    // Even with every directory above open to them, the store's own are closed.
    chmod(scratch.dir.path(), 0o755);
    for file in [db.clone(), scratch.path("home").join("cordon.db-wal")] {
        let read = Command::new("cat").arg(&file).uid(NOBODY).gid(NOBODY).output().unwrap();
        assert!(!read.status.success(), "nobody read {}", file.display());
        assert!(!String::from_utf8_lossy(&read.stdout).contains("s3cr3t"));
    }
}
