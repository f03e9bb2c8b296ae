//! Stopping the real `roomlink` binary with signals while a request is in flight (issue 19):
//! SIGINT and SIGTERM both let the request end with its real answer, refuse new connections
//! meanwhile and exit 0; a second SIGINT stops at once.
//!
//! The request in flight is a `hangup` sent to a listener service that accepts the command and
//! never answers, so it ends only when `listener.command_timeout_ms` passes.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use crate::raw_listener::{answer_info, read_head};
use crate::support::service::{roomlink, run_ok};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// The catalog row of a command nobody answered (docs/listener-protocol.md).
const TIMED_OUT: (u16, &str, i64) = (504, "CommandTimedOut", 1331991805);

fn admin(dir: &Path, args: &[&str], stdin: &str) {
    run_ok(roomlink(dir).args(args), stdin);
}

/// A listener service on loopback that answers `GET /v1/info` and holds every command without
/// answering; `commands` hears of each command's request line as it arrives.
struct HangingListener {
    base_url: String,
    commands: mpsc::Receiver<String>,
    stop: Arc<AtomicBool>,
}

impl Drop for HangingListener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn hanging_listener() -> HangingListener {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (heard, commands) = mpsc::channel();
    let stopped = stop.clone();
    std::thread::spawn(move || {
        while !stopped.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) => {
                    let (stopped, heard) = (stopped.clone(), heard.clone());
                    std::thread::spawn(move || hold(stream, &stopped, &heard));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    HangingListener {
        base_url,
        commands,
        stop,
    }
}

fn hold(stream: TcpStream, stop: &AtomicBool, heard: &mpsc::Sender<String>) {
    let Some((request_line, mut stream)) = read_head(stream) else {
        return;
    };
    if request_line.starts_with("GET /v1/info ") {
        answer_info(&mut stream);
        return;
    }
    let _ = heard.send(request_line.trim_end().to_owned());
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

/// A running `roomlink serve` with one enterprise, a read-write user and one endpoint behind
/// the hanging listener.
struct Service {
    child: Child,
    log: mpsc::Receiver<String>,
    lines: Vec<String>,
    address: String,
    client: reqwest::Client,
    token: String,
    endpoint: String,
    listener: HangingListener,
    _dir: tempfile::TempDir,
}

impl Service {
    async fn start(command_timeout_ms: &str) -> Service {
        let dir = tempfile::tempdir().unwrap();
        admin(
            dir.path(),
            &["admin", "enterprise", "create", "acme", "--create-database"],
            "",
        );
        admin(
            dir.path(),
            &[
                "admin",
                "user",
                "create",
                "--enterprise",
                "acme",
                "--username",
                "ops",
                "--role",
                "ROLE_READWRITE",
                "--password-stdin",
            ],
            "ops-password-123\n",
        );
        let mut child = roomlink(dir.path())
            .env("ROOMLINK__LISTENER__COMMAND_TIMEOUT_MS", command_timeout_ms)
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (send, log) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut service = Service {
            child,
            log,
            lines: Vec::new(),
            address: String::new(),
            client: reqwest::Client::new(),
            token: String::new(),
            endpoint: String::new(),
            listener: hanging_listener(),
            _dir: dir,
        };
        let listening = service.wait_for_log("roomlink is listening");
        service.address = listening["fields"]["address"].as_str().unwrap().to_owned();

        let token: Value = service
            .client
            .post(service.url("/api/auth/accesstokens"))
            .basic_auth("ops", Some("ops-password-123"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        service.token = token["accessToken"].as_str().unwrap().to_owned();
        let listener = service
            .post(
                "/api/listenerservices",
                json!({"name": "Hanging", "baseUrl": service.listener.base_url}),
            )
            .await;
        let endpoint = service
            .post(
                "/api/endpoints",
                json!({
                    "name": "Room", "ipAddress": "127.77.2.1", "port": 22,
                    "controlProtocol": "TANDBERG_SSH", "listenerServiceId": listener["id"],
                    "username": "admin", "password": "room-pw"
                }),
            )
            .await;
        service.endpoint = endpoint["id"].as_str().unwrap().to_owned();
        service
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let response = self
            .client
            .post(self.url(path))
            .header("X-Access-Token", &self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        response.json().await.unwrap()
    }

    /// Starts the hangup and returns once the listener holds it.
    async fn hangup_in_flight(&self) -> tokio::task::JoinHandle<reqwest::Result<(u16, Value)>> {
        let request = self
            .client
            .post(self.url(&format!("/api/endpoints/{}/hangup", self.endpoint)))
            .header("X-Access-Token", &self.token)
            .send();
        let call = tokio::spawn(async move {
            let response = request.await?;
            let status = response.status().as_u16();
            Ok((status, response.json::<Value>().await?))
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            // The status poller's commands come here too: wait for the hangup itself.
            match self
                .listener
                .commands
                .recv_timeout(Duration::from_millis(100))
            {
                Ok(line) if line.contains("hangup") => return call,
                Ok(_) => {}
                Err(_) => assert!(
                    Instant::now() < deadline,
                    "the hangup never reached the listener"
                ),
            }
        }
    }

    fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{name}");
    }

    /// The first JSON log line whose message starts with `message`, read within 30 s.
    fn wait_for_log(&mut self, message: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let Ok(line) = self.log.recv_timeout(Duration::from_millis(100)) else {
                continue;
            };
            self.lines.push(line.clone());
            if let Ok(json) = serde_json::from_str::<Value>(&line)
                && json["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(message))
            {
                return json;
            }
        }
        panic!("no log line {message:?}: {:#?}", self.lines);
    }

    /// Waits for the process to end, at most `bound`.
    fn exit_within(&mut self, bound: Duration) -> ExitStatus {
        let deadline = Instant::now() + bound;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                self.lines.extend(self.log.try_iter());
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "roomlink still running after {bound:?}: {:#?}",
                self.lines
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// True once a new connection to the service is refused (tried for up to two seconds).
    fn refuses_connections(&self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if TcpStream::connect(&self.address).is_err() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `signal` while a hangup is in flight: the hangup gets its real answer (the command timeout's
/// 504), new connections are refused meanwhile, and the process exits 0 afterwards.
async fn graceful(signal: &str) {
    let mut service = Service::start("3000").await;
    let started = Instant::now();
    let call = service.hangup_in_flight().await;
    service.signal(signal);
    let stopping = service.wait_for_log("shutting down");
    assert_eq!(
        stopping["fields"]["signal"].as_str(),
        Some(format!("SIG{signal}").as_str()),
        "{stopping}"
    );
    assert_eq!(stopping["fields"]["grace_secs"], 30, "{stopping}");
    assert!(
        service.refuses_connections(),
        "{signal}: a new connection was still accepted"
    );
    assert!(
        !call.is_finished(),
        "{signal}: the hangup ended before the command timeout"
    );

    let (status, body) = call
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{signal}: the in-flight hangup got no answer: {e}"));
    let (expected_status, name, code) = TIMED_OUT;
    assert_eq!(status, expected_status, "{signal}: {body}");
    assert_eq!(body["errorName"], name, "{body}");
    assert_eq!(body["errorCode"], code, "{body}");
    assert_eq!(body["errorDetails"]["commandName"], "hangup", "{body}");
    assert!(
        started.elapsed() >= Duration::from_millis(2900),
        "{signal}: answered after {:?}, before the command timeout",
        started.elapsed()
    );

    let status = service.exit_within(Duration::from_secs(20));
    assert!(
        status.success(),
        "{signal}: {status:?}: {:#?}",
        service.lines
    );
    let log = service.lines.join("\n");
    assert!(log.contains("roomlink stopped"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_lets_the_request_in_flight_finish_then_exits_0() {
    graceful("INT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_the_request_in_flight_finish_then_exits_0() {
    graceful("TERM").await;
}

/// A second SIGINT does not wait for the request in flight (its command would time out only
/// after a minute): the process ends at once, with a non-zero status and a one-line reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sigint_stops_at_once() {
    let mut service = Service::start("60000").await;
    let call = service.hangup_in_flight().await;
    service.signal("INT");
    service.wait_for_log("shutting down");
    // A SIGTERM in between changes nothing: it is already a graceful stop.
    service.signal("TERM");
    service.wait_for_log("SIGTERM: already shutting down");
    let forced = Instant::now();
    service.signal("INT");
    let status = service.exit_within(Duration::from_secs(5));
    let took = forced.elapsed();
    assert!(!status.success(), "{status:?}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let log = service.lines.join("\n");
    assert!(log.contains("second SIGINT"), "{log}");
    let reason = service
        .lines
        .iter()
        .filter(|line| line.starts_with("roomlink: "))
        .collect::<Vec<_>>();
    assert_eq!(reason.len(), 1, "{log}");
    assert!(reason[0].contains("second SIGINT"), "{log}");
    // The request in flight is cut off rather than answered.
    let answer = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the cut-off request ends")
        .unwrap();
    assert!(answer.is_err(), "{answer:?}");
}
