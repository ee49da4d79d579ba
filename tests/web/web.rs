//! The tests' web servers (`web.py`, and `github.py`, a mock of GitHub's API; both Python's own
//! http.server) from Rust: started on a free port of 127.0.0.1 for one test, ended when dropped. A test crate includes this file with
//! `#[path = "../../../tests/web/web.rs"] mod web;`.
#![allow(dead_code, clippy::unwrap_used)] // each test crate uses part of it; a test may fail loudly

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A web server for one test: killed when dropped.
pub struct Web {
    child: Child,
    pub port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// The repository's root.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

impl Web {
    /// `web.py`: paths that echo, redirect, stall, and so on.
    pub fn start() -> Web {
        Web::script("web.py", &[])
    }

    /// `github.py`: a mock of GitHub's REST API over the simulated GitHub's data, answering
    /// requests that carry `Authorization: Bearer TOKEN`.
    pub fn github(token: &str) -> Web {
        let data = format!("{ROOT}/crates/cordon-sim/data/github.json");
        Web::script("github.py", &["--data", &data, "--token", token])
    }

    fn script(name: &str, args: &[&str]) -> Web {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("requests.jsonl");
        std::fs::write(&log, "").unwrap();
        let mut child = Command::new("python3")
            .arg(format!("{ROOT}/tests/web/{name}"))
            .args(args)
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("{name} did not say its port: {line:?}"));
        Web { child, port, log, _dir: dir }
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every request it received, as its JSON lines.
    pub fn received(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }
}

impl Drop for Web {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
