//! `cordon lsp`, driven over stdio as an editor drives it, by recorded sessions: each file of
//! `tests/fixtures/lsp/*.json` is one session, as data. Its `files` are written into a fresh
//! directory (the workspace's root; a value `@NAME` is the fixture file `NAME`, a list is the
//! file's lines), and its `session` is played in order:
//!
//! - `{"send": MESSAGE}` sends a JSON-RPC message, framed (`"jsonrpc": "2.0"` added). In it,
//!   `$ROOT` in a string is the root's `file:` URI, a string `$TEXT(NAME)` is the text of the
//!   file `NAME`, and `{"$repeat": TEXT, "times": N}` is `TEXT` N times.
//! - `{"raw": TEXT}` sends `TEXT` as it is (`$LENGTH` in it is the length of what follows the
//!   blank line that ends its headers; `$repeat` as above): malformed messages.
//! - `{"expect": FRAGMENT}` waits for a message from the server that `FRAGMENT` matches,
//!   taking the first that does (messages it skips stay for later expectations): an object
//!   matches an object with at least its keys, each matching; a list matches a list of the same
//!   length, item by item; `{"$some": [..]}` matches a list with an item matching each; a
//!   string `$contains:TEXT` matches a string holding `TEXT`; anything else only itself.
//! - `{"exit": CODE}` closes the server's input and waits for it to exit with `CODE`.
//!
//! Every session ends with the server's exit and nothing on its stderr that says it panicked.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a session waits for one message (a check in a debug build, Z3 included).
const PATIENCE: Duration = Duration::from_secs(60);

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp")
}

/// A running server, with what it has said and not yet been matched.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    unmatched: Vec<Value>,
    stderr: std::thread::JoinHandle<String>,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
            .arg("lsp")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (to, messages) = channel();
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            while let Some(message) = read_message(&mut stdout) {
                if to.send(message).is_err() {
                    return;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Server { child, stdin, messages, unmatched: Vec::new(), stderr }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, mut message: Value) {
        message["jsonrpc"] = json!("2.0");
        let body = serde_json::to_string(&message).unwrap();
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    /// The first message `fragment` matches, waiting for it.
    fn expect(&mut self, fragment: &Value, step: usize) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(i) = self.unmatched.iter().position(|m| matches(fragment, m)) {
                return self.unmatched.remove(i);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) => self.unmatched.push(message),
                Err(_) => panic!(
                    "step {step}: no message matches\n{}\nthe server said:\n{}",
                    serde_json::to_string_pretty(fragment).unwrap(),
                    self.unmatched
                        .iter()
                        .map(|m| serde_json::to_string_pretty(m).unwrap())
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            }
        }
    }

    /// Waits for the server to end: its exit code and its stderr.
    fn end(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        let code = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        (code, self.stderr.join().unwrap())
    }
}

/// One framed message of `input`, or `None` at its end.
fn read_message(input: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    input.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).unwrap_or_else(|e| panic!("the server wrote something that is not JSON: {e}")))
}

/// Whether `fragment` matches `actual` (see the module's doc).
fn matches(fragment: &Value, actual: &Value) -> bool {
    match (fragment, actual) {
        (Value::Object(f), _) if f.contains_key("$some") => {
            let Some(items) = actual.as_array() else { return false };
            f["$some"].as_array().unwrap().iter().all(|wanted| items.iter().any(|item| matches(wanted, item)))
        }
        (Value::Object(f), Value::Object(a)) => f.iter().all(|(k, v)| a.get(k).is_some_and(|x| matches(v, x))),
        (Value::Array(f), Value::Array(a)) => f.len() == a.len() && f.iter().zip(a).all(|(x, y)| matches(x, y)),
        (Value::String(f), Value::String(a)) => match f.strip_prefix("$contains:") {
            Some(part) => a.contains(part),
            None => f == a,
        },
        _ => fragment == actual,
    }
}

/// `value` with its placeholders filled in.
fn fill(value: &Value, root: &str, dir: &Path) -> Value {
    match value {
        Value::String(s) => match s.strip_prefix("$TEXT(").and_then(|r| r.strip_suffix(')')) {
            Some(name) => json!(std::fs::read_to_string(dir.join(name)).unwrap()),
            None => json!(s.replace("$ROOT", root)),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| fill(v, root, dir)).collect()),
        Value::Object(o) if o.contains_key("$repeat") => {
            json!(o["$repeat"].as_str().unwrap().repeat(o["times"].as_u64().unwrap() as usize))
        }
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), fill(v, root, dir))).collect()),
        other => other.clone(),
    }
}

/// Plays the recorded session `name` (`tests/fixtures/lsp/NAME.json`).
fn session(name: &str) {
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join(format!("{name}.json"))).unwrap()).unwrap();
    let dir = common::workdir("lsp", name);
    for (file, text) in fixture["files"].as_object().unwrap() {
        let text = match text {
            Value::String(s) => std::fs::read_to_string(fixtures().join(s.strip_prefix('@').unwrap())).unwrap(),
            lines => lines.as_array().unwrap().iter().map(|l| format!("{}\n", l.as_str().unwrap())).collect(),
        };
        std::fs::write(dir.join(file), text).unwrap();
    }
    let root = url_of(&dir);
    let mut server = Server::start(&dir);
    let mut exited = None;
    for (step, s) in fixture["session"].as_array().unwrap().iter().enumerate() {
        if let Some(message) = s.get("send") {
            server.send(fill(message, &root, &dir));
        } else if let Some(raw) = s.get("raw") {
            let raw = fill(raw, &root, &dir);
            let raw = raw.as_str().unwrap();
            let body = raw.split_once("\r\n\r\n").map_or(0, |(_, body)| body.len());
            server.send_raw(raw.replace("$LENGTH", &body.to_string()).as_bytes());
        } else if let Some(fragment) = s.get("expect") {
            server.expect(&fill(fragment, &root, &dir), step);
        } else if let Some(code) = s.get("exit") {
            exited = Some(code.as_i64().unwrap() as i32);
            break;
        } else {
            panic!("step {step}: not a step: {s}");
        }
    }
    let (code, stderr) = server.end();
    assert!(!stderr.contains("panicked"), "the server panicked:\n{stderr}");
    assert_eq!(code, Some(exited.expect("a session ends with the server's exit")), "{stderr}");
}

/// The `file:` URI of a directory.
fn url_of(dir: &Path) -> String {
    let path = dir.canonicalize().unwrap().display().to_string();
    let encoded: String = path
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!("file://{encoded}")
}

#[test]
fn hostile_messages_are_answered_or_ignored_and_the_server_goes_on() {
    session("hostile");
}

#[test]
fn the_server_exits_as_the_protocol_says() {
    session("exit");
    session("eof");
}

#[test]
fn diagnostics_come_as_the_documents_change() {
    session("diagnostics");
}

#[test]
fn a_policy_is_checked_alone() {
    session("policy");
}

#[test]
fn hover_shows_types_declarations_and_builtins() {
    session("hover");
}

#[test]
fn definition_leads_to_the_declaration() {
    session("definition");
}

#[test]
fn completion_offers_members_and_names_in_scope() {
    session("completion");
}

#[test]
fn formatting_is_one_edit_or_none() {
    session("formatting");
}

#[test]
fn a_plan_has_its_effect_summary_as_a_code_lens() {
    session("effects");
}
