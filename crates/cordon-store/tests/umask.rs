//! A new store is 0600 in 0700 directories whatever the umask. Alone in its test binary: the
//! umask is the whole process's, and other tests creating files meanwhile would feel it.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::Scratch;
use cordon_store::{Durability, SqliteStore};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o7777
}

#[test]
fn a_new_store_and_its_directory_are_private_whatever_the_umask() {
    let scratch = Scratch::new();
    // 022 is the usual umask (it would leave a store 0644); 277 takes even our own write bit.
    for (umask, name) in [(0o022, "usual"), (0o277, "strict"), (0, "none")] {
        let before = rustix::process::umask(rustix::fs::Mode::from_raw_mode(umask));
        let dir = scratch.path(name).join("deeper");
        let db = dir.join("cordon.db");
        let opened = SqliteStore::open(&db, Durability::SurvivesCrash);
        rustix::process::umask(before);
        let store = opened.unwrap();
        cordon_store::Store::append(&store, None, "note", &serde_json::json!({})).unwrap();
        assert_eq!(mode(&db), 0o600, "umask {umask:03o}");
        assert_eq!(mode(&dir), 0o700, "umask {umask:03o}");
        assert_eq!(mode(&scratch.path(name)), 0o700, "umask {umask:03o}");
        let wal = dir.join("cordon.db-wal");
        assert_eq!(mode(&wal), 0o600, "SQLite's files beside the store are as private: umask {umask:03o}");
    }
}
