//! `cordon mcp add` and `cordon mcp remove`: a `[servers.NAME]` entry of `cordon.toml` written
//! or taken out, the rest of the file (comments, order, other servers) kept as it was.
//!
//! What is written holds names only: variables passed through by name (`env`) and variables set
//! to vault secrets by the secret's name (`secrets`). No value of a variable is ever written.

use std::path::Path;

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

use crate::config::{Config, read_text};
use crate::foreign::Format;

/// A stdio server to add.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewServer {
    pub command: String,
    pub args: Vec<String>,
    /// Variables passed through from Cordon's environment, by name.
    pub env: Vec<String>,
    /// Variables set to vault secrets: (variable, the secret's name in the vault).
    pub secrets: Vec<(String, String)>,
}

/// Whether `name` may name a server, a variable or a secret: letters, digits, `_` and `-`
/// (and for a variable, not starting with a digit or `-`), at most 64 of them.
fn check_name(what: &str, name: &str, variable: bool) -> Result<(), String> {
    let chars_ok = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || (c == '-' && !variable));
    let first_ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || !variable);
    if name.is_empty() || name.len() > 64 || !chars_ok || !first_ok || name.starts_with('-') {
        return Err(format!(
            "{what} {name:?} is not a name: use letters, digits and `_`{} (at most 64)",
            if variable { ", not starting with a digit" } else { " or `-`" }
        ));
    }
    Ok(())
}

/// The parsed `cordon.toml` text, refusing the other formats (which `add` would not write).
fn document(text: &str) -> Result<DocumentMut, String> {
    if Format::of(text) != Format::Cordon {
        return Err("this is not a cordon.toml (an mcpServers JSON or Codex file): give --config a cordon.toml".into());
    }
    Config::parse(text)?;
    text.parse::<DocumentMut>().map_err(|e| e.to_string())
}

/// `text`, a `cordon.toml`, with the server `name` added (or replaced, if `replace`).
pub fn add(text: &str, name: &str, server: &NewServer, replace: bool) -> Result<String, String> {
    check_name("the server name", name, false)?;
    if server.command.is_empty() {
        return Err(format!("the MCP server `{name}` needs a command: cordon mcp add {name} -- COMMAND ARGS"));
    }
    for var in &server.env {
        check_name("the variable", var, true)?;
    }
    for (var, secret) in &server.secrets {
        check_name("the variable", var, true)?;
        check_name("the secret", secret, false)?;
        if server.env.contains(var) {
            return Err(format!("the variable `{var}` is both passed through (--env) and a secret (--secret)"));
        }
    }
    if let Some((i, _)) =
        server.secrets.iter().enumerate().find(|(i, (v, _))| server.secrets[..*i].iter().any(|(w, _)| w == v))
    {
        return Err(format!("the variable `{}` is given two secrets", server.secrets[i].0));
    }
    let mut doc = document(text)?;
    let servers = doc.entry("servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Some(servers) = servers.as_table_mut() else {
        return Err("`servers` in this cordon.toml is not a table: write it as [servers.NAME] sections".into());
    };
    if servers.contains_key(name) && !replace {
        return Err(format!(
            "the config already has a server `{name}`: `cordon mcp remove {name}` first, or add it with --replace"
        ));
    }
    let mut entry = Table::new();
    entry["command"] = value(server.command.as_str());
    entry["args"] = value(server.args.iter().map(String::as_str).collect::<Array>());
    if !server.env.is_empty() {
        entry["env"] = value(server.env.iter().map(String::as_str).collect::<Array>());
    }
    if !server.secrets.is_empty() {
        let mut secrets = InlineTable::new();
        for (var, secret) in &server.secrets {
            secrets.insert(var, secret.as_str().into());
        }
        entry["secrets"] = value(secrets);
    }
    servers.insert(name, Item::Table(entry));
    let out = doc.to_string();
    // What is written must read back as written.
    let config = Config::parse(&out)?;
    config.server(name)?.transport(name)?;
    Ok(out)
}

/// `text`, a `cordon.toml`, without the server `name`.
pub fn remove(text: &str, name: &str) -> Result<String, String> {
    let mut doc = document(text)?;
    let removed = doc.get_mut("servers").and_then(Item::as_table_like_mut).and_then(|s| s.remove(name));
    if removed.is_none() {
        return Err(Config::parse(text)?.server(name).err().unwrap_or_else(|| format!("no MCP server `{name}`")));
    }
    Ok(doc.to_string())
}

/// Adds the server `name` to the file `path` (made if it does not exist).
pub fn add_to_file(path: &Path, name: &str, server: &NewServer, replace: bool) -> Result<(), String> {
    let text = match path.exists() {
        true => read_text(path)?,
        false => String::new(),
    };
    let out = add(&text, name, server, replace).map_err(|e| format!("{}: {e}", path.display()))?;
    write(path, &out)
}

/// Takes the server `name` out of the file `path`.
pub fn remove_from_file(path: &Path, name: &str) -> Result<(), String> {
    let out = remove(&read_text(path)?, name).map_err(|e| format!("{}: {e}", path.display()))?;
    write(path, &out)
}

/// Writes `text` to `path` whole or not at all: a file beside it, renamed over it.
fn write(path: &Path, text: &str) -> Result<(), String> {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = path.with_file_name(format!(".{file_name}.cordon-edit"));
    let result = std::fs::write(&temp, text).and_then(|()| {
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&temp, meta.permissions())?;
        }
        std::fs::rename(&temp, path)
    });
    result.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        format!("cannot write {}: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(command: &str, args: &[&str]) -> NewServer {
        NewServer {
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            ..NewServer::default()
        }
    }

    #[test]
    fn add_keeps_the_rest_of_the_file_and_refuses_what_exists() {
        let text = "# mine\nuser = \"ann\"\n\n[servers.files] # notes\ncommand = \"npx\"\n";
        let mut github = server("github-mcp-server", &["stdio"]);
        github.env = vec!["HOME".into()];
        github.secrets = vec![("GITHUB_PERSONAL_ACCESS_TOKEN".into(), "GITHUB_TOKEN".into())];
        let out = add(text, "github", &github, false).unwrap_or_default();
        assert!(out.starts_with(text), "{out}");
        assert!(
            out.contains("[servers.github]\ncommand = \"github-mcp-server\"\nargs = [\"stdio\"]\nenv = [\"HOME\"]\n")
        );
        assert!(out.contains("secrets = { GITHUB_PERSONAL_ACCESS_TOKEN = \"GITHUB_TOKEN\" }"), "{out}");
        let config = Config::parse(&out).unwrap_or_default();
        assert_eq!(config.servers["github"].secrets["GITHUB_PERSONAL_ACCESS_TOKEN"], "GITHUB_TOKEN");
        assert!(add(&out, "github", &github, false).is_err_and(|e| e.contains("already has a server `github`")));
        let replaced = add(&out, "github", &server("other", &[]), true).unwrap_or_default();
        assert!(replaced.contains("command = \"other\"") && !replaced.contains("GITHUB_TOKEN"), "{replaced}");
        let removed = remove(&replaced, "github").unwrap_or_default();
        assert_eq!(removed.trim_end(), text.trim_end());
        assert!(remove(&removed, "github").is_err_and(|e| e.contains("it lists: files")));
        // A fresh file; names that are not names; foreign formats.
        assert_eq!(
            add("", "a", &server("x", &["--y"]), false).unwrap_or_default(),
            "[servers.a]\ncommand = \"x\"\nargs = [\"--y\"]\n"
        );
        assert!(add("", "a b", &server("x", &[]), false).is_err());
        assert!(add("", "a", &server("", &[]), false).is_err_and(|e| e.contains("needs a command")));
        let mut bad = server("x", &[]);
        bad.env = vec!["A=secret".into()];
        assert!(add("", "a", &bad, false).is_err_and(|e| e.contains("not a name")));
        bad.env = vec!["A".into()];
        bad.secrets = vec![("A".into(), "S".into())];
        assert!(add("", "a", &bad, false).is_err_and(|e| e.contains("both")));
        assert!(
            add("{\"mcpServers\": {}}", "a", &server("x", &[]), false).is_err_and(|e| e.contains("not a cordon.toml"))
        );
        assert!(add("[mcp_servers.a]\ncommand = \"x\"\n", "b", &server("x", &[]), false).is_err());
        assert!(add("servers = 3\n", "b", &server("x", &[]), false).is_err());
        assert!(add("[servers.a]\nbogus = 1\n", "b", &server("x", &[]), false).is_err());
    }
}
