//! What a drive keeps of the boundary's decisions once its observers were told of them: every
//! one, for a report that lists them, or only how many calls were performed, for a front end
//! that showed each as it happened (a long run then holds none of their arguments or answers).

use cordon_runtime::{Decision, TraceEntry};

/// The boundary's decisions a drive handed on, oldest first.
#[derive(Debug, Default)]
pub struct Decisions {
    /// `None`: only counted.
    kept: Option<Vec<TraceEntry>>,
    performed: usize,
}

impl Decisions {
    /// Keeps every decision.
    pub fn kept() -> Decisions {
        Decisions { kept: Some(Vec::new()), performed: 0 }
    }

    /// Counts the calls performed and keeps nothing else.
    pub fn counted() -> Decisions {
        Decisions { kept: None, performed: 0 }
    }

    pub(crate) fn add(&mut self, events: Vec<TraceEntry>) {
        self.performed += events.iter().filter(|e| e.decision == Decision::Allowed).count();
        if let Some(kept) = &mut self.kept {
            kept.extend(events);
        }
    }

    /// The calls performed.
    pub fn performed(&self) -> usize {
        self.performed
    }

    /// Every decision, oldest first; none if they were only [`Decisions::counted`].
    pub fn into_events(self) -> Vec<TraceEntry> {
        self.kept.unwrap_or_default()
    }
}
