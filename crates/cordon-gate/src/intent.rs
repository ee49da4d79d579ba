//! The intent check: does this call match what the user asked for? It runs outside the acting
//! model and sees only the user's original request and the card, never the plan's data or the
//! model's reasoning, so text injected into what the model read cannot argue with it.
//!
//! The default, [`ProvenanceRules`], is deterministic: every destination and every recipient
//! must come from the request (the user vouches for it, or the request names it), from a source
//! the policy trusts, or from the trusted contacts; anything else is flagged ("the recipient
//! `mallory@evil.example` came from data written by mallory (the field `Review.text`)"). A
//! flagged card is shown even where a grant would have covered the call, and cannot make a
//! grant. A card that asks to vouch for or release values the labels refused is always flagged,
//! and so is a destination or recipient whose letters mix scripts (a look-alike name), and a
//! value a release would let out that the plan built from the group's data rather than received
//! as it is (unless the request names it).

use cordon_label::Formula;

use crate::card::{Card, Flag, Origin, Shown, named_in};

/// Checks a card against the user's request.
pub trait IntentCheck {
    /// Its name, for the gate's records.
    fn name(&self) -> &str;

    /// What does not match the request, one flag each; empty when everything does.
    fn check(&mut self, request: &str, card: &Card) -> Vec<Flag>;
}

/// The default intent check: where each destination and recipient came from.
#[derive(Debug, Clone, Default)]
pub struct ProvenanceRules {
    /// Principals whose data may choose where a call goes (a merchant directory the host keeps).
    pub trusted: Vec<String>,
    /// Destinations and recipients the user trusts whoever names them.
    pub contacts: Vec<String>,
}

impl ProvenanceRules {
    pub fn new() -> ProvenanceRules {
        ProvenanceRules::default()
    }

    /// Trusts what `principal` vouches for to choose destinations.
    pub fn trust(mut self, principal: &str) -> ProvenanceRules {
        self.trusted.push(principal.to_string());
        self
    }

    /// Trusts `contact` as a destination or recipient, whoever named it.
    pub fn contact(mut self, contact: &str) -> ProvenanceRules {
        self.contacts.push(contact.to_string());
        self
    }

    fn acceptable(&self, request: &str, v: &Shown) -> bool {
        match &v.origin {
            Origin::Request | Origin::Host => true,
            _ if self.contacts.contains(&v.text) => true,
            _ if named_in(request, &v.text) => true,
            Origin::VouchedBy { .. } => self.trusted.iter().any(|t| v.label.integrity.implies(&Formula::principal(t))),
            Origin::Model | Origin::Nobody => false,
        }
    }
}

impl IntentCheck for ProvenanceRules {
    fn name(&self) -> &str {
        "provenance"
    }

    fn check(&mut self, request: &str, card: &Card) -> Vec<Flag> {
        let mut flags = Vec::new();
        let roles =
            card.destination.iter().map(|d| ("destination", d)).chain(card.recipients.iter().map(|r| ("recipient", r)));
        for (role, v) in roles {
            if !self.acceptable(request, v) {
                let says = format!("the {role} `{}` came from {}", v.text, v.origin_words());
                flags.push(Flag { says, value: Some(v.text.clone()) });
            }
            if let Some(scripts) = cordon_text::mixed_scripts(&v.text) {
                let says = format!(
                    "the {role} `{}` mixes {} letters: it may imitate another name with look-alikes",
                    v.text,
                    scripts.join(" and ")
                );
                flags.push(Flag { says, value: Some(v.text.clone()) });
            }
        }
        // A release lets out what the request named, or a text as the run received it (the
        // link bob posted); a text built from the group's data (`site?q=` and the channel) may
        // carry any of it, and the person is told so.
        for flow in card.flows.iter().filter(|f| !f.let_out.is_empty() && !f.as_received) {
            if !named_in(request, &flow.value.text) {
                let groups: Vec<String> = flow.let_out.iter().map(|g| format!("`{g}`")).collect();
                // The value is on the card already: named by its place, not written out again.
                let what = match &flow.param {
                    _ if card.destination.as_ref().is_some_and(|d| d.text == flow.value.text) => {
                        "the destination".into()
                    }
                    Some(param) => format!("the argument `{param}`"),
                    None => "the decision".into(),
                };
                let says = format!(
                    "{what} is built from the data of the group {}, not received as it is: it may carry more of that data than the request asked for",
                    groups.join(", ")
                );
                flags.push(Flag { says, value: Some(flow.value.text.clone()) });
            }
        }
        if !card.flows.is_empty() {
            let n = card.flows.len();
            flags.push(Flag::about_call(format!(
                "the labels refused this call: approving it vouches for or releases {n} value{} for this call only",
                if n == 1 { "" } else { "s" }
            )));
        }
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::named_in;

    #[test]
    fn a_request_names_whole_addresses_only() {
        assert!(named_in("pay tea-house.example 12 euros", "tea-house.example"));
        assert!(named_in("Write to Bob@Example.com.", "bob@example.com"));
        assert!(!named_in("write to bob@example.com.evil", "bob@example.com"));
        assert!(!named_in("write to evilbob@example.com", "bob@example.com"));
        assert!(!named_in("a b c", "b"));
        assert!(!named_in("", "anything"));
    }
}
