//! `roomlink-listener`: the listener service a customer runs next to its room systems. It
//! serves listener protocol v1 to roomlink (docs/listener-protocol.md) and reaches each room
//! system through the driver of the endpoint's `controlProtocol`.
//!
//! - [`driver`]: the driver port (pure); [`drivers`]: Cisco HTTP and SSH, Poly Telnet, Mesh.
//! - [`api`]: the protocol's HTTP side; [`request`]: from a request to a device and an action;
//!   [`control`]: one thing at a time per device ([`devices`]), deadlines, IVR tones.
//! - [`calendar`]: `readcalendar`, room calendars read for roomlink (Exchange EWS).
//! - [`settings`]: the configuration layers; [`startup`]: from settings to a running listener.
//! - [`xml`]: the one XML element tree, for Cisco's XML API and Exchange's SOAP answers.

pub mod api;
pub mod calendar;
pub mod control;
pub mod devices;
pub mod driver;
pub mod drivers;
pub mod request;
pub mod settings;
pub mod startup;
pub mod xml;

use roomlink_listener_protocol::version::Version;

/// The listener software's version, reported in `/v1/info` and `X-Listener-Version`: every
/// command of protocol 1 (the simulator's default reports 2.25.0; 3.0.0 was the first production
/// listener after it, 3.1.0 added `pushcalendar`, 3.2.0 `readcalendar`, 3.3.0 `readinventory`,
/// 3.4.0 `readconfiguration` and `writeconfiguration`, 3.5.0 raw Cisco paths in both).
pub const LISTENER_VERSION: Version = Version::new(3, 5, 0);
