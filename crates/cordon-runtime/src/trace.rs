//! The trace of a run: every tool call the boundary saw, what it decided, and what came back.

use cordon_syntax::Span;
use serde::{Deserialize, Serialize};

use crate::effect::Effect;
use crate::error::RunError;
use crate::value::Val;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decision {
    /// Admitted and handed to the host.
    Allowed,
    /// Refused at the boundary.
    Blocked { code: cordon_syntax::Code, reason: String },
    /// The tool answered; `label` is empty for the bottom label.
    Returned {
        label: String,
        /// The same label in words, for people ("public, vouched for by bob"); empty with it.
        #[serde(default)]
        words: String,
    },
    /// The tool failed or broke its contract.
    Failed { reason: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// `Capability.tool`.
    pub tool: String,
    /// The arguments (for `Allowed`/`Blocked`) or the result (for `Returned`), as text.
    pub detail: String,
    pub decision: Decision,
    pub span: Span,
}

/// Long values are shortened in traces.
const MAX_DETAIL: usize = 200;

fn shorten(s: String) -> String {
    if s.chars().count() <= MAX_DETAIL {
        return s;
    }
    format!("{}...", s.chars().take(MAX_DETAIL - 3).collect::<String>())
}

fn args_text(effect: &Effect) -> String {
    let parts: Vec<String> = effect.args.iter().map(|(n, v)| format!("{n}: {}", v.value)).collect();
    shorten(parts.join(", "))
}

impl Event {
    fn new(effect: &Effect, detail: String, decision: Decision) -> Event {
        Event { tool: format!("{}.{}", effect.capability, effect.tool), detail, decision, span: effect.span }
    }

    pub fn allowed(effect: &Effect) -> Event {
        Event::new(effect, args_text(effect), Decision::Allowed)
    }

    pub fn blocked(effect: &Effect, e: &RunError) -> Event {
        Event::new(effect, args_text(effect), Decision::Blocked { code: e.kind.code(), reason: e.message.clone() })
    }

    pub fn returned(effect: &Effect, v: &Val) -> Event {
        Event::new(effect, shorten(v.value.to_string()), {
            let label = crate::builtins::deep_label(v);
            let dc = label.dc();
            match label.is_bottom() {
                true => Decision::Returned { label: String::new(), words: String::new() },
                false => Decision::Returned { label: dc.to_string(), words: dc.describe() },
            }
        })
    }

    pub fn failed(effect: &Effect, e: &RunError) -> Event {
        Event::new(effect, String::new(), Decision::Failed { reason: e.message.clone() })
    }

    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let (decision, extra) = match &self.decision {
            Decision::Allowed => ("allowed", json!({})),
            Decision::Blocked { code, reason } => ("blocked", json!({ "code": code.as_str(), "reason": reason })),
            Decision::Returned { label, .. } => ("returned", json!({ "label": label })),
            Decision::Failed { reason } => ("failed", json!({ "reason": reason })),
        };
        let mut v = json!({ "tool": self.tool, "decision": decision, "detail": self.detail });
        if let (Some(obj), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            obj.extend(extra.clone());
        }
        v
    }
}
