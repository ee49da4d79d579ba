//! Completion (`ide.rs`): after `x.`, the tools of `x`'s capability or the fields of its
//! record (a builtin method for any other value); elsewhere, the names in scope and the
//! builtins. The context is read from the text before the offset, so it works on a line the
//! parser cannot read yet (`gh.`), with the bindings' types from the last check that parsed.

use cordon_syntax::Builtin;
use cordon_syntax::ast::Ident;
use cordon_syntax::navigate::{Decl, DeclKind};

use super::Analysis;

/// One thing that may be written at the offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    /// A line about it: a tool's or a function's declaration, a binding's type, a builtin's
    /// line of the language reference.
    pub detail: Option<String>,
}

/// What a completion is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    Tool,
    Field,
    Variable,
    Function,
    Constant,
    Type,
    Builtin,
}

impl Analysis {
    /// What may be written at `offset` of `file`; `earlier` is a check of the same files from
    /// before the last edits that parsed (for the types of bindings while the file does not).
    pub fn completions(&self, file: &str, offset: usize, earlier: Option<&Analysis>) -> Vec<Completion> {
        let Some(id) = self.file(file) else { return Vec::new() };
        let at = self.offset(id, offset);
        let text = &self.sources().file(id).text;
        let before = text.get(..at as usize).unwrap_or("");
        let word = before.len() - before.trim_end_matches(is_ident_char).len();
        let start = before.len() - word;
        match before.get(..start).and_then(|b| b.strip_suffix('.')) {
            Some(receiver) => self.members_of(&receiver_names(receiver, id), earlier),
            None => self.in_scope(id, at, earlier),
        }
    }

    /// After `receiver.`: the tools of its capability, the fields of its record, or else the
    /// builtins (which a value may call as methods).
    fn members_of(&self, receiver: &[Ident], earlier: Option<&Analysis>) -> Vec<Completion> {
        let ty = self.receiver_type(receiver, earlier);
        let members = ty.as_deref().map(|t| self.index.members(t)).unwrap_or_default();
        if members.is_empty() {
            return builtins();
        }
        members
            .into_iter()
            .filter(|d| matches!(d.kind, DeclKind::Tool | DeclKind::Field))
            .map(|d| {
                let kind = if d.kind == DeclKind::Tool { CompletionKind::Tool } else { CompletionKind::Field };
                Completion { label: d.name.name.clone(), kind, detail: Some(self.text(d.head)) }
            })
            .collect()
    }

    /// The names visible at `at` (with a binding's type), then the builtins.
    fn in_scope(&self, file: cordon_syntax::FileId, at: u32, earlier: Option<&Analysis>) -> Vec<Completion> {
        let mut out: Vec<Completion> = self
            .index
            .visible(file, at)
            .into_iter()
            .filter(|d| !d.name.name.is_empty() && d.kind != DeclKind::Measure)
            .map(|d| self.completion(d, earlier))
            .collect();
        out.extend(builtins());
        out
    }

    fn completion(&self, d: &Decl, earlier: Option<&Analysis>) -> Completion {
        let kind = match d.kind {
            DeclKind::Let | DeclKind::Param | DeclKind::Bound => CompletionKind::Variable,
            DeclKind::Function => CompletionKind::Function,
            DeclKind::Constant => CompletionKind::Constant,
            _ => CompletionKind::Type,
        };
        let detail = match kind {
            CompletionKind::Variable => self.binding(d, earlier).map(|b| b.ty.clone()),
            _ => Some(self.text(d.head)),
        };
        Completion { label: d.name.name.clone(), kind, detail }
    }
}

/// The builtins a plan may call, with their lines of the language reference.
fn builtins() -> Vec<Completion> {
    Builtin::PLAN
        .iter()
        .map(|b| {
            let shown: Vec<&str> = b.listed().iter().map(|(_, line)| *line).collect();
            Completion { label: b.name().to_string(), kind: CompletionKind::Builtin, detail: Some(shown.join("; ")) }
        })
        .collect()
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The names a receiver written just before a `.` is made of (`issue.author` in
/// `issue.author.`), with their spans in `file`; none if it is something else (a call).
fn receiver_names(text: &str, file: cordon_syntax::FileId) -> Vec<Ident> {
    let mut names = Vec::new();
    let mut end = text.len();
    loop {
        // Only ASCII is stepped over, so every cut is at a character's start.
        let part = text.get(..end).unwrap_or("");
        let rest = part.trim_end_matches(is_ident_char);
        let name = part.get(rest.len()..).unwrap_or("");
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return Vec::new();
        }
        let at = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        names.push(Ident { name: name.to_string(), span: cordon_syntax::Span::new(file, at(rest.len()), at(end)) });
        match rest.strip_suffix('.') {
            Some(before) => end = before.len(),
            None => break,
        }
    }
    names.reverse();
    names
}
