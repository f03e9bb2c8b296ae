//! The listener protocol, version 1 (docs/listener-protocol.md), from the listener's side:
//! shared by the simulator (`roomlink-listener-sim`) and the production listener
//! (`roomlink-listener`), so both read and answer it the same way.
//!
//! - [`wire`]: the request and answer bodies; [`failure`]: the room-system failure kinds.
//! - [`secrets`]: roomlink's shared secret and the endpoint passwords (plain or sealed).
//! - [`version`]: listener versions and the commands each has.
//! - [`server`]: the answers every listener shares (routes, secret check, info, failures).
//! - [`dial_home`]: the outbound WebSocket transport's client side (connect loop, frames).

pub mod configuration;
pub mod dial_home;
pub mod failure;
pub mod secrets;
pub mod server;
pub mod version;
/// The protocol's bodies, declared once for both sides (`roomlink-listener-wire`).
pub use roomlink_listener_wire as wire;
