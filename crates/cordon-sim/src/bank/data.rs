//! The simulated bank's state as plain data: what the JSON data file holds (the user's profile,
//! accounts, transactions, standing orders, payees, statements and messages), what the tools
//! did (payments sent, transfers between accounts, standing orders cancelled, changes made),
//! money as exact cents written as decimal text, and the checks that make a loaded file a
//! consistent state.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An amount of money in cents, written in the data file (and to and from tools, as the
/// policy's `Decimal`) as decimal text with two places: `"1250.00"`, `"-84.20"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Money(pub i64);

impl Money {
    /// Reads decimal text (`"12.5"`, `"-84.20"`, `"1250"`); more than two places are allowed
    /// only as trailing zeros (`"12.500"`): a bank moves whole cents.
    pub fn parse(text: &str) -> Result<Money, String> {
        let bad = || format!("`{text}` is not an amount of money (such as \"12.50\")");
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
        if whole.is_empty()
            || !all_digits(whole)
            || !all_digits(fraction)
            || (digits.contains('.') && fraction.is_empty())
        {
            return Err(bad());
        }
        let (cents, rest) = fraction.split_at(fraction.len().min(2));
        if rest.chars().any(|c| c != '0') {
            return Err(format!("`{text}` has fractions of a cent"));
        }
        let whole: i64 = whole.parse().map_err(|_| bad())?;
        let cents: i64 = format!("{cents:0<2}").parse().map_err(|_| bad())?;
        let value = whole.checked_mul(100).and_then(|w| w.checked_add(cents)).ok_or_else(bad)?;
        Ok(Money(if negative { -value } else { value }))
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Money, D::Error> {
        let text = String::deserialize(deserializer)?;
        Money::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The whole state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    /// The customer the agent acts for: the principal of its labels.
    pub user: String,
    /// The bank's date (`2026-03-14`).
    pub today: String,
    pub profile: ProfileData,
    pub accounts: Vec<AccountData>,
    /// Every booked transaction of every account, oldest first.
    pub transactions: Vec<TransactionData>,
    /// Standing orders, in the order they were set up (cancelled ones are listed in
    /// `cancelled`).
    #[serde(default)]
    pub scheduled: Vec<ScheduledData>,
    #[serde(default)]
    pub payees: Vec<PayeeData>,
    #[serde(default)]
    pub statements: Vec<StatementData>,
    /// The message box, oldest first.
    #[serde(default)]
    pub inbox: Vec<MessageData>,
    /// Payments the tools sent, in order.
    #[serde(default)]
    pub sent: Vec<SentData>,
    /// Moves between the user's own accounts the tools made.
    #[serde(default)]
    pub transfers: Vec<TransferData>,
    /// Ids of the standing orders cancelled.
    #[serde(default)]
    pub cancelled: Vec<String>,
    /// What the tools changed, one line each (`S-1: to DE.. 1290.00 "Rent"`, `address: ..`).
    #[serde(default)]
    pub changes: Vec<String>,
}

/// The user's profile. The password is the bank's to check; no tool gives it out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileData {
    pub name: String,
    pub address: String,
    pub phone: String,
    pub email: String,
    pub password: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountData {
    pub id: String,
    pub name: String,
    pub iban: String,
    pub balance: Money,
}

/// A booked transaction: money came in when `amount` is above 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransactionData {
    pub id: String,
    pub account: String,
    pub date: String,
    pub counterparty: String,
    pub iban: String,
    pub amount: Money,
    pub subject: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduledData {
    pub id: String,
    /// The account it is paid from, by id.
    pub from: String,
    pub to_name: String,
    pub to_iban: String,
    pub amount: Money,
    pub subject: String,
    /// The day of the month, 1 to 28.
    pub day: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PayeeData {
    pub name: String,
    pub iban: String,
}

/// A monthly statement; the text a tool gives is `text` followed by the notes printed on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatementData {
    pub account: String,
    pub month: String,
    pub opening: Money,
    pub closing: Money,
    pub text: String,
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageData {
    pub id: String,
    pub sender: String,
    pub date: String,
    pub subject: String,
    pub text: String,
}

/// A payment the tools sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SentData {
    pub from: String,
    pub to_iban: String,
    pub amount: Money,
    pub subject: String,
}

/// A move between two of the user's accounts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferData {
    pub from: String,
    pub to: String,
    pub amount: Money,
}

/// Parses and validates a data file.
pub fn parse(text: &str) -> Result<Data, String> {
    let data: Data = serde_json::from_str(text).map_err(|e| format!("the bank data is not valid: {e}"))?;
    validate(&data).map_err(|e| format!("the bank data is not valid: {e}"))?;
    Ok(data)
}

/// Whether `iban` looks like an IBAN: two letters, two digits, then letters and digits, 15 to
/// 34 characters in all. (The checksum is not the simulation's business.)
pub fn is_iban(iban: &str) -> bool {
    let b = iban.as_bytes();
    (15..=34).contains(&b.len())
        && b[..2].iter().all(u8::is_ascii_uppercase)
        && b[2..4].iter().all(u8::is_ascii_digit)
        && b[4..].iter().all(u8::is_ascii_alphanumeric)
}

/// Whether `date` is an ISO date (`2026-03-14`), which compares correctly as text.
fn is_date(date: &str) -> bool {
    let b = date.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// Checks what the JSON shape cannot: ids unique, accounts that exist, IBANs and dates well
/// formed and not after today, balances not negative, standing orders above 0 on days 1 to
/// 28, a password of at least 12 characters.
pub fn validate(data: &Data) -> Result<(), String> {
    if data.user.is_empty() {
        return Err("the user has no name".into());
    }
    if !is_date(&data.today) {
        return Err(format!("today, `{}`, is not a date such as 2026-03-14", data.today));
    }
    if data.profile.password.chars().count() < 12 {
        return Err("the password is shorter than 12 characters".into());
    }
    crate::unique_ids(data.accounts.iter().map(|a| a.id.as_str()), "the account")?;
    crate::unique_ids(data.transactions.iter().map(|t| t.id.as_str()), "the transaction")?;
    crate::unique_ids(data.scheduled.iter().map(|s| s.id.as_str()), "the standing order")?;
    crate::unique_ids(data.inbox.iter().map(|m| m.id.as_str()), "the message")?;
    let account = |id: &str, what: String| {
        if data.accounts.iter().any(|a| a.id == id) {
            Ok(())
        } else {
            Err(format!("{what} names the unknown account `{id}`"))
        }
    };
    let iban = |iban: &str, what: String| {
        if is_iban(iban) { Ok(()) } else { Err(format!("{what} has the IBAN `{iban}`, which is not one")) }
    };
    let date = |date: &str, what: String| {
        if !is_date(date) {
            Err(format!("{what} has the date `{date}`, which is not one such as 2026-03-14"))
        } else if date > data.today.as_str() {
            Err(format!("{what} is dated {date}, after today ({})", data.today))
        } else {
            Ok(())
        }
    };
    for a in &data.accounts {
        iban(&a.iban, format!("the account `{}`", a.id))?;
        if a.balance.0 < 0 {
            return Err(format!("the account `{}` has a negative balance", a.id));
        }
    }
    for t in &data.transactions {
        let what = format!("the transaction `{}`", t.id);
        account(&t.account, what.clone())?;
        iban(&t.iban, what.clone())?;
        date(&t.date, what.clone())?;
        if t.amount.0 == 0 {
            return Err(format!("{what} moves no money"));
        }
    }
    for s in &data.scheduled {
        let what = format!("the standing order `{}`", s.id);
        account(&s.from, what.clone())?;
        iban(&s.to_iban, what.clone())?;
        if s.amount.0 <= 0 {
            return Err(format!("{what} sends {}: expected more than 0", s.amount));
        }
        if !(1..=28).contains(&s.day) {
            return Err(format!("{what} is paid on day {}: expected 1 to 28", s.day));
        }
    }
    for p in &data.payees {
        iban(&p.iban, format!("the payee `{}`", p.name))?;
    }
    for (i, s) in data.statements.iter().enumerate() {
        account(&s.account, format!("statement {}", i + 1))?;
    }
    for m in &data.inbox {
        date(&m.date, format!("the message `{}`", m.id))?;
    }
    Ok(())
}
