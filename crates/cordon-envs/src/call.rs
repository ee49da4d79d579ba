//! Decoding a tool call's arguments, for every simulated environment's tool host: each error
//! names the tool and the parameter, and nothing panics on arguments a program could not have
//! produced. Each environment adds its own record decoders (`impl Call` in its `tools.rs`).

use cordon_runtime::effect::Effect;
use cordon_runtime::value::{Record, Value};

/// A tool call's arguments, decoded with errors that name the tool and the parameter.
pub(crate) struct Call<'a> {
    pub effect: &'a Effect,
}

impl<'a> Call<'a> {
    pub fn error(&self, param: &str, problem: &str) -> String {
        format!("{}.{}: the argument `{param}` {problem}", self.effect.capability, self.effect.tool)
    }

    pub fn arg(&self, param: &str) -> Result<&'a Value, String> {
        self.effect.arg(param).ok_or_else(|| self.error(param, "is missing"))
    }

    pub fn str(&self, param: &str) -> Result<&'a str, String> {
        match self.arg(param)? {
            Value::Str(s) => Ok(s),
            other => Err(self.error(param, &format!("should be a String, found {}", other.kind()))),
        }
    }

    pub fn record(&self, param: &str, ty: &str) -> Result<&'a Record, String> {
        match self.arg(param)? {
            Value::Record(r) if &*r.ty == ty => Ok(r),
            other => Err(self.error(param, &format!("should be a {ty}, found {}", other.kind()))),
        }
    }

    pub fn field(&self, param: &str, record: &'a Record, field: &str) -> Result<&'a Value, String> {
        record.field(field).map(|v| &v.value).ok_or_else(|| self.error(param, &format!("has no field `{field}`")))
    }
}
