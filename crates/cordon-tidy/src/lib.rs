//! The repository's invariants, checked inside `cargo test` (`tests/tidy.rs` runs them on the
//! real sources; each module's unit tests feed it a small example that breaks its rule).
//!
//! Each check is a function from what it reads (sources, manifests) to the list of places that
//! break its rule, so a failing test names every one of them at once. Where the code does not
//! yet hold a rule, the test keeps an allow-list ([`allow::ratchet`]) that may only shrink.
//!
//! - [`layers`]: the crates stand in layers and depend only downwards; the CLI reaches only the
//!   library;
//! - [`reach`]: who may name what (a request assembled only in the library, syntax kinds only
//!   in the syntax and checker crates, builtins by enum, not by name);
//! - [`modules`]: no circle of imports between the files of a crate;
//! - [`size`]: no file over 1,000 lines, no function over 150;
//! - [`docs`]: every module starts with a `//!` comment.

pub mod allow;
pub mod docs;
pub mod layers;
pub mod manifest;
pub mod modules;
pub mod reach;
pub mod repo;
pub mod scan;
pub mod size;
pub mod uses;

pub use repo::{Repo, SourceFile};
