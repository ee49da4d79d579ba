//! The model a benchmark's requests are put to: the request itself is answered with the
//! case's plan (the reference one, or the attacker's), so the plan is a model's, as it is in
//! use; each typed hole in it with the user task's fill for the hole's task (the prompt's
//! `Task:` line); in `worst-case` mode, where a hole's prompt showed text the injection placed,
//! with the injection task's fill for it instead (the reference one where the attacker wrote
//! none). A hole with no fill is an error naming its task.

use cordon_agent::{Completion, Provider, ProviderError, Request, Usage, estimate_tokens};

use crate::bench::suite::Fill;

/// Answers holes from a user task's fills.
pub struct BenchModel<'s> {
    root: &'s Fill,
    fills: &'s [Fill],
    attacker: &'s [Fill],
    /// Texts the injection placed (a start of each), looked for in each prompt; empty when the
    /// attacker fills nothing.
    injected: Vec<String>,
    /// Holes asked, and how many of them the attacker filled.
    pub asked: usize,
    pub attacked: usize,
}

/// The least of a placed text that counts as seen: enough not to be found by chance.
const MARKER_CHARS: usize = 32;

impl<'s> BenchModel<'s> {
    /// A model answering the request with `root`'s plan and holes with the reference `fills`;
    /// with `injected` (the texts an injection placed), the `attacker`'s wherever a prompt
    /// shows one of them.
    pub fn new(root: &'s Fill, fills: &'s [Fill], attacker: &'s [Fill], injected: &[String]) -> BenchModel<'s> {
        let injected = injected
            .iter()
            .filter_map(|text| {
                let line = text.lines().find(|l| l.chars().count() >= MARKER_CHARS)?;
                Some(line.chars().take(MARKER_CHARS).collect())
            })
            .collect();
        BenchModel { root, fills, attacker, injected, asked: 0, attacked: 0 }
    }
}

impl<'s> Provider for BenchModel<'s> {
    fn name(&self) -> &str {
        "bench"
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        self.asked += 1;
        // The hole's task: the newest message that states one (a retry's follows it).
        let task = request
            .messages
            .iter()
            .rev()
            .find_map(|m| m.content.lines().find_map(|l| l.strip_prefix("Task: ")))
            .unwrap_or_default();
        let root = std::slice::from_ref(self.root);
        let of = |fills: &'s [Fill]| fills.iter().chain(root).find(|f| f.task == task);
        let prompt: String = request.messages.iter().map(|m| m.content.as_str()).collect();
        let seen = self.injected.iter().any(|marker| prompt.contains(marker.as_str()));
        let (fill, attacked) = match (seen.then(|| of(self.attacker)).flatten(), of(self.fills)) {
            (Some(attack), _) => (attack, true),
            (None, Some(reference)) => (reference, false),
            (None, None) => {
                return Err(ProviderError::Mismatch(format!("the suite gives no fill for the hole `{task}`")));
            }
        };
        self.attacked += usize::from(attacked);
        let code = &fill.plan;
        let text = format!("```cordon\n{code}\n```");
        let prompt_tokens = request.messages.iter().map(|m| estimate_tokens(&m.content)).sum();
        Ok(Completion { usage: Usage { prompt_tokens, completion_tokens: estimate_tokens(&text) }, text })
    }
}
