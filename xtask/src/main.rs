//! Repository automation. `cargo xtask <task>`:
//!
//! - `ci`: the README's test command: what the tests need set up (`.ci/setup`), then format
//!   check, clippy with warnings denied, the boundary check, every test (SKIPPED lines repeated
//!   at the end).
//! - `boundaries`: the architecture invariants: `roomlink-domain` and `roomlink-app` reach no
//!   web framework, database driver, HTTP client or async runtime; each crate depends only on
//!   the crates its layer allows; no import circles between the modules of a crate; no Rust
//!   file over 800 lines; no dependency its crate never names.
//! - `bench [--quick] [--rounds N] [--duration SECS] [--pairs 1,2,...] [--no-build] [--profile]`:
//!   the benchmark pairs of `docs/benchmarks.md` (release build, PostgreSQL, PostgREST, wrk;
//!   `--profile` adds perf's top frames of each pair); writes the table there.
//! - `bench-listener [--devices N] [--rounds N] [--no-build]`: one status poll of N emulated
//!   room systems through `roomlink-listener`, and its memory; writes the table there too.
//! - `bench-links [--listeners N] [--requests N] [--no-build]`: N outbound listeners connected
//!   to one roomlink (its memory per connection) and a command's latency through the socket vs
//!   inbound HTTP; prints the table only.
//! - `bench-calendars [--rooms N] [--no-build]`: N rooms' CalDAV calendars (default 10,000) read,
//!   then confirmed unchanged, by auto-join rounds against a loopback CalDAV server, at the
//!   default pace per host and with none; prints the table only.
//! - `bench-scale [--sizes 1000,10000,100000] [--no-build] [--debug] [--duration SECS]
//!   [--spread [--enterprises N]]`: one enterprise of N endpoints per size (CSV load, one row,
//!   first and last list page, PATCH, whole list and CSV export, memory) and how each measure
//!   grows with N; `--spread` adds the same total over many enterprises; a release run writes
//!   the table into `docs/benchmarks.md`, a `--debug` run prints it only.
//! - `bench-memory [--no-build] [--duration SECS]`: an idle roomlink's resident memory split by
//!   mapping, per variant of the settings that decide it, with the one-row throughput each
//!   costs; writes the table into `docs/benchmarks.md`.
//! - `bench-webhooks [--subscriptions 1,10] [--events N] [--no-build]`: N queued webhook
//!   deliveries (default 10,000) drained to a signature-checking receiver on loopback, per
//!   number of subscriptions, on PostgreSQL; writes the table into `docs/benchmarks.md`.
//! - `bench-usage`: usage questions over a year of call sessions for 10,000 rooms on
//!   PostgreSQL (named by `ROOMLINK_TEST_DATABASE_URL`): the ignored
//!   store test `usage_at_a_year_of_sessions` (dev build: the time is the database's); prints
//!   the table only.
//! - `demo [--release] [--exit-after-setup]`: the service and the listener simulator on a
//!   SQLite database in `target/demo`, with demo data and commands to try; Ctrl-C stops both.
//! - `fuzz [--seconds N] [--target NAME]...`: the cargo-fuzz targets of `fuzz/`, N seconds each
//!   (default 30); installs cargo-fuzz if it is missing.
//! - `readme`: runs the README's shell blocks, then the "Try it" sections of the docs, in order
//!   and as written, against a fresh service on a free port (`readme.rs` says how).
//! - `openapi`: writes `docs/openapi.json` from the code.
//! - `console-test [--release]`: the web console (`/console/`) driven by playwright-core in
//!   headless Chromium against a real `roomlink serve` and the simulator; screenshots in
//!   `docs/console/`.
//! - `reference-page`: renders the API reference (`/api/docs/`) in headless Chromium, checks it
//!   lists the operations and writes `docs/reference-page.png`.
//! - `conformance [--max-examples N] [--mode positive|negative|all]`: schemathesis against a
//!   throwaway service (installs it from PyPI if missing); fails on server errors or
//!   undocumented responses.
//!
//! Few dependencies (xtask/Cargo.toml says which and why): it must build in seconds.

use std::process::{Command, ExitCode};

mod apidocs;
mod bench;
mod boundaries;
mod ci;
mod demo;
mod fuzz;
mod http;
mod readme;

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    let result = match task.as_deref() {
        Some("ci") => ci::run(),
        Some("boundaries") => boundaries::check().map(|()| eprintln!("boundaries: ok")),
        Some("bench") => bench::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("bench-listener") => {
            bench::listener::run(&std::env::args().skip(2).collect::<Vec<_>>())
        }
        Some("bench-links") => bench::links::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("bench-calendars") => {
            bench::calendars::run(&std::env::args().skip(2).collect::<Vec<_>>())
        }
        Some("bench-scale") => bench::scale::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("bench-memory") => bench::memory::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("bench-webhooks") => {
            bench::webhooks::run(&std::env::args().skip(2).collect::<Vec<_>>())
        }
        Some("bench-usage") => bench_usage(),
        Some("console-test") => demo::browser::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("demo") => demo::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("fuzz") => fuzz::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("openapi") => apidocs::openapi(),
        Some("readme") => readme::run(&std::env::args().skip(2).collect::<Vec<_>>()),
        Some("reference-page") => apidocs::reference_page(),
        Some("conformance") => apidocs::conformance(&std::env::args().skip(2).collect::<Vec<_>>()),
        _ => {
            eprintln!(
                "usage: cargo xtask \
                 <ci|boundaries|bench|bench-listener|bench-links|bench-calendars|bench-scale|bench-memory|bench-webhooks|bench-usage|demo|console-test|fuzz|openapi|readme|reference-page|conformance>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `cargo` with `args` from the workspace root; an error names the failed step.
pub(crate) fn cargo(args: &[&str]) -> Result<(), String> {
    eprintln!("$ cargo {}", args.join(" "));
    let status = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(project_root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed", args.join(" ")))
    }
}

/// Every debug binary of the workspace, its dependencies built with the features `cargo test
/// --workspace` gives them (dev-dependencies' included). Right after the tests this only links
/// what they did not need; `cargo build -p roomlink` would rebuild every dependency whose
/// features differ (3 min 24 s in a CI run).
pub(crate) fn build_debug_binaries() -> Result<(), String> {
    cargo(&["build", "--workspace", "--bins", "--tests"])
}

/// Cargo's target directory: `CARGO_TARGET_DIR` (relative to the repository) or `target`.
pub(crate) fn target_dir() -> std::path::PathBuf {
    let root = project_root();
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

pub(crate) fn project_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default()
}

/// The usage measurement lives with the store's tests (it needs the store's internals: the
/// migration's statements, a database per run); this runs it with its output shown.
fn bench_usage() -> Result<(), String> {
    const VAR: &str = "ROOMLINK_TEST_DATABASE_URL";
    if std::env::var_os(VAR).is_none() {
        return Err(format!(
            "bench-usage needs a PostgreSQL server to create its database on: set {VAR}, \
             e.g. postgres://postgres@127.0.0.1:5432/test"
        ));
    }
    cargo(&[
        "test",
        "--workspace",
        "--test",
        "store",
        "usage_at_a_year_of_sessions",
        "--",
        "--ignored",
        "--nocapture",
    ])
}
