//! Model providers for Cordon's typed holes.
//!
//! A hole's prompt goes to a model through one trait, [`Provider`]: OpenAI-compatible chat
//! completions ([`OpenAi`]: hosted APIs, vLLM, llama.cpp, Ollama), Anthropic Messages
//! ([`Anthropic`]), or a [`Scripted`] list of replies for tests, the demo and benchmarks. The
//! HTTP providers share one behaviour ([`http`]): timeouts, bounded retries with backoff on 429,
//! 5xx and connection failures, a reply size cap, and errors that never contain the key.
//!
//! A request's events are recorded as a versioned JSONL [`Transcript`]; [`transcript::replay`]
//! turns one back into a provider that answers only the run it was recorded for.
//! [`ProviderConfig`] parses the CLI's `--model` spec and [`open`] builds the provider it names.
//!
//! On top of the providers, [`prompt`] builds a hole's label-aware prompt and [`fill`] runs the
//! check-and-retry loop: it extracts the code of a reply, checks it in the hole's place, sends
//! diagnostics back, and fills every (nested) hole of a request as the engine reaches it
//! ([`ModelHoles`]). [`ModelIntent`] asks a model that is not the acting one whether an approval
//! card matches the user's request, for the gate's intent check.

pub mod anthropic;
pub mod fill;
pub mod http;
pub mod intent;
pub mod openai;
pub mod prompt;
pub mod provider;
mod reply;
pub mod scripted;
pub mod transcript;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

pub use anthropic::{Anthropic, AnthropicConfig};
pub use cordon_engine::Problem;
pub use fill::{
    Checking, Extracted, FILL_TAG, FillConfig, Filled, Filler, HoleStats, MAX_REPLY_BYTES, ModelHoles, NoFill,
    Rejection, extract, extract_code, model_error,
};
pub use http::{HttpConfig, RetryPolicy};
pub use intent::ModelIntent;
pub use openai::{OpenAi, OpenAiConfig};
pub use prompt::{Earlier, MAX_HISTORY, NotCleared, Prompt, PromptStats, REFERENCE, add_history, prompt, shown_to};
pub use provider::{Completion, Message, Provider, ProviderError, Request, Role, Usage};
pub use scripted::{Scripted, ScriptedReply, estimate_tokens};
pub use transcript::{Replay, Transcript, TranscriptError, VERSION, replay, replay_file};

/// Which provider to open, as parsed from a spec string:
///
/// - `openai:MODEL` or `openai:MODEL@BASE_URL` (default base `https://api.openai.com/v1`),
/// - `anthropic:MODEL` or `anthropic:MODEL@BASE_URL` (default base `https://api.anthropic.com`),
/// - `scripted:PATH` (a script file of replies),
/// - `replay:PATH` (a JSONL transcript whose replies are played back).
///
/// The model name ends at the first `@http://` or `@https://`, so model names may contain
/// `:` (`llama3.1:8b`) and `@` (`claude-3-5-sonnet@20240620`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderConfig {
    /// An OpenAI-compatible server.
    OpenAi(OpenAiConfig),
    /// An Anthropic Messages server.
    Anthropic(AnthropicConfig),
    /// A script file.
    Scripted(PathBuf),
    /// A transcript to replay.
    Replay(PathBuf),
}

/// The spec forms, for error messages.
const SPEC_FORMS: &str = "openai:MODEL[@BASE_URL], anthropic:MODEL[@BASE_URL], scripted:PATH or replay:PATH";

impl ProviderConfig {
    /// Parse a spec string (see the type's documentation).
    pub fn parse(spec: &str) -> Result<Self, ProviderError> {
        let spec = spec.trim();
        let Some((kind, rest)) = spec.split_once(':') else {
            return Err(ProviderError::Config(format!("model spec `{spec}` should be one of {SPEC_FORMS}")));
        };
        match kind {
            "openai" => {
                let (model, base) = model_and_base(rest, spec)?;
                let mut config = OpenAiConfig::new(model);
                config.base_url = base.unwrap_or(openai::DEFAULT_BASE_URL).to_string();
                Ok(ProviderConfig::OpenAi(config))
            }
            "anthropic" => {
                let (model, base) = model_and_base(rest, spec)?;
                let mut config = AnthropicConfig::new(model);
                config.base_url = base.unwrap_or(anthropic::DEFAULT_BASE_URL).to_string();
                Ok(ProviderConfig::Anthropic(config))
            }
            "scripted" => Ok(ProviderConfig::Scripted(path(rest, spec)?)),
            "replay" => Ok(ProviderConfig::Replay(path(rest, spec)?)),
            other => Err(ProviderError::Config(format!(
                "unknown provider `{other}` in model spec `{spec}`; expected {SPEC_FORMS}"
            ))),
        }
    }

    /// The same configuration with these HTTP settings (no effect on scripted providers).
    pub fn with_http(mut self, http: HttpConfig) -> Self {
        match &mut self {
            ProviderConfig::OpenAi(config) => config.http = http,
            ProviderConfig::Anthropic(config) => config.http = http,
            ProviderConfig::Scripted(_) | ProviderConfig::Replay(_) => {}
        }
        self
    }
}

/// Split `MODEL[@BASE_URL]`.
fn model_and_base<'a>(rest: &'a str, spec: &str) -> Result<(&'a str, Option<&'a str>), ProviderError> {
    let at = ["@http://", "@https://"].iter().filter_map(|marker| rest.find(marker)).min();
    let (model, base) = match at {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    if model.trim().is_empty() {
        return Err(ProviderError::Config(format!("model spec `{spec}` names no model")));
    }
    Ok((model.trim(), base))
}

/// A non-empty path.
fn path(rest: &str, spec: &str) -> Result<PathBuf, ProviderError> {
    if rest.trim().is_empty() {
        return Err(ProviderError::Config(format!("model spec `{spec}` names no file")));
    }
    Ok(PathBuf::from(rest))
}

impl FromStr for ProviderConfig {
    type Err = ProviderError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        ProviderConfig::parse(spec)
    }
}

impl fmt::Display for ProviderConfig {
    /// The spec string this configuration parses from (HTTP settings aside).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderConfig::OpenAi(config) if config.base_url == openai::DEFAULT_BASE_URL => {
                write!(f, "openai:{}", config.model)
            }
            ProviderConfig::OpenAi(config) => write!(f, "openai:{}@{}", config.model, config.base_url),
            ProviderConfig::Anthropic(config) if config.base_url == anthropic::DEFAULT_BASE_URL => {
                write!(f, "anthropic:{}", config.model)
            }
            ProviderConfig::Anthropic(config) => write!(f, "anthropic:{}@{}", config.model, config.base_url),
            ProviderConfig::Scripted(path) => write!(f, "scripted:{}", path.display()),
            ProviderConfig::Replay(path) => write!(f, "replay:{}", path.display()),
        }
    }
}

/// Build the provider `config` names: reads the API key from its environment variable, or
/// the script or transcript file.
pub fn open(config: &ProviderConfig) -> Result<Box<dyn Provider + Send>, ProviderError> {
    Ok(match config {
        ProviderConfig::OpenAi(config) => Box::new(OpenAi::new(config.clone())?),
        ProviderConfig::Anthropic(config) => Box::new(Anthropic::new(config.clone())?),
        ProviderConfig::Scripted(path) => Box::new(Scripted::from_file(path)?),
        ProviderConfig::Replay(path) => Box::new(replay_file(path).map_err(|error| match error {
            TranscriptError::Io(error) => ProviderError::Io(format!("replay: {error}")),
            other => ProviderError::Config(format!("replay {}: {other}", path.display())),
        })?),
    })
}
