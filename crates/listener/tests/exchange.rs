//! `readcalendar` through the production listener: a room mailbox's calendar read from the
//! emulated Exchange server (roomlink-device-emu's EWS endpoint) over loopback HTTP, and every
//! way it fails, without the account's password ever reaching an answer or a log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roomlink_device_emu::Frontend;
use roomlink_device_emu::ews::{Ews, EwsItem};
use roomlink_listener::settings::Settings;
use roomlink_listener::startup;
use roomlink_listener_protocol::secrets::SharedSecret;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

const SECRET: &str = "a-listener-secret-for-ews";
const PASSWORD: &str = "Ews-Passw0rd-913";
const ROOM: &str = "board@corp.example";

/// The password in every form it could leak in: as is, and inside the Basic header.
fn leaks(text: &str) -> bool {
    use base64::Engine;
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("CORP\\svc-rooms:{PASSWORD}"));
    text.contains(PASSWORD) || text.contains(&basic)
}
/// 2027-01-15T10:00:00Z.
const REVIEW: i64 = 1_800_007_200_000;
const HOUR: i64 = 3_600_000;

fn item(id: &str, start: i64, subject: &str) -> EwsItem {
    EwsItem {
        id: id.into(),
        subject: Some(subject.into()),
        start_ms: start,
        end_ms: start + HOUR,
        ..EwsItem::default()
    }
}

/// An Exchange server with the account `CORP\svc-rooms` and the board room's calendar.
async fn exchange() -> (Ews, Frontend) {
    let ews = Ews::new("CORP\\svc-rooms", PASSWORD);
    ews.add_item(
        ROOM,
        EwsItem {
            uid: Some("040000008200E00074C5B7101A82E0080000000010".into()),
            body: Some("Join the meeting:\nhttps://bjn.vc/123456789\nPasscode: 4321".into()),
            location: Some("Boardroom & terrace".into()),
            organizer_name: Some("Ann Smith".into()),
            organizer_email: Some("ann@corp.example".into()),
            ..item("AAMkAD-review", REVIEW, "Design review <Q1>")
        },
    );
    // Earlier in the day, no UID given: the id stands for it.
    ews.add_item(ROOM, item("AAMkAD-standup", REVIEW - 2 * HOUR, "Standup"));
    ews.add_item(
        ROOM,
        EwsItem {
            cancelled: true,
            ..item("AAMkAD-cancelled", REVIEW + 2 * HOUR, "Canceled: Retro")
        },
    );
    // Outside the window.
    ews.add_item(
        ROOM,
        item("AAMkAD-tomorrow", REVIEW + 30 * HOUR, "Tomorrow"),
    );
    ews.add_denied_mailbox("ceo@corp.example");
    let server = roomlink_device_emu::ews::start([127, 0, 0, 1].into(), 0, ews.clone())
        .await
        .unwrap();
    (ews, server)
}

fn settings(ews_port: Option<u16>) -> Settings {
    let mut settings = Settings::default();
    settings.server.bind = "127.0.0.1:0".into();
    if let Some(port) = ews_port {
        let exchange = &mut settings.calendar.exchange;
        exchange.soap_uri = Some(format!("http://127.0.0.1:{port}/EWS/Exchange.asmx"));
        exchange.username = Some("svc-rooms".into());
        exchange.password = Some(PASSWORD.into());
        exchange.domain = Some("CORP".into());
    }
    settings
}

async fn start_listener(settings: Settings) -> (startup::Listener, String) {
    let drivers = startup::drivers(&settings).unwrap();
    let listener = startup::start(
        settings,
        Some(SharedSecret::new(SECRET)),
        None,
        drivers,
        false,
    )
    .await
    .unwrap();
    let base = format!("http://{}", listener.addr);
    (listener, base)
}

fn query(calendar_id: &str) -> Value {
    json!({"calendarType": "EXCHANGE", "calendarId": calendar_id,
           "from": REVIEW - 10 * HOUR, "to": REVIEW + 14 * HOUR})
}

async fn read(base: &str, body: &Value) -> (u16, Value, String) {
    let answer = reqwest::Client::new()
        .post(format!("{base}/v1/commands/readcalendar"))
        .bearer_auth(SECRET)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let text = answer.text().await.unwrap();
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    (status, json, text)
}

#[tokio::test]
async fn the_listener_reads_a_rooms_events_from_exchange() {
    let (ews, server) = exchange().await;
    let (listener, base) = start_listener(settings(Some(server.port))).await;

    let info: Value = reqwest::Client::new()
        .get(format!("{base}/v1/info"))
        .bearer_auth(SECRET)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(info["version"], "3.5.0");
    assert!(
        info["commands"]
            .as_array()
            .unwrap()
            .contains(&json!("readcalendar"))
    );

    let (status, body, _) = read(&base, &query(ROOM)).await;
    assert_eq!(status, 200, "{body}");
    let calendar = &body["calendar"];
    assert_eq!(calendar["calendarId"], ROOM);
    assert_eq!(calendar["from"], REVIEW - 10 * HOUR);
    let events = calendar["events"].as_array().unwrap();
    let titles: Vec<&str> = events
        .iter()
        .map(|e| e["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Standup", "Design review <Q1>", "Canceled: Retro"]);
    let review = &events[1];
    assert_eq!(review["uid"], "040000008200E00074C5B7101A82E0080000000010");
    assert_eq!(review["id"], "AAMkAD-review");
    assert_eq!(
        (review["start"].as_i64(), review["end"].as_i64()),
        (Some(REVIEW), Some(REVIEW + HOUR))
    );
    assert_eq!(review["location"], "Boardroom & terrace");
    assert_eq!(
        review["body"],
        "Join the meeting:\nhttps://bjn.vc/123456789\nPasscode: 4321"
    );
    assert_eq!(review["organizer"]["email"], "ann@corp.example");
    assert_eq!(review["organizer"]["name"], "Ann Smith");
    assert_eq!(review["cancelled"], false);
    assert_eq!(review["allDay"], false);
    assert_eq!(events[0]["uid"], "AAMkAD-standup", "no UID: the item id");
    assert_eq!(events[2]["cancelled"], true);

    // What the server saw: one FindItem on the room's mailbox with the window, then one
    // GetItem for the bodies; Basic as CORP\svc-rooms, the schema version, the SOAP action.
    let requests = ews.requests();
    let operations: Vec<&str> = requests.iter().map(|r| r.operation.as_str()).collect();
    assert_eq!(operations, ["FindItem", "GetItem"]);
    let find = &requests[0];
    assert!(find.authenticated);
    assert_eq!(find.mailbox.as_deref(), Some(ROOM));
    assert_eq!(find.server_version.as_deref(), Some("Exchange2010_SP2"));
    assert_eq!(
        find.view,
        Some(("2027-01-15T00:00:00Z".into(), "2027-01-16T00:00:00Z".into()))
    );
    assert_eq!(
        find.soap_action.as_deref(),
        Some("\"http://schemas.microsoft.com/exchange/services/2006/messages/FindItem\"")
    );
    listener.stop(true).await;
}

#[tokio::test]
async fn every_failure_is_a_documented_calendar_failure_without_the_password() {
    let (ews, server) = exchange().await;
    let (listener, base) = start_listener(settings(Some(server.port))).await;
    let (status, body, text) = read(&base, &query("nobody@corp.example")).await;
    assert_eq!(
        (status, body["failure"].as_str()),
        (502, Some("calendar_unreadable")),
        "{body}"
    );
    assert!(
        text.contains("there is no mailbox nobody@corp.example (ErrorNonExistentMailbox)"),
        "{text}"
    );
    assert!(text.contains("Exchange 127.0.0.1:"), "{text}");
    let (status, body, text) = read(&base, &query("ceo@corp.example")).await;
    assert_eq!(status, 502, "{body}");
    assert!(text.contains("ErrorAccessDenied"), "{text}");
    // The account's password changed on the server: 401.
    ews.set_password("rotated-elsewhere");
    let (status, body, text) = read(&base, &query(ROOM)).await;
    assert_eq!(status, 502, "{body}");
    assert!(
        text.contains("refused the account (401 Unauthorized)"),
        "{text}"
    );
    assert!(!ews.requests().last().unwrap().authenticated);
    // A body that is not the request.
    let (status, body, _) = read(&base, &json!({"calendarId": ROOM})).await;
    assert_eq!(
        (status, body["failure"].as_str()),
        (400, Some("bad_request"))
    );
    let mut backwards = query(ROOM);
    backwards["to"] = json!(0);
    assert_eq!(read(&base, &backwards).await.0, 400);
    // Another calendar type.
    let mut google = query(ROOM);
    google["calendarType"] = json!("GOOGLE");
    let (status, body, _) = read(&base, &google).await;
    assert_eq!(
        (status, body["failure"].as_str()),
        (501, Some("calendar_not_configured"))
    );
    for (_, _, text) in [read(&base, &query(ROOM)).await, read(&base, &google).await] {
        assert!(!leaks(&text), "{text}");
    }
    listener.stop(true).await;

    // Nothing listening where Exchange should be.
    drop(server);
    let (listener, base) = start_listener(settings(Some(1))).await;
    let (status, _, text) = read(&base, &query(ROOM)).await;
    assert_eq!(status, 502);
    assert!(text.contains("cannot connect"), "{text}");
    listener.stop(true).await;
}

#[tokio::test]
async fn a_listener_without_exchange_says_so() {
    let (listener, base) = start_listener(settings(None)).await;
    let (status, body, _) = read(&base, &query(ROOM)).await;
    assert_eq!(status, 501, "{body}");
    assert_eq!(body["failure"], "calendar_not_configured");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("calendar.exchange.soap_uri"),
        "{body}"
    );
    listener.stop(true).await;
}

/// The binary, logging at debug, through a successful read and a refused one: the password is
/// in neither its output nor its answers.
#[tokio::test]
async fn the_binary_never_logs_the_password() {
    let (ews, server) = exchange().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("listener.toml");
    std::fs::write(
        &config,
        format!(
            "[calendar.exchange]\nsoap_uri = \"http://127.0.0.1:{}/EWS/Exchange.asmx\"\n\
             username = \"svc-rooms\"\npassword = \"{PASSWORD}\"\ndomain = \"CORP\"\n",
            server.port
        ),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_roomlink-listener"));
    for (key, _) in std::env::vars() {
        if key.starts_with("ROOMLINK_LISTENER") || key == "RUST_LOG" {
            command.env_remove(key);
        }
    }
    let check = Command::new(env!("CARGO_BIN_EXE_roomlink-listener"))
        .args([
            "--config",
            config.to_str().unwrap(),
            "--secret",
            SECRET,
            "--check",
        ])
        .output()
        .unwrap();
    let check_out = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(
        check_out.contains("exchange calendars: read through http://127.0.0.1:"),
        "{check_out}"
    );
    assert!(!check_out.contains(PASSWORD));
    let mut child = command
        .args([
            "--config",
            config.to_str().unwrap(),
            "--bind",
            "127.0.0.1:0",
            "--secret",
            SECRET,
        ])
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Debug lines may come before the one naming the address.
    let mut early = String::new();
    let base = loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "{early}");
        if let Some(addr) = line.trim().strip_prefix("listening on ") {
            break addr.to_owned();
        }
        early.push_str(&line);
    };
    let (status, _, ok_text) = read(&base, &query(ROOM)).await;
    assert_eq!(status, 200, "{ok_text}");
    ews.set_password("rotated-elsewhere");
    let (status, _, refused_text) = read(&base, &query(ROOM)).await;
    assert_eq!(status, 502, "{refused_text}");
    child.kill().unwrap();
    child.wait().unwrap();
    let mut log = early;
    stdout.read_to_string(&mut log).unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert!(log.contains("calendar read failed"), "{log}");
    for text in [&log, &ok_text, &refused_text] {
        assert!(!leaks(text), "{text}");
    }
}
