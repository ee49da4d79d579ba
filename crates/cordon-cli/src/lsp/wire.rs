//! The language server's messages on stdio: `Content-Length` framed JSON-RPC, read and written
//! here with `lsp-server`'s message types but not its transport, which ends the connection at
//! the first malformed message and allocates whatever length a header claims. Here a message
//! over [`MAX_MESSAGE`] bytes is read past without being kept, and a header or body that is
//! not a message becomes [`Incoming::Malformed`], which the server answers with an error
//! (`id` null when the message had none it could read), and reading goes on.
//!
//! What is written is JSON whose strings show every hidden character as a `\uXXXX` escape
//! (`shown::visible_json`): the same values, in bytes that pass the terminal guard unchanged.

use std::io::{self, BufRead, Read, Write};
use std::sync::mpsc::Sender;

use lsp_server::{ErrorCode, Message};
use serde_json::{Value, json};

use crate::shown::visible_json;

/// The largest message kept (a document is sent whole on every change).
pub(super) const MAX_MESSAGE: usize = 64 << 20;

/// The longest header line read.
const MAX_HEADER_LINE: u64 = 8 << 10;

/// What the client sent.
#[derive(Debug)]
pub(super) enum Incoming {
    Message(Message),
    /// Not a message the server can take: answered with this error, for this id if it had one.
    Malformed {
        id: Value,
        code: ErrorCode,
        message: String,
    },
    /// The input ended (or cannot be read any more).
    End,
}

/// Reads messages from `input` and sends each to `to` until the input ends or no one listens.
pub(super) fn read_all(mut input: impl BufRead, to: &Sender<Incoming>) {
    loop {
        let incoming = read(&mut input);
        let end = matches!(incoming, Incoming::End);
        if to.send(incoming).is_err() || end {
            return;
        }
    }
}

/// The next message of `input`.
fn read(input: &mut impl BufRead) -> Incoming {
    let mut length: Option<usize> = None;
    let mut problem: Option<String> = None;
    let mut headers = 0;
    loop {
        let mut line = Vec::new();
        match input.by_ref().take(MAX_HEADER_LINE).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return Incoming::End,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if headers == 0 {
                continue; // blank lines between messages
            }
            break;
        }
        headers += 1;
        match line.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                match value.trim().parse::<usize>() {
                    Ok(n) => length = Some(n),
                    Err(_) => problem = Some(format!("a Content-Length that is not a length: {:?}", value.trim())),
                }
            }
            Some(_) => {} // `Content-Type`, which says what every message is anyway
            None => problem = problem.or(Some(format!("a header line that is not a header: {line:?}"))),
        }
    }
    let length = match (length, problem) {
        (Some(n), None) => n,
        (_, problem) => {
            let message = problem.unwrap_or_else(|| "a message without a Content-Length header".into());
            return malformed(Value::Null, ErrorCode::ParseError, message);
        }
    };
    if length > MAX_MESSAGE {
        // Read past it without keeping it.
        return match io::copy(&mut input.by_ref().take(length as u64), &mut io::sink()) {
            Ok(n) if n == length as u64 => {
                let message = format!("a message of {length} bytes: at most {MAX_MESSAGE} are taken");
                malformed(Value::Null, ErrorCode::InvalidRequest, message)
            }
            _ => Incoming::End,
        };
    }
    let mut body = vec![0; length];
    if input.read_exact(&mut body).is_err() {
        return Incoming::End;
    }
    parse(&body)
}

/// A message's body, read.
fn parse(body: &[u8]) -> Incoming {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return malformed(Value::Null, ErrorCode::ParseError, format!("not JSON: {e}")),
    };
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    match serde_json::from_value::<Message>(value) {
        Ok(message) => Incoming::Message(message),
        Err(e) => {
            malformed(id, ErrorCode::InvalidRequest, format!("not a JSON-RPC request, response or notification: {e}"))
        }
    }
}

fn malformed(id: Value, code: ErrorCode, message: String) -> Incoming {
    Incoming::Malformed { id, code, message }
}

/// Writes `message`, framed.
pub(super) fn write(out: &mut impl Write, message: &Message) -> io::Result<()> {
    let mut value = serde_json::to_value(message).map_err(io::Error::other)?;
    if let Some(object) = value.as_object_mut() {
        object.insert("jsonrpc".into(), "2.0".into());
    }
    write_value(out, &value)
}

/// Writes an error answer to a message that was not one the server could take.
pub(super) fn write_malformed(out: &mut impl Write, id: Value, code: ErrorCode, message: &str) -> io::Result<()> {
    write_value(out, &json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code as i32, "message": message } }))
}

fn write_value(out: &mut impl Write, value: &Value) -> io::Result<()> {
    let text = visible_json(&serde_json::to_string(value).map_err(io::Error::other)?);
    write!(out, "Content-Length: {}\r\n\r\n{text}", text.len())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use super::*;

    fn all(input: &[u8]) -> Vec<String> {
        let (to, from) = std::sync::mpsc::channel();
        read_all(io::Cursor::new(input.to_vec()), &to);
        from.try_iter()
            .map(|m| match m {
                Incoming::Message(Message::Request(r)) => format!("request {}", r.method),
                Incoming::Message(Message::Notification(n)) => format!("notification {}", n.method),
                Incoming::Message(Message::Response(r)) => format!("response {}", r.id),
                Incoming::Malformed { id, code, .. } => format!("malformed {id} {}", code as i32),
                Incoming::End => "end".into(),
            })
            .collect()
    }

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn a_malformed_message_is_answered_and_reading_goes_on() {
        let mut input = String::new();
        input.push_str(&framed(r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#));
        input.push_str(&framed("{not json"));
        input.push_str(&framed(r#"{"jsonrpc":"2.0","id":7,"method":3}"#));
        input.push_str("Content-Length: many\r\n\r\n");
        input.push_str("garbage\r\n\r\n");
        input.push_str("Content-Type: application/vscode-jsonrpc\r\n\r\n");
        input.push_str(&format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE + 1));
        input.push_str(&" ".repeat(MAX_MESSAGE + 1));
        input.push_str(&framed(r#"{"jsonrpc":"2.0","method":"b"}"#));
        let mut input = input.into_bytes();
        input.extend_from_slice(b"Content-Length: 3\r\n\r\n\"\xff\"");
        input.extend_from_slice(b"Content-Length: 100\r\n\r\n{\"cut short");
        assert_eq!(
            all(&input),
            [
                "request a",
                "malformed null -32700",
                "malformed 7 -32600",
                "malformed null -32700",
                "malformed null -32700",
                "malformed null -32700",
                "malformed null -32600",
                "notification b",
                "malformed null -32700",
                "end"
            ]
        );
    }

    #[test]
    fn what_is_written_is_framed_json_with_nothing_hidden() {
        let mut out = Vec::new();
        let note = lsp_server::Notification::new("n".into(), json!({ "text": "a\u{202e}b" }));
        write(&mut out, &Message::Notification(note)).unwrap();
        let text = String::from_utf8(out).unwrap();
        let (header, body) = text.split_once("\r\n\r\n").unwrap();
        assert_eq!(header, format!("Content-Length: {}", body.len()));
        assert!(body.contains("a\\u202eb"), "{body}");
        let value: Value = serde_json::from_str(body).unwrap();
        assert_eq!(value["params"]["text"], "a\u{202e}b");
        assert_eq!(value["jsonrpc"], "2.0");
    }
}
