//! The consent tier's word lists (`src/lexicon/*.txt`, one per category, built into the
//! crate), read into patterns: each list's plain terms, its terms that need a personal word
//! in their sentence, and its terms that need a personal word and an amount of money.
//!
//! A line is a term (matched without regard to case, whole words only, a space matching any
//! run of spaces, underscores or dashes) or, after `re:`, a regular expression. `~` before it
//! asks for a personal word, `$` for a personal word and an amount; `#` starts a comment.

use crate::category::Category;

/// What a term needs from its sentence to count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: the term says enough.
    Nothing,
    /// A personal word (I, my, we, your, she...).
    Person,
    /// A personal word and an amount of money.
    PersonAndAmount,
}

/// The lists, by category.
pub const LISTS: &[(Category, &str)] = &[
    (Category::Health, include_str!("lexicon/health.txt")),
    (Category::Finances, include_str!("lexicon/finances.txt")),
    (Category::SexualLife, include_str!("lexicon/sexual_life.txt")),
    (Category::Religion, include_str!("lexicon/religion.txt")),
    (Category::Politics, include_str!("lexicon/politics.txt")),
];

/// One pattern of the lexicon: a category's entries of one kind, as one alternation.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// The category the entries belong to.
    pub category: Category,
    /// What they need from their sentence.
    pub needs: Needs,
    /// The regular expression (case-insensitive).
    pub regex: String,
}

/// Every list's patterns, those needing nothing first (so at one position a plain term wins).
pub fn patterns() -> Vec<Pattern> {
    let mut out = Vec::new();
    for needs in [Needs::Nothing, Needs::Person, Needs::PersonAndAmount] {
        for &(category, list) in LISTS {
            let mut alternatives: Vec<String> = entries(list).filter(|(n, _)| *n == needs).map(|(_, re)| re).collect();
            if alternatives.is_empty() {
                continue;
            }
            // Longer first: among alternatives matching at one place the first listed wins.
            alternatives.sort_by_key(|a| std::cmp::Reverse(a.len()));
            out.push(Pattern { category, needs, regex: format!("(?i)(?:{})", alternatives.join("|")) });
        }
    }
    out
}

/// The entries of a list: what each needs, and its regular expression.
fn entries(list: &str) -> impl Iterator<Item = (Needs, String)> + '_ {
    list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(|line| {
        let (needs, rest) = match line.as_bytes().first() {
            Some(b'~') => (Needs::Person, &line[1..]),
            Some(b'$') => (Needs::PersonAndAmount, &line[1..]),
            _ => (Needs::Nothing, line),
        };
        let regex = match rest.strip_prefix("re:") {
            Some(re) => format!("(?:{re})"),
            None => term(rest),
        };
        (needs, regex)
    })
}

/// A term as a regular expression: escaped, spaces as any run of separators, a plural `s`
/// allowed, and a word boundary (or an underscore, as in `available_balance`) at each end that
/// is a letter or digit.
fn term(term: &str) -> String {
    let words: Vec<String> = term.split_whitespace().map(regex_syntax_escape).collect();
    let body = words.join(r"[\s_-]+");
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    let open = if edge(term.chars().next()) { r"(?:(?-u:\b)|_)" } else { "" };
    let close = if edge(term.chars().last()) { r"s?(?:(?-u:\b)|_)" } else { "" };
    format!("{open}{body}{close}")
}

fn regex_syntax_escape(word: &str) -> String {
    regex::escape(word)
}
