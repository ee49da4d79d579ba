//! The MCP peers tests start: real ones no one on the project wrote, pinned in
//! `crates/cordon-mcp/tests/servers/`: servers from npm (`package-lock.json`, installed with
//! `npm ci`) and the Python SDK's client from PyPI (`requirements.txt`, in a virtual
//! environment), installed into the target directory the first time a test needs them
//! (`.ci/run` installs them first).
#![allow(dead_code, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where the servers are installed: `<target>/tmp/mcp-servers`.
pub fn install_dir(target_tmp: &Path) -> PathBuf {
    target_tmp.join("mcp-servers")
}

/// The path of the npm server binary `bin` (`mcp-server-everything`), installing the pinned
/// servers first if they are missing.
pub fn npm_server(target_tmp: &Path, bin: &str) -> PathBuf {
    let dir = install_dir(target_tmp);
    let path = dir.join("node_modules/.bin").join(bin);
    install(target_tmp, &path, || {
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(pinned().join(file), dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
        }
        run(
            std::process::Command::new("npm").args(["ci", "--no-audit", "--no-fund", "--silent"]).current_dir(&dir),
            "npm ci (Node.js 20 or later is needed)",
        )
    });
    path
}

/// The Python of a virtual environment holding the pinned Python MCP SDK, made first if it
/// is missing.
pub fn python_mcp(target_tmp: &Path) -> PathBuf {
    let venv = target_tmp.join("py-mcp");
    let python = venv.join("bin/python");
    let ready = venv.join("ready");
    install(target_tmp, &ready, || {
        let _ = std::fs::remove_dir_all(&venv);
        run(std::process::Command::new("python3").arg("-m").arg("venv").arg(&venv), "python3 -m venv")?;
        let requirements = pinned().join("requirements.txt");
        run(
            std::process::Command::new(&python).args(["-m", "pip", "install", "-q", "-r"]).arg(&requirements),
            "pip install",
        )?;
        std::fs::write(&ready, "").map_err(|e| e.to_string())
    });
    python
}

fn pinned() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cordon-mcp/tests/servers")
}

fn run(command: &mut std::process::Command, what: &str) -> Result<(), String> {
    let status = command.status().map_err(|e| format!("cannot run {what}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{what} failed: {status}")) }
}

/// Runs `make` unless `done` exists. Several test processes may ask at once: one installs,
/// the others wait for it.
fn install(target_tmp: &Path, done: &Path, make: impl FnOnce() -> Result<(), String>) {
    if done.exists() {
        return;
    }
    std::fs::create_dir_all(target_tmp).unwrap_or_else(|e| panic!("{e}"));
    let lock = target_tmp.join("mcp-peers.lock");
    let start = Instant::now();
    while std::fs::create_dir(&lock).is_err() {
        if done.exists() {
            return;
        }
        if start.elapsed() > Duration::from_secs(900) {
            panic!("waited 15 minutes for another test to install the MCP peers; remove {}", lock.display());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let made = if done.exists() { Ok(()) } else { make() };
    let _ = std::fs::remove_dir(&lock);
    if let Err(e) = made {
        panic!("the MCP peers the tests use could not be installed under {}: {e}", target_tmp.display());
    }
}
