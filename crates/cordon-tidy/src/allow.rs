//! Allow-lists that may only shrink. A rule the code does not hold everywhere yet names its
//! exceptions; the check fails on a new one, and on a listed one that now holds the rule, so the
//! list is shortened the day an exception is fixed, never kept as a loophole.

use std::collections::BTreeMap;

/// The problems `found` (each place and what is wrong there) against the places `allowed`:
/// every one found but not allowed, and every one allowed but no longer found or listed twice.
pub fn ratchet(rule: &str, found: &BTreeMap<String, String>, allowed: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for (place, what) in found {
        if !allowed.contains(&place.as_str()) {
            problems.push(format!("{place}: {what} ({rule})"));
        }
    }
    for (index, place) in allowed.iter().enumerate() {
        if !found.contains_key(*place) {
            problems.push(format!("{place} is allow-listed for \"{rule}\" but now holds it: remove it from the list"));
        } else if allowed[..index].contains(place) {
            problems.push(format!("{place} is allow-listed twice for \"{rule}\""));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_exception_and_a_fixed_one_both_fail() {
        let found: BTreeMap<_, _> =
            [("a.rs".to_string(), "1,200 lines".to_string()), ("b.rs".into(), "1,100 lines".into())].into();
        assert!(ratchet("size", &found, &["a.rs", "b.rs"]).is_empty());
        let problems = ratchet("size", &found, &["a.rs", "c.rs"]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("b.rs: 1,100 lines"), "{problems:?}");
        assert!(problems[1].contains("c.rs is allow-listed"), "{problems:?}");
        assert_eq!(ratchet("size", &found, &["a.rs", "b.rs", "a.rs"]).len(), 1);
    }
}
