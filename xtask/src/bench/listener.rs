//! `cargo xtask bench-listener [--devices N] [--rounds N] [--no-build] [--debug]`
//!
//! How long `roomlink-listener` takes to answer one status poll of N emulated room systems
//! (default 1,000, a quarter per driver: Cisco HTTP, Cisco SSH, Poly Telnet, Mesh), sent as
//! roomlink sends it: batches of at most 500 endpoints, one after another. Also the listener's
//! resident memory when idle and after the polls. The first poll opens every session (SSH
//! handshakes, Cisco HTTP sessions); the next ones reuse them. Figures are reported, never
//! asserted; the table goes into `docs/benchmarks.md` between its listener markers.
//!
//! Everything runs on loopback: the emulators' devices are 127.79.x.y addresses, at most
//! [`DEVICES_PER_EMULATOR`] per emulator process (file descriptors).

use super::procs::{Service, memory_kb};
use super::report::{self, Section, git_head, median};
use crate::http;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const SECRET: &str = "bench-listener-secret-000001";
const ROOM_PASSWORD: &str = "bench-room-password";
const BATCH: usize = 500;
const PROTOCOLS: [&str; 4] = ["TANDBERG_HTTP", "TANDBERG_SSH", "POLYCOM_TELNET", "MESH"];
const SECTION: Section = Section {
    begin: "<!-- bench-listener:begin -->",
    end: "<!-- bench-listener:end -->",
    heading: "roomlink-listener: one status poll of many room systems",
};

struct Options {
    devices: usize,
    rounds: usize,
    build: bool,
    /// Measure the debug binaries (`target/debug`) instead of a release build.
    debug: bool,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        devices: 1_000,
        rounds: 5,
        build: true,
        debug: false,
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
            "--devices" => o.devices = number("--devices")?,
            "--rounds" => o.rounds = number("--rounds")?,
            "--no-build" => o.build = false,
            "--debug" => o.debug = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(o)
}

/// `NAME listening on HOST:PORT ...` → the port of front end `name`.
fn port_of(log: &str, name: &str) -> Option<u16> {
    log.lines().find_map(|line| {
        let rest = line.strip_prefix(&format!("{name} listening on "))?;
        let addr = rest.split_whitespace().next()?;
        addr.rsplit_once(':')?.1.parse().ok()
    })
}

fn device_address(i: usize) -> String {
    // 127.79.0.1, 127.79.0.2, ...: the emulator's consecutive addresses.
    let n = (127u32 << 24) | (79 << 16) | 1;
    let a = n + i as u32;
    format!("127.79.{}.{}", (a >> 8) & 0xff, a & 0xff)
}

/// Devices per emulator process: each holds three to four file descriptors per device at rest
/// and one per connection, and a process may have 20,000 here. A multiple of 4, so that every
/// emulator's first device is a Cisco HTTP one, as device `i` is driver `i % 4` overall.
const DEVICES_PER_EMULATOR: usize = 3_000;

/// Where one emulator process serves its devices.
struct FrontEnds {
    ports: [u16; 4],
    mesh_base: String,
}

fn status_body(from: usize, to: usize, emulators: &[FrontEnds]) -> String {
    let mut body = String::from("{\"endpoints\":[");
    for i in from..to {
        let protocol = PROTOCOLS[i % 4];
        let FrontEnds { ports, mesh_base } = &emulators[i / DEVICES_PER_EMULATOR];
        if i > from {
            body.push(',');
        }
        let extra = if protocol == "MESH" {
            format!(",\"meshBaseUri\":\"{mesh_base}\"")
        } else {
            format!(",\"port\":{}", ports[i % 4])
        };
        let _ = write!(
            body,
            "{{\"endpoint\":{{\"id\":\"e{i}\",\"name\":\"Room {i}\",\"ipAddress\":\"{}\",\"controlProtocol\":\"{protocol}\",\"username\":\"admin\"{extra}}},\"credential\":{{\"kind\":\"plain\",\"password\":\"{ROOM_PASSWORD}\"}}}}",
            device_address(i)
        );
    }
    body.push_str("]}");
    body
}

/// One poll: every batch in turn. Returns the seconds taken and the entries that failed.
fn poll(listener: &str, bodies: &[String]) -> Result<(f64, usize), String> {
    let started = Instant::now();
    let mut failed = 0;
    let auth = format!("Bearer {SECRET}");
    for body in bodies {
        let answer = http::request(
            listener,
            "POST",
            "/v1/status",
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            body.as_bytes(),
            Duration::from_secs(120),
        )?
        .ok("status poll")?;
        let parsed = answer.json()?;
        let statuses = parsed
            .get("statuses")
            .and_then(|s| s.as_array())
            .ok_or("the answer has no statuses")?;
        failed += statuses
            .iter()
            .filter(|s| s.get("failure").is_some())
            .count();
    }
    Ok((started.elapsed().as_secs_f64(), failed))
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let root = crate::project_root();
    let dir = root.join("target/bench/listener");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let profile = if o.debug { "debug" } else { "release" };
    if o.build {
        let mut args = vec![
            "build",
            "-p",
            "roomlink-listener",
            "-p",
            "roomlink-device-emu",
        ];
        if !o.debug {
            args.push("--release");
        }
        crate::cargo(&args)?;
    }
    let bin = |name: &str| root.join("target").join(profile).join(name);
    let password_file = dir.join("room-password");
    let secret_file = dir.join("secret");
    write(&password_file, ROOM_PASSWORD)?;
    write(&secret_file, SECRET)?;

    let names = ["cisco-http", "cisco-ssh", "poly-telnet", "mesh"];
    let mut emulators = Vec::new();
    let mut front_ends = Vec::new();
    for (e, first) in (0..o.devices).step_by(DEVICES_PER_EMULATOR).enumerate() {
        let count = DEVICES_PER_EMULATOR.min(o.devices - first);
        let mut emu_command = Command::new(bin("roomlink-device-emu"));
        emu_command
            .args(["--host", &device_address(first)])
            .args(["--count", &count.to_string()])
            .args(["--cisco-http", "0", "--cisco-ssh", "0"])
            .args(["--poly-telnet", "0", "--mesh", "0"])
            .arg("--no-basic-rate-limit")
            .arg("--password-file")
            .arg(&password_file)
            .env("RUST_LOG", "warn");
        let mut emu = Service::start(
            &format!("roomlink-device-emu {e}"),
            emu_command,
            &dir.join(format!("emu-{e}.log")),
        )?;
        let mut ports = [0u16; 4];
        for (k, name) in names.iter().enumerate() {
            ports[k] = emu.wait_for(Duration::from_secs(60), |line| port_of(line, name))?;
        }
        front_ends.push(FrontEnds {
            ports,
            mesh_base: format!("http://{}:{}", device_address(first), ports[3]),
        });
        emulators.push(emu);
    }

    let config = dir.join("listener.toml");
    write(
        &config,
        &format!(
            "[server]\nbind = \"127.0.0.1:0\"\n[tandberg_http]\nscheme = \"http\"\n[tandberg_ssh]\nknown_hosts_file = \"{}\"\n[log]\nlevel = \"warn\"\n",
            dir.join("known-hosts").display()
        ),
    )?;
    let _ = std::fs::remove_file(dir.join("known-hosts"));
    let mut listener_command = Command::new(bin("roomlink-listener"));
    listener_command
        .arg("--config")
        .arg(&config)
        .arg("--secret-file")
        .arg(&secret_file);
    let mut listener = Service::start(
        "roomlink-listener",
        listener_command,
        &dir.join("listener.log"),
    )?;
    let address = listener.wait_for(Duration::from_secs(30), super::procs::listening_line)?;
    std::thread::sleep(Duration::from_secs(1));
    let idle = memory_kb(listener.pid()).map(|(rss, _)| rss);

    let bodies: Vec<String> = (0..o.devices)
        .step_by(BATCH)
        .map(|from| status_body(from, (from + BATCH).min(o.devices), &front_ends))
        .collect();
    let (first, first_failed) = poll(&address, &bodies)?;
    let mut warm = Vec::new();
    let mut warm_failed = 0;
    for _ in 0..o.rounds {
        let (seconds, failed) = poll(&address, &bodies)?;
        warm.push(seconds);
        warm_failed += failed;
    }
    let after = memory_kb(listener.pid());
    listener.check_alive()?;
    for emu in &mut emulators {
        emu.check_alive()?;
    }
    drop(listener);
    drop(emulators);

    let warm_median = median(&warm).unwrap_or(f64::NAN);
    let kb = |v: Option<u64>| {
        v.map_or("n/a".to_owned(), |k| {
            format!("{:.1} MiB", k as f64 / 1024.0)
        })
    };
    let mut table = String::new();
    let _ = writeln!(table, "| measure | value |\n|---|---|");
    let _ = writeln!(
        table,
        "| build | {profile}{} |",
        if o.debug {
            " (unoptimized: cryptography and parsing are slower than in a release build)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        table,
        "| devices | {} ({} per driver: Cisco HTTP, Cisco SSH, Poly Telnet, Mesh) |",
        o.devices,
        o.devices / 4
    );
    let _ = writeln!(
        table,
        "| batches per poll | {} of at most {BATCH}, one after another |",
        bodies.len()
    );
    let _ = writeln!(
        table,
        "| first poll (opens every session) | {first:.2} s, {first_failed} failed entries |"
    );
    let _ = writeln!(
        table,
        "| later polls, median of {} | {warm_median:.2} s, {warm_failed} failed entries in all |",
        o.rounds
    );
    let _ = writeln!(table, "| roomlink's default poll interval | 30 s |");
    let _ = writeln!(table, "| listener RSS idle | {} |", kb(idle));
    let _ = writeln!(
        table,
        "| listener RSS after the polls (peak) | {} ({}) |",
        kb(after.map(|a| a.0)),
        kb(after.map(|a| a.1))
    );
    let _ = writeln!(
        table,
        "\nSettings: `commands.status_concurrency` 64 (default); the emulator on the same machine with \
         `--no-basic-rate-limit`; commit {}, {} cores, load average at start {load}. \
         Run: `cargo xtask bench-listener --devices {}`.",
        git_head(&root),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        o.devices,
    );
    let mut out = std::io::stdout().lock();
    let _ = std::io::Write::write_all(&mut out, table.as_bytes());
    report::write_section(&root.join("docs/benchmarks.md"), &SECTION, &table)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, format!("{text}\n")).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_follow_the_emulators_and_ports_are_read_from_its_lines() {
        assert_eq!(device_address(0), "127.79.0.1");
        assert_eq!(device_address(254), "127.79.0.255");
        assert_eq!(device_address(255), "127.79.1.0");
        let log = "cisco-http listening on 127.79.0.1:4100\ncisco-https listening on 127.79.0.1:4101 sha256=AB";
        assert_eq!(port_of(log, "cisco-http"), Some(4100));
        assert_eq!(port_of(log, "mesh"), None);
    }

    #[test]
    fn status_bodies_are_json_with_one_entry_per_device() {
        let emulators = [
            FrontEnds {
                ports: [1, 2, 3, 4],
                mesh_base: "http://127.79.0.1:4".into(),
            },
            FrontEnds {
                ports: [5, 6, 7, 8],
                mesh_base: "http://127.79.11.185:8".into(),
            },
        ];
        let first = DEVICES_PER_EMULATOR - 4;
        let body = status_body(first, first + 8, &emulators);
        let parsed: serde_json::Value = serde_json::from_str(&body).expect("json");
        let entries = parsed
            .get("endpoints")
            .and_then(|e| e.as_array())
            .expect("endpoints");
        assert_eq!(entries.len(), 8);
        // Each device is asked for at its own emulator's front ends.
        let port = |k: usize| entries[k]["endpoint"]["port"].as_u64();
        assert_eq!((port(0), port(4)), (Some(1), Some(5)));
        assert_eq!(
            entries[7]["endpoint"]["meshBaseUri"].as_str(),
            Some("http://127.79.11.185:8")
        );
        assert_eq!(device_address(DEVICES_PER_EMULATOR), "127.79.11.185");
    }
}
