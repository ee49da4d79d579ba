//! What a checked program tells a model about each `agent[T](task, args..)` it leaves open: a
//! [`HoleSite`] per hole, with the names a fill may use. Plain data, low in the crate: the
//! checker's state collects them (`expr/holes.rs` records each), and a checked program or fill
//! hands them out (`lib.rs`, `holes.rs`).

use cordon_syntax::Span;

/// One hole of a checked program (or fill): what a model filling it must produce and may name.
#[derive(Clone, Debug)]
pub struct HoleSite {
    /// Its index in [`Checked::holes`](crate::Checked::holes) (or
    /// [`CheckedFill::holes`](crate::CheckedFill::holes)): holes are in source order.
    pub id: usize,
    /// The whole `agent[..](..)` expression.
    pub span: Span,
    /// The type the fill must have, as source text (`{n: Int | n >= 0}`, `(String, Session)`).
    pub expected: String,
    /// The local bindings visible at the hole, innermost last, without those shadowed by
    /// another binding or by an argument. Linear ones are listed, but a fill may use them only
    /// if they are passed as arguments. Declarations (functions, constants) are not listed.
    pub bindings: Vec<HoleBinding>,
    /// The hole's arguments after the task, with the names the fill uses for them.
    pub args: Vec<HoleBinding>,
}

/// A name a fill may use, with its type as source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HoleBinding {
    pub name: String,
    pub ty: String,
    pub kind: BindingKind,
    /// The measures of the value that nothing at the hole decides (`tainted(s)`): a tool that
    /// needs one of them either way cannot take it.
    pub undecided: Vec<String>,
}

/// What a binding holds, for prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// Plain data: used any number of times.
    Data,
    /// A linear value (or data holding one): used exactly once.
    Linear,
    /// A capability: its tools may be called.
    Capability,
    /// A function value.
    Function,
}

/// Sorts hole sites into source order and numbers them.
pub fn renumber(mut sites: Vec<HoleSite>) -> Vec<HoleSite> {
    sites.sort_by_key(|s| (s.span.file, s.span.start, s.span.end));
    for (i, s) in sites.iter_mut().enumerate() {
        s.id = i;
    }
    sites
}
