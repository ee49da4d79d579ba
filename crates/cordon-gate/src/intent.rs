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
//! as it is (unless the request names it). In a plan a model wrote, a number the model chose (an
//! amount, a quantity) and a link in the text it wrote are flagged unless the request names them.
//! A value the card hides (`@card(hidden = ..)`, a new password) is flagged unless it is the
//! user's own words: the person cannot check it on the card.

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

    fn acceptable(&self, request: &str, v: &Shown, by_model: bool) -> bool {
        match &v.origin {
            Origin::Request => true,
            // The host made it, but in a plan a model wrote the model chose which: the request
            // must name it (`#leadership` picked from the channels when `#eng` was asked).
            Origin::Host if !by_model => true,
            _ if self.contacts.contains(&v.text) => true,
            _ if named_in(request, &v.text) => true,
            Origin::VouchedBy { .. } => self.trusted.iter().any(|t| v.label.integrity.implies(&Formula::principal(t))),
            Origin::Host | Origin::Model | Origin::Nobody => false,
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
            if !self.acceptable(request, v, card.by_model) {
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
        // A value the card hides (a new password) must be the user's own words: the person
        // cannot check it on the card, so nothing else may have chosen it.
        for (_, v) in card.fields.iter().filter(|(_, v)| v.hidden.is_some() && v.origin != Origin::Request) {
            let says = format!("the value hidden on this card came from {}", v.origin_words());
            flags.push(Flag::about_call(says));
        }
        // What a model wrote besides where the call goes: a number it chose (an amount, a
        // quantity) or a link in its text, that the request does not name. A plan's own text
        // passes the labels (it is the plan's), so this is where a model told to pay more, buy
        // more or send a link is caught.
        let written =
            card.fields.iter().map(|(n, v)| (n.as_str(), v)).chain(card.content.iter().map(|c| ("content", c)));
        for (name, v) in written.filter(|(_, v)| v.origin == Origin::Model) {
            if v.text.trim().parse::<f64>().is_ok() && !named_in(request, &v.text) {
                let says = format!("the {name} `{}` is the model's: the request does not name it", v.text);
                flags.push(Flag { says, value: Some(v.text.clone()) });
            }
            for host in link_hosts(&v.text).into_iter().filter(|h| !named_in(request, h)) {
                let says = format!("the {name} carries a link to `{host}`, which the request does not name");
                flags.push(Flag { says, value: Some(host.to_string()) });
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

/// The hosts of the `http://` and `https://` links in `text` (the scheme in any case), each
/// once, in order. (A link written without its scheme is not seen.)
fn link_hosts(text: &str) -> Vec<&str> {
    // ASCII lowering keeps every byte where it was, so positions found in it hold in `text`.
    let lowered = text.to_ascii_lowercase();
    let mut hosts: Vec<&str> = Vec::new();
    for (at, _) in lowered.match_indices("http") {
        let scheme = ["https://", "http://"].into_iter().find(|s| lowered[at..].starts_with(s));
        let Some(after) = scheme.map(|s| &text[at + s.len()..]) else { continue };
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '/' | '?' | '#' | ':' | '"' | '\'' | ')' | '>'))
            .unwrap_or(after.len());
        let host = after[..end].trim_end_matches('.');
        if !host.is_empty() && !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    hosts
}

#[cfg(test)]
mod tests {
    use super::{link_hosts, named_in};

    #[test]
    fn a_links_host_is_read_up_to_its_path_port_or_end() {
        let text =
            "Renew at https://sso-reset.example.net/renew, or http://a.test:8080 (and https://sso-reset.example.net.)";
        assert_eq!(link_hosts(text), ["sso-reset.example.net", "a.test"]);
        assert_eq!(link_hosts("HTTPS://Evil.Example/x and hTTp://b.test"), ["Evil.Example", "b.test"]);
        assert!(link_hosts("no link here; http alone; https:// nothing").is_empty());
    }

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
