//! A scripted provider for tests, the demo and benchmarks: replies come from a list (usually a
//! JSON file `{"replies": [{"hole": "optional id", "text": "..."}]}`), not from a model.
//!
//! A request for hole `h` takes the first unused reply marked `h`, else the first unused
//! unmarked reply; a request without a hole takes the first unused unmarked reply. Each reply
//! is used once; when none fits, the provider answers [`ProviderError::Exhausted`]. Token
//! usage is estimated from the text (see [`estimate_tokens`]) so counts are deterministic.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::provider::{Completion, Provider, ProviderError, Request, Usage};

/// One scripted reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedReply {
    /// The hole it answers; `None` answers requests in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hole: Option<String>,
    /// The reply text.
    pub text: String,
}

impl ScriptedReply {
    /// A reply for whichever request comes next.
    pub fn next(text: impl Into<String>) -> Self {
        ScriptedReply { hole: None, text: text.into() }
    }

    /// A reply for hole `hole`.
    pub fn for_hole(hole: impl Into<String>, text: impl Into<String>) -> Self {
        ScriptedReply { hole: Some(hole.into()), text: text.into() }
    }
}

/// The script file's shape.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    replies: Vec<ScriptedReply>,
}

/// A provider answering from a script.
#[derive(Debug, Clone)]
pub struct Scripted {
    name: String,
    replies: Vec<ScriptedReply>,
    used: Vec<bool>,
}

impl Scripted {
    /// A provider answering with `replies`.
    pub fn new(replies: Vec<ScriptedReply>) -> Self {
        let used = vec![false; replies.len()];
        Scripted { name: "scripted".to_string(), replies, used }
    }

    /// A provider answering from a script in JSON.
    pub fn from_json(text: &str) -> Result<Self, ProviderError> {
        let file: ScriptFile = serde_json::from_str(text).map_err(|error| {
            ProviderError::Config(format!(
                "script is not of the form {{\"replies\": [{{\"hole\": \"id\", \"text\": \"...\"}}]}}: {error}"
            ))
        })?;
        Ok(Scripted::new(file.replies))
    }

    /// A provider answering from the script file at `path`.
    pub fn from_file(path: &Path) -> Result<Self, ProviderError> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| ProviderError::Io(format!("cannot read script {}: {error}", path.display())))?;
        let scripted = Scripted::from_json(&text).map_err(|error| match error {
            ProviderError::Config(what) => ProviderError::Config(format!("{}: {what}", path.display())),
            other => other,
        })?;
        Ok(scripted.with_name(format!("scripted:{}", path.display())))
    }

    /// The same provider under another name (shown in logs and transcripts).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The script as JSON, in the file format [`Scripted::from_json`] reads.
    pub fn to_json(&self) -> String {
        let file = ScriptFile { replies: self.replies.clone() };
        serde_json::to_string_pretty(&file).unwrap_or_default()
    }

    /// All replies, used or not.
    pub fn replies(&self) -> &[ScriptedReply] {
        &self.replies
    }

    /// How many replies have not been used yet.
    pub fn remaining(&self) -> usize {
        self.used.iter().filter(|used| !**used).count()
    }

    /// Make every reply available again (to run the same script twice).
    pub fn reset(&mut self) {
        self.used.iter_mut().for_each(|used| *used = false);
    }

    /// The index of the reply for a request for `hole`, if one is left.
    fn pick(&self, hole: Option<&str>) -> Option<usize> {
        let unused_for = |wanted: Option<&str>| {
            self.replies.iter().zip(&self.used).position(|(reply, used)| !used && reply.hole.as_deref() == wanted)
        };
        hole.and_then(|hole| unused_for(Some(hole))).or_else(|| unused_for(None))
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        let index = self
            .pick(request.hole.as_deref())
            .ok_or_else(|| ProviderError::Exhausted { hole: request.hole.clone() })?;
        let text = self.replies.get(index).map(|reply| reply.text.clone()).unwrap_or_default();
        if let Some(used) = self.used.get_mut(index) {
            *used = true;
        }
        let prompt_tokens = request.messages.iter().map(|message| estimate_tokens(&message.content)).sum();
        Ok(Completion { usage: Usage { prompt_tokens, completion_tokens: estimate_tokens(&text) }, text })
    }
}

/// A deterministic token estimate: one token per four characters, rounded up.
pub fn estimate_tokens(text: &str) -> u64 {
    u64::try_from(text.chars().count().div_ceil(4)).unwrap_or(u64::MAX)
}
