//! OpenAI-compatible chat completions (`POST {base_url}/chat/completions`): hosted OpenAI and
//! every server that speaks the same API, such as vLLM, llama.cpp's server and Ollama (base URL
//! `http://127.0.0.1:11434/v1`). The bearer key comes from an environment variable and may be
//! absent for local servers.

use serde_json::{Value, json};

use crate::http::{Endpoint, EndpointSpec, HttpConfig};
use crate::provider::{Completion, Provider, ProviderError, Request, Usage};
use crate::reply::{count_at, string_at};

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
#[derive(Debug)]
pub struct OpenAi {
    endpoint: Endpoint,
}

const SPEC: EndpointSpec<'static> = EndpointSpec {
    kind: "openai",
    what: "OpenAI-compatible provider",
    default_base: DEFAULT_BASE_URL,
    path: "/chat/completions",
};

impl OpenAi {
    /// A provider reading its key from the configured environment variable. The hosted API
    /// needs a key; other servers may go without.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let endpoint = Endpoint::from_env(&SPEC, config.model, &config.base_url, &config.api_key_env, config.http)?;
        Ok(OpenAi { endpoint })
    }

    /// A provider using `key` as given (for embedding and tests); `api_key_env` is ignored.
    pub fn with_api_key(config: OpenAiConfig, key: Option<String>) -> Result<Self, ProviderError> {
        Ok(OpenAi { endpoint: Endpoint::new(&SPEC, config.model, &config.base_url, key, config.http)? })
    }

    /// The request body for `request`.
    fn body(&self, request: &Request) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|message| json!({ "role": message.role.as_str(), "content": message.content }))
            .collect();
        json!({ "model": self.endpoint.model, "messages": messages, "max_tokens": request.max_tokens })
    }
}

impl Provider for OpenAi {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        let authorization = self.endpoint.key.as_ref().map(|key| format!("Bearer {key}"));
        let headers: Vec<(&str, &str)> = authorization.iter().map(|value| ("authorization", value.as_str())).collect();
        let reply = self.endpoint.post(&headers, &self.body(request))?;
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
