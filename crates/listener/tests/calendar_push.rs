//! Calendar push through the production listener: `POST /v1/commands/pushcalendar` over HTTP,
//! the TANDBERG_HTTP driver's `Bookings Put` to the emulated Cisco codec, and the codec's
//! `Bookings List` showing the meetings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roomlink_device_emu::device::DeviceDefaults;
use roomlink_device_emu::{EmuConfig, Emulator};
use roomlink_listener::settings::{BridgeSettings, Settings};
use roomlink_listener::startup;
use roomlink_listener_protocol::secrets::SharedSecret;
use serde_json::{Value, json};
use std::time::Duration;

const PASSWORD: &str = "codec-Secret-24";
const SECRET: &str = "a-listener-secret-for-push";
const ROOM: &str = "127.77.24.1";
/// 2027-01-15T10:00:00Z.
const REVIEW: i64 = 1_800_007_200_000;

async fn emulator() -> Emulator {
    roomlink_device_emu::start(EmuConfig {
        first_host: [127, 77, 24, 1].into(),
        count: 1,
        defaults: DeviceDefaults {
            username: "admin".into(),
            password: PASSWORD.into(),
            connect_after: Duration::ZERO,
        },
        cisco_http: Some(0),
        ..EmuConfig::default()
    })
    .await
    .expect("emulator starts")
}

fn settings() -> Settings {
    let mut settings = Settings::default();
    settings.server.bind = "127.0.0.1:0".into();
    settings.tandberg_http.scheme = "http".into();
    settings.bridges.insert(
        "prod".into(),
        BridgeSettings {
            hostname: "bjn.vc".into(),
            ip_address: "192.0.2.1".into(),
        },
    );
    settings
}

fn command(protocol: &str, port: u16, meetings: Value) -> Value {
    json!({
        "endpoint": {"id": "e1", "name": "Boardroom", "ipAddress": ROOM, "port": port,
            "controlProtocol": protocol, "dialStyle": "SIP_URI", "addressStyle": "HOSTNAME",
            "username": "admin"},
        "credential": {"kind": "plain", "password": PASSWORD},
        "params": {"calendar": {"from": REVIEW - 36_000_000, "to": REVIEW + 86_400_000,
            "meetings": meetings}}
    })
}

/// `xCommand Bookings List` over the codec's own HTTP API.
async fn bookings_list(port: u16) -> String {
    reqwest::Client::new()
        .post(format!("http://{ROOM}:{port}/putxml"))
        .basic_auth("admin", Some(PASSWORD))
        .header("Content-Type", "text/xml")
        .body("<Command><Bookings><List command=\"True\"/></Bookings></Command>")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_listener_pushes_bookings_that_bookings_list_shows() {
    let emu = emulator().await;
    let port = emu.ports.cisco_http.unwrap();
    let settings = settings();
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
    let http = reqwest::Client::new();

    // Only the Cisco HTTP driver takes pushes.
    let info: Value = http
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
            .contains(&json!("pushcalendar"))
    );
    let per = &info["protocolCapabilities"];
    assert!(
        per["TANDBERG_HTTP"]
            .as_array()
            .unwrap()
            .contains(&json!("CALENDAR_PUSH"))
    );
    for other in ["TANDBERG_SSH", "POLYCOM_TELNET", "MESH"] {
        if let Some(list) = per[other].as_array() {
            assert!(!list.contains(&json!("CALENDAR_PUSH")), "{other}: {info}");
        }
    }

    let meetings = json!([
        {"uid": "review@corp.example", "title": "Design review", "start": REVIEW,
         "end": REVIEW + 3_600_000, "dial": {"meetingId": "123456789", "cluster": "PROD"}},
        {"uid": "lunch@corp.example", "title": "Team <lunch> & \"chat\"", "start": REVIEW + 7_200_000,
         "end": REVIEW + 9_000_000, "dial": null}
    ]);
    let answer = http
        .post(format!("{base}/v1/commands/pushcalendar"))
        .bearer_auth(SECRET)
        .json(&command("TANDBERG_HTTP", port, meetings))
        .send()
        .await
        .unwrap();
    let status = answer.status();
    let body: Value = answer.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["state"]["callActive"], false, "{body}");

    let device = emu.devices.get(ROOM);
    assert_eq!(device.bookings_puts, 1);
    assert_eq!(device.bookings.len(), 2);
    assert_eq!(device.last_dialed, None, "a push dials nothing");

    let list = bookings_list(port).await;
    assert!(
        list.contains("<BookingsListResult status=\"OK\">"),
        "{list}"
    );
    assert!(list.contains("<TotalRows>2</TotalRows>"), "{list}");
    assert!(list.contains("<Title>Design review</Title>"), "{list}");
    assert!(
        list.contains("<StartTime>2027-01-15T10:00:00Z</StartTime>"),
        "{list}"
    );
    assert!(
        list.contains("<EndTime>2027-01-15T11:00:00Z</EndTime>"),
        "{list}"
    );
    assert!(list.contains("<Number>123456789@bjn.vc</Number>"), "{list}");
    assert!(list.contains("<Protocol>SIP</Protocol>"), "{list}");
    assert!(
        list.contains("<MeetingId>review@corp.example</MeetingId>"),
        "{list}"
    );
    assert!(
        list.contains("<Title>Team &lt;lunch&gt; &amp; \"chat\"</Title>")
            || list.contains("<Title>Team &lt;lunch&gt; &amp; &quot;chat&quot;</Title>"),
        "{list}"
    );
    assert!(list.contains("<Protocol>None</Protocol>"), "{list}");

    // An empty push clears the list.
    let answer = http
        .post(format!("{base}/v1/commands/pushcalendar"))
        .bearer_auth(SECRET)
        .json(&command("TANDBERG_HTTP", port, json!([])))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert!(
        bookings_list(port)
            .await
            .contains("<TotalRows>0</TotalRows>")
    );

    // A protocol whose driver cannot push answers no_such_command (roomlink: NoSuchHandler).
    let answer = http
        .post(format!("{base}/v1/commands/pushcalendar"))
        .bearer_auth(SECRET)
        .json(&command("POLYCOM_TELNET", 24, json!([])))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["failure"], "no_such_command", "{body}");
    listener.stop(true).await;
    emu.stop();
}
