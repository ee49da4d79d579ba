//! The store end to end: `cordon run` and `cordon ask` record each request (its effects with
//! two rows each, fills, refusals, its end, its transcript); `cordon audit verify` finds an edit
//! and names the row; `audit show` tells a request; a store that cannot be written performs
//! nothing; processes share a store; a session file round-trips through the store's session,
//! which one run at a time may hold. Every test uses a store in its own directory, never the
//! user's.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::path::{Path, PathBuf};
use std::process::Stdio;

use cordon_store::{Durability, EffectIntent, NewRequest, SqliteStore, Status, Store};
use serde_json::Value;

mod common;

use common::{command, cordon, workdir as dir_of, yes};

/// A fresh directory for one test.
fn workdir(test: &str) -> PathBuf {
    dir_of("cli-store", test)
}

/// The path of a GitHub example plan.
fn example(name: &str) -> String {
    common::example(&format!("github/{name}"))
}

fn open(dir: &Path) -> SqliteStore {
    SqliteStore::open(&dir.join("cordon.db"), Durability::SurvivesCrash).unwrap()
}

/// Each row of the whole log in brief: its kind, and an effect's tool.
fn kinds(store: &SqliteStore) -> Vec<String> {
    store
        .rows(1, 1000)
        .unwrap()
        .iter()
        .map(|r| {
            let content: Value = serde_json::from_str(&r.content).unwrap();
            match (r.kind.as_str(), content["tool"].as_str()) {
                ("effect", Some(tool)) => format!("effect {tool}"),
                ("refused", Some(tool)) => format!("refused {tool}"),
                ("status", _) => format!("status {}", content["status"].as_str().unwrap()),
                (kind, _) => kind.to_string(),
            }
        })
        .collect()
}

#[test]
fn a_run_writes_its_request_each_effect_before_and_after_and_its_end() {
    let dir = workdir("run_recorded");
    let run = cordon(&dir, &["run", "--approve", &yes(&dir), &example("benign.cord")]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("recorded as request 1 (`cordon audit show --request 1`)"), "{}", run.stdout);
    let store = open(&dir);
    assert_eq!(
        kinds(&store),
        [
            "request",
            "effect GitHub.repo",
            "outcome",
            "effect GitHub.list_issues",
            "outcome",
            "decision",
            "effect GitHub.create_issue",
            "outcome",
            "status done",
        ]
    );
    // The card, and how it was answered, is a row of its own before the effect's.
    let decision: Value = serde_json::from_str(&store.rows(6, 1).unwrap()[0].content).unwrap();
    assert_eq!(decision["stage"], "gate", "{decision}");
    assert_eq!(decision["outcome"], "approved", "{decision}");
    assert_eq!(decision["answer"], "yes", "{decision}");
    assert_eq!(decision["approver"], "scripted", "{decision}");
    assert_eq!(decision["card"]["action"], "create issue", "{decision}");
    assert!(decision["card"].get("content").is_none(), "a card's values stay out of the log: {decision}");
    let request = &store.requests(10).unwrap()[0];
    assert_eq!((request.principal.as_str(), request.status), ("alice", Some(Status::Done)));
    assert!(request.text.ends_with("benign.cord"), "{request:?}");
    // The transcript holds the request's events, as a JSONL transcript's lines.
    let transcript = store.transcript(request.id).unwrap();
    assert_eq!(transcript[0]["event"], "request_started");
    assert_eq!(transcript[0]["v"], 1);
    assert_eq!(transcript.last().unwrap()["event"], "run_ended");
    let decided = transcript.iter().filter(|l| l["event"] == "stage_decided" && l["stage"] == "audit").count();
    assert_eq!(decided, 3, "the audit stage decided each effect");
    // The gate's lines carry its record of each decision (`note`), as the transcript's format says.
    let notes: Vec<(String, String, String)> = transcript
        .iter()
        .filter(|l| l["event"] == "stage_decided" && l["stage"] == "gate")
        .map(|l| {
            let note = &l["note"];
            let text = |key: &str| note[key].as_str().unwrap_or("-").to_string();
            (text("tool"), text("outcome"), text("approver"))
        })
        .collect();
    let note = |tool: &str, outcome: &str, approver: &str| (tool.into(), outcome.into(), approver.into());
    assert_eq!(
        notes,
        [
            note("GitHub.repo", "allowed", "-"),
            note("GitHub.list_issues", "allowed", "-"),
            note("GitHub.create_issue", "approved", "scripted"),
        ]
    );

    // A blocked call is a `refused` row; the run's end is `failed`.
    let blocked = cordon(&dir, &["run", "--format", "json", &example("injected_issue.cord")]);
    assert_eq!(blocked.code, 1, "{blocked:?}");
    let json: Value = serde_json::from_str(&blocked.stdout).unwrap();
    assert_eq!(json["request"], 2);
    assert_eq!(
        kinds(&store)[9..],
        [
            "request",
            "effect GitHub.repo",
            "outcome",
            "effect GitHub.list_issues",
            "outcome",
            "refused GitHub.create_issue",
            "status failed"
        ]
    );
}

#[test]
fn audit_show_lists_the_effects_of_a_request() {
    let dir = workdir("show");
    assert_eq!(cordon(&dir, &["run", "--approve", &yes(&dir), &example("benign.cord")]).code, 0);
    assert_eq!(cordon(&dir, &["run", &example("injected_issue.cord")]).code, 1);

    let show = cordon(&dir, &["audit", "show", "--request", "1", "--format", "json"]);
    assert_eq!(show.code, 0, "{show:?}");
    let json: Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(json["request"]["id"], 1);
    assert_eq!(json["request"]["status"], "done");
    let effects: Vec<(&str, &str)> = json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "effect")
        .map(|e| (e["content"]["tool"].as_str().unwrap(), e["outcome"]["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        effects,
        [("GitHub.repo", "performed"), ("GitHub.list_issues", "performed"), ("GitHub.create_issue", "performed")]
    );
    assert_eq!(json["entries"][1]["content"]["args"], serde_json::json!({ "owner": "alice", "name": "website" }));

    // Without a number, the latest request, for people.
    let show = cordon(&dir, &["audit", "show"]);
    assert_eq!(show.code, 0, "{show:?}");
    assert!(show.stdout.starts_with("request 2: failed\n"), "{}", show.stdout);
    assert!(show.stdout.contains("GitHub.list_issues(r: {\"internal\":false,\"name\":\"website\""), "{}", show.stdout);
    assert!(show.stdout.contains("performed: a "), "{}", show.stdout);
    assert!(show.stdout.contains("refused        GitHub.create_issue by the boundary [label-flow]"), "{}", show.stdout);
    // The log never holds a refused call's arguments: here, the injected text it would have
    // posted.
    assert!(!show.stdout.contains("IMPORTANT NOTE"), "{}", show.stdout);

    let missing = cordon(&dir, &["audit", "show", "--request", "9"]);
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(missing.stderr.contains("the store holds no request 9"), "{}", missing.stderr);
}

#[test]
fn an_effect_without_its_outcome_is_shown_as_unknown() {
    let dir = workdir("unknown");
    let store = open(&dir);
    let id = store.begin_request(&NewRequest { text: "crashed", principal: "alice", session: None }).unwrap();
    let intent = EffectIntent {
        tool: "GitHub.comment".into(),
        args: serde_json::json!({ "body": "hi" }),
        decision: "allowed".into(),
        approved_by: None,
        labels: serde_json::json!({}),
        stages: Vec::new(),
    };
    // The process stopped between the two rows.
    drop(store.begin_effect(Some(id), &intent).unwrap());
    let show = cordon(&dir, &["audit", "show"]);
    assert_eq!(show.code, 0, "{show:?}");
    assert!(show.stdout.contains("GitHub.comment(body: \"hi\")"), "{}", show.stdout);
    assert!(show.stdout.contains("OUTCOME UNKNOWN: no outcome row"), "{}", show.stdout);
    let json = cordon(&dir, &["audit", "show", "--format", "json"]);
    let json: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["entries"][1]["outcome"]["status"], "unknown");
}

#[test]
fn audit_verify_passes_then_names_the_row_an_edit_broke() {
    let dir = workdir("verify");
    assert_eq!(cordon(&dir, &["run", "--approve", &yes(&dir), &example("benign.cord")]).code, 0);
    let verify = cordon(&dir, &["audit", "verify"]);
    assert_eq!(verify.code, 0, "{verify:?}");
    assert!(verify.stdout.starts_with("intact: 9 rows, head 9:"), "{}", verify.stdout);
    let head = cordon(&dir, &["audit", "head"]);
    assert_eq!(head.code, 0, "{head:?}");
    let checkpoint = head.stdout.trim().to_string();
    assert!(verify.stdout.contains(&checkpoint), "{} {checkpoint}", verify.stdout);

    // Someone with the file changes what the third row says was done.
    let raw = rusqlite::Connection::open(dir.join("cordon.db")).unwrap();
    raw.execute("UPDATE audit SET content = replace(content, 'list_issues', 'list_repos') WHERE seq = 4", []).unwrap();
    let verify = cordon(&dir, &["audit", "verify"]);
    assert_eq!(verify.code, 1, "{verify:?}");
    assert!(verify.stdout.starts_with("BROKEN at row 4: row 4 does not match its hash"), "{}", verify.stdout);

    // Put back, then cut the log's tail off: only the checkpoint kept elsewhere tells.
    raw.execute("UPDATE audit SET content = replace(content, 'list_repos', 'list_issues') WHERE seq = 4", []).unwrap();
    raw.execute("DELETE FROM audit WHERE seq > 6", []).unwrap();
    assert_eq!(cordon(&dir, &["audit", "verify"]).code, 0);
    let verify = cordon(&dir, &["audit", "verify", "--checkpoint", &checkpoint]);
    assert_eq!(verify.code, 1, "{verify:?}");
    assert!(verify.stdout.contains("rows 7..=9 are gone"), "{}", verify.stdout);
}

#[test]
fn a_store_that_cannot_be_opened_stops_the_run_before_anything_runs() {
    let dir = workdir("unopenable");
    // Garbage where the store should be.
    std::fs::write(dir.join("garbage.db"), "this is not a database, it is a shopping list\n".repeat(200)).unwrap();
    let run = cordon(&dir, &["run", "--store", "garbage.db", &example("benign.cord")]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("cannot open the store at garbage.db: the file is not an SQLite database"), "{run:?}");
    assert_eq!(run.stdout, "", "nothing ran");

    // A store written by a newer Cordon.
    let newer = dir.join("newer.db");
    drop(SqliteStore::open(&newer, Durability::SurvivesCrash).unwrap());
    rusqlite::Connection::open(&newer).unwrap().pragma_update(None, "user_version", 99).unwrap();
    let run = cordon(&dir, &["run", "--store", "newer.db", &example("benign.cord")]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("its schema version is 99, newer than"), "{run:?}");
    assert_eq!(run.stdout, "");

    // A store whose directory cannot be made (a file stands in the way).
    std::fs::write(dir.join("file"), "").unwrap();
    let run = cordon(&dir, &["run", "--store", "file/cordon.db", &example("benign.cord")]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("cannot open the store at file/cordon.db: file"), "{run:?}");

    // The commands that read a store never make one.
    let verify = cordon(&dir, &["audit", "verify", "--store", "none.db"]);
    assert_eq!(verify.code, 2, "{verify:?}");
    assert!(verify.stderr.contains("no store at `none.db`"), "{verify:?}");
    assert!(!dir.join("none.db").exists());
}

#[test]
fn an_effect_whose_row_cannot_be_written_is_not_performed() {
    let dir = workdir("unwritable");
    drop(open(&dir));
    // The disk is full by the time the first effect's row is written.
    let raw = rusqlite::Connection::open(dir.join("cordon.db")).unwrap();
    raw.execute_batch(
        "CREATE TRIGGER full BEFORE INSERT ON audit WHEN NEW.kind = 'effect' \
         BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
    )
    .unwrap();
    let run = cordon(&dir, &["run", "--approve", &yes(&dir), &example("benign.cord")]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(!run.stdout.contains("allowed"), "nothing was performed: {}", run.stdout);
    assert!(run.stdout.contains("BLOCKED  GitHub.repo("), "{}", run.stdout);
    assert!(run.stdout.contains("not performed: its audit row could not be written"), "{}", run.stdout);
    assert!(run.stderr.contains("the store could not record the request"), "{}", run.stderr);
    assert!(run.stderr.contains("database or disk is full"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let store = open(&dir);
    assert_eq!(kinds(&store), ["request", "refused GitHub.repo", "status failed"]);
}

#[test]
fn two_processes_on_one_store_both_finish_and_the_chain_verifies() {
    let dir = workdir("concurrent");
    let plans = ["benign.cord", "comment_on_issue.cord", "thank_newest_author.cord", "injected_issue.cord"];
    // One answers file, written before any child reads it.
    let yes = yes(&dir);
    let children: Vec<_> = plans
        .iter()
        .map(|plan| {
            let approve = if plan.starts_with("injected") { "none".to_string() } else { yes.clone() };
            command(&dir, &["run", "--approve", &approve, &example(plan)])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (child, plan) in children.into_iter().zip(plans) {
        let output = child.wait_with_output().unwrap();
        let expected = if plan.starts_with("injected") { 1 } else { 0 };
        assert_eq!(output.status.code(), Some(expected), "{plan}: {}", String::from_utf8_lossy(&output.stderr));
    }
    let verify = cordon(&dir, &["audit", "verify"]);
    assert_eq!(verify.code, 0, "{verify:?}");
    let store = open(&dir);
    let requests = store.requests(10).unwrap();
    assert_eq!(requests.len(), 4);
    // Each request's rows, interleaved with the others' or not, tell its whole story.
    for request in requests {
        let log = store.show(request.id).unwrap();
        assert!(log.entries.iter().all(
            |e| e.kind != "effect" || e.outcome.as_ref().is_some_and(|o| *o != cordon_store::EffectStatus::Unknown)
        ));
        assert!(matches!(request.status, Some(Status::Done | Status::Failed)), "{request:?}");
    }
}

const READ_PRIVATE: &str = r#"match gh.private_repo("secret-plans") {
  Some(r) => {
    let (text, s) = gh.read_file(s, r, "roadmap.md");
    ("read it", s)
  },
  None => ("no repository", s),
}
"#;

/// The store's name for the session file `name` in `dir`.
fn session_name(dir: &Path, name: &str) -> String {
    format!("file:{}", dir.canonicalize().unwrap().join(name).display())
}

#[test]
fn a_session_file_round_trips_through_the_stores_session() {
    let dir = workdir("session");
    std::fs::write(dir.join("read.cord"), READ_PRIVATE).unwrap();
    let first = cordon(&dir, &["run", "--session", "session.json", "read.cord"]);
    assert_eq!(first.code, 0, "{first:?}");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("session.json")).unwrap()).unwrap();
    assert_eq!(file["values"]["s"]["measures"]["tainted"], true, "{file}");
    let store = open(&dir);
    let name = session_name(&dir, "session.json");
    assert_eq!(store.load_session(&name).unwrap(), Some(file.clone()), "exported to the file and kept in the store");
    assert_eq!(store.requests(1).unwrap()[0].session.as_deref(), Some(name.as_str()));
    let listed = store.sessions().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].held_by, None, "given back after the run");

    // The next run reads the taint: refused before it runs.
    let second =
        cordon(&dir, &["run", "--session", "./session.json", "--approve", &yes(&dir), &example("benign.cord")]);
    assert_eq!(second.code, 1, "{second:?}");
    assert!(second.stdout.contains("refinement-unproven"), "{}", second.stdout);

    // The file is what the session holds: a user who deletes it starts afresh.
    std::fs::remove_file(dir.join("session.json")).unwrap();
    let fresh = cordon(&dir, &["run", "--session", "session.json", "--approve", &yes(&dir), &example("benign.cord")]);
    assert_eq!(fresh.code, 0, "{fresh:?}");
    let state = store.load_session(&name).unwrap().unwrap();
    assert_eq!(state["values"]["s"]["measures"]["tainted"], false, "{state}");
}

#[test]
fn a_session_another_run_holds_is_refused_with_the_stores_error() {
    let dir = workdir("session_busy");
    assert_eq!(
        cordon(&dir, &["run", "--session", "session.json", "--approve", &yes(&dir), &example("benign.cord")]).code,
        0
    );
    let before = std::fs::read_to_string(dir.join("session.json")).unwrap();
    let store = open(&dir);
    // This test's process is the other run.
    let lock = store.lock_session(&session_name(&dir, "session.json")).unwrap();
    let run = cordon(&dir, &["run", "--session", "session.json", "--approve", &yes(&dir), &example("benign.cord")]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("is in use by another run"), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("process {}", std::process::id())), "{}", run.stderr);
    assert_eq!(run.stdout, "", "nothing ran");
    assert_eq!(store.requests(10).unwrap().len(), 1, "nothing recorded");
    assert_eq!(std::fs::read_to_string(dir.join("session.json")).unwrap(), before, "the file is untouched");

    store.unlock_session(lock).unwrap();
    let run = cordon(&dir, &["run", "--session", "session.json", "--approve", &yes(&dir), &example("benign.cord")]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn a_request_to_a_model_records_its_fills() {
    let dir = workdir("ask");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ask_count_issues.json");
    let model = format!("scripted:{}", fixture.display());
    let ask = cordon(&dir, &["ask", "How many open issues does alice/website have?", "--model", &model]);
    assert_eq!(ask.code, 0, "{ask:?}");
    assert!(ask.stdout.contains("recorded as request 1"), "{}", ask.stdout);
    let store = open(&dir);
    assert_eq!(
        kinds(&store),
        ["request", "fill", "effect GitHub.repo", "outcome", "effect GitHub.list_issues", "outcome", "status done"]
    );
    let show = cordon(&dir, &["audit", "show"]);
    assert!(show.stdout.contains("text     How many open issues does alice/website have?"), "{}", show.stdout);
    assert!(show.stdout.contains("fill           hole 0, attempt 2"), "{}", show.stdout);
    assert!(show.stdout.contains("|     let (issues, s) = gh.list_issues(s, r);"), "{}", show.stdout);
    // The transcript keeps the rejected first attempt, with what the model was told.
    let transcript = store.transcript(store.requests(1).unwrap()[0].id).unwrap();
    assert!(transcript.iter().any(|l| l["event"] == "fill_rejected"), "{transcript:?}");
}

#[test]
fn gc_removes_old_transcripts_and_keeps_every_audit_row() {
    let dir = workdir("gc");
    assert_eq!(cordon(&dir, &["run", "--approve", &yes(&dir), &example("benign.cord")]).code, 0);
    let kept = cordon(&dir, &["store", "gc", "--older-than", "30d"]);
    assert_eq!(kept.code, 0, "{kept:?}");
    assert_eq!(kept.stdout, "removed the transcripts of 0 requests (0 events); audit rows are kept\n");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let gc = cordon(&dir, &["store", "gc", "--older-than", "0s"]);
    assert_eq!(gc.code, 0, "{gc:?}");
    assert!(gc.stdout.starts_with("removed the transcripts of 1 request ("), "{}", gc.stdout);
    let store = open(&dir);
    assert!(store.transcript(store.requests(1).unwrap()[0].id).unwrap().is_empty());
    assert_eq!(kinds(&store).len(), 9);
    assert_eq!(cordon(&dir, &["audit", "verify"]).code, 0);
    let bad = cordon(&dir, &["store", "gc", "--older-than", "30"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(bad.stderr.contains("write a number and a unit"), "{}", bad.stderr);
}

#[test]
fn the_demo_writes_no_store() {
    let dir = workdir("demo");
    let demo = cordon(&dir, &["demo"]);
    assert_eq!(demo.code, 0, "{demo:?}");
    assert!(demo.stdout.contains("=> intact: "), "{}", demo.stdout);
    assert!(!dir.join("cordon.db").exists());
}

/// A session file, a transcript or a store another user may have written, or that is a link
/// to somewhere else, is refused before anything runs, naming the file; one Cordon makes is
/// the user's alone.
#[test]
fn files_others_may_write_or_that_are_links_are_refused_and_new_ones_are_private() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = workdir("private");
    std::fs::write(dir.join("read.cord"), READ_PRIVATE).unwrap();
    let first = cordon(&dir, &["run", "--session", "session.json", "read.cord"]);
    assert_eq!(first.code, 0, "{first:?}");
    for file in ["session.json", "cordon.db"] {
        assert_eq!(std::fs::metadata(dir.join(file)).unwrap().mode() & 0o777, 0o600, "{file}");
    }

    std::fs::set_permissions(dir.join("session.json"), PermissionsExt::from_mode(0o666)).unwrap();
    let swapped = cordon(&dir, &["run", "--session", "session.json", "read.cord"]);
    assert_eq!(swapped.code, 2, "{swapped:?}");
    assert!(swapped.stderr.contains("session.json: it is writable by others (mode 0666)"), "{}", swapped.stderr);

    std::fs::remove_file(dir.join("session.json")).unwrap();
    std::fs::write(dir.join("elsewhere.json"), "{}").unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere.json"), dir.join("session.json")).unwrap();
    let linked = cordon(&dir, &["run", "--session", "session.json", "read.cord"]);
    assert_eq!(linked.code, 2, "{linked:?}");
    assert!(linked.stderr.contains("session.json: it is a symbolic link"), "{}", linked.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("elsewhere.json")).unwrap(), "{}", "nothing written through it");

    std::fs::set_permissions(dir.join("cordon.db"), PermissionsExt::from_mode(0o666)).unwrap();
    let store = cordon(&dir, &["run", "read.cord"]);
    assert_eq!(store.code, 2, "{store:?}");
    assert!(store.stderr.contains("cordon.db: it is writable by others (mode 0666)"), "{}", store.stderr);
    let audit = cordon(&dir, &["audit", "verify"]);
    assert_eq!(audit.code, 2, "{audit:?}");
}

/// A store's path is a file's, whatever it looks like to SQLite: `:memory:` and a `file:` URI
/// naming another file are stores of those names in the working directory, made private, and
/// the file a URI names is never made or opened.
#[test]
fn a_store_path_sqlite_would_read_otherwise_names_a_private_file() {
    use std::os::unix::fs::MetadataExt;
    let dir = workdir("uri");
    std::fs::write(dir.join("read.cord"), READ_PRIVATE).unwrap();
    for name in [":memory:", "file:elsewhere.db?mode=rwc"] {
        let run = cordon(&dir, &["run", "--store", name, "read.cord"]);
        assert_eq!(run.code, 0, "{name}: {run:?}");
        assert_eq!(std::fs::metadata(dir.join(name)).unwrap().mode() & 0o777, 0o600, "{name}");
        let audit = cordon(&dir, &["audit", "verify", "--store", name]);
        assert_eq!(audit.code, 0, "{name}: the store is the file, and holds the run: {audit:?}");
    }
    assert!(!dir.join("elsewhere.db").exists(), "the file the URI names is not the store");
}

/// Ctrl-C while a run waits at a card: the terminal says the request is recorded as
/// interrupted, the process ends as a Ctrl-C ends it (130), and `audit show` says interrupted,
/// not running, with the status row in the chain.
#[test]
fn ctrl_c_at_a_card_records_the_request_as_interrupted() {
    let dir = workdir("interrupted");
    let store = dir.join("cordon.db");
    let plan = common::example("shop/pay_tea_house.cord");
    let args: Vec<&std::ffi::OsStr> = ["run", "--env", "shop", &plan, "--store"]
        .into_iter()
        .map(std::ffi::OsStr::new)
        .chain([store.as_os_str()])
        .collect();
    let steps = serde_json::json!([["expect", "approve "], ["signal", "INT"]]);
    let (shown, code) = common::at_a_terminal(&steps, &args);
    assert_eq!(code, Some(130), "{shown}");
    assert!(shown.contains("cordon: interrupted: request 1 is recorded as interrupted"), "{shown}");
    let show = cordon(&dir, &["audit", "show", "--request", "1"]);
    assert!(show.stdout.starts_with("request 1: interrupted\n"), "{}", show.stdout);
    let status = open(&dir).rows(1, 100).unwrap().into_iter().rfind(|r| r.kind == "status").unwrap();
    assert_eq!(status.content, r#"{"status":"interrupted"}"#);
    assert_eq!(cordon(&dir, &["audit", "verify"]).code, 0);
}
