//! The simulated mail workspace's state as plain data: what the JSON data file holds, and the
//! checks that make a loaded file a consistent state (unique ids, well-formed addresses and
//! times, events that end after they start, documents shared with their owner, nothing dated
//! after the clock).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// The whole state: the user's mailbox (received and sent), calendar and the documents the
/// store holds (including ones not shared with the user).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    /// The address the agent acts for: the principal of its labels.
    pub user: String,
    /// The host's clock, ISO 8601 in UTC (`2026-03-03T08:30:00Z`): the time mails sent now get.
    pub now: String,
    /// Received and sent, in the order they arrived.
    pub mails: Vec<MailData>,
    #[serde(default)]
    pub events: Vec<EventData>,
    #[serde(default)]
    pub docs: Vec<DocData>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailData {
    pub id: String,
    /// `inbox` or `sent`.
    pub folder: String,
    pub from: String,
    pub to: Vec<String>,
    /// ISO 8601 in UTC.
    pub time: String,
    pub subject: String,
    pub body: String,
    pub unread: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventData {
    pub id: String,
    pub title: String,
    /// ISO 8601 in UTC; before `end`.
    pub start: String,
    pub end: String,
    pub organizer: String,
    /// The organizer and the user among them.
    pub attendees: Vec<String>,
    pub location: String,
    pub description: String,
    /// The user's answer: `accepted`, `declined` or `pending`.
    pub response: String,
    /// The note the user sent the organizer with a decline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocData {
    pub id: String,
    pub name: String,
    pub owner: String,
    /// Who may read it, the owner first.
    pub shared_with: Vec<String>,
    pub content: String,
}

/// The folders a mail may be in.
pub const FOLDERS: [&str; 2] = ["inbox", "sent"];

/// The answers an invitation may have.
pub const RESPONSES: [&str; 3] = ["accepted", "declined", "pending"];

/// Parses and validates a data file.
pub fn parse(text: &str) -> Result<Data, String> {
    let data: Data = serde_json::from_str(text).map_err(|e| format!("the mail data is not valid: {e}"))?;
    validate(&data).map_err(|e| format!("the mail data is not valid: {e}"))?;
    Ok(data)
}

/// Checks what the JSON shape cannot: every address and time well formed, ids unique, folders
/// and responses known, sent mail from the user and received mail to the user, events ending
/// after they start with the organizer and the user attending, documents shared with their
/// owner, nothing dated after the clock.
pub fn validate(data: &Data) -> Result<(), String> {
    check_address(&data.user, "the user")?;
    check_time(&data.now, "the clock")?;
    let mut ids = HashSet::new();
    for m in &data.mails {
        let what = format!("mail `{}`", m.id);
        unique(&mut ids, &m.id, "a mail")?;
        if !FOLDERS.contains(&m.folder.as_str()) {
            return Err(format!("{what} is in the folder `{}`: expected one of {}", m.folder, FOLDERS.join(", ")));
        }
        check_address(&m.from, &format!("the sender of {what}"))?;
        if m.to.is_empty() {
            return Err(format!("{what} has no recipient"));
        }
        for to in &m.to {
            check_address(to, &format!("a recipient of {what}"))?;
        }
        let (sender, recipient) = (m.from == data.user, m.to.contains(&data.user));
        if (m.folder == "sent" && !sender) || (m.folder == "inbox" && !recipient) {
            return Err(format!("{what} is in `{}` but was not {} {}", m.folder, folder_verb(&m.folder), data.user));
        }
        check_time(&m.time, &what)?;
        not_after(&m.time, &data.now, &what)?;
    }
    let mut ids = HashSet::new();
    for e in &data.events {
        let what = format!("event `{}`", e.id);
        unique(&mut ids, &e.id, "an event")?;
        check_time(&e.start, &what)?;
        check_time(&e.end, &what)?;
        if e.start >= e.end {
            return Err(format!("{what} ends ({}) before it starts ({})", e.end, e.start));
        }
        check_address(&e.organizer, &format!("the organizer of {what}"))?;
        for a in &e.attendees {
            check_address(a, &format!("an attendee of {what}"))?;
        }
        if !e.attendees.contains(&e.organizer) || !e.attendees.contains(&data.user) {
            return Err(format!("{what}: its organizer and {} must be among its attendees", data.user));
        }
        if !RESPONSES.contains(&e.response.as_str()) {
            return Err(format!("{what} has the response `{}`: expected one of {}", e.response, RESPONSES.join(", ")));
        }
    }
    let mut ids = HashSet::new();
    for d in &data.docs {
        let what = format!("document `{}`", d.id);
        unique(&mut ids, &d.id, "a document")?;
        check_address(&d.owner, &format!("the owner of {what}"))?;
        for s in &d.shared_with {
            check_address(s, &format!("a reader of {what}"))?;
        }
        if !d.shared_with.contains(&d.owner) {
            return Err(format!("{what} is not shared with its owner {}", d.owner));
        }
    }
    Ok(())
}

fn folder_verb(folder: &str) -> &'static str {
    if folder == "sent" { "sent by" } else { "sent to" }
}

fn unique<'a>(seen: &mut HashSet<&'a str>, id: &'a str, what: &str) -> Result<(), String> {
    if id.is_empty() || !seen.insert(id) {
        return Err(format!("{what} has the id `{id}`, which is empty or used twice"));
    }
    Ok(())
}

/// An address: one `@` with text on both sides, no whitespace.
pub fn check_address(address: &str, what: &str) -> Result<(), String> {
    let well_formed = address
        .split_once('@')
        .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty() && !domain.contains('@'))
        && !address.chars().any(char::is_whitespace);
    if !well_formed {
        return Err(format!("{what} is `{address}`: expected an address like `name@example.com`"));
    }
    Ok(())
}

/// A time as the workspace writes every time: `YYYY-MM-DDTHH:MM:SSZ`, so that times compare as
/// text.
pub fn check_time(time: &str, what: &str) -> Result<(), String> {
    let digits = |range: std::ops::Range<usize>| time.get(range).is_some_and(|s| s.chars().all(|c| c.is_ascii_digit()));
    let b = time.as_bytes();
    let well_formed = b.len() == 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'Z';
    if !well_formed {
        return Err(format!("{what} has the time `{time}`: expected ISO 8601 in UTC, like `2026-03-03T08:30:00Z`"));
    }
    Ok(())
}

fn not_after(time: &str, now: &str, what: &str) -> Result<(), String> {
    if time > now {
        return Err(format!("{what} is dated {time}, after the clock ({now})"));
    }
    Ok(())
}
