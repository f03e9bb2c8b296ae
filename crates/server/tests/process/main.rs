//! The real `roomlink` binary as operators run it, one process or several: admin commands,
//! start-up and shutdown, clients that go away, a cluster on NATS, faults of what it depends
//! on, and the list cache across instances. The in-process API tests are in `tests/api`;
//! `tests/settings.rs` stays its own target because it sets process-wide environment variables.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

#[path = "../support/mod.rs"]
mod support;

mod admin;
mod binary;
mod cancellation;
mod cluster;
mod cluster_limits;
mod faults;
mod list_cache;
mod live;
mod operations;
mod raw_listener;
mod shutdown;
