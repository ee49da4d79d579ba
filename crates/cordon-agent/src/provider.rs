//! The one interface every model sits behind: a [`Request`] (chat messages, a token budget and
//! the hole it is for) goes in, a [`Completion`] (text and token usage) or a [`ProviderError`]
//! comes out. The hole machinery in the runtime sees only this trait, so a hosted model, a local
//! server and a scripted replay are interchangeable.

use std::fmt;
use std::time::Duration;

/// Who a chat message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from Cordon (language reference, declarations, rules).
    System,
    /// The task: the hole's expected type, scope and enclosing source; or diagnostics on retry.
    User,
    /// What the model answered before (earlier attempts, on retry).
    Assistant,
}

impl Role {
    /// The role's name as the chat APIs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// Its text.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message { role: Role::System, content: content.into() }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message { role: Role::User, content: content.into() }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message { role: Role::Assistant, content: content.into() }
    }
}

/// What is asked of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The conversation so far, system messages first.
    pub messages: Vec<Message>,
    /// The most tokens the reply may have.
    pub max_tokens: u32,
    /// Which hole this is for (scripted providers may match on it).
    pub hole: Option<String>,
}

/// Tokens used by one request, or summed over several (the engine's, since its events carry it).
pub use cordon_engine::Usage;

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The reply text, as the model wrote it (extracting code from it is the caller's job).
    pub text: String,
    /// Tokens used, as reported by the server (zero where it reports nothing) or estimated.
    pub usage: Usage,
}

/// A model: anything that turns a [`Request`] into a [`Completion`].
pub trait Provider {
    /// A short description for logs and transcripts, such as `openai:gpt-4o-mini`.
    fn name(&self) -> &str;

    /// Ask the model. Implementations handle their own retries; an error here is final.
    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError>;

    /// Called when the caller is done asking. A provider whose replies were fixed in advance
    /// and not all asked for (a replayed transcript recorded for a longer run) says so here.
    fn finish(&mut self) -> Result<(), ProviderError> {
        Ok(())
    }
}

impl<P: Provider + ?Sized> Provider for Box<P> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        (**self).complete(request)
    }

    fn finish(&mut self) -> Result<(), ProviderError> {
        (**self).finish()
    }
}

impl<P: Provider + ?Sized> Provider for &mut P {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        (**self).complete(request)
    }

    fn finish(&mut self) -> Result<(), ProviderError> {
        (**self).finish()
    }
}

/// Why a model gave no answer. Messages never contain an API key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderError {
    /// The server answered with an error status (after `retries` retries, for 5xx).
    Http {
        /// The HTTP status code.
        status: u16,
        /// The server's error message, or the start of its reply body.
        body: String,
        /// How many times the request was retried before giving up.
        retries: u32,
    },
    /// No reply within the configured timeouts.
    Timeout {
        /// The address asked.
        url: String,
        /// How long was waited.
        elapsed: Duration,
    },
    /// Still rate limited (HTTP 429) after `retries` retries.
    RateLimited {
        /// How many times the request was retried.
        retries: u32,
        /// The server's message (a quota error, say, that waiting will not fix).
        message: String,
    },
    /// The reply was not what the API promises: says what was wrong.
    Malformed(String),
    /// The reply was larger than the configured cap, so it was not read.
    TooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// The server could not be reached, or a file could not be read.
    Io(String),
    /// The provider is misconfigured (bad spec, missing key, bad URL, bad script file).
    Config(String),
    /// A replayed transcript does not fit the run replaying it: it was recorded for another
    /// request (a prompt differs) or a longer run (replies left over). Says where.
    Mismatch(String),
    /// A scripted provider has no reply left for this request.
    Exhausted {
        /// The hole that asked, if any.
        hole: Option<String>,
    },
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderError::Http { status, body, retries: 0 } => {
                write!(f, "model server answered HTTP {status}: {body}")
            }
            ProviderError::Http { status, body, retries } => {
                write!(f, "model server answered HTTP {status} after {retries} retries: {body}")
            }
            ProviderError::Timeout { url, elapsed } => {
                write!(f, "no reply from {url} after {:.1}s (timed out)", elapsed.as_secs_f64())
            }
            ProviderError::RateLimited { retries, message } => {
                write!(f, "model server still rate limiting (HTTP 429) after {retries} retries: {message}")
            }
            ProviderError::Malformed(what) => write!(f, "malformed reply from model server: {what}"),
            ProviderError::TooLarge { limit } => {
                write!(f, "reply from model server is larger than the {limit}-byte limit; not read")
            }
            ProviderError::Io(what) => write!(f, "{what}"),
            ProviderError::Config(what) => write!(f, "provider configuration: {what}"),
            ProviderError::Mismatch(what) => write!(f, "replay: {what}"),
            ProviderError::Exhausted { hole: Some(hole) } => {
                write!(f, "scripted provider has no reply left for hole `{hole}`")
            }
            ProviderError::Exhausted { hole: None } => write!(f, "scripted provider has no reply left"),
        }
    }
}

impl std::error::Error for ProviderError {}
