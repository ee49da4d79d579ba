//! Approval grants: the user's standing answers to the approval gate ("`send_email` to
//! `*@example.com` with public data: yes, for this session"). The store keeps them; the gate asks
//! `find_grant` before asking the user.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GrantId(pub i64);

impl fmt::Display for GrantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// How long a grant lasts (besides its expiry, if it has one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Only for runs in this session.
    Session(String),
    /// For every run, until the user revokes it.
    UntilRevoked,
}

/// A grant as the user gives it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewGrant {
    /// The tool, exactly.
    pub tool: String,
    /// The destinations it covers: a pattern in which `*` stands for any run of characters.
    pub destination: String,
    /// The label class of the data it lets through, exactly.
    pub label_class: String,
    pub scope: Scope,
    /// When it stops covering anything (Unix milliseconds), if ever.
    pub expires_ms: Option<i64>,
    /// What serves the tool, as its host names itself (`Host::instance`: for an MCP server a
    /// hash of its command, arguments, address and the tools it listed): the grant covers the
    /// tool only as served by the same. `None` covers only a query that names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// Whose answer it is: it covers only that principal's effects. `None` (every grant made
    /// before grants named one, when one person used the store) covers anyone's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
}

/// A grant as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub id: GrantId,
    #[serde(flatten)]
    pub grant: NewGrant,
    pub created_ms: i64,
}

/// An effect the gate is deciding: does some grant cover it?
#[derive(Clone, Copy, Debug)]
pub struct GrantQuery<'a> {
    pub tool: &'a str,
    pub destination: &'a str,
    pub label_class: &'a str,
    /// The session the run holds, if any: session-scoped grants cover only their session.
    pub session: Option<&'a str>,
    /// What serves the tool now (see [`NewGrant::instance`]).
    pub instance: Option<&'a str>,
    /// Whom the effect is for.
    pub principal: &'a str,
}

impl Grant {
    /// Whether this grant covers the effect at `now_ms` (revocation is the store's to check).
    pub fn covers(&self, q: &GrantQuery<'_>, now_ms: i64) -> bool {
        let g = &self.grant;
        g.tool == q.tool
            && g.label_class == q.label_class
            && g.instance.as_deref() == q.instance
            && g.principal.as_deref().is_none_or(|p| p == q.principal)
            && g.expires_ms.is_none_or(|at| now_ms < at)
            && match &g.scope {
                Scope::UntilRevoked => true,
                Scope::Session(s) => q.session == Some(s.as_str()),
            }
            && pattern_matches(&g.destination, q.destination)
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters (none included)
/// and every other character itself. Linear in the lengths: no backtracking blow-up.
pub fn pattern_matches(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    // The last star seen, and the text position its match currently ends at.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                // Let the last star swallow one more character and retry after it.
                Some((sp, st)) => {
                    star = Some((sp, st + 1));
                    pi = sp + 1;
                    ti = st + 1;
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let cases = [
            ("a@x.com", "a@x.com", true),
            ("a@x.com", "b@x.com", false),
            ("*@x.com", "a@x.com", true),
            ("*@x.com", "a@x.com.evil", false),
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("a*b*c", "abbbc", true),
            ("a*b*c", "acb", false),
            ("**", "xyz", true),
            ("https://*.example.com/*", "https://api.example.com/v1", true),
            ("https://*.example.com/*", "https://example.com.evil/", false),
        ];
        for (pattern, text, expect) in cases {
            assert_eq!(pattern_matches(pattern, text), expect, "{pattern:?} ~ {text:?}");
        }
    }
}
