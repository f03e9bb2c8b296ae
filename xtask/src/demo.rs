//! `cargo xtask demo [--release] [--exit-after-setup]`: a running roomlink to play with.
//!
//! Builds `roomlink` and `roomlink-listener-sim`, starts the simulator and the service (SQLite in
//! `target/demo`, with its own `roomlink.toml`), creates an enterprise, a read-write service user,
//! a token, a listener service and a few endpoints behind it, and prints commands to try. Both
//! processes then run until Ctrl-C, when they get SIGTERM and are waited for.
//!
//! Ctrl-C reaches the whole foreground process group, and a std-only program cannot catch it. So
//! the services run in their own process group and, once set up, this process replaces itself
//! with a small `sh` supervisor (same pid, still their parent) that traps the signal, sends them
//! SIGTERM and reports where the data lives.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ENTERPRISE: &str = "demo";
const USERNAME: &str = "demo-ops";
/// How long each service may take to come up, and to stop after SIGTERM.
const START_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_TIMEOUT: Duration = Duration::from_secs(15);
/// `server.shutdown_timeout_secs` of the demo service: in-flight requests are short here.
const SHUTDOWN_GRACE_SECS: u64 = 5;
/// The demo's room systems: name and address (the simulator never connects to them).
const ROOMS: [(&str, &str); 3] = [
    ("Board room", "127.77.0.10"),
    ("Huddle room", "127.77.0.11"),
    ("Training room", "127.77.0.12"),
];

struct Options {
    release: bool,
    exit_after_setup: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        release: false,
        exit_after_setup: false,
    };
    for arg in args {
        match arg.as_str() {
            "--release" => options.release = true,
            "--exit-after-setup" => options.exit_after_setup = true,
            other => {
                return Err(format!(
                    "demo: unknown argument {other}\n\
                     usage: cargo xtask demo [--release] [--exit-after-setup]"
                ));
            }
        }
    }
    Ok(options)
}

/// Runs the demo; `args` are the arguments after `demo`.
pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    if !cfg!(unix) {
        return Err("the demo needs a Unix-like system (signals, process groups, sh)".into());
    }
    let profile = if options.release { "release" } else { "debug" };
    let mut build = vec!["build", "-p", "roomlink", "-p", "roomlink-listener-sim"];
    if options.release {
        build.push("--release");
    }
    crate::cargo(&build)?;

    let target = target_dir();
    let bin = target.join(profile);
    let roomlink_bin = bin.join("roomlink");
    let sim_bin = bin.join("roomlink-listener-sim");
    let dir = target.join("demo");
    refuse_if_running(&dir)?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::write(dir.join("demo.pid"), std::process::id().to_string())
        .map_err(|e| format!("cannot write the pid file: {e}"))?;

    let port = free_port()?;
    let config = dir.join("roomlink.toml");
    std::fs::write(&config, config_file(&dir, port))
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    let password = random_hex(12);
    let listener_secret = random_hex(24);

    let mut services = Services::default();
    eprintln!("demo: starting the listener simulator");
    let sim_log = dir.join("listener-sim.log");
    let sim = spawn(
        Command::new(&sim_bin).args(["--bind", "127.0.0.1:0", "--secret", &listener_secret]),
        &dir,
        &sim_log,
    )?;
    let sim = services.add("roomlink-listener-sim", sim);
    let sim_addr = wait_for_sim(&mut services, sim, &sim_log)?;

    eprintln!("demo: creating enterprise {ENTERPRISE} and service user {USERNAME}");
    admin(
        &roomlink_bin,
        &config,
        &dir,
        &["admin", "enterprise", "create", ENTERPRISE],
        "",
    )?;
    admin(
        &roomlink_bin,
        &config,
        &dir,
        &[
            "admin",
            "user",
            "create",
            "--enterprise",
            ENTERPRISE,
            "--username",
            USERNAME,
            "--role",
            "ROLE_READWRITE",
            "--password-stdin",
        ],
        &format!("{password}\n"),
    )?;

    eprintln!("demo: starting roomlink");
    let roomlink_log = dir.join("roomlink.log");
    let mut serve = roomlink(&roomlink_bin, &config, &dir);
    serve.arg("serve");
    let roomlink_child = spawn(&mut serve, &dir, &roomlink_log)?;
    let roomlink_index = services.add("roomlink", roomlink_child);
    let api = format!("127.0.0.1:{port}");
    wait_for_ready(&mut services, roomlink_index, &api, &roomlink_log)?;

    eprintln!("demo: token, listener service and endpoints");
    let token = {
        let auth = format!(
            "Basic {}",
            crate::base64::encode(format!("{USERNAME}:{password}").as_bytes())
        );
        let answer = expect_ok(http(
            &api,
            "POST",
            "/api/auth/accesstokens",
            &[("Authorization", &auth)],
            None,
        )?)?;
        string_field(&answer, "accessToken")?
    };
    let headers = [("X-Access-Token", token.as_str())];
    let listener_body = format!(
        "{{\"name\": \"Demo listener\", \"baseUrl\": \"http://{sim_addr}\", \"secret\": \"{listener_secret}\"}}"
    );
    let listener_id = string_field(
        &expect_ok(http(
            &api,
            "POST",
            "/api/listenerservices",
            &headers,
            Some(&listener_body),
        )?)?,
        "id",
    )?;
    let mut rooms = Vec::new();
    for (name, address) in ROOMS {
        let body = format!(
            "{{\"name\": \"{name}\", \"ipAddress\": \"{address}\", \"controlProtocol\": \"TANDBERG_SSH\", \
             \"listenerServiceId\": \"{listener_id}\", \"username\": \"admin\", \"password\": \"room-secret\"}}"
        );
        let created = expect_ok(http(&api, "POST", "/api/endpoints", &headers, Some(&body))?)?;
        rooms.push(Room {
            name,
            address,
            id: string_field(&created, "id")?,
        });
    }
    let docs = http(&api, "GET", "/api/docs/", &[], None)
        .map(|r| r.status == 200)
        .unwrap_or(false);

    let demo = Demo {
        api,
        sim: sim_addr,
        token,
        password,
        listener_id,
        rooms,
        docs,
        dir: dir.clone(),
        roomlink_bin,
        config,
    };
    print_next_steps(&demo).map_err(|e| format!("cannot write to stdout: {e}"))?;

    if options.exit_after_setup {
        eprintln!("demo: --exit-after-setup: stopping both processes (SIGTERM)");
        services.stop_all()?;
        let _ = std::fs::remove_file(dir.join("demo.pid"));
        eprintln!("demo: stopped; the data stays in {}", dir.display());
        return Ok(());
    }
    supervise(services, &dir)
}

struct Room {
    name: &'static str,
    address: &'static str,
    id: String,
}

struct Demo {
    api: String,
    sim: String,
    token: String,
    password: String,
    listener_id: String,
    rooms: Vec<Room>,
    docs: bool,
    dir: PathBuf,
    roomlink_bin: PathBuf,
    config: PathBuf,
}

#[allow(clippy::print_stdout)] // the demo's one output for the person running it
fn print_next_steps(d: &Demo) -> std::fmt::Result {
    let mut out = String::new();
    let (api, sim, token) = (&d.api, &d.sim, &d.token);
    let auth = format!("-H 'X-Access-Token: {token}'");
    let dir = d.dir.display();
    writeln!(out)?;
    writeln!(out, "roomlink demo is set up")?;
    writeln!(out)?;
    writeln!(
        out,
        "  roomlink          http://{api}   (log {dir}/roomlink.log)"
    )?;
    writeln!(
        out,
        "  listener sim      http://{sim}   (log {dir}/listener-sim.log)"
    )?;
    writeln!(out, "  enterprise        {ENTERPRISE}")?;
    writeln!(
        out,
        "  service user      {USERNAME} / {} (ROLE_READWRITE)",
        d.password
    )?;
    writeln!(out, "  access token      {token}")?;
    writeln!(out, "  listener service  {}", d.listener_id)?;
    for (i, room) in d.rooms.iter().enumerate() {
        let label = if i == 0 { "endpoints" } else { "" };
        writeln!(
            out,
            "  {label:<17} {:<14} {:<12} {}",
            room.name, room.address, room.id
        )?;
    }
    let room = &d.rooms[0];
    let endpoint = format!("http://{api}/api/endpoints/{}", room.id);
    writeln!(out)?;
    writeln!(out, "Try, in another terminal:")?;
    writeln!(out)?;
    writeln!(out, "# the endpoints")?;
    writeln!(out, "curl -s {auth} http://{api}/api/endpoints")?;
    writeln!(
        out,
        "# {} joins a meeting (204), then its status",
        room.name
    )?;
    writeln!(
        out,
        "curl -s -X POST {auth} '{endpoint}/join?meetingid=123456789&passcode=4321' -w '%{{http_code}}\\n'"
    )?;
    writeln!(out, "curl -s {auth} {endpoint}/status")?;
    writeln!(out, "# what the simulated room system saw")?;
    writeln!(out, "curl -s http://{sim}/sim/endpoints/{}", room.address)?;
    writeln!(out, "# mute, hang up, every endpoint's status")?;
    writeln!(
        out,
        "curl -s -X POST {auth} {endpoint}/mutemicrophone -w '%{{http_code}}\\n'"
    )?;
    writeln!(
        out,
        "curl -s -X POST {auth} {endpoint}/hangup -w '%{{http_code}}\\n'"
    )?;
    writeln!(out, "curl -s {auth} http://{api}/api/endpoints/status")?;
    writeln!(
        out,
        "# a fault: the room rejects the credentials, so the next join answers AuthenticationFailed"
    )?;
    writeln!(
        out,
        "curl -s -X PUT -H 'Content-Type: application/json' -d '{{\"fault\": \"bad_credentials\"}}' http://{sim}/sim/endpoints/{}/fault",
        room.address
    )?;
    writeln!(out, "curl -s -X POST {auth} {endpoint}/join")?;
    writeln!(
        out,
        "curl -s -X DELETE http://{sim}/sim/endpoints/{}/fault",
        room.address
    )?;
    writeln!(out, "# a new token (valid two weeks)")?;
    writeln!(
        out,
        "curl -s -X POST -u {USERNAME}:{} http://{api}/api/auth/accesstokens",
        d.password
    )?;
    if d.docs {
        writeln!(out, "# the API reference: open http://{api}/api/docs/")?;
    } else {
        writeln!(
            out,
            "# (no API reference at http://{api}/api/docs/ in this build yet)"
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Data (SQLite database, sealing key, config, logs): {dir}"
    )?;
    writeln!(
        out,
        "Serve it again later: {} --config {} serve",
        d.roomlink_bin.display(),
        d.config.display()
    )?;
    print!("{out}");
    let _ = std::io::stdout().flush();
    Ok(())
}

/// The demo service's own configuration (the environment's `ROOMLINK__*` are removed).
fn config_file(dir: &Path, port: u16) -> String {
    format!(
        "# Written by `cargo xtask demo`; every key is in docs/operations.md.\n\
         [server]\n\
         bind = \"127.0.0.1:{port}\"\n\
         workers = 2\n\
         shutdown_timeout_secs = {SHUTDOWN_GRACE_SECS}\n\
         \n\
         [database]\n\
         url = \"sqlite://{db}\"\n\
         \n\
         [security]\n\
         service_key_file = \"{key}\"\n\
         \n\
         [listener]\n\
         command_timeout_ms = 5000\n\
         status_poll_interval_ms = 5000\n\
         \n\
         [log]\n\
         format = \"human\"\n\
         level = \"info\"\n",
        db = dir.join("roomlink.db").display(),
        key = dir.join("roomlink.key").display(),
    )
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => crate::project_root().join(dir),
        None => crate::project_root().join("target"),
    }
}

/// A previous demo that still runs owns the directory: do not wipe its database.
fn refuse_if_running(dir: &Path) -> Result<(), String> {
    let Ok(pid) = std::fs::read_to_string(dir.join("demo.pid")) else {
        return Ok(());
    };
    let pid = pid.trim();
    let alive = Command::new("kill")
        .args(["-0", pid])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if alive && pid != std::process::id().to_string() {
        return Err(format!(
            "another demo seems to run (pid {pid}, {}); stop it first",
            dir.join("demo.pid").display()
        ));
    }
    Ok(())
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

/// Hex of `bytes` random bytes from the system's generator.
fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    let read = File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut buffer));
    if read.is_err() {
        // No /dev/urandom: std's randomly seeded hasher is enough for a local demo.
        use std::hash::{BuildHasher, Hasher};
        let state = std::collections::hash_map::RandomState::new();
        for (i, b) in buffer.iter_mut().enumerate() {
            let mut hasher = state.build_hasher();
            hasher.write_usize(i);
            *b = hasher.finish().to_le_bytes()[0];
        }
    }
    buffer.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `roomlink --config FILE` in the demo directory, with no `ROOMLINK__*` from the caller's
/// environment (they would override the demo's own configuration, e.g. its database).
fn roomlink(bin: &Path, config: &Path, dir: &Path) -> Command {
    let mut command = Command::new(bin);
    command.arg("--config").arg(config).current_dir(dir);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("ROOMLINK__") {
            command.env_remove(key);
        }
    }
    command.env_remove("RUST_LOG");
    command
}

fn admin(bin: &Path, config: &Path, dir: &Path, args: &[&str], stdin: &str) -> Result<(), String> {
    let mut child = roomlink(bin, config, dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    if let Some(mut input) = child.stdin.take() {
        input
            .write_all(stdin.as_bytes())
            .map_err(|e| format!("cannot write to roomlink: {e}"))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("roomlink {}: {e}", args.join(" ")))?;
    if !output.status.success() {
        return Err(format!(
            "`roomlink {}` failed: {}",
            args[..3.min(args.len())].join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    eprintln!("  {}", String::from_utf8_lossy(&output.stdout).trim());
    Ok(())
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
struct Services(Vec<(&'static str, Child)>);

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

    fn stop_all(&mut self) -> Result<(), String> {
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
            Ok(Some(status)) if status.success() => return Ok(()),
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
        if http(api, "GET", "/readyz", &[], None).is_ok_and(|r| r.status == 200) {
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
fn supervise(mut services: Services, dir: &Path) -> Result<(), String> {
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
fn supervise(_services: Services, _dir: &Path) -> Result<(), String> {
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

// ---- a small HTTP/1.1 client: enough for the demo's own calls ----

struct Response {
    status: u16,
    body: String,
}

fn http(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<Response, String> {
    let socket: SocketAddr = address
        .parse()
        .map_err(|e| format!("bad address {address}: {e}"))?;
    let mut stream = TcpStream::connect_timeout(&socket, Duration::from_secs(5))
        .map_err(|e| format!("{method} {path}: {e}"))?;
    let io_timeout = Some(Duration::from_secs(30));
    stream
        .set_read_timeout(io_timeout)
        .and_then(|()| stream.set_write_timeout(io_timeout))
        .map_err(|e| e.to_string())?;
    let mut request =
        format!("{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for (name, value) in headers {
        let _ = write!(request, "{name}: {value}\r\n");
    }
    if let Some(body) = body {
        let _ = write!(
            request,
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
    }
    request.push_str("\r\n");
    request.push_str(body.unwrap_or(""));
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("{method} {path}: {e}"))?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .map_err(|e| format!("{method} {path}: {e}"))?;
    parse_response(&raw).ok_or_else(|| format!("{method} {path}: not an HTTP response"))
}

fn parse_response(raw: &[u8]) -> Option<Response> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let rest = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let chunked = lines.any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        dechunk(rest)?
    } else {
        rest.to_vec()
    };
    Some(Response {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&rest[..end]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

fn expect_ok(response: Response) -> Result<String, String> {
    if response.status == 200 {
        Ok(response.body)
    } else {
        Err(format!(
            "roomlink answered {}: {}",
            response.status, response.body
        ))
    }
}

/// The string value of `key` in a JSON object's top level.
fn string_field(json: &str, key: &str) -> Result<String, String> {
    let mut parser = Json {
        text: json.as_bytes(),
        at: 0,
    };
    parser
        .top_level_string(key)
        .ok_or_else(|| format!("no string \"{key}\" in the answer: {json}"))
}

/// Just enough JSON: walks a top-level object, skipping values other than the one wanted.
struct Json<'a> {
    text: &'a [u8],
    at: usize,
}

impl Json<'_> {
    fn top_level_string(&mut self, key: &str) -> Option<String> {
        self.expect(b'{')?;
        if self.peek()? == b'}' {
            return None;
        }
        loop {
            let name = self.string()?;
            self.expect(b':')?;
            if name == key && self.peek()? == b'"' {
                return self.string();
            }
            self.skip_value()?;
            match self.next()? {
                b',' => {}
                _ => return None,
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        while self.text.get(self.at)?.is_ascii_whitespace() {
            self.at += 1;
        }
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }

    fn string(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let b = *self.text.get(self.at)?;
            self.at += 1;
            match b {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let escaped = *self.text.get(self.at)?;
                    self.at += 1;
                    match escaped {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = std::str::from_utf8(self.text.get(self.at..self.at + 4)?);
                            let code = u32::from_str_radix(hex.ok()?, 16).ok()?;
                            self.at += 4;
                            let c = char::from_u32(code).unwrap_or('\u{fffd}');
                            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                other => out.push(other),
            }
        }
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.at += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
            }
            _ => {
                while !matches!(self.peek()?, b',' | b'}' | b']') {
                    self.at += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_top_level_strings_only() {
        let json = r#"{"nested": {"id": "inner"}, "list": [1, {"id": "x"}, "a\"b"],
                       "n": -1.5e3, "ok": true, "none": null, "id": "outer\u0041"}"#;
        assert_eq!(string_field(json, "id").as_deref(), Ok("outerA"));
        assert!(string_field(json, "n").is_err(), "not a string");
        assert!(string_field(json, "missing").is_err());
        assert!(string_field("[]", "id").is_err());
        assert!(string_field("{}", "id").is_err());
    }

    #[test]
    fn reads_plain_and_chunked_responses() {
        let plain = parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}").unwrap();
        assert_eq!((plain.status, plain.body.as_str()), (200, "{}"));
        let chunked = parse_response(
            b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!((chunked.status, chunked.body.as_str()), (201, "abcde"));
        assert!(parse_response(b"garbage").is_none());
    }

    #[test]
    fn arguments() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let o = parse(&args(&["--release", "--exit-after-setup"])).unwrap();
        assert!(o.release && o.exit_after_setup);
        let o = parse(&args(&[])).unwrap();
        assert!(!o.release && !o.exit_after_setup);
        assert!(parse(&args(&["--nope"])).is_err());
    }
}
