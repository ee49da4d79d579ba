//! Groups, and who may let their data out.
//!
//! A group's data is readable by its members: one secrecy clause listing them, which also holds
//! the group's own principal, `group:NAME` ([`DcLabel::group`]). Within the group it flows as a
//! list of readers does (to a sink every reader of which is a member). What the tag changes is
//! release: a member's privilege releases what is theirs or shared with them, never a clause
//! that is a group's ([`DcLabel::flows_to_with`]); only a release the policy declares lets a
//! group's data out ([`Release`]), to where it says, and with the user's yes on a card unless it
//! says otherwise. A release the policy does not declare is impossible, whoever approves.

use serde::{Deserialize, Serialize};

use crate::dc::{DcLabel, Formula, group_of, group_principal};

/// A policy's `release`: the data of `group` may go where `to` allows (a sink at most as public
/// as `to`), on the user's yes on a card if `card`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Release {
    pub group: String,
    pub to: DcLabel,
    pub card: bool,
}

impl DcLabel {
    /// Readable by the members of the group `name` (and by no one else): the group's data.
    pub fn group(name: &str, members: &[&str]) -> DcLabel {
        let mut clause: Vec<String> = members.iter().map(|m| m.to_string()).collect();
        clause.push(group_principal(name));
        DcLabel { secrecy: Formula::normalize(vec![clause]), integrity: Formula::falsity() }
    }

    /// `self` without the clauses of the groups that one of `releases` lets out to `sink`
    /// (those that need a card only if `with_card`, the user having said yes): what is left for
    /// the sink to check. A clause the sink admits as it is stays: nothing is let out of it, so
    /// what a release removes is exactly what it lets out. Integrity is not a release's business.
    pub fn released(&self, sink: &DcLabel, releases: &[Release], with_card: bool) -> DcLabel {
        if releases.is_empty() {
            return self.clone();
        }
        let lets_out = |clause: &[String]| {
            !sink.secrecy.implies(&Formula::normalize(vec![clause.to_vec()]))
                && clause.iter().filter_map(|p| group_of(p)).any(|group| {
                    releases
                        .iter()
                        .any(|r| r.group == group && (with_card || !r.card) && sink.secrecy.implies(&r.to.secrecy))
                })
        };
        DcLabel { secrecy: self.secrecy.without(lets_out), integrity: self.integrity.clone() }
    }
}

impl Formula {
    /// The groups whose data it is, in order, each once.
    pub fn groups(&self) -> Vec<String> {
        let mut groups: Vec<String> =
            self.clauses().iter().flatten().filter_map(|p| group_of(p)).map(str::to_string).collect();
        groups.sort();
        groups.dedup();
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> DcLabel {
        DcLabel::group("workspace", &["alice", "bob", "carol"])
    }

    fn release(to: DcLabel, card: bool) -> Release {
        Release { group: "workspace".into(), to, card }
    }

    #[test]
    fn a_groups_data_stays_with_its_members() {
        assert!(workspace().flows_to(&DcLabel::readers(&["alice", "bob"])));
        assert!(workspace().flows_to(&workspace()));
        assert!(!workspace().flows_to(&DcLabel::readers(&["alice", "eve"])));
        assert!(!workspace().flows_to(&DcLabel::untrusted()));
    }

    #[test]
    fn no_members_privilege_releases_a_groups_data() {
        assert!(!workspace().flows_to_with(&DcLabel::untrusted(), "alice"));
        // What is shared with alice (a mail bob sent her) is hers to release, as before.
        assert!(DcLabel::readers(&["alice", "bob"]).flows_to_with(&DcLabel::untrusted(), "alice"));
        assert!(DcLabel::secret("alice").flows_to_with(&DcLabel::untrusted(), "alice"));
    }

    #[test]
    fn a_release_lets_out_only_what_the_sink_does_not_admit_already() {
        let carded = [release(DcLabel::untrusted(), true)];
        // A post in the workspace admits the workspace's data: nothing is let out, nothing asked.
        let in_the_workspace = workspace().join(&DcLabel::readers(&["alice"]));
        assert_eq!(workspace().released(&in_the_workspace, &carded, true), workspace());
        assert_eq!(workspace().released(&workspace(), &carded, true), workspace());
        assert!(workspace().released(&DcLabel::untrusted(), &carded, true).secrecy.groups().is_empty());
    }

    #[test]
    fn a_release_lets_a_groups_data_out_where_it_says_and_only_with_a_card_if_it_needs_one() {
        let web = DcLabel::untrusted();
        let carded = [release(DcLabel::untrusted(), true)];
        assert!(!workspace().released(&web, &carded, false).flows_to(&web), "not without the card");
        assert!(workspace().released(&web, &carded, true).flows_to(&web));
        let free = [release(DcLabel::untrusted(), false)];
        assert!(workspace().released(&web, &free, false).flows_to(&web));
        // Only as far as `to`: to the CI service, not to the web.
        let ci = [release(DcLabel::secret("ci"), false)];
        assert!(workspace().released(&DcLabel::secret("ci"), &ci, false).flows_to(&DcLabel::secret("ci")));
        assert!(!workspace().released(&web, &ci, true).flows_to(&web));
        // Another group's data is not let out.
        let hr = DcLabel::group("hr", &["carol", "dave"]);
        assert!(!hr.released(&web, &free, true).flows_to(&web));
        // Alongside a secret the release does not cover, the rest still counts.
        let both = workspace().join(&DcLabel::secret("alice"));
        assert!(!both.released(&web, &free, false).flows_to(&web));
        assert!(both.released(&web, &free, false).flows_to_with(&web, "alice"));
    }
}
