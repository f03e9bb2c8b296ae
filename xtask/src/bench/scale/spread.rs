//! `--spread`: the same number of endpoints over many enterprises (default 1,000 of 100), on a
//! fresh roomlink in `target/bench/scale-spread`, measuring what one enterprise sees: one row
//! and the first page of its list. Set against one enterprise of the same total when the sizes
//! include it.

use super::table::thousands;
use super::{CONNECTIONS, PAGE, SPREAD_IDS, load, script, set_up, spaced, start, token};
use crate::bench::procs::memory_kb;
use crate::bench::wrk::{Load, Report};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// Endpoints per enterprise.
pub const PER_ENTERPRISE: usize = 100;

/// What one enterprise among many saw.
pub struct Measured {
    pub enterprises: usize,
    pub setup_seconds: f64,
    pub load_seconds: f64,
    pub rss_idle_kb: Option<u64>,
    pub one: Report,
    pub first_page: Report,
}

impl Measured {
    pub fn total(&self) -> usize {
        self.enterprises * PER_ENTERPRISE
    }
}

fn enterprise(e: usize) -> String {
    format!("bench-spread-{e}")
}

fn user(e: usize) -> String {
    format!("bench-spread-ops-{e}")
}

pub fn measure(
    bin: &Path,
    dir: &Path,
    enterprises: usize,
    duration: Duration,
) -> Result<Measured, String> {
    let label = format!("{} enterprises", thousands(enterprises));
    eprintln!("bench-scale: spread: creating {label} and their users");
    let started = Instant::now();
    for e in 0..enterprises {
        set_up(bin, dir, &enterprise(e), &user(e), PER_ENTERPRISE)?;
    }
    let setup_seconds = started.elapsed().as_secs_f64();
    let (mut server, address) = start(bin, dir)?;
    eprintln!(
        "bench-scale: spread: loading {PER_ENTERPRISE} endpoints into each of the {label} by CSV"
    );
    let chosen = enterprises / 2;
    let mut load_seconds = 0.0;
    let mut measured = None;
    for e in 0..enterprises {
        let token = token(&address, &user(e))?;
        let rows = e * PER_ENTERPRISE..(e + 1) * PER_ENTERPRISE;
        let (ids, seconds) = load(&address, &token, rows)?;
        load_seconds += seconds;
        if e == chosen {
            measured = Some((ids, token));
        }
    }
    let (ids, token) = measured.ok_or("no enterprise to measure")?;
    std::thread::sleep(Duration::from_secs(1));
    let rss_idle_kb = memory_kb(server.pid()).map(|(rss, _)| rss);
    let chosen_ids: Vec<String> = spaced(ids.len(), SPREAD_IDS)
        .into_iter()
        .map(|i| ids[i].clone())
        .collect();
    let get_script = dir.join("get.lua");
    std::fs::write(&get_script, script(&chosen_ids, false))
        .map_err(|e| format!("{}: {e}", get_script.display()))?;
    let mut wrk = |what: &str, path: &str, script: Option<&Path>| -> Result<Report, String> {
        eprintln!("bench-scale: spread: {what}");
        let mut load = Load::get(format!("http://{address}{path}"), CONNECTIONS, duration)
            .header(format!("X-Access-Token: {token}"));
        if let Some(script) = script {
            load = load.script(script.to_path_buf());
        }
        let report = load.run(dir)?.checked(what)?;
        server.check_alive()?;
        Ok(report)
    };
    let one = wrk("GET one endpoint", "/", Some(&get_script))?;
    let first_page = wrk("first page", &format!("/api/endpoints?limit={PAGE}"), None)?;
    server.stop();
    Ok(Measured {
        enterprises,
        setup_seconds,
        load_seconds,
        rss_idle_kb,
        one,
        first_page,
    })
}

/// What one enterprise of the same total measured, to set beside the spread.
pub struct Single<'a> {
    pub rss_idle_kb: Option<u64>,
    pub one: &'a Report,
    pub first_page: &'a Report,
}

/// The spread's table, beside one enterprise of the same total when there is one.
pub fn render(spread: &Measured, single: Option<&Single>) -> String {
    let total = thousands(spread.total());
    let mut out = format!(
        "| measure | {total} over {} enterprises of {PER_ENTERPRISE} | {total} in one enterprise | change |\n|---|---|---|---|\n",
        thousands(spread.enterprises)
    );
    let mib = |kb: Option<u64>| kb.map(|kb| kb as f64 / 1024.0);
    let lines: [(&str, usize, Option<f64>, Option<f64>); 7] = [
        (
            "RSS after the load, idle (MiB)",
            1,
            mib(spread.rss_idle_kb),
            single.and_then(|s| mib(s.rss_idle_kb)),
        ),
        (
            "GET one endpoint (req/s)",
            0,
            Some(spread.one.requests_per_sec),
            single.map(|s| s.one.requests_per_sec),
        ),
        (
            "GET one endpoint, p50 (ms)",
            2,
            Some(spread.one.p50_ms),
            single.map(|s| s.one.p50_ms),
        ),
        (
            "GET one endpoint, p99 (ms)",
            2,
            Some(spread.one.p99_ms),
            single.map(|s| s.one.p99_ms),
        ),
        (
            "first page of 100 (req/s)",
            0,
            Some(spread.first_page.requests_per_sec),
            single.map(|s| s.first_page.requests_per_sec),
        ),
        (
            "first page of 100, p50 (ms)",
            2,
            Some(spread.first_page.p50_ms),
            single.map(|s| s.first_page.p50_ms),
        ),
        (
            "first page of 100, p99 (ms)",
            2,
            Some(spread.first_page.p99_ms),
            single.map(|s| s.first_page.p99_ms),
        ),
    ];
    let cell = |v: Option<f64>, decimals: usize| {
        v.map_or_else(|| "not measured".to_owned(), |v| format!("{v:.decimals$}"))
    };
    for (label, decimals, spread_value, single_value) in lines {
        let change = match (spread_value, single_value) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:+.1} %", (a / b - 1.0) * 100.0),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {change} |",
            cell(spread_value, decimals),
            cell(single_value, decimals)
        );
    }
    let _ = writeln!(
        out,
        "\nSpread set-up: {} `roomlink admin` enterprise and user creations in {:.1} s; \
         the {} CSV uploads ({PER_ENTERPRISE} rows each) {:.1} s in all ({:.0} rows/s); \
         measured: the enterprise in the middle. Change: spread over one enterprise.",
        thousands(spread.enterprises),
        spread.setup_seconds,
        thousands(spread.enterprises),
        spread.load_seconds,
        spread.total() as f64 / spread.load_seconds.max(1e-9),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(rate: f64, p50: f64, p99: f64) -> Report {
        Report {
            requests: 100,
            requests_per_sec: rate,
            p50_ms: p50,
            p99_ms: p99,
            ..Report::default()
        }
    }

    #[test]
    fn the_spread_is_set_beside_one_enterprise() {
        let spread = Measured {
            enterprises: 1_000,
            setup_seconds: 100.0,
            load_seconds: 50.0,
            rss_idle_kb: Some(2048),
            one: report(1100.0, 2.0, 4.0),
            first_page: report(200.0, 10.0, 20.0),
        };
        let (one, page) = (report(1000.0, 2.0, 5.0), report(200.0, 10.0, 20.0));
        let single = Single {
            rss_idle_kb: Some(1024),
            one: &one,
            first_page: &page,
        };
        let table = render(&spread, Some(&single));
        assert!(table.starts_with(
            "| measure | 100,000 over 1,000 enterprises of 100 | 100,000 in one enterprise | change |"
        ));
        assert!(table.contains("| RSS after the load, idle (MiB) | 2.0 | 1.0 | +100.0 % |"));
        assert!(table.contains("| GET one endpoint (req/s) | 1100 | 1000 | +10.0 % |"));
        assert!(table.contains("(2000 rows/s)"));
        let alone = render(&spread, None);
        assert!(alone.contains("| GET one endpoint (req/s) | 1100 | not measured |  |"));
    }
}
