//! The `Mail` capability's tools as a [`ToolHost`]: reads a call's JSON arguments, runs the
//! operation on the simulated workspace and answers in JSON as the tool's declared type in
//! `policies/mail.cord` maps to it (see [`ToolHost`]): `Email`, `Event` and `Doc` are objects.
//!
//! Arguments the program could not have produced (a missing argument, an `Email` without `to`)
//! are errors, never panics: the boundary vets calls, but this host does not rely on it. A
//! host-made record must also match the host's current state (an `Email` its sender and
//! recipients, an `Event` its organizer and attendees, a `Doc` its owner and readers), since the
//! policy's labels are computed from those fields.

use cordon_runtime::{Json, ToolCall, ToolHost};
use serde::Deserialize;
use serde_json::json;

use crate::call::Args;

use super::{DocData, EventData, Mail, MailData, NewEvent};

/// The capability's declared name.
pub const CAPABILITY: &str = "Mail";

impl ToolHost for Mail {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        if call.capability() != CAPABILITY {
            return Err(format!("the mail environment has no capability `{}`", call.capability()));
        }
        let args = Args { call };
        match call.tool() {
            "inbox" => Ok(self.folder("inbox").into_iter().map(mail_json).collect()),
            "sent" => Ok(self.folder("sent").into_iter().map(mail_json).collect()),
            "read" => {
                let id = self.mail_arg(&args, "m")?;
                Ok(self.read(&id)?.into())
            }
            "search" => Ok(self.search(&args.str("query")?).into_iter().map(mail_json).collect()),
            "send" => {
                let to: Vec<String> = args.get("to", "List[String]")?;
                Ok(mail_json(self.send(&to, &args.str("subject")?, &args.str("body")?)?))
            }
            "reply" => {
                let id = self.mail_arg(&args, "m")?;
                Ok(mail_json(self.reply(&id, &args.str("body")?)?))
            }
            "forward" => {
                let id = self.mail_arg(&args, "m")?;
                Ok(mail_json(self.forward(&id, &args.str("to")?, &args.str("note")?)?))
            }
            "today" => Ok(self.today().into()),
            "events" => Ok(self.events().into_iter().map(event_json).collect()),
            "create_event" => self.create_event_tool(&args),
            "accept" => {
                let id = self.event_arg(&args, "e")?;
                Ok(event_json(self.respond(&id, "accepted", None)?))
            }
            "decline" => {
                let id = self.event_arg(&args, "e")?;
                let note = args.str("note")?;
                Ok(event_json(self.respond(&id, "declined", Some(&note))?))
            }
            "docs" => Ok(self.docs().into_iter().map(doc_json).collect()),
            "read_doc" => {
                let id = self.doc_arg(&args, "d")?;
                let doc = self.doc(&id).ok_or_else(|| format!("there is no document `{id}`"))?;
                Ok(doc.content.as_str().into())
            }
            "share" => {
                let id = self.doc_arg(&args, "d")?;
                Ok(doc_json(self.share(&id, &args.str("with")?)?))
            }
            other => Err(format!("the Mail capability has no tool `{other}`")),
        }
    }
}

/// The fields of an `Email` argument the host checks.
#[derive(Deserialize)]
struct EmailArg {
    id: String,
    from: String,
    to: Vec<String>,
}

/// The fields of an `Event` argument the host checks.
#[derive(Deserialize)]
struct EventArg {
    id: String,
    organizer: String,
    attendees: Vec<String>,
}

/// The fields of a `Doc` argument the host checks.
#[derive(Deserialize)]
struct DocArg {
    id: String,
    owner: String,
    shared_with: Vec<String>,
}

impl Mail {
    fn create_event_tool(&mut self, args: &Args<'_>) -> Result<Json, String> {
        let attendees: Vec<String> = args.get("attendees", "List[String]")?;
        let (title, start, end) = (args.str("title")?, args.str("start")?, args.str("end")?);
        let (location, description) = (args.str("location")?, args.str("description")?);
        let new = NewEvent {
            title: &title,
            start: &start,
            end: &end,
            attendees: &attendees,
            location: &location,
            description: &description,
        };
        Ok(event_json(self.create_event(new)?))
    }

    /// An `Email` argument's id, once it is known to name a mail with the sender and recipients
    /// the host has.
    fn mail_arg(&self, args: &Args<'_>, param: &str) -> Result<String, String> {
        let arg: EmailArg = args.get(param, "Email")?;
        let known = self.mail(&arg.id).ok_or_else(|| format!("there is no mail `{}`", arg.id))?;
        if known.from != arg.from || known.to != arg.to {
            return Err(args.error(param, &format!("does not match the mail `{}` as the host knows it", arg.id)));
        }
        Ok(arg.id)
    }

    /// An `Event` argument's id, once it is known to name an event with the organizer and
    /// attendees the host has.
    fn event_arg(&self, args: &Args<'_>, param: &str) -> Result<String, String> {
        let arg: EventArg = args.get(param, "Event")?;
        let known = self.event(&arg.id).ok_or_else(|| format!("there is no event `{}`", arg.id))?;
        if known.organizer != arg.organizer || known.attendees != arg.attendees {
            return Err(args.error(param, &format!("does not match the event `{}` as the host knows it", arg.id)));
        }
        Ok(arg.id)
    }

    /// A `Doc` argument's id, once it is known to name a document the user can see, with the
    /// owner and readers the host has now (a `Doc` from before a `share` is out of date).
    fn doc_arg(&self, args: &Args<'_>, param: &str) -> Result<String, String> {
        let arg: DocArg = args.get(param, "Doc")?;
        let Some(known) = self.doc(&arg.id) else {
            return Err(format!("there is no document `{}` that {} can see", arg.id, self.user()));
        };
        if known.owner != arg.owner || known.shared_with != arg.shared_with {
            return Err(
                args.error(param, &format!("does not match the document `{}` as the host knows it now", arg.id))
            );
        }
        Ok(arg.id)
    }
}

/// An `Email`: `{ id, folder, from, to, time, subject, unread }`.
fn mail_json(m: &MailData) -> Json {
    json!({
        "id": m.id, "folder": m.folder, "from": m.from, "to": m.to, "time": m.time,
        "subject": m.subject, "unread": m.unread,
    })
}

/// An `Event`: `{ id, title, start, end, organizer, attendees, location, description, response }`.
fn event_json(e: &EventData) -> Json {
    json!({
        "id": e.id, "title": e.title, "start": e.start, "end": e.end, "organizer": e.organizer,
        "attendees": e.attendees, "location": e.location, "description": e.description,
        "response": e.response,
    })
}

/// A `Doc`: `{ id, name, owner, shared_with }`.
fn doc_json(d: &DocData) -> Json {
    json!({ "id": d.id, "name": d.name, "owner": d.owner, "shared_with": d.shared_with })
}
