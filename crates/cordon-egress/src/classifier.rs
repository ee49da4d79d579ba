//! The consent tier, behind the [`Classifier`] trait so that another one (an external model)
//! can be plugged in. The built-in [`Lexicon`] classifier reads the word lists of
//! `src/lexicon/` as one multi-pattern regex (one linear pass says which list matched), keeps
//! a match when its sentence has what the entry needs (a personal word, an amount of money),
//! and adds the patterns of precise locations and of high-entropy strings.

use regex::Regex;
use regex_automata::meta;

use crate::category::Category;
use crate::context;
use crate::finding::Finding;
use crate::lexicon::{self, Needs};
use crate::patterns::{fixed, fixed_many};
use crate::{entropy, location};

/// Finds consent-tier data in a text. Findings may overlap and need not be sorted: the
/// scanner settles them with the never tier's.
pub trait Classifier {
    /// The consent-tier findings of `text`. Spans off `text`'s character boundaries are dropped.
    fn classify(&self, text: &str) -> Vec<Finding>;
}

/// The built-in classifier: word lists, location patterns, high-entropy strings.
#[derive(Debug)]
pub struct Lexicon {
    terms: meta::Regex,
    needs: Vec<(Category, Needs)>,
    amount: Regex,
    locations: location::Locations,
    entropy: entropy::HighEntropy,
}

impl Lexicon {
    /// The classifier with the lists built into the crate.
    pub fn new() -> Lexicon {
        let patterns = lexicon::patterns();
        let regexes: Vec<&str> = patterns.iter().map(|p| p.regex.as_str()).collect();
        Lexicon {
            terms: fixed_many(&regexes),
            needs: patterns.iter().map(|p| (p.category, p.needs)).collect(),
            amount: fixed(concat!(
                r"(?i)(?:[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn)(?-u:\b))?",
                r"|(?-u:\b)(?:usd|eur|gbp|chf)\s?\d[\d,]*(?:\.\d+)?",
                r"|(?-u:\b)\d[\d,]*(?:\.\d+)?\s?(?:k|grand|usd|eur|gbp|chf|dollars|euros|pounds|quid|bucks)(?-u:\b)",
                r"|(?-u:\b)\d{1,3}(?:,\d{3})+(?:\.\d\d)?(?-u:\b)|(?-u:\b)\d+\.\d\d(?-u:\b))"
            )),
            locations: location::Locations::new(),
            entropy: entropy::HighEntropy::new(),
        }
    }

    fn terms(&self, text: &str, out: &mut Vec<Finding>) {
        for m in self.terms.find_iter(text) {
            let Some(&(category, needs)) = self.needs.get(m.pattern().as_usize()) else { continue };
            let span = m.range();
            let keep = match needs {
                Needs::Nothing => true,
                Needs::Person => context::personal(text, &context::sentence(text, &span)),
                Needs::PersonAndAmount => {
                    let sentence = context::sentence(text, &span);
                    let amount = text.get(sentence.clone()).is_some_and(|s| self.amount.is_match(s));
                    amount && context::personal(text, &sentence)
                }
            };
            if keep {
                out.push(Finding::new(category, span));
            }
        }
    }
}

impl Default for Lexicon {
    fn default() -> Self {
        Lexicon::new()
    }
}

impl Classifier for Lexicon {
    fn classify(&self, text: &str) -> Vec<Finding> {
        let mut out = Vec::new();
        self.terms(text, &mut out);
        self.locations.find(text, &mut out);
        self.entropy.find(text, &mut out);
        out
    }
}
