//! `cargo xtask bench-listener [--devices N] [--rounds N] [--no-build] [--debug]`
//!
//! How long `roomlink-listener` takes to answer one status poll of N emulated room systems
//! (default 1,000, a quarter per driver: Cisco HTTP, Cisco SSH, Poly Telnet, Mesh), sent as
//! roomlink sends it: batches of at most 500 endpoints, one after another. Also the listener's
//! resident memory when idle and after the polls. The first poll opens every session (SSH
//! handshakes, Cisco HTTP sessions); the next ones reuse them. Then one inventory read
//! (`readinventory`) of every device whose driver has one, four at a time as roomlink reads
//! them. The listener's and the emulators' CPU is taken apart from `/proc/PID/stat`. Figures
//! are reported, never asserted; the table goes into `docs/benchmarks.md` between its listener
//! markers.
//!
//! Everything runs on loopback: the emulators' devices are 127.79.x.y addresses, at most
//! [`DEVICES_PER_EMULATOR`] per emulator process (file descriptors).

use super::cpu::{cpu_seconds, cpu_used};
use super::procs::{Service, memory_kb};
use super::report::{self, Section, git_head, median, quantile};
use crate::http;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// One device as roomlink sends it to the listener: `{"endpoint": ..., "credential": ...}`, the
/// shape of a status entry and of a command's body.
fn device_json(i: usize, emulators: &[FrontEnds]) -> String {
    let protocol = PROTOCOLS[i % 4];
    let FrontEnds { ports, mesh_base } = &emulators[i / DEVICES_PER_EMULATOR];
    let extra = if protocol == "MESH" {
        format!(",\"meshBaseUri\":\"{mesh_base}\"")
    } else {
        format!(",\"port\":{}", ports[i % 4])
    };
    format!(
        "{{\"endpoint\":{{\"id\":\"e{i}\",\"name\":\"Room {i}\",\"ipAddress\":\"{}\",\"controlProtocol\":\"{protocol}\",\"username\":\"admin\"{extra}}},\"credential\":{{\"kind\":\"plain\",\"password\":\"{ROOM_PASSWORD}\"}}}}",
        device_address(i)
    )
}

fn status_body(from: usize, to: usize, emulators: &[FrontEnds]) -> String {
    let entries: Vec<String> = (from..to).map(|i| device_json(i, emulators)).collect();
    format!("{{\"endpoints\":[{}]}}", entries.join(","))
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

/// Rooms roomlink reads at once per listener during a round (`READS_AT_ONCE` in roomlink-app's
/// inventory module).
const INVENTORY_READS_AT_ONCE: usize = 4;

/// One inventory read of every device whose driver reads one (all but Mesh).
struct InventoryPass {
    seconds: f64,
    /// Milliseconds per read, sorted, by driver ([`PROTOCOLS`]' order; Mesh's stays empty).
    latencies: [Vec<f64>; 4],
    failed: usize,
}

/// One reader thread's reads: (driver, milliseconds) each, and how many failed.
type Reads = (Vec<(usize, f64)>, usize);

/// `readinventory` for every device but the Mesh ones, [`INVENTORY_READS_AT_ONCE`] at a time as
/// roomlink sends them. A read fails unless it answers 200 with an inventory.
fn read_inventories(
    listener: &str,
    devices: usize,
    emulators: &[FrontEnds],
) -> Result<InventoryPass, String> {
    let rooms: Vec<usize> = (0..devices)
        .filter(|i| PROTOCOLS[i % 4] != "MESH")
        .collect();
    let next = AtomicUsize::new(0);
    let auth = format!("Bearer {SECRET}");
    let read_some = || -> Result<Reads, String> {
        let (mut latencies, mut failed) = (Vec::new(), 0);
        while let Some(&i) = rooms.get(next.fetch_add(1, Ordering::Relaxed)) {
            let body = device_json(i, emulators);
            let one = Instant::now();
            let answer = http::request(
                listener,
                "POST",
                "/v1/commands/readinventory",
                &[
                    ("Authorization", &auth),
                    ("Content-Type", "application/json"),
                ],
                body.as_bytes(),
                Duration::from_secs(60),
            )?;
            latencies.push((i % 4, one.elapsed().as_secs_f64() * 1000.0));
            let read = answer.status == 200
                && answer
                    .json()
                    .is_ok_and(|body| body.get("inventory").is_some());
            failed += usize::from(!read);
        }
        Ok((latencies, failed))
    };
    let started = Instant::now();
    let results: Vec<Result<Reads, String>> = std::thread::scope(|scope| {
        let readers: Vec<_> = (0..INVENTORY_READS_AT_ONCE)
            .map(|_| scope.spawn(read_some))
            .collect();
        readers
            .into_iter()
            .map(|r| {
                r.join()
                    .unwrap_or_else(|_| Err("an inventory reader panicked".into()))
            })
            .collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let (mut latencies, mut failed) = (<[Vec<f64>; 4]>::default(), 0);
    for result in results {
        let (some, some_failed) = result?;
        for (driver, ms) in some {
            latencies[driver].push(ms);
        }
        failed += some_failed;
    }
    for driver in &mut latencies {
        driver.sort_by(f64::total_cmp);
    }
    Ok(InventoryPass {
        seconds,
        latencies,
        failed,
    })
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let super::procs::BenchDirs {
        root,
        target,
        dir,
        load,
    } = super::procs::BenchDirs::new("listener")?;
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
    let bin = |name: &str| target.join(profile).join(name);
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
    let listener_pid = [listener.pid()];
    let emulator_pids: Vec<u32> = emulators.iter().map(Service::pid).collect();
    let (listener_before, emulators_before) =
        (cpu_seconds(&listener_pid), cpu_seconds(&emulator_pids));
    let mut warm = Vec::new();
    let mut warm_failed = 0;
    for _ in 0..o.rounds {
        let (seconds, failed) = poll(&address, &bodies)?;
        warm.push(seconds);
        warm_failed += failed;
    }
    let (listener_polled, emulators_polled) =
        (cpu_seconds(&listener_pid), cpu_seconds(&emulator_pids));
    let inventory = read_inventories(&address, o.devices, &front_ends)?;
    let (listener_read, emulators_read) = (cpu_seconds(&listener_pid), cpu_seconds(&emulator_pids));
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
    let per = |used: Option<f64>, count: f64, unit: f64, suffix: &str| {
        used.map_or("n/a".to_owned(), |s| {
            format!("{:.1} {suffix}", s / count * unit)
        })
    };
    let rounds = o.rounds as f64;
    let _ = writeln!(
        table,
        "| CPU per later poll: listener / emulators | {} / {} |",
        per(cpu_used(listener_before, listener_polled), rounds, 1.0, "s"),
        per(
            cpu_used(emulators_before, emulators_polled),
            rounds,
            1.0,
            "s"
        ),
    );
    let _ = writeln!(table, "| roomlink's default poll interval | 30 s |");
    let reads: usize = inventory.latencies.iter().map(Vec::len).sum();
    let by_driver: Vec<String> = ["Cisco HTTP", "Cisco SSH", "Poly Telnet"]
        .iter()
        .zip(&inventory.latencies)
        .map(|(name, ms)| {
            format!(
                "{name} {:.1} / {:.1} ms",
                quantile(ms, 0.5),
                quantile(ms, 0.95)
            )
        })
        .collect();
    let _ = writeln!(
        table,
        "| inventory of every Cisco and Poly device ({reads}), {INVENTORY_READS_AT_ONCE} reads at once as roomlink sends them | {:.1} s, {} failed; per read p50 / p95: {} |",
        inventory.seconds,
        inventory.failed,
        by_driver.join(", "),
    );
    let _ = writeln!(
        table,
        "| CPU per inventory read: listener / emulators | {} / {} |",
        per(
            cpu_used(listener_polled, listener_read),
            reads.max(1) as f64,
            1e3,
            "ms"
        ),
        per(
            cpu_used(emulators_polled, emulators_read),
            reads.max(1) as f64,
            1e3,
            "ms"
        ),
    );
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
