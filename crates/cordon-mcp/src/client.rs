//! A connection to one MCP server: a child process on stdio (started with a clean environment,
//! reaped when the connection ends; started by the credential broker when it wants vault
//! secrets) or a streamable HTTP endpoint (reached through the broker when it has a credential). Its tools are listed once;
//! starting, listing and each call are bounded by a timeout, a result by a size limit, and the
//! list of tools by pages, count and size (a server that pages forever, repeats a cursor or
//! lists a tool twice is refused).
//! Synchronous to its caller: the connection owns a small runtime for the SDK.

use std::collections::{BTreeSet, HashMap};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, PaginatedRequestParams, Tool};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::io::AsyncReadExt;

use cordon_broker::{Client, Spawn};
use cordon_text::guard_line;

use crate::brokered::Brokered;
use crate::config::{Server, Transport};

/// The most of a server's standard error kept, to explain why it failed.
const STDERR_TAIL: usize = 2000;

/// The most pages of tools a server may list.
pub const MAX_TOOL_PAGES: usize = 100;

/// The most tools a server may list.
pub const MAX_TOOLS: usize = 1000;

/// The most bytes of JSON a server's tools may take together.
pub const MAX_TOOLS_BYTES: usize = 4 << 20;

/// A running server.
pub struct Connection {
    name: String,
    runtime: tokio::runtime::Runtime,
    service: Option<RunningService<RoleClient, ()>>,
    tools: Vec<Tool>,
    timeout: Duration,
    stderr: Arc<Mutex<String>>,
    /// The server's process id, while it runs.
    pid: Option<u32>,
    /// Why the server can no longer be asked anything, once it cannot.
    dead: Option<String>,
    /// What grants for its tools are bound to (see [`Connection::instance`]).
    instance: String,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("name", &self.name).field("tools", &self.tools.len()).finish()
    }
}

impl Connection {
    /// Starts (or, over HTTP, reaches) the server `name` as `server` says, initializes it and
    /// lists its tools, each within the server's startup timeout. A server with a credential is
    /// reached through `broker`.
    pub fn start(name: &str, server: &Server, broker: Option<&Arc<Client>>) -> Result<Connection, String> {
        let transport = server.transport(name)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the MCP client for `{name}`: {e}"))?;
        let stderr = Arc::new(Mutex::new(String::new()));
        let startup = server.startup_timeout();
        let started = runtime.block_on(async {
            match transport {
                Transport::Stdio { command } if !server.secrets.is_empty() => {
                    let Some(broker) = broker else {
                        return Err(format!(
                            "the MCP server `{name}` wants vault secrets, and there is no vault (cordon secrets add \
                             NAME --program \"{command} ..\")"
                        ));
                    };
                    let stream = broker.start(&spawn(command, server)).map_err(|e| {
                        format!("the credential broker did not start the MCP server `{name}` (`{command}`): {e}")
                    })?;
                    stream.set_nonblocking(true).map_err(|e| e.to_string())?;
                    let stream = tokio::net::UnixStream::from_std(stream).map_err(|e| e.to_string())?;
                    let (service, tools) = connect(name, stream.into_split(), startup).await?;
                    Ok((service, tools, None))
                }
                Transport::Stdio { command } => {
                    let (transport, err) = TokioChildProcess::builder(child(command, server))
                        .stderr(Stdio::piped())
                        .spawn()
                        .map_err(|e| format!("cannot start the MCP server `{name}` (`{command}`): {e}"))?;
                    if let Some(err) = err {
                        tokio::spawn(keep_tail(err, stderr.clone()));
                    }
                    let pid = transport.id();
                    let (service, tools) = connect(name, transport, startup).await?;
                    Ok((service, tools, pid))
                }
                Transport::Http { url } => {
                    let mut headers = HashMap::new();
                    for (key, value) in server.header_values(name)? {
                        let bad =
                            |what: &str| format!("the MCP server `{name}`'s header `{key}` is not a valid {what}");
                        headers.insert(
                            HeaderName::try_from(key.as_str()).map_err(|_| bad("name"))?,
                            HeaderValue::try_from(value.as_str()).map_err(|_| bad("value"))?,
                        );
                    }
                    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers);
                    let (service, tools) = match &server.credential {
                        Some(credential) => {
                            let Some(broker) = broker else {
                                return Err(format!(
                                    "the MCP server `{name}`'s credential `{credential}` is a vault secret, and there \
                                     is no vault (cordon secrets add {credential} --host ...)"
                                ));
                            };
                            let client = Brokered::new(broker.clone(), credential, server.timeout());
                            connect(name, StreamableHttpClientTransport::with_client(client, config), startup).await?
                        }
                        None => connect(name, StreamableHttpClientTransport::from_config(config), startup).await?,
                    };
                    Ok((service, tools, None))
                }
            }
        });
        let (service, tools, pid) = match started {
            Ok(started) => started,
            Err(e) => return Err(with_stderr(e, &stderr)),
        };
        let instance = instance(name, server, &tools);
        Ok(Connection {
            instance,
            name: name.to_string(),
            runtime,
            service: Some(service),
            tools,
            timeout: server.timeout(),
            stderr,
            pid,
            dead: None,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server as it was started and as it listed its tools: `mcp NAME sha256:HEX`, over
    /// its name, command, arguments, working directory, address and tool list (names,
    /// descriptions, schemas, annotations). A grant bound to it does not cover the same name
    /// started otherwise or serving other tools.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The tools the server listed when it started.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Calls `tool` with `arguments`, within the timeout. A server that timed out or broke
    /// the connection is not asked again: every later call fails at once with the same reason.
    pub fn call(&mut self, tool: &str, arguments: JsonObject) -> Result<CallToolResult, String> {
        if let Some(dead) = &self.dead {
            return Err(dead.clone());
        }
        let Some(service) = &self.service else { return Err(format!("the MCP server `{}` was shut down", self.name)) };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let timeout = self.timeout;
        let answer = self.runtime.block_on(async { tokio::time::timeout(timeout, service.call_tool(params)).await });
        match answer {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(e)) if matches!(e, rmcp::ServiceError::McpError(_)) => {
                Err(format!("the MCP server `{}` refused `{tool}`: {}", self.name, guard_line(&e.to_string())))
            }
            Ok(Err(e)) => Err(self.died(format!(
                "the MCP server `{}` failed during `{tool}`: {}",
                self.name,
                guard_line(&e.to_string())
            ))),
            Err(_) => {
                Err(self.died(format!("the MCP server `{}` did not answer `{tool}` within {timeout:?}", self.name)))
            }
        }
    }

    /// Marks the server dead (and stops it): `reason`, with what it last wrote to stderr.
    fn died(&mut self, reason: String) -> String {
        let reason = with_stderr(reason, &self.stderr);
        self.dead = Some(reason.clone());
        self.shutdown();
        reason
    }

    /// Stops the server: closes the connection and kills the process if it has not exited.
    pub fn shutdown(&mut self) {
        if let Some(service) = self.service.take() {
            let _ =
                self.runtime.block_on(async { tokio::time::timeout(Duration::from_secs(2), service.cancel()).await });
        }
        self.pid = None;
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The server's process: its arguments, an empty environment but `PATH` and the variables
/// the config passes through, its folder; killed if the connection is dropped.
fn child(command: &str, server: &Server) -> tokio::process::Command {
    let mut child = tokio::process::Command::new(command);
    child.args(&server.args).env_clear().kill_on_drop(true);
    for var in std::iter::once("PATH").chain(server.env.iter().map(String::as_str)) {
        if let Some(value) = std::env::var_os(var) {
            child.env(var, value);
        }
    }
    if let Some(cwd) = &server.cwd {
        child.current_dir(cwd);
    }
    child
}

/// What the broker starts for a server that wants vault secrets: as [`child`] would be, with the
/// secrets by name.
fn spawn(command: &str, server: &Server) -> Spawn {
    let env = std::iter::once("PATH")
        .chain(server.env.iter().map(String::as_str))
        .filter_map(|var| std::env::var(var).ok().map(|value| (var.to_string(), value)))
        .collect();
    Spawn {
        command: command.to_string(),
        args: server.args.clone(),
        cwd: server.cwd.as_ref().map(|c| c.display().to_string()),
        env,
        secrets: server.secrets.iter().map(|(var, secret)| (var.clone(), secret.clone())).collect(),
    }
}

/// Initializes the server over `transport` and lists its tools, each within `timeout`.
async fn connect<T, E, A>(
    name: &str,
    transport: T,
    timeout: Duration,
) -> Result<(RunningService<RoleClient, ()>, Vec<Tool>), String>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let service = tokio::time::timeout(timeout, ().serve(transport))
        .await
        .map_err(|_| format!("the MCP server `{name}` did not finish starting within {timeout:?}"))?
        .map_err(|e| format!("the MCP server `{name}` failed to start: {}", guard_line(&e.to_string())))?;
    let tools = tokio::time::timeout(timeout, list_tools(name, &service))
        .await
        .map_err(|_| format!("the MCP server `{name}` did not list its tools within {timeout:?}"))??;
    Ok((service, tools))
}

/// Every page of the server's tools, within [`MAX_TOOL_PAGES`], [`MAX_TOOLS`] and
/// [`MAX_TOOLS_BYTES`]; a cursor given twice (a loop) or a name listed twice is an error.
async fn list_tools(name: &str, service: &RunningService<RoleClient, ()>) -> Result<Vec<Tool>, String> {
    let mut tools: Vec<Tool> = Vec::new();
    let mut names = BTreeSet::new();
    let mut cursors = BTreeSet::new();
    let mut bytes = 0usize;
    let mut cursor = None;
    for _ in 0..MAX_TOOL_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        let page = service
            .list_tools(Some(params))
            .await
            .map_err(|e| format!("the MCP server `{name}` could not list its tools: {}", guard_line(&e.to_string())))?;
        for tool in page.tools {
            bytes += serde_json::to_vec(&tool).map_or(usize::MAX, |json| json.len());
            if bytes > MAX_TOOLS_BYTES {
                return Err(format!(
                    "the MCP server `{name}` lists tools of more than {} MiB in all: refused",
                    MAX_TOOLS_BYTES >> 20
                ));
            }
            if !names.insert(tool.name.to_string()) {
                return Err(format!("the MCP server `{name}` lists the tool {:?} twice: refused", tool.name));
            }
            tools.push(tool);
            if tools.len() > MAX_TOOLS {
                return Err(format!("the MCP server `{name}` lists more than {MAX_TOOLS} tools: refused"));
            }
        }
        match page.next_cursor {
            None => return Ok(tools),
            Some(next) if !cursors.insert(next.clone()) => {
                return Err(format!("the MCP server `{name}` gave the same page cursor twice while listing its tools"));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!("the MCP server `{name}` lists its tools in more than {MAX_TOOL_PAGES} pages: refused"))
}

/// Keeps the last of what the server writes to stderr, to explain why it failed.
async fn keep_tail(mut err: tokio::process::ChildStderr, tail: Arc<Mutex<String>>) {
    let mut buf = [0u8; 1024];
    while let Ok(n) = err.read(&mut buf).await {
        if n == 0 {
            break;
        }
        if let Ok(mut tail) = tail.lock() {
            tail.push_str(&String::from_utf8_lossy(&buf[..n]));
            if tail.len() > STDERR_TAIL {
                let cut = tail.len() - STDERR_TAIL;
                let cut = (cut..tail.len()).find(|&i| tail.is_char_boundary(i)).unwrap_or(tail.len());
                tail.drain(..cut);
            }
        }
    }
}

fn with_stderr(reason: String, stderr: &Mutex<String>) -> String {
    let tail = stderr.lock().map(|t| t.trim().to_string()).unwrap_or_default();
    // The server's own words, on one line with nothing hidden.
    if tail.is_empty() { reason } else { format!("{reason}; it wrote: {}", guard_line(&tail.replace('\n', " | "))) }
}

/// [`Connection::instance`] of the server `name`, started as `server` says, listing `tools`.
fn instance(name: &str, server: &Server, tools: &[Tool]) -> String {
    use sha2::{Digest, Sha256};
    let what = serde_json::json!({
        "name": name,
        "command": server.command,
        "args": server.args,
        "cwd": server.cwd,
        "url": server.url,
        "tools": tools,
    });
    let hash = Sha256::digest(what.to_string().as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("mcp {name} sha256:{hex}")
}
