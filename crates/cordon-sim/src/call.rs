//! Reading a tool call's arguments, for every simulated environment's tool host: each argument
//! is decoded from its JSON with serde into the type the host wants (`String`, or a struct with
//! the fields it reads), and each error names the tool and the parameter. Nothing panics on
//! arguments a program could not have produced.

use cordon_runtime::ToolCall;
use serde::de::DeserializeOwned;

/// A tool call's arguments, decoded with errors that name the tool and the parameter.
pub(crate) struct Args<'a> {
    pub call: &'a ToolCall<'a>,
}

impl Args<'_> {
    pub fn error(&self, param: &str, problem: &str) -> String {
        format!("{}.{}: the argument `{param}` {problem}", self.call.capability(), self.call.tool())
    }

    /// The argument for `param`, of the declared type `ty`, as the `T` this host reads it into.
    pub fn get<T: DeserializeOwned>(&self, param: &str, ty: &str) -> Result<T, String> {
        let Some(json) = self.call.arg(param) else {
            return Err(self.error(param, "is missing"));
        };
        T::deserialize(json).map_err(|e| self.error(param, &format!("is not a {ty}: {e}")))
    }

    /// The `String` argument for `param`.
    pub fn str(&self, param: &str) -> Result<String, String> {
        self.get(param, "String")
    }
}
