//! `cordon serve` as its tests drive it: the real server started on a free loopback port, a
//! small HTTP/1.1 client (so a test can send what a browser would not), its API, and the check
//! that a server which went down mid-run made no effect twice.
#![allow(clippy::panic)] // a test may fail loudly

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::command;

/// A running `cordon serve`, stopped (SIGKILL) when dropped.
pub struct Served {
    child: Child,
    pub port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Got {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Got {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Lets `name` in (`extra`: more flags, such as `--database`); their token.
pub fn add_user(dir: &Path, name: &str, extra: &[&str]) -> String {
    let mut args = vec!["serve", "--add-user", name];
    args.extend_from_slice(extra);
    let out = command(dir, &args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().last().unwrap().trim().to_string()
}

/// `cordon serve` in `dir` with `args` and the variables `env`, on a free port.
pub fn serve_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Served {
    let mut all = vec!["serve", "--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let mut command = command(dir, &all);
    command.envs(env.iter().copied()).stderr(Stdio::piped()).stdout(Stdio::null());
    let mut child = command.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let port = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the server says where it listens: {line:?}"));
    // The rest of its standard error is read so it never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Served { child, port }
}

/// `cordon serve` in `dir` with a writable `out` directory and `args`, on a free port.
pub fn serve(dir: &Path, args: &[&str]) -> Served {
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let out = format!("out={}:rw", dir.join("out").display());
    let mut all = vec!["--dir", &out];
    all.extend_from_slice(args);
    serve_with(dir, &all, &[])
}

/// One HTTP/1.1 request with `headers` (a `Host` of 127.0.0.1 unless one is given).
pub fn http(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Got {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines.filter_map(|l| l.split_once(": ")).map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Got { status, headers, body: body.to_string() }
}

pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// Queues `plan` for the token's person; the run's number.
pub fn submit(port: u16, token: &str, plan: &str) -> i64 {
    let body = serde_json::json!({ "plan": plan, "name": "plan.cord" }).to_string();
    let got = http(port, "POST", "/api/runs", &[("Authorization", &bearer(token))], &body);
    assert_eq!(got.status, 201, "{got:?}");
    got.json()["run"].as_i64().unwrap()
}

/// The run as the API shows it, once `ready` holds of it (within 60 s; an answer that is not
/// the run, as while the store is down, is asked again); a run that ended otherwise fails.
pub fn until(port: u16, token: &str, run: i64, ready: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let got = http(port, "GET", &format!("/api/runs/{run}"), &[("Authorization", &bearer(token))], "");
        let value = if got.status == 200 { got.json() } else { serde_json::Value::Null };
        if ready(&value) {
            return value;
        }
        assert!(!ended(&value), "the run ended elsewhere: {value}");
        assert!(started.elapsed() < Duration::from_secs(60), "the run never got there: {got:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn waiting(run: &serde_json::Value) -> bool {
    run["state"] == "waiting" && run["answer"].is_null()
}

pub fn ended(run: &serde_json::Value) -> bool {
    run["state"] == "done" || run["state"] == "failed"
}

/// Writes `name` holding `content` in `out`: one card.
pub fn write_plan(name: &str, content: &str) -> String {
    format!(
        "match fs.root(\"out\") {{ Some(out) => if out.writable {{ match fs.write(out, {}, {}) {{ Ok(_) => \"wrote\", \
         Err(e) => e.reason }} }} else {{ \"read-only\" }}, None => \"no out\" }}",
        serde_json::to_string(name).unwrap(),
        serde_json::to_string(content).unwrap()
    )
}

/// Twenty calls of the simulated GitHub, none of which asks.
pub const TWENTY_CALLS: &str = "let n = fold(range(0, 20), 0, |acc, i| acc + len(gh.list_repos()));\n(to_string(n), s)";

/// After servers went down mid-run and `runs` all ended: the chain verifies, and no effect was
/// made twice: every request with an effect is the one its run ended as, with at most the
/// plan's twenty. Returns how many runs finished done.
pub fn made_no_effect_twice(store: &dyn cordon_store::Store, runs: &[i64]) -> usize {
    assert!(matches!(store.verify().unwrap(), cordon_store::Verdict::Intact { .. }));
    let mut ended_as = std::collections::BTreeSet::new();
    let mut done = 0;
    for run in runs {
        let queued = store.queued_run(cordon_store::RunId(*run)).unwrap().unwrap();
        assert!(queued.state.ended(), "run {run} is {:?}", queued.state);
        done += usize::from(queued.state == cordon_store::RunState::Done);
        ended_as.extend(queued.request);
    }
    for request in store.requests(100_000).unwrap() {
        let effects = store.show(request.id).unwrap().entries.iter().filter(|e| e.kind == "effect").count();
        assert!(effects <= 20, "request {} made {effects} calls", request.id);
        assert!(
            effects == 0 || ended_as.contains(&request.id),
            "request {} made calls for a run that ran again",
            request.id
        );
    }
    done
}
