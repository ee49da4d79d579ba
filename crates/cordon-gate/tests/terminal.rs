//! The terminal approver under a real pseudo-terminal: this test binary runs itself again as
//! the child (`terminal_child`), whose standard input and error are the terminal's far end, so
//! `Terminal::stdio` sees a terminal as it would in `cordon ask`. The parent reads the card off
//! the terminal and types the answer, page by page; or closes the terminal mid-card.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cordon_gate::{Approver, Card, Reply, Shown, Terminal};
use cordon_label::{Label, Tier};

const CHILD: &str = "CORDON_GATE_TERMINAL_CHILD";

/// A payment card with 60 lines of content: three pages on a 24-row terminal.
fn card() -> Card {
    let content: Vec<String> = (1..=60).map(|i| format!("line {i} of the memo")).collect();
    let shown = |text: &str| Shown::labelled(text.into(), &Label::bottom(), "ann");
    Card {
        id: 1,
        tool: "Shop.pay".into(),
        tier: Tier::AskAlways,
        action: "pay".into(),
        destination: Some(shown("tea-house")),
        recipients: Vec::new(),
        content: Some(shown(&content.join("\n"))),
        fields: vec![("amount".into(), shown("1200"))],
        decided_by: Vec::new(),
        flows: Vec::new(),
        flags: Vec::new(),
        sensitive: Vec::new(),
        grantable: false,
        label_class: "public".into(),
        by_model: false,
    }
}

/// The child: answers the card on its terminal and prints the answer on standard output.
#[test]
fn terminal_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let mut terminal = Terminal::stdio().expect("standard input is a terminal");
    let reply = terminal.review(&card());
    let Reply::Answer(answer) = reply else { panic!("a terminal answers at once") };
    println!("ANSWER={answer:?}");
}

/// A child on a new pseudo-terminal; everything it writes there arrives on the channel.
struct Child {
    master: std::fs::File,
    output: mpsc::Receiver<u8>,
    child: std::process::Child,
    seen: String,
}

/// A child on a new terminal; with `close_after`, the terminal is closed on this side once it
/// showed that text (the parent's own handle is closed when it takes the answer).
fn spawn(close_after: Option<&'static str>) -> Child {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = std::fs::OpenOptions::new().read(true).write(true).open(name.to_str().unwrap()).unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "terminal_child", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .stdin(slave.try_clone().unwrap())
        .stderr(slave)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let master = std::fs::File::from(master);
    let mut reader = master.try_clone().unwrap();
    let (tx, output) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut shown = Vec::new();
        // Ends when the terminal's far end is closed (the read fails), or when it should close.
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            shown.extend_from_slice(&buf[..n]);
            for b in &buf[..n] {
                if tx.send(*b).is_err() {
                    return;
                }
            }
            if close_after.is_some_and(|t| String::from_utf8_lossy(&shown).contains(t)) {
                break;
            }
        }
    });
    Child { master, output, child, seen: String::new() }
}

impl Child {
    /// Waits until the terminal shows `text` (after what was already waited for).
    fn expect(&mut self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut bytes = Vec::new();
        loop {
            let shown = String::from_utf8_lossy(&bytes).to_string();
            if shown.contains(text) {
                self.seen.push_str(&shown);
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(b) => bytes.push(b),
                Err(_) => panic!("the terminal never showed {text:?}; it showed:\n{}{shown}", self.seen),
            }
        }
    }

    fn type_line(&mut self, line: &str) {
        self.master.write_all(format!("{line}\n").as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    fn answer(self) -> String {
        let Child { master, child, .. } = self;
        drop(master);
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let answer = stdout.split_once("ANSWER=").and_then(|(_, rest)| rest.split_whitespace().next());
        answer.map(str::to_string).unwrap_or_else(|| panic!("no answer: {stdout}"))
    }
}

#[test]
fn a_person_pages_through_the_card_and_approves_it_on_a_terminal() {
    let mut child = spawn(None);
    child.expect("== approve? Shop.pay");
    child.expect("Enter for more, n to deny");
    // `y` before the last page is not an answer: approval comes after everything was shown.
    child.type_line("y");
    child.expect("Enter for more, n to deny");
    child.type_line("");
    child.expect("Enter for more, n to deny");
    child.type_line("");
    child.expect("line 60 of the memo");
    child.expect("approve Shop.pay? [y]es / [n]o: ");
    child.type_line("maybe");
    child.expect("please answer y or n");
    child.type_line("y");
    child.expect("approved");
    assert!(child.seen.contains("line 1 of the memo") && child.seen.contains("line 30 of the memo"));
    assert_eq!(child.answer(), "Yes");
}

#[test]
fn n_on_any_page_denies() {
    let mut child = spawn(None);
    child.expect("Enter for more, n to deny");
    child.type_line("n");
    child.expect("denied");
    assert_eq!(child.answer(), "No");
}

#[test]
fn a_terminal_closed_mid_card_is_a_denial() {
    let mut child = spawn(Some("Enter for more, n to deny"));
    child.expect("Enter for more, n to deny");
    // The terminal goes away before any answer.
    assert_eq!(child.answer(), "No");
}

#[test]
fn no_terminal_no_terminal_approver() {
    // Under `cargo test` standard input is not a terminal here, unless the developer runs the
    // tests from one with input attached; only the refusal is checked, where it applies.
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        let e = Terminal::stdio().unwrap_err();
        assert!(e.to_string().contains("not a terminal"), "{e}");
    }
}
