//! The credential broker: the one process that opens the vault. The agent's plans, its models
//! and the process that runs them hold a secret only by name (the policy's `Secret`); the broker
//! puts its value into a request, into the one header the vault binds it to, and only when the
//! request's scheme, host and port are one of the places it is bound to. A secret bound for any
//! other place, or a vault secret anywhere else in a request (its address, a header, the body;
//! exact or encoded), is refused and logged, never forwarded.
//!
//! It also performs the agent's HTTP requests, credential or not: a name is resolved once and
//! every address it gives must be on the internet (never this machine or a private network),
//! and the connection goes to those addresses only; redirects are answered, not followed (the
//! caller judges the next address); answers are bounded in time and size, and every vault secret
//! in them, in any form, is replaced by `[vault secret]` before they leave the broker. And it
//! answers the outgoing-data check's question, where the vault's secrets are in a text, so that
//! the check needs no copy of them. And it starts a program that wants a secret in its
//! environment (a local MCP server), only one the secret is bound to, relaying its input and
//! output with every vault secret scrubbed from what it writes.
//!
//! A client speaks [`protocol`] over a Unix socket that only the user may use (0600, and the
//! peer's credentials checked). [`Broker`] is the server, [`Client`] the client, and
//! [`BrokerProcess`] a broker started for one front end.

mod address;
mod client;
mod error;
mod process;
pub mod protocol;
mod send;
mod server;
mod spawn;

pub use address::{Resolve, SystemResolver, is_public};
pub use client::Client;
pub use error::BrokerError;
pub use process::{BrokerProcess, READY, listen};
pub use protocol::{Code, Incoming, Outgoing, Refusal, Spawn};
pub use send::USER_AGENT;
pub use server::Broker;
pub use spawn::resolve_program;
