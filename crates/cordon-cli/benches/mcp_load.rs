//! The load test of `cordon mcp serve --http`: many agents at once, each on one keep-alive
//! HTTP/1.1 connection, calling the `check` tool with a plan whose refinements go to the solver.
//!
//! It starts the release `cordon` binary as `cordon mcp serve --http 127.0.0.1:PORT --env github`
//! on a free loopback port, with its store, home and XDG directories in a temporary directory
//! (nothing of the user's is read), and drives it with `MCP_LOAD_CLIENTS` clients (default 50),
//! each on its own thread and connection: `initialize`, `notifications/initialized`, then
//! `MCP_LOAD_CALLS` (default 40) `tools/call`s of `check`, each answer checked to say the plan
//! is accepted (the bench panics with the body otherwise). It measures each call's latency, from
//! sending the request to the whole answer read, and prints one table and one JSON line (after
//! `mcp_load: `) with:
//!
//! - the wall time of the calls phase (every client starts its calls at once) and calls per second;
//! - the calls' latency: p50, p90, p99, max and mean;
//! - the server's peak resident memory (`VmHWM` of /proc/PID/status, read right after the load);
//! - the server's most threads (`Threads:`, sampled every 100 ms during the load);
//! - how many times a client had to reconnect because the server closed its connection (0 when
//!   keep-alive works).
//!
//! ```sh
//! cargo bench -p cordon-cli --bench mcp_load
//! MCP_LOAD_CLIENTS=5 MCP_LOAD_CALLS=10 cargo bench -p cordon-cli --bench mcp_load
//! MCP_LOAD_PLAN=examples/github/benign.cord cargo bench -p cordon-cli --bench mcp_load
//! ```
//!
//! `MCP_LOAD_PLAN` names a file holding another plan (it must be accepted under `--env github`);
//! `MCP_LOAD_SERVER` another `cordon` binary to serve (an older build, side by side).
//! Everything is bounded: loopback only, at most 200 clients and 1000 calls per client, 60 s on
//! every socket read and write, 30 s for the server to start. Run without `--bench` (as
//! `cargo test --benches` does), it does nothing.
#![allow(clippy::unwrap_used, clippy::panic)] // a benchmark may fail loudly

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const DEFAULT_CLIENTS: usize = 50;
const DEFAULT_CALLS: usize = 40;
const MAX_CLIENTS: usize = 200;
const MAX_CALLS: usize = 1000;
/// The longest any read from or write to a socket may take.
const SOCKET_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest the server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How often the server's thread count is read during the load.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// The longest header line or body an answer may have.
const MAX_LINE: usize = 64 * 1024;
const MAX_BODY: usize = 16 * 1024 * 1024;
const PROTOCOL_VERSION: &str = "2025-06-18";

/// Lists the open issues of alice/website and opens a triage issue: `create_issue` needs an
/// untainted session, a public repository and a non-empty title, which the checker settles from
/// what it knows; the count shown is refined by a disjunction over a remainder's bound, which
/// only the solver proves (one Z3 query per check: the checker's bounds, which need no solver,
/// prove the remainder's bound alone, but read no disjunction).
const PLAN: &str = r#"match gh.repo("alice", "website") {
  Some(r) => if r.private { ("private", s) } else {
    let (issues, s) = gh.list_issues(s, r);
    let open = issues.filter(|i| i.open).len();
    let r5 = open % 5;
    let shown: {v: Int | v >= 1 || v < -100} = if open >= 0 { r5 + 1 } else { 1 };
    let (t, s) = gh.create_issue(s, r, "Weekly triage", "Go through the open issues.");
    (to_string(shown), s)
  },
  None => ("none", s),
}"#;

/// What the run is asked to do, from the environment.
struct Options {
    clients: usize,
    calls: usize,
    plan: String,
    /// Where the plan came from, for the report.
    plan_name: String,
}

fn options() -> Options {
    let clients = count_from_env("MCP_LOAD_CLIENTS", DEFAULT_CLIENTS, MAX_CLIENTS);
    let calls = count_from_env("MCP_LOAD_CALLS", DEFAULT_CALLS, MAX_CALLS);
    let (plan, plan_name) = match std::env::var_os("MCP_LOAD_PLAN") {
        Some(path) => {
            let plan = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("MCP_LOAD_PLAN={}: {e}", Path::new(&path).display()));
            (plan, Path::new(&path).display().to_string())
        }
        None => (PLAN.to_string(), "the built-in triage plan".to_string()),
    };
    Options { clients, calls, plan, plan_name }
}

/// The count in the environment variable `name`, else `default`; refuses 0 and more than `max`.
fn count_from_env(name: &str, default: usize, max: usize) -> usize {
    let Some(value) = std::env::var_os(name) else { return default };
    let value = value.to_string_lossy();
    let count: usize = value.trim().parse().unwrap_or_else(|_| panic!("{name}={value}: not a whole number"));
    assert!(count >= 1, "{name}={value}: must be at least 1");
    assert!(count <= max, "{name}={value}: this load test refuses more than {max}");
    count
}

/// `cordon mcp serve --http` at a free loopback port, in a temporary directory of its own;
/// killed when dropped, a panic included.
struct Server {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
    /// Removed when the server is dropped, after the process is gone.
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::Builder::new().prefix("mcp_load").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let home = dir.path();
        let store = home.join("cordon.db");
        let log = home.join("server.log");
        let addr = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let binary =
            std::env::var_os("MCP_LOAD_SERVER").map_or(PathBuf::from(env!("CARGO_BIN_EXE_cordon")), PathBuf::from);
        let child = Command::new(binary)
            .args(["mcp", "serve", "--http", &addr.to_string(), "--env", "github", "--store"])
            .arg(&store)
            .current_dir(home)
            .env("CORDON_STORE", &store)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_RUNTIME_DIR", home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut server = Server { child, addr, log, _dir: dir };
        server.wait_until_listening();
        server
    }

    fn wait_until_listening(&mut self) {
        let started = Instant::now();
        while TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_err() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("cordon mcp serve --http {} exited ({status}):\n{}", self.addr, self.log_tail());
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "cordon mcp serve --http {} did not accept connections within {START_TIMEOUT:?}:\n{}",
                self.addr,
                self.log_tail()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The end of what the server wrote to stderr.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let start = log.len().saturating_sub(4000);
        let start = (start..log.len()).find(|&i| log.is_char_boundary(i)).unwrap_or(log.len());
        log[start..].to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if thread::panicking() {
            eprintln!("mcp_load: the server's stderr ended with:\n{}", self.log_tail());
        }
    }
}

/// A number in kB from a line `field` of /proc/PID/status (`VmHWM:`, `Threads:`).
fn proc_status(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// One HTTP answer, its body whole (chunks joined).
struct Response {
    status: u16,
    /// Names in lower case.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// What a failure shows of the answer.
    fn describe(&self) -> String {
        let headers: Vec<String> = self.headers.iter().map(|(n, v)| format!("{n}: {v}")).collect();
        format!("HTTP {}\n{}\n\n{}", self.status, headers.join("\n"), self.text())
    }
}

/// One client's keep-alive HTTP/1.1 connection to the server, opened again only when the
/// server closes it.
struct Connection {
    addr: SocketAddr,
    /// `None` once the server said it closes the connection.
    reader: Option<BufReader<TcpStream>>,
    /// How many times the connection was opened again.
    reconnects: usize,
}

impl Connection {
    fn open(addr: SocketAddr) -> Result<Connection, String> {
        Ok(Connection { addr, reader: Some(connect(addr)?), reconnects: 0 })
    }

    /// POSTs the JSON-RPC `body` to `/`, with the MCP session's id once there is one, and reads
    /// the whole answer.
    fn post(&mut self, body: &str, session: Option<&str>) -> Result<Response, String> {
        let reader = match self.reader.take() {
            Some(reader) => reader,
            None => {
                self.reconnects += 1;
                connect(self.addr)?
            }
        };
        let reader = self.reader.insert(reader);
        let session = match session {
            Some(id) => format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: {PROTOCOL_VERSION}\r\n"),
            None => String::new(),
        };
        let request = format!(
            "POST / HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        let sent = reader.get_mut().write_all(request.as_bytes()).and_then(|()| reader.get_mut().flush());
        sent.map_err(|e| format!("sending to {}: {e}", self.addr))?;
        let (response, keep_alive) = read_response(reader)?;
        if !keep_alive {
            self.reader = None;
        }
        Ok(response)
    }
}

fn connect(addr: SocketAddr) -> Result<BufReader<TcpStream>, String> {
    let stream = TcpStream::connect_timeout(&addr, SOCKET_TIMEOUT).map_err(|e| format!("connecting to {addr}: {e}"))?;
    stream.set_read_timeout(Some(SOCKET_TIMEOUT)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(SOCKET_TIMEOUT)).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    Ok(BufReader::with_capacity(64 * 1024, stream))
}

/// Reads one answer: the status line, the headers, the body (by `Content-Length`, chunked, or
/// to the end of the connection). Also whether the connection stays open after it.
fn read_response(reader: &mut BufReader<TcpStream>) -> Result<(Response, bool), String> {
    let (version, status, headers) = loop {
        let line = read_line(reader)?;
        let mut parts = line.splitn(3, ' ');
        let version = parts.next().unwrap_or_default().to_string();
        let status: u16 =
            parts.next().and_then(|s| s.parse().ok()).ok_or_else(|| format!("bad status line {line:?}"))?;
        let headers = read_headers(reader)?;
        // An interim answer (100 Continue) has no body: the real one follows.
        if !(100..200).contains(&status) {
            break (version, status, headers);
        }
    };
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.to_ascii_lowercase());
    let connection = header("connection").unwrap_or_default();
    let mut keep_alive =
        if version == "HTTP/1.0" { connection.contains("keep-alive") } else { !connection.contains("close") };
    let chunked = header("transfer-encoding").is_some_and(|te| te.split(',').any(|t| t.trim() == "chunked"));
    let body = if status == 204 || status == 304 {
        Vec::new()
    } else if chunked {
        read_chunked(reader)?
    } else if let Some(length) = header("content-length") {
        let length: usize = length.trim().parse().map_err(|_| format!("bad Content-Length {length:?}"))?;
        if length > MAX_BODY {
            return Err(format!("an answer of {length} bytes, more than {MAX_BODY}"));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).map_err(|e| format!("reading a body of {length} bytes: {e}"))?;
        body
    } else {
        // Neither length nor chunks: the body ends with the connection.
        keep_alive = false;
        let mut body = Vec::new();
        let read = reader.take(MAX_BODY as u64 + 1).read_to_end(&mut body);
        read.map_err(|e| format!("reading a body to the end of the connection: {e}"))?;
        if body.len() > MAX_BODY {
            return Err(format!("an answer of more than {MAX_BODY} bytes"));
        }
        body
    };
    Ok((Response { status, headers, body }, keep_alive))
}

/// The header lines up to the empty line, names in lower case.
fn read_headers(reader: &mut BufReader<TcpStream>) -> Result<Vec<(String, String)>, String> {
    let mut headers = Vec::new();
    loop {
        let line = read_line(reader)?;
        if line.is_empty() {
            return Ok(headers);
        }
        let (name, value) = line.split_once(':').ok_or_else(|| format!("bad header line {line:?}"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        if headers.len() > 100 {
            return Err("more than 100 header lines".to_string());
        }
    }
}

/// A chunked body (RFC 9112, 7.1): chunks of a hexadecimal size (extensions after `;`
/// ignored), each followed by CRLF, ended by a chunk of size 0 and the trailer section.
fn read_chunked(reader: &mut BufReader<TcpStream>) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line = read_line(reader)?;
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16).map_err(|_| format!("bad chunk size line {line:?}"))?;
        if size == 0 {
            read_headers(reader)?; // the trailers, up to the empty line
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(format!("an answer of more than {MAX_BODY} bytes"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).map_err(|e| format!("reading a chunk of {size} bytes: {e}"))?;
        let end = read_line(reader)?;
        if !end.is_empty() {
            return Err(format!("a chunk of {size} bytes followed by {end:?}, not CRLF"));
        }
    }
}

/// One line, without its CRLF (or LF); an error at the end of the connection.
fn read_line(reader: &mut BufReader<TcpStream>) -> Result<String, String> {
    let mut line = Vec::new();
    let read = reader.take(MAX_LINE as u64).read_until(b'\n', &mut line);
    read.map_err(|e| format!("reading from the server: {e}"))?;
    if line.last() != Some(&b'\n') {
        return Err(match line.is_empty() {
            true => "the server closed the connection".to_string(),
            false => format!("a line longer than {MAX_LINE} bytes, or cut short: {}", String::from_utf8_lossy(&line)),
        });
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8(line).map_err(|e| format!("a line not in UTF-8: {e}"))
}

/// The data of each event of a `text/event-stream` body (each event's `data:` lines joined by
/// newlines); an event the stream does not finish with an empty line is dropped, as the
/// standard says.
fn sse_events(body: &str) -> Vec<String> {
    let body = body.replace("\r\n", "\n").replace('\r', "\n");
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in body.split('\n') {
        if line.is_empty() {
            events.extend(data.take());
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        if field == "data" {
            let value = value.strip_prefix(' ').unwrap_or(value);
            match &mut data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => data = Some(value.to_string()),
            }
        }
    }
    events
}

/// The JSON-RPC answer to request `id` in `response`, whether the body is JSON or an event
/// stream; an error (with the body) if there is none or it is a JSON-RPC error.
fn json_rpc_answer(response: &Response, id: u64) -> Result<Value, String> {
    if response.status != 200 {
        return Err(format!("request {id}: not 200 OK:\n{}", response.describe()));
    }
    let text = response.text();
    let content_type = response.header("content-type").unwrap_or_default().to_ascii_lowercase();
    let messages: Vec<String> = match content_type.starts_with("text/event-stream") {
        true => sse_events(&text),
        false => vec![text.clone()],
    };
    let answer = messages
        .iter()
        .filter_map(|message| serde_json::from_str::<Value>(message).ok())
        .find(|message| message["id"] == id)
        .ok_or_else(|| format!("request {id}: no JSON-RPC answer with this id:\n{}", response.describe()))?;
    if answer.get("error").is_some() || answer.get("result").is_none() {
        return Err(format!("request {id}: a JSON-RPC error:\n{}", response.describe()));
    }
    Ok(answer)
}

/// Whether a `check` tool call's answer says the plan is accepted: not an error, and its
/// structured content's `accepted` true (or, without structured content, its text `accepted`).
fn says_accepted(answer: &Value) -> bool {
    let result = &answer["result"];
    if result["isError"] == true {
        return false;
    }
    match result.get("structuredContent") {
        Some(structured) => structured["accepted"] == true,
        None => result["content"].as_array().is_some_and(|content| {
            content
                .iter()
                .any(|block| block["type"] == "text" && block["text"].as_str().map(str::trim) == Some("accepted"))
        }),
    }
}

/// A client ready for its calls: its connection and MCP session.
struct Client {
    connection: Connection,
    session: String,
}

/// Opens a connection and an MCP session: `initialize`, then `notifications/initialized`.
fn initialize(addr: SocketAddr, number: usize) -> Result<Client, String> {
    let mut connection = Connection::open(addr)?;
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": format!("mcp_load-{number}"), "version": "1"},
        },
    });
    let response = connection.post(&body.to_string(), None)?;
    json_rpc_answer(&response, 1)?;
    let session = response
        .header("mcp-session-id")
        .ok_or_else(|| format!("initialize: no Mcp-Session-Id header:\n{}", response.describe()))?
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = connection.post(&initialized.to_string(), Some(&session))?;
    if !(200..300).contains(&response.status) {
        return Err(format!("notifications/initialized: not accepted:\n{}", response.describe()));
    }
    Ok(Client { connection, session })
}

/// What one client measured.
struct ClientRun {
    latencies: Vec<Duration>,
    reconnects: usize,
}

/// `calls` `check` calls of `plan` in a row, each answer checked; stops early once another
/// client has `failed`.
fn run_client(mut client: Client, calls: usize, plan: &str, failed: &AtomicBool) -> Result<ClientRun, String> {
    let mut latencies = Vec::with_capacity(calls);
    for call in 0..calls {
        if failed.load(Ordering::Relaxed) {
            break;
        }
        let id = call as u64 + 2;
        let body = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "check", "arguments": {"plan": plan}},
        })
        .to_string();
        let sent = Instant::now();
        let response = client.connection.post(&body, Some(&client.session))?;
        latencies.push(sent.elapsed());
        let answer = json_rpc_answer(&response, id)?;
        if !says_accepted(&answer) {
            return Err(format!("call {id}: the plan is not accepted:\n{}", response.describe()));
        }
    }
    Ok(ClientRun { latencies, reconnects: client.connection.reconnects })
}

/// Reads the server's thread count every [`SAMPLE_EVERY`] until `stop`: the most seen and
/// how many samples.
fn sample_threads(pid: u32, stop: Arc<AtomicBool>) -> thread::JoinHandle<(u64, usize)> {
    thread::spawn(move || {
        let (mut most, mut samples) = (0, 0);
        loop {
            if let Some(threads) = proc_status(pid, "Threads:") {
                most = most.max(threads);
                samples += 1;
            }
            if stop.load(Ordering::Relaxed) {
                return (most, samples);
            }
            thread::sleep(SAMPLE_EVERY);
        }
    })
}

/// The figures of one run.
struct Figures {
    clients: usize,
    calls_per_client: usize,
    calls: usize,
    initialize: Duration,
    wall: Duration,
    /// Sorted.
    latencies: Vec<Duration>,
    reconnects: usize,
    peak_rss_kib: Option<u64>,
    threads_max: u64,
    thread_samples: usize,
}

impl Figures {
    fn calls_per_second(&self) -> f64 {
        self.calls as f64 / self.wall.as_secs_f64()
    }

    /// The `p`th percentile latency (nearest rank), in milliseconds.
    fn percentile_ms(&self, p: f64) -> f64 {
        let rank = ((p / 100.0) * self.latencies.len() as f64).ceil() as usize;
        ms(self.latencies[rank.clamp(1, self.latencies.len()) - 1])
    }

    fn mean_ms(&self) -> f64 {
        ms(self.latencies.iter().sum::<Duration>()) / self.latencies.len() as f64
    }

    fn peak_rss_mib(&self) -> Option<f64> {
        self.peak_rss_kib.map(|kib| kib as f64 / 1024.0)
    }

    fn print_table(&self, plan_name: &str) {
        let latency = |p: f64| format!("{:.2} ms", self.percentile_ms(p));
        let rows = [
            ("calls", format!("{} ({} clients x {} calls)", self.calls, self.clients, self.calls_per_client)),
            ("initialize, all clients", format!("{:.3} s", self.initialize.as_secs_f64())),
            ("wall time of the calls", format!("{:.3} s", self.wall.as_secs_f64())),
            ("throughput", format!("{:.1} calls/s", self.calls_per_second())),
            ("latency p50", latency(50.0)),
            ("latency p90", latency(90.0)),
            ("latency p99", latency(99.0)),
            ("latency max", latency(100.0)),
            ("latency mean", format!("{:.2} ms", self.mean_ms())),
            ("reconnects", self.reconnects.to_string()),
            (
                "server peak RSS (VmHWM)",
                self.peak_rss_mib().map_or("unknown".to_string(), |mib| format!("{mib:.1} MiB")),
            ),
            ("server threads, most", format!("{} ({} samples)", self.threads_max, self.thread_samples)),
        ];
        println!();
        println!("mcp_load: cordon mcp serve --http, `check` of {plan_name}");
        println!("{:-<26}+{:-<36}", "", "");
        for (name, value) in rows {
            println!("{name:<25} | {value}");
        }
        println!("{:-<26}+{:-<36}", "", "");
    }

    fn json(&self) -> Value {
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        json!({
            "clients": self.clients,
            "calls_per_client": self.calls_per_client,
            "calls": self.calls,
            "initialize_s": round(self.initialize.as_secs_f64()),
            "wall_s": round(self.wall.as_secs_f64()),
            "calls_per_s": round(self.calls_per_second()),
            "latency_ms": {
                "p50": round(self.percentile_ms(50.0)),
                "p90": round(self.percentile_ms(90.0)),
                "p99": round(self.percentile_ms(99.0)),
                "max": round(self.percentile_ms(100.0)),
                "mean": round(self.mean_ms()),
            },
            "reconnects": self.reconnects,
            "server_peak_rss_kib": self.peak_rss_kib,
            "server_threads_max": self.threads_max,
        })
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Starts every client's calls at once and waits for them all: each client's run, and the wall
/// time from the start to the last answer.
fn calls_phase(clients: Vec<Client>, calls: usize, plan: &str) -> (Vec<Result<ClientRun, String>>, Duration) {
    let start = Arc::new(Barrier::new(clients.len() + 1));
    let failed = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(number, client)| {
            let (start, failed, plan) = (start.clone(), failed.clone(), plan.to_string());
            thread::Builder::new()
                .name(format!("client-{number}"))
                .spawn(move || {
                    start.wait();
                    let run = run_client(client, calls, &plan, &failed);
                    if run.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    run.map_err(|e| format!("client {number}: {e}"))
                })
                .unwrap()
        })
        .collect();
    start.wait();
    let started = Instant::now();
    let runs: Vec<_> =
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a client thread panicked".to_string()))).collect();
    (runs, started.elapsed())
}

fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("mcp_load: a load test, run by `cargo bench -p cordon-cli --bench mcp_load`; skipped");
        return;
    }
    let options = options();
    let server = Server::start();
    let pid = server.pid();
    println!(
        "mcp_load: {} clients x {} calls against cordon mcp serve --http {} (pid {pid})",
        options.clients, options.calls, server.addr
    );

    let initializing = Instant::now();
    let clients: Vec<Client> = (0..options.clients)
        .map(|number| initialize(server.addr, number).unwrap_or_else(|e| panic!("client {number}: {e}")))
        .collect();
    let initialize = initializing.elapsed();

    let stop = Arc::new(AtomicBool::new(false));
    let sampler = sample_threads(pid, stop.clone());
    let (runs, wall) = calls_phase(clients, options.calls, &options.plan);
    let peak_rss_kib = proc_status(pid, "VmHWM:");
    stop.store(true, Ordering::Relaxed);
    let (threads_max, thread_samples) = sampler.join().unwrap();

    let failures: Vec<&String> = runs.iter().filter_map(|run| run.as_ref().err()).collect();
    if let Some(first) = failures.first() {
        panic!("{} of {} clients failed; the first:\n{first}", failures.len(), options.clients);
    }
    let runs: Vec<ClientRun> = runs.into_iter().map(Result::unwrap).collect();
    let mut latencies: Vec<Duration> = runs.iter().flat_map(|run| run.latencies.iter().copied()).collect();
    latencies.sort();
    let figures = Figures {
        clients: options.clients,
        calls_per_client: options.calls,
        calls: latencies.len(),
        initialize,
        wall,
        latencies,
        reconnects: runs.iter().map(|run| run.reconnects).sum(),
        peak_rss_kib,
        threads_max,
        thread_samples,
    };
    drop(server);
    figures.print_table(&options.plan_name);
    println!("mcp_load: {}", figures.json());
}
