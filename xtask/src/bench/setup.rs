//! Setting the lab up: the throwaway database, the services on both sides of the pairs, and
//! the data they read.

use super::*;
use base64::prelude::{BASE64_STANDARD, Engine as _};

impl Lab {
    pub(super) fn new(
        root: &Path,
        dir: &Path,
        scratch: &Path,
        run_dir: &Path,
        options: Options,
        cores: usize,
    ) -> Result<Lab, String> {
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
        Ok(Lab {
            bin: root.join("target/release"),
            dir: dir.to_path_buf(),
            profiling: false,
            scratch: scratch.to_path_buf(),
            run_dir: run_dir.to_path_buf(),
            logs,
            options,
            cores,
            service_key: BASE64_STANDARD.encode(random_bytes(32)?),
            sim_secret: hex(&random_bytes(16)?),
        })
    }

    /// With `--profile` (and perf usable): runs `action`, an extra and unmeasured run of side A
    /// of `pair`, under `perf record` of process `pid`, and adds its top frames to `report`.
    pub(super) fn profile(
        &self,
        report: &mut Report,
        pair: &str,
        what: &str,
        pid: u32,
        action: impl FnOnce() -> Result<(), String>,
    ) {
        if !self.profiling {
            return;
        }
        eprintln!("bench: pair {pair}: profiling an extra run of roomlink's side");
        let data = format!("perf/pair{pair}.data");
        let flame = format!("flame-pair{pair}.svg");
        let outcome = profile::profile(
            pid,
            &self.dir.join(&data),
            &self.dir.join(&flame),
            &self.logs.join(format!("perf-pair{pair}.log")),
            &self.scratch,
            action,
        )
        .map(|mut summary| {
            // Shown relative to the repository.
            summary.data = Path::new("target/bench").join(&data);
            if let Some(Ok(svg)) = &mut summary.flame {
                *svg = Path::new("target/bench").join(&flame);
            }
            summary
        });
        if let Err(why) = &outcome {
            eprintln!("bench: pair {pair}: no profile: {why}");
        }
        report.profiles.push(profile::Profile {
            pair: pair.to_owned(),
            what: what.to_owned(),
            outcome,
        });
    }

    /// With `--profile`: a line for every chosen pair that ended before its profile.
    pub(super) fn unprofiled(&self, report: &mut Report) {
        if !self.profiling {
            return;
        }
        for pair in (1..=PAIRS).filter(|&p| self.options.wants(p)) {
            let pair = pair.to_string();
            if report.profiles.iter().any(|p| p.pair == pair) {
                continue;
            }
            let what = report
                .rows
                .iter()
                .find(|r| r.pair == pair)
                .map_or_else(String::new, |r| r.what.clone());
            report.profiles.push(profile::Profile {
                pair,
                what,
                outcome: Err(
                    "the pair ended before its profiled run (see \"Not measured\" or the notes)"
                        .to_owned(),
                ),
            });
        }
    }

    pub(super) fn versions(&self, postgrest: Option<&PathBuf>) -> String {
        let first_line = |command: Command| {
            procs::run(command, None, HTTP_TIMEOUT, &self.scratch)
                .map(|f| {
                    format!("{}{}", f.stdout, f.stderr)
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .to_owned()
                })
                .unwrap_or_else(|e| e)
        };
        let mut wrk = Command::new("wrk");
        wrk.arg("-v");
        let pg =
            psql(&self.scratch, PG_MAINTENANCE_DB, "SHOW server_version").unwrap_or_else(|e| e);
        let postgrest = postgrest.map_or_else(
            || "not available".to_owned(),
            |bin| {
                let mut command = Command::new(bin);
                command.arg("--version");
                first_line(command)
            },
        );
        format!(
            "{}, PostgreSQL {pg}, {postgrest}",
            first_line(wrk).split(" [").next().unwrap_or_default()
        )
    }

    /// A `roomlink` command against the bench database, from a directory without a
    /// `roomlink.toml`, with none of the caller's `ROOMLINK__*` variables.
    pub(super) fn roomlink(&self, args: &[&str]) -> Command {
        let mut command = Command::new(self.bin.join("roomlink"));
        for (key, _) in std::env::vars() {
            if key.starts_with("ROOMLINK__") {
                command.env_remove(key);
            }
        }
        command
            .args(args)
            .current_dir(&self.run_dir)
            .env_remove("RUST_LOG")
            .env("ROOMLINK__DATABASE__URL", Database::url())
            .env("ROOMLINK__DATABASE__MAX_CONNECTIONS", POOL)
            .env("ROOMLINK__SECURITY__SERVICE_KEY", &self.service_key)
            .env("ROOMLINK__SERVER__BIND", "127.0.0.1:0")
            .env("ROOMLINK__SERVER__SHUTDOWN_TIMEOUT_SECS", "2")
            .env("ROOMLINK__LOG__FORMAT", "json")
            // The abuse limits would cap a load generator on one address and one token.
            .env("ROOMLINK__LIMITS__ADDRESS_RATE_PER_SEC", "0")
            .env("ROOMLINK__LIMITS__TOKEN_RATE_PER_SEC", "0");
        command
    }

    pub(super) fn admin(&self, args: &[&str]) -> Result<Finished, String> {
        procs::run(self.roomlink(args), None, SETUP_TIMEOUT, &self.scratch)?
            .ok(&format!("roomlink {}", args.join(" ")))
    }

    pub(super) fn create_user(&self, enterprise: &str, username: &str) -> Result<(), String> {
        let password_file = self.scratch.join("password.txt");
        std::fs::write(&password_file, format!("{USER_PASSWORD}\n")).map_err(|e| e.to_string())?;
        let args = [
            "admin",
            "user",
            "create",
            "--enterprise",
            enterprise,
            "--username",
            username,
            "--role",
            "ROLE_READWRITE",
            "--password-stdin",
        ];
        procs::run(
            self.roomlink(&args),
            Some(&password_file),
            SETUP_TIMEOUT,
            &self.scratch,
        )?
        .ok("roomlink admin user create")?;
        Ok(())
    }

    /// Starts `roomlink serve` with `settings` (`ROOMLINK__*` variables) on top of the usual
    /// ones and waits until it listens and its database answers.
    pub(super) fn start_roomlink(
        &self,
        log: &str,
        settings: &[(&str, &str)],
    ) -> Result<(Service, String), String> {
        let mut command = self.roomlink(&["serve"]);
        command.envs(settings.iter().copied());
        let mut service = Service::start("roomlink", command, &self.logs.join(log))?;
        let address = service.wait_for(SETUP_TIMEOUT, listening_address)?;
        wait_http(&mut service, &address, "/readyz")?;
        Ok((service, address))
    }

    pub(super) fn token(&self, roomlink: &str, username: &str) -> Result<String, String> {
        let basic = http::basic(username, USER_PASSWORD);
        let answer = http::request(
            roomlink,
            "POST",
            "/api/auth/accesstokens",
            &[("Authorization", &basic)],
            b"",
            HTTP_TIMEOUT,
        )?
        .ok("create an access token")?;
        answer.json_string("accessToken")
    }

    pub(super) fn enterprise_id(&self, name: &str) -> Result<String, String> {
        let id = psql(
            &self.scratch,
            BENCH_DB,
            &format!("SELECT id FROM enterprises WHERE name = '{name}'"),
        )?;
        if id.is_empty() {
            return Err(format!("enterprise {name} not found"));
        }
        Ok(id)
    }

    pub(super) fn setup(&self) -> Result<Setup, String> {
        eprintln!("bench: preparing the database, roomlink and the simulator");
        self.admin(&["migrate"])?;
        for (name, limit) in [
            ("bench", "2000"),
            ("bench-csv", "10000"),
            ("bench-sql", "10000"),
            ("bench-big", "200000"),
        ] {
            self.admin(&[
                "admin",
                "enterprise",
                "create",
                name,
                "--endpoint-limit",
                limit,
                "--create-database",
            ])?;
        }
        for (enterprise, user) in [
            ("bench", "bench-ops"),
            ("bench-csv", "bench-csv-ops"),
            ("bench-big", "bench-big-ops"),
        ] {
            self.create_user(enterprise, user)?;
        }

        let mut sim = Service::start(
            "roomlink-listener-sim",
            {
                let mut c = Command::new(self.bin.join("roomlink-listener-sim"));
                c.args(["--bind", "127.0.0.1:0", "--secret", &self.sim_secret])
                    .env("RUST_LOG", "warn");
                c
            },
            &self.logs.join("sim.log"),
        )?;
        let sim_addr = sim.wait_for(SETUP_TIMEOUT, procs::listening_line)?;
        let (roomlink, roomlink_addr) = self.start_roomlink("roomlink.log", &[])?;

        let token = self.token(&roomlink_addr, "bench-ops")?;
        let listener = http::request(
            &roomlink_addr,
            "POST",
            "/api/listenerservices",
            &[
                ("X-Access-Token", &token),
                ("Content-Type", "application/json"),
            ],
            format!(
                r#"{{"name": "bench simulator", "baseUrl": "http://{sim_addr}", "secret": "{}"}}"#,
                self.sim_secret
            )
            .as_bytes(),
            HTTP_TIMEOUT,
        )?
        .ok("register the simulator")?;
        let listener_id = listener.json_string("id")?;

        let mut csv = String::from(
            "id,name,ipaddress,port,listenerserviceid,controlprotocol,username,password\n",
        );
        for i in 0..ENDPOINTS {
            let _ = writeln!(
                csv,
                "\"\",\"Bench room {i:04}\",\"{}\",\"22\",\"{listener_id}\",\"TANDBERG_SSH\",\"admin\",\"room-secret-{i:04}\"",
                room_address(77, i)
            );
        }
        let loaded = http::request(
            &roomlink_addr,
            "PUT",
            "/api/endpoints/csv",
            &[("X-Access-Token", &token), ("Content-Type", "text/csv")],
            csv.as_bytes(),
            HTTP_TIMEOUT,
        )?
        .ok("load the endpoints")?;
        let endpoint_ids = ids(&loaded.text())?;
        if endpoint_ids.len() != ENDPOINTS {
            return Err(format!(
                "loading {ENDPOINTS} endpoints gave {} ids",
                endpoint_ids.len()
            ));
        }
        let csv_token = self.token(&roomlink_addr, "bench-csv-ops")?;
        let big_token = self.token(&roomlink_addr, "bench-big-ops")?;
        Ok(Setup {
            enterprise_id: self.enterprise_id("bench")?,
            csv_enterprise: self.enterprise_id("bench-csv")?,
            sql_enterprise: self.enterprise_id("bench-sql")?,
            big_enterprise: self.enterprise_id("bench-big")?,
            basic: http::basic("bench-ops", USER_PASSWORD),
            roomlink,
            roomlink_addr,
            _sim: sim,
            sim_addr,
            token,
            endpoint_ids,
            csv_token,
            big_token,
        })
    }
}
