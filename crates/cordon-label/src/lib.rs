//! The vocabulary of labels that every layer shares, and nothing else: the checker, the static
//! analysis, the runtime, the gate and the agent all speak it, so none of them has to reach into
//! another for it.
//!
//! - [`DcLabel`]: a disjunction-category label, a secrecy and an integrity [`Formula`] over
//!   principals, with its lattice (`join`, `meet`, `flows_to`) and its words for people
//!   ([`DcLabel::describe`], [`describe_flow`]).
//! - [`Label`]: what a value carries at run time, a DC label and the [`Source`]s that raised
//!   it (for diagnostics); the bottom label costs no allocation.
//! - [`Tier`]: how a tool call must be approved (`@approval`).
//! - Groups and [`Release`]s: a group's data, which no member's privilege releases, and the
//!   releases a policy declares to let it out.
//!
//! ```
//! use cordon_label::DcLabel;
//!
//! let alices = DcLabel::secret("alice");
//! assert!(!alices.flows_to(&DcLabel::endorsed("user")));
//! assert!(DcLabel::bottom().flows_to(&alices));
//! ```

mod dc;
mod label;
mod release;
mod tier;

pub use dc::{DcLabel, Formula, describe_flow, group_of, group_principal};
pub use label::{Label, Source};
pub use release::Release;
pub use tier::Tier;
