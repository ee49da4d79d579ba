//! The simulated chat workspace's state as plain data: what the JSON data file holds, and the
//! checks that make a loaded file a consistent state (unique names, members who exist, messages
//! no later than the clock, well-formed web addresses).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// The whole state: the people of the workspace, its channels (including private ones the user
/// is not in), the direct messages sent, the web, and the web's access log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    /// The member the agent acts for: the principal of its labels.
    pub user: String,
    /// Everyone in the workspace.
    pub members: Vec<String>,
    /// The host's clock (seconds since 1970): the time the next message gets. Each message the
    /// user sends moves it on by [`TICK`] seconds.
    pub now: i64,
    pub channels: Vec<ChannelData>,
    /// Direct messages, oldest first.
    #[serde(default)]
    pub dms: Vec<DmData>,
    #[serde(default)]
    pub pages: Vec<PageData>,
    /// Every address fetched, in order, query included: what the sites learned.
    #[serde(default)]
    pub web_log: Vec<String>,
}

/// How far the clock moves per message sent.
pub const TICK: i64 = 60;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelData {
    /// Without the `#`.
    pub name: String,
    pub private: bool,
    pub members: Vec<String>,
    /// In the order they were posted.
    #[serde(default)]
    pub messages: Vec<MessageData>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageData {
    pub sender: String,
    /// Seconds since 1970.
    pub time: i64,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DmData {
    pub from: String,
    pub to: String,
    pub time: i64,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageData {
    /// Without a query (`?..`): the page an address names, whatever its query.
    pub url: String,
    pub content: String,
}

/// Parses and validates a data file.
pub fn parse(text: &str) -> Result<Data, String> {
    let data: Data = serde_json::from_str(text).map_err(|e| format!("the chat data is not valid: {e}"))?;
    validate(&data).map_err(|e| format!("the chat data is not valid: {e}"))?;
    Ok(data)
}

/// Checks what the JSON shape cannot: names well formed and unique, every member named
/// anywhere a member of the workspace, the user among them, no message after the clock, page
/// addresses well formed and unique.
pub fn validate(data: &Data) -> Result<(), String> {
    let mut people = HashSet::new();
    for m in &data.members {
        check_name(m, "a member")?;
        if !people.insert(m.as_str()) {
            return Err(format!("the member `{m}` is listed twice"));
        }
    }
    let member = |name: &str, what: &str| {
        check_name(name, what)?;
        if people.contains(name) {
            Ok(())
        } else {
            Err(format!("{what} is `{name}`, who is not a member of the workspace"))
        }
    };
    member(&data.user, "the user")?;
    let mut names = HashSet::new();
    for c in &data.channels {
        check_name(&c.name, "a channel name")?;
        if !names.insert(c.name.as_str()) {
            return Err(format!("the channel `#{}` is listed twice", c.name));
        }
        if c.members.is_empty() {
            return Err(format!("`#{}` has no members", c.name));
        }
        let mut seen = HashSet::new();
        for m in &c.members {
            member(m, &format!("a member of `#{}`", c.name))?;
            if !seen.insert(m.as_str()) {
                return Err(format!("`#{}` lists the member `{m}` twice", c.name));
            }
        }
        for (i, msg) in c.messages.iter().enumerate() {
            member(&msg.sender, &format!("the sender of message {} in `#{}`", i + 1, c.name))?;
            check_time(msg.time, data.now, &format!("message {} in `#{}`", i + 1, c.name))?;
        }
    }
    for (i, dm) in data.dms.iter().enumerate() {
        member(&dm.from, &format!("the sender of direct message {}", i + 1))?;
        member(&dm.to, &format!("the recipient of direct message {}", i + 1))?;
        check_time(dm.time, data.now, &format!("direct message {}", i + 1))?;
    }
    let mut urls = HashSet::new();
    for p in &data.pages {
        if !(p.url.starts_with("https://") || p.url.starts_with("http://"))
            || p.url.contains('?')
            || p.url.chars().any(char::is_whitespace)
        {
            return Err(format!(
                "the page address `{}` is malformed: expected http:// or https://, no query, no spaces",
                p.url
            ));
        }
        if !urls.insert(p.url.as_str()) {
            return Err(format!("the page `{}` is listed twice", p.url));
        }
    }
    Ok(())
}

fn check_time(time: i64, now: i64, what: &str) -> Result<(), String> {
    if time > now {
        return Err(format!("{what} was sent at {time}, after the clock ({now})"));
    }
    Ok(())
}

/// A member or channel name: not empty, no `#`, `@` or whitespace.
fn check_name(name: &str, what: &str) -> Result<(), String> {
    if name.is_empty() || name.contains(['#', '@']) || name.chars().any(char::is_whitespace) {
        return Err(format!("{what} is `{name}`: expected a non-empty name without `#`, `@` or spaces"));
    }
    Ok(())
}
