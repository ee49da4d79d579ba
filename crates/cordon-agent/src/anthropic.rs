//! Anthropic Messages (`POST {base_url}/v1/messages`): the key goes in `x-api-key` (from
//! `ANTHROPIC_API_KEY` by default), system messages go in the top-level `system` field, and the
//! reply's text blocks are concatenated.

use serde_json::{Value, json};

use crate::http::{Endpoint, EndpointSpec, HttpConfig};
use crate::provider::{Completion, Provider, ProviderError, Request, Role, Usage};
use crate::reply::{count_at, describe, string_at};

/// The hosted Anthropic API.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The environment variable the key is read from unless configured otherwise.
pub const DEFAULT_KEY_ENV: &str = "ANTHROPIC_API_KEY";

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// Which Anthropic-compatible server and model to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnthropicConfig {
    /// The model name, such as `claude-sonnet-4-5`.
    pub model: String,
    /// The API root, without `/v1`.
    pub base_url: String,
    /// The environment variable holding the key.
    pub api_key_env: String,
    /// Timeouts, retries and the reply size cap.
    pub http: HttpConfig,
}

impl AnthropicConfig {
    /// `model` on the hosted API, with the key in `ANTHROPIC_API_KEY` and default HTTP settings.
    pub fn new(model: impl Into<String>) -> Self {
        AnthropicConfig {
            model: model.into(),
            base_url: DEFAULT_BASE_URL.to_string(),
            api_key_env: DEFAULT_KEY_ENV.to_string(),
            http: HttpConfig::default(),
        }
    }
}

/// A provider for the Anthropic Messages API.
#[derive(Debug)]
pub struct Anthropic {
    endpoint: Endpoint,
}

const SPEC: EndpointSpec<'static> = EndpointSpec {
    kind: "anthropic",
    what: "Anthropic provider",
    default_base: DEFAULT_BASE_URL,
    path: "/v1/messages",
};

impl Anthropic {
    /// A provider reading its key from the configured environment variable. The hosted API
    /// needs a key; a compatible proxy may go without.
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let endpoint = Endpoint::from_env(&SPEC, config.model, &config.base_url, &config.api_key_env, config.http)?;
        Ok(Anthropic { endpoint })
    }

    /// A provider using `key` as given (for embedding and tests); `api_key_env` is ignored.
    pub fn with_api_key(config: AnthropicConfig, key: Option<String>) -> Result<Self, ProviderError> {
        Ok(Anthropic { endpoint: Endpoint::new(&SPEC, config.model, &config.base_url, key, config.http)? })
    }

    /// The request body for `request`: system messages joined into `system`, the rest in order.
    fn body(&self, request: &Request) -> Value {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|message| message.role == Role::System)
            .map(|message| message.content.as_str())
            .collect();
        let messages: Vec<Value> = request
            .messages
            .iter()
            .filter(|message| message.role != Role::System)
            .map(|message| json!({ "role": message.role.as_str(), "content": message.content }))
            .collect();
        let mut body = json!({ "model": self.endpoint.model, "max_tokens": request.max_tokens, "messages": messages });
        if !system.is_empty() {
            body["system"] = Value::String(system.join("\n\n"));
        }
        body
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        let mut headers: Vec<(&str, &str)> = vec![("anthropic-version", API_VERSION)];
        if let Some(key) = &self.endpoint.key {
            headers.push(("x-api-key", key));
        }
        let reply = self.endpoint.post(&headers, &self.body(request))?;
        parse_reply(&reply)
    }
}

/// The completion in a Messages reply: the `text` of every `content` block of type `text`,
/// concatenated, and `usage.input_tokens` (plus cached input) / `usage.output_tokens` when
/// reported.
pub fn parse_reply(reply: &Value) -> Result<Completion, ProviderError> {
    let blocks = match reply.get("content") {
        Some(Value::Array(blocks)) => blocks,
        Some(other) => {
            return Err(ProviderError::Malformed(format!(
                "expected an array at `/content`, found {}",
                describe(other)
            )));
        }
        None => return Err(ProviderError::Malformed("expected an array at `/content`, but it is missing".into())),
    };
    let mut text = String::new();
    for (index, block) in blocks.iter().enumerate() {
        if block.get("type").and_then(Value::as_str) == Some("text") {
            text.push_str(string_at(reply, &format!("/content/{index}/text"))?);
        }
    }
    let prompt_tokens = count_at(reply, "/usage/input_tokens")?
        .saturating_add(count_at(reply, "/usage/cache_creation_input_tokens")?)
        .saturating_add(count_at(reply, "/usage/cache_read_input_tokens")?);
    let usage = Usage { prompt_tokens, completion_tokens: count_at(reply, "/usage/output_tokens")? };
    Ok(Completion { text, usage })
}
