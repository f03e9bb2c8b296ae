//! The real `roomlink-listener` binary in outbound mode against a small roomlink
//! (../listener-protocol/tests/support/fake_roomlink.rs): the same answers as the same binary
//! gives over HTTP, `--check`, SIGTERM.

#[path = "../../listener-protocol/tests/support/fake_roomlink.rs"]
mod fake_roomlink;

use fake_roomlink::FakeRoomlink;
use roomlink_device_emu::ews::{Ews, EwsItem};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const SECRET: &str = "listener-secret-0123456789";
const EWS_PASSWORD: &str = "ews-Pass-4711";
const ID: &str = "5f0c9289e4b0c0c6485f4cfc";
const CONFIG: &str = "[bridges.prod]\nhostname = \"bridge.example\"\nip_address = \"192.0.2.1\"\n\
    [tandberg_http]\nscheme = \"http\"\n[commands]\ntimeout_ms = 3000\n";

fn listener() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_roomlink-listener"));
    for (key, _) in std::env::vars() {
        if key.starts_with("ROOMLINK_LISTENER") || key == "RUST_LOG" {
            command.env_remove(key);
        }
    }
    command
}

struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the binary with `args` and answers the rest of its first line after `prefix`;
/// its further output is drained (and kept, to look for the secret).
/// Environment variables `env` are set for it.
fn spawn_with(
    args: &[&str],
    prefix: &str,
    env: &[(&str, &str)],
) -> (Running, String, std::thread::JoinHandle<String>) {
    let dir = std::env::temp_dir().join(format!("roomlink-outbound-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("listener.toml");
    std::fs::write(&config, CONFIG).expect("config");
    let mut child = listener()
        .arg("--config")
        .arg(&config)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    let rest = first
        .trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("first line: {first:?}"))
        .to_owned();
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    (Running(child), rest, log)
}

#[tokio::test]
async fn answers_over_the_socket_what_it_answers_over_http_and_stops_with_1001() {
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    // An Exchange server for readcalendar, the same for both listeners.
    let ews = Ews::new("svc-rooms", EWS_PASSWORD);
    ews.add_item(
        "board@corp.example",
        EwsItem {
            id: "AAMkAD-1".into(),
            uid: Some("040000008200E00074C5B7101A82E008".into()),
            subject: Some("Design review".into()),
            body: Some("Join: https://bjn.vc/123456789".into()),
            start_ms: 1_800_007_200_000,
            end_ms: 1_800_010_800_000,
            ..EwsItem::default()
        },
    );
    let ews_server = roomlink_device_emu::ews::start([127, 0, 0, 1].into(), 0, ews.clone())
        .await
        .expect("EWS starts");
    let soap_uri = format!("http://127.0.0.1:{}/EWS/Exchange.asmx", ews_server.port);
    let env = [
        (
            "ROOMLINK_LISTENER__CALENDAR__EXCHANGE__SOAP_URI",
            soap_uri.as_str(),
        ),
        (
            "ROOMLINK_LISTENER__CALENDAR__EXCHANGE__USERNAME",
            "svc-rooms",
        ),
        (
            "ROOMLINK_LISTENER__CALENDAR__EXCHANGE__PASSWORD",
            EWS_PASSWORD,
        ),
    ];
    let (mut outbound, connecting, log) = spawn_with(
        &[
            "--connect",
            &roomlink.base,
            "--listener-id",
            ID,
            "--secret",
            SECRET,
        ],
        "connecting to ",
        &env,
    );
    assert!(connecting.ends_with(&format!("/api/listenerservices/{ID}/connect")));
    let (_inbound, base, _) = spawn_with(
        &["--bind", "127.0.0.1:0", "--secret", SECRET],
        "listening on ",
        &env,
    );
    let attempt = roomlink.attempt().await;
    assert!(attempt.authorized && attempt.subprotocol, "{attempt:?}");
    assert_eq!(attempt.version.as_deref(), Some("3.5.0"));
    let mut conn = roomlink.accept().await;

    // A room system nobody answers for (port 1 on loopback): the driver's real failure.
    let endpoint = json!({"id": "ep-1", "name": "Boardroom", "ipAddress": "127.0.0.1", "port": 1,
        "controlProtocol": "TANDBERG_HTTP", "signalingProtocol": "SIP", "dialStyle": "SIP_URI",
        "username": "admin"});
    let join = json!({"endpoint": endpoint, "credential": {"kind": "plain", "password": "pw"},
                      "params": {"meetingId": "123456789", "cluster": "PROD"}});
    let status = json!({"endpoints": [{"endpoint": endpoint, "credential": {"kind": "none"}}]});
    let read = json!({"calendarType": "EXCHANGE", "calendarId": "board@corp.example",
                      "from": 1_800_000_000_000_i64, "to": 1_800_086_400_000_i64});
    let unknown = json!({"calendarType": "EXCHANGE", "calendarId": "nobody@corp.example",
                         "from": 1_800_000_000_000_i64, "to": 1_800_086_400_000_i64});
    let http = reqwest::Client::new();
    for (method, path, body) in [
        ("GET", "/v1/info", Value::Null),
        ("POST", "/v1/commands/join", join),
        ("POST", "/v1/status", status),
        ("POST", "/v1/commands/status", json!({})),
        ("POST", "/v1/commands/readcalendar", read),
        ("POST", "/v1/commands/readcalendar", unknown),
    ] {
        let frame = conn.exchange(method, path, body.clone()).await;
        let mut request = http
            .request(method.parse().expect("a method"), format!("{base}{path}"))
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
        assert_eq!(frame["body"], http_body, "{path}");
        if path.ends_with("readcalendar") {
            let events = &http_body["calendar"]["events"];
            let failure = &http_body["failure"];
            assert!(
                events[0]["body"] == "Join: https://bjn.vc/123456789"
                    || failure == "calendar_unreadable",
                "{http_body}"
            );
        }
    }
    // Both listeners read the room's calendar: FindItem and GetItem each, and the unknown room.
    assert_eq!(ews.requests().len(), 6, "{:?}", ews.requests());

    let pid = outbound.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill")
            .success()
    );
    assert_eq!(conn.closed().await, Some(1001));
    let status = outbound.0.wait().expect("exits");
    assert!(status.success(), "{status}");
    let log = log.join().expect("the log");
    assert!(log.contains("connected to roomlink"), "{log}");
    assert!(!log.contains(SECRET), "{log}");
    assert!(!log.contains(EWS_PASSWORD), "{log}");
}

#[test]
fn check_validates_the_outbound_settings() {
    let out = listener()
        .args([
            "--connect",
            "https://a.example,https://b.example",
            "--listener-id",
            ID,
        ])
        .args(["--secret", SECRET, "--check"])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("mode: outbound"), "{stdout}");
    assert!(stdout.contains(&format!(
        "wss://b.example/api/listenerservices/{ID}/connect"
    )));
    assert!(!stdout.contains(SECRET));

    let cases: [(&[&str], &str); 4] = [
        (
            &["--connect", "https://a.example", "--secret", SECRET],
            "listener id",
        ),
        (
            &[
                "--connect",
                "ftp://a.example",
                "--listener-id",
                ID,
                "--secret",
                SECRET,
            ],
            "scheme",
        ),
        (
            &[
                "--connect",
                "https://a.example",
                "--listener-id",
                ID,
                "--secret",
                "short",
            ],
            "at least 16",
        ),
        (
            &["--connect", "https://a.example", "--listener-id", ID],
            "no listener secret",
        ),
    ];
    for (args, expected) in cases {
        let out = listener().args(args).arg("--check").output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
    let out = listener()
        .env("ROOMLINK_LISTENER__CONNECT__URLS", "https://a.example")
        .env("ROOMLINK_LISTENER__CONNECT__LISTENER_ID", ID)
        .env("ROOMLINK_LISTENER__CONNECT__CA_FILE", "/nonexistent/ca.pem")
        .args(["--secret", SECRET, "--check"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("connect.ca_file"), "{stderr}");
}
