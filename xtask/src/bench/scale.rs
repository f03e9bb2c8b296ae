//! `cargo xtask bench-scale [--sizes 1000,10000,100000] [--no-build] [--debug] [--duration SECS]
//! [--spread [--enterprises N]]`
//!
//! Scale curves (issue 37): for each size N, a fresh `roomlink` (SQLite in
//! `target/bench/scale-N`) with N endpoints in one enterprise, loaded by CSV upload (in chunks
//! under the upload's 1 MiB), then measured:
//!
//! 1. the load itself (rows a second) and roomlink's resident memory after it, idle;
//! 2. with wrk (1 thread, 8 connections, `--duration` seconds each): `GET /api/endpoints/{id}`
//!    cycling through 16 ids spread over the table, the first page of the list
//!    (`?limit=100`), the last page (its cursor found by walking the list), and a JSON
//!    `PATCH /api/endpoints/{id}` cycling through the same ids: requests a second, p50, p99;
//! 3. the whole list (`GET /api/endpoints`, streamed) and the CSV export
//!    (`GET /api/endpoints/csv`), three sequential downloads each with xtask's client: seconds
//!    (median), megabytes, and roomlink's peak RSS while they stream (sampled every 20 ms).
//!
//! Then one table: each measure at each size, the growth exponent between consecutive sizes
//! (`log(v2/v1) / log(n2/n1)`: about 0 flat, about 1 linear) and, for the per-request
//! measures, whether they stayed within 10 % from the smallest size to the largest. Reported,
//! never asserted. A release run writes the table into `docs/benchmarks.md` ("Scale curves");
//! a `--debug` run prints it only.
//!
//! `--spread` adds the same total over many enterprises (`--enterprises`, default 1,000, of 100
//! endpoints each; see `spread.rs`): one row and the first page of one of them.

mod spread;
mod table;

use super::procs::{Service, access_token, enterprise_and_user, memory_kb, serve_roomlink};
use super::report::{self, Section, git_head};
use super::wrk::{Load, Report};
use crate::http;
use serde_json::Value;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use table::{Row, thousands};

const ENTERPRISE: &str = "bench-scale";
const USERNAME: &str = "bench-scale-ops";
const PASSWORD: &str = "bench-scale-password-0001";
const HTTP_TIMEOUT: Duration = Duration::from_secs(600);
/// wrk connections for every measured request.
const CONNECTIONS: u32 = 8;
/// The page measured first and last.
const PAGE: usize = 100;
/// The service's largest page (`MAX_PAGE_SIZE`), used to walk to the last page.
const MAX_PAGE: usize = 1000;
/// A CSV upload is at most 1 MiB (`rules::csv::MAX_BYTES`); chunks stay well under it.
const CHUNK_BYTES: usize = 900 * 1024;
/// Endpoints the single-row measures cycle through, spread over the table.
const SPREAD_IDS: usize = 16;
/// Sequential downloads of the whole list and of the CSV export.
const DOWNLOADS: usize = 3;
const USAGE: &str = "usage: cargo xtask bench-scale [--sizes 1000,10000,100000] [--no-build] [--debug] [--duration SECS] [--spread [--enterprises N]]";
const SECTION: Section = Section {
    begin: "<!-- bench-scale:begin -->",
    end: "<!-- bench-scale:end -->",
    heading: "Scale curves",
};

#[derive(Debug)]
struct Options {
    sizes: Vec<usize>,
    build: bool,
    debug: bool,
    duration: Duration,
    /// Enterprises of the `--spread` run, if asked for.
    spread: Option<usize>,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        sizes: vec![1_000, 10_000, 100_000],
        build: true,
        debug: false,
        duration: Duration::from_secs(5),
        spread: None,
    };
    let mut enterprises = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--sizes" => {
                let sizes: Option<Vec<usize>> = it.next().and_then(|v| {
                    v.split(',')
                        .map(|s| {
                            s.trim()
                                .parse()
                                .ok()
                                .filter(|n| (1..=1_000_000).contains(n))
                        })
                        .collect()
                });
                o.sizes = sizes
                    .filter(|s| !s.is_empty() && s.windows(2).all(|w| w[0] < w[1]))
                    .ok_or("--sizes needs increasing numbers from 1 to 1000000, e.g. 1000,10000")?;
            }
            "--duration" => {
                o.duration = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|s| (1..=600).contains(s))
                    .map(Duration::from_secs)
                    .ok_or("--duration needs seconds from 1 to 600")?;
            }
            "--enterprises" => {
                enterprises = Some(
                    it.next()
                        .and_then(|v| v.parse().ok())
                        .filter(|n| (2..=10_000).contains(n))
                        .ok_or("--enterprises needs a number from 2 to 10000")?,
                );
            }
            "--spread" => o.spread = Some(1_000),
            "--no-build" => o.build = false,
            "--debug" => o.debug = true,
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    match (enterprises, o.spread) {
        (Some(n), Some(_)) => o.spread = Some(n),
        (Some(_), None) => return Err("--enterprises goes with --spread".into()),
        (None, _) => {}
    }
    Ok(o)
}

/// 127.x.y.z, distinct for every `i` below 10,000,000.
fn address(i: usize) -> String {
    format!("127.{}.{}.{}", 100 + i / 65_536, (i / 256) % 256, i % 256)
}

/// The CSV files that load the endpoints numbered `rows`, with blank ids (created), each file
/// under [`CHUNK_BYTES`] and with its own header.
fn csv_chunks(rows: Range<usize>) -> Vec<String> {
    const HEADER: &str = "id,name,ipaddress,port,password\n";
    let mut chunks = Vec::new();
    let mut chunk = String::from(HEADER);
    for i in rows {
        let row = format!(
            "\"\",\"Room {i}\",\"{}\",\"22\",\"room-secret-{i}\"\n",
            address(i)
        );
        if chunk.len() + row.len() > CHUNK_BYTES {
            chunks.push(std::mem::replace(&mut chunk, String::from(HEADER)));
        }
        chunk.push_str(&row);
    }
    if chunk.len() > HEADER.len() {
        chunks.push(chunk);
    }
    chunks
}

/// The page sizes to ask for, in turn, to pass the first `n - page` endpoints, so that the
/// cursor after them starts the last full page of `page`.
fn skip_steps(n: usize, page: usize) -> Vec<usize> {
    let mut left = n.saturating_sub(page);
    let mut steps = Vec::new();
    while left > 0 {
        let step = left.min(MAX_PAGE);
        steps.push(step);
        left -= step;
    }
    steps
}

/// `count` indices spread evenly over `0..n`.
fn spaced(n: usize, count: usize) -> Vec<usize> {
    let count = count.min(n);
    (0..count).map(|k| k * n / count + n / count / 2).collect()
}

/// A wrk script that cycles through `ids`: GET each, or PATCH each with a new name.
fn script(ids: &[String], patch: bool) -> String {
    let list = ids
        .iter()
        .map(|id| format!("\"{id}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let request = if patch {
        "  n = n + 1\n  return wrk.format(\"PATCH\", \"/api/endpoints/\" .. ids[i], nil, '{\"name\": \"Room patched ' .. n .. '\"}')\n"
    } else {
        "  return wrk.format(\"GET\", \"/api/endpoints/\" .. ids[i])\n"
    };
    format!(
        "local ids = {{{list}}}\nlocal i = 0\nlocal n = 0\nwrk.headers[\"Content-Type\"] = \"application/json\"\n\
         request = function()\n  i = i % #ids + 1\n{request}end\n"
    )
}

/// Starts `roomlink serve`, logging at `warn`, and waits for `/readyz`.
fn start(bin: &Path, dir: &Path) -> Result<(Service, String), String> {
    serve_roomlink(
        bin,
        dir,
        &[("ROOMLINK__LOG__LEVEL", "warn".to_owned())],
        "roomlink.log",
    )
}

fn token(address: &str, username: &str) -> Result<String, String> {
    access_token(address, username, PASSWORD)
}

fn get(address: &str, token: &str, path: &str) -> Result<http::Response, String> {
    http::request(
        address,
        "GET",
        path,
        &[("X-Access-Token", token)],
        b"",
        HTTP_TIMEOUT,
    )?
    .ok(&format!("GET {path}"))
}

/// An enterprise for `n` endpoints and its user (password [`PASSWORD`]), the database
/// created in `dir` when there is none.
fn set_up(
    bin: &Path,
    dir: &Path,
    enterprise: &str,
    username: &str,
    n: usize,
) -> Result<(), String> {
    let limit = (n + 10).to_string();
    enterprise_and_user(
        bin,
        dir,
        &[],
        &[enterprise, "--endpoint-limit", &limit, "--create-database"],
        username,
        PASSWORD,
    )
}

/// Uploads the endpoints numbered `rows` into an empty enterprise; the ids of its endpoints (in
/// list order) and the seconds it took.
fn load(address: &str, token: &str, rows: Range<usize>) -> Result<(Vec<String>, f64), String> {
    let n = rows.len();
    let chunks = csv_chunks(rows);
    let started = Instant::now();
    let mut last = None;
    for (k, chunk) in chunks.iter().enumerate() {
        let answer = http::request(
            address,
            "POST",
            "/api/endpoints/csv",
            &[("X-Access-Token", token), ("Content-Type", "text/csv")],
            chunk.as_bytes(),
            HTTP_TIMEOUT,
        )?
        .ok(&format!("CSV upload {} of {}", k + 1, chunks.len()))?;
        last = Some(answer);
    }
    let seconds = started.elapsed().as_secs_f64();
    let list = last.ok_or("nothing to upload")?.json()?;
    let ids: Vec<String> = list
        .as_array()
        .ok_or("the CSV answer is not a list")?
        .iter()
        .filter_map(|e| e.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect();
    if ids.len() != n {
        return Err(format!(
            "{} endpoints after the CSV load, not {n} (see roomlink.log for skipped rows)",
            ids.len()
        ));
    }
    Ok((ids, seconds))
}

/// The cursor that starts the last page of [`PAGE`], found by walking the list.
fn last_page_cursor(address: &str, token: &str, n: usize) -> Result<Option<String>, String> {
    let mut cursor: Option<String> = None;
    for step in skip_steps(n, PAGE) {
        let path = match &cursor {
            Some(c) => format!("/api/endpoints?limit={step}&cursor={c}"),
            None => format!("/api/endpoints?limit={step}"),
        };
        let answer = get(address, token, &path)?;
        cursor = Some(
            answer
                .header("X-Next-Cursor")
                .ok_or_else(|| format!("GET {path}: no X-Next-Cursor before the last page"))?
                .to_owned(),
        );
    }
    Ok(cursor)
}

/// Runs `action` while a thread samples the RSS of `pid` every 20 ms; the action's result and
/// the highest RSS seen, in kB.
fn peak_rss<T>(pid: u32, action: impl FnOnce() -> T) -> (T, Option<u64>) {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            let mut peak = None;
            loop {
                if let Some((rss, _)) = memory_kb(pid) {
                    peak = Some(peak.map_or(rss, |p: u64| p.max(rss)));
                }
                if done.load(Ordering::Relaxed) {
                    return peak;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let out = action();
        done.store(true, Ordering::Relaxed);
        (out, sampler.join().ok().flatten())
    })
}

/// Sequential downloads of one whole answer.
struct Download {
    median_seconds: f64,
    megabytes: f64,
    peak_rss_kb: Option<u64>,
}

fn download(address: &str, token: &str, path: &str, pid: u32) -> Result<Download, String> {
    let (outcome, peak) = peak_rss(pid, || {
        let mut times = Vec::new();
        let mut bytes = 0;
        for _ in 0..DOWNLOADS {
            let started = Instant::now();
            let answer = get(address, token, path)?;
            times.push(started.elapsed().as_secs_f64());
            bytes = answer.body.len();
        }
        Ok::<_, String>((times, bytes))
    });
    let (mut times, bytes) = outcome?;
    times.sort_by(f64::total_cmp);
    Ok(Download {
        median_seconds: times[times.len() / 2],
        megabytes: bytes as f64 / 1e6,
        peak_rss_kb: peak,
    })
}

/// Everything measured at one size.
struct Measured {
    n: usize,
    load_seconds: f64,
    rss_idle_kb: Option<u64>,
    one: Report,
    first_page: Report,
    last_page: Report,
    patch: Report,
    list: Download,
    csv: Download,
}

fn measure(bin: &Path, dir: &Path, n: usize, o: &Options) -> Result<Measured, String> {
    set_up(bin, dir, ENTERPRISE, USERNAME, n)?;
    let (mut server, address) = start(bin, dir)?;
    let token = token(&address, USERNAME)?;
    eprintln!("bench-scale: N = {n}: loading by CSV");
    let (ids, load_seconds) = load(&address, &token, 0..n)?;
    std::thread::sleep(Duration::from_secs(1));
    let rss_idle_kb = memory_kb(server.pid()).map(|(rss, _)| rss);
    let chosen: Vec<String> = spaced(n, SPREAD_IDS)
        .into_iter()
        .map(|i| ids[i].clone())
        .collect();
    let scripts = |name: &str, patch: bool| -> Result<PathBuf, String> {
        let path = dir.join(name);
        std::fs::write(&path, script(&chosen, patch))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    };
    let (get_script, patch_script) = (scripts("get.lua", false)?, scripts("patch.lua", true)?);
    let mut wrk = |what: &str, path: &str, script: Option<&PathBuf>| -> Result<Report, String> {
        eprintln!("bench-scale: N = {n}: {what}");
        let mut load = Load::get(format!("http://{address}{path}"), CONNECTIONS, o.duration)
            .header(format!("X-Access-Token: {token}"));
        if let Some(script) = script {
            load = load.script(script.clone());
        }
        let report = load.run(dir)?.checked(what)?;
        server.check_alive()?;
        Ok(report)
    };
    let one = wrk("GET one endpoint", "/", Some(&get_script))?;
    let first_page = wrk("first page", &format!("/api/endpoints?limit={PAGE}"), None)?;
    let last = match last_page_cursor(&address, &token, n)? {
        Some(cursor) => format!("/api/endpoints?limit={PAGE}&cursor={cursor}"),
        None => format!("/api/endpoints?limit={PAGE}"),
    };
    let last_page = wrk("last page", &last, None)?;
    let patch = wrk("PATCH one endpoint", "/", Some(&patch_script))?;
    eprintln!("bench-scale: N = {n}: whole list and CSV export, {DOWNLOADS} each");
    let list = download(&address, &token, "/api/endpoints", server.pid())?;
    let csv = download(&address, &token, "/api/endpoints/csv", server.pid())?;
    server.check_alive()?;
    server.stop();
    Ok(Measured {
        n,
        load_seconds,
        rss_idle_kb,
        one,
        first_page,
        last_page,
        patch,
        list,
        csv,
    })
}

type PickReport = fn(&Measured) -> &Report;
type PickDownload = fn(&Measured) -> &Download;

/// The table's rows, one value per size.
fn rows(results: &[Measured]) -> Vec<Row> {
    let row =
        |label: &str, unit, decimals, flat_goal, value: &dyn Fn(&Measured) -> Option<f64>| Row {
            label: label.to_owned(),
            unit,
            decimals,
            flat_goal,
            values: results.iter().map(value).collect(),
        };
    let mib = |kb: Option<u64>| kb.map(|kb| kb as f64 / 1024.0);
    let mut rows = vec![
        row("CSV load", "rows/s", 0, false, &|m| {
            Some(m.n as f64 / m.load_seconds.max(1e-9))
        }),
        row("RSS after the load, idle", "MiB", 1, false, &|m| {
            mib(m.rss_idle_kb)
        }),
    ];
    let wrk_rows: [(&str, PickReport); 4] = [
        ("GET one endpoint", |m| &m.one),
        ("first page of 100", |m| &m.first_page),
        ("last page of 100", |m| &m.last_page),
        ("PATCH one endpoint", |m| &m.patch),
    ];
    for (what, report) in wrk_rows {
        rows.push(row(what, "req/s", 0, true, &|m| {
            Some(report(m).requests_per_sec)
        }));
        rows.push(row(&format!("{what}, p50"), "ms", 2, true, &|m| {
            Some(report(m).p50_ms)
        }));
        rows.push(row(&format!("{what}, p99"), "ms", 2, true, &|m| {
            Some(report(m).p99_ms)
        }));
    }
    let downloads: [(&str, PickDownload); 2] = [
        ("whole list (JSON)", |m| &m.list),
        ("CSV export", |m| &m.csv),
    ];
    for (what, d) in downloads {
        rows.push(row(
            &format!("{what}, median of {DOWNLOADS}"),
            "s",
            3,
            false,
            &|m| Some(d(m).median_seconds),
        ));
        rows.push(row(&format!("{what}, size"), "MB", 2, false, &|m| {
            Some(d(m).megabytes)
        }));
        rows.push(row(
            &format!("RSS peak during the {what}"),
            "MiB",
            1,
            false,
            &|m| mib(d(m).peak_rss_kb),
        ));
    }
    rows
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let load_average = super::procs::load_average();
    let root = crate::project_root();
    let target = crate::target_dir();
    if o.build {
        if o.debug {
            crate::cargo(&["build", "-p", "roomlink"])?;
        } else {
            crate::cargo(&["build", "--release", "-p", "roomlink"])?;
        }
    }
    let build = if o.debug { "debug" } else { "release" };
    let bin = target.join(build).join("roomlink");
    let mut results = Vec::new();
    for &n in &o.sizes {
        let dir = target.join(format!("bench/scale-{n}"));
        super::procs::fresh_dir(&dir)?;
        results.push(measure(&bin, &dir, n, &o)?);
    }
    let spread = match o.spread {
        Some(enterprises) => {
            let dir = target.join("bench/scale-spread");
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            Some(spread::measure(&bin, &dir, enterprises, o.duration)?)
        }
        None => None,
    };

    let mut out = table::render(&o.sizes, &rows(&results));
    let sizes: Vec<String> = o.sizes.iter().map(|n| n.to_string()).collect();
    let _ = write!(
        out,
        "\nBuild: {build}{}. wrk: 1 thread, {CONNECTIONS} connections, {} s per measure; \
         {SPREAD_IDS} ids spread over the table for the single-row requests; downloads \
         sequential, {DOWNLOADS} each. SQLite; roomlink's log at `warn`. Commit {}, {} cores, \
         load average at start {load_average}. Run: `cargo xtask bench-scale --sizes {}{}`.\n",
        if o.debug {
            " (unoptimized: not for comparison with release figures)"
        } else {
            ""
        },
        o.duration.as_secs(),
        git_head(&root),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        sizes.join(","),
        match (o.debug, o.spread) {
            (false, None) => String::new(),
            (true, None) => " --debug".to_owned(),
            (debug, Some(e)) => format!(
                "{} --spread --enterprises {e}",
                if debug { " --debug" } else { "" }
            ),
        },
    );
    if let Some(spread) = &spread {
        let single = o
            .sizes
            .iter()
            .position(|&n| n == spread.total())
            .map(|i| spread::Single {
                rss_idle_kb: results[i].rss_idle_kb,
                one: &results[i].one,
                first_page: &results[i].first_page,
            });
        out.push('\n');
        out.push_str(&spread::render(spread, single.as_ref()));
    }
    let sizes_line = format!(
        "\nscale curves: {} endpoints in one enterprise\n\n",
        o.sizes
            .iter()
            .map(|n| thousands(*n))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut stdout = std::io::stdout().lock();
    std::io::Write::write_all(&mut stdout, format!("{sizes_line}{out}").as_bytes())
        .map_err(|e| e.to_string())?;
    if o.debug {
        eprintln!("bench-scale: a debug run: docs/benchmarks.md left as it is");
        Ok(())
    } else {
        report::write_section(&root.join("docs/benchmarks.md"), &SECTION, &out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn options_have_defaults_and_check_their_values() {
        let o = options(&[]).unwrap();
        assert_eq!(o.sizes, vec![1_000, 10_000, 100_000]);
        assert!(o.build && !o.debug);
        assert_eq!(o.duration, Duration::from_secs(5));
        let o = options(&args(&[
            "--sizes",
            "1000,10000",
            "--debug",
            "--no-build",
            "--duration",
            "3",
        ]))
        .unwrap();
        assert_eq!(o.sizes, vec![1_000, 10_000]);
        assert!(!o.build && o.debug);
        assert_eq!(o.duration, Duration::from_secs(3));
        assert_eq!(o.spread, None);
        assert_eq!(options(&args(&["--spread"])).unwrap().spread, Some(1_000));
        let o = options(&args(&["--enterprises", "10", "--spread"])).unwrap();
        assert_eq!(o.spread, Some(10));
        for bad in [
            &["--sizes", "10000,1000"][..],
            &["--sizes", "0"],
            &["--sizes", "a"],
            &["--sizes"],
            &["--duration", "0"],
            &["--enterprises", "10"],
            &["--spread", "--enterprises", "1"],
            &["--wide"],
        ] {
            assert!(options(&args(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn csv_chunks_hold_every_row_under_the_upload_limit() {
        for n in [1, 10, 25_000] {
            let chunks = csv_chunks(0..n);
            let rows: usize = chunks.iter().map(|c| c.lines().count() - 1).sum();
            assert_eq!(rows, n);
            assert!(chunks.iter().all(|c| c.len() <= CHUNK_BYTES));
            assert!(chunks.iter().all(|c| c.starts_with("id,name,")));
        }
        assert!(csv_chunks(0..25_000).len() > 1);
        assert!(csv_chunks(0..0).is_empty());
    }

    #[test]
    fn addresses_are_distinct() {
        let all: std::collections::HashSet<String> = (0..200_000).map(address).collect();
        assert_eq!(all.len(), 200_000);
        assert_eq!(address(0), "127.100.0.0");
        assert_eq!(address(65_537), "127.101.0.1");
    }

    #[test]
    fn the_walk_passes_all_but_the_last_page() {
        assert_eq!(skip_steps(100, 100), Vec::<usize>::new());
        assert_eq!(skip_steps(50, 100), Vec::<usize>::new());
        assert_eq!(skip_steps(1_000, 100), vec![900]);
        assert_eq!(skip_steps(2_600, 100), vec![1_000, 1_000, 500]);
        assert_eq!(skip_steps(100_000, 100).iter().sum::<usize>(), 99_900);
    }

    #[test]
    fn ids_are_spread_over_the_table() {
        assert_eq!(spaced(1_000, 4), vec![125, 375, 625, 875]);
        assert_eq!(spaced(3, 16), vec![0, 1, 2]);
        assert!(spaced(100_000, 16).iter().all(|&i| i < 100_000));
    }

    #[test]
    fn scripts_cycle_through_the_ids() {
        let ids = ["a1".to_owned(), "b2".to_owned()];
        let get = script(&ids, false);
        assert!(get.contains("local ids = {\"a1\", \"b2\"}"));
        assert!(get.contains("wrk.format(\"GET\""));
        let patch = script(&ids, true);
        assert!(patch.contains("wrk.format(\"PATCH\""));
        assert!(patch.contains("Room patched"));
    }
}
