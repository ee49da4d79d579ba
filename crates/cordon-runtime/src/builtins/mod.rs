//! The builtin functions at run time, one module per family. Results carry the labels of what
//! they depend on: `len` of a list depends on the list (its spine label), `contains` and `sum`
//! on every element. Sizes are checked before anything is allocated. [`apply`] is where a
//! builtin's behaviour is chosen, by an exhaustive `match` on [`Builtin`]: a builtin the
//! language gains does not compile until it has one.

mod common;
mod labels;
mod lists;
mod maps;
mod numbers;
mod options;
mod strings;
mod times;

use cordon_syntax::Builtin;

use crate::error::RunError;
use crate::value::Val;
pub(crate) use common::type_error;
pub use common::{
    Budget, SLOT_BYTES, check_list_len, check_range_len, check_string_len, deep_label, deep_label_within, equal,
    int_text, overflow, string, texts,
};
use common::{Call, all_labels};
pub(crate) use lists::ordered_by_keys;
/// Applies a first-order builtin. The interpreter runs the rest itself: those that call a
/// function argument are compiled to loops, `unlabel` raises the program-counter label and
/// `user()` is the run's principal.
pub fn apply(b: Builtin, args: &[Val], budget: &mut dyn Budget) -> Result<Val, RunError> {
    use Builtin::*;
    let c = Call { b, args, label: all_labels(args) };
    match b {
        Len | IsEmpty => lists::len_or_is_empty(&c),
        Get => lists::get(&c),
        Push => lists::push(&c, budget),
        Concat => lists::concat(&c, budget),
        Contains => lists::contains(&c),
        Sum => lists::sum(&c),
        Reverse => lists::reverse(&c, budget),
        Range => lists::range(&c, budget),
        First | Last => lists::first_or_last(&c),
        Sort => lists::sort(&c, budget),
        GroupBy | CountBy => lists::grouped_by_keys(&c, budget),
        Unique => lists::unique(&c, budget),
        Enumerate => lists::enumerate(&c, budget),
        Zip => lists::zip(&c, budget),
        Take | Skip => lists::take_or_skip(&c, budget),
        Slice => lists::slice(&c, budget),
        StartsWith | EndsWith => strings::starts_or_ends_with(&c),
        ToUpper | ToLower | Trim => strings::changed(&c, budget),
        Split => strings::split(&c, budget),
        Join => strings::join(&c, budget),
        ToString => strings::to_string(&c, budget),
        ParseInt => strings::parse_int(&c),
        Find => strings::find(&c),
        Replace => strings::replace(&c, budget),
        Lines | Words => strings::lines_or_words(&c, budget),
        Repeat => strings::repeat(&c, budget),
        PadLeft | PadRight => strings::pad(&c, budget),
        Matches | FindAll | Captures => strings::pattern(&c, budget),
        MapFrom => maps::map_from(&c, budget),
        Insert => maps::insert(&c, budget),
        Remove => maps::remove(&c, budget),
        ContainsKey => maps::contains_key(&c),
        Keys | Values | Entries => maps::contents(&c, budget),
        UnwrapOr => options::unwrap_or(&c),
        OkOr => options::ok_or(&c),
        IsSome | IsNone | IsOk | IsErr => options::is_variant(&c),
        Abs => numbers::abs(&c),
        Min | Max => numbers::min_or_max(&c),
        Round => numbers::round(&c),
        DivRound => numbers::div_round(&c),
        ParseDecimal => numbers::parse_decimal(&c),
        ParseDate | ParseDateTime => times::parse(&c),
        Seconds | Minutes | Hours | Days => times::duration(&c),
        AddDays => times::add_days(&c),
        DaysBetween => times::days_between(&c),
        Label(l) => labels::apply(l, &c),
        // The interpreter's own (see above): never applied, but by code the compiler did not make.
        // `sort_by`, `min_by` and `max_by` too: the machine gives their keys (computed by a
        // loop, in order) to [`ordered_by_keys`] itself.
        Map | Filter | Fold | Any | All | AndThen | MapErr | Unlabel | SortBy | MinBy | MaxBy => c.bad(),
    }
}

#[cfg(test)]
mod tests {
    use cordon_syntax::{Builtin, LabelFn};

    use super::common::int_to_string;
    use super::{Budget, apply};
    use crate::error::{ErrorKind, RunError};
    use crate::value::{Val, Value};

    struct Unlimited;

    impl Budget for Unlimited {
        fn allocate(&mut self, _: u64) -> Result<(), RunError> {
            Ok(())
        }

        fn max_string_bytes(&self) -> usize {
            usize::MAX
        }

        fn max_list_len(&self) -> usize {
            usize::MAX
        }
    }

    #[test]
    fn every_builtin_of_the_language_has_a_behaviour() {
        // Each is found by its name, and given nothing it takes fails cleanly, naming itself;
        // `apply`'s exhaustive match is what says what each one does.
        let label_fns = LabelFn::ALL.iter().map(|l| Builtin::Label(*l));
        for b in Builtin::PLAN.iter().copied().chain(label_fns) {
            assert_eq!(Builtin::from_name(b.name()), Some(b), "no run-time `{}`", b.name());
            let units = vec![Val::plain(Value::Unit); 4];
            let named = format!("`{}`", b.name());
            let result = apply(b, &units, &mut Unlimited);
            assert!(
                matches!(&result, Err(e) if e.kind == ErrorKind::Type && e.message.contains(&named)),
                "{named} on four units: {result:?}"
            );
        }
    }

    #[test]
    fn int_to_string_writes_what_to_string_writes() {
        for i in [0, 1, -1, 9, 10, -10, 12345, 99_999, i64::MAX, i64::MIN, i64::MIN + 1] {
            assert_eq!(int_to_string(i), i.to_string());
        }
    }
}
