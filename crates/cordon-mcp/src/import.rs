//! `cordon mcp import SERVER`: a starter policy for a server's tools, for the deployer to read
//! and edit. Types come from the tools' JSON Schemas (objects → records, string enums → enums,
//! arrays → lists, optional → `Option`, integers → `Int`, numbers → `Float`; what Cordon cannot
//! say, such as unions or free-form objects, becomes `String` with a comment). Each tool's
//! description is kept as its doc comment, marked as the server's words. The conservative
//! defaults are written out: results secret to the user and vouched for by no one, arguments
//! and the decision to call only what is public and vouched for by the user, and
//! `@approval(ask)` on any tool whose annotations or name say it writes, deletes or sends.

use std::collections::BTreeSet;
use std::fmt::Write;

use rmcp::model::Tool;
use serde_json::Value as Json;

use crate::names;

/// How deep a schema is followed before the rest is `String`.
const MAX_DEPTH: usize = 8;

/// Words in a tool's name that say it changes something.
const WRITES: &[&str] = &[
    "write", "delete", "remove", "send", "create", "update", "edit", "move", "post", "put", "set", "upload", "insert",
    "drop", "rename", "publish", "pay", "transfer", "execute", "run",
];

/// The policy module for `tools`, served as `capability`.
pub fn policy(server: &str, capability: &str, tools: &[Tool]) -> String {
    let mut types = Types::default();
    let mut body = String::new();
    for tool in tools {
        let name = names::cordon_name(&tool.name);
        let type_name = pascal(&name);
        if let Some(description) = &tool.description {
            doc(&mut body, "  ", description);
        }
        let schema = Json::Object((*tool.input_schema).clone());
        let required = required(&schema);
        let properties = properties(&schema);
        // Two properties with one identifier (`a-b`, `a.b`) cannot be told apart by a plan.
        let clash =
            |p: &str| properties.iter().filter(|(q, _)| names::cordon_name(q) == names::cordon_name(p)).count() > 1;
        if properties.iter().any(|(p, _)| required.contains(p) && clash(p)) {
            let _ = writeln!(
                body,
                "  // `{}` is left out: it requires properties whose names Cordon cannot tell apart\n",
                tool.name.replace('\n', " ")
            );
            continue;
        }
        let mut params = Vec::new();
        for (property, prop_schema) in properties.iter().filter(|(p, _)| !clash(p)) {
            let mut ty = types.of(prop_schema, &format!("{type_name}{}", pascal(&names::identifier(property))), 0);
            if !required.contains(property) {
                ty = format!("Option[{ty}]");
            }
            params.push((names::cordon_name(property), ty));
        }
        let returns = match &tool.output_schema {
            Some(out) => types.of(&Json::Object((**out).clone()), &format!("{type_name}Result"), 0),
            None => "String".to_string(),
        };
        let list: Vec<String> = params.iter().map(|(p, t)| format!("{p}: {t}")).collect();
        body.push_str(&joined(&format!("  tool {name}("), &list, &format!(") -> {returns}"), "    "));
        let mut labels: Vec<String> = params.iter().map(|(p, _)| format!("{p} = endorsed(user())")).collect();
        labels.push("pc = endorsed(user())".into());
        labels.push("returns = secret(user()).join(untrusted())".into());
        body.push_str(&joined("    @label(", &labels, ")", "           "));
        if writes(tool) {
            let _ = writeln!(body, "    @approval(ask)");
        }
        body.push('\n');
    }
    let mut out = format!(
        "// A starter policy for the MCP server `{server}`,\n// written by `cordon mcp import {server}`.\n\
         // Read it before you use it: the doc comments are the server's own words (untrusted),\n\
         // and the labels are the conservative defaults: what a tool returns is secret to the user\n\
         // and vouched for by no one; arguments, and the decision to call, may only be public data\n\
         // the user vouches for; tools that may write, delete or send ask first. Loosen what your\n\
         // tasks need.\n\n"
    );
    out.push_str(&types.decls);
    let _ = writeln!(out, "/// The tools of the MCP server `{server}`.\ncapability {capability} {{");
    out.push_str(body.trim_end());
    out.push_str("\n}\n");
    let _ = writeln!(
        out,
        "\n/// A plan gets the server's tools and returns its answer.\nentry({}: {capability}) -> String",
        names::identifier(server)
    );
    out
}

/// Whether a tool may change something: its annotations say so (not read-only, or
/// destructive), or, without annotations, its name does.
fn writes(tool: &Tool) -> bool {
    match &tool.annotations {
        Some(a) if a.destructive_hint == Some(true) => true,
        Some(a) if a.read_only_hint == Some(true) => false,
        Some(a) if a.read_only_hint == Some(false) => true,
        _ => names::normal(&tool.name).split('_').any(|w| WRITES.contains(&w)),
    }
}

/// The types a policy needs, declared as they are met.
#[derive(Default)]
struct Types {
    decls: String,
    taken: BTreeSet<String>,
}

impl Types {
    /// The Cordon type for `schema`; a record or enum it needs is declared as `name`.
    fn of(&mut self, schema: &Json, name: &str, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "String /* nested too deep to type */".to_string();
        }
        let kind = schema.get("type");
        let nullable = matches!(kind, Some(Json::Array(ts)) if ts.iter().any(|t| t == "null"));
        let kind = match kind {
            Some(Json::String(t)) => Some(t.as_str()),
            Some(Json::Array(ts)) => {
                let real: Vec<&str> = ts.iter().filter_map(Json::as_str).filter(|t| *t != "null").collect();
                if real.len() == 1 { Some(real[0]) } else { None }
            }
            _ => None,
        };
        let ty = match (kind, schema.get("enum")) {
            (_, Some(Json::Array(values))) => self.enumeration(values, name),
            (Some("string"), _) => "String".to_string(),
            (Some("integer"), _) => "Int".to_string(),
            (Some("number"), _) => "Float".to_string(),
            (Some("boolean"), _) => "Bool".to_string(),
            (Some("array"), _) => match schema.get("items") {
                Some(items) => format!("List[{}]", self.of(items, &format!("{name}Item"), depth + 1)),
                None => "List[String] /* items of any type */".to_string(),
            },
            (Some("object"), _) if !properties(schema).is_empty() => self.record(schema, name, depth),
            (Some("object"), _) => "String /* an object with any fields: Cordon has no type for it yet */".to_string(),
            _ => "String /* a union or untyped value Cordon cannot express */".to_string(),
        };
        if nullable { format!("Option[{ty}]") } else { ty }
    }

    fn record(&mut self, schema: &Json, name: &str, depth: usize) -> String {
        let name = self.fresh(name);
        let required = required(schema);
        let mut fields = Vec::new();
        let properties = properties(schema);
        let clash =
            |p: &str| properties.iter().filter(|(q, _)| names::cordon_name(q) == names::cordon_name(p)).count() > 1;
        for (property, prop_schema) in properties.iter().filter(|(p, _)| !clash(p)) {
            let field = names::cordon_name(property);
            let mut ty = self.of(prop_schema, &format!("{name}{}", pascal(&field)), depth + 1);
            if !required.contains(property) {
                ty = format!("Option[{ty}]");
            }
            fields.push(format!("{field}: {ty}"));
        }
        if let Some(d) = schema.get("description").and_then(Json::as_str) {
            doc(&mut self.decls, "", d);
        }
        self.decls.push_str(&joined(&format!("type {name} = {{ "), &fields, " }", "  "));
        self.decls.push('\n');
        name
    }

    /// An enum when every value is a string that can be a variant's name; else `String`.
    fn enumeration(&mut self, values: &[Json], name: &str) -> String {
        let variants: Vec<&str> = values.iter().filter_map(Json::as_str).collect();
        let fits = |v: &&str| {
            v.chars().next().is_some_and(char::is_alphabetic)
                && v.chars().all(|c| c.is_alphanumeric() || c == '_')
                && names::cordon_name(v) == *v
        };
        if variants.is_empty() || variants.len() != values.len() || !variants.iter().all(fits) {
            let shown: Vec<String> = values.iter().map(|v| v.to_string().replace("*/", "* /")).collect();
            return format!("String /* one of {} */", shown.join(", "));
        }
        let name = self.fresh(name);
        let variants: Vec<String> = variants.iter().map(|v| v.to_string()).collect();
        self.decls.push_str(&joined(&format!("enum {name} {{ "), &variants, " }", "  "));
        self.decls.push('\n');
        name
    }

    fn fresh(&mut self, name: &str) -> String {
        let mut candidate = name.to_string();
        let mut n = 2;
        while !self.taken.insert(candidate.clone()) {
            candidate = format!("{name}{n}");
            n += 1;
        }
        candidate
    }
}

fn properties(schema: &Json) -> Vec<(&String, &Json)> {
    schema.get("properties").and_then(Json::as_object).map(|p| p.iter().collect()).unwrap_or_default()
}

fn required(schema: &Json) -> Vec<&String> {
    let listed: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    properties(schema).into_iter().map(|(k, _)| k).filter(|k| listed.contains(&k.as_str())).collect()
}

/// `get_sum` → `GetSum`; a name that would start with a digit gets a `T` first (`_3d` → `T3d`).
fn pascal(name: &str) -> String {
    let joined: String = name
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_uppercase().chain(c).collect::<String>()).unwrap_or_default()
        })
        .collect();
    if joined.starts_with(|c: char| c.is_alphabetic()) { joined } else { format!("T{joined}") }
}

/// The longest line written, in characters, where words allow.
const WIDTH: usize = 100;

/// `open`, the `items` joined by `, `, then `close`, as one line, or wrapped at [`WIDTH`] with
/// `indent` before each continuation.
fn joined(open: &str, items: &[String], close: &str, indent: &str) -> String {
    let one = format!("{open}{}{close}\n", items.join(", "));
    if one.chars().count() <= WIDTH + 1 {
        return one;
    }
    let mut out = String::new();
    let mut line = open.to_string();
    // The close goes on a line of its own (at the open's indentation) when it would not fit
    // after the last item even on a fresh line.
    let last_fits = items.last().is_none_or(|item| indent.len() + item.chars().count() + close.len() <= WIDTH);
    let margin: String = open.chars().take_while(|c| *c == ' ').collect();
    for (i, item) in items.iter().enumerate() {
        let piece = match i + 1 < items.len() {
            true => format!("{item},"),
            false if last_fits => format!("{item}{close}"),
            false => format!("{item}\n{margin}{}", close.trim_start()),
        };
        let width = piece.lines().next().map_or(0, |l| l.chars().count());
        if line != indent && line.chars().count() + 1 + width > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
        }
        if line != open && line != indent {
            line.push(' ');
        }
        line.push_str(&piece);
    }
    if items.is_empty() {
        line.push_str(close);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The server's description as a doc comment, marked as its words, wrapped at [`WIDTH`];
/// control characters dropped; at most 20 lines.
fn doc(out: &mut String, indent: &str, text: &str) {
    let clean: String = text.chars().map(|c| if c.is_control() && c != '\n' { ' ' } else { c }).collect();
    let _ = writeln!(out, "{indent}/// The server says (untrusted):");
    let prefix = format!("{indent}/// > ");
    let mut lines = Vec::new();
    for paragraph in clean.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && prefix.len() + line.chars().count() + 1 + word.chars().count() > WIDTH {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    for line in lines.iter().take(20) {
        let _ = writeln!(out, "{prefix}{line}");
    }
    if lines.len() > 20 {
        let _ = writeln!(out, "{prefix}(and {} more lines)", lines.len() - 20);
    }
}
