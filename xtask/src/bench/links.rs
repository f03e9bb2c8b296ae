//! `cargo xtask bench-links [--listeners N] [--requests N] [--no-build]`
//!
//! Outbound listeners at scale (issue 14), with real processes on loopback:
//!
//! 1. one `roomlink` (SQLite in `target/bench/links`) with N outbound listeners (default 1,000)
//!    connected from one `roomlink-listener-sim` process: roomlink's resident memory before the
//!    connections and with all N open, the difference per connection (split by kind of
//!    mapping, as `bench-memory` splits it), the simulator's own, and both processes' CPU
//!    while the connections are open and nothing is asked of them;
//! 2. the latency of one command (`POST /api/endpoints/{id}/mutemicrophone`) to an endpoint
//!    behind one of those outbound listeners and to one behind an inbound listener (a second
//!    simulator serving HTTP), sequentially, alternating A B A B after a warm-up: p50 and p99
//!    of each and the difference.
//!
//! Figures are printed, never asserted and never written into the docs.

use super::cpu::{cpu_seconds, cpu_used};
use super::memory::resident_parts;
use super::procs::{
    Service, access_token, enterprise_and_user, listening_line, memory_kb, serve_roomlink,
};
use super::report::quantile;
use crate::http;
use serde_json::Value;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

const ENTERPRISE: &str = "bench-links";
const USERNAME: &str = "bench-links-ops";
const PASSWORD: &str = "bench-links-password-01";
/// The one secret every outbound listener is registered with (16–256 characters).
const SECRET: &str = "bench-links-outbound-secret-0001";
const INBOUND_SECRET: &str = "bench-links-inbound-secret-00001";
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(300);
const WARM_UP: usize = 100;
/// How long the CPU of roomlink and the simulator is watched with every connection open and
/// nothing asked of either.
const AT_REST: Duration = Duration::from_secs(10);

struct Options {
    listeners: usize,
    requests: usize,
    build: bool,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        listeners: 1_000,
        requests: 1_000,
        build: true,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{name} needs a positive number"))
        };
        match arg.as_str() {
            "--listeners" => o.listeners = number("--listeners")?,
            "--requests" => o.requests = number("--requests")?,
            "--no-build" => o.build = false,
            other => {
                return Err(format!(
                    "unknown option {other}\nusage: cargo xtask bench-links \
                     [--listeners N] [--requests N] [--no-build]"
                ));
            }
        }
    }
    Ok(o)
}

/// The `id` of every listener in a `GET /api/listenerservices` answer whose `connected` is true.
fn connected_ids(answer: &str) -> Result<HashSet<String>, String> {
    let list: Value =
        serde_json::from_str(answer).map_err(|e| format!("the listener list: {e}"))?;
    let items = list.as_array().ok_or("the listener list is not an array")?;
    Ok(items
        .iter()
        .filter(|l| l.get("connected").and_then(Value::as_bool) == Some(true))
        .filter_map(|l| l.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect())
}

struct Api {
    address: String,
    token: String,
}

impl Api {
    fn call(&self, method: &str, path: &str, body: &str) -> Result<http::Response, String> {
        let mut headers = vec![("X-Access-Token", self.token.as_str())];
        if !body.is_empty() {
            headers.push(("Content-Type", "application/json"));
        }
        http::request(
            &self.address,
            method,
            path,
            &headers,
            body.as_bytes(),
            HTTP_TIMEOUT,
        )
    }

    fn create(&self, path: &str, body: &str) -> Result<String, String> {
        let answer = self.call("POST", path, body)?.ok(&format!("POST {path}"))?;
        answer.json_string("id")
    }

    /// One command, timed from the client: connect, request, whole answer.
    fn timed_command(&self, endpoint: &str) -> Result<f64, String> {
        let path = format!("/api/endpoints/{endpoint}/mutemicrophone");
        let started = Instant::now();
        let answer = self.call("POST", &path, "")?;
        let elapsed = started.elapsed().as_secs_f64() * 1000.0;
        if answer.status != 204 {
            return Err(format!(
                "POST {path}: {} {}",
                answer.status,
                answer.text().chars().take(300).collect::<String>()
            ));
        }
        Ok(elapsed)
    }
}

fn kib(kb: Option<u64>) -> String {
    kb.map_or("n/a".to_owned(), |k| {
        format!("{:.1} MiB", k as f64 / 1024.0)
    })
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let super::procs::BenchDirs {
        target, dir, load, ..
    } = super::procs::BenchDirs::new("links")?;
    if o.build {
        crate::cargo(&[
            "build",
            "--release",
            "-p",
            "roomlink",
            "-p",
            "roomlink-listener-sim",
        ])?;
    }
    let bin = |name: &str| target.join("release").join(name);
    let roomlink_bin = bin("roomlink");

    eprintln!("bench-links: enterprise, user, roomlink");
    enterprise_and_user(
        &roomlink_bin,
        &dir,
        &[],
        &[ENTERPRISE, "--create-database"],
        USERNAME,
        PASSWORD,
    )?;
    let (mut server, address) = serve_roomlink(&roomlink_bin, &dir, &[], "roomlink.log")?;
    let api = Api {
        address: address.clone(),
        token: access_token(&address, USERNAME, PASSWORD)?,
    };

    eprintln!(
        "bench-links: registering {} outbound listeners",
        o.listeners
    );
    let registering = Instant::now();
    let mut ids = Vec::with_capacity(o.listeners);
    for i in 0..o.listeners {
        ids.push(api.create(
            "/api/listenerservices",
            &format!(
                "{{\"name\": \"outbound {i}\", \"connection\": \"outbound\", \"secret\": \"{SECRET}\"}}"
            ),
        )?);
    }
    let registered_in = registering.elapsed();
    std::thread::sleep(Duration::from_secs(2));
    let idle = memory_kb(server.pid());
    let idle_parts = resident_parts(server.pid())?;

    eprintln!("bench-links: one simulator dialing home for all of them");
    let mut sim_command = Command::new(bin("roomlink-listener-sim"));
    // The flag repeated, a thousand ids each: one argument of 10,000 ids would pass Linux's
    // 128 KiB limit on a single argument.
    for chunk in ids.chunks(1_000) {
        sim_command.args(["--listener-id", &chunk.join(",")]);
    }
    sim_command
        .args(["--connect", &format!("http://{address}")])
        .args(["--secret", SECRET])
        .env("RUST_LOG", "warn");
    let mut sim = Service::start(
        "roomlink-listener-sim (outbound)",
        sim_command,
        &dir.join("sim-outbound.log"),
    )?;
    let dialing = Instant::now();
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let all_connected_in = loop {
        sim.check_alive()?;
        server.check_alive()?;
        let list = api
            .call("GET", "/api/listenerservices", "")?
            .ok("GET /api/listenerservices")?;
        let connected = connected_ids(&list.text())?;
        let count = wanted.iter().filter(|id| connected.contains(**id)).count();
        if count == ids.len() {
            break dialing.elapsed();
        }
        if dialing.elapsed() > CONNECT_TIMEOUT {
            return Err(format!(
                "only {count} of {} listeners connected within {CONNECT_TIMEOUT:?}",
                ids.len()
            ));
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    std::thread::sleep(Duration::from_secs(2));
    let with_links = memory_kb(server.pid());
    let links_parts = resident_parts(server.pid())?;
    let sim_memory = memory_kb(sim.pid());
    // What the open connections cost while no command runs (pings, timers, heartbeats), on
    // both sides: the simulator shares the cores with roomlink.
    let pids = [[server.pid()], [sim.pid()]];
    let before = pids.map(|pid| cpu_seconds(&pid));
    std::thread::sleep(AT_REST);
    let [roomlink_at_rest, sim_at_rest] = [0, 1].map(|k| {
        cpu_used(before[k], cpu_seconds(&pids[k])).map(|used| used / AT_REST.as_secs_f64())
    });

    eprintln!("bench-links: an inbound simulator and one endpoint behind each kind");
    let mut inbound_command = Command::new(bin("roomlink-listener-sim"));
    inbound_command
        .args(["--bind", "127.0.0.1:0", "--secret", INBOUND_SECRET])
        .env("RUST_LOG", "warn");
    let mut inbound = Service::start(
        "roomlink-listener-sim (inbound)",
        inbound_command,
        &dir.join("sim-inbound.log"),
    )?;
    let inbound_address = inbound.wait_for(Duration::from_secs(30), listening_line)?;
    let inbound_id = api.create(
        "/api/listenerservices",
        &format!(
            "{{\"name\": \"inbound\", \"baseUrl\": \"http://{inbound_address}\", \"secret\": \"{INBOUND_SECRET}\"}}"
        ),
    )?;
    let endpoint = |name: &str, ip: &str, listener: &str| {
        format!(
            "{{\"name\": \"{name}\", \"ipAddress\": \"{ip}\", \"controlProtocol\": \"TANDBERG_SSH\", \
             \"listenerServiceId\": \"{listener}\", \"username\": \"admin\", \"password\": \"room-secret\"}}"
        )
    };
    let via_socket = api.create(
        "/api/endpoints",
        &endpoint("Via the socket", "127.78.0.1", &ids[0]),
    )?;
    let via_http = api.create(
        "/api/endpoints",
        &endpoint("Via HTTP", "127.78.0.2", &inbound_id),
    )?;

    eprintln!(
        "bench-links: {WARM_UP} warm-up commands each, then {} each, alternating",
        o.requests
    );
    for _ in 0..WARM_UP {
        api.timed_command(&via_socket)?;
        api.timed_command(&via_http)?;
    }
    let (mut socket_ms, mut http_ms) = (
        Vec::with_capacity(o.requests),
        Vec::with_capacity(o.requests),
    );
    for _ in 0..o.requests {
        socket_ms.push(api.timed_command(&via_socket)?);
        http_ms.push(api.timed_command(&via_http)?);
    }
    let still_connected = connected_ids(
        &api.call("GET", "/api/listenerservices", "")?
            .ok("GET /api/listenerservices")?
            .text(),
    )?
    .iter()
    .filter(|id| wanted.contains(id.as_str()))
    .count();
    server.check_alive()?;
    sim.check_alive()?;
    inbound.check_alive()?;
    let after = memory_kb(server.pid());
    drop(inbound);
    drop(sim);
    drop(server);

    socket_ms.sort_by(f64::total_cmp);
    http_ms.sort_by(f64::total_cmp);
    let (s50, s99) = (quantile(&socket_ms, 0.5), quantile(&socket_ms, 0.99));
    let (h50, h99) = (quantile(&http_ms, 0.5), quantile(&http_ms, 0.99));
    let per_connection = match (idle, with_links) {
        (Some((before, _)), Some((with, _))) => format!(
            "{:.1} KiB",
            (with as f64 - before as f64) / o.listeners as f64
        ),
        _ => "n/a".to_owned(),
    };
    let n = o.listeners;
    let mut table = String::new();
    let _ = writeln!(table, "| measure | value |\n|---|---|");
    let _ = writeln!(
        table,
        "| outbound listeners | {n}, one simulator process, all with one secret |"
    );
    let _ = writeln!(
        table,
        "| registering them (sequential POSTs) | {:.1} s |",
        registered_in.as_secs_f64()
    );
    let _ = writeln!(
        table,
        "| all {n} `connected: true` after the simulator started | {:.1} s |",
        all_connected_in.as_secs_f64()
    );
    let _ = writeln!(
        table,
        "| roomlink RSS, listeners registered, none connected | {} |",
        kib(idle.map(|m| m.0))
    );
    let _ = writeln!(
        table,
        "| roomlink RSS, {n} connections open | {} (peak so far {}) |",
        kib(with_links.map(|m| m.0)),
        kib(with_links.map(|m| m.1))
    );
    let _ = writeln!(table, "| roomlink RSS per connection | {per_connection} |");
    let per_link = |now: u64, then: u64| format!("{:.1}", (now as f64 - then as f64) / n as f64);
    let _ = writeln!(
        table,
        "| of which (KiB per connection): main heap / malloc arenas / thread stacks / other | {} / {} / {} / {} |",
        per_link(links_parts.main_heap, idle_parts.main_heap),
        per_link(links_parts.arenas, idle_parts.arenas),
        per_link(links_parts.stacks, idle_parts.stacks),
        per_link(
            links_parts.total() - links_parts.main_heap - links_parts.arenas - links_parts.stacks,
            idle_parts.total() - idle_parts.main_heap - idle_parts.arenas - idle_parts.stacks
        ),
    );
    let share = |s: Option<f64>| s.map_or("n/a".to_owned(), |s| format!("{:.1} %", s * 100.0));
    let _ = writeln!(
        table,
        "| CPU with {n} connections open and no commands, {} s, share of one core: roomlink / simulator | {} / {} |",
        AT_REST.as_secs(),
        share(roomlink_at_rest),
        share(sim_at_rest),
    );
    let _ = writeln!(
        table,
        "| roomlink RSS after the commands | {} |",
        kib(after.map(|m| m.0))
    );
    let _ = writeln!(
        table,
        "| simulator RSS, {n} connections | {} (peak {}) |",
        kib(sim_memory.map(|m| m.0)),
        kib(sim_memory.map(|m| m.1))
    );
    let _ = writeln!(
        table,
        "| `mutemicrophone` via the socket, p50 / p99 | {s50:.3} ms / {s99:.3} ms |"
    );
    let _ = writeln!(
        table,
        "| `mutemicrophone` via inbound HTTP, p50 / p99 | {h50:.3} ms / {h99:.3} ms |"
    );
    let _ = writeln!(
        table,
        "| socket minus HTTP, p50 / p99 | {:+.3} ms / {:+.3} ms (goal: p50 ≤ +1 ms) |",
        s50 - h50,
        s99 - h99
    );
    let _ = writeln!(
        table,
        "| listeners still connected after the commands | {still_connected} of {n} |"
    );
    let _ = writeln!(
        table,
        "\n{} commands each after {WARM_UP} warm-up each, alternating socket, HTTP, socket, ...; \
         timed by the client (a new TCP connection per request, `Connection: close`). \
         Release build, SQLite, log level info (JSON), status polls off; \
         {} cores, load average at start {load}. Run: `cargo xtask bench-links`.",
        o.requests,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let mut out = std::io::stdout().lock();
    std::io::Write::write_all(&mut out, table.as_bytes()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connected_listeners_are_read_from_the_list() {
        let list = r#"[{"id": "a", "connected": true}, {"id": "b", "connected": false},
                       {"id": "c", "connected": null}, {"id": "d"}]"#;
        let ids = connected_ids(list).expect("a list");
        assert_eq!(ids, HashSet::from(["a".to_owned()]));
        assert!(connected_ids("{}").is_err());
    }

    #[test]
    fn options_and_their_defaults() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let o = options(&args(&[])).expect("defaults");
        assert_eq!((o.listeners, o.requests, o.build), (1_000, 1_000, true));
        let o = options(&args(&[
            "--listeners",
            "5",
            "--requests",
            "7",
            "--no-build",
        ]))
        .expect("options");
        assert_eq!((o.listeners, o.requests, o.build), (5, 7, false));
        assert!(options(&args(&["--listeners", "0"])).is_err());
        assert!(options(&args(&["--nope"])).is_err());
    }
}
