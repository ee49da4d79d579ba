//! The builtin functions as the language defines them: the one list that the checker (which
//! names it knows), the runtime (a test requires a behaviour for each), the prompt a model reads
//! and the language reference (a test requires each there) all follow. Adding a builtin starts
//! here.

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

/// One builtin as a reader sees it. A name may stand in two groups (`contains` takes a list or
/// a string).
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    pub name: &'static str,
    /// How the prompt and the reference show it: the name, or a signature where it helps.
    pub shown: &'static str,
    pub group: Group,
}

const fn b(name: &'static str, shown: &'static str, group: Group) -> Builtin {
    Builtin { name, shown, group }
}

use Group::*;

pub const BUILTINS: &[Builtin] = &[
    b("len", "len", Lists),
    b("is_empty", "is_empty", Lists),
    b("get", "get(xs, i) -> Option", Lists),
    b("push", "push", Lists),
    b("concat", "concat", Lists),
    b("contains", "contains", Lists),
    b("map", "map", Lists),
    b("filter", "filter", Lists),
    b("fold", "fold(xs, init, f)", Lists),
    b("any", "any", Lists),
    b("all", "all", Lists),
    b("sum", "sum", Lists),
    b("reverse", "reverse", Lists),
    b("range", "range(a, b)", Lists),
    b("first", "first", Lists),
    b("last", "last", Lists),
    b("sort", "sort", Lists),
    b("sort_by", "sort_by(xs, key)", Lists),
    b("min_by", "min_by(xs, key) -> Option", Lists),
    b("max_by", "max_by", Lists),
    b("unique", "unique", Lists),
    b("group_by", "group_by(xs, key) -> List[(K, List[T])]", Lists),
    b("count_by", "count_by(xs, key) -> List[(K, Int)]", Lists),
    b("enumerate", "enumerate -> List[(Int, T)]", Lists),
    b("zip", "zip", Lists),
    b("take", "take(xs, n)", Lists),
    b("skip", "skip", Lists),
    b("contains", "contains", Strings),
    b("starts_with", "starts_with", Strings),
    b("ends_with", "ends_with", Strings),
    b("to_upper", "to_upper", Strings),
    b("to_lower", "to_lower", Strings),
    b("trim", "trim", Strings),
    b("split", "split", Strings),
    b("join", "join", Strings),
    b("to_string", "to_string", Strings),
    b("parse_int", "parse_int -> Option", Strings),
    b("parse_decimal", "parse_decimal -> Option[Decimal]", Strings),
    b("find", "find(s, t) -> Option", Strings),
    b("replace", "replace(s, from, to)", Strings),
    b("slice", "slice(s, a, b)", Strings),
    b("lines", "lines", Strings),
    b("words", "words", Strings),
    b("repeat", "repeat(s, n)", Strings),
    b("pad_left", "pad_left(s, width, fill)", Strings),
    b("pad_right", "pad_right", Strings),
    b("matches", "matches(s, pattern)", Strings),
    b("find_all", "find_all(s, pattern) -> List[String]", Strings),
    b("captures", "captures(s, pattern) -> Option[List[String]]", Strings),
    b("map_from", "map_from(pairs: List[(K, V)])", Maps),
    b("get", "get(m, k) -> Option[V]", Maps),
    b("insert", "insert(m, k, v)", Maps),
    b("remove", "remove(m, k)", Maps),
    b("contains_key", "contains_key", Maps),
    b("keys", "keys", Maps),
    b("values", "values", Maps),
    b("entries", "entries -> List[(K, V)]", Maps),
    b("unwrap_or", "unwrap_or", OptionsAndResults),
    b("map", "map(o, f)", OptionsAndResults),
    b("and_then", "and_then(o, f)", OptionsAndResults),
    b("map_err", "map_err(r, f)", OptionsAndResults),
    b("ok_or", "ok_or(o, e) -> Result", OptionsAndResults),
    b("is_some", "is_some", OptionsAndResults),
    b("is_none", "is_none", OptionsAndResults),
    b("is_ok", "is_ok", OptionsAndResults),
    b("is_err", "is_err", OptionsAndResults),
    b("abs", "abs", Numbers),
    b("min", "min", Numbers),
    b("max", "max", Numbers),
    b("round", "round(d, places)", Numbers),
    b("div_round", "div_round(a, b, places)", Numbers),
    b("parse_date", "parse_date(\"2026-12-01\") -> Option[Date]", Times),
    b("parse_datetime", "parse_datetime(\"2026-12-01T09:30:00Z\") -> Option[DateTime]", Times),
    b("seconds", "seconds(n) -> Duration", Times),
    b("minutes", "minutes", Times),
    b("hours", "hours", Times),
    b("days", "days", Times),
    b("add_days", "add_days(d, n) -> Date", Times),
    b("days_between", "days_between(a, b) -> Int", Times),
    b("unlabel", "unlabel", LabeledValues),
];

/// Is `name` a builtin function?
pub fn is_builtin(name: &str) -> bool {
    BUILTINS.iter().any(|b| b.name == name)
}

/// Every builtin's name, once, in table order.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().enumerate().filter(|(i, b)| !BUILTINS[..*i].iter().any(|a| a.name == b.name)).map(|(_, b)| b.name)
}

/// The builtins as one line of the prompt's language reference, by group.
pub fn summary() -> String {
    let groups: Vec<String> = Group::ALL
        .iter()
        .map(|g| {
            let shown: Vec<&str> = BUILTINS.iter().filter(|b| b.group == *g).map(|b| b.shown).collect();
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
    fn the_summary_shows_every_builtin_by_group() {
        let line = summary();
        assert!(line.starts_with("len, is_empty, get(xs, i) -> Option"), "{line}");
        for b in BUILTINS {
            assert!(line.contains(b.shown), "{} is missing from: {line}", b.name);
        }
    }
}
