//! The demo's two services: started in their own process group with their output in log
//! files, watched while the demo is set up, stopped (SIGTERM) on any error, and finally handed
//! to a `sh` supervisor that outlives this process.

use crate::http;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long each service may take to come up, and to stop after SIGTERM.
const START_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_TIMEOUT: Duration = Duration::from_secs(15);
/// For each readiness request.
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// The demo's roomlink: binary, configuration file and data directory.
pub(super) struct Roomlink {
    pub(super) bin: PathBuf,
    pub(super) config: PathBuf,
    pub(super) dir: PathBuf,
}

impl Roomlink {
    /// `roomlink --config FILE` in the demo directory, with no `ROOMLINK__*` from the caller's
    /// environment (they would override the demo's own configuration, e.g. its database).
    pub(super) fn command(&self) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .arg("--config")
            .arg(&self.config)
            .current_dir(&self.dir);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ROOMLINK__") {
                command.env_remove(key);
            }
        }
        command.env_remove("RUST_LOG");
        command
    }
}

/// Starts the listener simulator; its address once it accepts connections.
pub(super) fn start_simulator(
    services: &mut Services,
    bin: &Path,
    secret: &str,
    dir: &Path,
) -> Result<String, String> {
    let log = dir.join("listener-sim.log");
    let child = spawn(
        // The newest listener version (docs/listener-protocol.md, "Versions"): the demo shows
        // every command, the rooms' inventory and template settings included.
        Command::new(bin).args([
            "--bind",
            "127.0.0.1:0",
            "--secret",
            secret,
            "--version",
            "3.5.0",
        ]),
        dir,
        &log,
    )?;
    let index = services.add("roomlink-listener-sim", child);
    wait_for_sim(services, index, &log)
}

/// Starts `roomlink serve` and waits until it is ready at `api`.
pub(super) fn start_roomlink(
    services: &mut Services,
    roomlink: &Roomlink,
    api: &str,
) -> Result<(), String> {
    let log = roomlink.dir.join("roomlink.log");
    let mut serve = roomlink.command();
    serve.arg("serve");
    let child = spawn(&mut serve, &roomlink.dir, &log)?;
    let index = services.add("roomlink", child);
    wait_for_ready(services, index, api, &log)
}

/// Starts `roomlinkctl webhooks listen` on `bind`, checking signatures with `secret` (passed in
/// the environment, not on the command line, where `ps` would show it); what it receives goes
/// to `alerts.log`.
pub(super) fn start_alert_receiver(
    services: &mut Services,
    bin: &Path,
    bind: &str,
    secret: &str,
    dir: &Path,
) -> Result<(), String> {
    let log = dir.join("alerts.log");
    let child = spawn(
        Command::new(bin)
            .args(["webhooks", "listen", "--bind", bind])
            .env("ROOMLINKCTL_WEBHOOK_SECRET", secret),
        dir,
        &log,
    )?;
    let index = services.add("alert-receiver", child);
    // It says where it listens once it does.
    for _ in 0..100 {
        if std::fs::read_to_string(&log).is_ok_and(|t| t.contains("listening on")) {
            return Ok(());
        }
        services.check_alive(index, &log)?;
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Err(format!(
        "the webhook receiver did not start: {}",
        tail(&log, 5)
    ))
}

/// Starts a service in its own process group (so Ctrl-C reaches only the supervisor), with
/// stdout and stderr in `log`: files outlive this process, pipes would not.
fn spawn(command: &mut Command, dir: &Path, log: &Path) -> Result<Child, String> {
    let file = File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let copy = file
        .try_clone()
        .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(file))
        .stderr(Stdio::from(copy));
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    command
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", command.get_program()))
}

/// The started services, stopped (SIGTERM, then waited for) when dropped: an error during
/// the setup leaves nothing behind.
#[derive(Default)]
pub(super) struct Services(Vec<(&'static str, Child)>);

impl Services {
    fn add(&mut self, name: &'static str, child: Child) -> usize {
        self.0.push((name, child));
        self.0.len() - 1
    }

    /// `Err` with the log's tail when service `index` has exited.
    fn check_alive(&mut self, index: usize, log: &Path) -> Result<(), String> {
        let (name, child) = &mut self.0[index];
        match child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!(
                "{name} exited ({status}); the end of {}:\n{}",
                log.display(),
                tail(log, 15)
            )),
            Err(e) => Err(format!("cannot watch {name}: {e}")),
        }
    }

    pub(super) fn stop_all(&mut self) -> Result<(), String> {
        let mut failures = Vec::new();
        for (name, child) in self.0.iter_mut().rev() {
            if let Err(e) = stop(child) {
                failures.push(format!("{name}: {e}"));
            }
        }
        self.0.clear();
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("; "))
        }
    }
}

impl Drop for Services {
    fn drop(&mut self) {
        if let Err(e) = self.stop_all() {
            eprintln!("demo: {e}");
        }
    }
}

/// Whether `status` is that of a process the SIGTERM sent ended (one with no handler of its
/// own, such as `roomlinkctl webhooks listen`): stopped as asked.
fn ended_by_sigterm(status: std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        std::os::unix::process::ExitStatusExt::signal(&status) == Some(15)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        false
    }
}

/// SIGTERM, then up to [`STOP_TIMEOUT`] for a clean exit; SIGKILL after that.
fn stop(child: &mut Child) -> Result<(), String> {
    if child.try_wait().ok().flatten().is_some() {
        return Ok(());
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + STOP_TIMEOUT;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(status)) if status.success() || ended_by_sigterm(status) => return Ok(()),
            Ok(Some(status)) => return Err(format!("stopped with {status}")),
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    Err(format!(
        "did not stop within {}s of SIGTERM; killed",
        STOP_TIMEOUT.as_secs()
    ))
}

fn tail(log: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The simulator prints `listening on http://ADDR` once it accepts connections.
fn wait_for_sim(services: &mut Services, index: usize, log: &Path) -> Result<String, String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(address) = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("listening on http://"))
        {
            return Ok(address.trim().to_owned());
        }
        services.check_alive(index, log)?;
        if Instant::now() > deadline {
            return Err(format!(
                "the simulator did not start; see {}",
                log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `GET /readyz` answers 200 (migrated, database reachable).
fn wait_for_ready(
    services: &mut Services,
    index: usize,
    api: &str,
    log: &Path,
) -> Result<(), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if http::request(api, "GET", "/readyz", &[], b"", HTTP_TIMEOUT)
            .is_ok_and(|r| r.status == 200)
        {
            return Ok(());
        }
        services.check_alive(index, log)?;
        if Instant::now() > deadline {
            return Err(format!("roomlink did not get ready; see {}", log.display()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Replaces this process with `sh`, which keeps the services (its children now) running until
/// SIGINT, SIGTERM or SIGHUP, then sends them SIGTERM and waits. It also ends, non-zero, if
/// either stops by itself.
#[cfg(unix)]
pub(super) fn supervise(mut services: Services, dir: &Path) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let pids: Vec<String> = services.0.iter().map(|(_, c)| c.id().to_string()).collect();
    let names: Vec<&str> = services.0.iter().map(|(n, _)| *n).collect();
    let grace = (STOP_TIMEOUT.as_secs() * 10).to_string();
    eprintln!("demo: running; press Ctrl-C to stop");
    let error = Command::new("sh")
        .arg("-c")
        .arg(SUPERVISOR)
        .arg("roomlink-demo")
        .arg(dir)
        .arg(&grace)
        .arg(pids.join(" "))
        .arg(names.join(" "))
        .exec();
    // Only reached when `sh` could not start: stop the services here instead.
    let _ = services.stop_all();
    Err(format!("cannot start sh to supervise the demo: {error}"))
}

#[cfg(not(unix))]
pub(super) fn supervise(_services: Services, _dir: &Path) -> Result<(), String> {
    Err("the demo needs a Unix-like system".into())
}

/// `sh -c` script: $1 data directory, $2 tenths of a second to wait after SIGTERM,
/// $3 the service pids, $4 their names. The services are this shell's children by
/// inheritance, not its jobs, so `wait` cannot see them: a zombie counts as stopped.
const SUPERVISOR: &str = r#"
dir=$1 grace=$2 pids=$3 names=$4
alive() {
  if [ -r "/proc/$1/stat" ]; then
    read -r stat < "/proc/$1/stat" 2>/dev/null || return 1
    case ${stat##*") "} in Z*|X*) return 1 ;; esac
    return 0
  fi
  s=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  case $s in ''|Z*) return 1 ;; esac
}
any_alive() { for p in $pids; do alive "$p" && return 0; done; return 1; }
all_alive() { for p in $pids; do alive "$p" || return 1; done; return 0; }
stop() {
  trap '' INT TERM HUP
  echo >&2
  echo "demo: stopping $names (SIGTERM)" >&2
  kill -TERM $pids 2>/dev/null
  i=0
  while any_alive && [ "$i" -lt "$grace" ]; do sleep 0.1; i=$((i + 1)); done
  if any_alive; then
    echo "demo: still running after SIGTERM; killing" >&2
    kill -KILL $pids 2>/dev/null
  else
    echo "demo: stopped cleanly" >&2
  fi
  rm -f "$dir/demo.pid"
  echo "demo: the data (SQLite database, sealing key, roomlink.toml, logs) stays in $dir" >&2
  exit "$1"
}
trap 'stop 0' INT TERM HUP
while all_alive; do sleep 1 & wait $!; done
echo "demo: a service stopped by itself; see the logs in $dir" >&2
stop 1
"#;
