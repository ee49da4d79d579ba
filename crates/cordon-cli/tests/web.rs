//! The web and the vault end to end, as an attacker would try them (issue 26's canary test): a
//! canary secret in the vault, bound to one loopback web server's `X-Api-Key`; plans that try to
//! send it to another server, get it echoed back, follow a redirect with it, or put it (written
//! out, base64'd, split) into an address, a header or a body. Afterwards everything written is
//! scanned (stdout, stderr, the store, the broker's log, every request either server received):
//! the canary is nowhere but in the `x-api-key` header of requests to the bound server.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::path::Path;

mod common;
#[path = "../../../tests/web/web.rs"]
mod web;

use common::{VAULT_KEY as KEY, add_secret, command, workdir, yes};
use web::Web;

const CANARY: &str = "cordon-canary-7Hq2xVp9Lm";
const CANARY_BASE64: &str = "Y29yZG9uLWNhbmFyeS03SHEyeFZwOUxt";

/// A directory with a vault holding the canary for `bound`, and a policy allowing `sites`.
fn setup(name: &str, bound: &Web, sites: &[&Web]) -> std::path::PathBuf {
    let dir = workdir("cli-web", name);
    add_secret(&dir, &["API_KEY", "--host", &bound.url(""), "--header", "X-Api-Key"], CANARY);
    let policy = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../policies/http.cord")).unwrap();
    let allowed: Vec<String> = sites.iter().map(|w| format!("u.starts_with(\"{}\")", w.url("/"))).collect();
    let allowed = allowed.join(" || ");
    let policy = policy
        .replace(
            r#"u.starts_with("https://api.github.com/") || u.starts_with("https://en.wikipedia.org/wiki/")"#,
            &allowed,
        )
        .replace(r#"u.starts_with("https://api.github.com/repos/")"#, &allowed);
    std::fs::write(dir.join("http.cord"), policy).unwrap();
    dir
}

/// Runs `plan` with the web and the answers yes to every card: stdout and stderr, and the exit
/// code.
fn run(dir: &Path, plan: &str) -> (String, i32) {
    std::fs::write(dir.join("plan.cord"), plan).unwrap();
    let output =
        command(dir, &["run", "--web", "--web-local", "--policy", "http.cord", "--approve", &yes(dir), "plan.cord"])
            .env("CORDON_VAULT_KEY", KEY)
            .output()
            .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (said, output.status.code().unwrap_or(-1))
}

/// Every file in `dir`, as text (the store, the broker's log, the plan, the policy).
fn written(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() && path.file_name().is_some_and(|n| n != "plan.cord") {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    all
}

/// The lines of what `web` received that hold the canary outside the `x-api-key` header.
fn leaked(web: &Web) -> Vec<String> {
    web.received()
        .lines()
        .filter(|l| l.contains(CANARY) && !l.contains(&format!(r#"["x-api-key", "{CANARY}"]"#)))
        .map(String::from)
        .collect()
}

#[test]
fn the_canary_leaves_only_in_its_slot_to_its_server() {
    let (bound, other) = (Web::start(), Web::start());
    let dir = setup("canary", &bound, &[&bound, &other]);
    let key = r#"http.secret("API_KEY")"#;
    let show = "Ok(r) => to_string(r.status) + \" \" + r.body, Err(e) => e.code + \": \" + e.reason";
    let attempts = [
        // Its slot, to its server, which echoes it back in the body and a header.
        (format!(r#"match http.get("{}", [], {key}) {{ {show} }}"#, bound.url("/leak?header=x-api-key")), "200"),
        // To another server: refused by the broker.
        (format!(r#"match http.get("{}", [], {key}) {{ {show} }}"#, other.url("/echo")), "not-allowed"),
        // A redirect from its server to another: the redirect is the answer.
        (
            format!(
                r#"match http.get("{}", [], {key}) {{ {show} }}"#,
                bound.url(&format!("/redirect?to={}", other.url("/echo")))
            ),
            "302",
        ),
        // What its server echoed, forwarded to another: it was scrubbed before the plan saw it.
        (
            format!(
                r#"match http.get("{}", [], {key}) {{
  Ok(r) => match http.post("{}", r.body, [], None) {{ {show} }},
  Err(e) => e.code,
}}"#,
                bound.url("/leak?header=x-api-key"),
                other.url("/echo")
            ),
            "200",
        ),
        // The canary put together by a plan (as if a model had seen it), whole, base64'd, split
        // by spaces, in a body, an address and a header: the outgoing-data check refuses each.
        // (Each is in pieces in the plan's source, which the store keeps as the request.)
        (
            format!(
                r#"match http.post("{}", "cordon-canary-" + "7Hq2xVp9Lm", [], None) {{ {show} }}"#,
                other.url("/echo")
            ),
            "sensitive-data",
        ),
        (
            format!(
                r#"match http.get("{}" + "Y29yZG9uLWNh" + "bmFyeS03SHEyeFZwOUxt", [], None) {{ {show} }}"#,
                other.url("/echo?q=")
            ),
            "sensitive-data",
        ),
        (
            format!(
                r#"match http.get("{}", [Header {{ name: "X-Note", value: "cordon canary " + "7Hq2 xVp9 Lm" }}], None) {{ {show} }}"#,
                other.url("/echo")
            ),
            "sensitive-data",
        ),
    ];
    for (plan, expected) in &attempts {
        let (said, _) = run(&dir, plan);
        assert!(said.contains(expected), "{plan}\n---\n{said}");
        assert!(!said.contains(CANARY) && !said.contains(CANARY_BASE64), "{plan}\n---\n{said}");
    }
    let files = written(&dir);
    assert!(files.contains("[vault secret]"), "the store records what was refused or scrubbed");
    assert!(
        !files.contains(CANARY) && !files.contains(CANARY_BASE64),
        "a file in the run's directory holds the canary"
    );
    assert!(files.contains("not-allowed"), "the broker's log names its refusal");
    assert_eq!(leaked(&bound), Vec::<String>::new());
    assert!(bound.received().contains(&format!(r#"["x-api-key", "{CANARY}"]"#)), "{}", bound.received());
    assert!(!other.received().contains(CANARY) && !other.received().contains("x-api-key"), "{}", other.received());
}

#[test]
fn a_plan_reaches_only_what_the_policy_allows_before_anything_runs() {
    let (allowed, other) = (Web::start(), Web::start());
    let dir = setup("allow_list", &allowed, &[&allowed]);
    let (said, code) = run(
        &dir,
        &format!(r#"match http.get("{}", [], None) {{ Ok(r) => r.body, Err(e) => e.code }}"#, other.url("/echo")),
    );
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("refinement-unproven") && said.contains("nothing ran"), "{said}");
    let (said, code) = run(
        &dir,
        &format!(r#"match http.get("{}", [], None) {{ Ok(r) => r.body, Err(e) => e.code }}"#, allowed.url("/hi")),
    );
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("hello from /hi"), "{said}");
    assert_eq!(other.received(), "");
}

#[test]
fn a_broker_that_cannot_open_the_vault_stops_the_run_before_anything_is_sent() {
    let web = Web::start();
    let dir = setup("no_key", &web, &[&web]);
    std::fs::write(
        dir.join("plan.cord"),
        format!(r#"match http.get("{}", [], None) {{ Ok(r) => r.body, Err(e) => e.code }}"#, web.url("/hi")),
    )
    .unwrap();
    let output = command(&dir, &["run", "--web", "--web-local", "--policy", "http.cord", "plan.cord"])
        .env_remove("CORDON_VAULT_KEY")
        .env("HOME", &dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("credential broker could not start") && stderr.contains("no key"), "{stderr}");
    assert_eq!(web.received(), "");
}

#[test]
fn a_model_is_shown_the_vaults_secret_only_as_a_placeholder() {
    // The user pastes the canary into a request: every prompt the model is sent (as the
    // transcript records it) has the placeholder, found by asking the broker, which alone holds
    // the vault.
    let web = Web::start();
    let dir = setup("prompt", &web, &[&web]);
    let model = format!("scripted:{}", concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ask_count_issues.json"));
    let transcript = dir.join("transcript.jsonl");
    let request = format!("How many open issues does alice/website have? My token is {CANARY}.");
    let output = command(
        &dir,
        &["ask", "--env", "github", "--model", &model, "--transcript", transcript.to_str().unwrap(), &request],
    )
    .env("CORDON_VAULT_KEY", KEY)
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // (The request itself is recorded as the user typed it: the store is their own record.)
    let written = std::fs::read_to_string(&transcript).unwrap();
    let prompts: Vec<String> = written
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "hole_prompted")
        .map(|v| v["messages"].to_string())
        .collect();
    assert!(!prompts.is_empty(), "{written}");
    for prompt in &prompts {
        assert!(prompt.contains("My token is [vault secret]."), "{prompt}");
        assert!(!prompt.contains(CANARY), "{prompt}");
    }
}

#[test]
fn a_plan_may_not_write_where_a_program_given_secrets_lives() {
    // A local MCP server given a vault secret runs `work/server.py`: a plan that could write
    // there could run its own code with the secret, so `work` may not be granted read-write.
    let dir = workdir("cli-web", "program_in_rw_dir");
    std::fs::create_dir_all(dir.join("work")).unwrap();
    std::fs::write(dir.join("work/server.py"), "print('hello')\n").unwrap();
    let config = format!(
        "[servers.notes]\ncommand = \"python3\"\nargs = [{:?}]\nsecrets = {{ NOTES_TOKEN = \"NOTES_TOKEN\" }}\n",
        dir.join("work/server.py").display().to_string()
    );
    std::fs::write(dir.join("cordon.toml"), config).unwrap();
    std::fs::write(dir.join("plan.cord"), "\"hi\"").unwrap();
    std::fs::write(dir.join("p.cord"), "entry() -> String\n").unwrap();
    let output = command(&dir, &["run", "--mcp", "notes", "--dir", "work=work:rw", "--policy", "p.cord", "plan.cord"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("server.py") && stderr.contains("which is given vault secrets"), "{stderr}");
}
