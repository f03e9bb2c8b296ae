//! `cargo xtask bench-memory [--no-build] [--duration SECS]`
//!
//! Where an idle roomlink's resident memory goes (issue 37, item 4), and what each candidate
//! saving costs. A release `roomlink` on SQLite (`target/bench/memory`) with one enterprise and
//! one endpoint is started once per variant of the settings that decide memory at rest (the
//! number of workers, glibc's malloc arenas). For each: `VmRSS` after three idle seconds,
//! split by mapping (`/proc/PID/smaps`: the executable's own pages, shared libraries, the main
//! heap, malloc's thread arenas, thread stacks, other anonymous memory), the threads by name,
//! then the price: wrk on `GET /api/endpoints/{id}` and the RSS it leaves. The table goes into
//! docs/benchmarks.md between its markers.

use super::procs::{self, serve_roomlink};
use super::report::{self, Section};
use super::wrk::Load;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

const ENTERPRISE: &str = "bench-memory";
const USERNAME: &str = "bench-memory-ops";
const PASSWORD: &str = "bench-memory-password-01";
const CONNECTIONS: u32 = 8;
const SECTION: Section = Section {
    begin: "<!-- bench-memory:begin -->",
    end: "<!-- bench-memory:end -->",
    heading: "Memory at rest",
};

/// A way to run roomlink: its label and the environment it adds.
struct Variant {
    label: &'static str,
    env: &'static [(&'static str, &'static str)],
}

const VARIANTS: [Variant; 4] = [
    Variant {
        label: "defaults (a worker per core)",
        env: &[],
    },
    Variant {
        label: "`server.workers` = 1",
        env: &[("ROOMLINK__SERVER__WORKERS", "1")],
    },
    Variant {
        label: "`MALLOC_ARENA_MAX=2`",
        env: &[("MALLOC_ARENA_MAX", "2")],
    },
    Variant {
        label: "`server.workers` = 1 and `MALLOC_ARENA_MAX=2`",
        env: &[
            ("ROOMLINK__SERVER__WORKERS", "1"),
            ("MALLOC_ARENA_MAX", "2"),
        ],
    },
];

/// Resident kB by kind of mapping.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Breakdown {
    /// The executable's pages as read from the file: clean, shared by every process running
    /// it and given back to the page cache under pressure.
    pub(super) executable: u64,
    /// The executable's pages written since (relocated tables, statics).
    pub(super) executable_written: u64,
    pub(super) libraries: u64,
    pub(super) main_heap: u64,
    pub(super) arenas: u64,
    pub(super) stacks: u64,
    pub(super) other: u64,
}

impl Breakdown {
    pub(super) fn total(&self) -> u64 {
        self.executable
            + self.executable_written
            + self.libraries
            + self.main_heap
            + self.arenas
            + self.stacks
            + self.other
    }
}

/// One mapping of `/proc/PID/smaps`.
struct Mapping {
    start: u64,
    end: u64,
    perms: String,
    path: String,
    rss_kb: u64,
    dirty_kb: u64,
}

fn mappings(smaps: &str) -> Vec<Mapping> {
    let mut out: Vec<Mapping> = Vec::new();
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if let Some((start, end)) = first.split_once('-')
            && let (Ok(start), Ok(end)) =
                (u64::from_str_radix(start, 16), u64::from_str_radix(end, 16))
        {
            let perms = fields.next().unwrap_or_default().to_owned();
            let path = fields.nth(3).unwrap_or_default().to_owned();
            out.push(Mapping {
                start,
                end,
                perms,
                path,
                rss_kb: 0,
                dirty_kb: 0,
            });
        } else if first == "Rss:"
            && let Some(last) = out.last_mut()
        {
            last.rss_kb = fields.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        } else if (first == "Private_Dirty:" || first == "Shared_Dirty:")
            && let Some(last) = out.last_mut()
        {
            last.dirty_kb += fields.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        }
    }
    out
}

/// Sorts the resident memory of `smaps` by kind. Anonymous memory is told apart by its
/// neighbours, as glibc lays it out: a thread's stack sits just above its guard page (an
/// inaccessible mapping of at most 64 KiB), a malloc arena just below the inaccessible rest
/// of its 64 MiB reservation.
fn breakdown(smaps: &str, executable: &str) -> Breakdown {
    let maps = mappings(smaps);
    let mut b = Breakdown::default();
    let inaccessible = |m: &Mapping| m.path.is_empty() && m.perms.starts_with("---");
    for (i, m) in maps.iter().enumerate() {
        if m.path == executable {
            b.executable += m.rss_kb - m.dirty_kb.min(m.rss_kb);
            b.executable_written += m.dirty_kb.min(m.rss_kb);
            continue;
        }
        let slot = if m.path.starts_with('/') {
            &mut b.libraries
        } else if m.path == "[heap]" {
            &mut b.main_heap
        } else if m.path == "[stack]" {
            &mut b.stacks
        } else if !m.path.is_empty() {
            &mut b.other
        } else if i > 0
            && inaccessible(&maps[i - 1])
            && maps[i - 1].end == m.start
            && maps[i - 1].end - maps[i - 1].start <= 64 * 1024
        {
            &mut b.stacks
        } else if maps
            .get(i + 1)
            .is_some_and(|n| inaccessible(n) && n.start == m.end)
        {
            &mut b.arenas
        } else {
            &mut b.other
        };
        *slot += m.rss_kb;
    }
    b
}

/// The resident memory of process `pid`, sorted by kind ([`breakdown`]).
pub(super) fn resident_parts(pid: u32) -> Result<Breakdown, String> {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps"))
        .map_err(|e| format!("/proc/{pid}/smaps: {e}"))?;
    let executable = std::fs::read_link(format!("/proc/{pid}/exe"))
        .map_err(|e| format!("/proc/{pid}/exe: {e}"))?
        .display()
        .to_string();
    Ok(breakdown(&smaps, &executable))
}

/// Thread names and how many of each (`/proc/PID/task/*/comm`), digits folded to `N`.
fn threads(pid: u32) -> String {
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            let folded: String = name
                .trim()
                .chars()
                .map(|c| if c.is_ascii_digit() { 'N' } else { c })
                .collect();
            *names.entry(folded).or_default() += 1;
        }
    }
    let total: usize = names.values().sum();
    let parts: Vec<String> = names.iter().map(|(n, c)| format!("{c} {n}")).collect();
    format!("{total} ({})", parts.join(", "))
}

struct Measured {
    rss_kb: u64,
    parts: Breakdown,
    threads: String,
    requests_per_sec: f64,
    p50_ms: f64,
    rss_after_kb: u64,
}

fn measure(
    bin: &Path,
    dir: &Path,
    variant: &Variant,
    duration: Duration,
) -> Result<Measured, String> {
    let settings: Vec<(&str, String)> = std::iter::once(("ROOMLINK__LOG__LEVEL", "warn".into()))
        .chain(variant.env.iter().map(|(k, v)| (*k, (*v).to_owned())))
        .collect();
    let (mut server, address) = serve_roomlink(bin, dir, &settings, "roomlink.log")?;
    std::thread::sleep(Duration::from_secs(3));
    let pid = server.pid();
    let parts = resident_parts(pid)?;
    let (rss_kb, _) = procs::memory_kb(pid).ok_or("no VmRSS")?;
    let threads = threads(pid);

    let token = procs::access_token(&address, USERNAME, PASSWORD)?;
    let list = crate::http::request(
        &address,
        "GET",
        "/api/endpoints",
        &[("X-Access-Token", &token)],
        b"",
        Duration::from_secs(30),
    )?
    .ok("GET /api/endpoints")?
    .json()?;
    let id = list[0]["id"].as_str().ok_or("no endpoint in the list")?;
    let report = Load::get(
        format!("http://{address}/api/endpoints/{id}"),
        CONNECTIONS,
        duration,
    )
    .header(format!("X-Access-Token: {token}"))
    .run(dir)?
    .checked("GET one endpoint")?;
    std::thread::sleep(Duration::from_secs(1));
    let (rss_after_kb, _) = procs::memory_kb(pid).ok_or("no VmRSS")?;
    server.check_alive()?;
    server.stop();
    Ok(Measured {
        rss_kb,
        parts,
        threads,
        requests_per_sec: report.requests_per_sec,
        p50_ms: report.p50_ms,
        rss_after_kb,
    })
}

fn mib(kb: u64) -> String {
    format!("{:.1}", kb as f64 / 1024.0)
}

fn table(rows: &[(&Variant, Measured)], footer: &str) -> String {
    let mut out = String::from(
        "| variant | **idle RSS** (MiB) | executable, as read | executable, written | libraries | main heap | malloc arenas | \
         thread stacks | other | sum of the parts | GET one endpoint (req/s) | p50 (ms) | RSS after it \
         (MiB) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (variant, m) in rows {
        let p = &m.parts;
        out.push_str(&format!(
            "| {} | **{}** | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.2} | {} |\n",
            variant.label,
            mib(m.rss_kb),
            mib(p.executable),
            mib(p.executable_written),
            mib(p.libraries),
            mib(p.main_heap),
            mib(p.arenas),
            mib(p.stacks),
            mib(p.other),
            mib(p.total()),
            m.requests_per_sec,
            m.p50_ms,
            mib(m.rss_after_kb),
        ));
    }
    out.push_str("\nThreads at rest:\n\n");
    for (variant, m) in rows {
        out.push_str(&format!("- {}: {}\n", variant.label, m.threads));
    }
    format!("{out}\n{footer}\n")
}

pub fn run(args: &[String]) -> Result<(), String> {
    let (mut build, mut duration) = (true, Duration::from_secs(5));
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--no-build" => build = false,
            "--duration" => {
                duration = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|s| *s > 0)
                    .map(Duration::from_secs)
                    .ok_or("--duration needs a positive number of seconds")?;
            }
            other => {
                return Err(format!(
                    "unknown option {other}\nusage: cargo xtask bench-memory [--no-build] \
                     [--duration SECS]"
                ));
            }
        }
    }
    let super::procs::BenchDirs {
        root,
        target,
        dir,
        load,
    } = super::procs::BenchDirs::new("memory")?;
    if build {
        crate::cargo(&["build", "--release", "-p", "roomlink"])?;
    }
    let bin = target.join("release").join("roomlink");
    procs::enterprise_and_user(
        &bin,
        &dir,
        &[],
        &[ENTERPRISE, "--create-database"],
        USERNAME,
        PASSWORD,
    )?;
    {
        let (_server, address) = serve_roomlink(&bin, &dir, &[], "setup.log")?;
        let token = procs::access_token(&address, USERNAME, PASSWORD)?;
        crate::http::request(
            &address,
            "POST",
            "/api/endpoints",
            &[
                ("X-Access-Token", &token),
                ("Content-Type", "application/json"),
            ],
            br#"{"name": "Boardroom", "ipAddress": "127.77.0.1", "port": 22, "username": "admin", "password": "room-secret"}"#,
            Duration::from_secs(30),
        )?
        .ok("POST /api/endpoints")?;
    }
    let mut rows = Vec::new();
    for variant in &VARIANTS {
        eprintln!("bench-memory: {}", variant.label);
        rows.push((variant, measure(&bin, &dir, variant, duration)?));
    }
    let footer = format!(
        "Build: release. SQLite, one enterprise with one endpoint, status polls off, log at \
         `warn`. Idle: three seconds after `/readyz` answered, nothing else asked. Split by \
         mapping from `/proc/PID/smaps` (anonymous memory by its neighbours: a stack above its \
         guard page, an arena below the rest of its reservation). wrk: 1 thread, {CONNECTIONS} \
         connections, {} s. Commit {}, {} cores, load average at start {load}. Run: `cargo xtask \
         bench-memory`.",
        duration.as_secs(),
        report::git_head(&root),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    let table = table(&rows, &footer);
    let _ = std::io::stdout().lock().write_all(table.as_bytes());
    report::write_section(&root.join("docs/benchmarks.md"), &SECTION, &table)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
5600000000-5600100000 r-xp 00000000 08:01 42 /opt/roomlink
Rss:                 800 kB
Private_Dirty:         0 kB
5600100000-5600110000 rw-p 00000000 08:01 42 /opt/roomlink
Rss:                  40 kB
Shared_Dirty:          2 kB
Private_Dirty:        30 kB
5600200000-5600300000 rw-p 00000000 00:00 0 [heap]
Rss:                 300 kB
7f0000000000-7f0000200000 rw-p 00000000 00:00 0
Rss:                 120 kB
7f0000200000-7f0004000000 ---p 00000000 00:00 0
Rss:                   0 kB
7f1000000000-7f1000001000 ---p 00000000 00:00 0
Rss:                   0 kB
7f1000001000-7f1000201000 rw-p 00000000 00:00 0
Rss:                  16 kB
7f2000000000-7f2000010000 rw-p 00000000 00:00 0
Rss:                  64 kB
7f3000000000-7f3000100000 r-xp 00000000 08:01 7 /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                 900 kB
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]
Rss:                  24 kB
";

    #[test]
    fn resident_memory_is_sorted_by_kind_of_mapping() {
        let b = breakdown(SMAPS, "/opt/roomlink");
        assert_eq!(
            b,
            Breakdown {
                executable: 800 + 8,
                executable_written: 32,
                libraries: 900,
                main_heap: 300,
                arenas: 120,
                stacks: 16 + 24,
                other: 64,
            }
        );
        assert_eq!(b.total(), 2264);
    }
}
