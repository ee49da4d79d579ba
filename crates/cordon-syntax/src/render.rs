//! Renderers for [`Diagnostic`]s, all pure functions from a diagnostic and its sources to text:
//!
//! - [`human`]: a rustc-style report with source snippets, carets under the primary span and
//!   dashes under secondary spans, for people at a terminal;
//! - [`concise`]: a few short lines per diagnostic, for models (every fact, few tokens);
//! - [`json`]: a versioned, stable schema for tools, documented in `docs/diagnostics.md`;
//! - [`summary`]: the one-line verdict ("accepted", "rejected: 2 errors").
//!
//! Spans come from model-written programs and may be wrong: offsets past the end of a file, in
//! the middle of a character, reversed, or in a file the map does not hold. Every renderer clamps
//! instead of panicking. Source text is also untrusted, so the text renderers write every
//! character a terminal would hide or obey (`cordon_text`'s class: an escape sequence or a
//! right-to-left override in a string literal must not reach the reviewer's terminal) as
//! `\u{hex}`, and expand tabs, so that carets stay aligned.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::diagnostic::{Diagnostic, Label, Severity};
use crate::span::{FileId, SourceFile, SourceMap, Span};

/// Columns a tab takes in a rendered snippet (rustc uses the same).
const TAB_WIDTH: usize = 4;

/// Intermediate lines of a multi-line span shown in full; longer spans show `...` instead.
const MAX_INNER_LINES: u32 = 3;

/// The full report for one diagnostic, every line ending in `\n`:
///
/// ```text
/// error[type-mismatch]: expected `Int`, found `String`
///  --> plan.cord:3:14
///   |
/// 3 | let x: Int = "a";
///   |        ---   ^^^ expected `Int`
///   |        |
///   |        expected because of this
///   |
///   = note: ...
///   = help: ...
/// ```
///
/// Labels in other files (a policy module) get their own `-->` block after the primary file's.
pub fn human(d: &Diagnostic, sources: &SourceMap) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}[{}]: {}", severity_word(d.severity), d.code.as_str(), one_line(&d.message));

    let blocks: Vec<Block<'_>> =
        group_by_file(d).into_iter().map(|(file, labels)| Block::new(sources, file, &labels)).collect();
    let width = blocks.iter().map(Block::max_line).max().unwrap_or(1).to_string().len();
    let pad = " ".repeat(width);

    if blocks.is_empty() {
        // No label at all: still say where, as `Diagnostic::span` does.
        let _ = writeln!(out, "{pad}--> {}", locate(sources, d.span()).position());
    }
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(out, "{pad} |");
        }
        block.render(&mut out, width);
    }

    if !d.notes.is_empty() || d.help.is_some() {
        if !blocks.is_empty() {
            let _ = writeln!(out, "{pad} |");
        }
        for note in &d.notes {
            write_indented(&mut out, &format!("{pad} = note: "), note);
        }
        if let Some(help) = &d.help {
            write_indented(&mut out, &format!("{pad} = help: "), help);
        }
    }
    out
}

/// A compact report for models, every line ending in `\n`: the location and message on one
/// line, then the primary source line (without its indentation) with carets under the span and
/// the primary label, each secondary label with its location, the notes and the help.
///
/// ```text
/// plan.cord:3:14: error[type-mismatch]: expected `Int`, found `String`
///   | let x: Int = "a";
///   |              ^^^ expected `Int`
///   - plan.cord:3:8: expected because of this
///   note: ...
///   help: ...
/// ```
pub fn concise(d: &Diagnostic, sources: &SourceMap) -> String {
    let mut out = String::new();
    let primary = primary_index(d);
    let at = locate(sources, d.span());
    let _ = writeln!(
        out,
        "{}: {}[{}]: {}",
        at.position(),
        severity_word(d.severity),
        d.code.as_str(),
        one_line(&d.message)
    );
    let primary_message = primary.and_then(|i| d.labels.get(i)).map(|l| one_line(&l.message)).unwrap_or_default();
    let mut caret_drawn = false;
    if let Some(file) = at.file {
        // The line without its indentation, and the caret under the span's columns in it.
        let full = one_line(file.line(at.line));
        let text = full.trim_end();
        let indent = text.chars().take_while(|c| c.is_whitespace()).count();
        let shown = text.trim_start();
        if !shown.is_empty() {
            let _ = writeln!(out, "  | {shown}");
            let length = shown.chars().count();
            let column = usize::try_from(at.column).unwrap_or(usize::MAX).saturating_sub(1).saturating_sub(indent);
            let column = column.min(length);
            let width = if at.end_line == at.line {
                usize::try_from(at.end_column.saturating_sub(at.column)).unwrap_or(1)
            } else {
                length - column
            };
            let carets = "^".repeat(width.clamp(1, (length - column).max(1)));
            let message = if primary_message.is_empty() { String::new() } else { format!(" {primary_message}") };
            let _ = writeln!(out, "  | {}{carets}{message}", " ".repeat(column));
            caret_drawn = true;
        }
    }
    for (i, label) in d.labels.iter().enumerate() {
        let message = one_line(&label.message);
        if Some(i) == primary {
            if !message.is_empty() && !caret_drawn {
                let _ = writeln!(out, "  ^ {message}");
            }
        } else if message.is_empty() {
            let _ = writeln!(out, "  - {}", locate(sources, label.span).position());
        } else {
            let _ = writeln!(out, "  - {}: {message}", locate(sources, label.span).position());
        }
    }
    for note in &d.notes {
        write_indented(&mut out, "  note: ", note);
    }
    if let Some(help) = &d.help {
        write_indented(&mut out, "  help: ", help);
    }
    out
}

/// The diagnostics as a JSON value of schema version 1 (documented in `docs/diagnostics.md`):
/// `{"version": 1, "diagnostics": [{"code", "severity", "message", "file", "line", "column",
/// "end_line", "end_column", "labels": [...], "notes": [...], "help"}]}`. Lines and columns are
/// 1-based, columns count characters, ends are exclusive.
pub fn json(diagnostics: &[Diagnostic], sources: &SourceMap) -> Value {
    let diagnostics: Vec<Value> = diagnostics.iter().map(|d| diagnostic_json(d, sources)).collect();
    json!({ "version": 1, "diagnostics": diagnostics })
}

/// The verdict in a few words: `accepted`, `accepted with 1 warning`, `rejected: 2 errors` or
/// `rejected: 1 error, 3 warnings`. A program is accepted if and only if no diagnostic is an
/// error.
pub fn summary(diagnostics: &[Diagnostic]) -> String {
    let errors = diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
    match (errors, warnings) {
        (0, 0) => "accepted".to_string(),
        (0, w) => format!("accepted with {}", plural(w, "warning")),
        (e, 0) => format!("rejected: {}", plural(e, "error")),
        (e, w) => format!("rejected: {}, {}", plural(e, "error"), plural(w, "warning")),
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn diagnostic_json(d: &Diagnostic, sources: &SourceMap) -> Value {
    let at = locate(sources, d.span());
    let labels: Vec<Value> = d.labels.iter().map(|l| label_json(l, sources)).collect();
    json!({
        "code": d.code.as_str(),
        "severity": severity_word(d.severity),
        "message": d.message,
        "file": at.name,
        "line": at.line,
        "column": at.column,
        "end_line": at.end_line,
        "end_column": at.end_column,
        "labels": labels,
        "notes": d.notes,
        "help": d.help,
    })
}

fn label_json(label: &Label, sources: &SourceMap) -> Value {
    let at = locate(sources, label.span);
    json!({
        "file": at.name,
        "line": at.line,
        "column": at.column,
        "end_line": at.end_line,
        "end_column": at.end_column,
        "byte_start": at.start,
        "byte_end": at.end,
        "message": label.message,
        "primary": label.primary,
    })
}

/// The label [`Diagnostic::span`] reports: the first primary one, else the first.
fn primary_index(d: &Diagnostic) -> Option<usize> {
    d.labels.iter().position(|l| l.primary).or(if d.labels.is_empty() { None } else { Some(0) })
}

/// Labels grouped by file: the primary label's file first, then the others in order of first
/// appearance; within a group the primary label comes first.
fn group_by_file(d: &Diagnostic) -> Vec<(FileId, Vec<(&Label, bool)>)> {
    let primary = primary_index(d);
    let mut order: Vec<usize> = primary.into_iter().collect();
    order.extend((0..d.labels.len()).filter(|&i| Some(i) != primary));
    let mut groups: Vec<(FileId, Vec<(&Label, bool)>)> = Vec::new();
    for i in order {
        let Some(label) = d.labels.get(i) else {
            continue;
        };
        let entry = (label, Some(i) == primary);
        match groups.iter_mut().find(|(f, _)| *f == label.span.file) {
            Some((_, labels)) => labels.push(entry),
            None => groups.push((label.span.file, vec![entry])),
        }
    }
    groups
}

fn file_of(sources: &SourceMap, id: FileId) -> Option<&SourceFile> {
    sources.files().find(|(i, _)| *i == id).map(|(_, f)| f)
}

/// A span resolved against its file, offsets clamped into the text and onto character
/// boundaries; positions are 1-based, columns in characters, the end exclusive.
struct Located<'a> {
    file: Option<&'a SourceFile>,
    name: String,
    start: u32,
    end: u32,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
}

impl Located<'_> {
    fn position(&self) -> String {
        format!("{}:{}:{}", self.name, self.line, self.column)
    }
}

fn locate(sources: &SourceMap, span: Span) -> Located<'_> {
    let Some(file) = file_of(sources, span.file) else {
        // A caller bug; keep the offsets so the report still says something.
        return Located {
            file: None,
            name: format!("<unknown file {}>", span.file.0),
            start: span.start,
            end: span.end.max(span.start),
            line: 1,
            column: 1,
            end_line: 1,
            end_column: 1,
        };
    };
    let start = clamp(&file.text, span.start);
    let end = clamp(&file.text, span.end).max(start);
    let (line, column) = file.line_col(start);
    let (end_line, end_column) = file.line_col(end);
    Located { file: Some(file), name: file.name.clone(), start, end, line, column, end_line, end_column }
}

/// `offset` moved into `text` and back onto the start of the character it falls in.
fn clamp(text: &str, offset: u32) -> u32 {
    let mut o = (offset as usize).min(text.len());
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    // `o <= offset`, so it fits.
    u32::try_from(o).unwrap_or(offset)
}

/// A message on one line: line breaks and tabs become spaces, [hidden](cordon_text::guard)
/// characters are written as `\u{hex}`.
fn one_line(s: &str) -> String {
    cordon_text::guard(&s.replace(['\n', '\r', '\t'], " "))
}

/// How a hidden character is written in a snippet: as `\u{hex}`, the width its column takes.
fn hidden_as(c: char) -> Option<String> {
    cordon_text::is_hidden(c).then(|| format!("\\u{{{:x}}}", c as u32))
}

/// Writes `first_prefix` and the text's first line, then its other lines indented to match.
fn write_indented(out: &mut String, first_prefix: &str, text: &str) {
    let indent = " ".repeat(first_prefix.chars().count());
    for (i, line) in text.split('\n').enumerate() {
        let prefix = if i == 0 { first_prefix } else { &indent };
        let _ = writeln!(out, "{}", format!("{prefix}{}", one_line(line)).trim_end());
    }
}

/// Columns a source character takes once rendered.
fn char_width(c: char) -> usize {
    match c {
        '\t' => TAB_WIDTH,
        c => hidden_as(c).map_or(1, |shown| shown.len()),
    }
}

/// A source line as shown: tabs expanded, hidden characters written as `\u{hex}` (carets
/// count their width).
fn expand(line: &str) -> String {
    let mut s = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\t' => s.push_str(&" ".repeat(TAB_WIDTH)),
            c => match hidden_as(c) {
                Some(shown) => s.push_str(&shown),
                None => s.push(c),
            },
        }
    }
    s
}

/// The 0-based rendered column of the 1-based character column `column` of `line`; columns
/// past the end of the line count one each.
fn display_col(line: &str, column: u32) -> usize {
    let before = column.saturating_sub(1) as usize;
    let widths: usize = line.chars().take(before).map(char_width).sum();
    widths + before.saturating_sub(line.chars().count())
}

/// A marked stretch of one rendered line: `start..end` in rendered columns, never empty.
struct Segment {
    line: u32,
    start: usize,
    end: usize,
    primary: bool,
    message: String,
}

/// What one file contributes to a human report.
enum Block<'a> {
    Snippet {
        file: &'a SourceFile,
        header: String,
        /// Lines to show, sorted, without duplicates.
        lines: Vec<u32>,
        segments: Vec<Segment>,
    },
    /// Labels in a file the map does not hold: their positions and messages, no snippet.
    Unknown { labels: Vec<(String, String)> },
}

impl<'a> Block<'a> {
    fn new(sources: &'a SourceMap, id: FileId, labels: &[(&Label, bool)]) -> Block<'a> {
        let Some(file) = file_of(sources, id) else {
            let labels = labels
                .iter()
                .map(|(l, _)| {
                    let at = locate(sources, l.span);
                    (format!("{} (bytes {}..{})", at.name, at.start, at.end), one_line(&l.message))
                })
                .collect();
            return Block::Unknown { labels };
        };
        let header = labels.first().map(|(l, _)| locate(sources, l.span).position()).unwrap_or_default();
        let mut lines = Vec::new();
        let mut segments = Vec::new();
        for (label, primary) in labels {
            label_segments(sources, file, label, *primary, &mut lines, &mut segments);
        }
        lines.sort_unstable();
        lines.dedup();
        Block::Snippet { file, header, lines, segments }
    }

    fn max_line(&self) -> u32 {
        match self {
            Block::Snippet { lines, .. } => lines.last().copied().unwrap_or(1),
            Block::Unknown { .. } => 1,
        }
    }

    fn render(&self, out: &mut String, width: usize) {
        let pad = " ".repeat(width);
        match self {
            Block::Unknown { labels } => {
                for (at, message) in labels {
                    if message.is_empty() {
                        let _ = writeln!(out, "{pad}--> {at}");
                    } else {
                        let _ = writeln!(out, "{pad}--> {at}: {message}");
                    }
                }
            }
            Block::Snippet { file, header, lines, segments } => {
                let _ = writeln!(out, "{pad}--> {header}");
                let _ = writeln!(out, "{pad} |");
                let mut previous: Option<u32> = None;
                for &line in lines {
                    if let Some(p) = previous {
                        if line == p + 2 {
                            // Showing the one line between costs no more than `...`.
                            render_line(out, width, file, p + 1, &[]);
                        } else if line > p + 2 {
                            let _ = writeln!(out, "...");
                        }
                    }
                    let on_line: Vec<&Segment> = segments.iter().filter(|s| s.line == line).collect();
                    render_line(out, width, file, line, &on_line);
                    previous = Some(line);
                }
            }
        }
    }
}

/// The segments (one, or two for a multi-line span) and extra lines one label needs.
fn label_segments(
    sources: &SourceMap,
    file: &SourceFile,
    label: &Label,
    primary: bool,
    lines: &mut Vec<u32>,
    segments: &mut Vec<Segment>,
) {
    let at = locate(sources, label.span);
    let text = file.text.as_str();
    let start = at.start as usize;
    // A span ending in a line break marks only its line, not the start of the next one.
    let mut end = at.end as usize;
    while end > start + 1 && matches!(text.as_bytes().get(end - 1), Some(b'\n' | b'\r')) {
        end -= 1;
    }
    let message = one_line(&label.message);
    let first_text = file.line(at.line);
    let first_col = display_col(first_text, at.column);

    let Some(last_char) = text.get(start..end).and_then(|s| s.chars().next_back()) else {
        // An empty span gets one caret.
        lines.push(at.line);
        segments.push(Segment { line: at.line, start: first_col, end: first_col + 1, primary, message });
        return;
    };
    let last_offset = u32::try_from(end - last_char.len_utf8()).unwrap_or(at.start);
    let (last_line, last_column) = file.line_col(last_offset);
    let last_text = file.line(last_line);
    let last_end = display_col(last_text, last_column) + char_width(last_char);

    lines.push(at.line);
    if last_line == at.line {
        segments.push(Segment { line: at.line, start: first_col, end: last_end.max(first_col + 1), primary, message });
        return;
    }
    // Multi-line: from the start to the end of the first line, then from the indentation of the
    // last line to the end, which carries the message.
    let first_end = expand(first_text).chars().count().max(first_col + 1);
    segments.push(Segment { line: at.line, start: first_col, end: first_end, primary, message: String::new() });
    let indent = display_col(last_text, 1 + last_text.chars().take_while(|c| matches!(c, ' ' | '\t')).count() as u32);
    let last_start = indent.min(last_end - 1);
    segments.push(Segment { line: last_line, start: last_start, end: last_end, primary, message });
    lines.push(last_line);
    if last_line - at.line - 1 <= MAX_INNER_LINES {
        lines.extend(at.line + 1..last_line);
    }
}

/// One source line, then its markers: `^` under primary segments, `-` under secondary ones
/// (primary drawn last so it wins where they overlap), the rightmost segment's message after
/// the markers and the other messages hanging below, rustc-style.
fn render_line(out: &mut String, width: usize, file: &SourceFile, line: u32, segments: &[&Segment]) {
    let pad = " ".repeat(width);
    let text = expand(file.line(line));
    let _ = writeln!(out, "{}", format!("{line:>width$} | {text}").trim_end());
    if segments.is_empty() {
        return;
    }
    let mut segments = segments.to_vec();
    segments.sort_by_key(|s| (s.start, s.end));

    let max_end = segments.iter().map(|s| s.end).max().unwrap_or(0);
    let mut marks = vec![' '; max_end];
    for primary in [false, true] {
        for s in segments.iter().filter(|s| s.primary == primary) {
            for m in marks.iter_mut().take(s.end).skip(s.start) {
                *m = if primary { '^' } else { '-' };
            }
        }
    }
    let marks: String = marks.into_iter().collect();
    let inline = segments.last().filter(|s| !s.message.is_empty());
    match inline {
        Some(s) => {
            let _ = writeln!(out, "{pad} | {} {}", marks.trim_end(), s.message);
        }
        None => {
            let _ = writeln!(out, "{pad} | {}", marks.trim_end());
        }
    }

    let hanging: Vec<&Segment> = segments[..segments.len() - usize::from(inline.is_some())]
        .iter()
        .copied()
        .filter(|s| !s.message.is_empty())
        .collect();
    for i in (0..hanging.len()).rev() {
        let mut bars = String::new();
        for s in &hanging[..=i] {
            pad_to(&mut bars, s.start);
            bars.push('|');
        }
        let _ = writeln!(out, "{pad} | {bars}");
        let mut text = String::new();
        for s in &hanging[..i] {
            pad_to(&mut text, s.start);
            text.push('|');
        }
        pad_to(&mut text, hanging[i].start);
        text.push_str(&hanging[i].message);
        let _ = writeln!(out, "{pad} | {text}");
    }
}

/// Pads `s` with spaces up to `column` characters (no-op if it is already that long).
fn pad_to(s: &mut String, column: usize) {
    let len = s.chars().count();
    if len < column {
        s.push_str(&" ".repeat(column - len));
    }
}
