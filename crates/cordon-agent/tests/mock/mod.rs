//! A tiny HTTP server on 127.0.0.1 for the provider tests: it answers one scripted reply per
//! connection, in order, records every request, and closes each connection after answering.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// What the server does with one connection.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Answer with this status, extra headers and body.
    Answer { status: u16, headers: Vec<(String, String)>, body: String },
    /// Read the request, then say nothing for this long.
    Silent(Duration),
    /// Answer 200 with this many bytes of body, declaring its length or not.
    Huge { bytes: usize, declare_length: bool },
}

impl Reply {
    /// A JSON answer.
    pub fn json(status: u16, body: serde_json::Value) -> Reply {
        Reply::Answer { status, headers: Vec::new(), body: body.to_string() }
    }

    /// A raw text answer.
    pub fn text(status: u16, body: &str) -> Reply {
        Reply::Answer { status, headers: Vec::new(), body: body.to_string() }
    }

    /// The same answer with one more header.
    pub fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Answer { status, mut headers, body } => {
                headers.push((name.to_string(), value.to_string()));
                Reply::Answer { status, headers, body }
            }
            other => other,
        }
    }
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    /// The value of header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }
}

/// A running mock server.
pub struct MockServer {
    url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl MockServer {
    /// Serve `replies`, one per connection; after the last, the listener closes.
    pub fn start(replies: Vec<Reply>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        thread::spawn(move || {
            for reply in replies {
                let Ok((stream, _)) = listener.accept() else { return };
                let recorded = Arc::clone(&recorded);
                // Each connection on its own thread, so a silent one does not hold up the rest.
                thread::spawn(move || serve(stream, &reply, &recorded));
            }
        });
        MockServer { url, requests }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }
}

/// An address nothing listens on.
pub fn closed_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let address = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{address}")
}

fn serve(stream: TcpStream, reply: &Reply, recorded: &Mutex<Vec<Recorded>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut reader = BufReader::new(stream);
    let Some(request) = read_request(&mut reader) else { return };
    recorded.lock().expect("lock").push(request);
    let mut stream = reader.into_inner();
    // Write errors are expected when the client gives up early (timeouts, size caps).
    let _ = match reply {
        Reply::Answer { status, headers, body } => {
            let mut head = format!("HTTP/1.1 {status} Mock\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("Content-Type: application/json\r\n\r\n");
            stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes()))
        }
        Reply::Silent(wait) => {
            thread::sleep(*wait);
            Ok(())
        }
        Reply::Huge { bytes, declare_length } => {
            let length = if *declare_length { format!("Content-Length: {bytes}\r\n") } else { String::new() };
            let head = format!("HTTP/1.1 200 OK\r\n{length}Connection: close\r\n\r\n");
            let chunk = vec![b' '; 16 * 1024];
            stream.write_all(head.as_bytes()).and_then(|()| {
                let mut left = *bytes;
                while left > 0 {
                    let n = left.min(chunk.len());
                    stream.write_all(&chunk[..n])?;
                    left -= n;
                }
                Ok(())
            })
        }
    };
    let _ = stream.flush();
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Recorded> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length: usize = headers.iter().find(|(name, _)| name == "content-length").and_then(|(_, v)| v.parse().ok())?;
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Recorded { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() })
}
