//! A server's tools as the tools of a capability of a policy: one host per capability, several
//! of which may share one server (a policy that splits a server's tools between a reader and a
//! writer needs one process, not two).
//!
//! Only what the policy declares can be called: the policy gives each tool its Cordon
//! signature, labels and approval tier, and the checker refuses a call to anything else. At
//! start every declared tool must be one the server lists, and every declared parameter one of
//! its properties (names meet as [`crate::names`] says); a declared tool the server lacks, or a
//! property the server requires that the policy leaves out, is an error before anything runs.
//!
//! Arguments are the plan's values as JSON, an absent optional (`None`) left out. A result is
//! taken as the declared type says: `()` ignores it; `String` takes the text the server wrote
//! (or its structured content, if that is a string); any other type takes the structured
//! content, or the text parsed as JSON, and the runtime's boundary decodes it against the
//! declared type, so a result that does not fit is a run-time error, never a wrong value.
//! Structured content the server wraps (`{"result": ..}`, as the Python SDK does for a result
//! that is not an object, saying so in its output schema) is unwrapped unless the declared
//! type is the wrapper itself (a record with a field `result`, or a map). A result the server marks as an error, or larger than the limit, is
//! a failure of the tool; an answer that cannot be taken is reported as one the tool gave after
//! it was called, never as if the call had not happened.
//! What the result may be trusted for is the policy's `@label(returns = ..)`; by default it is
//! vouched for by no one, whatever the server claims.
//!
//! Values of a linear type the policy declares (a `Session` and its measures) are Cordon's own
//! and never cross: a parameter of such a type is not sent, and where the declared result is one
//! (or a tuple holding some) the server answers only the rest, and the runtime's boundary makes
//! the new value, with the measures the result's refinement defines, as it does for a simulated
//! host. So `tool read(s: Session, ..) -> (String, {s2: Session | tainted(s2) == ..})` binds to a
//! server's `read(..)` that answers a string, and a tainted session stops a later post at check
//! time, or at the boundary.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use cordon_runtime::{Json, ToolCall, ToolHost};
use cordon_types::{Declarations, Tool, Type};
use rmcp::model::{CallToolResult, JsonObject};

use crate::client::Connection;
use crate::names;
use crate::schema;

/// The largest result taken from a server, in bytes of JSON.
pub const MAX_RESULT_BYTES: usize = 1 << 20;

/// The longest error text kept from a server.
const MAX_ERROR_CHARS: usize = 500;

/// A server serving one capability.
#[derive(Debug)]
pub struct McpHost {
    /// The server, shared with the hosts of its other capabilities.
    connection: Arc<Mutex<Connection>>,
    /// The server's name and what a grant for it is bound to, as the connection says.
    server: String,
    instance: String,
    binding: Binding,
}

/// How the tools a policy declares for a capability meet a server's tools.
#[derive(Debug)]
pub struct Binding {
    capability: String,
    tools: BTreeMap<String, Bound>,
}

/// A declared tool bound to the server's.
#[derive(Debug)]
struct Bound {
    server_tool: String,
    args: Vec<Arg>,
    returns: Returns,
    /// Whether the server wraps its structured content in `{"result": ..}` and the declared
    /// type wants what is inside.
    unwrap: bool,
    made: Made,
}

/// How the declared result is made of what the server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Made {
    /// The server's answer is the result.
    Answer,
    /// The result is a value Cordon keeps (a linear one): nothing the server says is in it.
    Kept,
    /// A tuple of `len` items whose items at `answered` the server answers (as one value, or a
    /// list of them if several) and whose others Cordon keeps.
    Tuple { len: usize, answered: Vec<usize> },
}

#[derive(Debug)]
struct Arg {
    param: String,
    property: String,
    required: bool,
    /// The parameter is a `Decimal` (which Cordon writes as a string, `"12.50"`) and the
    /// server's schema says the property is a number: it is sent as one, exactly or not at all.
    decimal_as_number: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Returns {
    Nothing,
    Text,
    Json,
}

impl McpHost {
    /// Binds the tools of `connection` to each of `capabilities` as the policies declare them
    /// (`declared`, as the checker resolved them): a host for each, in order, all calling the
    /// one server. Every mismatch is an error naming the tool and what differs.
    pub fn bind(
        connection: Connection,
        capabilities: &[&str],
        declared: &Declarations,
    ) -> Result<Vec<McpHost>, String> {
        let bindings = capabilities
            .iter()
            .map(|c| Binding::new(connection.name(), connection.tools(), c, declared))
            .collect::<Result<Vec<_>, _>>()?;
        let (server, instance) = (connection.name().to_string(), connection.instance().to_string());
        let connection = Arc::new(Mutex::new(connection));
        let host = |binding| McpHost {
            connection: connection.clone(),
            server: server.clone(),
            instance: instance.clone(),
            binding,
        };
        Ok(bindings.into_iter().map(host).collect())
    }

    /// The connection, no longer bound, if no other host shares it.
    pub fn into_connection(self) -> Option<Connection> {
        let connection = Arc::try_unwrap(self.connection).ok()?;
        Some(connection.into_inner().unwrap_or_else(PoisonError::into_inner))
    }
}

/// An MCP server serves the capability the policy binds it to, for no principal of its own (the
/// run's is the environments' or the config's `user`), with no policy of its own (the user's
/// declares its tools).
impl cordon_engine::Host for McpHost {
    fn kind(&self) -> &str {
        "MCP server"
    }

    fn name(&self) -> &str {
        &self.server
    }

    fn capability(&self) -> &str {
        &self.binding.capability
    }

    /// The server as started and as it listed its tools: a grant made for it lapses when the
    /// config points the name elsewhere or the server's tools change.
    fn instance(&self) -> String {
        self.instance.clone()
    }
}

impl Binding {
    /// Binds the server `server`'s `tools` to the capability `capability` as the policies
    /// declare it (`declared`, as the checker resolved them).
    pub fn new(
        server: &str,
        tools: &[rmcp::model::Tool],
        capability: &str,
        declared: &Declarations,
    ) -> Result<Binding, String> {
        let declared_tools = declared.capability(capability).map(|c| &c.tools).ok_or_else(|| {
            format!(
                "the MCP server `{server}` serves the capability `{capability}`, but no policy declares it \
                 (`cordon mcp import {server}` writes a starter policy)"
            )
        })?;
        let mut bound = BTreeMap::new();
        for tool in declared_tools {
            let one = bind_tool(server, tools, capability, tool, declared)?;
            bound.insert(tool.name.clone(), one);
        }
        Ok(Binding { capability: capability.to_string(), tools: bound })
    }
}

/// Binds the declared `tool` to the server's tool of that name.
fn bind_tool(
    server: &str,
    tools: &[rmcp::model::Tool],
    capability: &str,
    tool: &Tool,
    declared: &Declarations,
) -> Result<Bound, String> {
    let wanted = &tool.name;
    let offered: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let found = match names::find(wanted, offered.iter().copied()) {
        Ok(Some(found)) => found,
        Ok(None) => {
            return Err(format!(
                "the policy declares `{capability}.{wanted}`, but the MCP server `{server}` has no such tool \
                 (it has: {})",
                offered.join(", ")
            ));
        }
        Err(several) => {
            return Err(format!(
                "`{capability}.{wanted}` could be any of the MCP server `{server}`'s tools {}: name one exactly",
                several.join(", ")
            ));
        }
    };
    let Some(server_tool) = tools.iter().find(|t| t.name == found) else {
        return Err(format!("the MCP server `{server}` lost its tool `{found}`"));
    };
    let schema = &server_tool.input_schema;
    let properties: Vec<&str> = schema
        .get("properties")
        .and_then(Json::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let mut args = Vec::new();
    // A linear parameter is Cordon's: the server never sees it.
    for param in tool.params.iter().filter(|p| !is_linear(&p.ty)) {
        let name = &param.name;
        if declared.holds_linear(&param.ty) {
            return Err(kept_whole(capability, wanted, &format!("the parameter `{name}`")));
        }
        let property = match names::find(name, properties.iter().copied()) {
            Ok(Some(p)) => p,
            Ok(None) => {
                return Err(format!(
                    "`{capability}.{wanted}` declares the parameter `{name}`, which the MCP server `{server}`'s \
                     `{found}` does not take (it takes: {})",
                    if properties.is_empty() { "nothing".to_string() } else { properties.join(", ") }
                ));
            }
            Err(several) => {
                return Err(format!(
                    "the parameter `{name}` of `{capability}.{wanted}` could be any of {}: name one exactly",
                    several.join(", ")
                ));
            }
        };
        let numeric =
            schema.get("properties").and_then(|p| p.get(property)).is_some_and(|p| says_number(p.get("type")));
        args.push(Arg {
            param: name.clone(),
            property: property.to_string(),
            required: required.contains(&property),
            decimal_as_number: numeric && is_decimal(&param.ty),
        });
    }
    if let Some(missing) = required.iter().find(|r| !args.iter().any(|a| a.property == **r)) {
        return Err(format!(
            "the MCP server `{server}`'s `{found}` requires `{missing}`, which `{capability}.{wanted}` does not declare"
        ));
    }
    let (made, answered) = made_of(&tool.ret);
    let answered_types: Vec<&Type> = match (&made, &tool.ret) {
        (Made::Tuple { answered, .. }, Type::Tuple(items)) => answered.iter().filter_map(|i| items.get(*i)).collect(),
        (Made::Answer, ret) => vec![ret],
        _ => Vec::new(),
    };
    if answered_types.iter().any(|ty| declared.holds_linear(ty)) {
        return Err(kept_whole(capability, wanted, "its result"));
    }
    let returns = match answered {
        Answered::Nothing => Returns::Nothing,
        Answered::One(ty) => returns(ty),
        Answered::Several => Returns::Json,
    };
    let wraps = server_tool.output_schema.as_deref().is_some_and(|schema| schema::wrapped_result(schema).is_some());
    let unwrap = wraps && !matches!(answered, Answered::One(ty) if declares_wrapper(ty, declared));
    Ok(Bound { server_tool: found.to_string(), args, returns, unwrap, made })
}

/// What the server answers of a declared result.
enum Answered<'a> {
    Nothing,
    /// One value, of this type.
    One(&'a Type),
    /// A list of several values.
    Several,
}

/// How the declared result `ret` is made, and what of it the server answers: all of it, but
/// for the linear values Cordon keeps.
fn made_of(ret: &Type) -> (Made, Answered<'_>) {
    if is_linear(ret) {
        return (Made::Kept, Answered::Nothing);
    }
    let items = match ret {
        Type::Unit => return (Made::Answer, Answered::Nothing),
        Type::Tuple(items) => items,
        _ => return (Made::Answer, Answered::One(ret)),
    };
    let answered: Vec<usize> = (0..items.len()).filter(|i| !is_linear(&items[*i])).collect();
    if answered.len() == items.len() {
        return (Made::Answer, Answered::One(ret));
    }
    let what = match answered.as_slice() {
        [] => Answered::Nothing,
        [one] => Answered::One(&items[*one]),
        _ => Answered::Several,
    };
    (Made::Tuple { len: items.len(), answered }, what)
}

/// How a result of the declared type `ty` is taken from what the server answers.
fn returns(ty: &Type) -> Returns {
    match ty {
        Type::Unit => Returns::Nothing,
        Type::Str => Returns::Text,
        Type::Refined { base, .. } if **base == Type::Str => Returns::Text,
        _ => Returns::Json,
    }
}

/// The refusal of a tool whose `what` holds a linear value inside something else.
fn kept_whole(capability: &str, tool: &str, what: &str) -> String {
    format!(
        "{what} of `{capability}.{tool}` holds a linear value inside an option, a list, a record or an enum: \
         Cordon keeps linear values only as a parameter, a result or an item of a result tuple, and never \
         lets a server decide whether one exists"
    )
}

/// Whether `ty` is a linear type the policies declare (refined, or by an alias): a value
/// Cordon makes and keeps, which a server never sees. An `Option` or a list of one is not.
fn is_linear(ty: &Type) -> bool {
    matches!(ty.base(), Type::Linear(_))
}

/// Whether a property's JSON Schema `type` says a number (`"number"`, `"integer"`, or a list of
/// types holding one, as `["number", "null"]`).
fn says_number(ty: Option<&Json>) -> bool {
    let number = |t: &Json| matches!(t.as_str(), Some("number" | "integer"));
    match ty {
        Some(Json::Array(types)) => types.iter().any(number),
        Some(t) => number(t),
        None => false,
    }
}

/// The type `ty` stands for, with refinements and `Option` taken off (aliases are expanded
/// already): the type whose JSON a value of `ty` is (or is `null` beside).
fn underlying(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Refined { base, .. } => ty = base,
            Type::Option(inner) => ty = inner,
            _ => return ty,
        }
    }
}

/// Whether the declared type `ty` is `Decimal` (refined, optional or by an alias).
fn is_decimal(ty: &Type) -> bool {
    matches!(underlying(ty), Type::Decimal)
}

/// `text`, a `Decimal` as Cordon writes it (`"12.50"`), as the JSON number it is: an integer
/// exactly, a fraction as the binary float whose shortest text is that decimal, which a
/// float holds exactly only for at most 15 significant digits; `None` for one with more.
fn decimal_number(text: &str) -> Option<Json> {
    let exact = cordon_runtime::decimal::parse(text)?;
    if exact.fract().is_zero() {
        let whole: i64 = exact.trunc().to_string().parse().ok()?;
        return Some(Json::from(whole));
    }
    let float: f64 = text.parse().ok()?;
    let back = cordon_runtime::decimal::from_float_text(float)?;
    (back == exact).then(|| serde_json::Number::from_f64(float).map(Json::Number)).flatten()
}

/// Whether the declared type `ty` is the wrapper itself (a record with a field `result`, or a
/// map, or an option of one; aliases followed), which takes a server's `{"result": ..}` as it
/// is. Any other type is what the wrapper holds.
fn declares_wrapper(ty: &Type, declared: &Declarations) -> bool {
    match underlying(ty) {
        Type::Map(..) => true,
        Type::Record(name) => declared.record(name).is_some_and(|r| r.field("result").is_some()),
        _ => false,
    }
}

impl ToolHost for McpHost {
    fn perform(&mut self, call: &ToolCall<'_>) -> Result<Json, String> {
        let Some(bound) = self.binding.tools.get(call.tool()) else {
            return Err(format!(
                "`{}.{}` is not bound to the MCP server `{}`",
                call.capability(),
                call.tool(),
                self.server
            ));
        };
        let mut arguments = JsonObject::new();
        for arg in &bound.args {
            match call.args.get(&arg.param) {
                None | Some(Json::Null) if !arg.required => {}
                Some(Json::String(text)) if arg.decimal_as_number => match decimal_number(text) {
                    Some(number) => {
                        arguments.insert(arg.property.clone(), number);
                    }
                    None => {
                        return Err(format!(
                            "`{}` was not called: its argument `{}` ({text}) cannot be held exactly by the JSON \
                             number its schema asks for (at most 15 significant digits, or an integer of 64 bits)",
                            call.tool(),
                            arg.param
                        ));
                    }
                },
                Some(value) => {
                    arguments.insert(arg.property.clone(), value.clone());
                }
                None => return Err(format!("`{}` was called without `{}`", call.tool(), arg.param)),
            }
        }
        // A call that panicked while it held the server would be the client's bug; the next
        // call still gets an answer or an error from the server itself.
        let result =
            self.connection.lock().unwrap_or_else(PoisonError::into_inner).call(&bound.server_tool, arguments)?;
        let answer = take(&bound.server_tool, bound, result)?;
        place(&bound.server_tool, &bound.made, answer)
    }
}

/// The declared result made of the server's `answer`: a value Cordon keeps is `null` here, for
/// the boundary to make (a linear value is the host's whatever its JSON).
fn place(tool: &str, made: &Made, answer: Json) -> Result<Json, String> {
    match made {
        Made::Answer => Ok(answer),
        Made::Kept => Ok(Json::Null),
        Made::Tuple { len, answered } => {
            let mut items = vec![Json::Null; *len];
            match (answered.as_slice(), answer) {
                ([], _) => {}
                ([one], answer) => items[*one] = answer,
                (several, Json::Array(answers)) if answers.len() == several.len() => {
                    for (i, answer) in several.iter().zip(answers) {
                        items[*i] = answer;
                    }
                }
                (several, _) => {
                    return Err(format!(
                        "`{tool}` was called, but did not answer a list of the {} values its result holds",
                        several.len()
                    ));
                }
            }
            Ok(Json::Array(items))
        }
    }
}

/// The result of `tool` as the declared type takes it. The call has been made: every error
/// here says so.
fn take(tool: &str, bound: &Bound, result: CallToolResult) -> Result<Json, String> {
    let size = serde_json::to_vec(&result).map(|v| v.len()).unwrap_or(usize::MAX);
    if size > MAX_RESULT_BYTES {
        return Err(format!(
            "`{tool}` was called and answered {size} bytes, more than the limit of {MAX_RESULT_BYTES}"
        ));
    }
    let texts: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    let text = texts.join("\n");
    if result.is_error == Some(true) {
        let shown: String = text.chars().take(MAX_ERROR_CHARS).collect();
        // The server's words, on one line with nothing hidden, wherever the reason is shown.
        return Err(format!("`{tool}` failed: {}", cordon_text::guard_line(&shown)));
    }
    let structured = match result.structured_content {
        Some(Json::Object(mut map)) if bound.unwrap && map.len() == 1 && map.contains_key("result") => {
            map.remove("result")
        }
        other => other,
    };
    match bound.returns {
        Returns::Nothing => Ok(Json::Null),
        Returns::Text => match structured {
            Some(Json::String(s)) => Ok(Json::String(s)),
            // An empty text block is the empty string; no content at all is too.
            _ if !texts.is_empty() || result.content.is_empty() => Ok(Json::String(text)),
            _ => Err(format!(
                "`{tool}` was called, but answered no text (only images, audio or resources), which a `String` \
                 cannot hold"
            )),
        },
        Returns::Json => match structured {
            Some(json) => Ok(cordon_names(json)),
            None => serde_json::from_str(&text).map(cordon_names).map_err(|e| {
                format!(
                    "`{tool}` was called, but answered text that is not JSON ({e}); declare its result `String` to \
                     take the text"
                )
            }),
        },
    }
}

/// `json` with every object key as a plan names it ([`names::cordon_name`]: `type` → `type_`,
/// `a-b` → `a_b`), so a record declared as `cordon mcp import` writes it reads the result; of
/// two keys with one name, the first is kept.
fn cordon_names(json: Json) -> Json {
    match json {
        Json::Object(map) => {
            let mut out = serde_json::Map::with_capacity(map.len());
            for (key, value) in map {
                out.entry(names::cordon_name(&key)).or_insert_with(|| cordon_names(value));
            }
            Json::Object(out)
        }
        Json::Array(items) => Json::Array(items.into_iter().map(cordon_names).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

    use super::*;

    const POLICY: &str = r#"
linear type Session
type Kept = {s: Session | true}
type Note = { text: String }
capability Notes {
  tool plain() -> Note
  tool close(s: Session) -> Kept
  tool read(s: Session) -> (String, Session)
  tool both(s: Session) -> (Note, Session, Int)
  tool maybe() -> Option[Session]
}
entry(notes: Notes) -> ()
"#;

    /// What the policy declares, as the checker resolves it.
    fn declared() -> Declarations {
        let mut sources = cordon_syntax::SourceMap::new();
        let policy = sources.add("notes.cord", POLICY);
        let (declared, diagnostics) =
            cordon_types::declare(&sources, &[policy], &cordon_types::CheckOptions::default());
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        declared
    }

    /// How each tool of the policy's `Notes` makes its result.
    fn made(tool: &str) -> Made {
        let declared = declared();
        made_of(&declared.capability("Notes").unwrap().tool(tool).unwrap().ret).0
    }

    #[test]
    fn what_the_server_answers_is_the_result_but_for_the_linear_values_cordon_keeps() {
        assert_eq!(made("plain"), Made::Answer);
        assert_eq!(made("close"), Made::Kept, "a refined alias of a linear type is kept");
        assert_eq!(made("read"), Made::Tuple { len: 2, answered: vec![0] });
        assert_eq!(made("both"), Made::Tuple { len: 3, answered: vec![0, 2] });
        // An optional session is the server's answer, which would decide whether a session
        // exists: binding such a tool is refused.
        assert_eq!(made("maybe"), Made::Answer);
        let tools: Vec<rmcp::model::Tool> = ["plain", "close", "read", "both", "maybe"]
            .iter()
            .map(|name| {
                serde_json::from_value(serde_json::json!({"name": name, "inputSchema": {"type": "object"}})).unwrap()
            })
            .collect();
        let error = Binding::new("notes", &tools, "Notes", &declared()).unwrap_err();
        assert!(error.contains("`Notes.maybe` holds a linear value inside an option"), "{error}");
    }

    #[test]
    fn the_kept_values_are_made_by_the_boundary_and_a_short_answer_says_the_call_was_made() {
        let one = Made::Tuple { len: 2, answered: vec![0] };
        assert_eq!(place("read", &one, Json::from("hi")), Ok(serde_json::json!(["hi", null])));
        assert_eq!(place("close", &Made::Kept, Json::from("anything")), Ok(Json::Null));
        let two = Made::Tuple { len: 3, answered: vec![0, 2] };
        assert_eq!(
            place("both", &two, serde_json::json!([{"text": "a"}, 3])),
            Ok(serde_json::json!([{"text": "a"}, null, 3]))
        );
        let short = place("both", &two, serde_json::json!([{"text": "a"}])).unwrap_err();
        assert!(short.starts_with("`both` was called, but did not answer a list of the 2 values"), "{short}");
    }
}
