//! Performing one outgoing request: the address and headers checked, the secret put into its
//! slot only where it is bound, the name resolved once and the connection pinned to what was
//! checked, the answer bounded in time and size and scrubbed of every vault secret.

use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use cordon_egress::{SecretFinder, VaultMatcher};
use cordon_vault::{Destination, Entry, SecretValue};
use url::{Host, Url};
use zeroize::Zeroizing;

use crate::address::{Resolve, is_public};
use crate::protocol::{Code, Incoming, Outgoing, Refusal};

/// The methods a request may use.
const METHODS: [&str; 6] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/// Headers only the connection itself sets: a request naming one could split or smuggle.
const FRAMING: [&str; 9] =
    ["host", "content-length", "transfer-encoding", "connection", "te", "upgrade", "trailer", "keep-alive", "expect"];

/// How the agent's requests say what they are.
pub const USER_AGENT: &str = concat!("cordon-broker/", env!("CARGO_PKG_VERSION"), " (requests of an AI agent)");

/// What performing a request needs: the vault's secrets and how to find their forms, and the
/// resolver.
pub(crate) struct Sender {
    pub secrets: Vec<(Entry, SecretValue)>,
    pub matcher: VaultMatcher,
    pub resolver: Arc<dyn Resolve>,
}

/// What a performed request was, for the broker's log: never a secret, never a query.
pub(crate) struct Sent {
    pub origin: String,
    pub path: String,
}

impl Sender {
    /// Performs `out`, or says why not.
    pub fn send(&self, out: &Outgoing) -> (Option<Sent>, Result<Incoming, Refusal>) {
        let url = match self.check(out) {
            Ok(url) => url,
            Err(refusal) => return (None, Err(refusal)),
        };
        let sent = Sent { origin: url.origin().ascii_serialization(), path: url.path().to_string() };
        (Some(sent), self.perform(out, &url))
    }

    /// The request's address, if the request may be sent as it is.
    fn check(&self, out: &Outgoing) -> Result<Url, Refusal> {
        let bad = |why: String| Refusal::new(Code::BadRequest, why);
        // Nothing of the vault leaves except in its slot, where it is bound: looked for first, so
        // that no other refusal repeats a secret in its words.
        let texts = [out.method.as_str(), out.url.as_str()]
            .into_iter()
            .chain(out.headers.iter().flat_map(|(n, v)| [n.as_str(), v.as_str()]))
            .chain(out.body.as_deref());
        let refused = || {
            Refusal::new(
                Code::NotAllowed,
                "the request holds a vault secret outside a credential slot: it is never sent so",
            )
        };
        if texts.into_iter().any(|t| !self.matcher.find(t).is_empty()) {
            return Err(refused());
        }
        if !METHODS.contains(&out.method.as_str()) {
            return Err(bad(format!("`{}` is not a method the broker sends", out.method.escape_debug())));
        }
        let url = Url::parse(&out.url).map_err(|e| bad(format!("the address is not a URL: {e}")))?;
        // The address as it will be sent (its host lower-cased and mapped from other scripts,
        // escapes in it decoded, tabs and line breaks dropped) holds none either.
        if !self.matcher.find(url.as_str()).is_empty() {
            return Err(refused());
        }
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad(format!("`{}` is not HTTP", url.scheme())));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("an address with a user name or password is not sent".into()));
        }
        if url.host().is_none() {
            return Err(bad("the address names no host".into()));
        }
        for (name, value) in &out.headers {
            let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if name.is_empty() || !name.chars().all(token) {
                return Err(bad(format!("`{}` is not a header's name", name.escape_debug())));
            }
            if value.chars().any(|c| c.is_control() && c != '\t') {
                return Err(bad(format!("the header `{name}` holds a control character")));
            }
            if FRAMING.contains(&name.to_ascii_lowercase().as_str()) {
                return Err(bad(format!("the header `{name}` is set by the connection, not by a request")));
            }
        }
        if let Some(name) = &out.credential {
            let entry = self.entry(name)?;
            let here = destination(&url);
            if !entry.destinations.contains(&here) {
                return Err(Refusal::new(
                    Code::NotAllowed,
                    format!("the secret `{name}` is not bound to {here}: it is never sent there"),
                ));
            }
            if out.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(&entry.header)) {
                return Err(bad(format!("the header `{}` is the slot of the secret `{name}`", entry.header)));
            }
        }
        Ok(url)
    }

    fn entry(&self, name: &str) -> Result<&Entry, Refusal> {
        self.secrets
            .iter()
            .map(|(e, _)| e)
            .find(|e| e.name == name)
            .ok_or_else(|| Refusal::new(Code::NotAllowed, format!("the vault has no secret `{}`", name.escape_debug())))
    }

    fn value(&self, name: &str) -> Option<&SecretValue> {
        self.secrets.iter().find(|(e, _)| e.name == name).map(|(_, v)| v)
    }

    /// The addresses the request may connect to: a name resolved once (within `timeout`), every
    /// address public; an address written in the URL as it is, if it is public or the request
    /// may reach this machine and its network (`local`).
    fn addresses(&self, url: &Url, local: bool, timeout: Duration) -> Result<Vec<SocketAddr>, Refusal> {
        let port = url.port_or_known_default().unwrap_or(443);
        let literal = match url.host() {
            Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            Some(Host::Domain(_)) => None,
            None => return Err(Refusal::new(Code::BadRequest, "the address names no host")),
        };
        if let Some(ip) = literal {
            if !local && !is_public(ip) {
                return Err(Refusal::new(
                    Code::NotAllowed,
                    format!(
                        "{ip} is an address on this machine or a private network, which only a deployer may let the \
                         web reach (`--web-local`)"
                    ),
                ));
            }
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let name = url.host_str().unwrap_or_default().to_string();
        let found = self.resolve(&name, port, timeout)?;
        if found.is_empty() {
            return Err(Refusal::new(Code::Unreachable, format!("`{name}` has no address")));
        }
        if let Some(private) = found.iter().find(|a| !is_public(a.ip())) {
            return Err(Refusal::new(
                Code::NotAllowed,
                format!(
                    "`{name}` resolves to {}, an address on this machine or a private network: a name may lead only \
                     to the internet",
                    private.ip()
                ),
            ));
        }
        Ok(found)
    }

    /// `name`'s addresses, asked of the resolver on a thread of its own, so that a slow name
    /// server costs the request its time and no more.
    fn resolve(&self, name: &str, port: u16, timeout: Duration) -> Result<Vec<SocketAddr>, Refusal> {
        let (tell, answer) = std::sync::mpsc::channel();
        let (resolver, asked) = (self.resolver.clone(), name.to_string());
        std::thread::spawn(move || {
            let _ = tell.send(resolver.resolve(&asked, port));
        });
        match answer.recv_timeout(timeout) {
            Ok(found) => {
                found.map_err(|e| Refusal::new(Code::Unreachable, format!("`{name}` could not be resolved: {e}")))
            }
            Err(_) => Err(Refusal::new(Code::Timeout, format!("`{name}` was not resolved in time"))),
        }
    }

    fn perform(&self, out: &Outgoing, url: &Url) -> Result<Incoming, Refusal> {
        let timeout = Duration::from_millis(out.timeout_ms.max(1));
        let addresses = self.addresses(url, out.local, timeout)?;
        let agent = ureq::AgentBuilder::new()
            .resolver(Pinned(addresses))
            .redirects(0)
            .timeout(timeout)
            .timeout_connect(timeout.min(Duration::from_secs(10)))
            .user_agent(USER_AGENT)
            .max_idle_connections(0)
            .build();
        let mut request = agent.request(&out.method, url.as_str());
        for (name, value) in &out.headers {
            request = request.set(name, value);
        }
        if let Some(name) = &out.credential {
            let entry = self.entry(name)?;
            let Some(value) = self.value(name) else {
                return Err(Refusal::new(Code::NotAllowed, format!("the vault has no secret `{name}`")));
            };
            let value = match &entry.scheme {
                Some(scheme) => Zeroizing::new(format!("{scheme} {}", value.expose())),
                None => Zeroizing::new(value.expose().to_string()),
            };
            request = request.set(&entry.header, &value);
        }
        let answer = match &out.body {
            Some(body) => request.send_string(body),
            None => request.call(),
        };
        let response = match answer {
            Ok(response) | Err(ureq::Error::Status(_, response)) => response,
            Err(ureq::Error::Transport(t)) => return Err(self.transport(&t)),
        };
        let status = response.status();
        let headers: Vec<(String, String)> = response
            .headers_names()
            .into_iter()
            .filter(|name| name != "set-cookie")
            .flat_map(|name| {
                let values: Vec<String> = response.all(&name).into_iter().map(|v| self.scrub(v)).collect();
                values.into_iter().map(move |v| (name.clone(), v))
            })
            .collect();
        let mut body = Vec::new();
        let limit = out.max_response_bytes;
        response.into_reader().take(limit as u64 + 1).read_to_end(&mut body).map_err(|e| self.read_error(&e))?;
        if body.len() > limit {
            return Err(Refusal::new(Code::TooLarge, format!("the answer's body is longer than {limit} bytes")));
        }
        let body =
            String::from_utf8(body).map_err(|_| Refusal::new(Code::NotText, "the answer's body is not UTF-8 text"))?;
        Ok(Incoming { status, headers, body: self.scrub(&body) })
    }

    /// `text` with every vault secret in it, in any form, replaced by `[vault secret]`.
    fn scrub(&self, text: &str) -> String {
        scrub(&self.matcher, text)
    }

    /// Why the exchange failed, in words that name neither the address nor its query.
    fn transport(&self, t: &ureq::Transport) -> Refusal {
        let cause = std::error::Error::source(t).map(ToString::to_string);
        let words = match (t.message(), cause) {
            (Some(message), Some(cause)) => format!("{}: {message}: {cause}", t.kind()),
            (Some(message), None) => format!("{}: {message}", t.kind()),
            (None, Some(cause)) => format!("{}: {cause}", t.kind()),
            (None, None) => t.kind().to_string(),
        };
        let words = self.scrub(&words);
        let timed_out = t.kind() == ureq::ErrorKind::Io
            && std::error::Error::source(t)
                .and_then(|s| s.downcast_ref::<std::io::Error>())
                .is_some_and(|e| matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock));
        match timed_out || words.contains("timed out") {
            true => Refusal::new(Code::Timeout, format!("no answer in time: {words}")),
            false => Refusal::new(Code::Unreachable, words),
        }
    }

    fn read_error(&self, e: &std::io::Error) -> Refusal {
        match e.kind() {
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                Refusal::new(Code::Timeout, "the answer did not come in time")
            }
            _ => Refusal::new(Code::Unreachable, format!("the answer broke off: {}", self.scrub(&e.to_string()))),
        }
    }
}

/// `text` with every span `matcher` finds replaced by `[vault secret]`.
pub(crate) fn scrub(matcher: &VaultMatcher, text: &str) -> String {
    let mut spans: Vec<Range<usize>> = matcher.find(text);
    if spans.is_empty() {
        return text.to_string();
    }
    spans.sort_by_key(|s| (s.start, s.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        if span.end <= at {
            continue;
        }
        let start = floor_boundary(text, span.start.max(at));
        out.push_str(&text[at..start]);
        out.push_str("[vault secret]");
        at = ceil_boundary(text, span.end.min(text.len()));
    }
    out.push_str(&text[at..]);
    out
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Where a request goes, as a vault's binding names places.
fn destination(url: &Url) -> Destination {
    let host = match url.host() {
        Some(Host::Domain(name)) => name.trim_end_matches('.').to_ascii_lowercase(),
        Some(Host::Ipv4(ip)) => ip.to_string(),
        Some(Host::Ipv6(ip)) => format!("[{ip}]"),
        None => String::new(),
    };
    Destination { scheme: url.scheme().to_string(), host, port: url.port_or_known_default().unwrap_or(0) }
}

/// A resolver that gives only the addresses already checked.
struct Pinned(Vec<SocketAddr>);

impl ureq::Resolver for Pinned {
    fn resolve(&self, _netloc: &str) -> std::io::Result<Vec<SocketAddr>> {
        Ok(self.0.clone())
    }
}
