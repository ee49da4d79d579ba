//! A redacted text and the way back: which bytes of the original each part of the redaction
//! stands for, so that a finding in the redaction can be named in the original.

use std::ops::Range;

use crate::finding::Finding;

/// A text with findings replaced by their placeholders, and the original bytes of each part.
pub struct Redacted {
    text: String,
    /// Each part: its bytes in the redaction, its bytes in the original, whether a placeholder.
    parts: Vec<(Range<usize>, Range<usize>, bool)>,
}

impl Redacted {
    /// `text` with each finding's span replaced by its placeholder; findings out of order,
    /// overlapping or off `text`'s character boundaries are skipped.
    pub fn new(text: &str, findings: &[Finding]) -> Redacted {
        let mut out = String::with_capacity(text.len());
        let mut parts = Vec::with_capacity(findings.len() * 2 + 1);
        let mut at = 0;
        for finding in findings {
            let span = &finding.span;
            let Some(before) = text.get(at..span.start) else { continue };
            if !text.is_char_boundary(span.end) || span.end < span.start {
                continue;
            }
            parts.push((out.len()..out.len() + before.len(), at..span.start, false));
            out.push_str(before);
            let placeholder = finding.category.placeholder();
            parts.push((out.len()..out.len() + placeholder.len(), span.clone(), true));
            out.push_str(placeholder);
            at = span.end;
        }
        let rest = text.get(at..).unwrap_or_default();
        parts.push((out.len()..out.len() + rest.len(), at..text.len(), false));
        out.push_str(rest);
        Redacted { text: out, parts }
    }

    /// The redacted text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// A finding of the redaction, over the original: a span reaching into a placeholder
    /// covers all the placeholder stands for.
    pub fn original(&self, finding: Finding) -> Finding {
        let start = self.map(finding.span.start, true);
        let end = self.map(finding.span.end, false);
        Finding::new(finding.category, start..end.max(start))
    }

    fn map(&self, at: usize, is_start: bool) -> usize {
        let holder = self
            .parts
            .iter()
            .find(|(r, _, _)| if is_start { r.start <= at && at < r.end } else { r.start < at && at <= r.end });
        match holder {
            Some((_, original, true)) => {
                if is_start {
                    original.start
                } else {
                    original.end
                }
            }
            Some((redacted, original, false)) => original.start + (at - redacted.start),
            None => self.parts.last().map_or(0, |(_, original, _)| original.end),
        }
    }
}
