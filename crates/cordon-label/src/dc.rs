//! Disjunction-category (DC) labels, as in LIO: a secrecy and an integrity formula over
//! principals, each in conjunctive normal form without negation.
//!
//! Secrecy says whose permission data needs to be released (`alice` : only with alice's
//! consent; `true` : public). Integrity says who vouches for it (`alice` : alice wrote it;
//! `true` : nobody, untrusted; `false` : everyone, e.g. the plan's own literals). Data labelled
//! `l1` may flow where `l2` is allowed when `l2`'s secrecy implies `l1`'s and `l1`'s integrity
//! implies `l2`'s.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The prefix of a group's principal.
const GROUP: &str = "group:";

/// The principal that stands for the group `name` in its members' clause (see
/// [`DcLabel::group`]).
pub fn group_principal(name: &str) -> String {
    format!("{GROUP}{name}")
}

/// The group `principal` stands for, if it stands for one.
pub fn group_of(principal: &str) -> Option<&str> {
    principal.strip_prefix(GROUP)
}

/// A conjunction of clauses, each a disjunction of principals. Kept minimal (no clause contains
/// another) and sorted, so equal formulas are equal values. `true` has no clause; `false` has
/// the empty clause.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Formula {
    clauses: Vec<Vec<String>>,
}

impl Formula {
    pub fn truth() -> Formula {
        Formula { clauses: Vec::new() }
    }

    pub fn falsity() -> Formula {
        Formula { clauses: vec![Vec::new()] }
    }

    pub fn principal(p: &str) -> Formula {
        Formula { clauses: vec![vec![p.to_string()]] }
    }

    /// Its clauses, each a disjunction of principals.
    pub fn clauses(&self) -> &[Vec<String>] {
        &self.clauses
    }

    pub fn is_true(&self) -> bool {
        self.clauses.is_empty()
    }

    pub fn is_false(&self) -> bool {
        self.clauses.iter().any(Vec::is_empty)
    }

    pub(crate) fn normalize(mut clauses: Vec<Vec<String>>) -> Formula {
        for c in &mut clauses {
            c.sort();
            c.dedup();
        }
        clauses.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        clauses.dedup();
        let mut kept: Vec<Vec<String>> = Vec::new();
        for c in clauses {
            if !kept.iter().any(|k| subset(k, &c)) {
                kept.push(c);
            }
        }
        kept.sort();
        Formula { clauses: kept }
    }

    pub fn and(&self, other: &Formula) -> Formula {
        Formula::normalize(self.clauses.iter().chain(&other.clauses).cloned().collect())
    }

    pub fn or(&self, other: &Formula) -> Formula {
        let mut clauses = Vec::with_capacity(self.clauses.len() * other.clauses.len());
        for a in &self.clauses {
            for b in &other.clauses {
                clauses.push(a.iter().chain(b).cloned().collect());
            }
        }
        Formula::normalize(clauses)
    }

    /// Whether a clause holds a group's principal: a group's data.
    pub(crate) fn is_group_clause(clause: &[String]) -> bool {
        clause.iter().any(|p| group_of(p).is_some())
    }

    /// The formula without the clauses `drop` picks (a minimal formula stays minimal).
    pub(crate) fn without(&self, drop: impl Fn(&[String]) -> bool) -> Formula {
        Formula { clauses: self.clauses.iter().filter(|c| !drop(c)).cloned().collect() }
    }

    /// Does `self` imply `other`? For negation-free CNF: every clause of `other` contains some
    /// clause of `self`.
    pub fn implies(&self, other: &Formula) -> bool {
        other.clauses.iter().all(|c| self.clauses.iter().any(|a| subset(a, c)))
    }
}

/// Is every element of sorted `a` in sorted `b`?
fn subset(a: &[String], b: &[String]) -> bool {
    a.iter().all(|x| b.binary_search(x).is_ok())
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_true() {
            return f.write_str("true");
        }
        if self.is_false() {
            return f.write_str("false");
        }
        // Written piece by piece: traces print a label on every tool result.
        for (i, c) in self.clauses.iter().enumerate() {
            if i > 0 {
                f.write_str(" & ")?;
            }
            let parens = c.len() > 1 && self.clauses.len() > 1;
            if parens {
                f.write_str("(")?;
            }
            for (j, p) in c.iter().enumerate() {
                if j > 0 {
                    f.write_str(" | ")?;
                }
                f.write_str(p)?;
            }
            if parens {
                f.write_str(")")?;
            }
        }
        Ok(())
    }
}

/// A DC label: `⟨secrecy, integrity⟩`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DcLabel {
    pub secrecy: Formula,
    pub integrity: Formula,
}

impl Default for DcLabel {
    fn default() -> DcLabel {
        DcLabel::bottom()
    }
}

impl DcLabel {
    /// Public and vouched for by everyone: what the program's own literals carry.
    pub fn bottom() -> DcLabel {
        DcLabel { secrecy: Formula::truth(), integrity: Formula::falsity() }
    }

    /// Public and vouched for by no one.
    pub fn untrusted() -> DcLabel {
        DcLabel { secrecy: Formula::truth(), integrity: Formula::truth() }
    }

    /// Secret beyond anyone's release and vouched for by no one: every label flows to it. No
    /// value carries it; it bounds what an unknown value may carry.
    pub fn top() -> DcLabel {
        DcLabel { secrecy: Formula::falsity(), integrity: Formula::truth() }
    }

    /// Only `p` may release it.
    pub fn secret(p: &str) -> DcLabel {
        DcLabel { secrecy: Formula::principal(p), integrity: Formula::falsity() }
    }

    /// Public, vouched for by `p` only.
    pub fn endorsed(p: &str) -> DcLabel {
        DcLabel { secrecy: Formula::truth(), integrity: Formula::principal(p) }
    }

    /// Readable by any of `ps` (and by no one if `ps` is empty): data secret to the members of a
    /// group, which may flow to a sink only if every reader of that sink is one of them.
    pub fn readers(ps: &[&str]) -> DcLabel {
        let clause = ps.iter().map(|p| p.to_string()).collect();
        DcLabel { secrecy: Formula::normalize(vec![clause]), integrity: Formula::falsity() }
    }

    /// The default label of a tool's result where the policy names none: secret to `user` and
    /// vouched for by no one. A policy that forgets a label loses precision, never a secret.
    pub fn closed(user: &str) -> DcLabel {
        DcLabel { secrecy: Formula::principal(user), integrity: Formula::truth() }
    }

    pub fn is_bottom(&self) -> bool {
        self.secrecy.is_true() && self.integrity.is_false()
    }

    /// The greatest label that flows to both: what may go where either sink allows only if it
    /// may go to both, i.e. `⟨s1 ∨ s2, i1 ∧ i2⟩`.
    pub fn meet(&self, other: &DcLabel) -> DcLabel {
        DcLabel { secrecy: self.secrecy.or(&other.secrecy), integrity: self.integrity.and(&other.integrity) }
    }

    /// The least label both flow to: secret to everyone either is secret to, vouched for only
    /// by those who vouch for one of them... i.e. `⟨s1 ∧ s2, i1 ∨ i2⟩`.
    pub fn join(&self, other: &DcLabel) -> DcLabel {
        DcLabel { secrecy: self.secrecy.and(&other.secrecy), integrity: self.integrity.or(&other.integrity) }
    }

    /// May data labelled `self` flow where `to` is allowed?
    pub fn flows_to(&self, to: &DcLabel) -> bool {
        to.secrecy.implies(&self.secrecy) && self.integrity.implies(&to.integrity)
    }

    /// May data labelled `self` flow where `to` is allowed, on the word of `principal` (DC
    /// labels' flow with a privilege)? `principal` may release what it is among the readers of
    /// (a clause that names it: its own secret, and what others share with it, such as a mail it
    /// received) and vouch for data in its own name; nothing else. A group's data (a clause with
    /// a group's principal, [`DcLabel::group`]) is not its members' to release: only a release
    /// the policy declares lets it out ([`DcLabel::released`]).
    pub fn flows_to_with(&self, to: &DcLabel, principal: &str) -> bool {
        let p = Formula::principal(principal);
        // A group's clause names its members too, but it is the group's, not theirs to release.
        let theirs = |c: &[String]| c.iter().any(|x| x == principal) && !Formula::is_group_clause(c);
        to.secrecy.implies(&self.secrecy.without(theirs)) && self.integrity.and(&p).implies(&to.integrity)
    }
}

impl fmt::Display for DcLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<secrecy: {}, integrity: {}>", self.secrecy, self.integrity)
    }
}

impl DcLabel {
    /// The label in words, for people: "public, vouched for by no one", "secret to alice,
    /// vouched for by alice". (Machines read the formula: [`fmt::Display`].)
    pub fn describe(&self) -> String {
        format!("{}, vouched for by {}", self.secrecy_in_words(), self.integrity_in_words())
    }

    /// Who may read it, in words: "public", "secret to alice or bob".
    pub fn secrecy_in_words(&self) -> String {
        match &self.secrecy {
            s if s.is_true() => "public".to_string(),
            s if s.is_false() => "secret beyond anyone's release".to_string(),
            s => format!("secret to {}", s.in_words()),
        }
    }

    /// Who vouches for it, in words: "no one", "alice", "everyone (the plan's own)".
    pub fn integrity_in_words(&self) -> String {
        match &self.integrity {
            i if i.is_true() => "no one".to_string(),
            i if i.is_false() => "everyone (the plan's own)".to_string(),
            i => i.in_words(),
        }
    }
}

impl Formula {
    /// A formula other than `true` and `false` in words: "alice", "alice or bob", "alice and
    /// (bob or carol)".
    fn in_words(&self) -> String {
        let principal = |p: &String| match group_of(p) {
            Some(group) => format!("the group {group}"),
            None => p.clone(),
        };
        let clause = |c: &Vec<String>| c.iter().map(principal).collect::<Vec<_>>().join(" or ");
        match self.clauses.as_slice() {
            [one] => clause(one),
            many => many
                .iter()
                .map(|c| if c.len() > 1 { format!("({})", clause(c)) } else { clause(c) })
                .collect::<Vec<_>>()
                .join(" and "),
        }
    }
}

/// Says in words why data labelled `dc` may not flow to `sink`: the first of the two conditions
/// it fails, secrecy before integrity.
pub fn describe_flow(dc: &DcLabel, sink: &DcLabel) -> String {
    if !sink.secrecy.implies(&dc.secrecy) {
        format!("the data is secret to {}; this sink is readable by {}", dc.secrecy, readers(sink))
    } else {
        format!("the data is vouched for by {}; this sink needs data vouched for by {}", vouchers(dc), sink.integrity)
    }
}

fn readers(l: &DcLabel) -> String {
    if l.secrecy.is_true() { "anyone".into() } else { l.secrecy.to_string() }
}

fn vouchers(l: &DcLabel) -> String {
    if l.integrity.is_true() { "no one".into() } else { l.integrity.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(clauses: &[&[&str]]) -> Formula {
        Formula::normalize(clauses.iter().map(|c| c.iter().map(|s| s.to_string()).collect()).collect())
    }

    #[test]
    fn labels_read_in_words() {
        assert_eq!(DcLabel::untrusted().describe(), "public, vouched for by no one");
        let alices = DcLabel::secret("alice").join(&DcLabel::endorsed("alice"));
        assert_eq!(alices.describe(), "secret to alice, vouched for by alice");
        assert_eq!(DcLabel::bottom().describe(), "public, vouched for by everyone (the plan's own)");
        assert_eq!(
            DcLabel::readers(&["bob", "alice"]).describe(),
            "secret to alice or bob, vouched for by everyone (the plan's own)"
        );
        let both = DcLabel { secrecy: f(&[&["a"], &["b", "c"]]), integrity: f(&[&["a"], &["b"]]) };
        assert_eq!(both.describe(), "secret to a and (b or c), vouched for by a and b");
    }

    #[test]
    fn implication_is_clause_containment() {
        assert!(f(&[&["a"], &["b"]]).implies(&f(&[&["a"]])));
        assert!(!f(&[&["a"]]).implies(&f(&[&["a"], &["b"]])));
        assert!(f(&[&["a"]]).implies(&f(&[&["a", "b"]])));
        assert!(Formula::falsity().implies(&f(&[&["a"]])));
        assert!(f(&[&["a"]]).implies(&Formula::truth()));
        assert!(!Formula::truth().implies(&f(&[&["a"]])));
    }

    #[test]
    fn normal_form_drops_subsumed_clauses() {
        assert_eq!(f(&[&["a", "b"], &["a"]]), f(&[&["a"]]));
        assert_eq!(f(&[&["b"], &["a"]]).to_string(), "a & b");
        assert_eq!(Formula::principal("a").or(&Formula::principal("b")).to_string(), "a | b");
        assert_eq!(Formula::falsity().or(&Formula::principal("b")), Formula::principal("b"));
        assert_eq!(Formula::truth().or(&Formula::principal("b")), Formula::truth());
    }

    #[test]
    fn a_refusal_says_which_condition_fails_first() {
        let sink = DcLabel::endorsed("user");
        assert_eq!(
            describe_flow(&DcLabel::secret("alice"), &sink),
            "the data is secret to alice; this sink is readable by anyone"
        );
        assert_eq!(
            describe_flow(&DcLabel::untrusted(), &sink),
            "the data is vouched for by no one; this sink needs data vouched for by user"
        );
        assert!(DcLabel::secret("alice").join(&DcLabel::untrusted()).flows_to(&DcLabel::top()));
    }

    #[test]
    fn secrets_do_not_flow_to_public_and_untrusted_data_is_not_endorsed() {
        let public_by_user = DcLabel::endorsed("user");
        assert!(DcLabel::bottom().flows_to(&public_by_user));
        assert!(!DcLabel::secret("alice").flows_to(&public_by_user));
        assert!(!DcLabel::untrusted().flows_to(&public_by_user));
        assert!(DcLabel::endorsed("user").flows_to(&public_by_user));
        let joined = DcLabel::secret("alice").join(&DcLabel::endorsed("user"));
        assert_eq!(joined.to_string(), "<secrecy: alice, integrity: user>");
        assert!(joined.flows_to(&DcLabel { secrecy: Formula::principal("alice"), integrity: Formula::truth() }));
    }
}
