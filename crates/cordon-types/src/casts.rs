//! What each cast of a checked program converts to, as the checker resolved it. The type written
//! after `as` (`x as Money`) names declarations of the policies, the plan or a fill; the checker
//! resolves it once, where it checks the cast, with those in hand, and keeps the [`Type`] for the
//! cast's node. The compiler reads the answer instead of resolving the written type again.
//!
//! Only a fill the runtime's own tests run without the checker has no such answer: its casts are
//! resolved as written (`written.rs`) and recorded here the same way.

use std::collections::HashMap;

use cordon_syntax::FileId;
use cordon_syntax::ast::Expr;
use serde::{Deserialize, Serialize};

use crate::calls::ExprSite;
use crate::declared::Type;

/// The target type of every cast the checker resolved, aliases expanded. A cast whose written
/// type has an error (only in code the checker rejects) has none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "Vec<(ExprSite, Type)>", into = "Vec<(ExprSite, Type)>")]
pub struct Casts(HashMap<ExprSite, Type>);

impl Casts {
    /// The type the cast expression `cast` converts to, if the checker resolved it.
    pub fn get(&self, cast: &Expr) -> Option<&Type> {
        self.0.get(&ExprSite::of(cast))
    }

    /// Records that the cast expression `cast` converts to `target`.
    pub(crate) fn record(&mut self, cast: &Expr, target: Type) {
        self.0.insert(ExprSite::of(cast), target);
    }

    /// The casts written in `file`.
    pub(crate) fn in_file(&self, file: FileId) -> Casts {
        Casts(self.0.iter().filter(|(site, _)| site.file() == file).map(|(site, t)| (*site, t.clone())).collect())
    }
}

impl From<Vec<(ExprSite, Type)>> for Casts {
    fn from(casts: Vec<(ExprSite, Type)>) -> Casts {
        Casts(casts.into_iter().collect())
    }
}

impl From<Casts> for Vec<(ExprSite, Type)> {
    /// In order, so that the same casts are always written the same way.
    fn from(casts: Casts) -> Vec<(ExprSite, Type)> {
        let mut all: Vec<(ExprSite, Type)> = casts.0.into_iter().collect();
        all.sort_by_key(|(s, _)| *s);
        all
    }
}
