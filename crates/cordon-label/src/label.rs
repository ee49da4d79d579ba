//! The label a value carries at run time: a DC label and the sources that raised it, so a
//! refusal can point at where its data came from.

use std::fmt;
use std::sync::Arc;

use cordon_syntax::Span;
use serde::{Deserialize, Serialize};

use crate::DcLabel;

/// Where part of a value's label came from: a tool's result, an `unlabel`, a hole's fill.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub what: Arc<str>,
    pub span: Span,
}

/// The label a value carries at run time: a DC label and the sources that raised it. Most
/// values carry the bottom label, which costs nothing: no allocation, and joins with it are a
/// pointer check.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label(Option<Arc<LabelData>>);

#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
struct LabelData {
    dc: DcLabel,
    sources: Vec<Source>,
}

/// A label keeps at most this many sources; more would make diagnostics long, not clearer.
const MAX_SOURCES: usize = 6;

impl Label {
    pub const fn bottom() -> Label {
        Label(None)
    }

    pub fn new(dc: DcLabel, source: Source) -> Label {
        if dc.is_bottom() {
            return Label(None);
        }
        Label(Some(Arc::new(LabelData { dc, sources: vec![source] })))
    }

    pub fn is_bottom(&self) -> bool {
        self.0.is_none()
    }

    pub fn dc(&self) -> DcLabel {
        self.0.as_ref().map_or_else(DcLabel::bottom, |d| d.dc.clone())
    }

    pub fn sources(&self) -> &[Source] {
        self.0.as_ref().map_or(&[], |d| &d.sources)
    }

    #[inline(always)]
    pub fn join(&self, other: &Label) -> Label {
        match (&self.0, &other.0) {
            (None, _) => other.clone(),
            (_, None) => self.clone(),
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) => self.clone(),
            (Some(a), Some(b)) => Label::join_slow(a, b),
        }
    }

    #[inline(never)]
    fn join_slow(a: &Arc<LabelData>, b: &Arc<LabelData>) -> Label {
        let covers =
            |x: &LabelData, y: &LabelData| y.dc.flows_to(&x.dc) && y.sources.iter().all(|s| x.sources.contains(s));
        if covers(a, b) {
            return Label(Some(a.clone()));
        }
        if covers(b, a) {
            return Label(Some(b.clone()));
        }
        let mut sources = a.sources.clone();
        for s in &b.sources {
            if sources.len() < MAX_SOURCES && !sources.contains(s) {
                sources.push(s.clone());
            }
        }
        Label(Some(Arc::new(LabelData { dc: a.dc.join(&b.dc), sources })))
    }

    #[inline(always)]
    pub fn join_mut(&mut self, other: &Label) {
        if other.0.is_some() {
            *self = self.join(other);
        }
    }

    pub fn flows_to(&self, to: &DcLabel) -> bool {
        match &self.0 {
            None => DcLabel::bottom().flows_to(to),
            Some(d) => d.dc.flows_to(to),
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.dc())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joining_bottom_allocates_nothing() {
        let src = Source { what: "x".into(), span: Span::default() };
        let l = Label::new(DcLabel::secret("a"), src);
        assert_eq!(Label::bottom().join(&l), l);
        assert!(Label::bottom().join(&Label::bottom()).is_bottom());
        assert!(l.join(&l).sources().len() == 1);
    }
}
