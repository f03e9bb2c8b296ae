//! `cargo xtask ci`, the README's test command: it first provides what the tests need, as CI
//! does (`.ci/setup`: PostgreSQL with a database `test`, nats-server, Radicale; installed when
//! missing and run as root, named and failing otherwise), then checks formatting, clippy and the
//! boundaries, and runs every test with the PostgreSQL tests on. A test that skipped says so in
//! a line with `SKIPPED`; those lines are repeated at the end, where nobody misses them.

use crate::{cargo, project_root};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// The server `.ci/setup` provides, unless the caller names another.
const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/test";
const DATABASE_VAR: &str = "ROOMLINK_TEST_DATABASE_URL";

pub fn run() -> Result<(), String> {
    set_up()?;
    cargo(&["fmt", "--all", "--", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    crate::boundaries::check()?;
    tests()
}

fn set_up() -> Result<(), String> {
    eprintln!("$ bash .ci/setup");
    let status = Command::new("bash")
        .arg(".ci/setup")
        .current_dir(project_root())
        .status()
        .map_err(|e| format!("cannot run .ci/setup: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err("the tests' set-up (.ci/setup) failed: it says what is missing above".to_owned())
    }
}

/// Every test binary (every failure reported, not only the first), with the PostgreSQL tests
/// on; the lines saying a test skipped are repeated at the end.
fn tests() -> Result<(), String> {
    let args = ["test", "--workspace", "--no-fail-fast"];
    eprintln!("$ cargo {}", args.join(" "));
    let database = std::env::var(DATABASE_VAR).unwrap_or_else(|_| DEFAULT_DATABASE_URL.to_owned());
    let mut child = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(project_root())
        .env(DATABASE_VAR, database)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    // Tests write SKIPPED lines straight to stderr (the harness captures print!/eprint! only).
    let mut skipped = Vec::new();
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = writeln!(std::io::stderr(), "{line}");
            if line.contains("SKIPPED") {
                skipped.push(line.trim().to_owned());
            }
        }
    }
    let status = child.wait().map_err(|e| format!("cargo test: {e}"))?;
    if !skipped.is_empty() {
        eprintln!("\n*** {} test lines said SKIPPED: ***", skipped.len());
        for line in &skipped {
            eprintln!("    {line}");
        }
    }
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed", args.join(" ")))
    }
}
