//! An MCP server over streamable HTTP reached through the credential broker: every request is
//! sent by the broker, which puts the server's credential (a vault secret) into the header the
//! vault binds it to, only if the server's address is where it is bound, and scrubs every vault
//! secret out of what the server answers. The value never enters this process, and a server that
//! echoes it hands the plan (and the model) only `[vault secret]`.
//!
//! The broker answers whole responses, so a response sent as server-sent events is read whole,
//! then parsed; the long-lived stream a client may open with `GET` (for what a server sends
//! unasked) is not opened: tool calls do not need it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use cordon_broker::{Client, Incoming, Outgoing};
use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

/// Why the broker did not deliver a request.
#[derive(Debug)]
pub struct BrokerFailure(String);

impl std::fmt::Display for BrokerFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BrokerFailure {}

type Failed = StreamableHttpError<BrokerFailure>;

/// The most bytes a response may have.
const MAX_RESPONSE_BYTES: usize = 16 << 20;

/// The header that carries an MCP session's id.
const SESSION: &str = "mcp-session-id";

/// An HTTP client for rmcp's streamable HTTP transport whose every request the broker sends,
/// with the vault secret `credential`.
#[derive(Clone, Debug)]
pub struct Brokered {
    broker: Arc<Client>,
    credential: String,
    timeout: Duration,
}

impl Brokered {
    pub fn new(broker: Arc<Client>, credential: &str, timeout: Duration) -> Brokered {
        Brokered { broker, credential: credential.to_string(), timeout }
    }

    /// Sends one request through the broker (a blocking exchange, off the async threads).
    async fn send(
        &self,
        method: &str,
        uri: &str,
        mut headers: Vec<(String, String)>,
        session: Option<&str>,
        custom: HashMap<HeaderName, HeaderValue>,
        body: Option<String>,
    ) -> Result<Incoming, Failed> {
        if let Some(id) = session {
            headers.push(("Mcp-Session-Id".into(), id.to_string()));
        }
        for (name, value) in custom {
            let value = value.to_str().map_err(|_| fail(format!("the header `{name}` is not text")))?;
            headers.push((name.to_string(), value.to_string()));
        }
        let out = Outgoing {
            method: method.into(),
            url: uri.to_string(),
            headers,
            body,
            credential: Some(self.credential.clone()),
            timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            max_response_bytes: MAX_RESPONSE_BYTES,
            // The server's address is the user's configuration, not a plan's.
            local: true,
        };
        let broker = self.broker.clone();
        let sent = tokio::task::spawn_blocking(move || broker.send(&out)).await?;
        match sent {
            Ok(Ok(incoming)) => Ok(incoming),
            Ok(Err(refusal)) => {
                Err(fail(format!("the broker did not send it ({}): {}", refusal.code.name(), refusal.reason)))
            }
            Err(e) => Err(fail(e.to_string())),
        }
    }
}

fn fail(why: String) -> Failed {
    StreamableHttpError::Client(BrokerFailure(why))
}

/// A whole body of server-sent events as the stream the transport reads.
fn events(body: String) -> BoxStream<'static, Result<Sse, SseError>> {
    let bytes = futures::stream::once(async move { Ok::<_, std::io::Error>(bytes::Bytes::from(body)) });
    SseStream::from_bytes_stream(bytes).boxed()
}

impl StreamableHttpClient for Brokered {
    type Error = BrokerFailure;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failed> {
        let awaits_nothing = matches!(
            message,
            ClientJsonRpcMessage::Notification(_) | ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_)
        );
        let headers = vec![
            ("Accept".to_string(), "application/json, text/event-stream".to_string()),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        let body = serde_json::to_string(&message)?;
        let incoming = self.send("POST", &uri, headers, session_id.as_deref(), custom_headers, Some(body)).await?;
        let session = incoming.header(SESSION).map(str::to_string);
        let kind = incoming.header("content-type").unwrap_or("").to_ascii_lowercase();
        if incoming.status == 202 || (awaits_nothing && (200..300).contains(&incoming.status)) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !(200..300).contains(&incoming.status) {
            if let Ok(error @ rmcp::model::JsonRpcMessage::Error(_)) =
                serde_json::from_str::<ServerJsonRpcMessage>(&incoming.body)
            {
                return Ok(StreamableHttpPostResponse::Json(error, session));
            }
            let said: String = incoming.body.chars().take(300).collect();
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
                "HTTP {}: {said}",
                incoming.status
            ))));
        }
        if kind.starts_with("text/event-stream") {
            return Ok(StreamableHttpPostResponse::Sse(events(incoming.body), session));
        }
        if kind.starts_with("application/json") {
            return Ok(StreamableHttpPostResponse::Json(serde_json::from_str(&incoming.body)?, session));
        }
        Err(StreamableHttpError::UnexpectedContentType(Some(kind)))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failed> {
        self.send("DELETE", &uri, Vec::new(), Some(&session_id), custom_headers, None).await?;
        Ok(())
    }

    async fn get_stream(
        &self,
        _uri: Arc<str>,
        _session_id: Option<Arc<str>>,
        _last_event_id: Option<String>,
        _auth_header: Option<String>,
        _custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failed> {
        Err(StreamableHttpError::ServerDoesNotSupportSse)
    }
}
