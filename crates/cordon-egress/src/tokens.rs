//! The never tier's credentials with a fixed shape: provider tokens by their prefixes (GitHub,
//! AWS, Slack, Stripe, OpenAI, Anthropic), JWTs (whose header must decode to JSON naming an
//! `alg`), AWS secret keys next to their name, and private key blocks (PEM and OpenSSH) with
//! key material in them.
//!
//! The token formats are one multi-pattern regex (`regex-automata`'s meta engine), one linear
//! pass that says which format matched.

use std::ops::Range;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use regex::Regex;
use regex_automata::meta;

use crate::category::Category;
use crate::checksum;
use crate::finding::Finding;
use crate::patterns::{fixed, fixed_many};

/// Each token format: its category and pattern (ASCII word boundaries, so the engine's
/// fast paths hold on any text; no large bounded repetitions, whose many states would make the
/// lazy DFA give way to a slower engine).
const FORMATS: &[(Category, &str)] = &[
    (Category::GithubToken, r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{36}[A-Za-z0-9]*(?-u:\b)"),
    (Category::GithubToken, r"(?-u:\b)github_pat_[A-Za-z0-9_]{22}[A-Za-z0-9_]*(?-u:\b)"),
    (Category::AwsAccessKey, r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)"),
    (Category::SlackToken, r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10}[A-Za-z0-9-]*(?-u:\b)"),
    (Category::StripeKey, r"(?-u:\b)[sr]k_live_[A-Za-z0-9]{20}[A-Za-z0-9]*(?-u:\b)"),
    (Category::AnthropicKey, r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*"),
    (Category::OpenaiKey, r"(?-u:\b)sk-[A-Za-z0-9_-]{20}[A-Za-z0-9_-]*"),
    (Category::Jwt, r"(?-u:\b)eyJ[A-Za-z0-9_-]{5}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{2}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*"),
];

/// How near (in bytes) an access key id makes a `secret_key` an AWS secret key.
const AWS_REACH: usize = 300;

/// The credential patterns, compiled once per scanner.
#[derive(Debug)]
pub struct Tokens {
    formats: meta::Regex,
    aws_secret: Regex,
    key_begin: Regex,
    key_end: Regex,
}

impl Tokens {
    /// The compiled patterns.
    pub fn new() -> Tokens {
        let patterns: Vec<&str> = FORMATS.iter().map(|(_, p)| *p).collect();
        Tokens {
            formats: fixed_many(&patterns),
            aws_secret: fixed(
                r#"(?i)(?:aws_?)?secret(?:_?access)?_?key["']?[ \t]*(?::|=|:=|=>)[ \t]*["']?[A-Za-z0-9/+]{40}"#,
            ),
            key_begin: fixed(r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"),
            key_end: fixed(r"-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"),
        }
    }

    /// The credentials of `text`.
    pub fn find(&self, text: &str, out: &mut Vec<Finding>) {
        for m in self.formats.find_iter(text) {
            let Some(&(category, _)) = FORMATS.get(m.pattern().as_usize()) else { continue };
            let token = text.get(m.range()).unwrap_or_default();
            if plausible(category, token) {
                out.push(Finding::new(category, m.range()));
            }
        }
        let access_keys: Vec<usize> =
            out.iter().filter(|f| f.category == Category::AwsAccessKey).map(|f| f.span.start).collect();
        for m in self.aws_secret.find_iter(text) {
            let value = m.end() - 40..m.end();
            let glued = text.as_bytes().get(m.end()).is_some_and(|b| b.is_ascii_alphanumeric() || b"/+".contains(b));
            let named = m.as_str().get(..3).is_some_and(|p| p.eq_ignore_ascii_case("aws"));
            let near = access_keys.iter().any(|&k| k.abs_diff(m.start()) <= AWS_REACH);
            if !glued && (named || near) && !checksum::documented_example(text.get(value.clone()).unwrap_or_default()) {
                out.push(Finding::new(Category::AwsSecretKey, value));
            }
        }
        self.private_keys(text, out);
    }

    /// Each BEGIN line with key material after it, to its END line (or to the end of the
    /// material when the block is cut short). BEGIN and END lines are found in one pass each
    /// and paired in order, so a text of many BEGIN lines costs no more than one.
    fn private_keys(&self, text: &str, out: &mut Vec<Finding>) {
        let ends: Vec<Range<usize>> = self.key_end.find_iter(text).map(|m| m.range()).collect();
        let begins: Vec<Range<usize>> = self.key_begin.find_iter(text).map(|m| m.range()).collect();
        for (i, begin) in begins.iter().enumerate() {
            let next_begin = begins.get(i + 1).map_or(text.len(), |b| b.start);
            let first_after = ends.partition_point(|e| e.start < begin.end);
            let end = ends.get(first_after).filter(|e| e.start < next_begin);
            let body_end = end.map_or(next_begin, |e| e.start);
            let body = text.get(begin.end..body_end).unwrap_or_default();
            let material = body.bytes().filter(|b| b.is_ascii_alphanumeric() || b"+/=".contains(b)).count();
            if material >= 40 {
                let stop = end.map_or_else(|| begin.end + body.trim_end().len(), |e| e.end);
                out.push(Finding::new(Category::PrivateKey, begin.start..stop));
            }
        }
    }
}

impl Default for Tokens {
    fn default() -> Self {
        Tokens::new()
    }
}

/// Whether a match of `category`'s pattern is one: a key's random part mixes letters and
/// digits (so `sk-learn-pipeline-example` is no key), a JWT's header names its `alg`, and no
/// documented example counts.
fn plausible(category: Category, token: &str) -> bool {
    match category {
        Category::OpenaiKey | Category::AnthropicKey | Category::StripeKey => {
            has(token, u8::is_ascii_digit) && has(token, u8::is_ascii_lowercase) && has(token, u8::is_ascii_uppercase)
        }
        Category::SlackToken => has(token, u8::is_ascii_digit),
        Category::AwsAccessKey => !checksum::documented_example(token),
        Category::Jwt => jwt_header(token),
        _ => true,
    }
}

fn has(token: &str, class: fn(&u8) -> bool) -> bool {
    token.as_bytes().iter().any(class)
}

/// Whether the first part of `token` is base64url of a JSON object with an `alg` member.
fn jwt_header(token: &str) -> bool {
    let header = token.split('.').next().unwrap_or_default();
    let Ok(json) = URL_SAFE_NO_PAD.decode(header.trim_end_matches('=')) else { return false };
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&json).is_ok_and(|m| m.contains_key("alg"))
}
