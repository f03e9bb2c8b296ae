//! The drivers, one per `controlProtocol`.

pub mod cisco_http;
