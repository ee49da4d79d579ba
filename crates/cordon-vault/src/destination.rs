//! Where a secret may be sent: a scheme, an exact host and a port, normalised once when the
//! secret is added so that a request is matched against it by equality alone.

use std::fmt;

use serde::{Deserialize, Serialize};
use url::{Host, Url};

use crate::error::VaultError;

/// A scheme, host and port a secret is bound to. The host is exact: `api.example.com` does not
/// cover `example.com` or `x.api.example.com`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Destination {
    pub scheme: String,
    /// Lower case, international names in their ASCII form, no trailing dot; an IPv6 address
    /// in brackets.
    pub host: String,
    pub port: u16,
}

impl Destination {
    /// The destination `text` names: a host (`api.example.com`, meaning HTTPS on port 443) or
    /// an origin (`https://api.example.com:8443`). Plain HTTP is taken only for this machine
    /// (`http://127.0.0.1:8080`), since a credential sent over it to anyone else is sent to
    /// everyone on the way. A path, query, user name or password is refused, not dropped.
    pub fn parse(text: &str) -> Result<Destination, VaultError> {
        let invalid = |why: &str| {
            VaultError::Invalid(format!("`{}` is not a host a secret may go to: {why}", text.escape_debug()))
        };
        let with_scheme = if text.contains("://") { text.to_string() } else { format!("https://{text}") };
        let url = Url::parse(&with_scheme).map_err(|e| invalid(&e.to_string()))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("it names a user"));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(invalid("a secret is bound to a scheme, host and port, not to a path"));
        }
        let host = match url.host() {
            Some(Host::Domain(name)) => name.trim_end_matches('.').to_string(),
            Some(Host::Ipv4(ip)) => ip.to_string(),
            Some(Host::Ipv6(ip)) => format!("[{ip}]"),
            None => return Err(invalid("it names no host")),
        };
        if host.is_empty() {
            return Err(invalid("it names no host"));
        }
        let loopback = match url.host() {
            Some(Host::Ipv4(ip)) => ip.is_loopback(),
            Some(Host::Ipv6(ip)) => ip.is_loopback(),
            _ => host == "localhost",
        };
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            "http" => return Err(invalid("plain HTTP would show the secret to every network on the way")),
            other => return Err(invalid(&format!("`{other}` is not HTTP"))),
        }
        let Some(port) = url.port_or_known_default() else { return Err(invalid("it has no port")) };
        Ok(Destination { scheme: url.scheme().to_string(), host, port })
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}
