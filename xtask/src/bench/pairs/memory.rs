//! Pair 7: roomlink's resident memory, idle and while streaming the big list.

use super::*;
use serde_json::value::RawValue;

impl Lab {
    pub(super) fn pair_memory(
        &self,
        report: &mut Report,
        setup: &Setup,
    ) -> Result<Vec<Row>, String> {
        eprintln!("bench: pair 7: resident memory idle and while streaming {BIG_ROWS} endpoints");
        psql(
            &self.scratch,
            BENCH_DB,
            &format!(
                "INSERT INTO endpoints (id, enterprise_id, name, ip_address, port, username, control_protocol, location, password_key_id, password_ciphertext) \
                 SELECT 'big' || lpad(g::text, 21, '0'), '{}', 'Big room ' || g, '127.99.' || (g / 250 % 250) || '.' || (g % 250 + 1), 22, 'admin', \
                 'TANDBERG_SSH', 'Building ' || (g / 100) || ' floor ' || (g % 100), 'bench', convert_to('big-room-password-' || g, 'UTF8') \
                 FROM generate_series(1, {BIG_ROWS}) AS g",
                setup.big_enterprise
            ),
        )?;
        psql(&self.scratch, BENCH_DB, "VACUUM ANALYZE endpoints")?;
        let kib = |kb: u64| kb as f64 / 1024.0;
        let (mut idle, mut added, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..self.options.rounds {
            let (mut service, address) =
                self.start_roomlink(&format!("roomlink-memory-{round}.log"), &[])?;
            sleep(Duration::from_secs(2));
            let pid = service.pid();
            let (idle_rss, _) = procs::memory_kb(pid).ok_or("cannot read /proc/PID/status")?;
            let done = Arc::new(AtomicBool::new(false));
            let peak_sampled = Arc::new(AtomicU64::new(idle_rss));
            let sampler = {
                let done = Arc::clone(&done);
                let peak = Arc::clone(&peak_sampled);
                std::thread::spawn(move || {
                    let deadline = Instant::now() + Duration::from_secs(300);
                    while !done.load(Ordering::Relaxed) && Instant::now() < deadline {
                        if let Some((rss, _)) = procs::memory_kb(pid) {
                            peak.fetch_max(rss, Ordering::Relaxed);
                        }
                        sleep(Duration::from_millis(5));
                    }
                })
            };
            let started = Instant::now();
            let streamed = http::request(
                &address,
                "GET",
                "/api/endpoints",
                &[("X-Access-Token", &setup.big_token)],
                b"",
                Duration::from_secs(180),
            );
            let seconds = started.elapsed().as_secs_f64();
            done.store(true, Ordering::Relaxed);
            let _ = sampler.join();
            let streamed = streamed?.ok("GET /api/endpoints (100,000)")?;
            // Items borrowed from the body, not parsed into values: one pointer each.
            let count = serde_json::from_slice::<Vec<&RawValue>>(&streamed.body)
                .map_err(|e| format!("GET /api/endpoints: {e}"))?
                .len();
            if count != BIG_ROWS {
                return Err(format!("the list held {count} endpoints, not {BIG_ROWS}"));
            }
            let (_, hwm) = procs::memory_kb(pid).ok_or("cannot read /proc/PID/status")?;
            service.check_alive()?;
            if round + 1 == self.options.rounds {
                self.profile(
                    report,
                    "7",
                    "GET /api/endpoints of 100,000 (streamed)",
                    pid,
                    || {
                        self.for_a_run(|| {
                            http::request(
                                &address,
                                "GET",
                                "/api/endpoints",
                                &[("X-Access-Token", &setup.big_token)],
                                b"",
                                Duration::from_secs(180),
                            )?
                            .ok("GET /api/endpoints (100,000), profiled")
                            .map(drop)
                        })
                    },
                );
            }
            service.stop();
            let peak = hwm.max(peak_sampled.load(Ordering::Relaxed));
            idle.push(kib(idle_rss));
            added.push(kib(peak.saturating_sub(idle_rss)));
            sizes.push(streamed.body.len() as f64 / 1_048_576.0);
            report.notes.push(format!(
                "pair 7 round {}: {:.1} MiB of JSON streamed in {seconds:.2} s; VmHWM after {:.1} MiB",
                round + 1,
                streamed.body.len() as f64 / 1_048_576.0,
                kib(hwm)
            ));
        }
        report.samples("pair 7 VmRSS idle", "MiB", &idle);
        report.samples("pair 7 peak minus idle while streaming", "MiB", &added);
        let m_idle = median(&idle).ok_or("no samples")?;
        let m_added = median(&added).ok_or("no samples")?;
        Ok(vec![
            Row {
                pair: "7".into(),
                what: "resident memory (VmRSS) of roomlink, idle".into(),
                roomlink: format!("{m_idle:.1} MiB"),
                other: "-".into(),
                result: format!("{m_idle:.1} MiB"),
                p99: "-".into(),
                goal: format!("<= {GOAL_7_IDLE_MIB} MiB"),
                verdict: if m_idle <= GOAL_7_IDLE_MIB {
                    Verdict::Met
                } else {
                    Verdict::NotMet
                },
            },
            Row {
                pair: "7".into(),
                what: format!(
                    "peak (VmHWM) while streaming GET /api/endpoints of 100,000 ({:.0} MiB of JSON), above idle",
                    median(&sizes).unwrap_or_default()
                ),
                roomlink: format!("{:.1} MiB", m_idle + m_added),
                other: format!("{m_idle:.1} MiB (idle)"),
                result: format!("+{m_added:.1} MiB"),
                p99: "-".into(),
                goal: format!("<= {GOAL_7_ADDED_MIB} MiB more"),
                verdict: if m_added <= GOAL_7_ADDED_MIB {
                    Verdict::Met
                } else {
                    Verdict::NotMet
                },
            },
        ])
    }
}
