//! The builtin functions as the language defines them: one [`Builtin`] per function, with its
//! name and the lines the prompt and the language reference show for it. Every layer dispatches
//! on the enum by an exhaustive `match` (the checker's signatures and facts, the compiler's
//! special forms, the interpreter's behaviour and label rules, the static analysis's abstract
//! behaviour), so a new builtin does not compile until each of them says what it does. A name
//! is looked at once, where a call is resolved ([`Builtin::from_name`]). Adding a builtin
//! starts here.

/// Where a builtin is listed for a reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Lists,
    Strings,
    OptionsAndResults,
    Numbers,
    Maps,
    Times,
    LabeledValues,
}

impl Group {
    /// The groups in the order the reference lists them.
    const ALL: [Group; 7] = [
        Group::Lists,
        Group::Strings,
        Group::Maps,
        Group::OptionsAndResults,
        Group::Numbers,
        Group::Times,
        Group::LabeledValues,
    ];

    fn title(self) -> &'static str {
        match self {
            Group::Lists => "",
            Group::Strings => "strings: ",
            Group::OptionsAndResults => "options and results: ",
            Group::Numbers => "numbers: ",
            Group::Maps => "maps (`Map[K, V]`, keys ordered): ",
            Group::Times => "dates and times (ISO 8601; `DateTime` is a UTC instant): ",
            Group::LabeledValues => "labeled values: ",
        }
    }
}

/// Declares [`Builtin`] with a variant per name, in order, and its table and name lookups.
macro_rules! builtins {
    ($($variant:ident = $name:literal,)*) => {
        /// A builtin function. The label functions ([`LabelFn`]) exist only in a policy's
        /// `@label` values; every other one is a plan's to call.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum Builtin {
            $($variant,)*
            Label(LabelFn),
        }

        impl Builtin {
            /// The builtins a plan may call, in the order the reference lists them.
            pub const PLAN: &[Builtin] = &[$(Builtin::$variant,)*];

            /// The name a program calls it by.
            pub fn name(self) -> &'static str {
                match self {
                    $(Builtin::$variant => $name,)*
                    Builtin::Label(l) => l.name(),
                }
            }

            /// The builtin called `name`, a label function included.
            pub fn from_name(name: &str) -> Option<Builtin> {
                Some(match name {
                    $($name => Builtin::$variant,)*
                    _ => return LabelFn::from_name(name).map(Builtin::Label),
                })
            }
        }
    };
}

// Within each group the reference lists its builtins in this order, so a builtin that stands in
// two groups comes where both list it: `map_from` and `unwrap_or` before `get` and `map`, which
// maps and options list after them.
builtins! {
    Len = "len",
    IsEmpty = "is_empty",
    MapFrom = "map_from",
    UnwrapOr = "unwrap_or",
    Get = "get",
    Push = "push",
    Concat = "concat",
    Contains = "contains",
    Map = "map",
    Filter = "filter",
    Fold = "fold",
    Any = "any",
    All = "all",
    Sum = "sum",
    Reverse = "reverse",
    Range = "range",
    First = "first",
    Last = "last",
    Sort = "sort",
    SortBy = "sort_by",
    MinBy = "min_by",
    MaxBy = "max_by",
    Unique = "unique",
    GroupBy = "group_by",
    CountBy = "count_by",
    Enumerate = "enumerate",
    Zip = "zip",
    Take = "take",
    Skip = "skip",
    StartsWith = "starts_with",
    EndsWith = "ends_with",
    ToUpper = "to_upper",
    ToLower = "to_lower",
    Trim = "trim",
    Split = "split",
    Join = "join",
    ToString = "to_string",
    ParseInt = "parse_int",
    ParseDecimal = "parse_decimal",
    Find = "find",
    Replace = "replace",
    Slice = "slice",
    Lines = "lines",
    Words = "words",
    Repeat = "repeat",
    PadLeft = "pad_left",
    PadRight = "pad_right",
    Matches = "matches",
    FindAll = "find_all",
    Captures = "captures",
    Insert = "insert",
    Remove = "remove",
    ContainsKey = "contains_key",
    Keys = "keys",
    Values = "values",
    Entries = "entries",
    AndThen = "and_then",
    MapErr = "map_err",
    OkOr = "ok_or",
    IsSome = "is_some",
    IsNone = "is_none",
    IsOk = "is_ok",
    IsErr = "is_err",
    Abs = "abs",
    Min = "min",
    Max = "max",
    Round = "round",
    DivRound = "div_round",
    ParseDate = "parse_date",
    ParseDateTime = "parse_datetime",
    Seconds = "seconds",
    Minutes = "minutes",
    Hours = "hours",
    Days = "days",
    AddDays = "add_days",
    DaysBetween = "days_between",
    Unlabel = "unlabel",
}

/// A label function: callable only in a policy's `@label` values, where it is never shadowed
/// (`join` of two labels is the builtin `join`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum LabelFn {
    /// `public()`: anyone may read it, everyone vouches for it.
    Public,
    /// `untrusted()`: public, vouched for by no one.
    Untrusted,
    /// `secret(p)`: only `p` may release it.
    Secret,
    /// `endorsed(p)`: public, vouched for by `p`.
    Endorsed,
    /// `readers(ps)`: readable by any of `ps`.
    Readers,
    /// `group(name, members)`: the group `name`'s data, readable by its members; no member's
    /// word releases it, only a `release` the policy declares.
    Group,
    /// `user()`: the principal the agent acts for.
    User,
}

impl LabelFn {
    pub const ALL: [LabelFn; 7] = [
        LabelFn::Public,
        LabelFn::Untrusted,
        LabelFn::Secret,
        LabelFn::Endorsed,
        LabelFn::Readers,
        LabelFn::Group,
        LabelFn::User,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LabelFn::Public => "public",
            LabelFn::Untrusted => "untrusted",
            LabelFn::Secret => "secret",
            LabelFn::Endorsed => "endorsed",
            LabelFn::Readers => "readers",
            LabelFn::Group => "group",
            LabelFn::User => "user",
        }
    }

    pub fn from_name(name: &str) -> Option<LabelFn> {
        LabelFn::ALL.into_iter().find(|l| l.name() == name)
    }
}

impl Builtin {
    /// Where the reference and the prompt list it, and how each shows it: the name, or a
    /// signature where it helps. A name may stand in two groups (`contains` takes a list or a
    /// string). The label functions are a policy's, never shown to a plan's author.
    pub fn listed(self) -> &'static [(Group, &'static str)] {
        use Group::*;
        match self {
            Builtin::Len => &[(Lists, "len")],
            Builtin::IsEmpty => &[(Lists, "is_empty")],
            Builtin::Get => &[(Lists, "get(xs, i) -> Option"), (Maps, "get(m, k) -> Option[V]")],
            Builtin::Push => &[(Lists, "push")],
            Builtin::Concat => &[(Lists, "concat")],
            Builtin::Contains => &[(Lists, "contains"), (Strings, "contains")],
            Builtin::Map => &[(Lists, "map"), (OptionsAndResults, "map(o, f)")],
            Builtin::Filter => &[(Lists, "filter")],
            Builtin::Fold => &[(Lists, "fold(xs, init, f)")],
            Builtin::Any => &[(Lists, "any")],
            Builtin::All => &[(Lists, "all")],
            Builtin::Sum => &[(Lists, "sum")],
            Builtin::Reverse => &[(Lists, "reverse")],
            Builtin::Range => &[(Lists, "range(a, b)")],
            Builtin::First => &[(Lists, "first")],
            Builtin::Last => &[(Lists, "last")],
            Builtin::Sort => &[(Lists, "sort")],
            Builtin::SortBy => &[(Lists, "sort_by(xs, key)")],
            Builtin::MinBy => &[(Lists, "min_by(xs, key) -> Option")],
            Builtin::MaxBy => &[(Lists, "max_by")],
            Builtin::Unique => &[(Lists, "unique")],
            Builtin::GroupBy => &[(Lists, "group_by(xs, key) -> List[(K, List[T])]")],
            Builtin::CountBy => &[(Lists, "count_by(xs, key) -> List[(K, Int)]")],
            Builtin::Enumerate => &[(Lists, "enumerate -> List[(Int, T)]")],
            Builtin::Zip => &[(Lists, "zip")],
            Builtin::Take => &[(Lists, "take(xs, n)")],
            Builtin::Skip => &[(Lists, "skip")],
            Builtin::StartsWith => &[(Strings, "starts_with")],
            Builtin::EndsWith => &[(Strings, "ends_with")],
            Builtin::ToUpper => &[(Strings, "to_upper")],
            Builtin::ToLower => &[(Strings, "to_lower")],
            Builtin::Trim => &[(Strings, "trim")],
            Builtin::Split => &[(Strings, "split")],
            Builtin::Join => &[(Strings, "join")],
            Builtin::ToString => &[(Strings, "to_string")],
            Builtin::ParseInt => &[(Strings, "parse_int -> Option")],
            Builtin::ParseDecimal => &[(Strings, "parse_decimal -> Option[Decimal]")],
            Builtin::Find => &[(Strings, "find(s, t) -> Option")],
            Builtin::Replace => &[(Strings, "replace(s, from, to)")],
            Builtin::Slice => &[(Strings, "slice(s, a, b)")],
            Builtin::Lines => &[(Strings, "lines")],
            Builtin::Words => &[(Strings, "words")],
            Builtin::Repeat => &[(Strings, "repeat(s, n)")],
            Builtin::PadLeft => &[(Strings, "pad_left(s, width, fill)")],
            Builtin::PadRight => &[(Strings, "pad_right")],
            Builtin::Matches => &[(Strings, "matches(s, pattern)")],
            Builtin::FindAll => &[(Strings, "find_all(s, pattern) -> List[String]")],
            Builtin::Captures => &[(Strings, "captures(s, pattern) -> Option[List[String]]")],
            Builtin::MapFrom => &[(Maps, "map_from(pairs: List[(K, V)])")],
            Builtin::Insert => &[(Maps, "insert(m, k, v)")],
            Builtin::Remove => &[(Maps, "remove(m, k)")],
            Builtin::ContainsKey => &[(Maps, "contains_key")],
            Builtin::Keys => &[(Maps, "keys")],
            Builtin::Values => &[(Maps, "values")],
            Builtin::Entries => &[(Maps, "entries -> List[(K, V)]")],
            Builtin::UnwrapOr => &[(OptionsAndResults, "unwrap_or")],
            Builtin::AndThen => &[(OptionsAndResults, "and_then(o, f)")],
            Builtin::MapErr => &[(OptionsAndResults, "map_err(r, f)")],
            Builtin::OkOr => &[(OptionsAndResults, "ok_or(o, e) -> Result")],
            Builtin::IsSome => &[(OptionsAndResults, "is_some")],
            Builtin::IsNone => &[(OptionsAndResults, "is_none")],
            Builtin::IsOk => &[(OptionsAndResults, "is_ok")],
            Builtin::IsErr => &[(OptionsAndResults, "is_err")],
            Builtin::Abs => &[(Numbers, "abs")],
            Builtin::Min => &[(Numbers, "min")],
            Builtin::Max => &[(Numbers, "max")],
            Builtin::Round => &[(Numbers, "round(d, places)")],
            Builtin::DivRound => &[(Numbers, "div_round(a, b, places)")],
            Builtin::ParseDate => &[(Times, "parse_date(\"2026-12-01\") -> Option[Date]")],
            Builtin::ParseDateTime => &[(Times, "parse_datetime(\"2026-12-01T09:30:00Z\") -> Option[DateTime]")],
            Builtin::Seconds => &[(Times, "seconds(n) -> Duration")],
            Builtin::Minutes => &[(Times, "minutes")],
            Builtin::Hours => &[(Times, "hours")],
            Builtin::Days => &[(Times, "days")],
            Builtin::AddDays => &[(Times, "add_days(d, n) -> Date")],
            Builtin::DaysBetween => &[(Times, "days_between(a, b) -> Int")],
            Builtin::Unlabel => &[(LabeledValues, "unlabel")],
            Builtin::Label(_) => &[],
        }
    }
}

/// Is `name` a builtin function a plan may call?
pub fn is_builtin(name: &str) -> bool {
    Builtin::from_name(name).is_some_and(|b| !matches!(b, Builtin::Label(_)))
}

/// Every builtin's name a plan may call, once, in the reference's order.
pub fn names() -> impl Iterator<Item = &'static str> {
    Builtin::PLAN.iter().map(|b| b.name())
}

/// The builtins as one line of the prompt's language reference, by group.
pub fn summary() -> String {
    let groups: Vec<String> = Group::ALL
        .iter()
        .map(|g| {
            let shown: Vec<&str> = Builtin::PLAN
                .iter()
                .flat_map(|b| b.listed())
                .filter(|(group, _)| group == g)
                .map(|(_, shown)| *shown)
                .collect();
            format!("{}{}", g.title(), shown.join(", "))
        })
        .collect();
    groups.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_reference_lists_every_builtin() {
        let reference = include_str!("../../../docs/language.md");
        for name in names() {
            assert!(reference.contains(&format!("`{name}")), "docs/language.md does not list `{name}`");
        }
    }

    #[test]
    fn every_builtin_is_found_by_its_name() {
        let label_fns = LabelFn::ALL.iter().map(|l| Builtin::Label(*l));
        for b in Builtin::PLAN.iter().copied().chain(label_fns) {
            assert_eq!(Builtin::from_name(b.name()), Some(b));
        }
        assert_eq!(Builtin::from_name("Some"), None);
    }

    #[test]
    fn the_summary_shows_every_builtin_by_group() {
        let line = summary();
        assert!(line.starts_with("len, is_empty, get(xs, i) -> Option"), "{line}");
        for b in Builtin::PLAN {
            assert!(!b.listed().is_empty(), "{} is in no group", b.name());
            for (_, shown) in b.listed() {
                assert!(line.contains(shown), "{} is missing from: {line}", b.name());
            }
        }
        assert!(line.contains("maps (`Map[K, V]`, keys ordered): map_from(pairs: List[(K, V)]), get(m, k)"), "{line}");
        assert!(line.contains("options and results: unwrap_or, map(o, f), and_then(o, f)"), "{line}");
    }
}
