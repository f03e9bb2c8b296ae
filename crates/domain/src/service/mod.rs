//! Use cases: plain structs over the ports, one per area. Each method takes the caller's
//! [`auth::Principal`] and enforces the role rules of `access` before touching anything.

pub mod admin;
pub mod auth;
pub mod endpoints;
pub mod listeners;
pub mod tokens;
