//! roomlink's domain: every rule of the endpoint-service contract, with no I/O.
//!
//! - [`error`]: the error catalog, one table.
//! - [`endpoint`], [`enterprise`], [`listener`], [`token`], [`pairing`], [`status`]: entities.
//! - [`enums`]: the closed value lists.
//! - [`rules`]: PUT, PATCH, CSV, ANNEX_O, DTMF and join rules as pure functions.
//! - [`access`]: roles, operations, and who may call what (Zero Touch included).
//! - [`ports`]: the traits adapters implement (storage, listener transport, platform identity,
//!   clock, ids, password hashing, secret sealing).
//! - [`usage`], [`inventory`], [`health`]: what roomlink learns of rooms (call sessions, what
//!   they are, whether they work).
//! - [`webhook`]: subscriptions, events and the rules of their delivery.
//! - [`live`]: what browsers are told changed, and the tickets that open their streams.
//! - [`cluster`]: the ports that make several instances one (outbound listeners' links, the
//!   event bus).
//! - [`calendar`]: calendar events and which meeting each one asks a room to dial.
//! - [`system`]: clock and CSPRNG.
//! - [`throttle`]: the failed-authentication allowance that a cluster's instances share.
//! - [`template`]: configuration templates: the vendor-neutral settings and their value spaces.
//! - test helpers (feature `test-support`): sample audit entries for other crates' tests.
//!
//! Architecture invariant: this crate depends on no web framework, database driver, HTTP
//! client or async runtime (`cargo xtask boundaries` checks it).

pub mod access;
pub mod audit;
pub mod calendar;
pub mod civil;
pub mod cluster;
pub mod endpoint;
pub mod enterprise;
pub mod enums;
pub mod error;
pub mod health;
pub mod ids;
pub mod inventory;
pub mod listener;
pub mod live;
pub mod pairing;
pub mod ports;
pub mod rules;
pub mod secret;
pub mod status;
pub mod system;
pub mod template;
#[cfg(test)]
mod test_rng;
pub mod throttle;
pub mod token;
pub mod usage;
pub mod webhook;

pub use error::{Error, ErrorKind, Result};
