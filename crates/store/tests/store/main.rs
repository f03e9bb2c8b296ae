//! Tests of the storage adapters: the port contract (`contract`) against every adapter
//! (`memory`, `sqlite`, `postgres`), plus what only the database adapters promise (migrations,
//! current-thread runtimes, no plaintext secret at rest, operator-readable errors).
//!
//! The PostgreSQL tests create a database per test on the server named by
//! `ROOMLINK_TEST_DATABASE_URL` (e.g. `postgres://postgres@127.0.0.1:5432/test`) and drop it
//! afterwards; when the variable is unset they pass after printing a SKIPPED line.

// Fixtures outside #[test] functions fail loudly too (clippy.toml allows unwrap in tests only).
#![allow(clippy::unwrap_used)]

mod contract;
mod memory;
mod postgres;
mod secrets;
mod sqlite;
mod support;
mod usage_scale;
