//! The printer: declarations as a syntax tree back to source, the way a formatter writes them.
//!
//! Whatever text the tree holds, the source printed parses back to the same declarations:
//!
//! - a name that is not an identifier (or is a keyword) is refused, never written;
//! - a string is a literal with every quote, backslash and control character escaped;
//! - a doc comment is written line by line, and no line can end its comment early, open or
//!   close a block comment, or hide text: line breaks, control and format characters
//!   (bidirectional controls among them), variation selectors, marks on nothing and
//!   characters that render as blank are written as `\u{..}` escapes.
//!
//! It prints what policies are made of: type aliases, records, enums, linear and opaque types,
//! capabilities with their tools and annotations, and the entry, with the expressions
//! annotations and refinements hold. For anything else (function bodies, measures, constants,
//! recovered `Error` nodes) it says it cannot, rather than guess.

use std::fmt::Write as _;

use crate::ast::{
    Annotation, AnnotationArg, Expr, ExprKind, Field, Ident, Item, ItemKind, Param, Tool, TypeExpr, TypeExprKind, UnOp,
    Variant,
};
use crate::lexer::TokenKind;

/// The longest line the printer writes where it can choose (a long name or type still fits
/// on a line of its own).
pub const WIDTH: usize = 100;

/// How far each level is indented.
const INDENT: &str = "  ";

/// Why a tree cannot be printed.
pub type PrintError = String;

/// `items` as source, separated by blank lines, ending with a newline.
pub fn module(items: &[Item]) -> Result<String, PrintError> {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        print_item(&mut out, item)?;
    }
    Ok(out)
}

/// `text` as `//` comment lines, one for each of its lines, each [neutral](comment_text).
pub fn comment(text: &str) -> String {
    let mut out = String::new();
    for line in split_lines(text) {
        match comment_text(line) {
            shown if shown.is_empty() => out.push_str("//\n"),
            shown => {
                let _ = writeln!(out, "// {shown}");
            }
        }
    }
    out
}

/// A string literal whose value is exactly `value`.
pub fn string_literal(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if cordon_text::is_hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One line of a comment as it is written: every hidden character (`cordon_text`'s class, as a
/// person is shown it) as `\u{..}`, and a space inside each `/*` and `*/`, so the text can
/// neither leave its comment nor open a block comment, nor look other than it is.
pub fn comment_text(line: &str) -> String {
    let guarded = cordon_text::guard_line(line);
    let mut out = String::with_capacity(guarded.len());
    let mut previous: Option<char> = None;
    for c in guarded.chars() {
        if matches!((previous, c), (Some('*'), '/') | (Some('/'), '*')) {
            out.push(' ');
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

/// The lines of `text`, split at every line break (`\r\n` counted once).
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// `name` if it is an identifier the lexer reads back as one name.
fn ident(name: &Ident) -> Result<&str, PrintError> {
    let text = name.name.as_str();
    let mut chars = text.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let valid = starts && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && text != "_";
    if !valid || TokenKind::keyword(text).is_some() {
        return Err(format!("{text:?} is not an identifier, so it cannot be printed as a name"));
    }
    Ok(text)
}

/// The doc comment lines of `doc`, at `indent`.
fn print_doc(out: &mut String, indent: &str, doc: &Option<String>) {
    let Some(doc) = doc else { return };
    for line in doc.split('\n') {
        match comment_text(line) {
            shown if shown.is_empty() => {
                let _ = writeln!(out, "{indent}///");
            }
            shown => {
                let _ = writeln!(out, "{indent}/// {shown}");
            }
        }
    }
}

fn print_item(out: &mut String, item: &Item) -> Result<(), PrintError> {
    print_doc(out, "", &item.doc);
    match &item.kind {
        ItemKind::TypeAlias { name, ty } => {
            let _ = writeln!(out, "type {} = {}", ident(name)?, type_expr(ty)?);
        }
        ItemKind::Record { name, fields, opaque } => {
            let head = format!("{}type {} = ", if *opaque { "opaque " } else { "" }, ident(name)?);
            let entries = fields.iter().map(field).collect::<Result<Vec<_>, _>>()?;
            out.push_str(&braced(&head, &entries));
        }
        ItemKind::Enum { name, variants } => {
            let head = format!("enum {} ", ident(name)?);
            let entries = variants.iter().map(variant).collect::<Result<Vec<_>, _>>()?;
            out.push_str(&braced(&head, &entries));
        }
        ItemKind::Linear { name } => {
            let _ = writeln!(out, "linear type {}", ident(name)?);
        }
        ItemKind::Opaque { name, params } => {
            let _ = write!(out, "opaque type {}", ident(name)?);
            if !params.is_empty() {
                let params = params.iter().map(|p| ident(p).map(str::to_string)).collect::<Result<Vec<_>, _>>()?;
                let _ = write!(out, "[{}]", params.join(", "));
            }
            out.push('\n');
        }
        ItemKind::Capability { name, tools } => {
            let _ = writeln!(out, "capability {} {{", ident(name)?);
            for (i, tool) in tools.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                print_tool(out, tool)?;
            }
            out.push_str("}\n");
        }
        ItemKind::Entry { params, ret } => {
            let params = params.iter().map(param).collect::<Result<Vec<_>, _>>()?;
            out.push_str(&listed("entry(", &params, &format!(") -> {}", type_expr(ret)?), ""));
            out.push('\n');
        }
        ItemKind::Measure { name, params, ret, default } => {
            let params = params.iter().map(param).collect::<Result<Vec<_>, _>>()?;
            let _ = write!(out, "measure {}({}) -> {}", ident(name)?, params.join(", "), type_expr(ret)?);
            if let Some(default) = default {
                let _ = write!(out, " = {}", expr(default)?);
            }
            out.push('\n');
        }
        ItemKind::Release { group, to, annotations, .. } => {
            let _ = write!(out, "release {} to {}", string_literal(group), expr(to)?);
            for a in annotations {
                let _ = write!(out, " {}", annotation_line(a)?);
            }
            out.push('\n');
        }
        ItemKind::Fn(_) | ItemKind::Const { .. } => {
            return Err("the printer writes declarations only, not functions or constants".to_string());
        }
    }
    Ok(())
}

/// An entry of a braced list: its doc comment and its text.
struct Entry {
    doc: Option<String>,
    text: String,
}

fn field(f: &Field) -> Result<Entry, PrintError> {
    let mut text = format!("{}: {}", ident(&f.name)?, type_expr(&f.ty)?);
    for a in &f.annotations {
        text.push(' ');
        text.push_str(&annotation_line(a)?);
    }
    Ok(Entry { doc: f.doc.clone(), text })
}

fn variant(v: &Variant) -> Result<Entry, PrintError> {
    let mut text = ident(&v.name)?.to_string();
    if !v.payload.is_empty() {
        let payload = v.payload.iter().map(type_expr).collect::<Result<Vec<_>, _>>()?;
        let _ = write!(text, "({})", payload.join(", "));
    }
    Ok(Entry { doc: v.doc.clone(), text })
}

/// `head{ a, b }` on one line if it fits and no entry has a doc comment; else one entry a line.
fn braced(head: &str, entries: &[Entry]) -> String {
    if entries.is_empty() {
        return format!("{head}{{}}\n");
    }
    let texts: Vec<&str> = entries.iter().map(|e| e.text.as_str()).collect();
    let one = format!("{head}{{ {} }}", texts.join(", "));
    if entries.iter().all(|e| e.doc.is_none()) && one.chars().count() <= WIDTH {
        return one + "\n";
    }
    let mut out = format!("{head}{{\n");
    for entry in entries {
        print_doc(&mut out, INDENT, &entry.doc);
        let _ = writeln!(out, "{INDENT}{},", entry.text);
    }
    out.push_str("}\n");
    out
}

/// `open` + `items` joined by `, ` + `close` on one line if it fits at `indent`; else `open`,
/// each item on a line of its own one level deeper (with a `,` after it), and `close` at `indent`.
fn listed(open: &str, items: &[String], close: &str, indent: &str) -> String {
    let one = format!("{indent}{open}{}{close}", items.join(", "));
    if one.chars().count() <= WIDTH || items.is_empty() {
        return one;
    }
    let mut out = format!("{indent}{open}\n");
    for item in items {
        let _ = writeln!(out, "{indent}{INDENT}{item},");
    }
    out.push_str(indent);
    out.push_str(close);
    out
}

fn print_tool(out: &mut String, tool: &Tool) -> Result<(), PrintError> {
    print_doc(out, INDENT, &tool.doc);
    let params = tool.params.iter().map(param).collect::<Result<Vec<_>, _>>()?;
    let ret = match &tool.ret {
        Some(ret) => format!(") -> {}", type_expr(ret)?),
        None => ")".to_string(),
    };
    out.push_str(&listed(&format!("tool {}(", ident(&tool.name)?), &params, &ret, INDENT));
    out.push('\n');
    // One level deeper than the tool: the parser reads them as this tool's.
    let deeper = format!("{INDENT}{INDENT}");
    for a in &tool.annotations {
        let name = ident(&a.name)?;
        if a.args.is_empty() {
            let _ = writeln!(out, "{deeper}@{name}");
            continue;
        }
        let args = a.args.iter().map(annotation_arg).collect::<Result<Vec<_>, _>>()?;
        out.push_str(&listed(&format!("@{name}("), &args, ")", &deeper));
        out.push('\n');
    }
    Ok(())
}

fn param(p: &Param) -> Result<String, PrintError> {
    Ok(format!("{}: {}", ident(&p.name)?, type_expr(&p.ty)?))
}

/// `@name(args)` on one line.
fn annotation_line(a: &Annotation) -> Result<String, PrintError> {
    let name = ident(&a.name)?;
    if a.args.is_empty() {
        return Ok(format!("@{name}"));
    }
    let args = a.args.iter().map(annotation_arg).collect::<Result<Vec<_>, _>>()?;
    Ok(format!("@{name}({})", args.join(", ")))
}

fn annotation_arg(arg: &AnnotationArg) -> Result<String, PrintError> {
    let value = expr(&arg.value)?;
    Ok(match &arg.key {
        Some(key) => format!("{} = {value}", ident(key)?),
        None => value,
    })
}

/// A type as it is written.
pub fn type_expr(ty: &TypeExpr) -> Result<String, PrintError> {
    Ok(match &ty.kind {
        TypeExprKind::Named { name, args } if args.is_empty() => ident(name)?.to_string(),
        TypeExprKind::Named { name, args } => {
            let args = args.iter().map(type_expr).collect::<Result<Vec<_>, _>>()?;
            format!("{}[{}]", ident(name)?, args.join(", "))
        }
        TypeExprKind::Tuple(items) if items.len() == 1 => {
            return Err("a tuple type of one element has no syntax: `(A)` is `A`".to_string());
        }
        TypeExprKind::Tuple(items) => {
            let items = items.iter().map(type_expr).collect::<Result<Vec<_>, _>>()?;
            format!("({})", items.join(", "))
        }
        TypeExprKind::Fn { params, ret } => {
            let params = params.iter().map(type_expr).collect::<Result<Vec<_>, _>>()?;
            format!("fn({}) -> {}", params.join(", "), type_expr(ret)?)
        }
        TypeExprKind::Refined { var, base, pred } => {
            format!("{{{}: {} | {}}}", ident(var)?, type_expr(base)?, expr(pred)?)
        }
        TypeExprKind::Error => return Err("a type the parser could not read cannot be printed".to_string()),
    })
}

/// An expression as it is written; every operand that is itself an operation is parenthesised,
/// so precedence never decides how it reads back.
pub fn expr(e: &Expr) -> Result<String, PrintError> {
    let list = |items: &[Expr]| items.iter().map(expr).collect::<Result<Vec<_>, _>>().map(|v| v.join(", "));
    Ok(match &e.kind {
        ExprKind::Int(n) if *n >= 0 => n.to_string(),
        ExprKind::Decimal(d) if !d.is_sign_negative() => format!("{d}d"),
        ExprKind::Str(s) => string_literal(s),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Unit => "()".to_string(),
        ExprKind::Name(name) => ident(name)?.to_string(),
        ExprKind::Path { ty, variant } => format!("{}::{}", ident(ty)?, ident(variant)?),
        ExprKind::Tuple(items) if items.len() != 1 => format!("({})", list(items)?),
        ExprKind::List(items) => format!("[{}]", list(items)?),
        ExprKind::Field { base, name } => format!("{}.{}", operand(base)?, ident(name)?),
        ExprKind::Call { callee, args } => format!("{}({})", operand(callee)?, list(args)?),
        ExprKind::MethodCall { receiver, method, args } => {
            format!("{}.{}({})", operand(receiver)?, ident(method)?, list(args)?)
        }
        ExprKind::Unary { op, operand: inner } => {
            let op = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
            };
            format!("{op}{}", operand(inner)?)
        }
        ExprKind::Binary { op, lhs, rhs } => format!("{} {} {}", operand(lhs)?, op.as_str(), operand(rhs)?),
        _ => return Err("the printer writes the expressions of annotations and refinements only".to_string()),
    })
}

/// An expression as the operand of an operator, a call or a field: parenthesised if it is an
/// operation itself.
fn operand(e: &Expr) -> Result<String, PrintError> {
    let text = expr(e)?;
    Ok(match &e.kind {
        ExprKind::Unary { .. } | ExprKind::Binary { .. } => format!("({text})"),
        _ => text,
    })
}
