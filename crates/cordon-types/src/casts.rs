//! What each cast of a checked program converts to, as the checker resolved it. The type written
//! after `as` (`x as Money`) names declarations of the policies, the plan or a fill; the checker
//! resolves it once, where it checks the cast, with those in hand, and keeps the [`Type`] for the
//! cast's node. The compiler reads the answer instead of resolving the written type again.
//!
//! Only a fill the runtime's own tests run without the checker has no such answer: its casts are
//! resolved as written (`written.rs`) and recorded here the same way.

use crate::calls::BySite;
use crate::declared::Type;

/// The target type of every cast the checker resolved, aliases expanded. A cast whose written
/// type has an error (only in code the checker rejects) has none.
pub type Casts = BySite<Type>;
