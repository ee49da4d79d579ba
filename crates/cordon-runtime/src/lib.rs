//! The Cordon runtime (work in progress).
pub mod label;
