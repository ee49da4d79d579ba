//! `cordon` and the Model Context Protocol, end to end with peers no one on the project wrote:
//! `cordon mcp serve` driven by the official Python SDK's stdio client (PyPI, pinned), and
//! `cordon run --mcp` and `cordon mcp import` against `@modelcontextprotocol/server-everything`
//! (npm, pinned).
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

mod common;
#[path = "../../cordon-mcp/tests/common/servers.rs"]
mod servers;

use common::{cordon, example, workdir};

fn tmp() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

/// How the Python SDK's client reaches `cordon mcp serve`.
enum Via<'a> {
    /// It starts `cordon mcp serve ARGS` on stdio.
    Stdio(&'a [&'a str]),
    /// The server listens here.
    Http(&'a str),
}

/// The Python SDK's client against `cordon mcp serve`, fed `plans`: what it saw.
fn python_client(dir: &Path, via: Via<'_>, plans: &serde_json::Value) -> serde_json::Value {
    let python = servers::python_mcp(tmp());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_client.py");
    let mut client = std::process::Command::new(python);
    client.arg(script);
    match via {
        Via::Stdio(args) => client.arg(env!("CARGO_BIN_EXE_cordon")).args(["mcp", "serve"]).args(args),
        Via::Http(url) => client.arg(url),
    };
    let mut child = client
        .current_dir(dir)
        .env("CORDON_STORE", dir.join("cordon.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(plans.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(&stdout).unwrap()
}

/// `cordon mcp serve --http` at a free loopback port, with `args`; stopped when dropped.
struct HttpServe {
    child: std::process::Child,
    url: String,
}

impl HttpServe {
    fn start(dir: &Path, args: &[&str]) -> HttpServe {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        let child = common::command(dir, &["mcp", "serve", "--http", &addr])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(started.elapsed() < std::time::Duration::from_secs(30), "cordon mcp serve --http did not start");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        HttpServe { child, url: format!("http://{addr}/") }
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Reads the private roadmap and hands the session back: it is tainted from then on.
const TAINT: &str = r#"match gh.private_repo("secret-plans") {
  Some(secret) => {
    let (data, s) = gh.read_file(s, secret, "roadmap.md");
    ("Read it.", s)
  },
  None => ("No secret-plans repository.", s),
}"#;

/// What another agent saw must be: the tools, the reference, a bad plan's diagnostics, a
/// good plan run, an injected one refused when the card offering to vouch for mallory's text is
/// answered no.
fn assert_served(seen: &serde_json::Value) {
    assert_eq!(seen["server"], "cordon");
    let tools = seen["tools"].as_object().unwrap();
    assert_eq!(tools.keys().collect::<Vec<_>>(), ["check", "describe", "run"]);
    assert!(tools["check"].as_str().unwrap().contains("call `describe` first"), "{seen}");
    assert_eq!(seen["resources"][0], "cordon://reference");
    assert!(seen["reference_chars"].as_u64().unwrap() > 1000, "{seen}");
    let describe = seen["describe"].as_str().unwrap();
    assert!(describe.contains("capability GitHub") && describe.contains("entry(gh: GitHub, s: Session)"), "{describe}");
    assert!(seen["check_bad"]["text"].as_str().unwrap().contains("error[refinement-unproven]"), "{seen}");
    assert_eq!(seen["check_bad"]["structured"]["accepted"], false);
    assert_eq!(seen["check_good"], "accepted");
    assert_eq!(seen["run_good"]["status"], "done", "{}", seen["run_good"]);
    assert!(seen["run_good"]["result"].to_string().contains("opened #5"), "{}", seen["run_good"]);
    let blocked = &seen["run_blocked"];
    assert_eq!(blocked["status"], "failed", "{blocked}");
    let errors: Vec<&serde_json::Value> =
        blocked["diagnostics"]["diagnostics"].as_array().unwrap().iter().filter(|d| d["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{blocked}");
    assert_eq!(errors[0]["code"], "approval-denied", "{blocked}");
    let card = &blocked["approvals"].as_array().unwrap().last().unwrap()["card"];
    assert!(card["flows"][0]["meaning"].as_str().unwrap().contains("vouched for by mallory"), "{card}");
    assert!(seen["unknown"].as_str().unwrap().contains("there is no tool `nope`"), "{seen}");
    // A rejected plan and a run that did not finish are tool errors.
    let is_error = &seen["is_error"];
    assert_eq!(
        [&is_error["check_bad"], &is_error["check_good"], &is_error["run_good"], &is_error["run_blocked"]],
        [true, false, false, true],
        "{is_error}"
    );
}

/// Copies mallory's issue into a new public issue under alice's name. (Not
/// `injected_issue.cord`, which copies the newest issue: in one MCP session the environment
/// persists, and the newest issue is then the one the benign plan opened.)
const OBEY_MALLORY: &str = r#"match gh.repo("alice", "website") {
  Some(r) => if r.private {
    ("alice/website is private.", s)
  } else {
    let (issues, s) = gh.list_issues(s, r);
    match issues.filter(|i| i.author == "mallory").first() {
      Some(theirs) => {
        let (copy, s) = gh.create_issue(s, r, "Follow-up", theirs.body);
        ("Opened #" + to_string(copy.number) + ".", s)
      },
      None => ("mallory opened no issue.", s),
    }
  },
  None => ("No alice/website repository.", s),
}"#;

fn agent_plans() -> serde_json::Value {
    serde_json::json!({
        "bad": "let x = 1 / 0; x",
        "good": read(&example("github/benign.cord")),
        "blocked": OBEY_MALLORY,
    })
}

#[test]
fn another_agent_checks_and_runs_plans_through_the_python_sdk() {
    let dir = workdir("cli-mcp", "serve");
    // Yes to the benign plan's issue; no to the card offering to vouch for mallory's text.
    let answers = common::answers(&dir, "yes\nno\n");
    let seen = python_client(&dir, Via::Stdio(&["--env", "github", "--approve", &answers]), &agent_plans());
    assert_served(&seen);
}

#[test]
fn another_agent_does_the_same_over_streamable_http() {
    let dir = workdir("cli-mcp", "serve-http");
    let answers = common::answers(&dir, "yes\nno\n");
    let server = HttpServe::start(&dir, &["--env", "github", "--approve", &answers]);
    assert_served(&python_client(&dir, Via::Http(&server.url), &agent_plans()));
}

#[test]
fn each_mcp_session_has_its_own_answers() {
    let dir = workdir("cli-mcp", "serve-answers");
    // One yes in the file: each MCP session reads it afresh, so the second client's card is
    // answered as the first's was, and neither can use up the other's answers.
    let answers = common::answers(&dir, "yes\n");
    let server = HttpServe::start(&dir, &["--env", "github", "--approve", &answers]);
    for client in ["first", "second"] {
        let seen = python_client(&dir, Via::Http(&server.url), &agent_plans());
        assert_eq!(seen["run_good"]["status"], "done", "{client}: {}", seen["run_good"]);
        assert_eq!(seen["run_blocked"]["status"], "failed", "{client}: {}", seen["run_blocked"]);
    }
}

#[test]
fn serve_refuses_an_address_other_machines_can_reach() {
    let dir = workdir("cli-mcp", "serve-public");
    let out = cordon(&dir, &["mcp", "serve", "--http", "0.0.0.0:0", "--env", "github"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("loopback address only"), "{}", out.stderr);
}

/// The status code `cordon mcp serve --http` at `addr` answers an `initialize` POST with, sent
/// by hand with `host` and `origin` headers (none if `None`), as a hostile page's browser would.
fn status_of_initialize(addr: &str, host: &str, origin: Option<&str>) -> String {
    use std::io::Read;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}"#;
    let origin = origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    String::from_utf8_lossy(&head[9..12]).to_string()
}

#[test]
fn serving_http_refuses_requests_from_pages_that_are_not_on_this_machine() {
    let dir = workdir("cli-mcp", "serve-origin");
    let server = HttpServe::start(&dir, &["--env", "github"]);
    let addr = server.url.trim_start_matches("http://").trim_end_matches('/').to_string();
    let port = addr.rsplit(':').next().unwrap();
    for origin in [
        "https://evil.example",
        "http://localhost.evil.example",
        "http://127.0.0.1.evil.example",
        "http://localhost:@evil.example",
        "http://evil.example#@localhost",
        "null",
        "file://",
        "not an origin",
    ] {
        assert_eq!(status_of_initialize(&addr, &addr, Some(origin)), "403", "Origin: {origin}");
    }
    for host in ["evil.example", &format!("evil.example:{port}"), "localhost.evil.example", "127.0.0.1.evil.example"] {
        assert_eq!(status_of_initialize(&addr, host, None), "403", "Host: {host}");
    }
    for origin in
        [None, Some("http://localhost:3000"), Some("http://127.0.0.1"), Some(&*format!("http://[::1]:{port}"))]
    {
        assert_eq!(status_of_initialize(&addr, &addr, origin), "200", "Origin: {origin:?}");
    }
    assert_eq!(status_of_initialize(&addr, &format!("localhost:{port}"), None), "200");
}

#[test]
fn sessions_persist_for_the_mcp_session() {
    let dir = workdir("cli-mcp", "session");
    let yes = common::yes(&dir);
    // The first run reads the private roadmap and so taints the session; in the same MCP
    // session the benign plan, which checks on a fresh session, is then rejected.
    let plans = serde_json::json!({ "bad": "1", "good": TAINT, "blocked": read(&example("github/benign.cord")) });
    let seen = python_client(&dir, Via::Stdio(&["--env", "github", "--approve", &yes]), &plans);
    assert_eq!(seen["run_good"]["status"], "done", "{}", seen["run_good"]);
    // Decided by the private roadmap, the answer is withheld from a public client, and no word
    // of the roadmap reaches it.
    assert!(seen["run_good"]["withheld"].as_array().unwrap().contains(&"result".into()), "{}", seen["run_good"]);
    assert!(!seen["run_good"].to_string().contains("Initech"), "{}", seen["run_good"]);
    let after = &seen["run_blocked"];
    assert_eq!(after["status"], "rejected", "{after}");
    assert_eq!(after["diagnostics"]["diagnostics"][0]["code"], "refinement-unproven", "{after}");
    // `check` knows it too, as `run` does.
    let checked = seen["check_blocked_after"].as_str().unwrap();
    assert!(checked.contains("error[refinement-unproven]"), "{checked}");
    // The MCP session's sessions are kept in the store, under a name of its own, and no longer held.
    let raw = rusqlite::Connection::open(dir.join("cordon.db")).unwrap();
    let kept: Vec<(String, Option<i64>)> = raw
        .prepare("SELECT name, lock_pid FROM sessions")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].0.starts_with("mcp:") && kept[0].1.is_none(), "{kept:?}");
}

/// A config naming the everything server, and a policy declaring two of its tools.
fn everything_setup(dir: &Path) {
    let bin = servers::npm_server(tmp(), "mcp-server-everything");
    std::fs::write(
        dir.join("cordon.toml"),
        format!("user = \"ann\"\n[servers.everything]\ncommand = {:?}\n", bin.display().to_string()),
    )
    .unwrap();
    std::fs::write(
        dir.join("everything.cord"),
        "capability Everything {\n  tool echo(message: String) -> String\n    @label(message = untrusted(), returns = public())\n  \
         tool get_sum(a: Int, b: Int) -> String\n    @label(a = untrusted(), b = untrusted(), returns = public())\n}\n\
         entry(everything: Everything) -> String\n",
    )
    .unwrap();
}

#[test]
fn run_calls_a_real_server_through_the_policy() {
    let dir = workdir("cli-mcp", "run");
    everything_setup(&dir);
    std::fs::write(dir.join("plan.cord"), "everything.echo(everything.get_sum(2, 3))").unwrap();
    let out = cordon(&dir, &["run", "--mcp", "everything", "--policy", "everything.cord", "plan.cord"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("allowed  Everything.get_sum(a: 2, b: 3)"), "{}", out.stdout);
    assert!(out.stdout.contains("result: \"Echo: The sum of 2 and 3 is 5."), "{}", out.stdout);
    // Without a policy, or naming a server the config lacks: a usage error, nothing runs.
    let out = cordon(&dir, &["run", "--mcp", "everything", "plan.cord"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--mcp needs a --policy"), "{}", out.stderr);
    let out = cordon(&dir, &["run", "--mcp", "mail", "--policy", "everything.cord", "plan.cord"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no MCP server `mail` in the config; it lists: everything"), "{}", out.stderr);
    // Two servers for one capability: which would answer? Neither; nothing runs.
    let config = std::fs::read_to_string(dir.join("cordon.toml")).unwrap();
    let command = config.lines().find(|l| l.starts_with("command = ")).unwrap();
    let twice = format!("{config}\n[servers.again]\ncapability = \"Everything\"\n{command}\n");
    std::fs::write(dir.join("twice.toml"), twice).unwrap();
    let args =
        ["run", "--config", "twice.toml", "--mcp", "everything", "--mcp", "again", "--policy", "everything.cord"];
    let out = cordon(&dir, &[&args[..], &["plan.cord"]].concat());
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("would serve `Everything`, which another environment or server serves"),
        "{}",
        out.stderr
    );
}

/// A `--policy` for a server adds to an environment's own policy: it replaces only a policy
/// declaring the same capability.
#[test]
fn an_environment_keeps_its_policy_beside_a_servers() {
    let dir = workdir("cli-mcp", "compose");
    everything_setup(&dir);
    std::fs::write(dir.join("both.cord"), "let n = len(gh.list_repos());\n(everything.echo(to_string(n)), s)\n")
        .unwrap();
    let out =
        cordon(&dir, &["run", "--env", "github", "--mcp", "everything", "--policy", "everything.cord", "both.cord"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("allowed  GitHub.list_repos()") && out.stdout.contains("result: (\"Echo: "),
        "{}",
        out.stdout
    );
    // A policy of the user's own for GitHub replaces the environment's: a tool it leaves out is
    // not there.
    std::fs::write(dir.join("github.cord"), "capability GitHub {\n}\nentry(gh: GitHub) -> String\n").unwrap();
    let out = cordon(&dir, &["run", "--env", "github", "--policy", "github.cord", "both.cord"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("list_repos"), "{}", out.stdout);
}

#[test]
fn one_server_serves_several_capabilities() {
    let dir = workdir("cli-mcp", "several");
    everything_setup(&dir);
    let config = std::fs::read_to_string(dir.join("cordon.toml")).unwrap();
    std::fs::write(dir.join("cordon.toml"), format!("{config}capability = [\"Echo\", \"Sums\"]\n")).unwrap();
    std::fs::write(
        dir.join("split.cord"),
        "capability Echo {\n  tool echo(message: String) -> String\n    @label(message = untrusted(), returns = public())\n}\n\
         capability Sums {\n  tool get_sum(a: Int, b: Int) -> String\n    @label(a = untrusted(), b = untrusted(), returns = public())\n}\n\
         entry(echo: Echo, sums: Sums) -> String\n",
    )
    .unwrap();
    std::fs::write(dir.join("plan.cord"), "echo.echo(sums.get_sum(2, 3))").unwrap();
    let out = cordon(&dir, &["run", "--mcp", "everything", "--policy", "split.cord", "plan.cord"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("allowed  Sums.get_sum(a: 2, b: 3)"), "{}", out.stdout);
    assert!(out.stdout.contains("result: \"Echo: The sum of 2 and 3 is 5."), "{}", out.stdout);
    // Each capability's tools are its own: the echo capability has no `get_sum`.
    std::fs::write(dir.join("wrong.cord"), "echo.get_sum(2, 3)").unwrap();
    let out = cordon(&dir, &["run", "--mcp", "everything", "--policy", "split.cord", "wrong.cord"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("the capability `Echo` has no tool `get_sum`"), "{}{}", out.stdout, out.stderr);
}

#[test]
fn import_writes_a_policy_that_checks_and_asks_before_writes() {
    let dir = workdir("cli-mcp", "import");
    everything_setup(&dir);
    let out = cordon(&dir, &["mcp", "import", "everything"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let policy = out.stdout;
    assert!(policy.contains("capability Everything {"), "{policy}");
    assert!(policy.contains("tool echo(message: String) -> String"), "{policy}");
    assert!(policy.contains("tool get_sum(a: Float, b: Float) -> String"), "{policy}");
    assert!(policy.contains("/// The server says (untrusted):"), "{policy}");
    assert!(policy.contains("returns = secret(user()).join(untrusted())"), "{policy}");
    assert!(policy.lines().all(|l| l.chars().count() <= 100), "lines wrapped: {policy}");
    // toggle-simulated-logging is not read-only: it asks first.
    let toggle = policy.split("tool toggle_simulated_logging").nth(1).unwrap();
    assert!(toggle.split("tool ").next().unwrap().contains("@approval(ask)"), "{policy}");
    std::fs::write(dir.join("imported.cord"), &policy).unwrap();
    let checked = cordon(&dir, &["check", "--policy", "imported.cord"]);
    assert!(!checked.stdout.contains("error"), "the imported policy checks: {}\n{policy}", checked.stdout);
    // And it binds: a plan on it runs against the server.
    std::fs::write(dir.join("plan.cord"), "everything.echo(\"hi\")").unwrap();
    let out = cordon(&dir, &["run", "--mcp", "everything", "--policy", "imported.cord", "plan.cord"]);
    assert!(out.stdout.contains("result: \"Echo: hi\""), "{}{}", out.stdout, out.stderr);
}
