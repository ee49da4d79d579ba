//! The label functions of a policy's `@label` values: each makes a label from principals' names.
//! `user()` is the interpreter's, which knows whom the run acts for.

use std::sync::Arc;

use cordon_label::DcLabel;
use cordon_syntax::LabelFn;

use super::common::{Call, str_of};
use crate::error::RunError;
use crate::value::{Val, Value};

pub(super) fn apply(l: LabelFn, c: &Call) -> Result<Val, RunError> {
    let label = |dc: DcLabel| c.plain(Value::Label(Arc::new(dc)));
    match (l, c.args) {
        (LabelFn::Public, []) => label(DcLabel::bottom()),
        (LabelFn::Untrusted, []) => label(DcLabel::untrusted()),
        (LabelFn::Secret, [p]) => match str_of(p) {
            Some(p) => label(DcLabel::secret(p)),
            None => c.bad(),
        },
        (LabelFn::Endorsed, [p]) => match str_of(p) {
            Some(p) => label(DcLabel::endorsed(p)),
            None => c.bad(),
        },
        (LabelFn::Readers, [ps]) => match names(ps) {
            Some(names) => label(DcLabel::readers(&names)),
            None => c.bad(),
        },
        (LabelFn::Group, [name, ps]) => match (str_of(name), names(ps)) {
            (Some(name), Some(members)) => label(DcLabel::group(name, &members)),
            _ => c.bad(),
        },
        (
            LabelFn::Public
            | LabelFn::Untrusted
            | LabelFn::Secret
            | LabelFn::Endorsed
            | LabelFn::Readers
            | LabelFn::Group,
            _,
        ) => c.bad(),
        // Applied by the interpreter (`machine`), which knows the run's principal.
        (LabelFn::User, _) => c.bad(),
    }
}

/// The principals' names in the list `ps`.
fn names(ps: &Val) -> Option<Vec<&str>> {
    let Value::List(items) = &ps.value else { return None };
    items.iter().map(str_of).collect()
}
