//! What the checker inferred for each binding, kept for editors (`cordon lsp`'s hover and
//! completion) when [`crate::CheckOptions::record_bindings`] asks for it: a `let`, a parameter
//! (of a function, a closure or the entry) or a name in a pattern, by where its name is
//! written, with its type as the checker resolved it once the whole check was done. Nothing
//! reads it back: what the checker accepts does not depend on it.

use std::collections::HashMap;

use cordon_syntax::Span;

use crate::state::Checker;
use crate::ty::Ty;

/// One binding's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingType {
    /// The binding's name where it is bound.
    pub span: Span,
    pub name: String,
    /// Its type as messages show it, with its refinement: `{r: Repo | !r.internal}`,
    /// `List[Issue]`, `Int`; `_` where nothing determined it.
    pub ty: String,
    /// The declared type it is a value of, under a refinement: a record's, an enum's, a
    /// capability's, a linear or an opaque type's name (what `x.` may be followed by).
    pub named: Option<String>,
}

impl Checker<'_> {
    /// Notes the type of the binding of `name` at `span`, if this check records bindings.
    pub fn record_binding(&mut self, name: &str, span: Span, ty: &Ty) {
        if let Some(recorded) = &mut self.recorded {
            recorded.push((name.to_string(), span, ty.clone()));
        }
    }

    /// The bindings recorded, their types resolved now that inference is done, in the order
    /// they were bound; a binding checked twice (a fill's scope) is kept once, as last bound, and
    /// one whose type is an error (which was reported) is left out.
    pub fn recorded_bindings(&mut self) -> Vec<BindingType> {
        let recorded = self.recorded.take().unwrap_or_default();
        let mut out: Vec<BindingType> = Vec::with_capacity(recorded.len());
        let mut at: HashMap<Span, usize> = HashMap::with_capacity(recorded.len());
        for (name, span, ty) in recorded {
            let ty = self.resolve(&ty);
            if ty.is_error() {
                continue; // an error was reported about it; its type says nothing
            }
            let named = match ty.base() {
                Ty::Record(n) | Ty::Enum(n) | Ty::Linear(n) | Ty::Cap(n) | Ty::Opaque(n, _) => Some(n.to_string()),
                _ => None,
            };
            let binding = BindingType { span, name, ty: ty.to_string(), named };
            match at.get(&span) {
                Some(&i) => out[i] = binding,
                None => {
                    at.insert(span, out.len());
                    out.push(binding);
                }
            }
        }
        out
    }
}
