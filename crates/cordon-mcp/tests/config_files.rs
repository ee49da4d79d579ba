//! Config files as `--config` names them: Cordon's, an `mcpServers` JSON file, a Codex TOML,
//! and files that are none of these (too big, not UTF-8), read without panicking.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use cordon_mcp::Config;

fn file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

#[test]
fn each_format_is_read_by_what_it_holds() {
    let (_d, claude) = file(
        "claude_desktop_config.json",
        br#"{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "e"]}}}"#,
    );
    let (config, found) = Config::find(Some(&claude)).unwrap();
    assert_eq!(found.as_deref(), Some(claude.as_path()));
    assert_eq!(config.server("everything").unwrap().args, ["-y", "e"]);
    let (_d, http) = file(".mcp.json", br#"{"mcpServers": {"s": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}"#);
    let config = Config::read(&http).unwrap();
    assert!(config.server("s").unwrap().transport("s").is_ok());
    let (_d, plain) = file(".mcp.json", br#"{"mcpServers": {"s": {"url": "http://mcp.example.com/mcp"}}}"#);
    let config = Config::read(&plain).unwrap();
    assert!(config.server("s").unwrap().transport("s").unwrap_err().contains("plain http"));
    let (_d, codex) = file("config.toml", b"model = \"o3\"\n[mcp_servers.docs]\ncommand = \"docs\"\n");
    assert_eq!(Config::read(&codex).unwrap().server("docs").unwrap().command.as_deref(), Some("docs"));
    let (_d, own) = file("cordon.toml", b"[servers.x]\ncommand = \"x\"\n");
    assert!(Config::read(&own).unwrap().server("x").is_ok());
}

#[test]
fn hostile_files_are_errors_that_name_them() {
    let (_d, binary) = file("c.json", b"{\"mcpServers\": {\"a\": {\"command\": \"\xff\xfe\"}}}");
    let error = Config::read(&binary).unwrap_err();
    assert!(error.contains("c.json") && error.contains("not UTF-8"), "{error}");
    let mut huge = b"{\"mcpServers\": {}, \"pad\": \"".to_vec();
    huge.resize(3 << 20, b'a');
    let (_d, big) = file("big.json", &huge);
    assert!(Config::read(&big).unwrap_err().contains("at most"));
    let (_d, garbage) = file("g.toml", b"[servers.a]\ncommand = [1, {}]\n");
    let error = Config::read(&garbage).unwrap_err();
    assert!(error.contains("g.toml") && error.contains("line 2"), "{error}");
    let (_d, empty) = file("e.json", b"");
    assert!(Config::read(&empty).unwrap().servers.is_empty());
    let (_d, nul) = file("n.json", b"\0\0\0");
    assert!(Config::read(&nul).is_err());
    assert!(Config::read(&PathBuf::from("/nonexistent/cordon.toml")).unwrap_err().contains("cannot read"));
    let dir = tempfile::tempdir().unwrap();
    assert!(Config::read(dir.path()).is_err());
}
