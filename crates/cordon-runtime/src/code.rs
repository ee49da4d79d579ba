//! The machine's code: what the compiler makes and the machine runs. A program is a list of
//! bodies (`Code`, one per function, closure, constant, predicate, and the plan), each a
//! sequence of stack-machine instructions (`Op`) over frame slots, plus the policy's
//! declarations as the boundary checks them (`ToolDecl`, `EntryDecl`, measures) and what a
//! hole's fill may name. Nothing here compiles or runs; the compiler, the machine, the
//! boundary and the approval questions all read it.

use std::collections::HashMap;
use std::sync::Arc;

use cordon_label::Tier;
use cordon_syntax::ast::{BinOp, UnOp};
use cordon_syntax::{Builtin, FileId, Span};
use cordon_types::{Declarations, Resolved};

use crate::shape::{Decls, Shape};
use crate::value::{CodeId, CodeRef, Func, Layout, Str, Value};

pub type FnId = u32;
pub type ConstId = u32;
pub type Slot = u16;

/// A compiled function body, closure body, constant initialiser, predicate or the plan.
#[derive(Clone, Debug)]
pub struct Code {
    pub name: Arc<str>,
    pub params: u16,
    /// Frame slots: parameters first, then every local the body binds.
    pub slots: u16,
    pub ops: Vec<Op>,
    /// The source of each op, for errors.
    pub spans: Vec<Span>,
}

/// Where a closure gets a captured value from when it is made.
#[derive(Clone, Copy, Debug)]
pub enum CaptureFrom {
    Slot(Slot),
    Capture(u16),
}

/// A pattern with its bindings resolved to slots.
#[derive(Clone, Debug)]
pub enum Pat {
    Wild,
    Bind(Slot),
    Int(i64),
    Str(Arc<str>),
    Bool(bool),
    Unit,
    Tuple(Vec<Pat>),
    /// `enum_name` is `Option`/`Result` for the builtin variants.
    Variant {
        enum_name: Arc<str>,
        name: Arc<str>,
        args: Vec<Pat>,
    },
}

#[derive(Clone, Debug)]
pub enum Op {
    Push(Value),
    Load(Slot),
    /// `Load` from a slot that is not read again before it is stored to (a loop's element, a
    /// fold's accumulator): the value moves out, `()` stays, and no reference count changes.
    Take(Slot),
    Store(Slot),
    LoadCapture(u16),
    LoadFn(FnId),
    LoadConst(ConstId),
    Pop,
    Unary(UnOp),
    Binary(BinOp),
    /// `+` with a string literal `text` on one side (the left if `left`) and the other operand
    /// on top of the stack: the literal is never pushed, and a string nothing else refers to is
    /// extended in place.
    AddLiteral {
        text: Str,
        left: bool,
    },
    /// `Binary` with its operands' `Load`s and integer `Push`es folded in.
    BinaryWith {
        op: BinOp,
        lhs: Operand,
        rhs: Operand,
    },
    /// A comparison, `RaisePc` and `JumpIfFalse` in one: the Bool is never pushed, but `pc` is
    /// saved and raised by its label as `RaisePc` would.
    CompareBranch {
        op: BinOp,
        lhs: Operand,
        rhs: Operand,
        target: u32,
    },
    /// `RaisePc` then `JumpIfFalse`: pops the condition, saves `pc` and raises it by the
    /// condition's label, jumps if it is false.
    RaiseJumpIfFalse(u32),
    Jump(u32),
    /// A backward jump: costs fuel.
    Loop(u32),
    /// Pops a Bool; jumps if it is false.
    JumpIfFalse(u32),
    /// Saves the program-counter label and raises it by the label of the value on top (which
    /// stays).
    RaisePc,
    /// Raises the program-counter label by the label of the value on top, without saving: the
    /// enclosing `JoinPc` restores it (a `match` guard).
    RaisePcAgain,
    /// Labels the value on top with the program-counter label and restores the saved one.
    JoinPc,
    MakeTuple(u16),
    MakeList(u32),
    /// Pops a value for each of the layout's fields, in order.
    MakeRecord(Arc<Layout>),
    MakeVariant {
        enum_name: Arc<str>,
        name: Arc<str>,
        arity: u16,
    },
    Field(Arc<str>),
    /// `Load` then `Field`.
    LoadField {
        slot: Slot,
        name: Arc<str>,
    },
    TupleField(u32),
    Index,
    Call {
        func: FnId,
        argc: u16,
    },
    /// The callee is below its arguments.
    CallValue(u16),
    /// `CallValue` with the callee in a slot rather than on the stack (the function a
    /// higher-order builtin's loop calls on every element).
    CallSlot {
        slot: Slot,
        argc: u16,
    },
    Builtin {
        builtin: Builtin,
        argc: u16,
    },
    /// A method call: a tool if the receiver is a capability, else `otherwise` with the
    /// receiver as first argument.
    Method {
        name: Arc<str>,
        argc: u16,
        otherwise: MethodTarget,
    },
    /// A measure application (in refinement predicates): the host's value for it.
    Measure {
        name: Arc<str>,
        argc: u16,
    },
    MakeClosure {
        code: CodeRef,
        captures: Arc<[CaptureFrom]>,
    },
    /// Tests the value on top against the pattern without popping it; binds on success, jumps
    /// on failure.
    Match {
        pat: Arc<Pat>,
        fail: u32,
    },
    /// Pops a value and binds it to an irrefutable pattern.
    Destructure(Arc<Pat>),
    /// Steps a loop: stores the next element of `over` in `elem`, or jumps to `exit` when there
    /// is none. With `tick`, each element costs a unit of fuel: where a higher-order builtin's
    /// loop runs a literal closure in place, for the call it does not make.
    IterNext {
        over: Over,
        elem: Slot,
        exit: u32,
        tick: bool,
    },
    /// Pops `b` and `a` of a loop over `range(a, b)`, which no list is built for: counts
    /// against the limits as `range` would (a list too long fails, and the memory the list
    /// would take is spent), then pushes `a` and `max(a, b)`, the second labelled with both
    /// labels (what the list's label would be).
    RangeStart,
    /// Starts a list that `map` or `filter` builds, outside any value until `ListEnd` (so
    /// appending to it needs no unique access to a shared list); its label is kept in `acc`.
    ListStart {
        acc: Slot,
        /// The new list will have an element for each one this loop steps over (`map`): room
        /// for them is made at once.
        sized_like: Option<Over>,
    },
    /// Pops a value and appends it to the list being built.
    ListPush,
    /// Pops a Bool; appends the element in `elem` to the list being built if it is true, moving
    /// it out of its slot (`filter`'s loop reads it no more: the next step overwrites it). The
    /// list's label (in `acc`) takes the Bool's: which elements are kept depends on it.
    ListPushIf {
        acc: Slot,
        elem: Slot,
    },
    /// Pushes the list being built, with the label in `acc`.
    ListEnd(Slot),
    /// Pops a Bool into the running `any` (`all` when `all`) in `acc`.
    Accumulate {
        acc: Slot,
        all: bool,
    },
    Cast(Shape),
    ToLabeledBegin,
    ToLabeledEnd,
    Return,
    /// `JoinPc` then `Return`: a body that ends with a branch or a loop (a function that is
    /// one `if`), one dispatch fewer per call.
    JoinPcReturn,
    /// An `agent` hole: the task and `argc - 1` arguments are on the stack. The run stops and
    /// asks the host for a fill.
    Hole {
        site: u32,
        argc: u16,
    },
    /// Ends the run with an error: code that checked programs cannot reach.
    Fail(Arc<str>),
}

/// What a loop steps over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Over {
    /// The list in slot `list`, from the position in `index`.
    List { list: Slot, index: Slot },
    /// The integers from the one in `next` up to (not including) the one in `end`: a loop over
    /// `range(a, b)` as written, with no list built.
    Range { next: Slot, end: Slot },
}

/// Where an operand of a fused binary operation comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    /// Popped from the stack (the left one below the right one when both are).
    Top,
    Slot(Slot),
    Int(i64),
}

#[derive(Clone, Debug)]
pub enum MethodTarget {
    Builtin(Builtin),
    Func(FnId),
    None,
}

/// A policy's `release`: the data of `group` may go where the label `to` (code over no
/// parameter) allows, with the user's yes on a card if `card`.
#[derive(Clone, Debug)]
pub struct ReleaseDecl {
    pub group: Arc<str>,
    pub to: CodeRef,
    pub card: bool,
}

/// A tool as the boundary sees it: its parameters' types (refinements compiled) and its label
/// annotations (compiled to code over the parameters).
#[derive(Clone, Debug)]
pub struct ToolDecl {
    pub capability: Arc<str>,
    pub name: Arc<str>,
    pub params: Vec<(Arc<str>, Shape)>,
    pub ret: Shape,
    /// `@label(returns = ..)`: code over the parameters. Without it, the result gets the
    /// closed default (secret to the user, vouched for by no one).
    pub returns_label: Option<CodeRef>,
    /// `@label(param = ..)`: the sink of each parameter, in order; `None` where the policy names
    /// none (the parameter then gets the default sink).
    pub sinks: Vec<Option<CodeRef>>,
    /// `@label(pc = ..)`: the sink of the decision to call. Without it, the meet of the
    /// parameters' sinks.
    pub decision_sink: Option<CodeRef>,
    /// `@approval(..)`: the tool's tier, constant or chosen on the arguments. Without it, the
    /// tool needs no approval.
    pub approval: Option<TierCode>,
    /// `@card(key = ..)`: each field a card shows, in order, as code over the parameters.
    pub card: Vec<(String, CodeRef)>,
}

#[derive(Clone, Debug)]
pub struct ConstDecl {
    pub name: Arc<str>,
    pub init: CodeRef,
}

/// A label a record type gives one of its fields (`body: String @label(untrusted())`).
#[derive(Clone, Debug)]
pub struct FieldLabel {
    /// The field's place in the record.
    pub field: usize,
    /// The label's code, over the record's fields in order.
    pub code: CodeRef,
    /// Where the label comes from, as a refusal names it: `the field `Issue.body``.
    pub source: Arc<str>,
}

#[derive(Clone, Debug)]
pub struct MeasureDecl {
    pub name: Arc<str>,
    /// The type of the measure's (first) parameter.
    pub of: Option<Arc<str>>,
    pub default: Option<Value>,
}

#[derive(Clone, Debug)]
pub struct EntryDecl {
    pub params: Vec<(Arc<str>, Shape)>,
    pub ret: Shape,
}

/// Everything a run needs, compiled. A run that fills holes extends its own copy with the
/// fills' code.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// Every body, indexed by [`CodeId`].
    pub codes: Vec<Code>,
    pub decls: Decls,
    /// The program's types as the checker resolved them: what a fill's casts name.
    pub declared: Arc<Declarations>,
    pub fns: Vec<Arc<Func>>,
    pub consts: Vec<ConstDecl>,
    pub tools: Vec<ToolDecl>,
    /// The releases the policies declare.
    pub releases: Vec<ReleaseDecl>,
    /// The labels record types give their fields in tool results, by type name.
    pub field_labels: HashMap<Arc<str>, Vec<FieldLabel>>,
    pub measures: HashMap<Arc<str>, MeasureDecl>,
    pub entry: Option<EntryDecl>,
    /// The plan's body; its first slots are the entry's parameters.
    pub plan: Option<CodeRef>,
    /// Every `agent[..](..)` hole, indexed by the `site` of its `Op::Hole`.
    pub holes: Vec<HoleScope>,
    /// The global names, for compiling fills later.
    pub(crate) globals: Globals,
    /// The files it was compiled from.
    pub origin: Origin,
}

/// What a hole's fill can name: every binding visible at the hole, and where the running code
/// finds its value when the hole is reached.
#[derive(Clone, Debug)]
pub struct HoleScope {
    pub span: Span,
    pub names: Vec<(Arc<str>, Access)>,
}

impl Compiled {
    #[inline]
    pub fn code(&self, id: CodeId) -> &Code {
        &self.codes[id.index()]
    }

    /// The tool `name` of the capability `capability`: what the boundary checks a call of it
    /// against, and what its approval card shows.
    pub fn tool(&self, capability: &str, name: &str) -> Option<&ToolDecl> {
        self.tools.iter().find(|t| *t.capability == *capability && *t.name == *name)
    }
}

/// Global names, known before any body is compiled.
#[derive(Clone, Debug, Default)]
pub(crate) struct Globals {
    pub(crate) fns: HashMap<String, FnId>,
    pub(crate) consts: HashMap<String, ConstId>,
    pub(crate) measures: HashMap<String, ()>,
}

/// How a name is reached from the code being compiled.
#[derive(Clone, Copy, Debug)]
pub enum Access {
    Slot(Slot),
    Capture(u16),
}

impl Compiled {
    /// Appends a fill's code (its body, functions, constants and holes) after the program's.
    pub fn extend(&mut self, fill: CompiledFill) {
        self.codes.extend(fill.codes);
        self.fns.extend(fill.fns);
        self.consts.extend(fill.consts);
        self.holes.extend(fill.holes);
        self.origin.fills.push(fill.record);
    }
}

/// A fill compiled against a program: the code to append, and the fill's body.
#[derive(Debug)]
pub struct CompiledFill {
    pub codes: Vec<Code>,
    pub fns: Vec<Arc<Func>>,
    /// The constants the fill declares: they follow the program's.
    pub consts: Vec<ConstDecl>,
    pub holes: Vec<HoleScope>,
    /// The body: its parameters are the hole's arguments, its captures the hole's scope.
    pub body: CodeId,
    /// Where it came from.
    pub record: FillRecord,
}

/// The source files a program was compiled from, fills included in the order they were
/// entered: what a saved run compiles again.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    pub policies: Vec<FileId>,
    pub plan: Option<FileId>,
    /// What the checker resolved each call and cast of the policies and the plan to.
    pub resolved: Resolved,
    pub fills: Vec<FillRecord>,
}

/// A fill a run entered: the hole it filled, its source file, its arguments' names, and what
/// the checker resolved each of its calls and casts to.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FillRecord {
    pub site: usize,
    pub file: FileId,
    pub arg_names: Vec<String>,
    /// Saved as the fields `calls` and `casts`, as before there was one value of both.
    #[serde(flatten)]
    pub resolved: Resolved,
}

/// A compiled `@approval`: a tier, or a choice on a condition over the parameters.
#[derive(Clone, Debug)]
pub enum TierCode {
    Is(Tier),
    If { cond: CodeRef, then: Box<TierCode>, otherwise: Box<TierCode> },
}
