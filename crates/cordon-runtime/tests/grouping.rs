//! `count_by` counts integer keys in one pass with no sort, and every other key by sorting:
//! both must give the groups a reference gives (each distinct key once, in the order of its
//! first element, with its count), and the same counts as `group_by`'s group sizes.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Source, ending, no_tools, run};
use proptest::prelude::*;

/// Each distinct key of `xs` with its count, in the order of first appearance.
fn reference(xs: &[i64]) -> Vec<(i64, usize)> {
    let mut groups: Vec<(i64, usize)> = Vec::new();
    for &x in xs {
        match groups.iter_mut().find(|(k, _)| *k == x) {
            Some((_, n)) => *n += 1,
            None => groups.push((x, 1)),
        }
    }
    groups
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn count_by_on_integers_gives_the_groups_of_the_sorting_path(
        xs in prop::collection::vec(prop_oneof![-4i64..4, Just(i64::MIN), Just(i64::MAX)], 0..40),
    ) {
        // The least `Int` has no literal of its own.
        let literal = |x: i64| if x == i64::MIN { format!("({} - 1)", i64::MIN + 1) } else { format!("({x})") };
        let list = format!("[{}]", xs.iter().map(|&x| literal(x)).collect::<Vec<_>>().join(", "));
        let plan = format!(
            "let xs: List[Int] = {list};
             let by_int = xs.count_by(|x: Int| x).map(|p: (Int, Int)| f\"{{p.0}}:{{p.1}}\");
             let by_text = xs.count_by(|x: Int| x.to_string()).map(|p: (String, Int)| f\"{{p.0}}:{{p.1}}\");
             let by_group = xs.group_by(|x: Int| x).map(|g: (Int, List[Int])| f\"{{g.0}}:{{g.1.len()}}\");
             (by_int.join(\",\"), by_text.join(\",\"), by_group.join(\",\"))"
        );
        let program = Source::new(None, &plan).checked();
        let got = ending(&run(&program, &mut no_tools()));
        let expected = reference(&xs).iter().map(|(k, n)| format!("{k}:{n}")).collect::<Vec<_>>().join(",");
        prop_assert_eq!(got, format!("(\"{expected}\", \"{expected}\", \"{expected}\")"));
    }
}
