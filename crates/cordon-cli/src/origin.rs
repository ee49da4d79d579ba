//! Who may reach `cordon mcp serve --http`: this machine only. The listener is on a loopback
//! address, but a web page from anywhere can make the user's browser send requests to it (a
//! cross-site POST, or DNS rebinding: a name that resolves to 127.0.0.1). So, as the MCP
//! specification requires of streamable HTTP, a request whose `Host` is not a loopback name, or
//! whose `Origin` (browsers send one) is not a loopback origin, is refused with 403 Forbidden.
//! A client that is not a browser sends no `Origin`, and is served.

use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;

/// The names a request's `Host` may give, with any port.
const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// The origins a page may have whose requests are served, with any port.
const LOOPBACK_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The streamable HTTP server's configuration: loopback hosts and origins only.
pub fn loopback_only() -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(LOOPBACK_HOSTS.iter().copied())
        .with_allowed_origins(LOOPBACK_ORIGINS.iter().copied())
        .enforce_origin_validation()
}
