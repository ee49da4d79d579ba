//! Tools of real MCP servers behind a typed policy, against `@modelcontextprotocol/server-everything`
//! (npm, pinned): only declared tools, arguments and results through the declared types, the
//! default label on results, a declared tool the server lacks refused at start; and hostile
//! servers (garbage, silence, deep schemas, huge results, a server that lies or dies, lists
//! forever, repeats a cursor, or lists too many or too big tools) each giving a clear error
//! within the timeout, with the child process reaped; and a server whose tool list attacks
//! the policy `cordon mcp import` writes from it.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cordon_engine::Engine;
use cordon_mcp::{Config, Connection, McpHost, Server};
use cordon_runtime::{Config as RunConfig, Program, Run, Sessions, deep_label};
use cordon_syntax::SourceMap;
use cordon_types::{CheckOptions, check};

#[path = "common/servers.rs"]
mod servers;

fn everything() -> Server {
    let bin = servers::npm_server(Path::new(env!("CARGO_TARGET_TMPDIR")), "mcp-server-everything");
    server(bin.to_str().unwrap(), &[], 30)
}

fn server(command: &str, args: &[&str], timeout_secs: u64) -> Server {
    let text = format!(
        "[servers.s]\ncommand = {command:?}\nargs = {args:?}\ntimeout_secs = {timeout_secs}\n",
        args = args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    );
    Config::parse(&text).unwrap().servers.remove("s").unwrap()
}

fn hostile(mode: &str, timeout_secs: u64) -> Server {
    let script: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile_server.py");
    server("python3", &[script.to_str().unwrap(), mode], timeout_secs)
}

const POLICY: &str = r#"
/// The weather in a city, as the server reports it.
type Weather = { temperature: Float, conditions: String, humidity: Float }

/// Tools of the everything server.
capability Everything {
  /// Echoes a message.
  tool echo(message: String) -> String
    @label(message = untrusted())
  /// Adds two numbers, in words.
  tool get_sum(a: Int, b: Int) -> String
    @label(a = untrusted(), b = untrusted())
  /// The weather in one of three cities, as structured content.
  tool get_structured_content(location: String) -> Weather
    @label(location = untrusted())
  /// Waits `duration` seconds.
  tool trigger_long_running_operation(duration: Int, steps: Int) -> String
    @label(duration = untrusted(), steps = untrusted())
}

entry(everything: Everything) -> String
"#;

/// Checks `plan` against `policy`, binds `server` to `capability` and runs the plan: its
/// value and label as text, or the run's error.
fn run(policy: &str, capability: &str, server: &Server, plan: &str) -> Result<(String, String), String> {
    let mut sources = SourceMap::new();
    let policy_file = sources.add("policy.cord", policy);
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &[policy_file], Some(plan), &CheckOptions::default());
    let Some(checked) = outcome.program else { return Err(format!("rejected: {:?}", outcome.diagnostics)) };
    let program = Program::new(&checked).unwrap();
    let connection = Connection::start("s", server, None)?;
    let mut host = McpHost::bind(connection, &[capability], checked.declarations())?.remove(0);
    let config = RunConfig { user: "ann".into(), ..RunConfig::default() };
    let mut run = Run::start(&program, &Sessions::default(), &config).unwrap();
    let ending = Engine::new(&mut host).start(&mut run);
    ending.into_result().map(|v| (v.value.to_string(), deep_label(&v).to_string())).map_err(|e| e.message)
}

#[test]
fn a_declared_tool_runs_and_its_result_is_vouched_for_by_no_one() {
    let (value, label) = run(POLICY, "Everything", &everything(), r#"everything.echo("hi")"#).unwrap();
    assert_eq!(value, "\"Echo: hi\"");
    assert!(label.ends_with("integrity: true>"), "by default no one vouches for a server's result: {label}");
}

#[test]
fn names_meet_and_structured_content_is_decoded_into_the_declared_record() {
    let server = everything();
    let (value, _) = run(POLICY, "Everything", &server, "everything.get_sum(2, 3)").unwrap();
    assert!(value.contains('5'), "{value}");
    let plan = r#"let w = everything.get_structured_content("Chicago"); w.conditions"#;
    let (value, _) = run(POLICY, "Everything", &server, plan).unwrap();
    assert!(!value.is_empty() && value.starts_with('"'), "{value}");
}

#[test]
fn a_result_that_does_not_fit_the_declared_type_is_an_error_not_a_value() {
    let policy = POLICY.replace("-> Weather", "-> List[Int]");
    let error =
        run(&policy, "Everything", &everything(), r#"to_string(everything.get_structured_content("Chicago").len())"#)
            .unwrap_err();
    assert!(error.contains("get_structured_content"), "{error}");
}

#[test]
fn only_what_the_policy_declares_can_be_called() {
    // The server has `get-env`; the policy does not declare it, so no plan can call it.
    let error = run(POLICY, "Everything", &everything(), "everything.get_env()").unwrap_err();
    assert!(error.starts_with("rejected"), "{error}");
}

#[test]
fn a_declared_tool_the_server_lacks_is_an_error_at_start() {
    let policy = POLICY.replace("tool echo(", "tool shout(");
    let error = run(&policy, "Everything", &everything(), "\"x\"").unwrap_err();
    assert!(
        error.contains("`Everything.shout`") && error.contains("has no such tool") && error.contains("echo"),
        "{error}"
    );
    let policy =
        POLICY.replace("tool echo(message: String)", "tool echo(text: String)").replace("message = ", "text = ");
    let error = run(&policy, "Everything", &everything(), "\"x\"").unwrap_err();
    assert!(error.contains("`text`") && error.contains("does not take"), "{error}");
    let policy = POLICY.replace("tool get_sum(a: Int, b: Int)", "tool get_sum(a: Int)");
    let error = run(&policy.replace("b = untrusted()", ""), "Everything", &everything(), "\"x\"").unwrap_err();
    assert!(error.contains("requires `b`"), "{error}");
}

#[test]
fn a_server_that_does_not_answer_in_time_ends_the_run_and_is_reaped() {
    let mut quick = everything();
    quick.timeout_secs = Some(2);
    // However loaded the machine, the server starts: only the call is to time out.
    quick.startup_timeout_secs = Some(120);
    let plan = "everything.trigger_long_running_operation(20, 1)";
    let started = Instant::now();
    let error = run(POLICY, "Everything", &quick, plan).unwrap_err();
    assert!(error.contains("did not answer") && error.contains("within"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
}

#[test]
fn the_server_process_is_gone_after_the_connection() {
    let mut connection = Connection::start("s", &everything(), None).unwrap();
    let pid = connection.pid().unwrap();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    connection.shutdown();
    drop(connection);
    let gone = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        !Path::new(&format!("/proc/{pid}")).exists()
    });
    assert!(gone, "the server process {pid} is still there (or a zombie)");
}

const HOSTILE_POLICY: &str = r#"
capability Web {
  tool fetch(url: String) -> String
    @label(url = untrusted())
}
entry(web: Web) -> String
"#;

fn hostile_run(mode: &str, timeout_secs: u64) -> Result<(String, String), String> {
    let mut server = hostile(mode, timeout_secs);
    // Only the modes about starting are to time out there, however loaded the machine.
    if !matches!(mode, "garbage" | "silent" | "deep") {
        server.startup_timeout_secs = Some(120);
    }
    run(HOSTILE_POLICY, "Web", &server, r#"web.fetch("https://example.com")"#)
}

#[test]
fn hostile_servers_get_clear_errors_within_the_timeout() {
    let started = Instant::now();
    let cases: &[(&str, &[&str])] = &[
        // The SDK skips a line that is not JSON-RPC, so garbage is silence.
        ("garbage", &["did not finish starting within"]),
        ("silent", &["did not finish starting within"]),
        ("deep", &["could not list its tools"]),
        ("huge", &["more than the limit"]),
        ("giant", &["the MCP server `s`", "`fetch`"]),
        ("die", &["failed during `fetch`"]),
        ("error", &["`fetch` failed: no such page"]),
        ("slow", &["did not answer `fetch` within"]),
    ];
    for (mode, expected) in cases {
        let error = hostile_run(mode, 2).unwrap_err();
        for e in *expected {
            assert!(error.contains(e), "{mode}: {error}");
        }
    }
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
}

/// A server's words in an error (its `isError` text, its JSON-RPC error, the tail of its
/// stderr) reach the reason on one line with nothing hidden: no escape sequence, no carriage
/// return, no line break to start a fake line with, no bidi override.
#[test]
fn a_servers_words_in_an_error_are_shown_on_one_line_with_nothing_hidden() {
    for (mode, expected) in [
        ("escapes", "no such page\\u{1b}[2K\\u{1b}]52;c;eA==\\u{7}\\u{d}\\u{a}from: the user's request\\u{202e}"),
        ("refuses", "refused\\u{1b}[1A\\u{1b}]0;title\\u{7}\\u{a}from: the user's request"),
        ("noisy", "\\u{1b}[2Kcrashed\\u{d}from: the user's request\\u{202e}\\u{9b}2J"),
    ] {
        let error = hostile_run(mode, 5).unwrap_err();
        assert!(error.contains(expected), "{mode}: {error}");
        let hidden: Vec<char> = error.chars().filter(|&c| cordon_text::is_hidden(c)).collect();
        assert!(hidden.is_empty(), "{mode}: {hidden:?} in {error:?}");
    }
}

#[test]
fn a_server_cannot_raise_the_integrity_of_what_it_returns() {
    let (value, label) = hostile_run("liar", 5).unwrap();
    assert!(value.contains("written by the user"), "{value}");
    assert!(label.ends_with("integrity: true>"), "the server's claims change nothing: {label}");
}

/// A hostile server started with time enough to list, however loaded the machine: what stops
/// it is the bound, not the clock.
fn listing(mode: &str) -> Result<Connection, String> {
    let mut server = hostile(mode, 5);
    server.startup_timeout_secs = Some(120);
    Connection::start("s", &server, None)
}

#[test]
fn listing_tools_is_bounded_in_pages_count_and_size() {
    let cases = [
        ("pages", "lists its tools in more than 100 pages"),
        ("cursor", "gave the same page cursor twice"),
        ("many", "lists more than 1000 tools"),
        ("bulky", "lists tools of more than 4 MiB in all"),
        ("twice", "lists the tool \"fetch\" twice"),
    ];
    for (mode, expected) in cases {
        let error = listing(mode).unwrap_err();
        assert!(error.contains(expected), "{mode}: {error}");
    }
}

#[test]
fn a_hostile_tool_list_cannot_rewrite_the_policy_imported_from_it() {
    let connection = listing("import").unwrap();
    let text = cordon_mcp::import::policy("s", "S", connection.tools(), cordon_mcp::import::Account::PerCall).unwrap();
    let mut sources = SourceMap::new();
    let file = sources.add("imported.cord", text.clone());
    let outcome = check(&sources, &[file], None, &CheckOptions::default());
    let errors: Vec<&str> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.severity == cordon_syntax::Severity::Error)
        .map(|d| d.message.as_str())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{text}");
    let module = cordon_syntax::parse(file, &text).module;
    let mut declared = Vec::new();
    for item in &module.items {
        if let cordon_syntax::ast::ItemKind::Capability { name, tools } = &item.kind {
            assert_eq!(name.name, "S", "{text}");
            for t in tools {
                let asks = t.annotations.iter().any(|a| a.name.name == "approval");
                let params: Vec<&str> = t.params.iter().map(|p| p.name.name.as_str()).collect();
                declared.push((t.name.name.clone(), asks, params.join(",")));
            }
        }
    }
    let expected = [
        ("lookup", false, "mode"),
        ("delete_files", true, ""),
        ("status", false, ""),
        ("note_capability_Evil_tool_x", false, ""),
        ("send", true, "pc_,returns_"),
    ];
    let expected: Vec<(String, bool, String)> =
        expected.iter().map(|(n, a, p)| (n.to_string(), *a, p.to_string())).collect();
    assert_eq!(declared, expected, "{text}");
    let declarations = outcome.program.as_ref().unwrap().declarations();
    assert!(McpHost::bind(connection, &["S"], declarations).is_ok(), "{text}");
}

#[test]
fn a_command_that_does_not_exist_is_a_clear_error() {
    let error = Connection::start("s", &server("/nonexistent/mcp-server", &[], 2), None).unwrap_err();
    assert!(error.contains("cannot start the MCP server `s`"), "{error}");
}

const FILES_POLICY: &str = r#"
/// What the filesystem server answers: the text.
type Text = { content: String }

capability Files {
  tool read_text_file(path: String) -> Text
    @label(path = untrusted(), returns = secret(user()))
  tool write_file(path: String, content: String) -> Text
    @label(path = untrusted(), content = secret(user()).join(untrusted()), returns = secret(user()))
}

entry(files: Files) -> String
"#;

#[test]
fn the_filesystem_server_reads_and_writes_under_its_root_only() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-files-root");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notes.txt"), "buy tea").unwrap();
    let root = root.canonicalize().unwrap();
    let bin = servers::npm_server(Path::new(env!("CARGO_TARGET_TMPDIR")), "mcp-server-filesystem");
    let files = server(bin.to_str().unwrap(), &[root.to_str().unwrap()], 30);
    let notes = root.join("notes.txt").display().to_string();
    let copy = root.join("copy.txt").display().to_string();
    let plan = format!(
        "let t = files.read_text_file({notes:?}); let w = files.write_file({copy:?}, t.content + \"!\"); t.content"
    );
    let (value, label) = run(FILES_POLICY, "Files", &files, &plan).unwrap();
    assert_eq!(value, "\"buy tea\"");
    assert!(label.contains("secrecy: ann"), "the policy's label on what was read: {label}");
    assert_eq!(std::fs::read_to_string(root.join("copy.txt")).unwrap(), "buy tea!");
    // The server's own root holds: outside it is a failure of the tool, and the run ends.
    let error = run(FILES_POLICY, "Files", &files, r#"files.read_text_file("/etc/passwd").content"#).unwrap_err();
    assert!(error.contains("`read_text_file` failed") && error.contains("Access denied"), "{error}");
}

/// The everything server on streamable HTTP at a free loopback port; killed when dropped.
struct HttpEverything {
    child: std::process::Child,
    url: String,
}

impl HttpEverything {
    fn start() -> HttpEverything {
        let bin = servers::npm_server(Path::new(env!("CARGO_TARGET_TMPDIR")), "mcp-server-everything");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new(bin)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "the HTTP server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpEverything { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_server_on_streamable_http_serves_the_same_tools() {
    let http = HttpEverything::start();
    let text =
        format!("[servers.s]\nurl = {:?}\ntimeout_secs = 30\nheaders = {{ X-Trace = \"cordon-test\" }}\n", http.url);
    let server = Config::parse(&text).unwrap().servers.remove("s").unwrap();
    let (value, label) = run(POLICY, "Everything", &server, r#"everything.echo("over http")"#).unwrap();
    assert_eq!(value, "\"Echo: over http\"");
    assert!(label.ends_with("integrity: true>"), "{label}");
    // A header naming a variable that is not set: an error before anything is sent.
    let text = format!(
        "[servers.s]\nurl = {:?}\nheaders = {{ Authorization = \"${{CORDON_TEST_UNSET_TOKEN}}\" }}\n",
        http.url
    );
    let server = Config::parse(&text).unwrap().servers.remove("s").unwrap();
    let error = Connection::start("s", &server, None).unwrap_err();
    assert!(error.contains("`CORDON_TEST_UNSET_TOKEN`, which is not set"), "{error}");
}

#[test]
fn an_http_server_that_is_not_there_is_a_clear_error_within_the_timeout() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let text = format!("[servers.s]\nurl = \"http://127.0.0.1:{port}/mcp\"\ntimeout_secs = 3\n");
    let server = Config::parse(&text).unwrap().servers.remove("s").unwrap();
    let started = Instant::now();
    let error = Connection::start("s", &server, None).unwrap_err();
    assert!(error.contains("the MCP server `s`"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

#[test]
fn a_server_sees_no_variable_of_cordons_environment_the_config_does_not_name() {
    const POLICY: &str = r#"
capability Everything {
  tool get_env() -> String
    @label(pc = untrusted())
}
entry(everything: Everything) -> String
"#;
    // This test process stands in for Cordon: cargo gives it `CARGO_MANIFEST_DIR`, a variable
    // a server has no business with unless the config passes it through.
    let name = "CARGO_MANIFEST_DIR";
    let value = std::env::var(name).unwrap();
    let mut server = everything();
    server.env.clear();
    let (seen, _) = run(POLICY, "Everything", &server, "everything.get_env()").unwrap();
    assert!(!seen.contains(name) && !seen.contains(&value), "{seen}");
    assert!(seen.contains("PATH"), "PATH is passed, to find interpreters: {seen}");
    server.env = vec![name.to_string()];
    let (seen, _) = run(POLICY, "Everything", &server, "everything.get_env()").unwrap();
    assert!(seen.contains(name), "a variable the config names is passed: {seen}");
}

/// The tools of `tests/fixtures/shapes_server.py`, a server written with the Python SDK.
const SHAPES_POLICY: &str = r#"
capability Shapes {
  tool empty_text() -> String
  tool numbers() -> List[Int]
  tool maybe_count(present: Bool) -> Option[Int]
  tool total() -> Float
  tool picture() -> String
  tool pay(amount: {a: Decimal | a <= 1000.00d}) -> Decimal
  tool fee() -> Decimal
}
entry(shapes: Shapes) -> String
"#;

fn shapes() -> Server {
    let python = servers::python_mcp(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let script: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shapes_server.py");
    let mut server = server(python.to_str().unwrap(), &[script.to_str().unwrap()], 30);
    server.startup_timeout_secs = Some(120);
    server
}

/// What the Python SDK answers binds to the declared type as it is written: an empty text is
/// `""`, and what the SDK wraps in `{"result": ..}` (a list, an option, a number) is what is
/// inside, with no wrapper record to write.
#[test]
fn results_the_python_sdk_wraps_bind_to_the_declared_type() {
    let server = shapes();
    let value = |plan: &str| run(SHAPES_POLICY, "Shapes", &server, plan).map(|(value, _)| value);
    assert_eq!(value(r#""[" + shapes.empty_text() + "]""#), Ok("\"[]\"".into()));
    assert_eq!(value("to_string(shapes.numbers().sum())"), Ok("\"6\"".into()));
    assert_eq!(value("to_string(shapes.maybe_count(true).unwrap_or(0))"), Ok("\"7\"".into()));
    assert_eq!(value("to_string(shapes.maybe_count(false).unwrap_or(0))"), Ok("\"0\"".into()));
    assert_eq!(value("to_string(shapes.total())"), Ok("\"12.5\"".into()));
    // A policy that declares the wrapper itself still gets it whole.
    let policy = SHAPES_POLICY
        .replace("tool numbers() -> List[Int]", "tool numbers() -> Numbers")
        .replace("capability Shapes {", "type Numbers = { result: List[Int] }\ncapability Shapes {");
    let (value, _) = run(&policy, "Shapes", &server, "to_string(shapes.numbers().result.len())").unwrap();
    assert_eq!(value, "\"3\"");
}

/// An answer that cannot be taken is reported as the answer of a call that was made, never as
/// if the call had not happened.
#[test]
fn an_answer_that_cannot_be_taken_says_the_call_was_made() {
    let error = run(SHAPES_POLICY, "Shapes", &shapes(), "shapes.picture()").unwrap_err();
    assert!(error.contains("`picture` was called, but answered no text"), "{error}");
}

/// A server that says it wraps its result and then answers otherwise gets a decoding error,
/// never a wrong value: a `result` beside another key is not unwrapped, and a wrapped string
/// is no list.
#[test]
fn a_server_that_wraps_otherwise_than_it_says_gets_an_error_not_a_value() {
    let policy = HOSTILE_POLICY.replace("tool fetch(url: String) -> String", "tool fetch(url: String) -> List[Int]");
    for mode in ["wrapped", "mislabel"] {
        let mut server = hostile(mode, 10);
        server.startup_timeout_secs = Some(120);
        let error = run(&policy, "Web", &server, r#"to_string(web.fetch("https://example.com").len())"#).unwrap_err();
        assert!(error.contains("returned something other than it declares"), "{mode}: {error}");
    }
}

/// A `Decimal` goes to a server whose schema says `number` as a JSON number, exactly (an
/// amount a refinement bounds to the cent is the amount the server gets), and comes back from
/// one as the decimal it wrote; one that a binary float cannot hold exactly is refused, before
/// the call going out and as a contract error coming back, never rounded.
#[test]
fn decimals_cross_as_the_numbers_the_schema_says_exactly_or_not_at_all() {
    let server = shapes();
    let value = |plan: &str| run(SHAPES_POLICY, "Shapes", &server, plan).map(|(value, _)| value);
    assert_eq!(value("to_string(shapes.pay(999.99d))"), Ok("\"999.99\"".into()));
    assert_eq!(value("to_string(shapes.pay(1000d))"), Ok("\"1000\"".into()));
    let long = value("to_string(shapes.pay(0.123456789012345678d))").unwrap_err();
    assert!(long.contains("`pay` was not called") && long.contains("cannot be held exactly"), "{long}");
    // What goes over the wire is a JSON number, not the string Cordon writes a decimal as.
    let policy = "capability Pay {\n  tool pay(amount: Decimal) -> String\n}\nentry(p: Pay) -> String\n";
    let mut raw = hostile("numbers", 10);
    raw.startup_timeout_secs = Some(120);
    let (sent, _) = run(policy, "Pay", &raw, "p.pay(12.50d)").unwrap();
    assert_eq!(sent, r#""{\"amount\": 12.5}""#);
    let fee = value("to_string(shapes.fee())").unwrap_err();
    assert!(
        fee.contains("returned something other than it declares") && fee.contains("15 significant digits"),
        "{fee}"
    );
}

/// A workspace whose tools act on one account: the policy threads a session through them,
/// which reading the private channel taints and a post needs untainted. The session is
/// Cordon's, never the server's.
const WORKSPACE_POLICY: &str = r#"
/// Ann's session with the workspace: reading `payroll` taints it.
linear type Session
measure tainted(s: Session) -> Bool = false

capability Workspace {
  tool read_channel(s: Session, channel: String)
    -> (String, {s2: Session | tainted(s2) == (channel == "payroll" || tainted(s))})
    @label(channel = untrusted())
  tool post_message(s: {s: Session | !tainted(s)}, channel: String, text: String)
    -> (String, {s2: Session | tainted(s2) == tainted(s)})
    @label(channel = untrusted(), text = untrusted())
  tool received() -> String
}
entry(workspace: Workspace, s: Session) -> (String, Session)
"#;

fn workspace() -> Server {
    let python = servers::python_mcp(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let script: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/workspace_server.py");
    let mut server = server(python.to_str().unwrap(), &[script.to_str().unwrap()], 30);
    server.startup_timeout_secs = Some(120);
    server
}

/// Runs `plan` against the workspace server with the sessions `sessions` kept from earlier
/// requests, checked knowing them (`known`) or assuming fresh ones: the plan's value (or why it
/// did not run) and the sessions to keep.
fn run_in_workspace(plan: &str, sessions: &Sessions, known: bool) -> (Result<String, String>, Sessions) {
    let mut sources = SourceMap::new();
    let policy_file = sources.add("policy.cord", WORKSPACE_POLICY);
    let plan = sources.add("plan.cord", plan);
    let options =
        CheckOptions { entry_facts: known.then(|| sessions.entry_facts("ann")).flatten(), ..CheckOptions::default() };
    let outcome = check(&sources, &[policy_file], Some(plan), &options);
    let Some(checked) = outcome.program else {
        let codes: Vec<&str> = outcome.diagnostics.iter().map(|d| d.code.as_str()).collect();
        return (Err(format!("rejected: {}", codes.join(", "))), sessions.clone());
    };
    let program = Program::new(&checked).unwrap();
    let connection = Connection::start("workspace", &workspace(), None).unwrap();
    let mut host = McpHost::bind(connection, &["Workspace"], checked.declarations()).unwrap().remove(0);
    let config = RunConfig { user: "ann".into(), ..RunConfig::default() };
    let report = cordon_engine::run(&program, sessions, &config, &mut host);
    (
        report.result.map(|v| v.value.to_string()).map_err(|e| format!("{}: {}", e.kind.code().as_str(), e.message)),
        report.sessions,
    )
}

#[test]
fn a_session_is_threaded_by_cordon_and_never_sent_to_the_server() {
    let plan = r#"let (news, s) = workspace.read_channel(s, "general");
let (posted, s) = workspace.post_message(s, "general", "hello");
(posted + " " + workspace.received(), s)"#;
    let (value, _) = run_in_workspace(plan, &Sessions::default(), true);
    let value = value.unwrap();
    assert!(value.starts_with("(\"posted "), "{value}");
    assert!(value.contains(r#"\"tool\": \"post_message\""#), "{value}");
    // The server asked for an `s` in every tool; it was sent none.
    assert!(value.contains(r#"\"s\": null"#) && !value.contains(r#"\"s\": \""#), "{value}");
}

#[test]
fn a_session_tainted_over_mcp_stops_a_later_post_at_check_time_and_at_the_boundary() {
    // In one plan: reading payroll then posting does not check.
    let plan = r#"let (pay, s) = workspace.read_channel(s, "payroll");
let (posted, s) = workspace.post_message(s, "general", "hello");
(posted, s)"#;
    let (value, _) = run_in_workspace(plan, &Sessions::default(), true);
    assert!(value.as_ref().is_err_and(|e| e.contains("refinement-unproven")), "{value:?}");
    // Across requests: the session comes back tainted, the measure as the refinement defines it.
    let read = r#"let (pay, s) = workspace.read_channel(s, "payroll"); (to_string(pay.len()), s)"#;
    let (value, kept) = run_in_workspace(read, &Sessions::default(), true);
    assert!(value.is_ok(), "{value:?}");
    assert!(kept.to_json().contains("\"tainted\": true"), "{}", kept.to_json());
    let post = r#"let (posted, s) = workspace.post_message(s, "general", "hello"); (posted, s)"#;
    let (value, _) = run_in_workspace(post, &kept, true);
    assert!(value.as_ref().is_err_and(|e| e.contains("refinement-unproven")), "{value:?}");
    // Checked as if the session were fresh, the boundary re-checks the host's measure: the post
    // is refused before the server is called.
    let (value, _) = run_in_workspace(post, &kept, false);
    let error = value.unwrap_err();
    assert!(error.starts_with("recheck-failed: the refinement on `s` does not hold"), "{error}");
}

/// `cordon mcp import --session` for the workspace server: the policy it writes checks and
/// binds as it is, threads the session through every tool (never sent), and once the deployer
/// marks the private read as tainting, a post after it is a type error.
#[test]
fn an_imported_policy_threads_a_session_that_the_deployer_marks_tainted() {
    let connection = Connection::start("workspace", &workspace(), None).unwrap();
    let text =
        cordon_mcp::import::policy("workspace", "Workspace", connection.tools(), cordon_mcp::import::Account::Session)
            .unwrap();
    let check_plan = |policy: &str, plan: &str| {
        let mut sources = SourceMap::new();
        let p = sources.add("imported.cord", policy);
        let f = sources.add("plan.cord", plan);
        let outcome = check(&sources, &[p], Some(f), &CheckOptions::default());
        let codes: Vec<String> = outcome.diagnostics.iter().map(|d| d.code.as_str().to_string()).collect();
        (outcome.program, codes)
    };
    let post = r#"let (posted, s) = workspace.post_message(s, "general", None, "hello"); (posted, s)"#;
    let (checked, codes) = check_plan(&text, post);
    let checked = checked.unwrap_or_else(|| panic!("{codes:?}\n{text}"));
    let program = Program::new(&checked).unwrap();
    let mut host = McpHost::bind(connection, &["Workspace"], checked.declarations()).unwrap().remove(0);
    let config = RunConfig { user: "ann".into(), ..RunConfig::default() };
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut host);
    assert!(report.result.is_ok(), "{:?}", report.result);
    // Reading then posting checks as written (every tool hands the session back as it got it) ..
    let read_then_post = r#"let (pay, s) = workspace.read_channel(s, "payroll", None);
let (posted, s) = workspace.post_message(s, "general", None, "hello");
(posted, s)"#;
    assert!(check_plan(&text, read_then_post).0.is_some());
    // .. and not once the deployer says the read taints it.
    let first = text.find("tainted(next) == tainted(session)");
    assert!(text.find("tool read_channel") < first && first < text.find("tool post_message"), "{text}");
    let marked = text.replacen("tainted(next) == tainted(session)", "tainted(next) == true", 1);
    let (checked, codes) = check_plan(&marked, read_then_post);
    assert!(checked.is_none() && codes.contains(&"refinement-unproven".to_string()), "{codes:?}");
}

/// A policy that splits one server's tools between two capabilities: one process serves both.
#[test]
fn one_server_process_serves_every_capability_bound_to_it() {
    const SPLIT: &str = r#"
capability Reader {
  tool read_channel(channel: String) -> String
}
capability Poster {
  tool post_message(channel: String, text: String) -> String
  tool received() -> String
}
entry(reader: Reader, poster: Poster) -> String
"#;
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", SPLIT);
    let plan = sources.add("plan.cord", r#"let news = reader.read_channel("general"); let posted = poster.post_message("general", "hi"); poster.received()"#);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let checked = outcome.program.unwrap();
    let program = Program::new(&checked).unwrap();
    let connection = Connection::start("workspace", &workspace(), None).unwrap();
    let mut hosts = cordon_engine::Hosts::new();
    for host in McpHost::bind(connection, &["Reader", "Poster"], checked.declarations()).unwrap() {
        hosts.add(Box::new(host)).unwrap();
    }
    let config = RunConfig { user: "ann".into(), ..RunConfig::default() };
    let report = cordon_engine::run(&program, &Sessions::default(), &config, &mut hosts);
    let seen = report.result.unwrap().value.to_string();
    // The poster's server saw the reader's call: they are one process.
    assert!(seen.contains(r#"\"tool\": \"read_channel\""#) && seen.contains(r#"\"tool\": \"post_message\""#), "{seen}");
    // A capability the policy does not declare is refused when binding, naming it.
    let connection = Connection::start("workspace", &workspace(), None).unwrap();
    let error = McpHost::bind(connection, &["Reader", "Writer"], checked.declarations()).unwrap_err();
    assert!(error.contains("serves the capability `Writer`, but no policy declares it"), "{error}");
}

/// A hostile server around the session: it asks for it (it is not sent), answers a session of
/// its own making (it is not taken: Cordon makes the session, with the measures its refinement
/// defines), and answers one value where a tuple needs two (an error that says the call was
/// made).
#[test]
fn a_hostile_server_can_neither_see_nor_make_a_session() {
    let policy = |ret: &str| {
        format!(
            "linear type Session\nmeasure tainted(s: Session) -> Bool = false\n\
             capability Web {{\n  tool fetch(s: Session, url: String) -> {ret}\n}}\n\
             entry(web: Web, s: Session) -> (String, Session)\n"
        )
    };
    let mut server = hostile("session", 10);
    server.startup_timeout_secs = Some(120);
    let fetched = policy("(String, {s2: Session | tainted(s2) == true})");
    let (value, _) = run(&fetched, "Web", &server, r#"web.fetch(s, "https://example.com")"#).unwrap();
    assert_eq!(value, r#"("{\"url\": \"https://example.com\"}", <Session #2>)"#);
    let several = policy("(Int, Session, Int)");
    let plan = r#"let (a, s, b) = web.fetch(s, "https://example.com"); (to_string(a + b), s)"#;
    let error = run(&several, "Web", &server, plan).unwrap_err();
    assert!(error.contains("`fetch` was called, but did not answer a list of the 2 values"), "{error}");
}

/// A credentialed server over streamable HTTP (`fixtures/credential_server.py`, the Python SDK)
/// on a free port, killed when dropped, and the file where it writes each Authorization header.
struct Credentialed {
    child: std::process::Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Credentialed {
    fn start() -> Credentialed {
        let python = servers::python_mcp(Path::new(env!("CARGO_TARGET_TMPDIR")));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/credential_server.py");
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("tokens.log");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .arg(&log)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(30), "the credentialed server did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        Credentialed { child, port, log, _dir: dir }
    }

    fn server(&self) -> Server {
        let text = format!(
            "[servers.s]\nurl = \"http://127.0.0.1:{}/mcp\"\ncredential = \"MCP_TOKEN\"\ntimeout_secs = 30\n",
            self.port
        );
        Config::parse(&text).unwrap().servers.remove("s").unwrap()
    }

    fn tokens(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Credentialed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const TOKEN: &str = "mcp-canary-Jq4Lw9Xz2Vb";

/// A broker holding the token as `MCP_TOKEN`, bound to `origin` as a bearer token, on a socket
/// in `dir`.
fn token_broker(origin: &str, dir: &Path) -> std::sync::Arc<cordon_broker::Client> {
    let entry = cordon_vault::Entry {
        name: "MCP_TOKEN".into(),
        destinations: vec![cordon_vault::Destination::parse(origin).unwrap()],
        header: "Authorization".into(),
        scheme: Some("Bearer".into()),
        programs: Vec::new(),
    };
    let broker = cordon_broker::Broker::with_secrets(vec![(entry, cordon_vault::SecretValue::from(TOKEN))]);
    std::sync::Arc::new(broker.serve_on_thread(&dir.join("broker.sock")).unwrap())
}

#[test]
fn a_servers_credential_comes_from_the_vault_and_never_comes_back() {
    let server = Credentialed::start();
    let dir = tempfile::tempdir().unwrap();
    let broker = token_broker(&format!("http://127.0.0.1:{}", server.port), dir.path());
    let mut connection = Connection::start("s", &server.server(), Some(&broker)).unwrap();
    let answer = connection.call("whoami", serde_json::Map::new()).unwrap();
    let answer = serde_json::to_string(&answer).unwrap();
    // The server got the token in its slot; what it sent back holds the placeholder.
    assert!(server.tokens().contains(&format!("Bearer {TOKEN}")), "{}", server.tokens());
    assert!(answer.contains("you sent: Bearer [vault secret]"), "{answer}");
    assert!(!answer.contains(TOKEN), "{answer}");
}

#[test]
fn a_servers_credential_bound_elsewhere_is_never_sent() {
    let server = Credentialed::start();
    let dir = tempfile::tempdir().unwrap();
    let broker = token_broker("https://mcp.example.com", dir.path());
    let error = Connection::start("s", &server.server(), Some(&broker)).unwrap_err();
    assert!(error.contains("is not bound to"), "{error}");
    assert_eq!(server.tokens(), "");
    // And without a vault, it is not reached at all.
    let error = Connection::start("s", &server.server(), None).unwrap_err();
    assert!(error.contains("vault secret"), "{error}");
}

/// The stdio server that wants `NOTES_TOKEN` (`fixtures/env_server.py`): its command line, and
/// the file where it writes the token it got.
fn env_server(dir: &Path) -> (Vec<String>, PathBuf) {
    let python = servers::python_mcp(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/env_server.py");
    let log = dir.join("token.log");
    let argv = [python.display().to_string(), script.display().to_string(), log.display().to_string()];
    (argv.to_vec(), log)
}

/// `argv` as a binding keeps it: the command as its canonical path.
fn bound(mut argv: Vec<String>) -> Vec<String> {
    argv[0] = cordon_broker::resolve_program(&argv[0], None).unwrap();
    argv
}

/// A broker holding the token as `NOTES_TOKEN`, given only to `program`.
fn program_broker(program: Vec<String>, dir: &Path) -> std::sync::Arc<cordon_broker::Client> {
    let entry = cordon_vault::Entry {
        name: "NOTES_TOKEN".into(),
        destinations: Vec::new(),
        header: "Authorization".into(),
        scheme: None,
        programs: vec![program],
    };
    let broker = cordon_broker::Broker::with_secrets(vec![(entry, cordon_vault::SecretValue::from(TOKEN))]);
    std::sync::Arc::new(broker.serve_on_thread(&dir.join("broker.sock")).unwrap())
}

fn wanting_secrets(argv: &[String]) -> Server {
    let text = format!(
        "[servers.s]\ncommand = {:?}\nargs = {:?}\nsecrets = {{ NOTES_TOKEN = \"NOTES_TOKEN\" }}\ntimeout_secs = 30\n",
        argv[0],
        &argv[1..]
    );
    Config::parse(&text).unwrap().servers.remove("s").unwrap()
}

#[test]
fn a_local_servers_secret_is_given_by_the_broker_and_scrubbed_from_what_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let (argv, log) = env_server(dir.path());
    let broker = program_broker(bound(argv.clone()), dir.path());
    let mut connection = Connection::start("s", &wanting_secrets(&argv), Some(&broker)).unwrap();
    let said = serde_json::to_string(&connection.call("token", serde_json::Map::new()).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), TOKEN, "the server got its token");
    assert!(said.contains("my token is [vault secret]") && !said.contains(TOKEN), "{said}");
    let environment = serde_json::to_string(&connection.call("environment", serde_json::Map::new()).unwrap()).unwrap();
    // Only what the broker was told to give (Python may add its locale variable, LC_CTYPE).
    assert!(environment.contains("NOTES_TOKEN") && environment.contains("PATH"), "{environment}");
    assert!(!environment.contains("CORDON_STORE") && !environment.contains("HOME"), "nothing else: {environment}");
}

#[test]
fn a_local_servers_secret_bound_to_another_program_is_never_given() {
    let dir = tempfile::tempdir().unwrap();
    let (argv, log) = env_server(dir.path());
    // Bound to the same command with another argument: not this program.
    let mut other = bound(argv.clone());
    other.push("--other".into());
    let broker = program_broker(other, dir.path());
    let error = Connection::start("s", &wanting_secrets(&argv), Some(&broker)).unwrap_err();
    assert!(error.contains("is not bound to the program"), "{error}");
    assert!(!log.exists(), "the server was not started");
    let error = Connection::start("s", &wanting_secrets(&argv), None).unwrap_err();
    assert!(error.contains("wants vault secrets"), "{error}");
}
