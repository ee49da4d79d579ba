//! The formatter (`cordon fmt`): a file's layout made canonical, and nothing else changed.
//!
//! It keeps every token, every comment and every line break the author wrote, and decides only
//! the whitespace around them:
//!
//! - each line's indentation: inside a bracket that ends its line, two spaces in from that
//!   line's (so `f({` opens one step, not two); inside a bracket followed by more on its line,
//!   aligned with what follows it; two spaces more for a line that continues the one before (a
//!   `.method()`, an operator, a tool's `-> T` or `@label(..)`); an `else` under its `if`; a
//!   comment line as a line starting there would be;
//! - one space or none between two tokens on a line, by their kinds: `f(x)`, `a.b`, `x: T`,
//!   `a + b`, `-x`, `{ a, b }`, `{v: Int | v > 0}`, `|x| x + 1`, `@label(..)`, `f"{x}"`;
//! - at most one blank line in a row, none after a line that opens a bracket or before one that
//!   closes it, none at the start or end of the file; no trailing whitespace; `\n` line ends.
//!
//! Keeping the line breaks keeps the author's shape (a long call stays on the lines it was
//! split across), makes the result independent of how the lines were indented or spaced, and
//! keeps the two places where the parser reads layout: a `(` or `[` that starts a line starts
//! something new, and an annotation on a line of its own belongs to the declaration above only
//! if it is indented deeper.
//!
//! It cannot change what a file means: the result is read again and must give the same tokens,
//! the same doc comments, and the same annotations on each declaration, or it is refused as a
//! formatter bug ([`FormatError::Changed`]). A file with syntax errors is not formatted.

mod layout;
mod roles;

use crate::ast::{Block, Expr, ExprKind, Item, ItemKind, Module, Stmt};
use crate::diagnostic::Diagnostic;
use crate::lexer::{Lexed, TokenKind, lex};
use crate::parser::parse;
use crate::span::FileId;

/// Why a text was not formatted.
#[derive(Debug)]
pub enum FormatError {
    /// The text does not parse; the errors, as `cordon check` reports them.
    Syntax(Vec<Diagnostic>),
    /// The layout would have changed what the text says (a bug in the formatter): what differs.
    Changed(String),
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::Syntax(errors) => write!(f, "it has {} syntax error(s)", errors.len()),
            FormatError::Changed(what) => {
                write!(f, "formatting would have changed what it says ({what}); this is a bug in `cordon fmt`")
            }
        }
    }
}

/// `text` formatted. Formatting the result again gives the result.
pub fn format(text: &str) -> Result<String, FormatError> {
    let file = FileId(0);
    let parsed = parse(file, text);
    let errors: Vec<Diagnostic> = parsed.diagnostics.into_iter().filter(Diagnostic::is_error).collect();
    if !errors.is_empty() {
        return Err(FormatError::Syntax(errors));
    }
    let lexed = lex(file, text);
    let starts = unit_starts(&parsed.module);
    let formatted = layout::lay_out(text, &lexed, &starts);
    same_meaning(&lexed, &parsed.module, &formatted)?;
    Ok(formatted)
}

/// Whether `formatted` says what the text lexed as `before` and parsed as `module` says.
fn same_meaning(before: &Lexed, module: &Module, formatted: &str) -> Result<(), FormatError> {
    let after = lex(FileId(0), formatted);
    let kinds = |l: &Lexed| l.tokens.iter().map(|t| t.kind.clone()).collect::<Vec<TokenKind>>();
    if kinds(before) != kinds(&after) {
        return Err(FormatError::Changed("the tokens differ".to_string()));
    }
    // A doc comment's lines lose their trailing whitespace, and nothing else.
    let docs = |l: &Lexed| {
        l.docs
            .iter()
            .map(|(at, text)| (*at, text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")))
            .collect::<Vec<_>>()
    };
    if docs(before) != docs(&after) {
        return Err(FormatError::Changed("the doc comments differ".to_string()));
    }
    let reparsed = parse(FileId(0), formatted);
    if reparsed.diagnostics.iter().any(Diagnostic::is_error) {
        return Err(FormatError::Changed("the result has syntax errors".to_string()));
    }
    if annotation_counts(module) != annotation_counts(&reparsed.module) {
        return Err(FormatError::Changed("an annotation moved to another declaration".to_string()));
    }
    Ok(())
}

/// How many annotations each tool and each release holds, in order: the part of the tree the
/// parser builds from indentation.
fn annotation_counts(module: &Module) -> Vec<usize> {
    let mut counts = Vec::new();
    for item in &module.items {
        match &item.kind {
            ItemKind::Capability { tools, .. } => counts.extend(tools.iter().map(|t| t.annotations.len())),
            ItemKind::Release { annotations, .. } => counts.push(annotations.len()),
            _ => {}
        }
    }
    counts
}

/// The offsets where a declaration, a tool, a statement, a block's value or a match arm starts:
/// a line starting there is not a continuation of the line before.
fn unit_starts(module: &Module) -> Vec<u32> {
    let mut starts = Vec::new();
    for item in &module.items {
        item_starts(item, &mut starts);
    }
    block_starts(&module.body, &mut starts);
    starts.sort_unstable();
    starts.dedup();
    starts
}

fn item_starts(item: &Item, starts: &mut Vec<u32>) {
    starts.push(item.span.start);
    match &item.kind {
        ItemKind::Capability { tools, .. } => {
            for tool in tools {
                // An annotation above the tool's name leads it, as the tool's first line does.
                let leading = tool.annotations.iter().filter(|a| a.span.start < tool.name.span.start);
                starts.extend(leading.map(|a| a.span.start).chain([tool.span.start]));
            }
        }
        ItemKind::Fn(f) => block_starts(&f.body, starts),
        ItemKind::Const { value, .. } => expr_starts(value, starts),
        ItemKind::Measure { default: Some(value), .. } => expr_starts(value, starts),
        _ => {}
    }
}

fn block_starts(block: &Block, starts: &mut Vec<u32>) {
    for stmt in &block.stmts {
        match stmt {
            Stmt::Let { span, value, .. } => {
                starts.push(span.start);
                expr_starts(value, starts);
            }
            Stmt::Expr(e) => {
                starts.push(e.span.start);
                expr_starts(e, starts);
            }
        }
    }
    if let Some(tail) = &block.tail {
        starts.push(tail.span.start);
        expr_starts(tail, starts);
    }
}

/// The starts inside `e`: the statements of its blocks and its match arms.
fn expr_starts(e: &Expr, starts: &mut Vec<u32>) {
    match &e.kind {
        ExprKind::Block(b) | ExprKind::ToLabeled(b) => return block_starts(b, starts),
        ExprKind::If { cond, then, else_ } => {
            expr_starts(cond, starts);
            block_starts(then, starts);
            if let Some(e) = else_ {
                expr_starts(e, starts);
            }
            return;
        }
        ExprKind::For { iter, body, .. } => {
            expr_starts(iter, starts);
            return block_starts(body, starts);
        }
        ExprKind::Match { arms, .. } => starts.extend(arms.iter().map(|a| a.span.start)),
        _ => {}
    }
    e.for_each_child(&mut |child| expr_starts(child, starts));
}
