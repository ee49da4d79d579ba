//! The `Citations` capability's tools as a [`ToolHost`]: reads a call's JSON arguments, runs the
//! operation and answers in JSON as the tool's declared type in `policies/citations.cord` maps
//! to it. An `Entry` comes back as an object with its fields (the runtime has already checked
//! that it is one the host made, unchanged); the bibliography takes it as it is, and the host
//! records one that is not the index's own. Changes to the bibliography answer `{"Ok": null}`,
//! or `{"Err": {"code", "reason"}}` where the host refuses (an entry already there, one not
//! there to remove).

use cordon_runtime::{Json, ToolCall, ToolHost};
use serde::Deserialize;
use serde_json::json;

use crate::call::Args;

use super::{Citations, CommentData, EntryData, NoteData, Refusal};

/// The capability's declared name.
pub const CAPABILITY: &str = "Citations";

impl ToolHost for Citations {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        if call.capability() != CAPABILITY {
            return Err(format!("the citations environment has no capability `{}`", call.capability()));
        }
        let args = Args { call };
        match call.tool() {
            "search" => Ok(self.search(&args.str("query")?).iter().map(entry_json).collect()),
            "fetch" => Ok(self.fetch(&args.str("doi")?).as_ref().map_or(Json::Null, entry_json)),
            "abstract_of" => {
                let e = entry_arg(&args)?;
                match self.paper(&e.doi) {
                    Some(p) => Ok(Json::String(p.abstract_text.clone())),
                    None => Err(args.error("e", &format!("names `{}`, a DOI the index does not have", e.doi))),
                }
            }
            "notes" => {
                let e = entry_arg(&args)?;
                Ok(self.notes(&e.doi).into_iter().map(note_json).collect())
            }
            "bibliography" => Ok(self.bibliography().iter().map(entry_json).collect()),
            "draft" => Ok(Json::String(self.data.draft.clone())),
            "comments" => Ok(self.data.comments.iter().map(comment_json).collect()),
            "append" => {
                let e = entry_arg(&args)?;
                Ok(answer(self.append(e)))
            }
            "remove" => {
                let e = entry_arg(&args)?;
                Ok(answer(self.remove(&e.key)))
            }
            other => Err(format!("the Citations capability has no tool `{other}`")),
        }
    }
}

/// An `Entry` argument, as the runtime passes it: an object with the type's fields.
#[derive(Deserialize)]
struct EntryArg {
    key: String,
    title: String,
    authors: Vec<String>,
    year: i64,
    doi: String,
    retracted: bool,
}

/// The `Entry` argument `e`.
fn entry_arg(args: &Args<'_>) -> Result<EntryData, String> {
    let EntryArg { key, title, authors, year, doi, retracted } = args.get("e", "Entry")?;
    Ok(EntryData { key, title, authors, year, doi, retracted })
}

/// A change's result as `Result[(), Refused]`.
fn answer(result: Result<(), Refusal>) -> Json {
    match result {
        Ok(()) => json!({ "Ok": null }),
        Err(r) => json!({ "Err": { "code": r.code, "reason": r.reason } }),
    }
}

fn entry_json(e: &EntryData) -> Json {
    json!({
        "key": e.key,
        "title": e.title,
        "authors": e.authors,
        "year": e.year,
        "doi": e.doi,
        "retracted": e.retracted,
    })
}

fn note_json(n: &NoteData) -> Json {
    json!({ "doi": n.doi, "author": n.author, "text": n.text })
}

fn comment_json(c: &CommentData) -> Json {
    json!({ "author": c.author, "text": c.text })
}
