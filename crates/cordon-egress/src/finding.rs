//! A [`Finding`]: a category and a byte span, never the text it covers, so it can be logged,
//! traced and shown anywhere. Also how overlapping candidates are settled into the sorted,
//! non-overlapping list a scan returns.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::category::{Category, Tier};

/// Sensitive data found in a text: what it is and where (a byte range of the scanned text,
/// on character boundaries). It holds no part of the text itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Finding {
    /// What was found.
    pub category: Category,
    /// Where, in bytes of the scanned text.
    pub span: Range<usize>,
}

impl Finding {
    /// A finding of `category` over `span`.
    pub fn new(category: Category, span: Range<usize>) -> Finding {
        Finding { category, span }
    }

    /// Whether the two findings share at least one byte.
    pub fn overlaps(&self, other: &Finding) -> bool {
        self.span.start < other.span.end && other.span.start < self.span.end
    }
}

/// The candidates settled: sorted by position, none overlapping another. Where candidates
/// overlap, a vault secret wins, then the never tier, then the longer span, then the earlier.
/// Spans that are empty, reversed or not on `text`'s character boundaries are dropped (a
/// classifier plugged in from outside may return any). Candidates of one consent category
/// that lie close together in one sentence are joined into one finding.
pub fn settle(text: &str, mut candidates: Vec<Finding>) -> Vec<Finding> {
    candidates.retain(|f| {
        f.span.start < f.span.end && text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end)
    });
    candidates.sort_by_key(|f| (rank(f.category), std::cmp::Reverse(f.span.len()), f.span.start));
    // Accepted findings by start; none overlap, so their ends are in the same order.
    let mut accepted: BTreeMap<usize, Finding> = BTreeMap::new();
    for candidate in candidates {
        if !overlaps_any(&accepted, &candidate) {
            accepted.insert(candidate.span.start, candidate);
        }
    }
    join_neighbours(text, accepted.into_values().collect())
}

/// `findings` with the `revealed` ones (never tier, found in their redaction and mapped back)
/// taking their place: each revealed finding replaces those it overlaps, and revealed findings
/// that overlap one another are joined.
pub fn absorb(findings: Vec<Finding>, revealed: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = findings.into_iter().filter(|f| !revealed.iter().any(|r| r.overlaps(f))).collect();
    let mut revealed = revealed;
    revealed.sort_by_key(|f| f.span.start);
    let mut joined: Vec<Finding> = Vec::with_capacity(revealed.len());
    for finding in revealed {
        match joined.last_mut() {
            Some(last) if finding.span.start < last.span.end => last.span.end = last.span.end.max(finding.span.end),
            _ => joined.push(finding),
        }
    }
    out.extend(joined);
    out.sort_by_key(|f| f.span.start);
    out
}

/// The shortest value whose other occurrences are findings too.
const MIN_ECHO: usize = 4;

/// `findings` with every other occurrence of a never-tier finding's text added (one pass of
/// Aho-Corasick over the distinct values, linear in the text), where it overlaps no finding.
pub fn echoes(text: &str, findings: Vec<Finding>) -> Vec<Finding> {
    let mut values: Vec<(&str, Category)> = findings
        .iter()
        .filter(|f| f.category.tier() == Tier::Never && f.span.len() >= MIN_ECHO)
        .filter_map(|f| Some((text.get(f.span.clone())?, f.category)))
        .collect();
    values.sort_unstable();
    values.dedup_by_key(|v| v.0);
    if values.is_empty() {
        return findings;
    }
    let Ok(automaton) = aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
        // A handful of values, searched once: an NFA is built in no time, a DFA is not.
        .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
        .build(values.iter().map(|v| v.0))
    else {
        return findings;
    };
    let mut found: BTreeMap<usize, Finding> = findings.into_iter().map(|f| (f.span.start, f)).collect();
    for m in automaton.find_iter(text) {
        let Some(&(_, category)) = values.get(m.pattern().as_usize()) else { continue };
        let echo = Finding::new(category, m.range());
        let on_boundaries = text.is_char_boundary(echo.span.start) && text.is_char_boundary(echo.span.end);
        if on_boundaries && !overlaps_any(&found, &echo) {
            found.insert(echo.span.start, echo);
        }
    }
    found.into_values().collect()
}

fn rank(category: Category) -> u8 {
    match (category, category.tier()) {
        (Category::VaultSecret, _) => 0,
        (_, Tier::Never) => 1,
        (_, Tier::Consent) => 2,
    }
}

fn overlaps_any(accepted: &BTreeMap<usize, Finding>, candidate: &Finding) -> bool {
    let before = accepted.range(..candidate.span.end).next_back();
    before.is_some_and(|(_, f)| f.overlaps(candidate))
}

/// How far apart (in bytes) two findings of one consent category may be and still be one.
const JOIN_GAP: usize = 24;

fn join_neighbours(text: &str, findings: Vec<Finding>) -> Vec<Finding> {
    let mut joined: Vec<Finding> = Vec::with_capacity(findings.len());
    for finding in findings {
        if let Some(last) = joined.last_mut() {
            let gap = text.get(last.span.end..finding.span.start).unwrap_or("\n");
            let same = last.category == finding.category && finding.category.tier() == Tier::Consent;
            if same && gap.len() <= JOIN_GAP && !gap.contains(['\n', '.', '!', '?', ';']) {
                last.span.end = finding.span.end;
                continue;
            }
        }
        joined.push(finding);
    }
    joined
}
