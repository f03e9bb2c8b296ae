//! `roomlink-listener`: the listener service a customer runs next to its room systems. It
//! serves listener protocol v1 to roomlink (docs/listener-protocol.md) and reaches each room
//! system through the driver of the endpoint's `controlProtocol`.
//!
//! - [`driver`]: the driver port (pure); [`drivers`]: Cisco HTTP and SSH, Poly Telnet, Mesh.

pub mod driver;
pub mod drivers;
