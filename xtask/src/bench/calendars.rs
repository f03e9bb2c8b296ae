//! `cargo xtask bench-calendars [--rooms N] [--no-build]`
//!
//! Room calendars at scale (issue 17): one `roomlink` (SQLite in `target/bench/calendars`) with
//! N rooms (default 10,000) that have auto-join on and a CalDAV calendar, against a loopback
//! CalDAV server played by this process (it answers every PROPFIND with the same sync token and
//! every calendar-query with no events, and notes when each request arrived). Measured, for
//! `calendar.requests_per_second` at its default (250) and at 0 (no limit):
//!
//! 1. the first round: every room's calendar read in full (PROPFIND, then the REPORT);
//! 2. the next round, with `calendar.poll_interval_ms` at 0 so that it asks again: every room's
//!    calendar confirmed unchanged (PROPFIND only);
//!
//! each as the time from its first request to its last, rooms a second, and roomlink's resident
//! memory after it. Figures are printed, never asserted.

use super::procs::{Service, admin, memory_kb, serve_roomlink};
use crate::http;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

const ENTERPRISE: &str = "bench-calendars";
const USERNAME: &str = "bench-calendars-ops";
const PASSWORD: &str = "bench-calendars-password-01";
const HTTP_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest two rounds may take.
const ROUNDS_TIMEOUT: Duration = Duration::from_secs(900);
const SYNC_TOKEN: &str = "http://127.0.0.1/bench/sync/1";

struct Options {
    rooms: usize,
    build: bool,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        rooms: 10_000,
        build: true,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--rooms" => {
                o.rooms = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|n| (1..=60_000).contains(n))
                    .ok_or("--rooms needs a number from 1 to 60000")?;
            }
            "--no-build" => o.build = false,
            other => {
                return Err(format!(
                    "unknown option {other}\nusage: cargo xtask bench-calendars [--rooms N] [--no-build]"
                ));
            }
        }
    }
    Ok(o)
}

/// What the CalDAV server saw: per room, when each PROPFIND and REPORT arrived.
#[derive(Default)]
struct Seen {
    propfinds: HashMap<usize, Vec<Instant>>,
    reports: HashMap<usize, Vec<Instant>>,
}

type Log = Arc<Mutex<Seen>>;

/// The room number in `/rooms/room-{n}@bench.example/`.
fn room_of(path: &str) -> Option<usize> {
    let rest = &path[path.find("room-")? + 5..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Serves one keep-alive connection: HTTP/1.1 requests with Content-Length bodies.
fn serve(stream: TcpStream, log: &Log) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or_default().to_owned(),
            parts.next().unwrap_or_default().to_owned(),
        );
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 {
                return Ok(());
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let now = Instant::now();
        let room = room_of(&path);
        let answer = match (method.as_str(), room) {
            ("PROPFIND", Some(room)) => {
                let mut seen = log.lock().unwrap_or_else(PoisonError::into_inner);
                seen.propfinds.entry(room).or_default().push(now);
                format!(
                    "<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>{path}</D:href><D:propstat><D:prop><D:sync-token>{SYNC_TOKEN}</D:sync-token></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>"
                )
            }
            ("REPORT", Some(room)) => {
                let mut seen = log.lock().unwrap_or_else(PoisonError::into_inner);
                seen.reports.entry(room).or_default().push(now);
                "<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"/>".to_owned()
            }
            _ => {
                writer.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )?;
                return Ok(());
            }
        };
        // One write: headers and body in separate segments would meet Nagle's algorithm and
        // the client's delayed ACK (40 ms a request).
        let response = format!(
            "HTTP/1.1 207 Multi-Status\r\nContent-Type: application/xml; charset=utf-8\r\nContent-Length: {}\r\n\r\n{answer}",
            answer.len()
        );
        writer.write_all(response.as_bytes())?;
    }
}

/// Starts the CalDAV server on a free loopback port; its address and log.
fn caldav() -> Result<(String, Log), String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("CalDAV stub: {e}"))?;
    let address = listener
        .local_addr()
        .map_err(|e| e.to_string())?
        .to_string();
    let log: Log = Arc::default();
    let shared = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let log = shared.clone();
            std::thread::spawn(move || {
                let _ = serve(stream, &log);
            });
        }
    });
    Ok((address, log))
}

/// Starts `roomlink serve` with `settings`, logging at `warn`, and waits for `/readyz`.
fn start(
    bin: &Path,
    dir: &Path,
    settings: &[(&str, String)],
    log: &str,
) -> Result<(Service, String), String> {
    let mut all = vec![("ROOMLINK__LOG__LEVEL", "warn".to_owned())];
    all.extend(settings.iter().cloned());
    serve_roomlink(bin, dir, &all, log)
}

fn call(
    address: &str,
    token: &str,
    method: &str,
    path: &str,
    content_type: &str,
    body: &str,
) -> Result<http::Response, String> {
    http::request(
        address,
        method,
        path,
        &[("X-Access-Token", token), ("Content-Type", content_type)],
        body.as_bytes(),
        HTTP_TIMEOUT,
    )?
    .ok(&format!("{method} {path}"))
}

/// Creates the enterprise, its user, the CalDAV account and `rooms` rooms with auto-join on
/// (with auto-join rounds held off), and stops roomlink again.
fn set_up(bin: &Path, dir: &Path, caldav: &str, rooms: usize) -> Result<(), String> {
    let admin = |args: &[&str], stdin: Option<&Path>| admin(bin, dir, args, stdin);
    let limit = (rooms + 10).to_string();
    admin(
        &[
            "admin",
            "enterprise",
            "create",
            ENTERPRISE,
            "--endpoint-limit",
            &limit,
            "--create-database",
        ],
        None,
    )?;
    let password_file = dir.join("password.txt");
    std::fs::write(&password_file, format!("{PASSWORD}\n")).map_err(|e| e.to_string())?;
    admin(
        &[
            "admin",
            "user",
            "create",
            "--enterprise",
            ENTERPRISE,
            "--username",
            USERNAME,
            "--role",
            "ROLE_READWRITE",
            "--password-stdin",
        ],
        Some(&password_file),
    )?;
    let held = [(
        "ROOMLINK__CALENDAR__AUTO_JOIN_INTERVAL_MS",
        "3600000".to_owned(),
    )];
    let (mut server, address) = start(bin, dir, &held, "setup.log")?;
    let token = token(&address)?;
    call(
        &address,
        &token,
        "PUT",
        "/api/calendaraccounts/CALDAV",
        "application/json",
        &format!("{{\"baseUrl\": \"http://{caldav}/rooms/\"}}"),
    )?;
    let mut csv = String::from("id,name,ipaddress,port,password,calendarid,calendartype\n");
    for i in 0..rooms {
        csv.push_str(&format!(
            "\"\",\"Room {i}\",\"127.{}.{}.{}\",\"22\",\"room-secret-{i}\",\"room-{i}@bench.example\",\"CALDAV\"\n",
            100 + i / 65_536,
            (i / 256) % 256,
            i % 256
        ));
    }
    let listed = call(
        &address,
        &token,
        "PUT",
        "/api/endpoints/csv",
        "text/csv",
        &csv,
    )?;
    let list = listed.json()?;
    let ids: Vec<String> = list
        .as_array()
        .ok_or("the CSV answer is not a list")?
        .iter()
        .filter_map(|e| e.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect();
    if ids.len() != rooms {
        return Err(format!(
            "{} rooms after the CSV load, not {rooms}: {} {}",
            ids.len(),
            listed.status,
            listed.text().chars().take(300).collect::<String>()
        ));
    }
    eprintln!("bench-calendars: auto-join on for {rooms} rooms");
    for id in &ids {
        call(
            &address,
            &token,
            "PATCH",
            &format!("/api/endpoints/{id}"),
            "application/json",
            "{\"autoJoinMode\": \"ENABLED\"}",
        )?;
    }
    server.stop();
    Ok(())
}

fn token(address: &str) -> Result<String, String> {
    let basic = http::basic(USERNAME, PASSWORD);
    let answer = http::request(
        address,
        "POST",
        "/api/auth/accesstokens",
        &[("Authorization", &basic)],
        b"",
        HTTP_TIMEOUT,
    )?
    .ok("create an access token")?;
    answer.json_string("accessToken")
}

/// One round as the CalDAV server saw it.
struct Round {
    seconds: f64,
    reports: usize,
}

/// Round `k` (0-based): from the first room's k-th PROPFIND to the last room's, and the REPORTs
/// sent in that span.
fn round(seen: &Seen, k: usize) -> Option<Round> {
    let times: Vec<Instant> = seen
        .propfinds
        .values()
        .map(|t| t.get(k).copied())
        .collect::<Option<_>>()?;
    let (first, last) = (*times.iter().min()?, *times.iter().max()?);
    let reports = seen
        .reports
        .values()
        .flatten()
        .filter(|t| **t >= first && **t <= last + Duration::from_millis(500))
        .count();
    Some(Round {
        seconds: (last - first).as_secs_f64(),
        reports,
    })
}

fn mib(kb: Option<(u64, u64)>) -> String {
    kb.map_or("n/a".to_owned(), |(rss, _)| {
        format!("{:.1} MiB", rss as f64 / 1024.0)
    })
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let super::procs::BenchDirs {
        target, dir, load, ..
    } = super::procs::BenchDirs::new("calendars")?;
    if o.build {
        crate::cargo(&["build", "--release", "-p", "roomlink"])?;
    }
    let bin = target.join("release/roomlink");
    let (caldav, log) = caldav()?;
    eprintln!("bench-calendars: {} rooms, CalDAV at {caldav}", o.rooms);
    set_up(&bin, &dir, &caldav, o.rooms)?;

    let mut rows = Vec::new();
    for pace in ["250", "0"] {
        *log.lock().unwrap_or_else(PoisonError::into_inner) = Seen::default();
        let settings = [
            (
                "ROOMLINK__CALENDAR__AUTO_JOIN_INTERVAL_MS",
                "1000".to_owned(),
            ),
            ("ROOMLINK__CALENDAR__POLL_INTERVAL_MS", "0".to_owned()),
            ("ROOMLINK__CALENDAR__REQUESTS_PER_SECOND", pace.to_owned()),
        ];
        eprintln!("bench-calendars: two rounds at calendar.requests_per_second = {pace}");
        let (mut server, _) = start(&bin, &dir, &settings, &format!("pace-{pace}.log"))?;
        let started = Instant::now();
        let (first, second) = loop {
            server.check_alive()?;
            {
                let seen = log.lock().unwrap_or_else(PoisonError::into_inner);
                if seen.propfinds.len() == o.rooms
                    && let (Some(first), Some(second)) = (round(&seen, 0), round(&seen, 1))
                {
                    break (first, second);
                }
            }
            if started.elapsed() > ROUNDS_TIMEOUT {
                return Err(format!(
                    "two rounds did not finish within {ROUNDS_TIMEOUT:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        let memory = memory_kb(server.pid());
        server.stop();
        rows.push((pace, first, second, memory));
    }

    let mut table = format!(
        "\nroom calendars: {} rooms, one CalDAV server on loopback; load average before: {load}\n\n\
         | calendar.requests_per_second | first round (read in full) | requests | rooms/s | next round (confirmed unchanged) | REPORTs in it | rooms/s | roomlink RSS after |\n\
         |---|---|---|---|---|---|---|---|\n",
        o.rooms
    );
    for (pace, first, second, memory) in rows {
        let rate = |r: &Round| o.rooms as f64 / r.seconds.max(0.001);
        table.push_str(&format!(
            "| {pace} | {:.1} s | {} | {:.0} | {:.1} s | {} | {:.0} | {} |\n",
            first.seconds,
            o.rooms + first.reports,
            rate(&first),
            second.seconds,
            second.reports,
            rate(&second),
            mib(memory)
        ));
    }
    table.push_str(
        "\nThe default calendar.poll_interval_ms is 60 s: a round that confirms every room within it keeps every calendar within one poll interval.\n",
    );
    std::io::stdout()
        .lock()
        .write_all(table.as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_numbers_from_paths() {
        assert_eq!(room_of("/rooms/room-17@bench.example/"), Some(17));
        assert_eq!(room_of("/rooms/room-9999%40bench.example/"), Some(9999));
        assert_eq!(room_of("/rooms/"), None);
    }

    #[test]
    fn rounds_from_what_was_seen() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut seen = Seen::default();
        seen.propfinds.insert(0, vec![at(0), at(1000)]);
        seen.propfinds.insert(1, vec![at(10), at(1500)]);
        seen.reports.insert(0, vec![at(1)]);
        seen.reports.insert(1, vec![at(11)]);
        let first = round(&seen, 0).unwrap();
        assert!((first.seconds - 0.010).abs() < 1e-9);
        assert_eq!(first.reports, 2);
        let second = round(&seen, 1).unwrap();
        assert!((second.seconds - 0.5).abs() < 1e-9);
        assert_eq!(second.reports, 0);
        assert!(round(&seen, 2).is_none());
    }
}
