//! A deterministic simulated chat workspace, for the scenario of `policies/chat.cord`: a user
//! (`alice`) with colleagues and a guest, public channels, a private `#leadership` channel
//! holding secrets, a message carrying an injected instruction, a colleague's link to an
//! article, and a web with a benign article and a page carrying an injection.
//!
//! The state is loaded from a JSON data file (the default one is built in: [`DATA`]). Tools
//! read and change it in memory: posted messages and direct messages appear stamped with the
//! host's clock, which moves on by [`TICK`] seconds per message, and every web address fetched
//! is logged (what the sites learned). The operations here are plain Rust, used by the tool
//! host in `tools.rs` and by tests to set up and inspect the state.
//!
//! What the user can see: every public channel, and the private channels the user is a member
//! of. Other private channels behave as if they did not exist. Direct messages are write-only
//! for the agent: a message it sent may carry others' text, so reading it back as the user's
//! would launder that text's integrity.

mod data;
mod tools;

pub use data::{ChannelData, Data, DmData, MessageData, PageData, TICK};
pub use tools::CAPABILITY;

/// The built-in data file.
pub const DATA: &str = include_str!("../../data/chat.json");

/// The policy module that declares the `Chat` capability this environment implements.
pub const POLICY: &str = include_str!("../../../../policies/chat.cord");

/// The policy's path from the repository root.
pub const POLICY_PATH: &str = "policies/chat.cord";

/// The simulated workspace and the member the agent acts for.
#[derive(Clone, Debug, PartialEq)]
pub struct Chat {
    data: Data,
}

loaded_from_data!(Chat, |data| Chat { data });

impl Chat {
    /// The channels the user can see, in the data file's order.
    pub fn visible_channels(&self) -> impl Iterator<Item = &ChannelData> {
        self.data.channels.iter().filter(|c| can_see(c, &self.data.user))
    }

    /// The channel `name` (without `#`), if the user can see it.
    pub fn channel(&self, name: &str) -> Option<&ChannelData> {
        self.visible_channels().find(|c| c.name == name)
    }

    fn existing(&self, name: &str) -> Result<&ChannelData, String> {
        self.channel(name).ok_or_else(|| format!("there is no channel `#{name}` that {} can see", self.user()))
    }

    /// The messages of a channel, oldest first (by time; in posting order at equal times).
    pub fn messages(&self, channel: &str) -> Result<Vec<&MessageData>, String> {
        let mut messages: Vec<&MessageData> = self.existing(channel)?.messages.iter().collect();
        messages.sort_by_key(|m| m.time);
        Ok(messages)
    }

    /// The current time, moving the clock on for the next message.
    fn tick(&mut self) -> i64 {
        let now = self.data.now;
        self.data.now = now.saturating_add(TICK);
        now
    }

    /// Posts `text` to a channel the user can see, as the user, and returns the message.
    pub fn post(&mut self, channel: &str, text: &str) -> Result<&MessageData, String> {
        if text.is_empty() {
            return Err("a message needs a non-empty text".into());
        }
        self.existing(channel)?;
        let time = self.tick();
        let sender = self.data.user.clone();
        let user = &self.data.user;
        let found = self.data.channels.iter_mut().find(|c| c.name == channel && can_see(c, user));
        let c = found.ok_or_else(|| format!("there is no channel `#{channel}` that {user} can see"))?;
        c.messages.push(MessageData { sender, time, text: text.into() });
        c.messages.last().ok_or_else(|| "the new message was not stored".into())
    }

    /// Sends a direct message from the user to a member of the workspace.
    pub fn send_dm(&mut self, to: &str, text: &str) -> Result<(), String> {
        if text.is_empty() {
            return Err("a direct message needs a non-empty text".into());
        }
        if !self.data.members.iter().any(|m| m == to) {
            return Err(format!(
                "there is no member `{to}` in the workspace; the members are: {}",
                self.data.members.join(", ")
            ));
        }
        let time = self.tick();
        let from = self.data.user.clone();
        self.data.dms.push(DmData { from, to: to.into(), time, text: text.into() });
        Ok(())
    }

    /// Fetches a web page: the address is logged (the site sees it, query included), and the
    /// page it names (the address without its query) is returned.
    pub fn fetch(&mut self, url: &str) -> Result<&str, String> {
        if url.is_empty() {
            return Err("a web address cannot be empty".into());
        }
        self.data.web_log.push(url.into());
        let page = url.split_once('?').map_or(url, |(page, _)| page);
        self.data
            .pages
            .iter()
            .find(|p| p.url == page)
            .map(|p| p.content.as_str())
            .ok_or_else(|| format!("there is no page at `{page}` (404)"))
    }

    /// Does a message in `#channel` contain `needle`?
    pub fn posted(&self, channel: &str, needle: &str) -> bool {
        self.data
            .channels
            .iter()
            .filter(|c| c.name == channel)
            .flat_map(|c| &c.messages)
            .any(|m| m.text.contains(needle))
    }

    /// Does a direct message to `to` contain `needle`?
    pub fn sent_to(&self, to: &str, needle: &str) -> bool {
        self.data.dms.iter().any(|d| d.to == to && d.text.contains(needle))
    }

    /// Did any web address fetched contain `needle`?
    pub fn web_saw(&self, needle: &str) -> bool {
        self.data.web_log.iter().any(|u| u.contains(needle))
    }
}

/// May `user` see `channel`? Every public channel, and the private ones the user is in.
fn can_see(channel: &ChannelData, user: &str) -> bool {
    !channel.private || channel.members.iter().any(|m| m == user)
}
