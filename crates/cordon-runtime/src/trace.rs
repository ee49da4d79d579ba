//! The trace of a run: every tool call the boundary saw, what it decided, and what came back.
//!
//! An event keeps the values it is about (a call's arguments, a tool's answer) with their
//! labels, not their rendering: a renderer decides how they are shown, and to whom (the user
//! sees them all; a calling agent only what its clearance allows, `cordon`'s reports).

use std::fmt::Write as _;
use std::sync::Arc;

use cordon_label::Label;
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
    /// The tool answered; the event's value is the answer, labelled.
    Returned,
    /// The tool failed or broke its contract.
    Failed { reason: String },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TraceEntry {
    /// `Capability.tool`.
    pub tool: String,
    pub decision: Decision,
    pub span: Span,
    /// What the event is about: each argument by its parameter's name (`Allowed`, `Blocked`),
    /// the answer under the name `result` (`Returned`), nothing (`Failed`).
    pub values: Vec<(Arc<str>, Val)>,
    /// The program-counter label at the call: that the call happened at all depends on it.
    pub pc: Label,
    /// A `Returned` event's answer's whole label, as the boundary worked it out, so no reader
    /// works it out again; not saved (a run loaded works it out from the answer).
    #[serde(skip)]
    answer_label: Option<Label>,
}

/// Long values are shortened in traces.
const MAX_DETAIL: usize = 200;

/// A call's arguments as the user's trace shows them: `name: value, ..`, shortened.
pub fn args_text(args: &[(Arc<str>, Val)]) -> String {
    shortened(|out| {
        for (i, (n, v)) in args.iter().enumerate() {
            write!(out, "{}{n}: {}", if i == 0 { "" } else { ", " }, v.value)?;
        }
        Ok(())
    })
}

/// A value as the user's trace shows it, shortened.
pub fn value_text(v: &Val) -> String {
    shortened(|out| write!(out, "{}", v.value))
}

fn shorten(s: String) -> String {
    if s.chars().count() <= MAX_DETAIL {
        return s;
    }
    format!("{}...", s.chars().take(MAX_DETAIL - 3).collect::<String>())
}

/// What `write` writes, shortened as [`shorten`] does; the writing stops once it is longer than
/// that keeps (a tool's long answer is not rendered whole to show its start).
fn shortened(write: impl FnOnce(&mut Bounded) -> std::fmt::Result) -> String {
    let mut out = Bounded { text: String::new(), chars: 0 };
    // An error is the writer's own stop, or a value that could not be written: what was
    // written so far is shown either way.
    let _ = write(&mut out);
    shorten(out.text)
}

/// Text written up to one character more than a trace shows, then a refusal to take more.
struct Bounded {
    text: String,
    chars: usize,
}

impl std::fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for c in s.chars() {
            if self.chars > MAX_DETAIL {
                return Err(std::fmt::Error);
            }
            self.text.push(c);
            self.chars += 1;
        }
        Ok(())
    }
}

impl TraceEntry {
    fn new(effect: &Effect, values: Vec<(Arc<str>, Val)>, decision: Decision) -> TraceEntry {
        let tool = format!("{}.{}", effect.capability, effect.tool);
        TraceEntry { tool, decision, span: effect.span, values, pc: effect.pc.clone(), answer_label: None }
    }

    /// An allowed call, recorded with `shown` for its arguments.
    pub fn allowed_showing(effect: &Effect, shown: Vec<(Arc<str>, Val)>) -> TraceEntry {
        TraceEntry::new(effect, shown, Decision::Allowed)
    }

    /// A refused call, recorded with `shown` for its arguments.
    pub fn blocked_showing(effect: &Effect, e: &RunError, shown: Vec<(Arc<str>, Val)>) -> TraceEntry {
        TraceEntry::new(effect, shown, Decision::Blocked { code: e.kind.code(), reason: e.message.clone() })
    }

    /// A tool's answer `v`, whose whole label ([`crate::deep_label`]) is `label`.
    pub fn returned(effect: &Effect, v: &Val, label: Label) -> TraceEntry {
        let event = TraceEntry::new(effect, vec![("result".into(), v.clone())], Decision::Returned);
        TraceEntry { answer_label: Some(label), ..event }
    }

    pub fn failed(effect: &Effect, e: &RunError) -> TraceEntry {
        TraceEntry::new(effect, Vec::new(), Decision::Failed { reason: e.message.clone() })
    }

    /// The answer of a `Returned` event.
    pub fn result(&self) -> Option<&Val> {
        match self.decision {
            Decision::Returned => self.values.first().map(|(_, v)| v),
            _ => None,
        }
    }

    /// The event's values as the user's own trace shows them: the arguments as `name: value`,
    /// the answer as its value, shortened past 200 characters.
    pub fn detail(&self) -> String {
        self.detail_with(&|v| v.value.to_string())
    }

    /// The event's values, each written by `show`, as [`TraceEntry::detail`] lays them out.
    pub fn detail_with(&self, show: &dyn Fn(&Val) -> String) -> String {
        match (&self.decision, self.result()) {
            (Decision::Returned, Some(v)) => shorten(show(v)),
            _ => {
                let parts: Vec<String> = self.values.iter().map(|(n, v)| format!("{n}: {}", show(v))).collect();
                shorten(parts.join(", "))
            }
        }
    }

    /// The whole label of a `Returned` event's answer ([`crate::deep_label`]).
    pub fn answer_label(&self) -> Option<Label> {
        let answer = self.result()?;
        Some(self.answer_label.clone().unwrap_or_else(|| crate::builtins::deep_label(answer)))
    }

    /// The answer's label (empty for the bottom label) and the same in words, for a `Returned`
    /// event.
    pub fn result_label(&self) -> Option<(String, String)> {
        let label = self.answer_label()?;
        Some(match label.is_bottom() {
            true => (String::new(), String::new()),
            false => (label.dc().to_string(), label.dc().describe()),
        })
    }

    /// As `cordon run --format json` writes a trace row, for the user.
    pub fn to_json(&self) -> serde_json::Value {
        self.json(self.detail(), self.result_label().map(|(label, _)| label), None)
    }

    /// A trace row with `detail` as its values' text, `label` as a `Returned` event's label, and
    /// `reason` in place of a refusal's or failure's own, when given.
    pub fn json(&self, detail: String, label: Option<String>, reason: Option<&str>) -> serde_json::Value {
        use serde_json::json;
        let (decision, extra) = match &self.decision {
            Decision::Allowed => ("allowed", json!({})),
            Decision::Blocked { code, reason: own } => {
                ("blocked", json!({ "code": code.as_str(), "reason": reason.unwrap_or(own) }))
            }
            Decision::Returned => ("returned", json!({ "label": label.unwrap_or_default() })),
            Decision::Failed { reason: own } => ("failed", json!({ "reason": reason.unwrap_or(own) })),
        };
        let mut v = json!({ "tool": self.tool, "decision": decision, "detail": detail });
        if let (Some(obj), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            obj.extend(extra.clone());
        }
        v
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use proptest::prelude::*;

    use super::{args_text, shorten, value_text};
    use crate::value::{Val, Value};

    fn list(texts: &[String]) -> Val {
        Val::plain(Value::List(Arc::new(texts.iter().map(|t| Val::plain(Value::str(t))).collect())))
    }

    proptest! {
        /// Writing a value only as far as the trace shows it gives exactly the shortened text of
        /// the whole value, at every length around the limit and with characters of every width.
        #[test]
        fn a_value_is_shortened_as_if_written_whole(texts in prop::collection::vec("[a-zé€😀 ,\"\\\\]{0,90}", 0..6)) {
            let value = list(&texts);
            prop_assert_eq!(value_text(&value), shorten(value.value.to_string()));
            let args: Vec<(Arc<str>, Val)> =
                texts.iter().map(|t| (Arc::from("p"), Val::plain(Value::str(t)))).collect();
            let whole: Vec<String> = args.iter().map(|(n, v)| format!("{n}: {}", v.value)).collect();
            prop_assert_eq!(args_text(&args), shorten(whole.join(", ")));
        }
    }
}
