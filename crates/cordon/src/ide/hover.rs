//! Hover and go to definition (`ide.rs`): what the name at an offset stands for, shown as
//! Markdown, and where it is declared.

use cordon_syntax::Span;
use cordon_syntax::builtins::{Builtin, Group};
use cordon_syntax::navigate::{Decl, DeclKind, Name};

use super::{Analysis, Place};

/// What is shown on hovering a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    /// The name hovered.
    pub place: Place,
    /// Markdown: the declaration as written (a binding with its type), then its doc and its
    /// label.
    pub text: String,
}

/// What a name stands for.
enum Target<'a> {
    Decl(&'a Decl),
    Builtin(Builtin),
}

impl Analysis {
    /// What the name at `offset` of `file` stands for, shown.
    pub fn hover(&self, file: &str, offset: usize) -> Option<Hover> {
        let (span, target) = self.target(file, offset)?;
        let text = match target {
            Target::Decl(d) => self.describe(d),
            Target::Builtin(b) => builtin(b),
        };
        Some(Hover { place: self.place(span), text })
    }

    /// Where the name at `offset` of `file` is declared (in another file, for a policy's).
    pub fn definition(&self, file: &str, offset: usize) -> Option<Place> {
        match self.target(file, offset)?.1 {
            Target::Decl(d) => Some(self.place(d.name.span)),
            Target::Builtin(_) => None,
        }
    }

    /// The name at `offset` of `file` and what it stands for: a member by its receiver's type
    /// (a capability's tool before a builtin of the same name).
    fn target(&self, file: &str, offset: usize) -> Option<(Span, Target<'_>)> {
        let id = self.file(file)?;
        Some(match self.index.at(id, self.offset(id, offset))? {
            Name::Declared(d) => (d.name.span, Target::Decl(d)),
            Name::Used { id, decl: Some(d), .. } => (id.span, Target::Decl(d)),
            Name::Used { id, decl: None, builtin } => (id.span, Target::Builtin(builtin?)),
            Name::Member(m, builtin) => {
                let ty = self.receiver_type(&m.receiver, None);
                match (ty.and_then(|t| self.index.member(&t, &m.name.name)), builtin) {
                    (Some(d), _) => (m.name.span, Target::Decl(d)),
                    (None, Some(b)) => (m.name.span, Target::Builtin(b)),
                    (None, None) => return None,
                }
            }
            Name::Of { id, parent } => (id.span, Target::Decl(self.index.member(parent, &id.name)?)),
        })
    }

    /// A declaration shown: a binding with its type, anything else as written; what it is;
    /// its doc; its label.
    fn describe(&self, d: &Decl) -> String {
        let mut out = if d.kind.is_local() {
            match self.bindings.get(&d.name.span) {
                Some(b) => code(&format!("{}: {}", d.name.name, b.ty)),
                None if d.type_name.is_some() => code(&self.text(d.head)),
                None => code(&self.text(d.head)) + "\nits type is not known: the checker did not get to it\n",
            }
        } else {
            code(&self.text(d.head))
        };
        let what = match &d.parent {
            Some(parent) => format!("{} of `{parent}`", d.kind.noun()),
            None => d.kind.noun().to_string(),
        };
        out.push_str(&format!("\n*{what}*\n"));
        if let Some(doc) = &d.doc {
            out.push_str(&format!("\n{}\n", doc.trim()));
        }
        if let Some(label) = self.label(d) {
            out.push_str(&format!("\n{label}\n"));
        }
        out
    }

    /// What a declaration says of labels: a tool's result, a field's, a binding's (what the
    /// label analysis found it may carry, when the plan got that far).
    fn label(&self, d: &Decl) -> Option<String> {
        let inferred = self.report.effects.as_ref().and_then(|summary| summary.bindings.get(&d.name.span));
        if let (true, Some(bounds)) = (d.kind.is_local(), inferred) {
            let at_most = bounds.hi.describe();
            return Some(if bounds.lo == bounds.hi {
                format!("**Label**: {at_most}.")
            } else {
                format!(
                    "**Label**: at most {at_most}, at least {} (it depends on the path taken).",
                    bounds.lo.describe()
                )
            });
        }
        let returns = |tool: &Decl| match tool.labels.iter().find(|(k, _)| k.as_deref() == Some("returns")) {
            Some((_, value)) => format!("`{}`", self.text(*value)),
            None => "not declared by the policy: secret to the user, vouched for by no one (the default)".into(),
        };
        match d.kind {
            DeclKind::Tool if d.type_name.is_some() => Some(format!("**Label** of its result: {}.", returns(d))),
            DeclKind::Field => {
                let (_, value) = d.labels.first()?;
                Some(format!("**Label** of this field in every value a tool returns: `{}`.", self.text(*value)))
            }
            DeclKind::Let => {
                let call = d.value.as_ref();
                let tool = call.and_then(|c| {
                    let ty = self.receiver_type(&c.receiver, None)?;
                    Some((ty.clone(), self.index.member(&ty, &c.name.name)?))
                });
                Some(match tool {
                    Some((capability, tool)) => {
                        format!("**Label**: that of `{capability}.{}`'s result, {}.", tool.name.name, returns(tool))
                    }
                    None => "**Label**: that of what it is computed from, joined; the run time carries it with \
                             the value, and the effect summary bounds where it may go."
                        .into(),
                })
            }
            _ => None,
        }
    }
}

/// A fenced block of Cordon source.
fn code(text: &str) -> String {
    format!("```cordon\n{text}\n```\n")
}

/// A builtin shown: how the language reference lists it, and where.
fn builtin(b: Builtin) -> String {
    if let Builtin::Label(_) = b {
        return code(&format!("{}(..)", b.name())) + "\n*label function*, for a policy's `@label` values\n";
    }
    let lines: Vec<&str> = b.listed().iter().map(|(_, shown)| *shown).collect();
    let groups: Vec<&str> = b.listed().iter().map(|(group, _)| group_name(*group)).collect();
    let shown = if lines.is_empty() { b.name().to_string() } else { lines.join("\n") };
    format!("```text\n{shown}\n```\n\n*builtin* ({})\n", groups.join(", "))
}

fn group_name(group: Group) -> &'static str {
    match group {
        Group::Lists => "lists",
        Group::Strings => "strings",
        Group::OptionsAndResults => "options and results",
        Group::Numbers => "numbers",
        Group::Maps => "maps",
        Group::Times => "dates and times",
        Group::LabeledValues => "labeled values",
    }
}
