//! Black-box tests of the HTTP API: the real application, real HTTP on loopback, SQLite and
//! PostgreSQL (the latter when `ROOMLINK_TEST_DATABASE_URL` is set; CI sets it).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

#[path = "../support/mod.rs"]
mod support;

mod audit;
mod auto_join;
mod calendar_push;
mod calendars;
mod calendars_oauth;
mod console;
mod control;
mod csv_export;
mod csv_plan;
mod csv_upload;
mod declared;
mod endpoints;
mod errors;
mod exchange;
mod inventory;
mod limits;
mod listeners;
mod listing;
mod live;
mod outbound;
mod real_rooms;
mod reference;
mod relay_clients;
mod template_drift;
mod template_jobs;
mod template_plans;
mod template_raw_paths;
mod templates;
mod tenancy;
mod tokens;
mod usage;
mod webhooks;
mod zero_touch;
