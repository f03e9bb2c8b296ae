//! The real `roomlink-listener-sim` binary in outbound mode against a small roomlink
//! (../listener-protocol/tests/support/fake_roomlink.rs): the same answers as over HTTP, the
//! listener faults over the socket, SIGTERM.

#[path = "../../listener-protocol/tests/support/fake_roomlink.rs"]
mod fake_roomlink;

use fake_roomlink::FakeRoomlink;
use roomlink_listener_sim::{SimConfig, start};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_roomlink-listener-sim");
const ID: &str = "5f0c9289e4b0c0c6485f4cfb";
const SECRET: &str = "sim-outbound-secret-0123";

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The simulator dialing `roomlink`, with its control surface on a free port.
fn outbound_sim(roomlink: &FakeRoomlink) -> (Running, String) {
    let mut child = Command::new(BIN)
        .args([
            "--connect",
            &roomlink.base,
            "--listener-id",
            ID,
            "--secret",
            SECRET,
        ])
        .args(["--bind", "127.0.0.1:0", "--version", "2.25.0"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the simulator starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("a first line");
    // The rest is drained: a closed pipe would fail the simulator's next line.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let control = line
        .trim()
        .strip_prefix("control surface on ")
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .to_owned();
    (Running(child), control)
}

fn endpoint(ip: &str, protocol: &str) -> Value {
    json!({"id": format!("ep-{ip}"), "name": "Boardroom", "ipAddress": ip, "port": 22,
           "controlProtocol": protocol, "signalingProtocol": "SIP", "dialStyle": "SIP_URI",
           "username": "admin"})
}

/// A room's state carries the time of its last dial: the same in both only up to the clock.
fn without_dial_time(mut body: Value) -> Value {
    match &mut body {
        Value::Object(fields) => {
            fields.remove("lastDialTimestampMillis");
            for value in fields.values_mut() {
                *value = without_dial_time(value.take());
            }
        }
        Value::Array(items) => {
            for item in items {
                *item = without_dial_time(item.take());
            }
        }
        _ => {}
    }
    body
}

#[tokio::test]
async fn answers_over_the_socket_what_it_answers_over_http() {
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    let (_sim, control) = outbound_sim(&roomlink);
    let mut conn = roomlink.accept().await;
    let (http_addr, http_sim) = start(
        "127.0.0.1:0",
        SimConfig {
            secret: Some(SECRET.into()),
            ..SimConfig::default()
        },
    )
    .await
    .expect("an in-process simulator");
    let http = reqwest::Client::new();
    let join = json!({"endpoint": endpoint("127.77.50.1", "TANDBERG_SSH"),
                      "credential": {"kind": "plain", "password": "pw"},
                      "params": {"meetingId": "123456789", "passcode": "4321"}});
    let status = json!({"endpoints": [
        {"endpoint": endpoint("127.77.50.1", "TANDBERG_SSH"), "credential": {"kind": "none"}},
        {"endpoint": endpoint("127.77.50.9", "NO_SUCH_PROTOCOL"), "credential": {"kind": "none"}},
    ]});
    let requests = [
        ("GET", "/v1/info", Value::Null),
        ("POST", "/v1/commands/join", join),
        ("POST", "/v1/status", status),
        ("POST", "/v1/commands/teleport", json!({})),
        ("POST", "/v1/commands/hangup", json!({"endpoint": 5})),
    ];
    for (method, path, body) in requests {
        let frame = conn.exchange(method, path, body.clone()).await;
        let mut request = http
            .request(
                method.parse().expect("a method"),
                format!("http://{http_addr}{path}"),
            )
            .bearer_auth(SECRET);
        if method == "POST" {
            request = request.json(&body);
        }
        let answer = request.send().await.expect("an HTTP answer");
        assert_eq!(frame["status"], answer.status().as_u16(), "{path}: {frame}");
        assert_eq!(
            frame["version"],
            answer.headers()["x-listener-version"]
                .to_str()
                .expect("text")
        );
        let http_body: Value = answer.json().await.expect("JSON");
        assert_eq!(
            without_dial_time(frame["body"].clone()),
            without_dial_time(http_body),
            "{path}"
        );
    }
    http_sim.stop().await;

    // The rooms driven over the socket are the control surface's.
    let room: Value = http
        .get(format!("{control}/sim/endpoints/127.77.50.1"))
        .send()
        .await
        .expect("control surface")
        .json()
        .await
        .expect("JSON");
    assert_eq!(room["callActive"], true, "{room}");
}

#[tokio::test]
async fn listener_faults_hang_garbage_and_reset_over_the_socket() {
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    let (mut sim, control) = outbound_sim(&roomlink);
    let mut conn = roomlink.accept().await;
    let http = reqwest::Client::new();
    for (ip, fault) in [
        ("127.77.51.1", "listener_hang"),
        ("127.77.51.2", "listener_garbage"),
        ("127.77.51.3", "listener_reset"),
    ] {
        let set = http
            .put(format!("{control}/sim/endpoints/{ip}/fault"))
            .json(&json!({"fault": fault}))
            .send()
            .await
            .expect("control surface");
        assert!(set.status().is_success());
    }
    let join =
        |ip: &str| json!({"endpoint": endpoint(ip, "TANDBERG_SSH"), "params": {"meetingId": "1"}});

    // Hang: that request is never answered; the others on the socket are.
    let hung = conn
        .send("POST", "/v1/commands/join", join("127.77.51.1"))
        .await;
    let info = conn.exchange("GET", "/v1/info", Value::Null).await;
    assert_ne!(info["id"], hung);
    assert_eq!(info["status"], 200);

    // Garbage: an answer whose body is text, not the protocol's object.
    let garbage = conn
        .exchange("POST", "/v1/commands/join", join("127.77.51.2"))
        .await;
    assert_eq!(garbage["status"], 200);
    assert!(
        garbage["body"]
            .as_str()
            .is_some_and(|b| b.contains("502 Bad Gateway")),
        "{garbage}"
    );

    // Reset: the socket is dropped without a close frame, and the simulator dials again. Over
    // the first socket's whole life the hung join was never answered.
    conn.send("POST", "/v1/commands/join", join("127.77.51.3"))
        .await;
    let (answers, code) = conn.answers_until_closed().await;
    assert_eq!(code, None);
    assert!(
        answers.is_empty(),
        "the hung join stays unanswered: {answers:?}"
    );
    let mut conn = roomlink.accept().await;
    assert_eq!(
        conn.exchange("GET", "/v1/info", Value::Null).await["status"],
        200
    );

    // SIGTERM: closed with 1001, exit 0.
    let pid = sim.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill")
            .success()
    );
    assert_eq!(conn.closed().await, Some(1001));
    let status = sim.0.wait().expect("exits");
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn several_listener_ids_each_dial_home_from_one_process() {
    const OTHER: &str = "5f0c9289e4b0c0c6485f4cfc";
    let mut roomlink = FakeRoomlink::start_many(&[ID, OTHER], SECRET).await;
    let child = Command::new(BIN)
        .args(["--connect", &roomlink.base, "--secret", SECRET])
        .args(["--listener-id", &format!("{ID},{OTHER}")])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the simulator starts");
    let _sim = Running(child);
    let mut conns = [roomlink.accept().await, roomlink.accept().await];
    let mut paths = [roomlink.attempt().await, roomlink.attempt().await]
        .into_iter()
        .map(|a| {
            assert_eq!(a.status, 101, "{a:?}");
            a.path
        })
        .collect::<Vec<_>>();
    paths.sort();
    assert_eq!(
        paths,
        [ID, OTHER].map(|id| format!("/api/listenerservices/{id}/connect"))
    );
    // Both sockets answer, over the same simulated rooms.
    let join = json!({"endpoint": endpoint("127.77.52.1", "TANDBERG_SSH"),
                      "params": {"meetingId": "1"}});
    let joined = conns[0].exchange("POST", "/v1/commands/join", join).await;
    assert_eq!(joined["status"], 200, "{joined}");
    let status = json!({"endpoints": [
        {"endpoint": endpoint("127.77.52.1", "TANDBERG_SSH"), "credential": {"kind": "none"}}]});
    let seen = conns[1].exchange("POST", "/v1/status", status).await;
    assert_eq!(seen["status"], 200, "{seen}");
    assert!(
        seen["body"].to_string().contains(r#""callActive":true"#),
        "the second socket sees the call joined over the first: {seen}"
    );
    // The simulator dials every id at its start: by now every connection it made has come in.
    assert_eq!(
        roomlink.connections_so_far().await,
        2,
        "two ids, two connections"
    );
}

#[test]
fn outbound_flags_are_checked() {
    let out = Command::new(BIN)
        .args(["--connect", "http://127.0.0.1:9", "--secret", SECRET])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("listener-id"));
    let out = Command::new(BIN)
        .args([
            "--connect",
            "ftp://127.0.0.1:9",
            "--listener-id",
            ID,
            "--secret",
            SECRET,
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("scheme"),
        "{stderr}"
    );
    let out = Command::new(BIN)
        .args([
            "--connect",
            "http://127.0.0.1:9",
            "--listener-id",
            ID,
            "--secret",
            "short",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("at least 16"),
        "{stderr}"
    );
    let out = Command::new(BIN)
        .args(["--connect", "http://127.0.0.1:9", "--secret", SECRET])
        .args(["--listener-id", ID, "--listener-id", ID])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("twice"),
        "{stderr}"
    );
    // No secret at all, and a secret file that is not there: each said, and which flag.
    let out = Command::new(BIN)
        .args(["--connect", "http://127.0.0.1:9", "--listener-id", ID])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--secret-file"),
        "{stderr}"
    );
    let out = Command::new(BIN)
        .args(["--connect", "http://127.0.0.1:9", "--listener-id", ID])
        .args(["--secret-file", "/nonexistent/roomlink-secret"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("cannot read --secret-file"),
        "{stderr}"
    );
}
