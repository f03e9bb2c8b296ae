//! A template's plan end to end: roomlink → `roomlink-listener` (`readconfiguration`) →
//! emulated Cisco (HTTP, SSH), Poly (Telnet) and Mesh rooms, on SQLite and PostgreSQL. The plan
//! reads each room as it is now, compares it with the template and writes nothing.

use crate::real_rooms::site;
use crate::support::app::{Backend, TestApp, assert_error};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn plan(app: &TestApp, token: &str, template: &str, rooms: Value) -> (StatusCode, Value) {
    app.call(
        Method::POST,
        &format!("/api/templates/{template}/plan"),
        token,
        Some(json!({ "rooms": rooms })),
    )
    .await
}

/// The plan of `name`'s room.
fn room<'a>(plan: &'a Value, name: &str) -> &'a Value {
    plan["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {plan}"))
}

async fn plans_read_rooms_and_write_nothing(app: TestApp, net: u8) {
    let (rw, ro) = app.tenant("acme").await;
    let site = site(&app, &rw, net, None).await;
    let (status, template) = app
        .call(
            Method::POST,
            "/api/templates",
            &rw,
            Some(json!({"name": "Oslo rooms", "settings": {
                "time_zone": "Europe/Oslo", "auto_answer.mode": "on",
                "standby.delay_minutes": 15}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{template}");
    let id = template["id"].as_str().unwrap().to_owned();

    let (status, all) = plan(&app, &ro, &id, json!({"all": true})).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(all["template"], json!({"id": id, "name": "Oslo rooms"}));
    let names: Vec<&str> = all["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "MESH room",
            "POLYCOM_TELNET room",
            "TANDBERG_HTTP room",
            "TANDBERG_SSH room"
        ]
    );
    for cisco in ["TANDBERG_HTTP room", "TANDBERG_SSH room"] {
        assert_eq!(
            room(&all, cisco)["settings"],
            json!({
                "time_zone": {"plan": "change", "from": "Etc/UTC", "to": "Europe/Oslo"},
                "standby.delay_minutes": {"plan": "change", "from": 10, "to": 15},
                "auto_answer.mode": {"plan": "change", "from": "off", "to": "on"},
            }),
            "{cisco}"
        );
    }
    let poly = &room(&all, "POLYCOM_TELNET room")["settings"];
    assert_eq!(poly["time_zone"]["plan"], "unsupported", "{poly}");
    assert_eq!(
        poly["auto_answer.mode"],
        json!({"plan": "unchanged", "value": "on"})
    );
    assert_eq!(poly["standby.delay_minutes"]["plan"], "change", "{poly}");
    let mesh = &room(&all, "MESH room")["settings"];
    assert!(
        mesh.as_object()
            .unwrap()
            .values()
            .all(|k| k["plan"] == "unsupported"),
        "{mesh}"
    );
    assert_eq!(
        all["summary"],
        json!({"rooms": 4, "roomsChanging": 3, "unreachable": 0, "changes": 7,
            "unchanged": 1, "unsupported": 4, "unreadable": 0})
    );

    // The plan reads the room as it is now: a change made on the codec shows at once, and
    // nothing the plans did was written.
    let http = site.address("TANDBERG_HTTP");
    assert!(site.emu.devices.get(&http).configuration.is_empty());
    site.emu.devices.with(&http, |d| {
        d.configuration
            .insert("Time Zone".into(), "Europe/Oslo".into());
    });
    let (status, one) = plan(
        &app,
        &ro,
        &id,
        json!({"endpoints": [site.endpoint("TANDBERG_HTTP")]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["rooms"].as_array().unwrap().len(), 1);
    assert_eq!(
        one["rooms"][0]["settings"]["time_zone"],
        json!({"plan": "unchanged", "value": "Europe/Oslo"})
    );
    assert_eq!(site.emu.devices.get(&http).configuration.len(), 1);

    // By listener: its four rooms. A room that cannot be asked (here: no listener) is part
    // of the answer, with the catalog error that kept it from being read.
    let listener = app
        .call(Method::GET, "/api/listenerservices", &ro, None)
        .await
        .1[0]["id"]
        .clone();
    let (status, by_listener) = plan(&app, &ro, &id, json!({"listenerId": listener})).await;
    assert_eq!(status, StatusCode::OK, "{by_listener}");
    assert_eq!(by_listener["summary"]["rooms"], 4, "{by_listener}");
    app.create_endpoint(
        &rw,
        json!({"name": "Unlisted room", "ipAddress": "127.78.99.1",
            "controlProtocol": "TANDBERG_HTTP", "username": "admin", "password": "room-pw-secret"}),
    )
    .await;
    let (status, all) = plan(&app, &ro, &id, json!({"all": true})).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    let unlisted = room(&all, "Unlisted room");
    assert!(unlisted.get("settings").is_none(), "{unlisted}");
    assert_eq!(
        unlisted["unreachable"]["code"], "EndpointHasNoListenerService",
        "{unlisted}"
    );
    assert_eq!(all["summary"]["unreachable"], 1);
    assert_eq!(all["summary"]["rooms"], 5);
    assert!(!all.to_string().contains("room-pw-secret"));

    // Refusals: another enterprise's template, a body that chooses no rooms, unknown rooms.
    let (other, _) = app.tenant("globex").await;
    let (status, body) = plan(&app, &other, &id, json!({"all": true})).await;
    assert_error(status, &body, 404, "NotFound", 1217481661);
    let (status, body) = plan(&app, &ro, &id, json!({"building": "Oslo"})).await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    assert!(
        body["errorMessage"]
            .as_str()
            .unwrap()
            .contains("'building'"),
        "{body}"
    );
    // A location no room has: an empty plan, not a refusal.
    let (status, body) = plan(&app, &ro, &id, json!({"location": "Oslo"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["summary"]["rooms"], 0, "{body}");
    let (status, body) = plan(&app, &ro, &id, json!({"endpoints": ["nosuchroom"]})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_read_rooms_and_write_nothing_on_sqlite() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite app");
    plans_read_rooms_and_write_nothing(app, 20).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_read_rooms_and_write_nothing_on_postgres() {
    if let Some(app) = TestApp::spawn(Backend::Postgres).await {
        plans_read_rooms_and_write_nothing(app, 21).await;
    }
}
