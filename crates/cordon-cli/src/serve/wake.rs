//! How `cordon serve`'s HTTP side tells its idle workers there is work.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Tells idle workers there may be work: a run was queued or a card answered here. Work from
/// elsewhere (another process's answer, a deadline) is found at the next look, within a second.
#[derive(Debug, Default)]
pub struct Wake {
    work: Mutex<u64>,
    seen: Condvar,
}

impl Wake {
    pub fn notify(&self) {
        *self.work.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.seen.notify_all();
    }

    /// Waits until told, or `timeout`.
    pub fn wait(&self, timeout: Duration) {
        let guard = self.work.lock().unwrap_or_else(PoisonError::into_inner);
        let before = *guard;
        let _ = self.seen.wait_timeout_while(guard, timeout, |now| *now == before);
    }
}
