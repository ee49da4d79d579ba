//! The `Chat` capability's tools as a [`ToolHost`]: reads a call's JSON arguments, runs the
//! operation on the simulated workspace and answers in JSON as the tool's declared type in
//! `policies/chat.cord` maps to it (see [`ToolHost`]): `Channel` and `Message` are objects.
//!
//! Arguments the program could not have produced (a missing argument, a `Channel` without
//! `members`) are errors, never panics: the boundary vets calls, but this host does not rely on
//! it. A `Channel` must also match the channel as the host knows it now (same privacy, same
//! members), since the policy's labels are computed from the record's `members`.

use cordon_runtime::{Json, ToolCall, ToolHost};
use serde::Deserialize;
use serde_json::json;

use crate::call::Args;

use super::{ChannelData, Chat, MessageData};

/// The capability's declared name.
pub const CAPABILITY: &str = "Chat";

impl ToolHost for Chat {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        if call.capability() != CAPABILITY {
            return Err(format!("the chat environment has no capability `{}`", call.capability()));
        }
        let args = Args { call };
        match call.tool() {
            "list_channels" => Ok(self.visible_channels().map(channel_json).collect()),
            "read_channel" => self.read_channel_tool(&args),
            "post_message" => self.post_message_tool(&args),
            "send_dm" => self.send_dm_tool(&args),
            "get_webpage" => self.get_webpage_tool(&args),
            other => Err(format!("the Chat capability has no tool `{other}`")),
        }
    }
}

/// A `Channel` argument.
#[derive(Deserialize)]
struct ChannelArg {
    name: String,
    private: bool,
    members: Vec<String>,
}

impl Chat {
    fn read_channel_tool(&self, args: &Args<'_>) -> Result<Json, String> {
        let channel = self.channel_arg(args, "c")?;
        Ok(self.messages(&channel)?.into_iter().map(|m| message_json(&channel, m)).collect())
    }

    fn post_message_tool(&mut self, args: &Args<'_>) -> Result<Json, String> {
        let channel = self.channel_arg(args, "c")?;
        let message = self.post(&channel, &args.str("text")?)?;
        Ok(message_json(&channel, message))
    }

    fn send_dm_tool(&mut self, args: &Args<'_>) -> Result<Json, String> {
        self.send_dm(&args.str("to")?, &args.str("text")?)?;
        Ok(Json::Null)
    }

    fn get_webpage_tool(&mut self, args: &Args<'_>) -> Result<Json, String> {
        Ok(self.fetch(&args.str("url")?)?.into())
    }

    /// A `Channel` argument's name, once it is known to describe a channel the user can see
    /// exactly as the host knows it.
    fn channel_arg(&self, args: &Args<'_>, param: &str) -> Result<String, String> {
        let arg: ChannelArg = args.get(param, "Channel")?;
        let Some(known) = self.channel(&arg.name) else {
            return Err(format!("there is no channel `#{}` that {} can see", arg.name, self.user()));
        };
        if known.private != arg.private || known.members != arg.members {
            return Err(args.error(param, &format!("does not match `#{}` as the host knows it", arg.name)));
        }
        Ok(arg.name)
    }
}

/// A `Channel`: `{ name, private, members }`.
fn channel_json(c: &ChannelData) -> Json {
    json!({ "name": c.name, "private": c.private, "members": c.members })
}

/// A `Message`: `{ channel, sender, time, text }`.
fn message_json(channel: &str, m: &MessageData) -> Json {
    json!({ "channel": channel, "sender": m.sender, "time": m.time, "text": m.text })
}
