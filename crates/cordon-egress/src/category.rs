//! What a finding is: its [`Category`], the [`Tier`] that category belongs to, the placeholder
//! a redacted text shows in its place, and the stable kebab-case name diagnostics and the
//! labelled data set use.

use std::fmt;
use std::str::FromStr;

/// How a category of finding is treated when it would leave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Refused even if the user asks or approves: checksums and fixed formats keep it precise.
    Never,
    /// Sent only with the user's yes (or a request of theirs that covers it).
    Consent,
}

impl Tier {
    /// The tier's name in diagnostics: `never` or `consent`.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Never => "never",
            Tier::Consent => "consent",
        }
    }
}

/// Every kind of sensitive data the check finds. The list is exhaustive and its names are
/// stable: they are written in diagnostics and in the labelled data set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// One of the vault's own secrets, as it is or encoded (base64, hex, percent) or split.
    VaultSecret,
    /// A PEM or OpenSSH private key block.
    PrivateKey,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// An AWS access key id (`AKIA`, `ASIA`).
    AwsAccessKey,
    /// An AWS secret access key, next to its `aws_secret_access_key` name.
    AwsSecretKey,
    /// A Slack token (`xoxa-`, `xoxb-`, `xoxp-`, `xoxo-`, `xoxs-`, `xoxr-`).
    SlackToken,
    /// A Stripe live secret or restricted key (`sk_live_`, `rk_live_`).
    StripeKey,
    /// An OpenAI API key (`sk-`, `sk-proj-`).
    OpenaiKey,
    /// An Anthropic API key (`sk-ant-`).
    AnthropicKey,
    /// A JSON Web Token: three base64url parts whose header is JSON naming its `alg`.
    Jwt,
    /// A payment card number: a known issuer prefix, 13 to 19 digits, a valid Luhn digit.
    CardNumber,
    /// An IBAN in its country's format with valid mod-97 check digits.
    Iban,
    /// A US bank routing number (valid ABA checksum) and the account number next to it.
    BankAccount,
    /// A US social security number (area, group and serial rules).
    UsSsn,
    /// A UK National Insurance number (prefix rules).
    UkNino,
    /// A Spanish DNI or NIE with its check letter.
    EsDni,
    /// The value of a `password:` / `password=` assignment (also `pwd`, `passwd`, `secret`).
    Password,
    /// A detail of someone's health: a condition, symptom, medication, treatment or test.
    Health,
    /// Someone's own finances: balances, salary, debts, savings, credit.
    Finances,
    /// Someone's sexual orientation or sexual activity.
    SexualLife,
    /// Someone's religion or belief, or its practice.
    Religion,
    /// Someone's political opinion, vote or membership (a party, a trade union).
    Politics,
    /// A precise location: a street address with its number, GPS coordinates.
    Location,
    /// A random-looking, credential-like string that matches no known token format.
    HighEntropy,
}

impl Category {
    /// Every category, never tier first.
    pub const ALL: [Category; 24] = [
        Category::VaultSecret,
        Category::PrivateKey,
        Category::GithubToken,
        Category::AwsAccessKey,
        Category::AwsSecretKey,
        Category::SlackToken,
        Category::StripeKey,
        Category::OpenaiKey,
        Category::AnthropicKey,
        Category::Jwt,
        Category::CardNumber,
        Category::Iban,
        Category::BankAccount,
        Category::UsSsn,
        Category::UkNino,
        Category::EsDni,
        Category::Password,
        Category::Health,
        Category::Finances,
        Category::SexualLife,
        Category::Religion,
        Category::Politics,
        Category::Location,
        Category::HighEntropy,
    ];

    /// The tier the category belongs to.
    pub fn tier(self) -> Tier {
        match self {
            Category::Health
            | Category::Finances
            | Category::SexualLife
            | Category::Religion
            | Category::Politics
            | Category::Location
            | Category::HighEntropy => Tier::Consent,
            _ => Tier::Never,
        }
    }

    /// The stable kebab-case name (`card-number`, `health`).
    pub fn name(self) -> &'static str {
        self.texts().0
    }

    /// What a redacted text shows instead (`[card number]`, `[health detail]`).
    pub fn placeholder(self) -> &'static str {
        self.texts().1
    }

    fn texts(self) -> (&'static str, &'static str) {
        match self {
            Category::VaultSecret => ("vault-secret", "[vault secret]"),
            Category::PrivateKey => ("private-key", "[private key]"),
            Category::GithubToken => ("github-token", "[GitHub token]"),
            Category::AwsAccessKey => ("aws-access-key", "[AWS access key]"),
            Category::AwsSecretKey => ("aws-secret-key", "[AWS secret key]"),
            Category::SlackToken => ("slack-token", "[Slack token]"),
            Category::StripeKey => ("stripe-key", "[Stripe key]"),
            Category::OpenaiKey => ("openai-key", "[OpenAI key]"),
            Category::AnthropicKey => ("anthropic-key", "[Anthropic key]"),
            Category::Jwt => ("jwt", "[JWT]"),
            Category::CardNumber => ("card-number", "[card number]"),
            Category::Iban => ("iban", "[IBAN]"),
            Category::BankAccount => ("bank-account", "[bank account]"),
            Category::UsSsn => ("us-ssn", "[social security number]"),
            Category::UkNino => ("uk-nino", "[national insurance number]"),
            Category::EsDni => ("es-dni", "[national id]"),
            Category::Password => ("password", "[password]"),
            Category::Health => ("health", "[health detail]"),
            Category::Finances => ("finances", "[financial detail]"),
            Category::SexualLife => ("sexual-life", "[sexual life detail]"),
            Category::Religion => ("religion", "[religious detail]"),
            Category::Politics => ("politics", "[political detail]"),
            Category::Location => ("location", "[location]"),
            Category::HighEntropy => ("high-entropy", "[high-entropy string]"),
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no category's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCategory(pub String);

impl fmt::Display for UnknownCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no category is named `{}`", cordon_text::guard_line(&self.0))
    }
}

impl std::error::Error for UnknownCategory {}

impl FromStr for Category {
    type Err = UnknownCategory;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Category::ALL.into_iter().find(|c| c.name() == name).ok_or_else(|| UnknownCategory(name.to_owned()))
    }
}
