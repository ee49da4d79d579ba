//! The one diagnostic type every stage reports with. Renderers live in [`crate::render`].

use crate::span::Span;

/// Stable, kebab-case identifiers of every diagnostic. Never renamed: tests, models and tools
/// match on them. `docs/language.md` lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    SyntaxError,
    NestingTooDeep,
    UndefinedName,
    UndefinedType,
    UndefinedField,
    UndefinedVariant,
    UndefinedMethod,
    DuplicateDefinition,
    UnknownAnnotation,
    InvalidAnnotation,
    HostDeclarationInPlan,
    StatementInPolicy,
    TypeMismatch,
    WrongArgCount,
    NotCallable,
    MissingField,
    CannotInfer,
    NonExhaustiveMatch,
    RefinementUnproven,
    RefinementUnknown,
    UnsupportedRefinement,
    LinearUnused,
    LinearReused,
    LinearBranchMismatch,
    LinearCaptured,
    LinearInLoop,
    LinearInCollection,
    LinearNotReturned,
    ForgedHostValue,
    CapabilityStored,
    CapabilityEscapes,
    MeasureOutsideRefinement,
    ImplicitLabel,
    // Run-time errors: a checked program that stopped while running.
    ArithmeticError,
    OutOfRange,
    LimitReached,
    LabelFlow,
    RecheckFailed,
    ForgedValue,
    ToolFailed,
    ToolContract,
    RuntimeTypeError,
    ConstantCycle,
    HoleUnfilled,
}

impl Code {
    pub const ALL: &'static [Code] = &[
        Code::SyntaxError,
        Code::NestingTooDeep,
        Code::UndefinedName,
        Code::UndefinedType,
        Code::UndefinedField,
        Code::UndefinedVariant,
        Code::UndefinedMethod,
        Code::DuplicateDefinition,
        Code::UnknownAnnotation,
        Code::InvalidAnnotation,
        Code::HostDeclarationInPlan,
        Code::StatementInPolicy,
        Code::TypeMismatch,
        Code::WrongArgCount,
        Code::NotCallable,
        Code::MissingField,
        Code::CannotInfer,
        Code::NonExhaustiveMatch,
        Code::RefinementUnproven,
        Code::RefinementUnknown,
        Code::UnsupportedRefinement,
        Code::LinearUnused,
        Code::LinearReused,
        Code::LinearBranchMismatch,
        Code::LinearCaptured,
        Code::LinearInLoop,
        Code::LinearInCollection,
        Code::LinearNotReturned,
        Code::ForgedHostValue,
        Code::CapabilityStored,
        Code::CapabilityEscapes,
        Code::MeasureOutsideRefinement,
        Code::ImplicitLabel,
        Code::ArithmeticError,
        Code::OutOfRange,
        Code::LimitReached,
        Code::LabelFlow,
        Code::RecheckFailed,
        Code::ForgedValue,
        Code::ToolFailed,
        Code::ToolContract,
        Code::RuntimeTypeError,
        Code::ConstantCycle,
        Code::HoleUnfilled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::SyntaxError => "syntax-error",
            Code::NestingTooDeep => "nesting-too-deep",
            Code::UndefinedName => "undefined-name",
            Code::UndefinedType => "undefined-type",
            Code::UndefinedField => "undefined-field",
            Code::UndefinedVariant => "undefined-variant",
            Code::UndefinedMethod => "undefined-method",
            Code::DuplicateDefinition => "duplicate-definition",
            Code::UnknownAnnotation => "unknown-annotation",
            Code::InvalidAnnotation => "invalid-annotation",
            Code::HostDeclarationInPlan => "host-declaration-in-plan",
            Code::StatementInPolicy => "statement-in-policy",
            Code::TypeMismatch => "type-mismatch",
            Code::WrongArgCount => "wrong-arg-count",
            Code::NotCallable => "not-callable",
            Code::MissingField => "missing-field",
            Code::CannotInfer => "cannot-infer",
            Code::NonExhaustiveMatch => "non-exhaustive-match",
            Code::RefinementUnproven => "refinement-unproven",
            Code::RefinementUnknown => "refinement-unknown",
            Code::UnsupportedRefinement => "unsupported-refinement",
            Code::LinearUnused => "linear-unused",
            Code::LinearReused => "linear-reused",
            Code::LinearBranchMismatch => "linear-branch-mismatch",
            Code::LinearCaptured => "linear-captured",
            Code::LinearInLoop => "linear-in-loop",
            Code::LinearInCollection => "linear-in-collection",
            Code::LinearNotReturned => "linear-not-returned",
            Code::ForgedHostValue => "forged-host-value",
            Code::CapabilityStored => "capability-stored",
            Code::CapabilityEscapes => "capability-escapes",
            Code::MeasureOutsideRefinement => "measure-outside-refinement",
            Code::ImplicitLabel => "implicit-label",
            Code::ArithmeticError => "arithmetic-error",
            Code::OutOfRange => "out-of-range",
            Code::LimitReached => "limit-reached",
            Code::LabelFlow => "label-flow",
            Code::RecheckFailed => "recheck-failed",
            Code::ForgedValue => "forged-value",
            Code::ToolFailed => "tool-failed",
            Code::ToolContract => "tool-contract",
            Code::RuntimeTypeError => "runtime-type-error",
            Code::ConstantCycle => "constant-cycle",
            Code::HoleUnfilled => "hole-unfilled",
        }
    }

    /// The code with this kebab-case name.
    pub fn named(s: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A span with a short message; the primary label marks where the problem is.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    pub primary: bool,
}

/// One problem found in a program: a code, a terse primary message, labelled spans (the first
/// is primary), notes (facts, counterexamples) and an optional fix hint.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            labels: vec![Label { span, message: String::new(), primary: true }],
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn warning(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(code, span, message) }
    }

    /// Sets the message shown under the primary span.
    pub fn with_primary_label(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(l) = self.labels.iter_mut().find(|l| l.primary) {
            l.message = message.into();
        }
        self
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { span, message: message.into(), primary: false });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// The primary span (every diagnostic has one).
    pub fn span(&self) -> Span {
        self.labels.iter().find(|l| l.primary).or(self.labels.first()).map(|l| l.span).unwrap_or(Span::new(
            crate::span::FileId(0),
            0,
            0,
        ))
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
