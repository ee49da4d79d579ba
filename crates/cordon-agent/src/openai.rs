//! OpenAI-compatible chat completions (`POST {base_url}/chat/completions`): hosted OpenAI and
//! every server that speaks the same API, such as vLLM, llama.cpp's server and Ollama (base URL
//! `http://127.0.0.1:11434/v1`). The bearer key comes from an environment variable and may be
//! absent for local servers.

use std::fmt;

use serde_json::{Value, json};

use crate::http::{HttpClient, HttpConfig};
use crate::provider::{Completion, Provider, ProviderError, Request, Usage};
use crate::reply::{base_url, count_at, key_from_env, string_at};

/// The hosted OpenAI API.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The environment variable the key is read from unless configured otherwise.
pub const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// Which OpenAI-compatible server and model to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// The model name the server knows, such as `gpt-4o-mini` or `llama3.1:8b`.
    pub model: String,
    /// The API root, up to and including `/v1`.
    pub base_url: String,
    /// The environment variable holding the key (unset is fine for local servers).
    pub api_key_env: String,
    /// Timeouts, retries and the reply size cap.
    pub http: HttpConfig,
}

impl OpenAiConfig {
    /// `model` on the hosted API, with the key in `OPENAI_API_KEY` and default HTTP settings.
    pub fn new(model: impl Into<String>) -> Self {
        OpenAiConfig {
            model: model.into(),
            base_url: DEFAULT_BASE_URL.to_string(),
            api_key_env: DEFAULT_KEY_ENV.to_string(),
            http: HttpConfig::default(),
        }
    }
}

/// A provider for an OpenAI-compatible server.
pub struct OpenAi {
    name: String,
    model: String,
    url: String,
    key: Option<String>,
    client: HttpClient,
}

impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("model", &self.model)
            .field("url", &self.url)
            .field("key", &self.key.as_ref().map(|_| "[redacted]"))
            .finish_non_exhaustive()
    }
}

impl OpenAi {
    /// A provider reading its key from the configured environment variable. The hosted API
    /// needs a key; other servers may go without.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let key = key_from_env(&config.api_key_env)?;
        if key.is_none() && base_url(&config.base_url)? == DEFAULT_BASE_URL {
            return Err(ProviderError::Config(format!(
                "no API key: set {} to use {DEFAULT_BASE_URL}",
                config.api_key_env
            )));
        }
        Self::with_api_key(config, key)
    }

    /// A provider using `key` as given (for embedding and tests); `api_key_env` is ignored.
    pub fn with_api_key(config: OpenAiConfig, key: Option<String>) -> Result<Self, ProviderError> {
        if config.model.trim().is_empty() {
            return Err(ProviderError::Config("OpenAI-compatible provider needs a model name".into()));
        }
        let base = base_url(&config.base_url)?;
        Ok(OpenAi {
            name: format!("openai:{}", config.model),
            url: format!("{base}/chat/completions"),
            model: config.model,
            key: key.filter(|key| !key.is_empty()),
            client: HttpClient::new(config.http),
        })
    }

    /// The request body for `request`.
    fn body(&self, request: &Request) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|message| json!({ "role": message.role.as_str(), "content": message.content }))
            .collect();
        json!({ "model": self.model, "messages": messages, "max_tokens": request.max_tokens })
    }
}

impl Provider for OpenAi {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        let authorization = self.key.as_ref().map(|key| format!("Bearer {key}"));
        let headers: Vec<(&str, &str)> = authorization.iter().map(|value| ("authorization", value.as_str())).collect();
        let reply = self.client.post_json(&self.url, &headers, &self.body(request), self.key.as_deref())?;
        parse_reply(&reply)
    }
}

/// The completion in a chat completions reply: `choices[0].message.content` and, when
/// reported, `usage.prompt_tokens` and `usage.completion_tokens`.
pub fn parse_reply(reply: &Value) -> Result<Completion, ProviderError> {
    if !reply.is_object() {
        return Err(ProviderError::Malformed("expected a JSON object with `choices`".into()));
    }
    if reply.pointer("/choices/0").is_none() {
        return Err(ProviderError::Malformed("expected a non-empty array at `/choices`".into()));
    }
    if let Some(refusal) = reply.pointer("/choices/0/message/refusal").and_then(Value::as_str) {
        return Err(ProviderError::Malformed(format!(
            "the model refused instead of answering: {}",
            crate::http::excerpt(refusal)
        )));
    }
    let text = string_at(reply, "/choices/0/message/content")?.to_string();
    let usage = Usage {
        prompt_tokens: count_at(reply, "/usage/prompt_tokens")?,
        completion_tokens: count_at(reply, "/usage/completion_tokens")?,
    };
    Ok(Completion { text, usage })
}
