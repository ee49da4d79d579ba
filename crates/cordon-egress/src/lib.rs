//! The outgoing-data check's detectors: what in a text about to leave is sensitive, in two
//! tiers, and the text rewritten with each finding replaced by a typed placeholder.
//!
//! - The **never tier** ([`Tier::Never`]) is refused even when the user approves: the vault's
//!   own secrets (exact, base64, hex, percent-encoded, split), private keys, provider tokens
//!   (GitHub, AWS, Slack, Stripe, OpenAI, Anthropic, JWTs), payment card numbers, IBANs, US
//!   routing and account numbers, US social security numbers, UK National Insurance numbers,
//!   Spanish DNIs and NIEs, and password assignments. Checksums, issuer prefixes and fixed
//!   formats keep it precise.
//! - The **consent tier** ([`Tier::Consent`]) needs the user's yes: health, finances, sexual
//!   life, religion, politics, precise location, and generic high-entropy strings. It sits
//!   behind the [`Classifier`] trait; the built-in [`Lexicon`] reads word lists.
//!
//! [`Scanner::scan`] returns [`Finding`]s: a category and a byte span, never the text, so a
//! finding can go into a diagnostic, a trace or the audit log as it is. [`redact`] rewrites the
//! text. Every pattern is matched in linear time (the `regex` crates, `memchr`), and every
//! check around a match is bounded, so hostile input costs time in proportion to its length.
//!
//! ```
//! use cordon_egress::{Category, Scanner, SecretValue, redact};
//!
//! let scanner = Scanner::new(&[SecretValue::from("cordon-canary-7Hq2xVp9Lm")]);
//! let text = "card 4539 1488 0343 6467, token Y29yZG9uLWNhbmFyeS03SHEyeFZwOUxt";
//! let findings = scanner.scan(text);
//! let categories: Vec<Category> = findings.iter().map(|f| f.category).collect();
//! assert_eq!(categories, [Category::CardNumber, Category::VaultSecret]);
//! assert_eq!(redact(text, &findings), "card [card number], token [vault secret]");
//! ```

mod category;
mod checksum;
mod classifier;
mod context;
mod entropy;
mod finding;
mod ids;
mod lexicon;
mod location;
mod numbers;
mod password;
mod patterns;
mod redaction;
mod tokens;
mod vault;

use std::fmt;
use std::sync::{Arc, OnceLock};

pub use category::{Category, Tier, UnknownCategory};
pub use classifier::{Classifier, Lexicon};
pub use finding::Finding;
pub use vault::{SecretFinder, SecretValue, VaultMatcher};

/// Finds the sensitive data of texts: the never tier's detectors, the vault's secrets, and a
/// consent-tier [`Classifier`]. Made once, used for any number of texts (and threads).
///
/// The built-in detectors are hundreds of patterns, whose compiling takes tens of milliseconds:
/// they are compiled at the first text that needs them, so that a run which sends nothing
/// never pays for them.
pub struct Scanner {
    vault: Arc<dyn SecretFinder>,
    never: OnceLock<Never>,
    /// The consent tier's classifier; without one, the built-in [`Lexicon`], in `lexicon`.
    classifier: Option<Box<dyn Classifier + Send + Sync>>,
    lexicon: OnceLock<Lexicon>,
}

/// The never tier's detectors with a fixed shape.
struct Never {
    tokens: tokens::Tokens,
    ids: ids::Ids,
    passwords: password::Passwords,
}

impl fmt::Debug for Scanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scanner").field("vault", &self.vault).finish_non_exhaustive()
    }
}

impl Scanner {
    /// A scanner for the vault's `secrets`, with the built-in [`Lexicon`] classifier.
    pub fn new(secrets: &[SecretValue]) -> Scanner {
        Scanner::with_secret_finder(Arc::new(VaultMatcher::new(secrets)))
    }

    /// A scanner that asks `vault` where the vault's secrets are (the credential broker, which
    /// alone holds their values), with the built-in [`Lexicon`] classifier.
    pub fn with_secret_finder(vault: Arc<dyn SecretFinder>) -> Scanner {
        Scanner { vault, never: OnceLock::new(), classifier: None, lexicon: OnceLock::new() }
    }

    /// The same scanner with `classifier` for the consent tier instead of the built-in one.
    pub fn with_classifier(mut self, classifier: Box<dyn Classifier + Send + Sync>) -> Scanner {
        self.classifier = Some(classifier);
        self
    }

    fn classifier(&self) -> &dyn Classifier {
        match &self.classifier {
            Some(classifier) => classifier.as_ref(),
            None => self.lexicon.get_or_init(Lexicon::new),
        }
    }

    /// The findings of `text`, sorted by position, none overlapping another (where candidates
    /// overlap, a vault secret wins, then the never tier, then the longer).
    pub fn scan(&self, text: &str) -> Vec<Finding> {
        let mut candidates = self.never(text);
        candidates.extend(self.classifier().classify(text).into_iter().filter(|f| f.category.tier() == Tier::Consent));
        self.until_redaction_is_clean(text, finding::settle(text, candidates))
    }

    /// The never tier's findings of `text` only, settled like [`Scanner::scan`]'s.
    pub fn scan_never(&self, text: &str) -> Vec<Finding> {
        self.until_redaction_is_clean(text, finding::settle(text, self.never(text)))
    }

    /// The findings grown until the redacted text has no never-tier finding of its own: every
    /// other occurrence of a never-tier value is one too (an account number named once and
    /// repeated bare is still the account number); and since a detector reads context (a card glued to a letter is part of a word; `ssn` names the
    /// number after it), and a placeholder changes context: `Y29..Lm4539 1488 0343 6467`
    /// redacts to `[vault secret]4539 1488 0343 6467`, where the card stands alone. What the
    /// redacted text reveals is found there, mapped back and absorbed, a few rounds at most.
    fn until_redaction_is_clean(&self, text: &str, mut findings: Vec<Finding>) -> Vec<Finding> {
        for _ in 0..MAX_ROUNDS {
            findings = finding::echoes(text, findings);
            // A consent placeholder changes context too.
            if findings.is_empty() {
                break;
            }
            let redacted = redaction::Redacted::new(text, &findings);
            let revealed = finding::settle(redacted.text(), self.never(redacted.text()));
            if revealed.is_empty() {
                break;
            }
            findings = finding::absorb(findings, revealed.into_iter().map(|f| redacted.original(f)).collect());
        }
        findings
    }

    fn never(&self, text: &str) -> Vec<Finding> {
        let mut out: Vec<Finding> =
            self.vault.find(text).into_iter().map(|span| Finding::new(Category::VaultSecret, span)).collect();
        let never = self.never.get_or_init(|| Never {
            tokens: tokens::Tokens::new(),
            ids: ids::Ids::new(),
            passwords: password::Passwords::new(),
        });
        never.tokens.find(text, &mut out);
        numbers::find(text, &mut out);
        never.ids.find(text, &mut out);
        never.passwords.find(text, &mut out);
        out
    }
}

/// How many times a scan looks again at its own redaction.
const MAX_ROUNDS: usize = 4;

/// `text` with each finding's span replaced by its category's placeholder (`[card number]`).
/// The findings are those [`Scanner::scan`] returned for this text: sorted, not overlapping;
/// any that are not (or whose span is not on the text's character boundaries) are skipped.
pub fn redact(text: &str, findings: &[Finding]) -> String {
    redaction::Redacted::new(text, findings).text().to_owned()
}
