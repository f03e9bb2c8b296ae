//! What the test targets share: the application in process (`app`, with real HTTP on loopback)
//! and the real `roomlink` binary run as an operator would (`service`).

#![allow(dead_code)] // each target uses part of it

pub mod app;
pub mod nats;
pub mod service;
pub mod sse;
