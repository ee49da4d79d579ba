//! Why a run stopped early. Every way a program can fail at run time is one of these: a clean,
//! reported end, never a panic.

use std::fmt;

use cordon_syntax::{Code, Diagnostic, Span};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunError {
    pub kind: ErrorKind,
    pub message: String,
    /// Where in the program it happened (the default span when nowhere in particular).
    pub span: Span,
    /// Further lines: which value was checked, what was expected.
    pub notes: Vec<String>,
    /// Places in the program that explain the error: where a label came from.
    pub related: Vec<(Span, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorKind {
    /// Integer overflow, division by zero, a float that is not a number where an `Int` is needed.
    Arithmetic,
    /// An index or list position out of range.
    OutOfRange,
    /// A limit (fuel, memory, depth, time, tool calls) was reached.
    Limit,
    /// A tool call whose arguments (joined with the program-counter label) may not flow to the
    /// tool's sink.
    LabelFlow,
    /// A refined tool parameter or entry parameter that does not hold on the real values.
    Recheck,
    /// A host-made value that the host did not make, or a linear value used twice.
    Forged,
    /// The tool failed.
    Tool,
    /// The tool returned something other than its declared result.
    Contract,
    /// Code that went wrong in a way the checker rules out (only unchecked code reaches this).
    Type,
    /// A constant whose value depends on itself.
    Cycle,
    /// A hole, with no model attached.
    Hole,
    /// The approval gate refused the call: its tool is `deny`, or no one approved it.
    ApprovalDenied,
    /// A regular expression that does not parse or is over the size limits.
    InvalidPattern,
    /// The outgoing-data check refused the call: what it sends holds what is never sent.
    SensitiveData,
}

impl ErrorKind {
    /// The diagnostic code it is reported with.
    pub fn code(self) -> Code {
        match self {
            ErrorKind::Arithmetic => Code::ArithmeticError,
            ErrorKind::OutOfRange => Code::OutOfRange,
            ErrorKind::Limit => Code::LimitReached,
            ErrorKind::LabelFlow => Code::LabelFlow,
            ErrorKind::Recheck => Code::RecheckFailed,
            ErrorKind::Forged => Code::ForgedValue,
            ErrorKind::Tool => Code::ToolFailed,
            ErrorKind::Contract => Code::ToolContract,
            ErrorKind::Type => Code::RuntimeTypeError,
            ErrorKind::Cycle => Code::ConstantCycle,
            ErrorKind::Hole => Code::HoleUnfilled,
            ErrorKind::ApprovalDenied => Code::ApprovalDenied,
            ErrorKind::InvalidPattern => Code::InvalidPattern,
            ErrorKind::SensitiveData => Code::SensitiveData,
        }
    }
}

impl RunError {
    pub fn new(kind: ErrorKind, span: Span, message: impl Into<String>) -> RunError {
        RunError { kind, message: message.into(), span, notes: Vec::new(), related: Vec::new() }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> RunError {
        self.notes.push(note.into());
        self
    }
}

impl RunError {
    /// The error as a diagnostic, for the renderers every stage shares.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::error(self.kind.code(), self.span, self.message.clone());
        for (span, text) in &self.related {
            d = d.with_label(*span, text.clone());
        }
        for n in &self.notes {
            d = d.with_note(n.clone());
        }
        d
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        for n in &self.notes {
            write!(f, "\n  note: {n}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RunError {}

/// A compile error: only code the checker did not see can cause one.
#[derive(Debug, Clone)]
pub struct CompileError {
    pub message: String,
    pub span: Span,
}
