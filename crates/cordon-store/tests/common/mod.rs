//! What the store's tests share: a store in a temporary directory, raw SQL access for hostile
//! edits, and child processes (the test binary run again, in a role named by an env var).
#![allow(dead_code, clippy::unwrap_used, clippy::panic)] // each test binary uses a part

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use cordon_store::{Durability, EffectIntent, SqliteStore};
use serde_json::json;

/// The env var that makes a test binary a child in some role.
pub const ROLE: &str = "CORDON_STORE_TEST_ROLE";

pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch { dir: tempfile::tempdir().unwrap() }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn db(&self) -> PathBuf {
        self.path("cordon.db")
    }

    pub fn open(&self) -> SqliteStore {
        SqliteStore::open(&self.db(), Durability::SurvivesCrash).unwrap()
    }
}

/// A raw connection, for what an attacker with the file would do.
pub fn raw(db: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(db).unwrap()
}

pub fn intent(tool: &str, n: u64) -> EffectIntent {
    EffectIntent {
        tool: tool.into(),
        args: json!({ "n": n }),
        decision: "allowed".into(),
        approved_by: None,
        labels: json!(["public"]),
        stages: Vec::new(),
    }
}

/// Runs this test binary again as a child in `role`: only the test named `child` runs, and it
/// plays the role.
pub fn spawn_child(role: &str, env: &[(&str, &Path)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"]).env(ROLE, role);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::null()).stderr(Stdio::inherit()).spawn().unwrap()
}

/// The role this process plays, if it is a child.
pub fn role() -> Option<String> {
    std::env::var(ROLE).ok()
}

pub fn env_path(name: &str) -> PathBuf {
    PathBuf::from(std::env::var_os(name).unwrap())
}

/// A small deterministic random generator (xorshift64*): the same sequence on every run,
/// unless `CORDON_STORE_SEED` names another seed (printed, to replay a failure).
pub struct Rng(u64);

impl Rng {
    pub fn seeded() -> Rng {
        let seed = std::env::var("CORDON_STORE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x636f_7264_6f6e);
        eprintln!("seed: CORDON_STORE_SEED={seed}");
        Rng(seed)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}
