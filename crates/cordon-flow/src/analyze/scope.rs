//! The names in scope of the code being analysed, and the abstract value each is bound to.

use std::collections::HashMap;
use std::sync::Arc;

use crate::abs::Abs;

/// The names in scope, innermost last: each name's bindings as a stack, so that looking a name
/// up costs the same however long the plan.
#[derive(Clone, Debug, Default)]
pub(super) struct Scope {
    names: Vec<Arc<str>>,
    values: HashMap<Arc<str>, Vec<Abs>>,
}

impl Scope {
    pub(super) fn of(bindings: impl IntoIterator<Item = (Arc<str>, Abs)>) -> Scope {
        let mut s = Scope::default();
        for (n, v) in bindings {
            s.push(n, v);
        }
        s
    }

    pub(super) fn push(&mut self, name: Arc<str>, v: Abs) {
        self.names.push(name.clone());
        self.values.entry(name).or_default().push(v);
    }

    pub(super) fn len(&self) -> usize {
        self.names.len()
    }

    pub(super) fn truncate(&mut self, len: usize) {
        while self.names.len() > len {
            let Some(name) = self.names.pop() else { break };
            if let Some(stack) = self.values.get_mut(&name) {
                stack.pop();
                if stack.is_empty() {
                    self.values.remove(&name);
                }
            }
        }
    }

    pub(super) fn get(&self, name: &str) -> Option<&Abs> {
        self.values.get(name).and_then(|v| v.last())
    }

    /// The innermost binding of each name.
    pub(super) fn visible(&self) -> impl Iterator<Item = (&Arc<str>, &Abs)> {
        self.values.iter().filter_map(|(n, v)| v.last().map(|v| (n, v)))
    }
}
