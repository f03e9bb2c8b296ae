//! EXCHANGE rooms end to end: roomlink → the production listener (`readcalendar`, listener
//! 3.2.0) → the emulated Exchange EWS endpoint, all in this process on loopback. The room's
//! meetings with what it would dial, a calendar that cannot be read, a listener too old for
//! the command, and auto-join dialling an emulated Cisco codec at the meeting's start with
//! the clock moved by hand. The Exchange password lives in the listener's settings only.

use crate::support::app::{Backend, Round, TestApp, assert_error};
use reqwest::{Method, StatusCode};
use roomlink_device_emu::device::DeviceDefaults;
use roomlink_device_emu::ews::{Ews, EwsItem};
use roomlink_device_emu::{EmuConfig, Frontend};
use roomlink_listener::settings::{BridgeSettings, Settings};
use roomlink_listener::startup::{self, Listener};
use roomlink_listener_protocol::secrets::SharedSecret;
use roomlink_listener_sim::SimConfig;
use serde_json::json;
use std::net::Ipv4Addr;
use std::time::Duration;

const ROOM: &str = "board@corp.example";
const EWS_PASSWORD: &str = "Exchange-Svc-Pass-55";
const LISTENER_SECRET: &str = "listener-secret-for-exchange-01";
const CODEC_PASSWORD: &str = "codec-pw-exchange";
/// 2027-01-15T10:00:00Z: the review's start.
const REVIEW: i64 = 1_800_007_200_000;
const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
/// Auto-join rounds every 100 ms.
const FAST: &[(&str, &str)] = &[("ROOMLINK__CALENDAR__AUTO_JOIN_INTERVAL_MS", "100")];

/// The board room's mailbox: the review at 10:00 with its link in the body, a stand-up at
/// 12:00 with nothing to dial.
async fn exchange() -> (Ews, Frontend) {
    let ews = Ews::new("CORP\\svc-rooms", EWS_PASSWORD);
    ews.add_item(
        ROOM,
        EwsItem {
            id: "AAMkAD-review".into(),
            uid: Some("040000008200E00074C5B7101A82E00800000000REVIEW".into()),
            subject: Some("Design review".into()),
            body: Some("Join the meeting:\nhttps://bluejeans.com/123456789/4321\n".into()),
            location: Some("Boardroom".into()),
            start_ms: REVIEW,
            end_ms: REVIEW + HOUR,
            organizer_email: Some("ann@corp.example".into()),
            ..EwsItem::default()
        },
    );
    ews.add_item(
        ROOM,
        EwsItem {
            id: "AAMkAD-standup".into(),
            subject: Some("Stand-up".into()),
            body: Some("In the room.".into()),
            start_ms: REVIEW + 2 * HOUR,
            end_ms: REVIEW + 2 * HOUR + 15 * MIN,
            ..EwsItem::default()
        },
    );
    let server = roomlink_device_emu::ews::start([127, 0, 0, 1].into(), 0, ews.clone())
        .await
        .expect("EWS starts");
    (ews, server)
}

async fn production_listener(ews_port: u16) -> Listener {
    let mut settings = Settings::default();
    settings.server.bind = "127.0.0.1:0".into();
    settings.bridges.insert(
        "prod".into(),
        BridgeSettings {
            hostname: "bridge.example".into(),
            ip_address: "192.0.2.10".into(),
        },
    );
    settings.tandberg_http.scheme = "http".into();
    settings.commands.timeout_ms = 3_000;
    let exchange = &mut settings.calendar.exchange;
    exchange.soap_uri = Some(format!("http://127.0.0.1:{ews_port}/EWS/Exchange.asmx"));
    exchange.username = Some("svc-rooms".into());
    exchange.password = Some(EWS_PASSWORD.into());
    exchange.domain = Some("CORP".into());
    let drivers = startup::drivers(&settings).expect("drivers");
    startup::start(
        settings,
        Some(SharedSecret::new(LISTENER_SECRET)),
        None,
        drivers,
        false,
    )
    .await
    .expect("listener starts")
}

fn meetings_path(id: &str) -> String {
    format!(
        "/api/endpoints/{id}/meetings?from={}&to={}",
        REVIEW - 10 * HOUR,
        REVIEW + 14 * HOUR
    )
}

async fn exchange_rooms(app: TestApp) {
    app.clock.set(REVIEW - HOUR);
    let (ews, ews_server) = exchange().await;
    let listener = production_listener(ews_server.port).await;
    let address = Ipv4Addr::new(127, 78, 60, 1);
    let emu = roomlink_device_emu::start(EmuConfig {
        first_host: address,
        count: 1,
        defaults: DeviceDefaults {
            username: "admin".into(),
            password: CODEC_PASSWORD.into(),
            connect_after: Duration::from_millis(100),
        },
        cisco_http: Some(0),
        cisco_basic_rate_limit: false,
        ..EmuConfig::default()
    })
    .await
    .expect("emulator starts");
    let (rw, ro) = app.tenant("acme").await;

    // EXCHANGE takes no account in roomlink: the listener has it.
    let (status, error) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/EXCHANGE",
            &rw,
            Some(json!({"baseUrl": "https://mail.corp.example/EWS/Exchange.asmx"})),
        )
        .await;
    assert_error(
        status,
        &error,
        400,
        "Invalid",
        error["errorCode"].as_i64().unwrap(),
    );
    assert!(
        error["errorMessage"]
            .as_str()
            .unwrap()
            .contains("each room's listener reads them"),
        "{error}"
    );

    let (status, record) = app
        .call(
            Method::POST,
            "/api/listenerservices",
            &rw,
            Some(
                json!({"name": "HQ", "baseUrl": format!("http://{}", listener.addr),
                "secret": LISTENER_SECRET}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{record}");
    let room = app
        .create_endpoint(
            &rw,
            json!({"name": "Boardroom", "calendarId": ROOM, "calendarType": "EXCHANGE",
                "listenerServiceId": record["id"], "ipAddress": address.to_string(),
                "port": emu.ports.cisco_http, "controlProtocol": "TANDBERG_HTTP",
                "username": "admin", "password": CODEC_PASSWORD}),
        )
        .await;
    let id = room["id"].as_str().unwrap().to_owned();

    // The room's meetings, read through the listener, with what it would dial.
    let (status, meetings) = app.call(Method::GET, &meetings_path(&id), &ro, None).await;
    assert_eq!(status, StatusCode::OK, "{meetings}");
    assert_eq!(
        meetings,
        json!([
            {"uid": "040000008200E00074C5B7101A82E00800000000REVIEW", "title": "Design review",
             "start": REVIEW, "end": REVIEW + HOUR,
             "dial": {"meetingId": "123456789", "passcode": "4321", "meetingType": "MEETME",
                      "cluster": "PROD", "foundIn": "description"},
             "notDialable": null},
            {"uid": "AAMkAD-standup", "title": "Stand-up", "start": REVIEW + 2 * HOUR,
             "end": REVIEW + 2 * HOUR + 15 * MIN, "dial": null, "notDialable": null}
        ])
    );
    let find = &ews.requests()[0];
    assert_eq!(
        (find.operation.as_str(), find.mailbox.as_deref()),
        ("FindItem", Some(ROOM))
    );
    assert!(find.authenticated);
    assert!(!meetings.to_string().contains(EWS_PASSWORD));

    // A calendar the listener cannot read: CalendarServerException naming it, nothing else
    // broken.
    let lost = app
        .create_endpoint(
            &rw,
            json!({"name": "Lost", "calendarId": "nobody@corp.example",
                "calendarType": "EXCHANGE", "listenerServiceId": record["id"]}),
        )
        .await;
    let lost_id = lost["id"].as_str().unwrap();
    let (status, error) = app
        .call(Method::GET, &meetings_path(lost_id), &ro, None)
        .await;
    assert_error(status, &error, 502, "CalendarServerException", 187263818);
    assert_eq!(error["errorDetails"]["calendarId"], "nobody@corp.example");
    assert!(
        error.to_string().contains("ErrorNonExistentMailbox"),
        "{error}"
    );
    assert!(!error.to_string().contains(EWS_PASSWORD), "{error}");
    let (status, _) = app.call(Method::GET, &meetings_path(&id), &ro, None).await;
    assert_eq!(status, StatusCode::OK);

    // A room without a listener cannot have its EXCHANGE calendar read.
    let alone = app
        .create_endpoint(
            &rw,
            json!({"name": "Alone", "calendarId": "alone@corp.example",
                "calendarType": "EXCHANGE"}),
        )
        .await;
    let (_, error) = app
        .call(
            Method::GET,
            &meetings_path(alone["id"].as_str().unwrap()),
            &ro,
            None,
        )
        .await;
    assert_eq!(
        error["errorName"], "EndpointHasNoListenerService",
        "{error}"
    );

    // A listener older than 3.2.0 (the simulator's default 2.25.0): ForwardsCompatibility.
    let old = crate::control::room(&app, &rw, SimConfig::default(), "127.77.0.61").await;
    let (status, patched) = app
        .call(
            Method::PATCH,
            &format!("/api/endpoints/{}", old.endpoint),
            &rw,
            Some(json!({"calendarId": "old@corp.example", "calendarType": "EXCHANGE"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    let (status, error) = app
        .call(Method::GET, &meetings_path(&old.endpoint), &ro, None)
        .await;
    assert_eq!(status.as_u16(), 501, "{error}");
    assert_eq!(error["errorName"], "ForwardsCompatibility", "{error}");
    assert_eq!(error["errorDetails"]["listenerServiceVersion"], "2.25.0");
    assert_eq!(error["errorDetails"]["commandName"], "readcalendar");

    // Auto-join: switched on, the room dials the review within the lead time, once.
    let (status, patched) = app
        .call(
            Method::PATCH,
            &format!("/api/endpoints/{id}"),
            &rw,
            Some(json!({"autoJoinMode": "ENABLED"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    TestApp::full_rounds(&[&app], Round::AutoJoin).await;
    let device = address.to_string();
    assert_eq!(emu.devices.get(&device).dial_count, 0, "an hour early");
    app.clock.set(REVIEW - 20_000);
    let mut dialled = None;
    for _ in 0..100 {
        let d = emu.devices.get(&device);
        if d.dial_count > 0 {
            dialled = d.last_dialed.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(dialled.as_deref(), Some("123456789.4321@bridge.example"));
    TestApp::full_rounds(&[&app], Round::AutoJoin).await;
    assert_eq!(emu.devices.get(&device).dial_count, 1, "exactly once");

    listener.stop(false).await;
    emu.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exchange_rooms_read_through_the_listener_sqlite() {
    if let Some(app) = TestApp::spawn_with_background(Backend::Sqlite, FAST).await {
        exchange_rooms(app).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exchange_rooms_read_through_the_listener_postgres() {
    if let Some(app) = TestApp::spawn_with_background(Backend::Postgres, FAST).await {
        exchange_rooms(app).await;
    }
}
