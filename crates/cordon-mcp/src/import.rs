//! `cordon mcp import SERVER`: a starter policy for a server's tools, for the deployer to read
//! and edit. Types come from the tools' JSON Schemas (objects → records, string enums → enums,
//! arrays → lists, optional or nullable (`type: [T, "null"]`, or `anyOf`/`oneOf` of `T` and
//! `null`) → `Option`, integers → `Int`, numbers → `Float`; what Cordon cannot say, such as
//! other unions or free-form objects, becomes `String` with a note). Local `$ref`s
//! (`#/$defs/Name`, `#/definitions/Name`, any `#/...` pointer) are followed; one to another
//! document, to nothing, or into itself (a cycle, or more than [`MAX_REFS`] deep) is a `String`
//! with a note. A record is named by its schema where it names itself (its `$defs` name, else
//! its `title`, as an identifier and apart from every other type), so a plan can write its
//! literals; else after the tool and the path to it. One schema met twice is one record.
//!
//! The conservative defaults are written out: results secret to the user and vouched for by
//! no one, arguments and the decision to call only what is public and vouched for by the user,
//! and `@approval(ask)` on any tool whose name, or whose annotations, say it writes, deletes or
//! sends (a server's annotations can add that caution, never take away what the name says).
//! Such a tool also gets a `@card` whose `destination` (or `recipients`) and `content` are the
//! parameters whose names say so ([`DESTINATIONS`], [`CONTENTS`]), so an "always" answer is for
//! that path or recipient, not for anywhere; the card lists every other parameter too.
//!
//! Everything the server sends is an outsider's text. The policy is built as a syntax tree
//! and written by [`cordon_syntax::print`], never by pasting the server's text into source:
//! names become identifiers ([`names::cordon_name`]) or the tool is left out; descriptions,
//! enum values and left-out names are doc comment lines that begin `> ` (the mark of quoted
//! outsider text, which a model's prompt explains) and that the printer keeps from ending
//! their comment or hiding text. So whatever the server sends, the policy declares exactly the
//! tools, types, labels and tiers this module means.
//!
//! For a server whose tools act on one account ([`Account::Session`], `--session`), the policy
//! threads a `Session` through every tool, which Cordon keeps and never sends (see
//! [`crate::host`]), with a measure `tainted`: each tool hands back the session as tainted as it
//! got it, and a tool that writes or sends needs it untainted. The deployer marks the tools that
//! read private data as tainting it; then "read private, then post" is a type error.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use cordon_syntax::ast::{
    Annotation, AnnotationArg, BinOp, Expr, ExprKind, Field, Ident, Item, ItemKind, NodeId, Param, Tool as ToolDecl,
    TypeExpr, TypeExprKind, UnOp, Variant,
};
use cordon_syntax::format::format;
use cordon_syntax::print;
use cordon_syntax::{FileId, Span};
use cordon_types::{CARD_KEYS, near_card_key};
use rmcp::model::Tool;
use serde_json::Value as Json;

use crate::{names, schema};

/// How deep a schema is followed before the rest is `String`.
const MAX_DEPTH: usize = 8;

/// How many `$ref`s are followed, one inside another, before the rest is `String`.
const MAX_REFS: usize = 32;

/// The most lines of a server's description kept in a doc comment.
const MAX_QUOTED_LINES: usize = 20;

/// The most enum values quoted in a note.
const MAX_QUOTED_VALUES: usize = 20;

/// The prefix of every doc comment line that quotes the server.
pub const QUOTE: &str = "> ";

/// Words in a tool's name that say it changes something.
const WRITES: &[&str] = &[
    "write", "delete", "remove", "send", "create", "update", "edit", "move", "post", "put", "set", "upload", "insert",
    "drop", "rename", "publish", "pay", "transfer", "execute", "run",
];

/// Parameter names that say where a tool's effect goes: the first such parameter of a tool
/// that asks first is its card's `destination` (a `String`) or `recipients` (a
/// `List[String]`), what an "always" grant is for. A name says so whole or as its last word
/// (`path`, `file_path`, `to_email`), unless a word of it says where things come from.
const DESTINATIONS: &[&str] = &[
    "path",
    "file",
    "filename",
    "filepath",
    "destination",
    "dest",
    "to",
    "recipient",
    "recipients",
    "email",
    "address",
    "url",
    "uri",
    "channel",
    "repo",
    "repository",
    "target",
];

/// Parameter names that say what a tool writes or sends: the card's `content`.
const CONTENTS: &[&str] = &["content", "contents", "body", "text", "message"];

/// Words in a parameter's name that say it is where something comes from (`source_path`,
/// `from_email`): never a destination.
const ORIGINS: &[&str] = &["from", "source", "src", "sender", "old", "original"];

/// How a server's tools act: each call on its own, or all on one account, whose session the
/// policy threads through them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Account {
    PerCall,
    Session,
}

/// The name of the measure the session of [`Account::Session`] has, unless a parameter has it.
const TAINTED: &str = "tainted";

/// The threaded session: its type's name and its measure's.
struct Session {
    ty: String,
    tainted: String,
}

/// The policy module for `tools`, served as `capability`, acting as `account` says; an error if
/// `server` or `capability` (the deployer's own names) cannot be written as identifiers.
pub fn policy(server: &str, capability: &str, tools: &[Tool], account: Account) -> Result<String, String> {
    let mut types = Types::new(capability);
    let session_ty = (account == Account::Session).then(|| types.fresh("Session"));
    let mut declared = Vec::new();
    let mut left_out = Vec::new();
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for tool in tools {
        *uses.entry(names::cordon_name(&tool.name)).or_default() += 1;
    }
    for tool in tools {
        if uses.get(&names::cordon_name(&tool.name)).is_some_and(|n| *n > 1) {
            left_out.push(tool.name.to_string());
            continue;
        }
        match declare(&mut types, tool) {
            Some(decl) => declared.push((decl, writes(tool))),
            None => left_out.push(tool.name.to_string()),
        }
    }
    // The measure is named apart from every parameter, which would hide it in a refinement.
    let params: Vec<Param> = declared.iter().flat_map(|(d, _)| d.params.clone()).collect();
    let session = session_ty.map(|ty| Session { ty, tainted: fresh_name(TAINTED, &params) });
    let declared: Vec<ToolDecl> = declared
        .into_iter()
        .map(|(decl, writes)| match &session {
            Some(session) => threaded(decl, session, writes),
            None => decl,
        })
        .collect();
    let mut doc = vec![format!("The tools of the MCP server `{}`.", names::cordon_name(server))];
    if !left_out.is_empty() {
        doc.push(
            "Left out: tools whose names, or whose required parameters' names, Cordon cannot tell apart:".to_string(),
        );
        doc.extend(left_out.iter().map(|name| format!("{QUOTE}{}", print::string_literal(name))));
    }
    let mut items = types.items;
    let mut entry = vec![Param { name: ident(&names::cordon_name(server)), ty: named(capability, vec![]) }];
    let mut ret = named("String", vec![]);
    if let Some(session) = &session {
        items.extend(session_items(server, session));
        let name = fresh_name("s", &entry);
        entry.push(Param { name: ident(&name), ty: named(&session.ty, vec![]) });
        ret = TypeExpr { kind: TypeExprKind::Tuple(vec![ret, named(&session.ty, vec![])]), span: span() };
    }
    items.push(item(Some(doc.join("\n")), ItemKind::Capability { name: ident(capability), tools: declared }));
    let entry_doc = match session {
        Some(_) => "A plan gets the server's tools and the session, and returns its answer and the session.",
        None => "A plan gets the server's tools and returns its answer.",
    };
    items.push(item(Some(entry_doc.to_string()), ItemKind::Entry { params: entry, ret }));
    let header = print::comment(&format!(
        "A starter policy for the MCP server `{server}`,\n\
         written by `cordon mcp import {server}`.\n\
         Read it before you use it. Doc comment lines that begin `>` quote the server (untrusted);\n\
         the labels are the conservative defaults: what a tool returns is secret to the user and\n\
         vouched for by no one; arguments, and the decision to call, may only be public data the\n\
         user vouches for; tools that may write, delete or send ask first. Loosen what your tasks\n\
         need."
    ));
    let cannot = |e: &dyn std::fmt::Display| format!("cannot write a policy for the MCP server `{server}`: {e}");
    let body = print::module(&items).map_err(|e| cannot(&e))?;
    // Laid out as `cordon fmt` lays out the policy once the user edits it.
    format(&format!("{header}\n{body}")).map_err(|e| cannot(&e))
}

/// The declaration of `tool`, or `None` if it requires properties whose names Cordon cannot
/// tell apart (`a-b` and `a.b`: a plan could not say which it means).
fn declare(types: &mut Types, tool: &Tool) -> Option<ToolDecl> {
    let name = names::cordon_name(&tool.name);
    let type_name = pascal(&name);
    let schema = Json::Object((*tool.input_schema).clone());
    types.root = Rc::new(schema.clone());
    let required = required(&schema);
    let properties = properties(&schema);
    let clash = |p: &str| properties.iter().filter(|(q, _)| names::cordon_name(q) == names::cordon_name(p)).count() > 1;
    if properties.iter().any(|(p, _)| required.contains(p) && clash(p)) {
        return None;
    }
    let mut doc = Vec::new();
    if let Some(description) = &tool.description {
        doc.extend(quoted(description));
    }
    let mut notes = Vec::new();
    let mut params = Vec::new();
    for (property, prop_schema) in properties.iter().filter(|(p, _)| !clash(p)) {
        let param = names::cordon_name(property);
        let mut ty = types.of(prop_schema, &format!("{type_name}{}", pascal(&param)), &param, 0, &mut notes);
        if !required.contains(property) {
            ty = optional(ty);
        }
        params.push(Param { name: ident(&param), ty });
    }
    let ret = match &tool.output_schema {
        Some(out) => {
            let out = Json::Object((**out).clone());
            types.root = Rc::new(out.clone());
            // What the server wraps in `{"result": ..}` is declared as what is inside: the
            // host unwraps it.
            let inner = out.as_object().and_then(schema::wrapped_result).unwrap_or(&out);
            types.of(inner, &format!("{type_name}Result"), "the result", 0, &mut notes)
        }
        None => named("String", vec![]),
    };
    doc.extend(notes);
    let mut labels: Vec<AnnotationArg> =
        params.iter().map(|p| keyed(&p.name.name, call("endorsed", vec![call("user", vec![])]))).collect();
    labels.push(keyed("pc", call("endorsed", vec![call("user", vec![])])));
    let returns = method(call("secret", vec![call("user", vec![])]), "join", vec![call("untrusted", vec![])]);
    labels.push(keyed("returns", returns));
    let mut annotations = vec![Annotation { name: ident("label"), args: labels, span: span() }];
    if writes(tool) {
        let ask = AnnotationArg { key: None, value: expr(ExprKind::Name(ident("ask"))) };
        annotations.push(Annotation { name: ident("approval"), args: vec![ask], span: span() });
        annotations.extend(card(&name, &params));
    }
    let doc = (!doc.is_empty()).then(|| doc.join("\n"));
    Some(ToolDecl { doc, name: ident(&name), params, ret: Some(ret), annotations, span: span() })
}

/// The `@card` of a tool that asks first: its action (its name in words), its destination
/// (or recipients) and content where parameters' names say which they are ([`DESTINATIONS`],
/// [`CONTENTS`]), and every other parameter as a field of its own, since a card shows only
/// what `@card` lists. `None` when no parameter is a destination or content: the card then
/// shows every argument.
fn card(tool: &str, params: &[Param]) -> Option<Annotation> {
    let says = |p: &Param, words: &[&str]| {
        let normal = names::normal(&p.name.name);
        let parts: Vec<&str> = normal.split('_').collect();
        let last = parts.last().is_some_and(|w| words.contains(w)) && !parts.iter().any(|w| ORIGINS.contains(w));
        words.contains(&normal.as_str()) || last
    };
    let string = |t: &TypeExpr| is_named(t, "String", 0);
    let list = |t: &TypeExpr| {
        is_named(t, "List", 1) && matches!(&t.kind, TypeExprKind::Named { args, .. } if string(&args[0]))
    };
    let destination = params.iter().find(|p| says(p, DESTINATIONS) && (string(&p.ty) || list(&p.ty)));
    let content = params
        .iter()
        .find(|p| Some(p.name.name.as_str()) != destination.map(|d| d.name.name.as_str()) && says(p, CONTENTS));
    if destination.is_none() && content.is_none() {
        return None;
    }
    let value = |p: &Param| expr(ExprKind::Name(ident(&p.name.name)));
    let action = tool.trim_end_matches('_').replace('_', " ");
    let mut args = vec![keyed("action", expr(ExprKind::Str(action)))];
    let mut shown = Vec::new();
    if let Some(d) = destination {
        args.push(keyed(if list(&d.ty) { "recipients" } else { "destination" }, value(d)));
        shown.push(d.name.name.as_str());
    }
    if let Some(c) = content {
        args.push(keyed("content", value(c)));
        shown.push(c.name.name.as_str());
    }
    let mut keys: BTreeSet<String> = CARD_KEYS.iter().map(|k| k.to_string()).collect();
    for p in params.iter().filter(|p| !shown.contains(&p.name.name.as_str())) {
        let mut key = p.name.name.clone();
        while keys.contains(&key) || CARD_KEYS.iter().any(|k| near_card_key(k, &key)) {
            key = format!("arg_{key}");
        }
        keys.insert(key.clone());
        args.push(keyed(&key, value(p)));
    }
    Some(Annotation { name: ident("card"), args, span: span() })
}

/// Whether `t` is the type `name` with `args` type arguments.
fn is_named(t: &TypeExpr, name: &str, args: usize) -> bool {
    matches!(&t.kind, TypeExprKind::Named { name: n, args: a } if n.name == name && a.len() == args)
}

/// The session's declarations: the linear type and its measure, `false` for a new session.
fn session_items(server: &str, session: &Session) -> [Item; 2] {
    let linear = item(
        Some(format!(
            "The account the MCP server `{}` acts on, as one session Cordon threads through its tools\n\
             and never sends. Mark each tool that reads private data as tainting it\n\
             (`{}(next) == true`); tools that write or send need it untainted.",
            names::cordon_name(server),
            session.tainted
        )),
        ItemKind::Linear { name: ident(&session.ty) },
    );
    let measure = item(
        Some("Whether the session has read what may not be written where others read it.".to_string()),
        ItemKind::Measure {
            name: ident(&session.tainted),
            params: vec![Param { name: ident("s"), ty: named(&session.ty, vec![]) }],
            ret: named("Bool", vec![]),
            default: Some(expr(ExprKind::Bool(false))),
        },
    );
    [linear, measure]
}

/// `decl` with the session threaded through: taken first (untainted, for a tool that
/// `writes`), and handed back beside the result, as tainted as it came.
fn threaded(mut decl: ToolDecl, session: &Session, writes: bool) -> ToolDecl {
    let tainted = |name: &str| call(&session.tainted, vec![expr(ExprKind::Name(ident(name)))]);
    let param = fresh_name("session", &decl.params);
    let taken = match writes {
        true => {
            let untainted = expr(ExprKind::Unary { op: UnOp::Not, operand: Box::new(tainted(&param)) });
            refined(&param, &session.ty, untainted)
        }
        false => named(&session.ty, vec![]),
    };
    decl.params.insert(0, Param { name: ident(&param), ty: taken });
    let next = fresh_name("next", &decl.params);
    let same = expr(ExprKind::Binary { op: BinOp::Eq, lhs: Box::new(tainted(&next)), rhs: Box::new(tainted(&param)) });
    let result = decl.ret.take().unwrap_or_else(|| named("String", vec![]));
    let ret = TypeExprKind::Tuple(vec![result, refined(&next, &session.ty, same)]);
    decl.ret = Some(TypeExpr { kind: ret, span: span() });
    decl
}

/// `{var: ty | pred}`.
fn refined(var: &str, ty: &str, pred: Expr) -> TypeExpr {
    TypeExpr {
        kind: TypeExprKind::Refined { var: ident(var), base: Box::new(named(ty, vec![])), pred: Box::new(pred) },
        span: span(),
    }
}

/// `base`, or `base` followed by underscores, whichever no parameter of `params` is named.
fn fresh_name(base: &str, params: &[Param]) -> String {
    let mut name = base.to_string();
    while params.iter().any(|p| p.name.name == name) {
        name.push('_');
    }
    name
}

/// Whether a tool may change something: its name says so, or its annotations do (not
/// read-only, or destructive). A server's annotations only add caution: a tool named
/// `delete_all` asks first even if the server calls it read-only.
pub fn writes(tool: &Tool) -> bool {
    let by_name = names::normal(&tool.name).split('_').any(|w| WRITES.contains(&w));
    let by_annotations =
        tool.annotations.as_ref().is_some_and(|a| a.destructive_hint == Some(true) || a.read_only_hint == Some(false));
    by_name || by_annotations
}

/// A server's text as doc comment lines, each marked as a quote, wrapped at the printer's
/// width where words allow; at most [`MAX_QUOTED_LINES`] of them.
fn quoted(text: &str) -> Vec<String> {
    let mut lines = vec!["The server says (untrusted):".to_string()];
    let mut quote = Vec::new();
    let breaks = |c: char| matches!(c, '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}');
    for paragraph in text.split(breaks).map(str::trim).filter(|l| !l.is_empty()) {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > print::WIDTH - 8 {
                quote.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        quote.push(line);
    }
    let more = quote.len().saturating_sub(MAX_QUOTED_LINES);
    lines.extend(quote.into_iter().take(MAX_QUOTED_LINES).map(|l| format!("{QUOTE}{l}")));
    if more > 0 {
        lines.push(format!("(and {more} more lines)"));
    }
    lines
}

/// The types a policy needs, declared as they are met.
struct Types {
    items: Vec<Item>,
    taken: BTreeSet<String>,
    /// The whole schema being read (a tool's input or output schema), where its local
    /// `$ref`s point.
    root: Rc<Json>,
    /// The `$ref`s being followed, outermost first: one met again is a cycle.
    following: Vec<String>,
    /// The records declared, by the name they were meant to have and their schema (with the
    /// root, where the schema refers into it): a schema met twice is one record.
    records: BTreeMap<(String, String, String), TypeExpr>,
}

impl Types {
    /// No type declared yet; the builtin types' names and the capability's are taken.
    fn new(capability: &str) -> Types {
        let taken = cordon_types::BUILTIN_TYPES.iter().copied().chain([capability]).map(str::to_string).collect();
        Types { items: Vec::new(), taken, root: Rc::new(Json::Null), following: Vec::new(), records: BTreeMap::new() }
    }

    /// The Cordon type for `schema` (of the value `path` names); a record or enum it needs is
    /// declared as `name`; what the type cannot say is noted in `notes`.
    fn of(&mut self, schema: &Json, name: &str, path: &str, depth: usize, notes: &mut Vec<String>) -> TypeExpr {
        let string = || named("String", vec![]);
        if depth > MAX_DEPTH {
            notes.push(format!("`{path}` is a `String`: its schema is nested too deep to type."));
            return string();
        }
        if let Some(reference) = schema.get("$ref") {
            return self.reference(reference, name, path, depth, notes);
        }
        if let Some(inner) = schema::nullable(schema) {
            return optional(self.of(inner, name, path, depth + 1, notes));
        }
        if let Some([only]) = schema.get("allOf").and_then(Json::as_array).map(Vec::as_slice) {
            return self.of(only, name, path, depth + 1, notes);
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
            (_, Some(Json::Array(values))) => self.enumeration(values, name, path, notes),
            (Some("string"), _) => string(),
            (Some("integer"), _) => named("Int", vec![]),
            (Some("number"), _) => named("Float", vec![]),
            (Some("boolean"), _) => named("Bool", vec![]),
            (Some("array"), _) => match schema.get("items") {
                Some(items) => {
                    let item = self.of(items, &format!("{name}Item"), &format!("{path}[..]"), depth + 1, notes);
                    named("List", vec![item])
                }
                None => {
                    notes.push(format!("`{path}` is a `List[String]`: its items may be of any type."));
                    named("List", vec![string()])
                }
            },
            (Some("object"), _) if !properties(schema).is_empty() => {
                // A schema's own name for the record (its `$defs` name, or its `title`) is
                // what a plan writes its literals with.
                let title = schema.get("title").and_then(Json::as_str).map(names::cordon_name);
                self.record(schema, title.as_deref().unwrap_or(name), depth)
            }
            (Some("object"), _) => {
                notes.push(format!("`{path}` is a `String`: an object with any fields, which Cordon has no type for."));
                string()
            }
            _ => {
                notes.push(format!("`{path}` is a `String`: a union or untyped value Cordon cannot express."));
                string()
            }
        };
        if nullable { optional(ty) } else { ty }
    }

    /// The type of what the `$ref` `reference` points at: a local ref is followed (a
    /// definition's name naming the record it is); one that is not, that points at nothing, or
    /// that is met again inside itself, is a `String` with a note.
    fn reference(
        &mut self,
        reference: &Json,
        name: &str,
        path: &str,
        depth: usize,
        notes: &mut Vec<String>,
    ) -> TypeExpr {
        let mut fallback = |why: &str| {
            notes.push(format!("`{path}` is a `String`: its schema {why}."));
            named("String", vec![])
        };
        let key = reference.as_str().unwrap_or_default().to_string();
        if self.following.contains(&key) {
            return fallback("refers to itself, which Cordon has no type for");
        }
        if self.following.len() >= MAX_REFS {
            return fallback("refers through too many definitions to type");
        }
        let root = Rc::clone(&self.root);
        let (target, definition) = match schema::resolve(&root, reference) {
            Ok(found) => found,
            Err(schema::Unresolved::NotLocal) => {
                return fallback("refers to another document, which Cordon does not read");
            }
            Err(schema::Unresolved::Missing) => return fallback("refers to a definition it does not have"),
        };
        // The definition's name is the record's, before any title it has.
        let titled;
        let target = match (definition, target.as_object()) {
            (Some(definition), Some(object)) => {
                let mut object = object.clone();
                object.insert("title".to_string(), Json::String(definition));
                titled = Json::Object(object);
                &titled
            }
            _ => target,
        };
        self.following.push(key);
        let ty = self.of(target, name, path, depth, notes);
        self.following.pop();
        ty
    }

    fn record(&mut self, schema: &Json, name: &str, depth: usize) -> TypeExpr {
        let text = schema.to_string();
        let within = if text.contains("$ref") { self.root.to_string() } else { String::new() };
        let key = (name.to_string(), text, within);
        if let Some(ty) = self.records.get(&key) {
            return ty.clone();
        }
        let ty = self.declare_record(schema, name, depth);
        self.records.insert(key, ty.clone());
        ty
    }

    fn declare_record(&mut self, schema: &Json, name: &str, depth: usize) -> TypeExpr {
        let name = self.fresh(name);
        let required = required(schema);
        let properties = properties(schema);
        let clash =
            |p: &str| properties.iter().filter(|(q, _)| names::cordon_name(q) == names::cordon_name(p)).count() > 1;
        let mut fields = Vec::new();
        for (property, prop_schema) in properties.iter().filter(|(p, _)| !clash(p)) {
            let field = names::cordon_name(property);
            let mut notes = Vec::new();
            let mut ty = self.of(prop_schema, &format!("{name}{}", pascal(&field)), &field, depth + 1, &mut notes);
            if !required.contains(property) {
                ty = optional(ty);
            }
            let doc = (!notes.is_empty()).then(|| notes.join("\n"));
            fields.push(Field { doc, name: ident(&field), ty, annotations: Vec::new() });
        }
        let doc = schema.get("description").and_then(Json::as_str).map(|d| quoted(d).join("\n"));
        self.items.push(item(doc, ItemKind::Record { name: ident(&name), fields, opaque: false }));
        named(&name, vec![])
    }

    /// An enum when every value is a string that can be a variant's name; else `String`, with
    /// the values quoted in a note.
    fn enumeration(&mut self, values: &[Json], name: &str, path: &str, notes: &mut Vec<String>) -> TypeExpr {
        let variants: Vec<&str> = values.iter().filter_map(Json::as_str).collect();
        let fits = |v: &&str| v.starts_with(|c: char| c.is_ascii_alphabetic()) && names::cordon_name(v) == *v;
        let distinct = variants.iter().collect::<BTreeSet<_>>().len() == variants.len();
        if variants.is_empty() || variants.len() != values.len() || !variants.iter().all(fits) || !distinct {
            notes.push(format!("`{path}` is a `String`; the server's schema allows only these values:"));
            let shown: Vec<String> = values
                .iter()
                .take(MAX_QUOTED_VALUES)
                .map(|v| match v {
                    Json::String(s) => print::string_literal(s),
                    other => other.to_string(),
                })
                .collect();
            let more = values.len().saturating_sub(MAX_QUOTED_VALUES);
            let more = if more > 0 { format!(" (and {more} more)") } else { String::new() };
            notes.push(format!("{QUOTE}{}{more}", shown.join(", ")));
            return named("String", vec![]);
        }
        let name = self.fresh(name);
        let variants =
            variants.iter().map(|v| Variant { doc: None, name: ident(v), payload: Vec::new(), span: span() }).collect();
        self.items.push(item(None, ItemKind::Enum { name: ident(&name), variants }));
        named(&name, vec![])
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
    if joined.starts_with(|c: char| c.is_ascii_alphabetic()) { joined } else { format!("T{joined}") }
}

/// The syntax tree is printed, never parsed, so its spans say nothing.
fn span() -> Span {
    Span::new(FileId(0), 0, 0)
}

fn ident(name: &str) -> Ident {
    Ident { name: name.to_string(), span: span() }
}

fn item(doc: Option<String>, kind: ItemKind) -> Item {
    Item { doc, kind, span: span() }
}

/// `Option[ty]`, or `ty` if it is an `Option` already (a property that may be missing and
/// may be `null` is one `Option`: the host leaves out an argument that is `None`).
fn optional(ty: TypeExpr) -> TypeExpr {
    match &ty.kind {
        TypeExprKind::Named { name, args } if name.name == "Option" && args.len() == 1 => ty,
        _ => named("Option", vec![ty]),
    }
}

fn named(name: &str, args: Vec<TypeExpr>) -> TypeExpr {
    TypeExpr { kind: TypeExprKind::Named { name: ident(name), args }, span: span() }
}

fn expr(kind: ExprKind) -> Expr {
    Expr { id: NodeId(0), kind, span: span() }
}

fn call(function: &str, args: Vec<Expr>) -> Expr {
    expr(ExprKind::Call { callee: Box::new(expr(ExprKind::Name(ident(function)))), args })
}

fn method(receiver: Expr, method: &str, args: Vec<Expr>) -> Expr {
    expr(ExprKind::MethodCall { receiver: Box::new(receiver), method: Box::new(ident(method)), args })
}

fn keyed(key: &str, value: Expr) -> AnnotationArg {
    AnnotationArg { key: Some(ident(key)), value }
}
