//! The MCP servers tests start: real ones no one on the project wrote, from npm, pinned by
//! `crates/cordon-mcp/tests/servers/package-lock.json` and installed with `npm ci` into the
//! target directory the first time a test needs them (`.ci/run` installs them first).
#![allow(dead_code, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where the servers are installed: `<target>/tmp/mcp-servers`.
pub fn install_dir(target_tmp: &Path) -> PathBuf {
    target_tmp.join("mcp-servers")
}

/// The path of the npm server binary `bin` (`mcp-server-everything`), installing the pinned
/// servers first if they are missing. Several test processes may ask at once: one installs,
/// the others wait for it.
pub fn npm_server(target_tmp: &Path, bin: &str) -> PathBuf {
    let dir = install_dir(target_tmp);
    let path = dir.join("node_modules/.bin").join(bin);
    if path.exists() {
        return path;
    }
    let lock = target_tmp.join("mcp-servers.lock");
    std::fs::create_dir_all(target_tmp).unwrap_or_else(|e| panic!("{e}"));
    let start = Instant::now();
    while std::fs::create_dir(&lock).is_err() {
        if path.exists() {
            return path;
        }
        if start.elapsed() > Duration::from_secs(600) {
            panic!("waited 10 minutes for another test to install the MCP servers; remove {}", lock.display());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let installed = (|| {
        if path.exists() {
            return Ok(());
        }
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let pinned = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cordon-mcp/tests/servers");
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(pinned.join(file), dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
        }
        let status = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--silent"])
            .current_dir(&dir)
            .status()
            .map_err(|e| format!("cannot run npm (Node.js 20 or later is needed for these tests): {e}"))?;
        if status.success() { Ok(()) } else { Err(format!("npm ci failed: {status}")) }
    })();
    let _ = std::fs::remove_dir(&lock);
    if let Err(e) = installed {
        panic!("the MCP servers the tests use could not be installed in {}: {e}", dir.display());
    }
    path
}
