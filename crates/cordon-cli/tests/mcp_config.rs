//! `cordon mcp add`, `list` and `remove` on cordon.toml, and the configs people already have
//! (an `mcpServers` JSON file, Codex's TOML, `$XDG_CONFIG_HOME`) read by `list` and by
//! `cordon run --mcp` against a real server (`@modelcontextprotocol/server-everything`, npm,
//! pinned).
#![allow(clippy::unwrap_used)]

use std::path::Path;

mod common;
#[path = "../../cordon-mcp/tests/common/servers.rs"]
mod servers;

use common::{cordon, workdir};

#[test]
fn add_list_and_remove_edit_cordon_toml_by_names_only() {
    let dir = workdir("cli-mcp-config", "add");
    std::fs::write(dir.join("cordon.toml"), "# my servers\nuser = \"ann\"\n").unwrap();
    let out = cordon(
        &dir,
        &[
            "mcp",
            "add",
            "github",
            "--env",
            "HOME",
            "--secret",
            "GITHUB_PERSONAL_ACCESS_TOKEN=GITHUB_TOKEN",
            "--",
            "github-mcp-server",
            "stdio",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("cordon secrets add GITHUB_TOKEN --program \"github-mcp-server stdio\""),
        "{}",
        out.stdout
    );
    let text = std::fs::read_to_string(dir.join("cordon.toml")).unwrap();
    assert!(text.starts_with("# my servers\nuser = \"ann\"\n"), "{text}");
    assert!(text.contains("secrets = { GITHUB_PERSONAL_ACCESS_TOKEN = \"GITHUB_TOKEN\" }"), "{text}");
    // A name that exists, a value where a name goes: refused, the file as it was.
    let again = cordon(&dir, &["mcp", "add", "github", "--", "other"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("already has a server `github`"), "{}", again.stderr);
    let value = cordon(&dir, &["mcp", "add", "x", "--env", "TOKEN=ghp_secret", "--", "x"]);
    assert_eq!(value.code, 2);
    assert!(value.stderr.contains("--env takes a variable's name") && !value.stderr.contains("ghp_secret"));
    assert_eq!(std::fs::read_to_string(dir.join("cordon.toml")).unwrap(), text);
    let out = cordon(&dir, &["mcp", "add", "github", "--replace", "--", "npx", "-y", "\u{1b}[2Jgh"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = cordon(&dir, &["mcp", "add", "search", "--config", "other.toml", "--", "search-server"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Listed escaped for the terminal.
    let out = cordon(&dir, &["mcp", "list"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "cordon.toml:\n  github  npx -y \\u{1b}[2Jgh  (Github)\n");
    let out = cordon(&dir, &["mcp", "remove", "github"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(dir.join("cordon.toml")).unwrap().trim_end(), "# my servers\nuser = \"ann\"");
    let out = cordon(&dir, &["mcp", "remove", "github"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no MCP server `github`"), "{}", out.stderr);
    // Never into another tool's file.
    std::fs::write(dir.join("claude.json"), r#"{"mcpServers": {}}"#).unwrap();
    let out = cordon(&dir, &["mcp", "add", "x", "--config", "claude.json", "--", "x"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not a cordon.toml"), "{}", out.stderr);
}

#[test]
fn list_reads_claude_and_codex_files_and_xdg_config_home() {
    let dir = workdir("cli-mcp-config", "list");
    std::fs::write(
        dir.join("claude.json"),
        r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "fs"], "env": {"HOME": "${HOME}"}},
           "web": {"type": "http", "url": "https://mcp.example.com/mcp"}}}"#,
    )
    .unwrap();
    let out = cordon(&dir, &["mcp", "list", "--config", "claude.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "claude.json:\n  files  npx -y fs  (Files)\n  web  https://mcp.example.com/mcp  (Web)\n");
    std::fs::write(dir.join("codex.toml"), "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"docs\"\n").unwrap();
    let out = cordon(&dir, &["mcp", "list", "--config", "codex.toml"]);
    assert_eq!(out.stdout, "codex.toml:\n  docs  docs  (Docs)\n", "{}", out.stderr);
    // A secret written in the file: refused, and not repeated.
    std::fs::write(dir.join("leaky.json"), r#"{"mcpServers": {"gh": {"command": "x", "env": {"TOKEN": "ghp_1"}}}}"#)
        .unwrap();
    let out = cordon(&dir, &["mcp", "list", "--config", "leaky.json"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("`gh`'s variable `TOKEN`") && !out.stderr.contains("ghp_1"), "{}", out.stderr);
    // No ./cordon.toml: $XDG_CONFIG_HOME's.
    std::fs::create_dir_all(dir.join("xdg/cordon")).unwrap();
    std::fs::write(dir.join("xdg/cordon/cordon.toml"), "[servers.mine]\ncommand = \"mine\"\n").unwrap();
    let out = common::command(&dir, &["mcp", "list"]).env("XDG_CONFIG_HOME", dir.join("xdg")).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.ends_with("xdg/cordon/cordon.toml:\n  mine  mine  (Mine)\n"), "{stdout}");
}

#[test]
fn run_reaches_a_server_listed_in_a_claude_file() {
    let dir = workdir("cli-mcp-config", "run");
    let bin = servers::npm_server(Path::new(env!("CARGO_TARGET_TMPDIR")), "mcp-server-everything");
    let claude = serde_json::json!({"mcpServers": {"everything": {"command": bin, "type": "stdio"}}});
    std::fs::write(dir.join("claude.json"), claude.to_string()).unwrap();
    std::fs::write(
        dir.join("everything.cord"),
        "capability Everything {\n  tool get_sum(a: Int, b: Int) -> String\n    \
         @label(a = untrusted(), b = untrusted(), returns = public())\n}\nentry(everything: Everything) -> String\n",
    )
    .unwrap();
    std::fs::write(dir.join("plan.cord"), "everything.get_sum(2, 3)").unwrap();
    let args = ["run", "--mcp", "everything", "--config", "claude.json", "--policy", "everything.cord", "plan.cord"];
    let out = cordon(&dir, &args);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("The sum of 2 and 3 is 5."), "{}", out.stdout);
}
