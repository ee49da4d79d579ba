//! What the agent's integration tests share: a scripted model that keeps every request it is
//! asked, so a test can read what each prompt showed.
#![allow(dead_code, clippy::unwrap_used)] // each test binary uses a part; tests fail loudly

use cordon_agent::{Completion, Provider, ProviderError, Request, Scripted, ScriptedReply};

/// A provider that answers with scripted replies, in order, and keeps every request.
pub struct Recording {
    inner: Scripted,
    pub requests: Vec<Request>,
}

impl Recording {
    /// Answers with `replies` (whole replies, code blocks and all), in order.
    pub fn new(replies: &[&str]) -> Recording {
        let replies = replies.iter().map(|r| ScriptedReply::next(*r)).collect();
        Recording { inner: Scripted::new(replies), requests: Vec::new() }
    }

    /// Everything the model was shown, over all requests.
    pub fn everything(&self) -> String {
        self.requests.iter().flat_map(|r| r.messages.iter().map(|m| m.content.clone())).collect()
    }

    /// The last message of the `i`th request.
    pub fn last(&self, i: usize) -> &str {
        &self.requests[i].messages.last().unwrap().content
    }
}

impl Provider for Recording {
    fn name(&self) -> &str {
        "recording"
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        self.requests.push(request.clone());
        self.inner.complete(request)
    }
}
