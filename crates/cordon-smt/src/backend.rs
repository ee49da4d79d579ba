//! Translation of [`Query`] values into Z3 and the answer cache. (To be written.)

/// Decides queries with Z3, caching answers by query. (To be written.)
#[derive(Debug, Default)]
pub struct Solver;
