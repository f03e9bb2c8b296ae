//! `cargo xtask bench-webhooks [--subscriptions 1,10] [--events N] [--no-build]`
//!
//! Webhook deliveries per second (issue 37, item 3), with real processes on loopback: a
//! release `roomlink` on PostgreSQL (its own database, dropped afterwards), and a receiver in
//! this process that checks every delivery's Standard Webhooks signature, answers 204 and keeps
//! its connections open as a production receiver would.
//!
//! For each number of subscriptions S: S subscriptions (to `command.failed`, which nothing here
//! raises; `webhook.test` events go to the subscription they name whatever it asked for), each paused while
//! N / S events are queued through `POST /api/webhooks/{id}/test` (each one an outbox row
//! written by the API), then all resumed at once. The figure is the drain: every delivery read
//! from the outbox, signed, sent and its outcome written back, as the delivery rounds do in
//! production (`webhooks.delivery_interval_ms` at its default, so the first delivery waits up
//! to a round). The CPU each process spent per delivery and roomlink's memory are read from
//! `/proc`. The table goes into docs/benchmarks.md between its markers.

use super::cpu::{Usage, describe};
use super::procs::{self, serve_roomlink};
use super::report::{self, Section};
use super::{PG_ADDRESS, PG_MAINTENANCE_DB, PG_PORT, psql};
use crate::http;
use base64::prelude::{BASE64_STANDARD, Engine as _};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const DATABASE: &str = "roomlink_bench_webhooks";
const ENTERPRISE: &str = "bench-webhooks";
const USERNAME: &str = "bench-webhooks-admin";
const PASSWORD: &str = "bench-webhooks-password-01";
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// However slow the drain, the bench gives up after this.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(600);
const SECTION: Section = Section {
    begin: "<!-- bench-webhooks:begin -->",
    end: "<!-- bench-webhooks:end -->",
    heading: "Webhook deliveries",
};

struct Options {
    subscriptions: Vec<usize>,
    events: usize,
    build: bool,
}

fn options(args: &[String]) -> Result<Options, String> {
    let usage =
        "usage: cargo xtask bench-webhooks [--subscriptions 1,10] [--events N] [--no-build]";
    let mut o = Options {
        subscriptions: vec![1, 10],
        events: 10_000,
        build: true,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--subscriptions" => {
                o.subscriptions = it
                    .next()
                    .map(|v| v.split(',').map(|n| n.trim().parse::<usize>().ok()))
                    .and_then(|n| n.collect::<Option<Vec<usize>>>())
                    .filter(|n| !n.is_empty() && n.iter().all(|s| (1..=32).contains(s)))
                    .ok_or("--subscriptions needs numbers from 1 to 32, comma-separated")?;
            }
            "--events" => {
                o.events = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|n| *n > 0)
                    .ok_or("--events needs a positive number")?;
            }
            "--no-build" => o.build = false,
            other => return Err(format!("unknown option {other}\n{usage}")),
        }
    }
    Ok(o)
}

/// One delivery as the receiver saw it.
struct Arrival {
    at: Instant,
    event_id: String,
    signed: bool,
}

/// The receiver: a thread per connection, HTTP/1.1 keep-alive, a 204 for every request. The
/// signing keys are known before any delivery can come (the subscriptions are paused until
/// then); `/s{i}` is subscription i's path.
struct Receiver {
    address: String,
    keys: Arc<Mutex<Vec<Vec<u8>>>>,
    arrivals: Arc<Mutex<Vec<Arrival>>>,
}

impl Receiver {
    fn start() -> Result<Receiver, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("receiver: {e}"))?;
        let address = listener
            .local_addr()
            .map_err(|e| format!("receiver: {e}"))?
            .to_string();
        let keys = Arc::new(Mutex::new(Vec::new()));
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let (k, a) = (keys.clone(), arrivals.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (k, a) = (k.clone(), a.clone());
                std::thread::spawn(move || serve(stream, &k, &a));
            }
        });
        Ok(Receiver {
            address,
            keys,
            arrivals,
        })
    }

    fn count(&self) -> usize {
        self.arrivals.lock().map_or(0, |a| a.len())
    }
}

/// Serves one connection until the client closes it.
fn serve(stream: TcpStream, keys: &Mutex<Vec<Vec<u8>>>, arrivals: &Mutex<Vec<Arrival>>) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader) {
        let at = Instant::now();
        // One write per answer: no Nagle delay between a status line and its headers.
        if writer
            .write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
            .is_err()
        {
            return;
        }
        let key = request
            .path
            .strip_prefix("/s")
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| keys.lock().ok()?.get(i).cloned());
        let signed = key.is_some_and(|key| request.signed_with(&key));
        if let Ok(mut all) = arrivals.lock() {
            all.push(Arrival {
                at,
                event_id: request.event_id,
                signed,
            });
        }
    }
}

struct Request {
    path: String,
    event_id: String,
    timestamp: String,
    signature: String,
    body: Vec<u8>,
}

impl Request {
    /// Standard Webhooks 1.0: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`.
    fn signed_with(&self, key: &[u8]) -> bool {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
            return false;
        };
        mac.update(self.event_id.as_bytes());
        mac.update(b".");
        mac.update(self.timestamp.as_bytes());
        mac.update(b".");
        mac.update(&self.body);
        let expected = format!("v1,{}", BASE64_STANDARD.encode(mac.finalize().into_bytes()));
        self.signature
            .split_ascii_whitespace()
            .any(|s| s == expected)
    }
}

/// The next request on a connection; `None` when it closed or sent something unreadable.
fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let path = line.split_whitespace().nth(1)?.to_owned();
    let (mut length, mut event_id, mut timestamp, mut signature) = (0, None, None, None);
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        let value = value.trim().to_owned();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().ok()?,
            "webhook-id" => event_id = Some(value),
            "webhook-timestamp" => timestamp = Some(value),
            "webhook-signature" => signature = Some(value),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        path,
        event_id: event_id.unwrap_or_default(),
        timestamp: timestamp.unwrap_or_default(),
        signature: signature.unwrap_or_default(),
        body,
    })
}

/// The signing key a `whsec_` secret encodes.
fn key_of(secret: &str) -> Result<Vec<u8>, String> {
    secret
        .strip_prefix("whsec_")
        .and_then(|b| BASE64_STANDARD.decode(b).ok())
        .ok_or_else(|| "a subscription's secret is not whsec_ and base64".to_owned())
}

/// roomlink's settings for this bench: its PostgreSQL database instead of SQLite, with a service
/// key, loopback webhook targets allowed, the log at `warn`.
fn settings(database_url: &str, service_key: String) -> Vec<(&'static str, String)> {
    vec![
        ("ROOMLINK__DATABASE__URL", database_url.to_owned()),
        // A server database needs a service key shared by every instance (SQLite makes one).
        ("ROOMLINK__SECURITY__SERVICE_KEY", service_key),
        ("ROOMLINK__WEBHOOKS__ALLOW_NETWORKS", "loopback".to_owned()),
        ("ROOMLINK__LOG__LEVEL", "warn".to_owned()),
    ]
}

/// One measured drain.
struct Drain {
    subscriptions: usize,
    events: usize,
    queued_in: Duration,
    first_after: Duration,
    last_after: Duration,
    unsigned: usize,
    duplicates: usize,
    cpu: Vec<(&'static str, f64)>,
    rss_kb: Option<(u64, u64)>,
}

impl Drain {
    /// Deliveries per second from the first to the last (the outbox's own pace, without the
    /// wait for the first round).
    fn rate(&self) -> f64 {
        let span = self
            .last_after
            .saturating_sub(self.first_after)
            .as_secs_f64();
        (self.events.saturating_sub(1)) as f64 / span.max(1e-9)
    }
}

fn call(
    address: &str,
    token: &str,
    method: &str,
    path: &str,
    body: &str,
) -> Result<http::Response, String> {
    let mut headers = vec![("X-Access-Token", token)];
    if !body.is_empty() {
        headers.push(("Content-Type", "application/json"));
    }
    http::request(
        address,
        method,
        path,
        &headers,
        body.as_bytes(),
        HTTP_TIMEOUT,
    )?
    .ok(&format!("{method} {path}"))
}

fn measure(bin: &Path, dir: &Path, subscriptions: usize, events: usize) -> Result<Drain, String> {
    let scratch = dir.join(format!("s{subscriptions}"));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    for sql in [
        format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"),
        format!("CREATE DATABASE {DATABASE}"),
    ] {
        psql(&scratch, PG_MAINTENANCE_DB, &sql)?;
    }
    let url = format!("postgres://postgres@{PG_ADDRESS}:{PG_PORT}/{DATABASE}");
    let settings = settings(&url, BASE64_STANDARD.encode(super::random_bytes(32)?));
    procs::enterprise_and_user(
        bin,
        &scratch,
        &settings,
        &[ENTERPRISE, "--create-database"],
        USERNAME,
        PASSWORD,
    )?;
    let (mut server, address) = serve_roomlink(bin, &scratch, &settings, "roomlink.log")?;
    let token = procs::access_token(&address, USERNAME, PASSWORD)?;

    let receiver = Receiver::start()?;
    let mut ids = Vec::with_capacity(subscriptions);
    for i in 0..subscriptions {
        let created = call(
            &address,
            &token,
            "POST",
            "/api/webhooks",
            &format!(
                "{{\"url\": \"http://{}/s{i}\", \"eventTypes\": [\"command.failed\"]}}",
                receiver.address
            ),
        )?;
        let id = created.json_string("id")?;
        let key = key_of(&created.json_string("secret")?)?;
        receiver.keys.lock().map_err(|_| "receiver keys")?.push(key);
        call(
            &address,
            &token,
            "POST",
            &format!("/api/webhooks/{id}/pause"),
            "",
        )?;
        ids.push(id);
    }
    eprintln!("bench-webhooks: {subscriptions} subscription(s): queueing {events} events");
    let queueing = Instant::now();
    for n in 0..events {
        let id = &ids[n % subscriptions];
        call(
            &address,
            &token,
            "POST",
            &format!("/api/webhooks/{id}/test"),
            "",
        )?;
    }
    let queued_in = queueing.elapsed();
    if receiver.count() != 0 {
        return Err("a paused subscription's delivery arrived".into());
    }

    let cpu_before = Usage::now();
    let resumed = Instant::now();
    for id in &ids {
        call(
            &address,
            &token,
            "POST",
            &format!("/api/webhooks/{id}/resume"),
            "",
        )?;
    }
    while receiver.count() < events {
        server.check_alive()?;
        if resumed.elapsed() > DRAIN_TIMEOUT {
            return Err(format!(
                "{} of {events} deliveries within {DRAIN_TIMEOUT:?}",
                receiver.count()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let cpu = Usage::now().per_request_since(&cpu_before, events as f64);
    let rss_kb = procs::memory_kb(server.pid());
    let arrivals = receiver.arrivals.lock().map_err(|_| "receiver arrivals")?;
    let first = arrivals.iter().map(|a| a.at).min().unwrap_or(resumed);
    let last = arrivals.iter().map(|a| a.at).max().unwrap_or(resumed);
    let distinct: HashSet<&str> = arrivals.iter().map(|a| a.event_id.as_str()).collect();
    let drain = Drain {
        subscriptions,
        events,
        queued_in,
        first_after: first.saturating_duration_since(resumed),
        last_after: last.saturating_duration_since(resumed),
        unsigned: arrivals.iter().filter(|a| !a.signed).count(),
        duplicates: arrivals.len() - distinct.len(),
        cpu,
        rss_kb,
    };
    drop(arrivals);
    server.stop();
    psql(
        &scratch,
        PG_MAINTENANCE_DB,
        &format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"),
    )?;
    Ok(drain)
}

fn table(drains: &[Drain], footer: &str) -> String {
    let mut out = String::from(
        "| subscriptions | deliveries | queued through the API | resume → first delivery | \
         resume → last | **deliveries/s** (first to last) | CPU per delivery | roomlink RSS after (peak) | \
         signatures that failed | delivered twice |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for d in drains {
        let rss = d.rss_kb.map_or("n/a".to_owned(), |(now, peak)| {
            format!(
                "{:.1} MiB ({:.1} MiB)",
                now as f64 / 1024.0,
                peak as f64 / 1024.0
            )
        });
        out.push_str(&format!(
            "| {} | {} | {:.1} s ({:.0}/s) | {:.2} s | {:.2} s | **{:.0}** | {} | {rss} | {} | {} |\n",
            d.subscriptions,
            d.events,
            d.queued_in.as_secs_f64(),
            d.events as f64 / d.queued_in.as_secs_f64().max(1e-9),
            d.first_after.as_secs_f64(),
            d.last_after.as_secs_f64(),
            d.rate(),
            describe(&d.cpu),
            d.unsigned,
            d.duplicates,
        ));
    }
    format!("{out}\n{footer}\n")
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let super::procs::BenchDirs {
        root,
        target,
        dir,
        load,
    } = super::procs::BenchDirs::new("webhooks")?;
    if o.build {
        crate::cargo(&["build", "--release", "-p", "roomlink"])?;
    }
    let bin = target.join("release").join("roomlink");
    let mut drains = Vec::new();
    for &subscriptions in &o.subscriptions {
        drains.push(measure(&bin, &dir, subscriptions, o.events)?);
    }
    let version = psql(&dir, PG_MAINTENANCE_DB, "SHOW server_version").unwrap_or_default();
    let footer = format!(
        "Build: release. PostgreSQL {version} at {PG_ADDRESS}:{PG_PORT} (`database.max_connections` \
         16), `webhooks.delivery_interval_ms` 1000 (default), the receiver in xtask on loopback \
         (keep-alive, checks every signature, answers 204 at once). CPU per delivery: roomlink and \
         postgres processes from `/proc`, over the drain. Commit {}, {} cores, load average at \
         start {load}. Run: `cargo xtask bench-webhooks --subscriptions {} --events {}`.",
        report::git_head(&root),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        o.subscriptions
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(","),
        o.events,
    );
    let table = table(&drains, &footer);
    let _ = std::io::stdout().lock().write_all(table.as_bytes());
    report::write_section(&root.join("docs/benchmarks.md"), &SECTION, &table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_their_defaults() {
        let o = options(&[]).unwrap();
        assert_eq!(
            (o.subscriptions, o.events, o.build),
            (vec![1, 10], 10_000, true)
        );
        let args: Vec<String> = ["--subscriptions", "4", "--events", "50", "--no-build"]
            .map(String::from)
            .into();
        let o = options(&args).unwrap();
        assert_eq!((o.subscriptions, o.events, o.build), (vec![4], 50, false));
        assert!(options(&["--subscriptions".into(), "0".into()]).is_err());
        assert!(options(&["--events".into(), "x".into()]).is_err());
    }

    #[test]
    fn a_request_is_read_and_its_signature_checked() {
        let key = b"0123456789abcdef".to_vec();
        let body = br#"{"type":"webhook.test"}"#;
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
        mac.update(b"evt_1.1700000000.");
        mac.update(body);
        let signature = format!("v1,{}", BASE64_STANDARD.encode(mac.finalize().into_bytes()));
        let wire = format!(
            "POST /s0 HTTP/1.1\r\nWebhook-Id: evt_1\r\nwebhook-timestamp: 1700000000\r\n\
             webhook-signature: v1,bm90IGl0 {signature}\r\ncontent-length: {}\r\n\r\n{}",
            body.len(),
            String::from_utf8_lossy(body)
        );
        let mut reader = BufReader::new(wire.as_bytes());
        let request = read_request(&mut reader).unwrap();
        assert_eq!(
            (request.path.as_str(), request.event_id.as_str()),
            ("/s0", "evt_1")
        );
        assert!(request.signed_with(&key));
        assert!(!request.signed_with(b"another key"));
        assert!(read_request(&mut reader).is_none(), "the connection ended");
        assert_eq!(key_of("whsec_MDEyMzQ1Njc4OWFiY2RlZg==").unwrap(), key);
        assert!(key_of("MDEy").is_err());
    }
}
