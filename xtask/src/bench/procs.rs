//! Child processes of the benchmark: every one is killed when its guard drops (also on an
//! error or a panic), and every wait has a deadline.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Where one bench runs: the repository, cargo's target directory, the bench's own scratch
/// directory `TARGET/bench/NAME` (emptied), and the load average (1, 5, 15 minutes) as it
/// started, for its report.
pub struct BenchDirs {
    pub root: PathBuf,
    pub target: PathBuf,
    pub dir: PathBuf,
    pub load: String,
}

impl BenchDirs {
    pub fn new(name: &str) -> Result<BenchDirs, String> {
        let load = load_average();
        let target = crate::target_dir();
        let dir = target.join("bench").join(name);
        fresh_dir(&dir)?;
        Ok(BenchDirs {
            root: crate::project_root(),
            target,
            dir,
            load,
        })
    }
}

/// The first three fields of `/proc/loadavg`; empty where it cannot be read.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// `dir`, emptied of an earlier run's files.
pub fn fresh_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// A long-running child whose standard output and error go to one log file.
pub struct Service {
    pub name: String,
    child: Child,
    pub log: PathBuf,
}

impl Service {
    /// Starts `command` with its output appended to `log`.
    pub fn start(name: &str, mut command: Command, log: &Path) -> Result<Service, String> {
        let out = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        Ok(Service {
            name: name.to_owned(),
            child,
            log: log.to_path_buf(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The log so far (lossy UTF-8).
    pub fn log_text(&self) -> String {
        std::fs::read(&self.log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    fn log_tail(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(8)..].join("\n")
    }

    /// Fails when the process has already ended.
    pub fn check_alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!(
                "{} exited ({status}); its log ends with:\n{}",
                self.name,
                self.log_tail()
            )),
            Err(e) => Err(format!("{}: {e}", self.name)),
        }
    }

    /// Waits until the log holds a line for which `find` gives a value, and returns it.
    pub fn wait_for<T>(
        &mut self,
        timeout: Duration,
        find: impl Fn(&str) -> Option<T>,
    ) -> Result<T, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(found) = self.log_text().lines().find_map(&find) {
                return Ok(found);
            }
            self.check_alive()?;
            if Instant::now() > deadline {
                return Err(format!(
                    "{} did not get ready within {timeout:?}; its log ends with:\n{}",
                    self.name,
                    self.log_tail()
                ));
            }
            sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the process to end by itself; kills it after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Result<ExitStatus, String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                self.stop();
                return Err(format!("{} did not finish within {timeout:?}", self.name));
            }
            sleep(Duration::from_millis(20));
        }
    }

    /// SIGINT (perf record writes its data on it); does not wait.
    pub fn interrupt(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// SIGTERM, a short grace period, then SIGKILL; always reaps the child.
    pub fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The address in a line `listening on http://ADDR`.
pub fn listening_line(line: &str) -> Option<String> {
    line.split("listening on http://")
        .nth(1)
        .map(|rest| rest.trim().to_owned())
}

/// A finished one-shot command.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Finished {
    /// The output, or an error naming `what` with its standard error.
    pub fn ok(self, what: &str) -> Result<Finished, String> {
        if self.status.success() {
            Ok(self)
        } else {
            Err(format!(
                "{what} failed ({}): {}",
                self.status,
                self.stderr.trim()
            ))
        }
    }
}

/// Runs `command` to completion, killing it after `timeout`. Output goes through files in
/// `scratch`, so a chatty command cannot block on a full pipe.
pub fn run(
    mut command: Command,
    stdin: Option<&Path>,
    timeout: Duration,
    scratch: &Path,
) -> Result<Finished, String> {
    let program = format!("{:?}", command.get_program());
    let out_path = scratch.join("command.out");
    let err_path = scratch.join("command.err");
    let out = File::create(&out_path).map_err(|e| e.to_string())?;
    let err = File::create(&err_path).map_err(|e| e.to_string())?;
    let input = match stdin {
        Some(path) => {
            Stdio::from(File::open(path).map_err(|e| format!("{}: {e}", path.display()))?)
        }
        None => Stdio::null(),
    };
    let started = Instant::now();
    let mut child = command
        .stdin(input)
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{program} did not finish within {timeout:?}"));
        }
        sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    let read = |p: &Path| {
        std::fs::read(p)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    Ok(Finished {
        status,
        stdout: read(&out_path),
        stderr: read(&err_path),
        elapsed,
    })
}

/// `VmRSS` and `VmHWM` of a process, in kB.
pub fn memory_kb(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// `roomlink ARGS` of a bench on its own SQLite database in `dir`, serving on `port` when it
/// serves, with none of the caller's `ROOMLINK__*`: JSON logs, no abuse limits (one client
/// address makes every request), no status polls (the benches time other things).
pub fn roomlink(bin: &Path, dir: &Path, port: u16, args: &[&str]) -> Command {
    let mut command = Command::new(bin);
    for (key, _) in std::env::vars() {
        if key.starts_with("ROOMLINK__") {
            command.env_remove(key);
        }
    }
    command
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .env(
            "ROOMLINK__DATABASE__URL",
            format!("sqlite://{}", dir.join("roomlink.db").display()),
        )
        .env("ROOMLINK__SERVER__BIND", format!("127.0.0.1:{port}"))
        .env("ROOMLINK__SERVER__SHUTDOWN_TIMEOUT_SECS", "2")
        .env("ROOMLINK__LOG__FORMAT", "json")
        .env("ROOMLINK__LIMITS__ADDRESS_RATE_PER_SEC", "0")
        .env("ROOMLINK__LIMITS__TOKEN_RATE_PER_SEC", "0")
        .env("ROOMLINK__LISTENER__STATUS_POLL_INTERVAL_MS", "86400000");
    command
}

/// Starts `roomlink serve` as [`roomlink`] builds it, with `settings` on top, logging to
/// `dir/log`, and waits up to 60 s for `/readyz`: the server and its address.
pub fn serve_roomlink(
    bin: &Path,
    dir: &Path,
    settings: &[(&str, String)],
    log: &str,
) -> Result<(Service, String), String> {
    let port = super::free_port()?;
    let mut command = roomlink(bin, dir, port, &["serve"]);
    for (key, value) in settings {
        command.env(key, value);
    }
    let mut server = Service::start("roomlink", command, &dir.join(log))?;
    let address = format!("127.0.0.1:{port}");
    let ready_by = Instant::now() + Duration::from_secs(60);
    while !crate::http::request(&address, "GET", "/readyz", &[], b"", Duration::from_secs(5))
        .is_ok_and(|r| r.status == 200)
    {
        server.check_alive()?;
        if Instant::now() > ready_by {
            return Err("roomlink did not answer /readyz within 60 s".into());
        }
        sleep(Duration::from_millis(100));
    }
    Ok((server, address))
}

/// `roomlink ARGS` (an `admin` command) on the bench's database, which must succeed.
pub fn admin(bin: &Path, dir: &Path, args: &[&str], stdin: Option<&Path>) -> Result<(), String> {
    admin_with(bin, dir, &[], args, stdin)
}

/// [`admin`] with `settings` on top (another database, for one).
pub fn admin_with(
    bin: &Path,
    dir: &Path,
    settings: &[(&str, String)],
    args: &[&str],
    stdin: Option<&Path>,
) -> Result<(), String> {
    let mut command = roomlink(bin, dir, 0, args);
    command.envs(settings.iter().map(|(k, v)| (*k, v.as_str())));
    run(command, stdin, Duration::from_secs(60), dir)?
        .ok(&format!("roomlink {}", args.join(" ")))?;
    Ok(())
}

/// The enterprise `create` makes (`roomlink admin enterprise create ...`) and its
/// ROLE_READWRITE user `username` with `password`, through [`admin_with`].
pub fn enterprise_and_user(
    bin: &Path,
    dir: &Path,
    settings: &[(&str, String)],
    create: &[&str],
    username: &str,
    password: &str,
) -> Result<(), String> {
    let mut args = vec!["admin", "enterprise", "create"];
    args.extend_from_slice(create);
    admin_with(bin, dir, settings, &args, None)?;
    let enterprise = create.first().ok_or("no enterprise name")?;
    let password_file = dir.join("password.txt");
    std::fs::write(&password_file, format!("{password}\n")).map_err(|e| e.to_string())?;
    admin_with(
        bin,
        dir,
        settings,
        &[
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
        ],
        Some(&password_file),
    )
}

/// A new access token of `username` (Basic credentials) from the roomlink at `address`.
pub fn access_token(address: &str, username: &str, password: &str) -> Result<String, String> {
    crate::http::request(
        address,
        "POST",
        "/api/auth/accesstokens",
        &[("Authorization", &crate::http::basic(username, password))],
        b"",
        Duration::from_secs(30),
    )?
    .ok("create an access token")?
    .json_string("accessToken")
}
