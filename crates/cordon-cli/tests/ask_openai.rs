//! `cordon ask` against an OpenAI-compatible server: a local mock on 127.0.0.1 that answers
//! like vLLM, llama.cpp or Ollama would, given the base URL (`openai:MODEL@URL`).
#![allow(clippy::unwrap_used)]

#[path = "../../cordon-agent/tests/mock/mod.rs"]
#[allow(dead_code)] // the provider tests use the rest of the mock
mod mock;

use std::process::Command;

use mock::{MockServer, Reply};
use serde_json::json;

const FILL: &str = "Here is the plan.\n```cordon\nmatch gh.repo(\"alice\", \"website\") {\n  Some(r) => if r.private { (\"private\", s) } else {\n    let (issues, s) = gh.list_issues(s, r);\n    (to_string(issues.filter(|i| i.open).len()) + \" open issues\", s)\n  },\n  None => (\"none\", s),\n}\n```";

#[test]
fn ask_works_against_an_openai_compatible_server_given_its_url() {
    let reply = json!({
        "choices": [{ "message": { "role": "assistant", "content": FILL } }],
        "usage": { "prompt_tokens": 1500, "completion_tokens": 80 }
    });
    let server = MockServer::start(vec![Reply::json(200, reply)]);
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-ask-openai");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["ask", "--env", "github", "--model"])
        .arg(format!("openai:local-model@{}/v1", server.url()))
        .env("CORDON_STORE", dir.join("cordon.db"))
        .arg("How many open issues does alice/website have?")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("answer: 3 open issues\n"), "{stdout}");
    assert!(stdout.contains("tokens: 1500 prompt + 80 reply"), "{stdout}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    let body = requests[0].json();
    assert_eq!(body["model"], "local-model");
    let prompt = body["messages"].to_string();
    assert!(prompt.contains("How many open issues does alice/website have?"), "{prompt}");
    assert!(prompt.contains("capability GitHub"), "{prompt}");
}
