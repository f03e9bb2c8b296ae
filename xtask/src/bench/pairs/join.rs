//! Pair 5: a join through roomlink against the same command sent straight to the listener
//! simulator, and the yardstick of one PostgreSQL round trip of the join's own read.

use super::*;

impl Lab {
    pub(super) fn pair_join(
        &self,
        report: &mut Report,
        setup: &Setup,
        id: &str,
        d: Duration,
    ) -> Result<Row, String> {
        eprintln!("bench: pair 5: join through roomlink vs straight to the simulator");
        let index = setup
            .endpoint_ids
            .iter()
            .position(|e| e == id)
            .ok_or("the endpoint is not in the list")?;
        let through = self.scratch.join("join-roomlink.lua");
        std::fs::write(
            &through,
            format!(
                "wrk.method = \"POST\"\nwrk.headers[\"X-Access-Token\"] = \"{}\"\n",
                setup.token
            ),
        )
        .map_err(|e| e.to_string())?;
        let straight = self.scratch.join("join-sim.lua");
        let body = format!(
            r#"{{"endpoint": {{"id": "{id}", "name": "Bench room {index:04}", "ipAddress": "{}", "port": 22, "controlProtocol": "TANDBERG_SSH", "username": "admin"}}, "credential": {{"kind": "plain", "password": "room-secret-{index:04}"}}, "params": {{"meetingId": "123456789", "passcode": "4321"}}}}"#,
            room_address(77, index)
        );
        std::fs::write(
            &straight,
            format!(
                "wrk.method = \"POST\"\nwrk.body = '{body}'\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.headers[\"Authorization\"] = \"Bearer {}\"\n",
                self.sim_secret
            ),
        )
        .map_err(|e| e.to_string())?;
        let mut a = Load::get(
            format!(
                "http://{}/api/endpoints/{id}/join?meetingid=123456789&passcode=4321",
                setup.roomlink_addr
            ),
            1,
            d,
        )
        .script(through);
        let mut b =
            Load::get(format!("http://{}/v1/commands/join", setup.sim_addr), 1, d).script(straight);
        a.threads = 1;
        b.threads = 1;
        let warm_up = |load: &Load| {
            let mut short = Load::get(load.url.clone(), 1, Duration::from_secs(1));
            short.script.clone_from(&load.script);
            short.run(&self.scratch)
        };
        warm_up(&a)?.checked("pair 5 roomlink warm-up")?;
        warm_up(&b)?.checked("pair 5 simulator warm-up")?;
        let (mut la, mut lb) = (Vec::new(), Vec::new());
        let (mut p99_a, mut p99_b) = (Vec::new(), Vec::new());
        for _ in 0..self.options.rounds {
            let run_a = a.run(&self.scratch)?.checked("pair 5 roomlink")?;
            let run_b = b.run(&self.scratch)?.checked("pair 5 simulator")?;
            la.push(run_a.p50_ms);
            lb.push(run_b.p50_ms);
            p99_a.push(run_a.p99_ms);
            p99_b.push(run_b.p99_ms);
        }
        self.note_pg_round_trip(report, setup, id, d);
        report.samples("pair 5 join through roomlink, p50", "ms", &la);
        report.samples("pair 5 join straight to the simulator, p50", "ms", &lb);
        report.samples("pair 5 join through roomlink, p99", "ms", &p99_a);
        report.samples("pair 5 join straight to the simulator, p99", "ms", &p99_b);
        let (ma, mb) = medians(&la, &lb)?;
        let (pa, pb) = medians(&p99_a, &p99_b)?;
        let added = ma - mb;
        let what = "POST /api/endpoints/{id}/join vs the same command straight to the simulator (one connection, median latency)";
        self.profile(report, "5", what, setup.roomlink.pid(), || {
            a.run(&self.scratch)?
                .checked("pair 5 roomlink, profiled")
                .map(drop)
        });
        Ok(Row {
            pair: "5".into(),
            what: what.into(),
            roomlink: format!("{} ms", num(ma)),
            other: format!("{} ms (simulator)", num(mb)),
            result: format!("+{added:.2} ms"),
            p99: String::new(),
            goal: added_goal(GOAL_5_ADDED_MS),
            verdict: if added <= GOAL_5_ADDED_MS {
                Verdict::Met
            } else {
                Verdict::NotMet
            },
        }
        .with_p99(pa, Some(pb)))
    }

    /// Pair 5's yardstick: one PostgreSQL round trip of the join's read (the endpoint with its
    /// enterprise's key and its listener), from pgbench on one connection, one after another,
    /// as the join sends it. A join makes two round trips (this read, and the write of its
    /// status with the audit entry); the note says what one costs on this machine.
    pub(super) fn note_pg_round_trip(
        &self,
        report: &mut Report,
        setup: &Setup,
        id: &str,
        d: Duration,
    ) {
        report.notes.push(match self.pg_round_trip_ms(setup, id, d) {
            Ok((p50, p99)) => format!(
                "pair 5: one PostgreSQL round trip of the join's read (pgbench -c1, one after another, {} s): p50 {p50:.2} ms, p99 {p99:.2} ms; \
                 a join makes two round trips (that read; the status and audit write) besides its call to the listener",
                d.as_secs()
            ),
            Err(why) => format!("pair 5: the PostgreSQL round trip was not measured: {why}"),
        });
    }

    /// p50 and p99 in ms of the join's read sent by `pgbench -c1` for `d`. The SQL restates
    /// the store's `command_context` (crates/store/src/endpoints.rs, diesel's DSL there); keep
    /// the two in step.
    pub(super) fn pg_round_trip_ms(
        &self,
        setup: &Setup,
        id: &str,
        d: Duration,
    ) -> Result<(f64, f64), String> {
        let script = self.scratch.join("command-read.sql");
        std::fs::write(
            &script,
            format!(
                "SELECT e.*, en.public_key, l.* FROM endpoints e \
                 JOIN enterprises en ON en.id = e.enterprise_id \
                 LEFT JOIN listener_services l ON l.id = e.listener_service_id AND l.enterprise_id = e.enterprise_id \
                 WHERE e.enterprise_id = '{}' AND e.id = '{id}';\n",
                setup.enterprise_id
            ),
        )
        .map_err(|e| e.to_string())?;
        let log_prefix = "pgbench-command-read";
        let mut command = Command::new("pgbench");
        command
            .args([
                "-n",
                "-c",
                "1",
                "-j",
                "1",
                "-T",
                &d.as_secs().max(1).to_string(),
            ])
            .args(["-h", PG_ADDRESS, "-p", PG_PORT, "-U", "postgres", "-f"])
            .arg(&script)
            .arg("--log")
            .arg(format!(
                "--log-prefix={}",
                self.scratch.join(log_prefix).display()
            ))
            .arg(BENCH_DB)
            .current_dir(&self.scratch);
        procs::run(command, None, d + Duration::from_secs(30), &self.scratch)?
            .ok("pgbench (one round trip of the join's read)")?;
        // pgbench writes PREFIX.PID, one line per transaction: client, number, latency in µs, ...
        let mut latencies: Vec<f64> = Vec::new();
        for entry in std::fs::read_dir(&self.scratch).map_err(|e| e.to_string())? {
            let path = entry.map_err(|e| e.to_string())?.path();
            let ours = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{log_prefix}.")));
            if ours {
                let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
                latencies.extend(
                    text.lines()
                        .filter_map(|l| l.split_whitespace().nth(2)?.parse::<f64>().ok())
                        .map(|us| us / 1000.0),
                );
                let _ = std::fs::remove_file(&path);
            }
        }
        if latencies.is_empty() {
            return Err("pgbench logged no transaction".to_owned());
        }
        latencies.sort_by(f64::total_cmp);
        Ok((quantile(&latencies, 0.5), quantile(&latencies, 0.99)))
    }
}
