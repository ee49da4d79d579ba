//! `cordon chat` end to end, offline: requests on standard input share one environment and
//! one session, so a session tainted by the first request is still tainted in the second.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[test]
fn a_session_tainted_by_one_request_stays_tainted_in_the_next() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chat_taint.json");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-chat");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["chat", "--env", "github", "--max-attempts", "1", "--model"])
        .arg(format!("scripted:{}", fixture.display()))
        .arg("--store")
        .arg(dir.join("cordon.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = "How long is the roadmap?\n\nSay hello in a new issue on alice/website.\n/quit\n";
    child.stdin.take().unwrap().write_all(requests.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    // The first request reads the private roadmap and runs to the end.
    assert!(stdout.contains("The roadmap has"), "{stdout}");
    // The second one's fill cannot check: the session it would post with is tainted, and the
    // checker was told so before it checked.
    assert!(stdout.contains("refinement-unproven"), "{stdout}");
    assert!(!stdout.contains("opened #"), "{stdout}");
    assert_eq!(output.status.code(), Some(1), "{stdout}");
}
