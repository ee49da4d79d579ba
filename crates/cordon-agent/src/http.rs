//! The HTTP behaviour every remote provider shares, in one place: timeouts, retries with a
//! deterministic exponential backoff on 429, 5xx and connection failures (honouring
//! `Retry-After`, capped), no retry on other statuses, reply bodies read under a size cap, JSON
//! parsing with clear errors, and redaction of the API key from every error message.
//!
//! Providers build a JSON body and headers and call [`HttpClient::post_json`]; what the reply
//! means is theirs to interpret.

use std::fmt;
use std::io::Read;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::provider::ProviderError;

/// How long to wait and how much to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// The most time to spend opening a connection.
    pub connect_timeout: Duration,
    /// The most time one attempt may take, from sending the request to the last byte of the
    /// reply. Models answer only when done generating, so this is generous by default.
    pub read_timeout: Duration,
    /// When and how often to try again.
    pub retry: RetryPolicy,
    /// Replies larger than this many bytes are refused unread.
    pub max_reply_bytes: usize,
    /// Whether a base URL may be plain `http://` to a host other than this machine (the key
    /// and the prompts would cross the network unencrypted). Off by default; loopback
    /// addresses are always allowed.
    pub allow_insecure_http: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
            max_reply_bytes: 8 * 1024 * 1024,
            allow_insecure_http: false,
        }
    }
}

/// When to try a request again: on HTTP 429, on 5xx and on failures to connect, at most
/// `max_retries` times, waiting `initial_backoff`, then twice that, and so on up to
/// `max_backoff`; a server's `Retry-After` replaces the schedule, capped at `max_retry_after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0: never retry).
    pub max_retries: u32,
    /// The wait before the first retry.
    pub initial_backoff: Duration,
    /// The longest wait the schedule reaches.
    pub max_backoff: Duration,
    /// The longest wait a server's `Retry-After` may ask for.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0 for the first), by the schedule alone.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.checked_pow(retry).unwrap_or(u32::MAX);
        self.initial_backoff.checked_mul(factor).unwrap_or(self.max_backoff).min(self.max_backoff)
    }

    /// The wait before retry number `retry`, given what the server asked for.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(asked) => asked.min(self.max_retry_after),
            None => self.backoff(retry),
        }
    }
}

/// The most bytes of an error reply that are read (to extract its message).
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// The most characters of a server's text quoted in an error.
const MAX_EXCERPT_CHARS: usize = 300;

/// A blocking HTTP client with the shared behaviour.
#[derive(Debug, Clone)]
pub struct HttpClient {
    agent: ureq::Agent,
    config: HttpConfig,
}

/// What one attempt came to.
enum Attempt {
    /// A 2xx reply with a JSON body.
    Done(Value),
    /// An error status, with the server's message and any `Retry-After`.
    Status { status: u16, message: String, retry_after: Option<Duration> },
    /// The connection failed or broke: worth retrying.
    Unreachable(String),
    /// Final: not worth retrying.
    Failed(ProviderError),
}

impl HttpClient {
    /// A client with these settings. Redirects are not followed (a redirected POST would carry
    /// the key somewhere unconfigured); proxies are not read from the environment.
    pub fn new(config: HttpConfig) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(config.connect_timeout)
            .timeout(config.read_timeout)
            .redirects(0)
            .user_agent(concat!("cordon-agent/", env!("CARGO_PKG_VERSION")))
            .build();
        HttpClient { agent, config }
    }

    /// The settings in use.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// POST `body` as JSON to `url` with `headers`, retrying as the policy says, and return
    /// the reply's JSON. `secret` (the API key, if any) is removed from every error message.
    pub fn post_json(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &Value,
        secret: Option<&str>,
    ) -> Result<Value, ProviderError> {
        self.post_json_unredacted(url, headers, body).map_err(|error| redact_error(error, secret))
    }

    fn post_json_unredacted(&self, url: &str, headers: &[(&str, &str)], body: &Value) -> Result<Value, ProviderError> {
        let bytes = serde_json::to_vec(body)
            .map_err(|error| ProviderError::Config(format!("request body is not serialisable: {error}")))?;
        let policy = &self.config.retry;
        let mut retries = 0;
        loop {
            let attempt = self.attempt(url, headers, &bytes);
            let retry_after = match &attempt {
                Attempt::Status { status, retry_after, .. } if is_retryable_status(*status) => *retry_after,
                Attempt::Unreachable(_) => None,
                _ => return finish(attempt, url, retries),
            };
            if retries >= policy.max_retries {
                return finish(attempt, url, retries);
            }
            thread::sleep(policy.delay(retries, retry_after));
            retries += 1;
        }
    }

    /// Send the request once and classify what came back.
    fn attempt(&self, url: &str, headers: &[(&str, &str)], body: &[u8]) -> Attempt {
        let started = Instant::now();
        let mut request =
            self.agent.post(url).set("content-type", "application/json").set("accept", "application/json");
        for (name, value) in headers {
            request = request.set(name, value);
        }
        match request.send_bytes(body) {
            Ok(response) if (200..300).contains(&response.status()) => self.read_success(response, url, started),
            Ok(response) => error_status(response),
            Err(ureq::Error::Status(_, response)) => error_status(response),
            Err(ureq::Error::Transport(transport)) => classify_transport(&transport, url, started),
        }
    }

    /// Read and parse a 2xx reply under the size cap.
    fn read_success(&self, response: ureq::Response, url: &str, started: Instant) -> Attempt {
        let limit = self.config.max_reply_bytes;
        if declared_length(&response).is_some_and(|length| length > limit) {
            return Attempt::Failed(ProviderError::TooLarge { limit });
        }
        match read_capped(response.into_reader(), limit) {
            Ok(Some(bytes)) => match serde_json::from_slice(&bytes) {
                Ok(value) => Attempt::Done(value),
                Err(error) => Attempt::Failed(ProviderError::Malformed(format!(
                    "expected a JSON body, but it does not parse ({error}); it starts: {}",
                    excerpt(&String::from_utf8_lossy(&bytes))
                ))),
            },
            Ok(None) => Attempt::Failed(ProviderError::TooLarge { limit }),
            Err(error) if is_timeout(&error) => Attempt::Failed(timeout(url, started)),
            Err(error) => Attempt::Unreachable(format!("connection broke while reading the reply: {error}")),
        }
    }
}

/// Turn the last attempt into the result the caller sees.
fn finish(attempt: Attempt, url: &str, retries: u32) -> Result<Value, ProviderError> {
    match attempt {
        Attempt::Done(value) => Ok(value),
        Attempt::Status { status: 429, message, .. } => Err(ProviderError::RateLimited { retries, message }),
        Attempt::Status { status, message, .. } => Err(ProviderError::Http { status, body: message, retries }),
        Attempt::Unreachable(why) if retries == 0 => Err(ProviderError::Io(format!("could not reach {url}: {why}"))),
        Attempt::Unreachable(why) => {
            Err(ProviderError::Io(format!("could not reach {url} after {retries} retries: {why}")))
        }
        Attempt::Failed(error) => Err(error),
    }
}

/// 429 and 5xx are worth trying again; other statuses are the request's fault.
fn is_retryable_status(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// An error status: keep the server's message and any `Retry-After`.
fn error_status(response: ureq::Response) -> Attempt {
    let status = response.status();
    let retry_after = retry_after(&response);
    let message = match read_capped(response.into_reader(), MAX_ERROR_BODY_BYTES) {
        Ok(Some(bytes)) => error_message(&bytes),
        Ok(None) => "(error body too large to show)".to_string(),
        Err(error) => format!("(error body unreadable: {error})"),
    };
    Attempt::Status { status, message, retry_after }
}

/// What the server asked us to wait: `retry-after-ms` (milliseconds, as OpenAI sends) or
/// `Retry-After` in seconds. HTTP dates are ignored (the backoff schedule applies).
fn retry_after(response: &ureq::Response) -> Option<Duration> {
    let seconds_from = |text: &str, scale: f64| {
        let value: f64 = text.trim().parse().ok()?;
        (value.is_finite() && value >= 0.0).then(|| Duration::from_secs_f64((value / scale).min(86_400.0)))
    };
    response
        .header("retry-after-ms")
        .and_then(|text| seconds_from(text, 1000.0))
        .or_else(|| response.header("retry-after").and_then(|text| seconds_from(text, 1.0)))
}

/// The `Content-Length` the server declared, if any.
fn declared_length(response: &ureq::Response) -> Option<usize> {
    response.header("content-length")?.trim().parse().ok()
}

/// Read at most `limit` bytes; `None` if there is more.
fn read_capped(reader: impl Read, limit: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    reader.take(cap).read_to_end(&mut bytes)?;
    Ok((bytes.len() <= limit).then_some(bytes))
}

/// The message in an error body: `error.message`, `error` or `message` of a JSON body (the
/// OpenAI and Anthropic shapes), else the start of the body as text.
fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let json: Option<Value> = serde_json::from_str(&text).ok();
    let message = json.as_ref().and_then(|value| {
        value
            .pointer("/error/message")
            .or_else(|| value.get("error"))
            .or_else(|| value.get("message"))
            .and_then(Value::as_str)
    });
    match message {
        Some(message) => excerpt(message),
        None if text.trim().is_empty() => "(empty body)".to_string(),
        None => excerpt(&text),
    }
}

/// The start of `text` on one line, control characters replaced, for quoting in an error.
pub(crate) fn excerpt(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(MAX_EXCERPT_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if text.chars().nth(MAX_EXCERPT_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// A transport failure: a timeout is final, a failed or broken connection is worth retrying,
/// a bad URL is a configuration error.
fn classify_transport(transport: &ureq::Transport, url: &str, started: Instant) -> Attempt {
    use ureq::ErrorKind;
    if source_is_timeout(transport) {
        return Attempt::Failed(timeout(url, started));
    }
    match transport.kind() {
        ErrorKind::InvalidUrl | ErrorKind::UnknownScheme | ErrorKind::InsecureRequestHttpsOnly => {
            Attempt::Failed(ProviderError::Config(format!("cannot use URL {url}: {transport}")))
        }
        ErrorKind::BadStatus | ErrorKind::BadHeader => Attempt::Failed(ProviderError::Malformed(format!(
            "the server at {url} did not answer in HTTP: {transport}"
        ))),
        _ => Attempt::Unreachable(transport.to_string()),
    }
}

/// Whether a transport error was caused by a timed-out read, write or connect.
fn source_is_timeout(transport: &ureq::Transport) -> bool {
    let mut source = std::error::Error::source(transport);
    while let Some(error) = source {
        if error.downcast_ref::<std::io::Error>().is_some_and(is_timeout) {
            return true;
        }
        source = error.source();
    }
    false
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(error.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock)
}

fn timeout(url: &str, started: Instant) -> ProviderError {
    ProviderError::Timeout { url: url.to_string(), elapsed: started.elapsed() }
}

/// Remove the secret from every text the error carries.
fn redact_error(error: ProviderError, secret: Option<&str>) -> ProviderError {
    let Some(secret) = secret.filter(|secret| !secret.is_empty()) else {
        return error;
    };
    let clean = |text: String| text.replace(secret, "[redacted]");
    match error {
        ProviderError::Http { status, body, retries } => ProviderError::Http { status, body: clean(body), retries },
        ProviderError::Timeout { url, elapsed } => ProviderError::Timeout { url: clean(url), elapsed },
        ProviderError::RateLimited { retries, message } => {
            ProviderError::RateLimited { retries, message: clean(message) }
        }
        ProviderError::Malformed(what) => ProviderError::Malformed(clean(what)),
        ProviderError::Io(what) => ProviderError::Io(clean(what)),
        ProviderError::Config(what) => ProviderError::Config(clean(what)),
        ProviderError::Mismatch(what) => ProviderError::Mismatch(clean(what)),
        other @ (ProviderError::TooLarge { .. } | ProviderError::Exhausted { .. }) => other,
    }
}

/// A model server as the HTTP providers reach it: the provider's name, the model, the URL
/// requests go to, the key (never shown: `Debug` redacts it) and the client.
pub(crate) struct Endpoint {
    pub name: String,
    pub model: String,
    pub url: String,
    pub key: Option<String>,
    pub client: HttpClient,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("key", &self.key.as_ref().map(|_| "[redacted]"))
            .finish_non_exhaustive()
    }
}

/// Where and what an [`Endpoint`] is: `kind` prefixes its name (`openai`), `what` names it in
/// errors, `path` follows the base URL, and the hosted `default_base` needs a key.
pub(crate) struct EndpointSpec<'a> {
    pub kind: &'a str,
    pub what: &'a str,
    pub default_base: &'a str,
    pub path: &'a str,
}

impl Endpoint {
    /// An endpoint whose key comes from the environment variable `key_env`.
    pub fn from_env(
        spec: &EndpointSpec<'_>,
        model: String,
        base: &str,
        key_env: &str,
        http: HttpConfig,
    ) -> Result<Endpoint, ProviderError> {
        let key = crate::reply::key_from_env(key_env)?;
        if key.is_none() && crate::reply::base_url(base)? == spec.default_base {
            return Err(ProviderError::Config(format!("no API key: set {key_env} to use {}", spec.default_base)));
        }
        Endpoint::new(spec, model, base, key, http)
    }

    /// An endpoint using `key` as given.
    pub fn new(
        spec: &EndpointSpec<'_>,
        model: String,
        base: &str,
        key: Option<String>,
        http: HttpConfig,
    ) -> Result<Endpoint, ProviderError> {
        if model.trim().is_empty() {
            return Err(ProviderError::Config(format!("{} needs a model name", spec.what)));
        }
        let base = crate::reply::base_url(base)?;
        if let Some(host) = crate::reply::remote_plain_http(&base)
            && !http.allow_insecure_http
        {
            let sent = if key.as_deref().is_some_and(|key| !key.is_empty()) { "the API key and " } else { "" };
            return Err(ProviderError::Config(format!(
                "base URL `{base}` is plain http to `{host}`, another machine: {sent}the prompts would cross the \
                 network unencrypted; use https, a loopback address, or --allow-insecure-http"
            )));
        }
        Ok(Endpoint {
            name: format!("{}:{model}", spec.kind),
            url: format!("{base}{}", spec.path),
            model,
            key: key.filter(|key| !key.is_empty()),
            client: HttpClient::new(http),
        })
    }

    /// Posts `body` with `headers`; the key is scrubbed from any error.
    pub fn post(&self, headers: &[(&str, &str)], body: &Value) -> Result<Value, ProviderError> {
        self.client.post_json(&self.url, headers, body, self.key.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RetryPolicy {
            max_retries: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(500),
            max_retry_after: Duration::from_secs(1),
        };
        let waits: Vec<u128> = (0..5).map(|retry| policy.backoff(retry).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 500, 500]);
        assert_eq!(policy.backoff(u32::MAX), Duration::from_millis(500));
    }

    #[test]
    fn retry_after_replaces_the_schedule_but_is_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(0, Some(Duration::from_secs(2))), Duration::from_secs(2));
        assert_eq!(policy.delay(0, Some(Duration::from_secs(3600))), policy.max_retry_after);
        assert_eq!(policy.delay(1, None), policy.backoff(1));
    }

    #[test]
    fn error_messages_come_from_known_shapes() {
        assert_eq!(error_message(br#"{"error":{"message":"bad model","type":"x"}}"#), "bad model");
        assert_eq!(error_message(br#"{"error":"nope"}"#), "nope");
        assert_eq!(error_message(b"  plain\n\ttext  "), "plain text");
        assert_eq!(error_message(b""), "(empty body)");
    }

    #[test]
    fn excerpts_are_short_and_on_one_line() {
        let long = "a\n".repeat(1000);
        let short = excerpt(&long);
        assert!(short.chars().count() <= MAX_EXCERPT_CHARS + 1);
        assert!(!short.contains('\n'));
        assert!(short.ends_with('…'));
    }

    #[test]
    fn redaction_removes_the_key_everywhere() {
        let error = ProviderError::Http { status: 401, body: "bad key sk-123 given".into(), retries: 0 };
        let clean = redact_error(error, Some("sk-123"));
        assert_eq!(clean, ProviderError::Http { status: 401, body: "bad key [redacted] given".into(), retries: 0 });
        let untouched = redact_error(ProviderError::Io("x".into()), Some(""));
        assert_eq!(untouched, ProviderError::Io("x".into()));
    }
}
