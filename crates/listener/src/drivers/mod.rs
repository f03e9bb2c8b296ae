//! The drivers, one per `controlProtocol`.

pub mod mesh;
pub mod poly_telnet;
