//! The label functions of a policy's `@label` values: each makes a label from principals' names.
//! `user()` is the interpreter's, which knows whom the run acts for.

use std::sync::Arc;

use cordon_label::DcLabel;
use cordon_syntax::LabelFn;

use super::{Call, str_of};
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
        (LabelFn::Readers, [ps]) => {
            let Value::List(items) = &ps.value else { return c.bad() };
            let mut names = Vec::with_capacity(items.len());
            for p in items.iter() {
                let Some(p) = str_of(p) else { return c.bad() };
                names.push(p);
            }
            label(DcLabel::readers(&names))
        }
        (LabelFn::Public | LabelFn::Untrusted | LabelFn::Secret | LabelFn::Endorsed | LabelFn::Readers, _) => c.bad(),
        // Applied by the interpreter (`machine`), which knows the run's principal.
        (LabelFn::User, _) => c.bad(),
    }
}
