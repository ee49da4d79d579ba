//! Why a broker could not be asked or started.

/// Why the broker could not be asked: it is not there, it went away, or it answered nonsense;
/// or why one could not be started. Never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerError(pub String);

impl std::fmt::Display for BrokerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BrokerError {}
