//! `cordon mcp`: Cordon and the Model Context Protocol.
//!
//! - `cordon mcp import SERVER` connects to a server of the config, lists its tools and prints
//!   a starter policy for them (`cordon::api::mcp::import`).
//! - `cordon mcp serve` is an MCP server on stdio giving another agent (Claude Code, Codex,
//!   Cursor, any MCP client) Cordon as its code-execution tool: `check` a plan, `run` it (every
//!   call through the labels, the gate and the audit log, as `cordon run`), and `describe` the
//!   language and the policies. Resources: the language reference and each policy. On stdio,
//!   or on streamable HTTP at a loopback address (`--http`). Each MCP session has a workspace of
//!   its own (`cordon::Workspace`, opened at its first call): the environments' state and the
//!   sessions a plan hands back persist for the MCP session, the sessions in the store. No one can
//!   answer a card over MCP: the gate denies every card unless `--approve FILE` says otherwise,
//!   and each MCP session reads that file afresh, so no client can use up another's answers.
//! - With `--web-url`, a client that supports the MCP tasks extension gets each `run` as a task
//!   (`tasks.rs`): the plan is queued in the store, a `cordon serve` on that store runs it, and
//!   at a card the task waits for input (`input_required`): a URL elicitation that sends the
//!   user to the card's page. The agent cannot answer it; it polls until the user has.
//! - A calling agent is a model, and so a sink: what a `run` reports to it (the trace, the
//!   result, the errors) is what its clearance allows (`--clearance`, public by default, as
//!   `cordon ask`'s models), through the library's `Report::to_json`. A rejected plan, and a
//!   run that did not finish, are tool errors (`isError`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cordon::api::approval::Approver;
use cordon::api::diagnostics::render;
use cordon::api::events::Observers;
use cordon::api::mcp::import::Account;
use cordon::api::mcp::{Config, Connection};
use cordon::api::text::escape;
use cordon::{Audience, Request, SessionAt, Settings, Source, Workspace};
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServiceExt};
use serde_json::json;

mod pool;
mod tasks;

use crate::approve::ApproveArgs;
use crate::check::Format;
use crate::clearance::Clearance;
use crate::outcome::{Error, Report};
use crate::store::StoreArgs;
use crate::tools::{ToolArgs, kept};

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Connect to a server of the config, list its tools, and print a starter policy for them
    Import {
        /// The server's name in the config
        server: String,
        /// The config listing MCP servers (default: ./cordon.toml, else
        /// $XDG_CONFIG_HOME/cordon/cordon.toml, else ~/.config/cordon/cordon.toml); or an
        /// mcpServers JSON file, or a Codex config.toml
        #[arg(long = "config", value_name = "FILE")]
        config: Option<PathBuf>,
        /// The tools act on one account: thread a session through them, which Cordon keeps
        /// (never sent) and whose `tainted` measure stops writes after private reads
        #[arg(long)]
        session: bool,
    },
    /// Serve Cordon over MCP on stdio: tools `check`, `run` and `describe`
    Serve(Box<ServeArgs>),
    /// Add a server that Cordon starts (`-- COMMAND ARGS`) to cordon.toml: variables and
    /// secrets by name, never a value
    Add {
        /// Its name in the config (`--mcp NAME`)
        name: String,
        /// A variable passed through from Cordon's environment, by name; repeat for more
        #[arg(long = "env", value_name = "VAR")]
        env: Vec<String>,
        /// A variable set to a vault secret, by the secret's name (`cordon secrets add SECRET
        /// --program "COMMAND ARGS"` puts it in the vault); repeat for more
        #[arg(long = "secret", value_name = "VAR=SECRET")]
        secrets: Vec<String>,
        /// The cordon.toml to edit (default: ./cordon.toml, made if missing)
        #[arg(long = "config", value_name = "FILE")]
        config: Option<PathBuf>,
        /// Replace a server of that name
        #[arg(long)]
        replace: bool,
        /// The command and its arguments, after `--`
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// List the config's servers: name, command or url, capabilities
    List {
        /// The config (default: ./cordon.toml, else $XDG_CONFIG_HOME/cordon/cordon.toml, else
        /// ~/.config/cordon/cordon.toml); or an mcpServers JSON file, or a Codex config.toml
        #[arg(long = "config", value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Remove a server from cordon.toml
    Remove {
        name: String,
        /// The cordon.toml to edit (default: ./cordon.toml)
        #[arg(long = "config", value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub tools: ToolArgs,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub approve: ApproveArgs,

    /// Keep the plans' sessions in this file (default: in the store, under a name of each MCP
    /// session's own)
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,

    /// Serve streamable HTTP on this loopback address (`127.0.0.1:8080`) instead of stdio
    #[arg(long = "http", value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,

    /// What the calling agent may be shown of a run: `public` data only, or also what is secret
    /// to the `user` (an agent the user trusts with their data)
    #[arg(long, value_enum, default_value_t = Clearance::Public)]
    pub clearance: Clearance,

    /// The page of the `cordon serve` that runs this store's queue (`http://127.0.0.1:8700`):
    /// a client that supports MCP tasks then gets each `run` as a task that waits at its cards
    /// until the user answers them there
    #[arg(long, value_name = "URL")]
    pub web_url: Option<String>,
}

pub fn run(command: &Command) -> Result<Report, Error> {
    match command {
        Command::Import { server, config, session } => {
            let (config, _) = Config::find(config.as_deref()).map_err(Error::Usage)?;
            let entry = config.server(server).map_err(Error::Usage)?;
            // A server with a credential is asked through a broker of the vault in the
            // default store's place.
            let broker = match &entry.credential {
                Some(_) => {
                    let store = StoreArgs { path: None, durable: false }.location()?;
                    crate::broker::for_requests(None, &store, false).map_err(Error::from)?
                }
                None => None,
            };
            let connection = Connection::start(server, entry, broker.as_ref()).map_err(Error::Usage)?;
            let account = if *session { Account::Session } else { Account::PerCall };
            // With several capabilities, every tool goes to the first: move each where it belongs.
            let capabilities = entry.capabilities(server).map_err(Error::Usage)?;
            let stdout = cordon::api::mcp::import::policy(server, &capabilities[0], connection.tools(), account)
                .map_err(Error::Usage)?;
            Ok(Report { stdout, accepted: true, error: None })
        }
        Command::Serve(args) => serve(args),
        Command::Add { name, env, secrets, config, replace, command } => {
            add(name, env, secrets, config, *replace, command)
        }
        Command::List { config } => list(config.as_deref()),
        Command::Remove { name, config } => {
            let path = config.clone().unwrap_or_else(|| PathBuf::from("cordon.toml"));
            cordon::api::mcp::edit::remove_from_file(&path, name).map_err(Error::Usage)?;
            let stdout = format!("removed `{}` from {}\n", escape(name), escape(&path.display().to_string()));
            Ok(Report { stdout, accepted: true, error: None })
        }
    }
}

/// `cordon mcp add`: the entry written, and how to bind each secret it names to it.
fn add(
    name: &str,
    env: &[String],
    secrets: &[String],
    config: &Option<PathBuf>,
    replace: bool,
    command: &[String],
) -> Result<Report, Error> {
    if let Some(var) = env.iter().find(|v| v.contains('=')) {
        let var = escape(var.split('=').next().unwrap_or_default());
        return Err(Error::Usage(format!(
            "--env takes a variable's name ({var}), passed through from Cordon's environment; a value is never \
             written: a secret goes in the vault, `cordon secrets add SECRET --program \"COMMAND ARGS\"`, then \
             --secret {var}=SECRET"
        )));
    }
    let secrets = secrets
        .iter()
        .map(|s| match s.split_once('=') {
            Some((var, secret)) => Ok((var.to_string(), secret.to_string())),
            None => {
                Err(Error::Usage(format!("--secret {}: write VAR=SECRET, the secret's name in the vault", escape(s))))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (program, args) = command.split_first().ok_or_else(|| Error::Usage("give the command after `--`".into()))?;
    let server = cordon::api::mcp::edit::NewServer {
        command: program.clone(),
        args: args.to_vec(),
        env: env.to_vec(),
        secrets: secrets.clone(),
    };
    let path = config.clone().unwrap_or_else(|| PathBuf::from("cordon.toml"));
    cordon::api::mcp::edit::add_to_file(&path, name, &server, replace).map_err(Error::Usage)?;
    let mut stdout = format!("added `{}` to {}\n", escape(name), escape(&path.display().to_string()));
    for (_, secret) in &secrets {
        let program = escape(&command.join(" "));
        stdout.push_str(&format!(
            "its secret `{}` must be in the vault, bound to it: cordon secrets add {} --program \"{program}\"\n",
            escape(secret),
            escape(secret)
        ));
    }
    Ok(Report { stdout, accepted: true, error: None })
}

/// `cordon mcp list`: each server on a line, escaped for the terminal.
fn list(config: Option<&std::path::Path>) -> Result<Report, Error> {
    let (config, path) = Config::find(config).map_err(Error::Usage)?;
    let Some(path) = path else {
        return Ok(Report {
            stdout: "no config (./cordon.toml, or the user's): cordon mcp add NAME -- COMMAND ARGS\n".into(),
            accepted: true,
            error: None,
        });
    };
    let mut stdout = format!("{}:\n", escape(&path.display().to_string()));
    if config.servers.is_empty() {
        stdout.push_str("  no servers\n");
    }
    for (name, server) in &config.servers {
        let what = match (&server.command, &server.url) {
            (Some(command), _) => {
                std::iter::once(command).chain(&server.args).map(|a| escape(a)).collect::<Vec<_>>().join(" ")
            }
            (None, Some(url)) => escape(url),
            (None, None) => "(no command or url)".into(),
        };
        let capabilities = match server.capabilities(name) {
            Ok(all) => all.iter().map(|c| escape(c)).collect::<Vec<_>>().join(", "),
            Err(e) => format!("error: {}", escape(&e)),
        };
        stdout.push_str(&format!("  {}  {what}  ({capabilities})\n", escape(name)));
    }
    Ok(Report { stdout, accepted: true, error: None })
}

/// Serves until the client closes stdin (or, over HTTP, until the process is stopped).
fn serve(args: &ServeArgs) -> Result<Report, Error> {
    if let Some(addr) = args.http.filter(|a| !a.ip().is_loopback()) {
        return Err(Error::Usage(format!(
            "--http {addr}: serve on a loopback address only (127.0.0.1 or [::1]); the server has no authentication"
        )));
    }
    // The tools and policies are checked once, before the first request: a broken policy or a
    // server that does not match is an error at start, not a failure of every call.
    let kept = kept(&args.store, &args.approve, args.session.as_deref());
    let tools = args.tools.open(&|p| std::fs::read_to_string(p), kept, &args.store.location()?)?;
    // The approver too: a file of answers that does not read is an error at start.
    let approver = Arc::new(Mutex::new(args.approve.unattended()?));
    let checks =
        pool::Pool::per_core("cordon-check").map_err(|e| Error::Usage(format!("cannot start threads: {e}")))?;
    let base = Cordon {
        args: Arc::new(args.clone()),
        checks,
        policies: tools.policies.clone(),
        approver,
        workspace: Arc::default(),
        session: None,
    };
    drop(tools);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Runs (and `describe`) block a thread each: at most this many at once, the rest wait.
        .max_blocking_threads(MAX_RUNS)
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("cannot start the MCP server: {e}")))?;
    let served = match args.http {
        None => runtime.block_on(async {
            let session = base.for_session().map_err(|e| e.to_string())?;
            let service = session.serve(rmcp::transport::stdio()).await.map_err(|e| e.to_string())?;
            service.waiting().await.map(|_| ()).map_err(|e| e.to_string())
        }),
        Some(addr) => runtime.block_on(serve_http(base, addr)),
    };
    served.map_err(|e| Error::Usage(format!("the MCP connection failed: {e}")))?;
    Ok(Report { stdout: String::new(), accepted: true, error: None })
}

/// Streamable HTTP on `addr`: each MCP session gets its own sessions.
async fn serve_http(base: Cordon, addr: std::net::SocketAddr) -> Result<(), String> {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::StreamableHttpService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

    let service = TowerToHyperService::new(StreamableHttpService::new(
        move || base.for_session().map_err(|e| std::io::Error::other(e.to_string())),
        LocalSessionManager::default().into(),
        crate::origin::loopback_only(),
    ));
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("cordon: serving MCP on http://{bound}/ (stop with Ctrl-C)");
    loop {
        let (stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        // Each answer is sent whole as it is ready: a keep-alive client would otherwise wait
        // for its acknowledgement of the last one (Nagle's algorithm), about 40 ms each.
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// The server: what it was started with, the policies, and for one MCP session, who answers its
/// cards (its own, so a file of answers is read in order across that session's runs and no
/// other's), its workspace (opened at its first `check` or `run`) and where its sessions are
/// kept.
#[derive(Clone)]
struct Cordon {
    args: Arc<ServeArgs>,
    /// The threads that check plans, shared by every MCP session (`pool`).
    checks: pool::Pool,
    policies: Vec<Source>,
    approver: Arc<Mutex<Box<dyn Approver + Send>>>,
    workspace: Arc<Mutex<Option<Workspace>>>,
    /// The MCP session's sessions: the file `--session` names, else its own in the store.
    session: Option<SessionAt>,
}

impl std::fmt::Debug for Cordon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cordon").field("args", &self.args).field("session", &self.session).finish()
    }
}

const CHECK: &str = "Type-check a Cordon plan against the policies without running it. Cordon is a small \
typed language for agent plans: call `describe` first for the language and the tools you may call. Returns \
`accepted`, or the diagnostics in the concise form (line:column, code, message, how to fix it).";

const RUN: &str = "Check a Cordon plan and, if it is accepted, run it: every tool call goes through \
information-flow labels, the approval gate (cards no one answers here are denied) and the audit log. \
Returns JSON: status (rejected, failed, done), result, the trace of calls, diagnostics. A plan is a sequence \
of `let` bindings and expressions; its last expression is its answer. Call `describe` for the language.";

const DESCRIBE: &str = "The Cordon language reference and the policies: the capabilities, tools, types and \
labels a plan may use, and the entry (the values a plan starts with). Read this before writing a plan.";

fn plan_schema() -> serde_json::Map<String, serde_json::Value> {
    let schema = json!({
        "type": "object",
        "properties": { "plan": { "type": "string", "description": "The plan's source code, in Cordon" } },
        "required": ["plan"],
    });
    schema.as_object().cloned().unwrap_or_default()
}

impl Cordon {
    /// The server for one MCP session: an approver and a workspace of its own, and its sessions
    /// in the file `--session` names, else in the store under a name no other MCP session has.
    fn for_session(&self) -> Result<Cordon, Error> {
        static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let session = match &self.args.session {
            Some(path) => SessionAt::File(path.clone()),
            None => SessionAt::Store(format!("mcp:{}:{n}", instance())),
        };
        let approver = Arc::new(Mutex::new(self.args.approve.unattended()?));
        Ok(Cordon { approver, workspace: Arc::default(), session: Some(session), ..self.clone() })
    }

    fn tools() -> Vec<Tool> {
        let empty = json!({"type": "object", "properties": {}}).as_object().cloned().unwrap_or_default();
        vec![
            Tool::new("check", CHECK, plan_schema()),
            Tool::new("run", RUN, plan_schema()),
            Tool::new("describe", DESCRIBE, empty),
        ]
    }

    /// The language reference and every policy, as the `describe` tool gives them.
    fn describe(&self) -> String {
        let mut out = format!(
            "# The Cordon language\n\nOver MCP you write a whole plan, not a fill: the entry's parameters are in \
             scope by name, and the plan's last expression is its answer (of the entry's type).\n\n{}\n",
            cordon::api::models::REFERENCE.as_str()
        );
        for policy in &self.policies {
            out.push_str(&format!("\n# Policy {}\n\n{}\n", policy.name, policy.text));
        }
        out
    }

    /// Runs `f` with this MCP session's workspace, opening it first if this is its first call.
    fn with_workspace<T>(&self, f: impl FnOnce(&mut Workspace, &mut (dyn Approver + Send)) -> T) -> Result<T, String> {
        let mut workspace = self.workspace.lock().map_err(|_| "an earlier call of this session failed".to_string())?;
        if workspace.is_none() {
            let args = &self.args;
            let kept = kept(&args.store, &args.approve, args.session.as_deref());
            let location = args.store.location().map_err(|e| e.to_string())?;
            let tools = args.tools.open(&|p| std::fs::read_to_string(p), kept, &location).map_err(|e| e.to_string())?;
            let storage = args.store.open().map_err(|e| e.to_string())?;
            let mut settings = Settings::default();
            args.approve.apply(&mut settings).map_err(|e| e.to_string())?;
            let mut opened = Workspace::new(tools, storage, settings);
            if let Some(at) = &self.session {
                opened = opened.with_session(at.clone());
            }
            *workspace = Some(opened);
        }
        let Some(workspace) = workspace.as_mut() else { return Err("the workspace did not open".into()) };
        let mut approver =
            self.approver.lock().map_err(|_| "an earlier run failed while asking for approval".to_string())?;
        Ok(f(workspace, &mut **approver))
    }

    fn check(&self, plan: &str) -> CallToolResult {
        let checked = self.with_workspace(|workspace, approver| {
            workspace.check(&Source::new("plan.cord", plan), &*approver).map_err(|e| e.to_string())
        });
        let checked = match checked.and_then(|c| c) {
            Ok(checked) => checked,
            Err(e) => return CallToolResult::error(vec![ContentBlock::text(e)]),
        };
        let text = match checked.accepted() {
            true => "accepted".to_string(),
            false => crate::check::render_outcome(Format::Concise, &checked.sources, "plan.cord", &checked.diagnostics),
        };
        let mut result = match checked.accepted() {
            true => CallToolResult::success(vec![ContentBlock::text(text)]),
            false => CallToolResult::error(vec![ContentBlock::text(text)]),
        };
        result.structured_content = Some(json!({
            "accepted": checked.accepted(),
            "diagnostics": render::json(&checked.diagnostics, &checked.sources),
        }));
        result
    }

    fn run(&self, plan: &str) -> CallToolResult {
        let clearance = cordon::Clearance::from(self.args.clearance);
        let ran = self.with_workspace(|workspace, approver| {
            let plan = Source::new(PLAN, plan);
            let prepared = workspace.prepare(Request::AgentPlan(&plan), approver);
            let report = prepared.and_then(|p| p.run(&mut Observers::new()));
            let label = clearance.label(workspace.principal());
            report.map(|r| (r.status(), r.to_json(Audience::Agent { name: clearance.name(), clearance: &label })))
        });
        match ran.and_then(|r| r.map_err(|e| e.to_string())) {
            Ok((status, json)) => {
                let mut result = CallToolResult::structured(json);
                result.is_error = Some(status != "done");
                result
            }
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]),
        }
    }
}

/// This server process among every other that shares the store, now or later: its pid and the
/// time it started, in nanoseconds.
fn instance() -> &'static str {
    static INSTANCE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    INSTANCE.get_or_init(|| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        format!("{}-{nanos}", std::process::id())
    })
}

/// The most runs one `mcp serve` performs at once; more wait for one to end.
const MAX_RUNS: usize = 32;

/// The name a plan sent over MCP has in diagnostics and the store.
const PLAN: &str = "<mcp plan>";

impl ServerHandler for Cordon {
    fn get_info(&self) -> ServerConfig {
        let capabilities = match self.args.web_url {
            Some(_) => ServerCapabilities::builder().enable_tools().enable_resources().enable_tasks().build(),
            None => ServerCapabilities::builder().enable_tools().enable_resources().build(),
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("cordon", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Cordon checks and runs agent plans written in its small typed language. Call `describe` for the \
                 language and the tools, `check` to type-check a plan, `run` to run it.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Cordon::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let plan = request.arguments.as_ref().and_then(|a| a.get("plan")).and_then(|p| p.as_str()).map(str::to_string);
        let this = self.clone();
        let tasks = self.args.web_url.is_some() && context.client_capabilities().is_some_and(|c| c.supports_tasks());
        let name = request.name.to_string();
        // Checking is done by the solver pool; running blocks (a run may start MCP servers of
        // its own): both off the protocol's threads.
        if let ("check", Some(plan)) = (name.as_str(), &plan) {
            let plan = plan.clone();
            let checks = self.checks.clone();
            let checked = checks.run(move || this.check(&plan)).await;
            return checked
                .map(CallToolResponse::from)
                .ok_or_else(|| ErrorData::internal_error("checking the plan failed unexpectedly", None));
        }
        tokio::task::spawn_blocking(move || -> Result<CallToolResponse, ErrorData> {
            Ok(match (name.as_str(), plan) {
                ("describe", _) => CallToolResult::success(vec![ContentBlock::text(this.describe())]),
                ("run", Some(plan)) if tasks => return this.queue(&plan).map(CallToolResponse::Task),
                ("run", Some(plan)) => this.run(&plan),
                ("check" | "run", None) => {
                    CallToolResult::error(vec![ContentBlock::text("give the plan's source as `plan`")])
                }
                (other, _) => CallToolResult::error(vec![ContentBlock::text(format!(
                    "there is no tool `{other}`; the tools are check, run and describe"
                ))]),
            }
            .into())
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.task(&request.task_id))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
    }

    async fn update_task(
        &self,
        _request: rmcp::model::UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // The only input a task asks for is the user's visit to the card's page: whatever the
        // client answers changes nothing; only the user's answer there does.
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut resources = vec![Resource::new("cordon://reference", "The Cordon language reference")];
        for (i, policy) in self.policies.iter().enumerate() {
            resources.push(Resource::new(format!("cordon://policy/{i}"), format!("Policy {}", policy.name)));
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let text = match uri.strip_prefix("cordon://policy/") {
            _ if uri == "cordon://reference" => cordon::api::models::REFERENCE.to_string(),
            Some(i) => match i.parse::<usize>().ok().and_then(|i| self.policies.get(i)) {
                Some(policy) => policy.text.clone(),
                None => return Err(ErrorData::resource_not_found(format!("no resource {uri}"), None)),
            },
            None => return Err(ErrorData::resource_not_found(format!("no resource {uri}"), None)),
        };
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]).into())
    }
}
