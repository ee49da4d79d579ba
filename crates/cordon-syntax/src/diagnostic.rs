//! The one diagnostic type every stage reports with. Renderers live in [`crate::render`].

use crate::span::Span;

/// Declares the codes once: the variant, its stable name and a one-line summary, in order.
macro_rules! codes {
    ($( $variant:ident = $name:literal : $summary:literal, )*) => {
        /// Stable, kebab-case identifiers of every diagnostic. Never renamed: tests, models and
        /// tools match on them. `docs/diagnostics.md` lists them (a test checks it does).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $variant, )*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            pub fn as_str(self) -> &'static str {
                match self {
                    $( Code::$variant => $name, )*
                }
            }

            /// What the code means, in one line.
            pub fn summary(self) -> &'static str {
                match self {
                    $( Code::$variant => $summary, )*
                }
            }
        }
    };
}

codes! {
    SyntaxError = "syntax-error": "the text does not parse",
    NestingTooDeep = "nesting-too-deep": "expressions or types nested deeper than the parser allows",
    UndefinedName = "undefined-name": "a name that is not in scope",
    UndefinedType = "undefined-type": "a type that is not declared",
    UndefinedField = "undefined-field": "a field the record does not have",
    UndefinedVariant = "undefined-variant": "a variant the enum does not have",
    UndefinedMethod = "undefined-method": "a method no builtin, function or tool provides",
    DuplicateDefinition = "duplicate-definition": "a name defined twice in one scope",
    UnknownAnnotation = "unknown-annotation": "an annotation other than `@approval`, `@card` or `@label`",
    InvalidAnnotation = "invalid-annotation": "an annotation with a malformed or ill-typed value",
    HostDeclarationInPlan = "host-declaration-in-plan": "a plan declares what only a policy may",
    StatementInPolicy = "statement-in-policy": "a policy module with statements to run",
    TypeMismatch = "type-mismatch": "a value of the wrong type",
    WrongArgCount = "wrong-arg-count": "a call with too many or too few arguments",
    NotCallable = "not-callable": "a call of something that is not a function",
    MissingField = "missing-field": "a record literal without one of its fields",
    CannotInfer = "cannot-infer": "a type the checker cannot infer: annotate it",
    NonExhaustiveMatch = "non-exhaustive-match": "a `match` that misses a case",
    RefinementUnproven = "refinement-unproven": "a refinement the solver cannot prove",
    RefinementUnknown = "refinement-unknown": "a refinement the solver could not decide in time: a rejection",
    UnsupportedRefinement = "unsupported-refinement": "a refinement outside the logic the solver reasons in",
    LinearUnused = "linear-unused": "a linear value not used",
    LinearReused = "linear-reused": "a linear value used twice",
    LinearBranchMismatch = "linear-branch-mismatch": "branches that use different linear values",
    LinearCaptured = "linear-captured": "a closure, `to_labeled` block or fill that uses an outer linear value",
    LinearInLoop = "linear-in-loop": "a loop body that uses an outer linear value",
    LinearInCollection = "linear-in-collection": "a list or `Labeled` value holding a linear value",
    LinearNotReturned = "linear-not-returned": "a linear input the plan does not hand back",
    ForgedHostValue = "forged-host-value": "a host-made value built by a literal, constructor or cast",
    CapabilityStored = "capability-stored": "a capability stored in data",
    CapabilityEscapes = "capability-escapes": "a capability returned or otherwise escaping",
    MeasureOutsideRefinement = "measure-outside-refinement": "a measure used outside a refinement",
    CheckTimeout = "check-timeout": "the check ran out of its time (`--check-timeout-ms`): a rejection",
    InvalidPattern = "invalid-pattern": "a regular expression that does not parse or is over the size limits",
    ImplicitLabel = "implicit-label": "(warning) a policy relies on a default label",
    ArithmeticError = "arithmetic-error": "at run time: integer overflow or division by zero",
    OutOfRange = "out-of-range": "at run time: an index out of range",
    LimitReached = "limit-reached": "at run time: fuel, memory, depth, time or tool calls ran out",
    LabelFlow = "label-flow": "at run time: a value or decision that may not flow to its sink",
    RecheckFailed = "recheck-failed": "at run time: a refinement that does not hold on the real values",
    ForgedValue = "forged-value": "at run time: a host-made value the host did not make, or reused",
    ToolFailed = "tool-failed": "at run time: the tool reported a failure",
    ToolContract = "tool-contract": "at run time: a tool returned something other than it declares",
    RuntimeTypeError = "runtime-type-error": "at run time: a type error only unchecked code can cause",
    ConstantCycle = "constant-cycle": "at run time: a constant that depends on itself",
    HoleUnfilled = "hole-unfilled": "at run time: a hole that got no fill",
    ApprovalDenied = "approval-denied": "at run time: a call the approval gate refused (a `deny` tool, or no one approved it)",
    SensitiveData = "sensitive-data": "at run time: a call whose outgoing data holds what is never sent (a credential, a card number, an ID), with the text rewritten",
}

impl Code {
    /// The code with this kebab-case name.
    pub fn named(s: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == s)
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A code is written as its kebab-case name.
impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Code, D::Error> {
        let name = String::deserialize(d)?;
        Code::named(&name).ok_or_else(|| serde::de::Error::custom(format!("no diagnostic code `{name}`")))
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
