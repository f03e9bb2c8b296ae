//! Fault tests (issue #8): the service under failures of what it depends on.
//!
//! - `postgres_restart_under_write_load`: a throwaway PostgreSQL cluster of the test's own is
//!   stopped and started again while writers create endpoints. Writes during the outage get
//!   `StorageUnavailable` within a bound, every acknowledged write survives, and roomlink
//!   recovers without a restart of its own.
//! - `misbehaving_listeners_fail_within_the_command_timeout`: listeners that hang, close the
//!   connection or answer garbage (raw TCP servers here, and the simulator's fault modes) make
//!   commands fail with their catalog error within the command timeout, while other requests go
//!   on unslowed.
//! - `sigkill_during_csv_upload_*`: the real binary killed with SIGKILL while a CSV upload of
//!   thousands of rows is on its way in or being applied; after a restart the enterprise has all
//!   of the rows or none.
//!
//! The tests take a lock so that they do not compete with each other for the two cores; each is
//! bounded by a timeout.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

#[path = "api/helpers.rs"]
#[allow(dead_code)] // shared with the API tests; this target uses part of it
mod helpers;
mod support;

use helpers::{Backend, TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use roomlink_listener_sim::SimConfig;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use support::service::{Service, sigkill, token};

/// One fault test at a time: they measure bounds and kill processes.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Says why a test did not run, where the harness does not hide it.
fn skipped(test: &str, reason: &str) {
    let _ = writeln!(std::io::stderr(), "\n*** SKIPPED: {test}: {reason} ***\n");
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL restarted under write load
// ---------------------------------------------------------------------------------------------

/// A PostgreSQL cluster of this test alone, in a temporary directory, on a free loopback port;
/// run as the `postgres` OS user when the test runs as root. Stopped when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    /// `runuser -u postgres --` in front of every command (the tests run as root).
    as_postgres: bool,
}

impl Cluster {
    /// A started cluster, or why there cannot be one here.
    fn start() -> Result<Cluster, String> {
        let bin = postgres_bin_dir().ok_or("no PostgreSQL server binaries (initdb, pg_ctl)")?;
        let root = command_output("id", &["-u"]).is_some_and(|uid| uid.trim() == "0");
        if root && command_output("id", &["-u", "postgres"]).is_none() {
            return Err("running as root and there is no `postgres` OS user".to_owned());
        }
        let dir = tempfile::Builder::new()
            .prefix("roomlink-pg-")
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        if root {
            let chowned = Command::new("chown")
                .args(["postgres:", &dir.path().display().to_string()])
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !chowned.success() {
                return Err("cannot give the temp dir to the postgres user".to_owned());
            }
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let cluster = Cluster {
            dir,
            bin,
            port,
            as_postgres: root,
        };
        let data = cluster.data_dir();
        let init = cluster.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        if !init.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&init.stderr)
            ));
        }
        cluster.pg_ctl_start()?;
        Ok(cluster)
    }

    fn data_dir(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        let program = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        };
        command
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("a PostgreSQL tool runs")
    }

    fn pg_ctl_start(&self) -> Result<(), String> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=40 -c shared_buffers=16MB",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log").display().to_string();
        let data = self.data_dir();
        let started = self.run(
            "pg_ctl",
            &[
                "-D", &data, "-l", &log, "-o", &options, "-w", "-t", "60", "start",
            ],
        );
        if started.status.success() {
            Ok(())
        } else {
            Err(format!(
                "pg_ctl start failed: {}{}",
                String::from_utf8_lossy(&started.stdout),
                std::fs::read_to_string(&log).unwrap_or_default()
            ))
        }
    }

    fn pg_ctl_stop(&self, mode: &str) -> bool {
        let data = self.data_dir();
        self.run(
            "pg_ctl",
            &["-D", &data, "-m", mode, "-w", "-t", "60", "stop"],
        )
        .status
        .success()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.pg_ctl_stop("immediate");
    }
}

/// The newest `/usr/lib/postgresql/<version>/bin` with initdb and pg_ctl, or their directory
/// on the PATH.
fn postgres_bin_dir() -> Option<PathBuf> {
    let has_tools = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, bin)| has_tools(bin))
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|dir| has_tools(dir))
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What one write saw.
#[derive(Debug)]
struct WriteOutcome {
    name: String,
    started: Instant,
    finished: Instant,
    /// The status and catalog name, or what went wrong below HTTP (a hang or a dropped
    /// connection).
    answer: Result<(u16, Value), String>,
}

/// How long one write may take even while the database is away: the pool's checkout timeout
/// (set to 1 s below) plus generous slack for a loaded machine.
const WRITE_BOUND: Duration = Duration::from_secs(15);

async fn writer(
    app: Arc<TestApp>,
    token: String,
    writer: usize,
    stop: Arc<AtomicBool>,
) -> Vec<WriteOutcome> {
    let mut writes = Vec::new();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let name = format!("w{writer}-{i}");
        i += 1;
        let started = Instant::now();
        let request = app
            .with_token(Method::POST, "/api/endpoints", &token)
            .json(&json!({"name": name, "ipAddress": "127.77.0.1", "password": "room-pw"}))
            .send();
        let answer = match tokio::time::timeout(WRITE_BOUND, request).await {
            Err(_) => Err(format!("no answer within {WRITE_BOUND:?}")),
            Ok(Err(e)) => Err(format!("transport: {e}")),
            Ok(Ok(response)) => {
                let (status, body) = json(response).await;
                Ok((status.as_u16(), body))
            }
        };
        writes.push(WriteOutcome {
            name,
            started,
            finished: Instant::now(),
            answer,
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    writes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restart_under_write_load() {
    let _serial = SERIAL.lock().await;
    let cluster = match tokio::task::spawn_blocking(Cluster::start).await.unwrap() {
        Ok(cluster) => Arc::new(cluster),
        Err(reason) => return skipped("postgres_restart_under_write_load", &reason),
    };
    tokio::time::timeout(Duration::from_secs(240), restart_under_load(cluster))
        .await
        .expect("the test finishes within its bound");
}

async fn restart_under_load(cluster: Arc<Cluster>) {
    let url = cluster.url();
    let app = TestApp::spawn_with(
        Backend::Sqlite,
        &[
            ("ROOMLINK__DATABASE__URL", url.as_str()),
            ("ROOMLINK__DATABASE__CONNECT_TIMEOUT_MS", "1000"),
            ("ROOMLINK__DATABASE__MAX_CONNECTIONS", "8"),
            // Refusals come fast while the database is away; the abuse limits are not tested here.
            ("ROOMLINK__LIMITS__TOKEN_RATE_PER_SEC", "0"),
            ("ROOMLINK__LIMITS__ADDRESS_RATE_PER_SEC", "0"),
        ],
    )
    .await
    .expect("roomlink on the throwaway cluster");
    let app = Arc::new(app);
    let (token, _) = app.tenant("acme").await;

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| tokio::spawn(writer(app.clone(), token.clone(), w, stop.clone())))
        .collect();

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let stopping = Instant::now();
    let c = cluster.clone();
    assert!(
        tokio::task::spawn_blocking(move || c.pg_ctl_stop("fast"))
            .await
            .unwrap(),
        "pg_ctl stop"
    );
    let down = Instant::now();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let starting = Instant::now();
    let c = cluster.clone();
    tokio::task::spawn_blocking(move || c.pg_ctl_start())
        .await
        .unwrap()
        .expect("the cluster starts again");
    let up = Instant::now();
    tokio::time::sleep(Duration::from_millis(3000)).await;
    stop.store(true, Ordering::Relaxed);

    let mut writes = Vec::new();
    for w in writers {
        writes.extend(w.await.unwrap());
    }

    // Every write was answered, in time, with a success or StorageUnavailable.
    let mut acknowledged = Vec::new();
    let mut refused = 0;
    for write in &writes {
        let (status, body) = match &write.answer {
            Ok(answer) => answer,
            Err(e) => panic!("{}: {e}", write.name),
        };
        assert!(
            write.finished - write.started < WRITE_BOUND,
            "{}",
            write.name
        );
        match status {
            200 => acknowledged.push(write.name.as_str()),
            _ => {
                assert_error(
                    StatusCode::from_u16(*status).unwrap(),
                    body,
                    503,
                    "StorageUnavailable",
                    1900000007,
                );
                refused += 1;
            }
        }
    }
    // Writes made while the server was down failed; there were some.
    let during: Vec<_> = writes
        .iter()
        .filter(|w| w.started >= down && w.finished <= starting)
        .collect();
    assert!(
        !during.is_empty(),
        "no write was made during the outage: {writes:?}"
    );
    for w in &during {
        assert!(
            matches!(w.answer, Ok((503, _))),
            "{} succeeded with the database down",
            w.name
        );
    }
    // roomlink recovered by itself: writes made a moment after the server was back succeed.
    let after: Vec<_> = writes
        .iter()
        .filter(|w| w.started >= up + Duration::from_millis(500))
        .collect();
    assert!(!after.is_empty(), "no write after the restart");
    for w in &after {
        assert!(
            matches!(w.answer, Ok((200, _))),
            "{} failed after the restart: {:?}",
            w.name,
            w.answer
        );
    }
    let fresh = app
        .create_endpoint(&token, json!({"name": "after-restart", "password": "pw"}))
        .await;
    assert_eq!(fresh["name"], "after-restart");

    // Every acknowledged write is stored, once.
    let (status, list) = app.call(Method::GET, "/api/endpoints", &token, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let stored: HashSet<&str> = names.iter().copied().collect();
    assert_eq!(stored.len(), names.len(), "a write was stored twice");
    for name in &acknowledged {
        assert!(stored.contains(name), "acknowledged write {name} was lost");
    }
    let _ = writeln!(
        std::io::stderr(),
        "postgres restart: {} writes, {} acknowledged, {} StorageUnavailable ({} while down), \
         stop took {:?}, outage {:?}",
        writes.len(),
        acknowledged.len(),
        refused,
        during.len(),
        down - stopping,
        up - stopping
    );
}

// ---------------------------------------------------------------------------------------------
// Misbehaving listeners
// ---------------------------------------------------------------------------------------------

/// The command timeout of the listener-fault test.
const COMMAND_TIMEOUT: Duration = Duration::from_millis(1500);

/// The catalog rows the listener faults answer (docs/listener-protocol.md).
const TIMED_OUT: (u16, &str, i64) = (504, "CommandTimedOut", 1331991805);
const MESSAGING: (u16, &str, i64) = (502, "MessagingException", 72013363);
const OFFLINE: (u16, &str, i64) = (503, "ListenerOffline", 208581637);

/// How a raw listener misbehaves on commands (it answers `/v1/info` correctly).
#[derive(Debug, Clone, Copy)]
enum Misbehaviour {
    /// Reads the command and never answers.
    Hang,
    /// Closes the connection without answering.
    Close,
    /// Answers 200 with a body that is not JSON.
    GarbageBody,
    /// Answers bytes that are not HTTP at all.
    GarbageBytes,
}

/// A listener on loopback that misbehaves; stops accepting when dropped.
struct RawListener {
    base_url: String,
    stop: Arc<AtomicBool>,
}

impl Drop for RawListener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn raw_listener(mode: Misbehaviour) -> RawListener {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    std::thread::spawn(move || {
        while !stopped.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) => {
                    let stopped = stopped.clone();
                    std::thread::spawn(move || serve_raw(stream, mode, &stopped));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    RawListener { base_url, stop }
}

fn serve_raw(stream: TcpStream, mode: Misbehaviour, stop: &AtomicBool) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    // The rest of the head; the body (if any) is never needed.
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let mut stream = reader.into_inner();
    if request_line.starts_with("GET /v1/info ") {
        let info = json!({
            "version": "2.25.0", "protocol": 1,
            "commands": ["join", "hangup", "senddtmf", "mutemicrophone", "unmutemicrophone", "status"],
            "controlProtocols": ["TANDBERG_SSH", "TANDBERG_HTTP", "POLYCOM_HTTP_HDX", "MESH"],
            "capabilities": ["JOIN", "HANGUP", "STATUS"]
        })
        .to_string();
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Listener-Version: 2.25.0\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{info}",
            info.len()
        );
        return;
    }
    match mode {
        Misbehaviour::Hang => {
            // Hold the connection, answering nothing, until the client gives up.
            let mut sink = [0u8; 1024];
            while !stop.load(Ordering::Relaxed) {
                match stream.read(&mut sink) {
                    Ok(0) => return,
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(_) => return,
                }
            }
        }
        Misbehaviour::Close => drop(stream),
        Misbehaviour::GarbageBody => {
            let body = "<<<this is not JSON>>>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Listener-Version: 2.25.0\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Misbehaviour::GarbageBytes => {
            let _ = stream.write_all(b"\x00\xffSSH-2.0-garbage\r\n\x13\x37 not http\r\n\r\n");
        }
    }
}

/// A failing join's outcome.
struct Faulty {
    what: String,
    expected: (u16, &'static str, i64),
    status: StatusCode,
    body: Value,
    elapsed: Duration,
    finished: Instant,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_listeners_fail_within_the_command_timeout() {
    let _serial = SERIAL.lock().await;
    tokio::time::timeout(Duration::from_secs(120), misbehaving_listeners())
        .await
        .expect("the test finishes within its bound");
}

async fn misbehaving_listeners() {
    let timeout_ms = COMMAND_TIMEOUT.as_millis().to_string();
    let app = Arc::new(
        TestApp::spawn_with(
            Backend::Sqlite,
            &[(
                "ROOMLINK__LISTENER__COMMAND_TIMEOUT_MS",
                timeout_ms.as_str(),
            )],
        )
        .await
        .unwrap(),
    );
    let (token, _) = app.tenant("acme").await;
    let listener = |name: &str, base_url: &str| {
        let (app, token) = (app.clone(), token.clone());
        let body = json!({"name": name, "baseUrl": base_url});
        async move {
            let (status, created) = app
                .call(Method::POST, "/api/listenerservices", &token, Some(body))
                .await;
            assert_eq!(status, StatusCode::OK, "{created}");
            created["id"].as_str().unwrap().to_owned()
        }
    };
    let endpoint = |name: &str, address: &str, listener: &str| {
        let (app, token) = (app.clone(), token.clone());
        let body = json!({
            "name": name, "ipAddress": address, "port": 22, "controlProtocol": "TANDBERG_SSH",
            "listenerServiceId": listener, "username": "admin", "password": "room-pw"
        });
        async move {
            app.create_endpoint(&token, body).await["id"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };

    // A healthy simulator; three of its rooms have listener faults.
    let (sim_address, _sim) = roomlink_listener_sim::start("127.0.0.1:0", SimConfig::default())
        .await
        .unwrap();
    let sim = format!("http://{sim_address}");
    let sim_listener = listener("Simulator", &sim).await;
    let healthy = endpoint("Healthy", "127.77.0.1", &sim_listener).await;
    let mut cases: Vec<(String, String, (u16, &'static str, i64))> = Vec::new();
    for (i, (fault, expected)) in [
        ("listener_hang", TIMED_OUT),
        ("listener_garbage", MESSAGING),
        ("listener_reset", OFFLINE),
    ]
    .into_iter()
    .enumerate()
    {
        let address = format!("127.77.0.{}", i + 2);
        let set = app
            .client
            .put(format!("{sim}/sim/endpoints/{address}/fault"))
            .json(&json!({"fault": fault}))
            .send()
            .await
            .unwrap();
        assert!(set.status().is_success(), "{fault}: {}", set.status());
        let id = endpoint(fault, &address, &sim_listener).await;
        cases.push((format!("simulator {fault}"), id, expected));
    }
    // Raw listeners that answer /v1/info and then misbehave on the command itself.
    let mut raw = Vec::new();
    for (i, (mode, expected)) in [
        (Misbehaviour::Hang, TIMED_OUT),
        (Misbehaviour::Close, OFFLINE),
        (Misbehaviour::GarbageBody, MESSAGING),
        (Misbehaviour::GarbageBytes, OFFLINE),
    ]
    .into_iter()
    .enumerate()
    {
        let server = raw_listener(mode);
        let id = listener(&format!("{mode:?}"), &server.base_url).await;
        let room = endpoint(&format!("raw {mode:?}"), &format!("127.77.1.{i}"), &id).await;
        cases.push((format!("raw listener {mode:?}"), room, expected));
        raw.push(server);
    }

    let join = |id: &str| {
        let (app, token) = (app.clone(), token.clone());
        let path = format!("/api/endpoints/{id}/join?meetingid=123456789");
        async move { app.call(Method::POST, &path, &token, None).await }
    };
    // The healthy room works (and its listener's info is cached) before the faults start.
    assert_eq!(join(&healthy).await.0, StatusCode::NO_CONTENT);

    let bound = COMMAND_TIMEOUT + Duration::from_secs(4);
    let running: Vec<_> = cases
        .into_iter()
        .map(|(what, id, expected)| {
            let call = join(&id);
            tokio::spawn(async move {
                let started = Instant::now();
                let (status, body) = tokio::time::timeout(bound, call)
                    .await
                    .unwrap_or_else(|_| panic!("{what}: no answer within {bound:?}"));
                Faulty {
                    what,
                    expected,
                    status,
                    body,
                    elapsed: started.elapsed(),
                    finished: Instant::now(),
                }
            })
        })
        .collect();

    // Meanwhile the rest of the service answers at its usual pace.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut slowest = Duration::ZERO;
    for _ in 0..3 {
        let started = Instant::now();
        let (status, list) = app.call(Method::GET, "/api/endpoints", &token, None).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        assert_eq!(list.as_array().unwrap().len(), 8);
        slowest = slowest.max(started.elapsed());
        let started = Instant::now();
        let (status, body) = join(&healthy).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        slowest = slowest.max(started.elapsed());
    }
    let healthy_done = Instant::now();
    assert!(
        slowest < COMMAND_TIMEOUT,
        "healthy requests waited behind the faulty ones: {slowest:?}"
    );

    for task in running {
        let f = task.await.unwrap();
        let (status, name, code) = f.expected;
        assert_eq!(
            (f.status.as_u16(), f.body["errorName"].as_str()),
            (status, Some(name)),
            "{}: {}",
            f.what,
            f.body
        );
        assert_error(f.status, &f.body, status, name, code);
        assert!(f.elapsed < bound, "{}: {:?}", f.what, f.elapsed);
        if name == "CommandTimedOut" {
            assert_eq!(f.body["errorDetails"]["commandName"], "join", "{}", f.body);
            assert!(
                f.finished > healthy_done,
                "{}: the healthy requests finished only after the hung command gave up",
                f.what
            );
        }
        let _ = writeln!(
            std::io::stderr(),
            "{}: {} {} after {:?}",
            f.what,
            f.status.as_u16(),
            name,
            f.elapsed
        );
    }
    // Nothing is left poisoned.
    assert_eq!(join(&healthy).await.0, StatusCode::NO_CONTENT);
    drop(raw);
}

// ---------------------------------------------------------------------------------------------
// SIGKILL during a CSV upload
// ---------------------------------------------------------------------------------------------

/// A body just under the 1 MiB bound.
const CSV_BYTES: usize = 1_000_000;

/// The upload: thousands of new endpoints, under the default endpoint limit of 10,000.
fn big_csv() -> (Vec<u8>, usize) {
    let mut csv = b"id,name,ipaddress,port,location,password\n".to_vec();
    let mut rows = 0;
    loop {
        let row = format!(
            ",Room {rows:05},127.77.{}.{},22,\"Building {}, floor {}, wing {} - {}\",room-pw-{rows:05}\n",
            rows / 250,
            rows % 250 + 1,
            rows / 100,
            rows % 100,
            rows % 7,
            "x".repeat(80)
        );
        if csv.len() + row.len() > CSV_BYTES {
            break;
        }
        csv.extend_from_slice(row.as_bytes());
        rows += 1;
    }
    (csv, rows)
}

async fn names(client: &reqwest::Client, address: &str, token: &str) -> HashSet<String> {
    let response = client
        .get(format!("http://{address}/api/endpoints"))
        .header("X-Access-Token", token)
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Where the process is killed.
#[derive(Debug, Clone, Copy)]
enum KillPoint {
    /// Half of the body has been sent.
    MidBody,
    /// This fraction of a whole upload's measured apply time after the last byte was sent.
    Applying(f64),
    /// PostgreSQL only: as soon as the service's connection holds a transaction that has
    /// written (pg_stat_activity shows a transaction id), then this much longer.
    InTransaction(Duration),
}

/// Waits until a connection other than ours to `database_url` has an open transaction that
/// has written something: the upload is being applied.
async fn transaction_open(database_url: &str) {
    let (client, connection) = tokio_postgres::connect(database_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    let query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL";
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let open: i64 = client.query_one(query, &[]).await.unwrap().get(0);
        if open > 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the upload's transaction never began"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    drop(client);
    let _ = connection.await;
}

/// Starts the upload over a raw connection: the head and the first `upto` bytes of the body.
fn start_upload(address: &str, token: &str, body: &[u8], upto: usize) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    write!(
        stream,
        "PUT /api/endpoints/csv HTTP/1.1\r\nHost: {address}\r\nX-Access-Token: {token}\r\n\
         Content-Type: text/csv\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(&body[..upto]).unwrap();
    stream.flush().unwrap();
    stream
}

/// The whole upload; the response's status line once the response has been read to its end.
fn upload(address: &str, token: &str, body: &[u8]) -> String {
    let mut response = BufReader::new(start_upload(address, token, body, body.len()));
    let mut status = String::new();
    response.read_line(&mut status).unwrap();
    let mut rest = Vec::new();
    let _ = response.read_to_end(&mut rest);
    status.trim().to_owned()
}

async fn sigkill_during_csv_upload(backend: &str, database_url: String, dir: tempfile::TempDir) {
    let postgres = database_url.starts_with("postgres");
    let service = Service::new(dir, database_url);
    let (csv, rows) = big_csv();
    let expected: HashSet<String> = (0..rows).map(|i| format!("Room {i:05}")).collect();
    let mut points = vec![
        KillPoint::MidBody,
        KillPoint::Applying(0.05),
        KillPoint::Applying(0.25),
        KillPoint::Applying(0.5),
        KillPoint::Applying(0.75),
        KillPoint::Applying(0.95),
    ];
    if postgres {
        points.push(KillPoint::InTransaction(Duration::ZERO));
        points.push(KillPoint::InTransaction(Duration::from_millis(300)));
    }
    let tenants: Vec<String> = (0..points.len()).map(|i| format!("k{i}")).collect();
    let s = &service;
    tokio::task::block_in_place(|| {
        s.tenant("baseline");
        for t in &tenants {
            s.tenant(t);
        }
    });
    let client = reqwest::Client::new();
    let csv = Arc::new(csv);

    // A whole upload, to learn how long applying one takes here.
    let (child, address) = tokio::task::block_in_place(|| service.serve());
    let baseline_token = token(&client, &address, "baseline").await;
    let mut tokens = Vec::new();
    for t in &tenants {
        tokens.push(token(&client, &address, t).await);
    }
    let (a, t, body) = (address.clone(), baseline_token.clone(), csv.clone());
    let status = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let status = upload(&a, &t, &body);
        (status, started.elapsed())
    })
    .await
    .unwrap();
    let (status, apply_time) = status;
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(names(&client, &address, &baseline_token).await, expected);

    let mut running = Some((child, address));
    let mut outcomes = Vec::new();
    for (i, point) in points.iter().enumerate() {
        let (child, address) = running.take().unwrap();
        let (a, t, body) = (address.clone(), tokens[i].clone(), csv.clone());
        let upto = match point {
            KillPoint::MidBody => csv.len() / 2,
            KillPoint::Applying(_) | KillPoint::InTransaction(_) => csv.len(),
        };
        // The connection stays open until the server is gone.
        let connection = tokio::task::spawn_blocking(move || start_upload(&a, &t, &body, upto))
            .await
            .unwrap();
        match point {
            KillPoint::MidBody => tokio::time::sleep(Duration::from_millis(200)).await,
            KillPoint::Applying(f) => tokio::time::sleep(apply_time.mul_f64(*f)).await,
            KillPoint::InTransaction(after) => {
                transaction_open(&service.database_url).await;
                tokio::time::sleep(*after).await;
            }
        }
        tokio::task::block_in_place(|| sigkill(child));
        drop(connection);

        // Restarted: the enterprise has every row or none.
        let (child, address) = tokio::task::block_in_place(|| service.serve());
        let stored = names(&client, &address, &tokens[i]).await;
        assert!(
            stored.is_empty() || stored == expected,
            "{backend}: killed at {point:?}, {} of {rows} rows are stored",
            stored.len()
        );
        outcomes.push((*point, stored.len()));
        running = Some((child, address));
    }

    // The service is sound after all that: an upload to a killed tenant goes through.
    let (child, address) = running.take().unwrap();
    let (a, t, body) = (address.clone(), tokens[0].clone(), csv.clone());
    let status = tokio::task::spawn_blocking(move || upload(&a, &t, &body))
        .await
        .unwrap();
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(names(&client, &address, &tokens[0]).await, expected);
    tokio::task::block_in_place(|| sigkill(child));
    let _ = writeln!(
        std::io::stderr(),
        "{backend}: {rows} rows ({} bytes), a whole upload took {apply_time:?}; \
         rows stored after each SIGKILL: {outcomes:?}",
        csv.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_csv_upload_sqlite() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("data/roomlink.db").display());
    tokio::time::timeout(
        Duration::from_secs(300),
        sigkill_during_csv_upload("sqlite", url, dir),
    )
    .await
    .expect("the test finishes within its bound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_csv_upload_postgres() {
    let _serial = SERIAL.lock().await;
    let Some(database) = roomlink_store::testing::TestDatabase::create().await else {
        return; // TestDatabase said why
    };
    let dir = tempfile::tempdir().unwrap();
    tokio::time::timeout(
        Duration::from_secs(300),
        sigkill_during_csv_upload("postgres", database.url().to_owned(), dir),
    )
    .await
    .expect("the test finishes within its bound");
}
