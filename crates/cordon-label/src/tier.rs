//! How a tool call must be approved: the tiers a policy's `@approval` names. The checker accepts
//! exactly these names, the runtime computes a call's tier, the static analysis bounds it and
//! the gate acts on it.

use serde::{Deserialize, Serialize};

/// How a tool call must be approved, from the policy's `@approval`. Ordered from the least to
/// the most strict, so the stricter of two tiers is their maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Performed without asking (`@approval(none)`, or no `@approval`).
    None,
    /// A card, unless a remembered grant covers the call.
    Ask,
    /// A card every time; never remembered.
    AskAlways,
    /// Never performed, whoever approves.
    Deny,
}

impl Tier {
    /// Every tier, from the least to the most strict.
    pub const ALL: [Tier; 4] = [Tier::None, Tier::Ask, Tier::AskAlways, Tier::Deny];

    /// The tier `@approval` names `name`.
    pub fn from_name(name: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The name `@approval` uses for it.
    pub fn name(self) -> &'static str {
        match self {
            Tier::None => "none",
            Tier::Ask => "ask",
            Tier::AskAlways => "ask_always",
            Tier::Deny => "deny",
        }
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Tier;

    #[test]
    fn every_tier_is_named_once_and_ordered_by_strictness() {
        for t in Tier::ALL {
            assert_eq!(Tier::from_name(t.name()), Some(t));
        }
        assert!(Tier::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Tier::from_name("maybe"), None);
    }
}
