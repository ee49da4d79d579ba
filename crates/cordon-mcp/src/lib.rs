//! Cordon and the Model Context Protocol.
//!
//! - [`config`]: `cordon.toml`, the servers a user has.
//! - [`foreign`]: the `mcpServers` JSON and Codex TOML files people already have, read as one.
//! - [`edit`]: `cordon mcp add` and `remove`, editing `cordon.toml` in place.
//! - [`client`]: a connection to one server (stdio or streamable HTTP), with timeouts, size
//!   limits, a bounded tool list and a reaped child process.
//! - [`host`]: a server's tools as the tools of one capability of a policy, only those the
//!   policy declares, arguments and results through the declared types.
//! - [`import`]: a starter policy for a server's tools, from their JSON Schemas, built as a
//!   syntax tree and printed, so nothing the server sends becomes source.
//! - [`names`]: how Cordon names meet MCP names.

mod brokered;
pub mod client;
pub mod config;
pub mod edit;
pub mod foreign;
pub mod host;
pub mod import;
pub mod names;
mod schema;

pub use client::Connection;
pub use config::{Config, Server};
pub use host::{Binding, McpHost};
