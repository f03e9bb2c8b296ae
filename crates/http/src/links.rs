//! Outbound listeners' connections held by this instance (docs/listener-protocol.md,
//! "Transport: outbound WebSocket"): the registry that sends requests down them and matches
//! answers ([`registry`]), and the life of one socket ([`socket`]).

pub mod registry;
pub(crate) mod socket;

pub use registry::LinkRegistry;

/// The WebSocket subprotocol of the listener protocol, version 1.
pub const SUBPROTOCOL: &str = "roomlink-listener.v1";
