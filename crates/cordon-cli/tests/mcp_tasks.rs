//! `cordon mcp serve --web-url`: a calling agent whose MCP client supports tasks (here the rmcp
//! SDK's client over streamable HTTP) gets its `run` as a task. A `cordon serve` on the same
//! store runs it; at its card the task waits for input, as a URL elicitation that sends the user
//! to the card's page; whatever the agent answers changes nothing, the user's answer there
//! does, and the task completes with the result as the agent may see it. Another run of the
//! store is no task of the agent's.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::served::{Served, add_user, bearer, http, serve, submit, until, waiting, write_plan};
use common::{command, workdir};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, GetTaskParams, Implementation,
    TaskStatus, UpdateTaskParams,
};
use rmcp::transport::StreamableHttpClientTransport;

/// The principal of tools that act for no one of their own (`--dir` only).
const PRINCIPAL: &str = "user";

/// `cordon mcp serve --http` in `dir` with `args`: the process, stopped when dropped, and its URL.
struct McpServe(std::process::Child, String);

impl Drop for McpServe {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn mcp_serve(dir: &std::path::Path, args: &[&str]) -> McpServe {
    let mut all = vec!["mcp", "serve", "--http", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let mut child = command(dir, &all).stderr(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let url =
        line.split("on ").nth(1).and_then(|r| r.split(' ').next()).unwrap_or_else(|| panic!("{line:?}")).to_string();
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    McpServe(child, url)
}

#[test]
fn a_run_is_a_task_that_waits_for_the_users_answer_on_the_page() {
    let dir = workdir("cli-mcp-tasks", "card");
    let token = add_user(&dir, PRINCIPAL, &[]);
    let web: Served = serve(&dir, &[]);
    let out = format!("out={}:rw", dir.join("out").display());
    let page = format!("http://127.0.0.1:{}", web.port);
    let mcp = mcp_serve(&dir, &["--dir", &out, "--web-url", &page]);
    // A run of the store that is not the agent's.
    let other = submit(web.port, &token, &write_plan("other.txt", "not the agent's"));
    until(web.port, &token, other, waiting);

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let info =
            ClientConfig::new(ClientCapabilities::builder().enable_tasks().build(), Implementation::new("test", "1"));
        let client = info.serve(StreamableHttpClientTransport::from_uri(mcp.1.as_str())).await.unwrap();
        let plan = write_plan("agent.txt", "from the agent");
        let arguments = serde_json::json!({ "plan": plan }).as_object().cloned().unwrap();
        let called = client.call_tool_once(CallToolRequestParams::new("run").with_arguments(arguments)).await.unwrap();
        let CallToolResponse::Task(created) = called else { panic!("a task: {called:?}") };
        let id = created.task.task_id.clone();
        let get = || client.get_task(GetTaskParams::new(id.clone()));

        // It waits at the card: the user is sent to the card's page.
        let started = Instant::now();
        let task = loop {
            let task = get().await.unwrap();
            if task.task.status() == TaskStatus::InputRequired {
                break task;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "{task:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let shown = serde_json::to_value(&task).unwrap();
        let run = id.strip_prefix("run-").unwrap().to_string();
        assert_eq!(shown["inputRequests"]["card"]["params"]["mode"], "url", "{shown}");
        assert_eq!(shown["inputRequests"]["card"]["params"]["url"], format!("{page}/runs/{run}"), "{shown}");

        // The agent answers the elicitation itself: nothing is approved.
        let answered = serde_json::json!({ "card": { "action": "accept" } }).as_object().cloned().unwrap();
        let update = serde_json::json!({ "taskId": id, "inputResponses": answered });
        client.update_task(serde_json::from_value::<UpdateTaskParams>(update).unwrap()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(get().await.unwrap().task.status(), TaskStatus::InputRequired);
        assert!(!dir.join("out/agent.txt").exists(), "the agent cannot approve its own card");

        // Another run of the store is no task of the agent's.
        assert!(client.get_task(GetTaskParams::new(format!("run-{other}"))).await.is_err());

        // The user answers on the page's API. Where the file goes is the agent's choice, not the
        // user's words: the card is flagged, and approved only by typing the end of the name.
        let parked =
            http(web.port, "GET", &format!("/api/runs/{run}"), &[("Authorization", &bearer(&token))], "").json();
        let tail = &parked["card"]["confirm"]["tail"];
        assert!(tail.is_string(), "{parked}");
        let body = serde_json::json!({ "seal": parked["seal"], "answer": "yes", "confirm": tail }).to_string();
        let path = format!("/api/runs/{run}/answer");
        assert_eq!(http(web.port, "POST", &path, &[("Authorization", &bearer(&token))], &body).status, 200);
        let started = Instant::now();
        let done = loop {
            let task = get().await.unwrap();
            if task.task.status() == TaskStatus::Completed {
                break serde_json::to_value(&task).unwrap();
            }
            assert!(started.elapsed() < Duration::from_secs(30), "{task:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(done["result"]["isError"], false, "{done}");
        assert_eq!(done["result"]["structuredContent"]["status"], "done", "{done}");
        assert_eq!(done["result"]["structuredContent"]["clearance"], "public", "{done}");
        client.cancel().await.unwrap();
    });
    assert_eq!(std::fs::read_to_string(dir.join("out/agent.txt")).unwrap(), "from the agent");
}
