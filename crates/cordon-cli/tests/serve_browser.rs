//! `cordon serve`'s page in a real browser, used as a person uses it: Debian's headless
//! Chromium, driven by `tests/browser/serve.mjs` (playwright-core, pinned in
//! `tests/browser/package-lock.json` and installed with `npm ci` the first time). Three runs
//! wait at their cards; the person signs in by typing their token, denies one card, approves
//! one, answers the third "always", sees on each run's page how it ended, and revokes the grant
//! the "always" made. Only the approved writes reach the disk, and the page, which has no
//! script, makes the browser write nothing to its console.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::served::{add_user, bearer, http, serve, submit, until, waiting, write_plan};
use common::workdir;

/// The headless Chromium that `.ci/run` installs (Debian's `chromium-headless-shell`).
const CHROMIUM: &str = "chromium-headless-shell";

/// The absolute path of `program` on `PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command.status().map_err(|e| format!("cannot run {what}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{what} failed: {status}")) }
}

/// The directory holding `serve.mjs` and the pinned playwright-core, installed with `npm ci`
/// (never a browser of its own) unless this lockfile is installed there already. Test
/// processes asking at once take turns: one installs, the others wait for it.
fn driver() -> PathBuf {
    let pinned = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let target_tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = target_tmp.join("playwright");
    let lockfile = std::fs::read_to_string(pinned.join("package-lock.json")).unwrap();
    // What was installed: the lockfile `npm ci` installed from, once it succeeded.
    let installed = dir.join("installed-lock.json");
    let ready = || std::fs::read_to_string(&installed).is_ok_and(|l| l == lockfile);
    if !ready() {
        std::fs::create_dir_all(target_tmp).unwrap();
        let lock = target_tmp.join("playwright.lock");
        let start = Instant::now();
        while std::fs::create_dir(&lock).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(900),
                "waited 15 minutes for another test to install playwright-core; remove {}",
                lock.display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let made = if ready() {
            Ok(())
        } else {
            (|| {
                let _ = std::fs::remove_file(&installed);
                std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
                for file in ["package.json", "package-lock.json"] {
                    std::fs::copy(pinned.join(file), dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
                }
                run(
                    Command::new("npm")
                        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
                        .current_dir(&dir),
                    "npm ci (Node.js 20 or later is needed)",
                )?;
                std::fs::write(&installed, &lockfile).map_err(|e| e.to_string())
            })()
        };
        let _ = std::fs::remove_dir(&lock);
        if let Err(e) = made {
            panic!("playwright-core could not be installed under {}: {e}", dir.display());
        }
    }
    // The script itself is copied each time, beside the `node_modules` it imports from.
    std::fs::copy(pinned.join("serve.mjs"), dir.join("serve.mjs")).unwrap();
    dir
}

#[test]
fn a_person_answers_three_cards_and_revokes_a_grant_in_a_real_browser() {
    let chromium = on_path(CHROMIUM)
        .unwrap_or_else(|| panic!("no {CHROMIUM} on PATH: .ci/run installs it; apt-get install {CHROMIUM}"));
    let driver = driver();
    // The clock starts once playwright-core is installed: the story itself takes seconds.
    let started = Instant::now();
    let dir = workdir("serve-browser", "story");
    let alice = add_user(&dir, "alice", &[]);
    let server = serve(&dir, &[]);
    let port = server.port;
    let runs: Vec<i64> = ["a.txt", "b.txt", "c.txt"]
        .iter()
        .map(|file| submit(port, &alice, &write_plan(file, &format!("{file} from the browser"))))
        .collect();
    for &run in &runs {
        until(port, &alice, run, waiting);
    }
    assert!(std::fs::read_dir(dir.join("out")).unwrap().next().is_none(), "nothing is written before an answer");

    let shots = dir.join("shots");
    let output = Command::new("timeout")
        .arg("120")
        .arg("node")
        .arg(driver.join("serve.mjs"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&shots)
        .args(runs.iter().map(i64::to_string))
        .env("CORDON_TOKEN", &alice)
        .env("CHROMIUM", &chromium)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node ({e}): Node.js 20 or later is needed"));
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the browser's story failed ({}):\n{stderr}\n{stdout}", output.status);
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON summary ({e}):\n{stdout}\n{stderr}"));
    assert_eq!(summary["console"], serde_json::json!([]), "the browser's console: {summary}");
    assert_eq!(summary["error_pages"], serde_json::json!([]), "pages answered with an error: {summary}");
    assert_eq!(summary["runs"]["b"]["result"], "wrote", "{summary}");
    assert_eq!(summary["runs"]["c"]["result"], "wrote", "{summary}");

    // What the page said is what happened: only the approved writes reached the disk.
    assert!(!dir.join("out/a.txt").exists(), "A's card was denied");
    assert_eq!(std::fs::read_to_string(dir.join("out/b.txt")).unwrap(), "b.txt from the browser");
    assert_eq!(std::fs::read_to_string(dir.join("out/c.txt")).unwrap(), "c.txt from the browser");
    for (run, answer) in runs.iter().zip(["no", "yes", "always"]) {
        let shown = http(port, "GET", &format!("/api/runs/{run}"), &[("Authorization", &bearer(&alice))], "").json();
        assert_eq!(shown["state"], "done", "{shown}");
        assert_eq!(shown["answer"]["answer"], answer, "{shown}");
        assert_eq!(shown["answer"]["by"], "alice", "{shown}");
    }

    let taken = summary["screenshots"].as_array().expect("the screenshots taken");
    assert!(taken.len() >= 8, "{summary}");
    for shot in taken {
        let path = Path::new(shot.as_str().unwrap());
        assert!(path.starts_with(&shots), "{}", path.display());
        let png = std::fs::read(path).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{} is not a PNG", path.display());
        assert!(png.len() > 5_000 && png.len() < 5_000_000, "{}: {} bytes", path.display(), png.len());
    }
    assert!(started.elapsed() < Duration::from_secs(60), "the story took {:?}", started.elapsed());
}
