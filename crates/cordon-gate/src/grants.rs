//! Where the gate finds and keeps grants: the user's standing "yes" to a tool, a destination
//! pattern and a label class. [`StoreGrants`] uses a `cordon-store` store (grants persist
//! across runs); [`MemoryGrants`] keeps them for the life of the gate (tests, one-off runs).
//! A store that cannot be read is an error, and the gate then performs nothing.

use std::cell::RefCell;

use cordon_store::{Grant, GrantId, GrantQuery, NewGrant, Store, StoreError};

/// Finds and adds grants.
pub trait Grants {
    /// The oldest live grant covering the query, if any.
    fn find(&self, query: &GrantQuery<'_>) -> Result<Option<Grant>, StoreError>;
    /// Remembers a grant.
    fn add(&self, grant: &NewGrant) -> Result<Grant, StoreError>;
}

/// The grants of a `cordon-store` store.
#[derive(Clone, Copy)]
pub struct StoreGrants<'a>(pub &'a dyn Store);

impl std::fmt::Debug for StoreGrants<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreGrants")
    }
}

impl Grants for StoreGrants<'_> {
    fn find(&self, query: &GrantQuery<'_>) -> Result<Option<Grant>, StoreError> {
        self.0.find_grant(query)
    }

    fn add(&self, grant: &NewGrant) -> Result<Grant, StoreError> {
        self.0.add_grant(grant)
    }
}

/// Grants kept in memory, gone with the gate.
#[derive(Debug, Default)]
pub struct MemoryGrants {
    grants: RefCell<Vec<Grant>>,
}

impl MemoryGrants {
    pub fn new() -> MemoryGrants {
        MemoryGrants::default()
    }

    /// Every grant given so far.
    pub fn all(&self) -> Vec<Grant> {
        self.grants.borrow().clone()
    }
}

impl Grants for MemoryGrants {
    fn find(&self, query: &GrantQuery<'_>) -> Result<Option<Grant>, StoreError> {
        let now = now_ms();
        Ok(self.grants.borrow().iter().find(|g| g.covers(query, now)).cloned())
    }

    fn add(&self, grant: &NewGrant) -> Result<Grant, StoreError> {
        let mut grants = self.grants.borrow_mut();
        let id = GrantId(i64::try_from(grants.len()).unwrap_or(i64::MAX).saturating_add(1));
        let made = Grant { id, grant: grant.clone(), created_ms: now_ms() };
        grants.push(made.clone());
        Ok(made)
    }
}

/// The time now, in Unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Grants borrowed: the caller keeps them, to look at them afterwards.
impl<G: Grants + ?Sized> Grants for &G {
    fn find(&self, query: &GrantQuery<'_>) -> Result<Option<Grant>, StoreError> {
        (**self).find(query)
    }

    fn add(&self, grant: &NewGrant) -> Result<Grant, StoreError> {
        (**self).add(grant)
    }
}
