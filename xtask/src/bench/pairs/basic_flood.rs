//! Pair 6: token latency and Basic-auth throughput under a flood of Basic requests, against a
//! roomlink of its own with the verified-password cache off, and Basic throughput with it on.

use super::*;
use crate::bench::cpu::CpuTimes;

impl Lab {
    /// Pair 6: the two goal rows against a roomlink started with the verified-password cache
    /// off (every Basic request a bcrypt verify), then one row, without a goal, of Basic
    /// throughput with the cache on (the first roomlink, default settings). Stops the first
    /// roomlink.
    pub(super) fn pair_basic_flood(
        &self,
        report: &mut Report,
        setup: &mut Setup,
        id: &str,
        d: Duration,
    ) -> Vec<Row> {
        eprintln!("bench: pair 6: token p99 alone and under a Basic-auth flood");
        let verify = self.bcrypt_verify(report);
        let cached = verify
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|&verify_ms| self.basic_cached(report, setup, id, d, verify_ms));
        setup.roomlink.stop();
        let uncached =
            verify.and_then(|verify_ms| self.basic_uncached(report, setup, id, d, verify_ms));
        let mut rows = uncached.unwrap_or_else(|why| {
            vec![
                Row::unavailable(
                    "6",
                    "token p99 under a Basic-auth flood (password cache off)",
                    &GOAL_6_P99.label(),
                    why.clone(),
                ),
                Row::unavailable(
                    "6",
                    "Basic throughput (password cache off) vs cores / one verify",
                    &share_goal(GOAL_6_BASIC_SHARE),
                    why,
                ),
            ]
        });
        rows.push(cached.unwrap_or_else(|why| {
            Row::unavailable(
                "6",
                "Basic-auth throughput with the password cache on",
                "-",
                why,
            )
        }));
        rows
    }

    /// Milliseconds of one bcrypt verify on one core at the cost of the stored hash.
    fn bcrypt_verify(&self, report: &mut Report) -> Result<f64, String> {
        let hash = psql(
            &self.scratch,
            BENCH_DB,
            "SELECT password_hash FROM service_users WHERE username = 'bench-ops'",
        )?;
        let cost: u32 = hash
            .split('$')
            .nth(2)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| {
                format!(
                    "not a bcrypt hash: {}",
                    hash.chars().take(7).collect::<String>()
                )
            })?;
        let iterations = if self.options.quick { "10" } else { "40" };
        let mut timing = Command::new(self.bin.join("bench-peer"));
        timing.args([
            "bcrypt",
            "--cost",
            &cost.to_string(),
            "--iterations",
            iterations,
        ]);
        let timed =
            procs::run(timing, None, SETUP_TIMEOUT, &self.scratch)?.ok("bench-peer bcrypt")?;
        let verify_ms: f64 = timed
            .stdout
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("bench-peer bcrypt printed {:?}", timed.stdout))?;
        report.notes.push(format!(
            "pair 6: one bcrypt verify at cost {cost} takes {verify_ms:.1} ms on one core (bench-peer bcrypt, {iterations} verifies)"
        ));
        Ok(verify_ms)
    }

    /// wrk with the same Basic credentials on every request, 4 connections per core.
    fn basic_flood(&self, setup: &Setup, address: &str, id: &str, d: Duration) -> Load {
        Load::get(
            format!("http://{address}/api/endpoints/{id}"),
            4 * self.cores as u32,
            d,
        )
        .header(format!("Authorization: {}", setup.basic))
    }

    /// Basic-auth req/s on the first roomlink, its verified-password cache at the default.
    fn basic_cached(
        &self,
        report: &mut Report,
        setup: &Setup,
        id: &str,
        d: Duration,
        verify_ms: f64,
    ) -> Result<Row, String> {
        let flood = self.basic_flood(setup, &setup.roomlink_addr, id, d);
        let mut warm_up = self.basic_flood(setup, &setup.roomlink_addr, id, Duration::from_secs(1));
        warm_up.connections = 1;
        warm_up
            .run(&self.scratch)?
            .checked("pair 6 Basic warm-up (cache on)")?;
        let (mut rates, mut p99s) = (Vec::new(), Vec::new());
        for _ in 0..self.options.rounds {
            let run = flood
                .run(&self.scratch)?
                .checked("pair 6 Basic flood (cache on)")?;
            rates.push(run.requests_per_sec);
            p99s.push(run.p99_ms);
        }
        report.samples("pair 6 Basic req/s, password cache on", "req/s", &rates);
        report.samples("pair 6 Basic p99, password cache on", "ms", &p99s);
        let (rate, p99) = medians(&rates, &p99s)?;
        Ok(Row {
            goal: "-".into(),
            verdict: Verdict::NoGoal,
            ..self.basic_throughput_row(
                format!(
                    "Basic-auth throughput with the verified-password cache on (the first roomlink, default setting; the same credentials on every request, wrk -c{})",
                    flood.connections
                ),
                rate,
                verify_ms,
            )
        }
        .with_p99(p99, None))
    }

    /// One `bench-peer bcrypt` process per core at nice 19, hashing until stopped: every core
    /// as busy with bcrypt as pair 6's flood keeps roomlink's hashing threads (nice 19 too), but
    /// outside roomlink, with no request to roomlink beyond the probe's.
    fn outside_hashing(&self, round: u32) -> Result<Vec<Service>, String> {
        (0..self.cores)
            .map(|core| {
                let mut command = Command::new("nice");
                command.arg("-n").arg("19").arg(self.bin.join("bench-peer"));
                command.args(["bcrypt", "--cost", "16", "--iterations", "1000"]);
                Service::start(
                    "bench-peer bcrypt (outside hashing)",
                    command,
                    &self
                        .logs
                        .join(format!("outside-hashing-{round}-{core}.log")),
                )
            })
            .collect()
    }

    /// Basic requests per second all cores can verify, one verify taking `verify_ms`.
    fn verifies_per_sec(&self, verify_ms: f64) -> f64 {
        self.cores as f64 * 1000.0 / verify_ms
    }

    /// A row of Basic-auth req/s against what the cores can verify (`cores / verify_ms`),
    /// without a goal.
    fn basic_throughput_row(&self, what: String, rate: f64, verify_ms: f64) -> Row {
        let ideal = self.verifies_per_sec(verify_ms);
        Row {
            pair: "6".into(),
            what,
            roomlink: format!("{} req/s", num(rate)),
            other: format!(
                "{} req/s ({} cores / {verify_ms:.1} ms)",
                num(ideal),
                self.cores
            ),
            result: format!("{:.0}%", 100.0 * rate / ideal),
            p99: String::new(),
            goal: "-".into(),
            verdict: Verdict::NoGoal,
        }
    }

    /// The goal rows of pair 6, against a roomlink of their own with the verified-password
    /// cache off.
    fn basic_uncached(
        &self,
        report: &mut Report,
        setup: &Setup,
        id: &str,
        d: Duration,
        verify_ms: f64,
    ) -> Result<Vec<Row>, String> {
        let (roomlink, address) = self
            .start_roomlink("roomlink-pair6.log", &[PASSWORD_CACHE_OFF])
            .map_err(|e| refused_setting(&e))?;
        let url = format!("http://{address}/api/endpoints/{id}");
        let probe_script = self.scratch.join("token-probe.lua");
        std::fs::write(
            &probe_script,
            format!(
                "wrk.headers[\"X-Access-Token\"] = \"{}\"\nfunction delay()\n  return 2\nend\n",
                setup.token
            ),
        )
        .map_err(|e| e.to_string())?;
        let probe = Load::get(url, 4, d).script(probe_script);
        let flood = self.basic_flood(setup, &address, id, d + FLOOD_EXTRA);

        probe.run(&self.scratch)?.checked("pair 6 token warm-up")?;
        let (mut alone, mut flooded, mut basic_rates) = (Vec::new(), Vec::new(), Vec::new());
        let (mut basic_p99, mut probe_busy, mut outside) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..self.options.rounds {
            let before = CpuTimes::now();
            alone.push(
                probe
                    .run(&self.scratch)?
                    .checked("pair 6 token alone")?
                    .p99_ms,
            );
            if let Some(share) = CpuTimes::now()
                .zip(before)
                .and_then(|(after, before)| after.busy_share_since(&before))
            {
                probe_busy.push(100.0 * share);
            }
            let mut running = Service::start(
                "wrk (Basic flood)",
                flood.command(),
                &self.logs.join(format!("flood-{round}.log")),
            )?;
            sleep(Duration::from_secs(1));
            let under = probe.run(&self.scratch);
            let finished = running.wait_exit(flood.deadline());
            let flood_report = wrk::Report::parse(&running.log_text());
            let under = under?.checked("pair 6 token under the flood")?;
            finished?;
            let flood_report = flood_report?.checked("pair 6 Basic flood")?;
            flooded.push(under.p99_ms);
            basic_rates.push(flood_report.requests_per_sec);
            basic_p99.push(flood_report.p99_ms);

            let hashing = self.outside_hashing(round)?;
            sleep(Duration::from_secs(1));
            let beside = probe.run(&self.scratch);
            drop(hashing);
            outside.push(
                beside?
                    .checked("pair 6 token beside outside hashing")?
                    .p99_ms,
            );
        }
        self.profile(
            report,
            "6",
            "token GET under a Basic-auth flood (password cache off)",
            roomlink.pid(),
            || {
                let mut running = Service::start(
                    "wrk (Basic flood)",
                    flood.command(),
                    &self.logs.join("flood-profiled.log"),
                )?;
                sleep(Duration::from_secs(1));
                let under = probe.run(&self.scratch);
                running.wait_exit(flood.deadline())?;
                under?.checked("pair 6 token under the flood, profiled")?;
                wrk::Report::parse(&running.log_text())?.checked("pair 6 Basic flood, profiled")?;
                Ok(())
            },
        );
        report.samples("pair 6 token p99 alone", "ms", &alone);
        report.samples("pair 6 token p99 under the Basic flood", "ms", &flooded);
        report.samples(
            "pair 6 token p99 beside bcrypt outside roomlink (nice 19, every core)",
            "ms",
            &outside,
        );
        report.samples("pair 6 Basic req/s during the flood", "req/s", &basic_rates);
        report.samples("pair 6 Basic p99 during the flood", "ms", &basic_p99);
        report.samples(
            "pair 6 cores busy during the token probe alone (all processes)",
            "%",
            &probe_busy,
        );
        let (m_alone, m_flooded) = medians(&alone, &flooded)?;
        let m_outside = median(&outside).ok_or("no samples")?;
        let m_basic = median(&basic_rates).ok_or("no samples")?;
        let m_basic_p99 = median(&basic_p99).ok_or("no samples")?;
        let ideal = self.verifies_per_sec(verify_ms);
        report.notes.push(format!(
            "pair 6: its goal rows ran against a roomlink of their own started with {}={} (every Basic request a bcrypt verify); \
             the token probe is wrk -c4 with 2 ms between requests per connection, the flood wrk -c{} with Basic credentials on the same route",
            PASSWORD_CACHE_OFF.0, PASSWORD_CACHE_OFF.1, flood.connections
        ));
        if let Some(busy) = median(&probe_busy) {
            // The probe runs during the flood too (all of it but `FLOOD_EXTRA`), at normal
            // priority: the verifies get what it leaves.
            let overlap = d.as_secs_f64() / (d + FLOOD_EXTRA).as_secs_f64();
            let ceiling = ideal * (1.0 - overlap * busy / 100.0);
            report.notes.push(format!(
                "pair 6: the token probe alone kept {busy:.0} % of the cores busy (roomlink, PostgreSQL and wrk together, from /proc/stat); \
                 running beside it for {:.0} % of the flood, the flood's verifies can have at most the rest: {} req/s, {:.0} % of cores / one verify",
                100.0 * overlap,
                num(ceiling),
                100.0 * ceiling / ideal
            ));
        }
        if m_basic > 1.5 * ideal {
            report.notes.push(format!(
                "pair 6: **the flood ran at {:.1}x of what one bcrypt verify per request allows**: the roomlink meant to have \
                 its password cache off did not verify every request, so the pair 6 goal rows do not measure the worst case",
                m_basic / ideal
            ));
        }
        Ok(vec![
            GOAL_6_P99.row(
                "6",
                "token GET p99 under a Basic-auth flood vs alone (password cache off)",
                format!("{} ms (flood)", num(m_flooded)),
                format!("{} ms (alone)", num(m_alone)),
                m_flooded / m_alone,
            ),
            // The machine's own share of the flood's tail: the same probe while every core is
            // as busy hashing as under the flood, but with the hashing outside roomlink.
            Row {
                pair: "6".into(),
                what: format!(
                    "token GET p99 beside bcrypt outside roomlink ({} nice-19 `bench-peer bcrypt` processes, no flood) vs alone",
                    self.cores
                ),
                roomlink: format!("{} ms (beside)", num(m_outside)),
                other: format!("{} ms (alone)", num(m_alone)),
                result: format!("{:.2}x", m_outside / m_alone),
                p99: "-".into(),
                goal: "-".into(),
                verdict: Verdict::NoGoal,
            },
            Row {
                goal: share_goal(GOAL_6_BASIC_SHARE),
                verdict: if m_basic >= GOAL_6_BASIC_SHARE * ideal {
                    Verdict::Met
                } else {
                    Verdict::NotMet
                },
                ..self.basic_throughput_row(
                    "Basic-auth throughput during the flood (password cache off) vs cores / one verify".into(),
                    m_basic,
                    verify_ms,
                )
            }
            .with_p99(m_basic_p99, None),
        ])
    }
}

/// The flood runs this much longer than the probe: it starts a second before and ends about a
/// second after.
const FLOOD_EXTRA: Duration = Duration::from_secs(2);

/// Pair 6's roomlink: no cache of recently verified Basic credentials (default 60 s), so
/// every Basic request is a bcrypt verify.
const PASSWORD_CACHE_OFF: (&str, &str) = ("ROOMLINK__SECURITY__VERIFIED_PASSWORD_CACHE_SECS", "0");

/// Why pair 6's roomlink did not start, on one line; names a build that does not know the
/// setting (roomlink refuses unknown settings).
fn refused_setting(error: &str) -> String {
    let (key, value) = PASSWORD_CACHE_OFF;
    match error.lines().find(|l| l.contains("unknown setting")) {
        Some(line) => format!(
            "this roomlink build refuses {key}={value}, so its Basic requests cannot all be bcrypt verifies \
             (the build predates the verified-password cache; it said: {})",
            line.trim()
        ),
        None => format!(
            "the roomlink for pair 6 ({key}={value}) did not start: {}",
            error.trim().replace('\n', " / ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_refused_setting_on_one_line() {
        let refused = refused_setting(
            "roomlink exited (exit status: 1); its log ends with:\nroomlink: configuration: unknown setting security.verified_password_cache_secs (from ROOMLINK__SECURITY__VERIFIED_PASSWORD_CACHE_SECS); every setting is listed in docs/operations.md",
        );
        assert!(refused.starts_with(
            "this roomlink build refuses ROOMLINK__SECURITY__VERIFIED_PASSWORD_CACHE_SECS=0, so"
        ));
        assert!(refused.contains("it said: roomlink: configuration: unknown setting security.verified_password_cache_secs"));
        assert!(!refused.contains('\n'));
        let other =
            refused_setting("roomlink exited (exit status: 1); its log ends with:\nno database");
        assert!(other.starts_with("the roomlink for pair 6"));
        assert!(!other.contains('\n'));
    }
}
