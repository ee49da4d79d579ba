//! The `Fs` capability's tools as a [`ToolHost`]: reads a call's JSON arguments, runs the
//! operation and answers in JSON as the tool's declared type in `policies/fs.cord` maps to it.
//! A refusal is an answer, `{"Err": {"code": .., "reason": ..}}`, which the plan gets as
//! `Err(FsError { .. })` and may handle; an argument a checked plan could not have sent is a
//! tool failure naming the tool and the parameter, never a panic.

use cordon_runtime::{Json, ToolCall, ToolHost};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::dir::DirRef;
use crate::{Fs, Refusal};

/// The capability's declared name.
pub const CAPABILITY: &str = "Fs";

impl ToolHost for Fs {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        if call.capability() != CAPABILITY {
            return Err(format!("the filesystem has no capability `{}`", call.capability()));
        }
        match call.tool() {
            "roots" => Ok(json!(self.roots())),
            "root" => Ok(self.root(&arg::<String>(call, "name", "String")?).map_or(Json::Null, |d| json!(d))),
            "subdir" => answer(self.subdir(&dir_arg(call)?, &arg::<String>(call, "path", "String")?)),
            "read_only" => self.read_only(&dir_arg(call)?).map(|d| json!(d)).map_err(|r| r.reason),
            "read" => answer(self.read(&dir_arg(call)?, &arg::<String>(call, "path", "String")?)),
            "list" => answer(self.list(&dir_arg(call)?)),
            "write" => {
                let (d, path, content) =
                    (dir_arg(call)?, arg::<String>(call, "path", "String")?, arg::<String>(call, "content", "String")?);
                answer(self.write(&d, &path, &content))
            }
            "remove" => answer(self.remove(&dir_arg(call)?, &arg::<String>(call, "path", "String")?)),
            other => Err(format!("the Fs capability has no tool `{other}`")),
        }
    }
}

/// A `Result[T, FsError]` answer.
fn answer<T: Serialize>(result: Result<T, Refusal>) -> Result<Json, String> {
    Ok(match result {
        Ok(value) => json!({ "Ok": value }),
        Err(Refusal { code, reason }) => json!({ "Err": { "code": code, "reason": reason } }),
    })
}

/// The `Dir` argument `d`.
fn dir_arg(call: &ToolCall<'_>) -> Result<DirRef, String> {
    arg(call, "d", "Dir")
}

/// The argument for `param`, of the declared type `ty`.
fn arg<T: DeserializeOwned>(call: &ToolCall<'_>, param: &str, ty: &str) -> Result<T, String> {
    let error = |problem: String| format!("Fs.{}: the argument `{param}` {problem}", call.tool());
    let json = call.arg(param).ok_or_else(|| error("is missing".into()))?;
    T::deserialize(json).map_err(|e| error(format!("is not a {ty}: {e}")))
}
