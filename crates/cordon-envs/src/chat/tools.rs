//! The `Chat` capability's tools as a [`ToolHost`]: decodes an [`Effect`]'s arguments, runs
//! the operation on the simulated workspace and encodes the result as the tool's declared type
//! in `policies/chat.cord`: `Channel` and `Message` are records with their fields in
//! declaration order.
//!
//! Arguments the program could not have produced (a missing argument, a `Channel` without
//! `members`) are errors, never panics: the boundary vets calls, but this host does not rely on
//! it. A `Channel` must also match the channel as the host knows it now (same privacy, same
//! members), since the policy's labels are computed from the record's `members`.

use cordon_runtime::effect::{Effect, ToolHost};
use cordon_runtime::value::Value;

use crate::call::Call;

use super::{ChannelData, Chat, MessageData};

/// The capability's declared name.
pub const CAPABILITY: &str = "Chat";

impl ToolHost for Chat {
    fn perform(&mut self, effect: &Effect) -> Result<Value, String> {
        if &*effect.capability != CAPABILITY {
            return Err(format!("the chat environment has no capability `{}`", effect.capability));
        }
        let call = Call { effect };
        match &*effect.tool {
            "list_channels" => Ok(Value::list(self.visible_channels().map(channel_value).collect())),
            "read_channel" => self.read_channel_tool(&call),
            "post_message" => self.post_message_tool(&call),
            "send_dm" => self.send_dm_tool(&call),
            "get_webpage" => self.get_webpage_tool(&call),
            other => Err(format!("the Chat capability has no tool `{other}`")),
        }
    }
}

impl Chat {
    fn read_channel_tool(&self, call: &Call<'_>) -> Result<Value, String> {
        let name = self.channel_arg(call, "c")?;
        let channel = name.to_string();
        Ok(Value::list(self.messages(&channel)?.into_iter().map(|m| message_value(&channel, m)).collect()))
    }

    fn post_message_tool(&mut self, call: &Call<'_>) -> Result<Value, String> {
        let channel = self.channel_arg(call, "c")?.to_string();
        let message = self.post(&channel, call.str("text")?)?;
        Ok(message_value(&channel, message))
    }

    fn send_dm_tool(&mut self, call: &Call<'_>) -> Result<Value, String> {
        self.send_dm(call.str("to")?, call.str("text")?)?;
        Ok(Value::Unit)
    }

    fn get_webpage_tool(&mut self, call: &Call<'_>) -> Result<Value, String> {
        Ok(Value::str(self.fetch(call.str("url")?)?))
    }

    /// A `Channel` argument's name, once it is known to describe a channel the user can see
    /// exactly as the host knows it.
    fn channel_arg<'a>(&self, call: &Call<'a>, param: &str) -> Result<&'a str, String> {
        let record = call.record(param, "Channel")?;
        let name = match call.field(param, record, "name")? {
            Value::Str(s) => &**s,
            other => return Err(call.error(param, &format!("should have a String `name`, found {}", other.kind()))),
        };
        let private = match call.field(param, record, "private")? {
            Value::Bool(b) => *b,
            other => return Err(call.error(param, &format!("should have a Bool `private`, found {}", other.kind()))),
        };
        let members = match call.field(param, record, "members")? {
            Value::List(items) => items
                .iter()
                .map(|m| match &m.value {
                    Value::Str(s) => Ok(&**s),
                    other => Err(call.error(param, &format!("should list members as Strings, found {}", other.kind()))),
                })
                .collect::<Result<Vec<&str>, String>>()?,
            other => return Err(call.error(param, &format!("should have a List `members`, found {}", other.kind()))),
        };
        let Some(known) = self.channel(name) else {
            return Err(format!("there is no channel `#{name}` that {} can see", self.user()));
        };
        if known.private != private || known.members.iter().map(String::as_str).ne(members.iter().copied()) {
            return Err(call.error(param, &format!("does not match `#{name}` as the host knows it")));
        }
        Ok(name)
    }
}

/// A `Channel` value: `{ name, private, members }`.
fn channel_value(c: &ChannelData) -> Value {
    Value::record(
        "Channel",
        vec![
            ("name", Value::str(&c.name)),
            ("private", Value::Bool(c.private)),
            ("members", Value::list(c.members.iter().map(|m| Value::str(m)).collect())),
        ],
    )
}

/// A `Message` value: `{ channel, sender, time, text }`.
fn message_value(channel: &str, m: &MessageData) -> Value {
    Value::record(
        "Message",
        vec![
            ("channel", Value::str(channel)),
            ("sender", Value::str(&m.sender)),
            ("time", Value::Int(m.time)),
            ("text", Value::str(&m.text)),
        ],
    )
}
