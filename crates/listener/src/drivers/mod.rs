//! The drivers, one per `controlProtocol`.
