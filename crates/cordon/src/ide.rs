//! What an editor shows of Cordon files (`cordon lsp`), as plain data over the files' names and
//! byte offsets: a file's problems, the hover at an offset, where a name is declared, what may
//! be written at an offset, and a plan's effect summary. The protocol (positions in UTF-16,
//! URIs, JSON-RPC) is the front end's.
//!
//! An [`Analysis`] is one check, exactly as `cordon check` does it ([`crate::check`]: a plan
//! against its policies, or policies alone), that also keeps what the checker inferred for each
//! binding, and an index of the files' names read from their trees (`cordon_syntax::navigate`).
//! Hover and completion read a binding's type from the checker and the declarations from the
//! index; a binding's label is not inferred here: what is shown is the rule that gives it (the
//! policy's `@label` of the tool whose result it holds).

mod complete;
mod hover;

use std::collections::HashMap;

use cordon_flow::Summary;
use cordon_syntax::navigate::{Decl, DeclKind, Index};
use cordon_syntax::{Diagnostic, FileId, SourceMap, Span};
use cordon_types::{BindingType, CheckOptions};

pub use complete::{Completion, CompletionKind};
pub use hover::Hover;

use crate::{CheckReport, Source};

/// A range of a file: its name (as the [`Source`] named it) and byte offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub start: usize,
    pub end: usize,
}

/// One diagnostic, as an editor shows it on a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub place: Place,
    /// An error (else a warning).
    pub error: bool,
    /// Its stable code (`refinement-unproven`).
    pub code: String,
    /// The message, then the primary label's words, the notes (a counterexample among them)
    /// and the help, a line each.
    pub message: String,
    /// The diagnostic's other labels (each a place and what it says there), and, for a
    /// problem of another file shown on this one, where it is.
    pub related: Vec<(Place, String)>,
}

/// One check of policies and a plan, with what an editor asks of it.
#[derive(Debug)]
pub struct Analysis {
    report: CheckReport,
    plan: Option<FileId>,
    index: Index,
    /// What the checker inferred for each binding, by where its name is written.
    bindings: HashMap<Span, BindingType>,
}

/// Whether `text` is a policy module: it declares a capability or an entry (checked alone, as
/// `cordon check --policy FILE` checks it), rather than a plan.
pub fn is_policy(text: &str) -> bool {
    let module = cordon_syntax::parse(FileId(0), text).module;
    module.capabilities().next().is_some() || cordon_syntax::entry::of([&module]).0.is_some()
}

impl Analysis {
    /// Checks `plan` against `policies` (or `policies` alone) for `user`, as [`crate::check`]
    /// does, with `options`' limits.
    pub fn check(policies: &[Source], plan: Option<&Source>, options: &CheckOptions, user: &str) -> Analysis {
        let options = CheckOptions { record_bindings: true, ..options.clone() };
        let (report, bindings) = crate::workspace::check_keeping_bindings(policies, plan, &options, user);
        let modules: Vec<_> =
            report.sources.files().map(|(id, file)| cordon_syntax::parse(id, &file.text).module).collect();
        let plan_file = plan.map(|_| FileId(policies.len() as u32));
        let (plan_module, policy_modules): (Vec<_>, Vec<_>) = modules.iter().partition(|m| Some(m.file) == plan_file);
        let index = Index::new(&policy_modules, plan_module.first().copied());
        let bindings = bindings.into_iter().map(|b| (b.span, b)).collect();
        Analysis { report, plan: plan_file, index, bindings }
    }

    /// Whether nothing is an error.
    pub fn accepted(&self) -> bool {
        self.report.accepted()
    }

    /// Whether the checker got past parsing (so it inferred the bindings' types).
    pub fn typed(&self) -> bool {
        use cordon_syntax::Code;
        !self
            .report
            .diagnostics
            .iter()
            .any(|d| d.is_error() && matches!(d.code, Code::SyntaxError | Code::NestingTooDeep))
    }

    /// The problems to show on `file`: its own, then each of another file's (a policy's, when
    /// a plan is checked against it) at `file`'s start, naming the other file and pointing at
    /// it.
    pub fn problems(&self, file: &str) -> Vec<Problem> {
        let sources = &self.report.sources;
        let Some(id) = self.file(file) else { return Vec::new() };
        let mut out = Vec::new();
        for d in &self.report.diagnostics {
            let mut problem = problem(d, sources);
            if d.span().file != id {
                let at = problem.place.clone();
                problem.message = format!("in {}: {}", at.file, problem.message);
                problem.related.insert(0, (at, "here".into()));
                problem.place = Place { file: file.to_string(), start: 0, end: 0 };
            }
            out.push(problem);
        }
        out
    }

    /// What the plan may do, as `cordon check --effects` prints it; why not, when the plan is
    /// rejected or there is none.
    pub fn effects(&self) -> String {
        match (&self.report.effects, self.plan) {
            (_, None) => "A policy module alone makes no call: open a plan to see what it may do.\n".into(),
            (Some(summary), Some(_)) => Summary::render(summary),
            (None, Some(_)) => format!(
                "The plan is rejected ({}): what it may do is known once it checks.\n",
                cordon_syntax::render::summary(&self.report.diagnostics).trim_start_matches("rejected: ")
            ),
        }
    }

    /// The text of the file named `name` as it was checked (a policy read from disk, say).
    pub fn source(&self, name: &str) -> Option<&str> {
        self.file(name).map(|id| self.sources().file(id).text.as_str())
    }

    /// The file of this check named `name`.
    fn file(&self, name: &str) -> Option<FileId> {
        self.report.sources.files().find(|(_, f)| f.name == name).map(|(id, _)| id)
    }

    fn sources(&self) -> &SourceMap {
        &self.report.sources
    }

    /// `offset` in `file`, as the index takes it: within the text, at a character's start.
    fn offset(&self, file: FileId, offset: usize) -> u32 {
        let text = &self.sources().file(file).text;
        let mut at = offset.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        u32::try_from(at).unwrap_or(u32::MAX)
    }

    fn place(&self, span: Span) -> Place {
        place(span, self.sources())
    }

    /// The source text of `span`, its lines' common indentation taken off.
    fn text(&self, span: Span) -> String {
        let text = self.sources().get(span.file).map_or("", |f| f.slice(span)).trim();
        text.lines().map(str::trim).collect::<Vec<_>>().join("\n  ")
    }

    /// The type the checker inferred for the binding `decl`, if it is one and the checker got
    /// to it; else, for a binding of the same name at the same place among that name's
    /// bindings in `earlier`'s check of the file (a check from before the last edit, which
    /// parsed).
    fn binding<'a>(&'a self, decl: &Decl, earlier: Option<&'a Analysis>) -> Option<&'a BindingType> {
        if let Some(b) = self.bindings.get(&decl.name.span) {
            return Some(b);
        }
        let earlier = earlier?;
        let file = decl.name.span.file;
        let n = self.index.locals_named(file, &decl.name.name).iter().position(|d| d.name.span == decl.name.span)?;
        let then = earlier.file(&self.sources().file(file).name)?;
        let that = *earlier.index.locals_named(then, &decl.name.name).get(n)?;
        earlier.bindings.get(&that.name.span)
    }

    /// The name of the type of `decl`'s value: the checker's, else what the declaration
    /// writes (a tool call's declared result, for a `let` of one), aliases followed.
    fn type_of(&self, decl: &Decl, earlier: Option<&Analysis>) -> Option<String> {
        let named = if decl.kind.is_local() { self.binding(decl, earlier).and_then(|b| b.named.clone()) } else { None };
        let named = named.or_else(|| decl.type_name.clone()).or_else(|| {
            let call = decl.value.as_ref()?;
            let tool = self.index.member(&self.receiver_type(&call.receiver, earlier)?, &call.name.name)?;
            tool.type_name.clone()
        });
        self.unalias(named?)
    }

    /// `name`, or the type it is an alias of (and so on, a few times at most).
    fn unalias(&self, mut name: String) -> Option<String> {
        for _ in 0..8 {
            match self.index.item(&name, true) {
                Some(d) if d.kind == DeclKind::TypeAlias => name = d.type_name.clone()?,
                _ => return Some(name),
            }
        }
        Some(name)
    }

    /// The name of the type of a receiver written as `names` (`gh`, `issue.author`).
    fn receiver_type(&self, names: &[cordon_syntax::ast::Ident], earlier: Option<&Analysis>) -> Option<String> {
        let (root, fields) = names.split_first()?;
        let decl = self.index.resolve(root.span.file, root.span.start, &root.name, false)?;
        let mut ty = self.type_of(decl, earlier)?;
        for field in fields {
            let member = self.index.member(&ty, &field.name)?;
            ty = self.unalias(member.type_name.clone()?)?;
        }
        Some(ty)
    }
}

/// The place of `span` in `sources`.
fn place(span: Span, sources: &SourceMap) -> Place {
    let file = sources.get(span.file).map(|f| f.name.clone()).unwrap_or_default();
    Place { file, start: span.start as usize, end: span.end as usize }
}

/// `d` as an editor shows it.
fn problem(d: &Diagnostic, sources: &SourceMap) -> Problem {
    let mut message = d.message.clone();
    let primary = d.labels.iter().find(|l| l.primary);
    if let Some(words) = primary.map(|l| l.message.as_str()).filter(|m| !m.is_empty() && *m != d.message) {
        message.push('\n');
        message.push_str(words);
    }
    for note in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related = d
        .labels
        .iter()
        .filter(|l| !l.primary)
        .map(|l| (place(l.span, sources), if l.message.is_empty() { "here".to_string() } else { l.message.clone() }))
        .collect();
    Problem {
        place: place(d.span(), sources),
        error: d.is_error(),
        code: d.code.as_str().to_string(),
        message,
        related,
    }
}
