//! Room inventory and health end to end: roomlink's poll rounds → `roomlink-listener` → emulated Cisco
//! (HTTP, SSH), Poly (Telnet) and Mesh rooms; the records through the API on SQLite and
//! PostgreSQL. Addresses 127.78.10.x (SQLite) and 127.78.11.x (PostgreSQL).

use crate::real_rooms::site;
use crate::support::app::{Backend, TestApp, assert_error};
use reqwest::{Method, StatusCode};
use roomlink_device_emu::device::Software;
use roomlink_device_emu::inventory::{cisco_peripherals, cisco_serial, poly_serial};
use roomlink_domain::ports::Clock;
use serde_json::Value;

const HOUR_MS: i64 = 60 * 60 * 1000;

async fn record(app: &TestApp, token: &str, id: &str) -> Value {
    let (status, body) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{id}/inventory"),
            token,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn room_health(app: &TestApp, token: &str) -> Value {
    let (status, body) = app
        .call(Method::GET, "/api/health/rooms", token, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Every page of the fleet listing with `query`, following `X-Next-Cursor`.
async fn fleet(app: &TestApp, token: &str, query: &str) -> Vec<Value> {
    let mut all = Vec::new();
    let mut path = format!("/api/inventory?limit=2{query}");
    loop {
        let response = app
            .with_token(Method::GET, &path, token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let next = response
            .headers()
            .get("X-Next-Cursor")
            .map(|v| v.to_str().unwrap().to_owned());
        let page: Vec<Value> = response.json().await.unwrap();
        assert!(page.len() <= 2);
        all.extend(page);
        match next {
            Some(after) => path = format!("/api/inventory?limit=2&after={after}{query}"),
            None => return all,
        }
    }
}

async fn rooms_say_what_they_are(app: TestApp, net: u8) {
    let (rw, ro) = app.tenant("acme").await;
    let site = site(&app, &rw, net, None).await;
    let http = site.endpoint("TANDBERG_HTTP").to_owned();
    let ssh = site.endpoint("TANDBERG_SSH").to_owned();
    let poly = site.endpoint("POLYCOM_TELNET").to_owned();
    let mesh = site.endpoint("MESH").to_owned();

    // Before any round: a record of nothing.
    let before = record(&app, &ro, &http).await;
    assert!(
        before["attemptedAt"].is_null() && before["inventory"].is_null(),
        "{before}"
    );

    let first = app.clock.now_ms();
    assert_eq!(
        app.poll_now(&ro, true).await,
        4,
        "every room answered the status poll"
    );

    // Cisco over HTTP and SSH: the codec's serial, software, address and three peripherals.
    for id in [&http, &ssh] {
        let protocol = if *id == http {
            "TANDBERG_HTTP"
        } else {
            "TANDBERG_SSH"
        };
        let address = site.address(protocol);
        let r = record(&app, &ro, id).await;
        assert_eq!(r["readAt"], first, "{r}");
        assert!(r["lastFailure"].is_null(), "{r}");
        let inv = &r["inventory"];
        assert_eq!(inv["vendor"], "Cisco", "{r}");
        assert_eq!(inv["serialNumber"], cisco_serial(&address, 0), "{r}");
        assert!(
            inv["softwareVersion"]
                .as_str()
                .unwrap()
                .starts_with("ce9.15"),
            "{r}"
        );
        assert!(
            inv["addresses"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["kind"] == "ipv4" && a["value"] == address.as_str()),
            "{r}"
        );
        let peripherals = inv["peripherals"].as_array().unwrap();
        assert_eq!(peripherals.len(), 3, "{r}");
        assert!(peripherals.iter().all(|p| p["connected"] == true), "{r}");
        assert!(peripherals.iter().any(|p| p["kind"] == "touchPanel"), "{r}");
    }
    // Poly over Telnet: what `whoami` and `status` say.
    let r = record(&app, &ro, &poly).await;
    assert_eq!(
        r["inventory"]["serialNumber"],
        poly_serial(&site.address("POLYCOM_TELNET")),
        "{r}"
    );
    assert!(
        r["inventory"]["notReported"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "uptimeSeconds"),
        "{r}"
    );
    // Mesh: its driver contract has no inventory; the attempt says why.
    let r = record(&app, &ro, &mesh).await;
    assert!(r["inventory"].is_null(), "{r}");
    assert_eq!(r["attemptedAt"], first, "{r}");
    assert_eq!(r["lastFailure"]["errorName"], "NoSuchHandler", "{r}");

    // The touch panel is unplugged and the codec upgraded.
    let address = site.address("TANDBERG_HTTP");
    let panel = cisco_peripherals(&address)[0].id.clone();
    site.emu.devices.with(&address, |d| {
        d.disconnected_peripherals.insert(panel.clone());
        d.software = Some(Software {
            version: "ce11.27.2.0.1a2b3c4".into(),
            release_date: Some("2025-10-01".into()),
        });
    });
    // A round within the refresh interval reads statuses but no inventory.
    app.clock.advance(60_000);
    assert_eq!(app.poll_now(&ro, true).await, 4);
    let r = record(&app, &ro, &http).await;
    assert_eq!(
        (r["readAt"].clone(), r["attemptedAt"].clone()),
        (first.into(), first.into()),
        "{r}"
    );
    // An hour after the first read, the next round reads again and sees both changes.
    app.clock.advance(HOUR_MS);
    let second = app.clock.now_ms();
    assert_eq!(app.poll_now(&ro, true).await, 4);
    let r = record(&app, &ro, &http).await;
    assert_eq!(r["readAt"], second, "{r}");
    assert_eq!(
        r["inventory"]["softwareVersion"], "ce11.27.2.0.1a2b3c4",
        "{r}"
    );
    let unplugged: Vec<&Value> = r["inventory"]["peripherals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["connected"] == false)
        .collect();
    assert_eq!(unplugged.len(), 1, "{r}");
    assert_eq!(unplugged[0]["id"], panel.as_str(), "{r}");

    // Health: the room with the unplugged panel is degraded, the others work.
    let health = room_health(&app, &ro).await;
    assert_eq!(
        health["counts"],
        serde_json::json!({"ok": 3, "degraded": 1, "offline": 0}),
        "{health}"
    );
    let first_room = &health["rooms"][0];
    assert_eq!(
        (
            first_room["endpointId"].as_str(),
            first_room["state"].as_str()
        ),
        (Some(http.as_str()), Some("degraded")),
        "broken rooms first: {health}"
    );
    assert_eq!(
        first_room["reasons"][0]["code"], "peripheralDisconnected",
        "{health}"
    );
    assert_eq!(first_room["since"], second, "{health}");
    // Its history: the health watch records the change (the room was not seen before), once.
    let history_of = |id: String, token: String| {
        let app = &app;
        async move {
            app.call(
                Method::GET,
                &format!("/api/endpoints/{id}/health"),
                &token,
                None,
            )
            .await
        }
    };
    for _ in 0..2 {
        app.services.health_watch.round().await.unwrap().unwrap();
    }
    let (status, history) = history_of(http.clone(), ro.clone()).await;
    assert_eq!(status, StatusCode::OK, "{history}");
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history[0]["state"], "degraded", "{history}");
    assert!(history[0]["previousState"].is_null(), "{history}");
    assert_eq!(history[0]["at"], app.clock.now_ms(), "{history}");
    assert_eq!(
        history[0]["reasons"][0]["code"], "peripheralDisconnected",
        "{history}"
    );
    assert_eq!(
        health["listeners"][0]["counts"], health["counts"],
        "{health}"
    );

    // The Poly room stops answering (its password is refused): after three poll intervals
    // without a status it is offline, since its last status. A room without a listener is
    // offline from the start.
    let last_poly_status = app.clock.now_ms();
    site.set_fault(
        "POLYCOM_TELNET",
        Some(roomlink_device_emu::device::Fault::BadCredentials),
    );
    app.clock.advance(91_000);
    assert_eq!(
        app.poll_now(&ro, true).await,
        3,
        "the Poly room gave no status"
    );
    let orphan = app
        .create_endpoint(&rw, serde_json::json!({"name": "Unwired room"}))
        .await;
    let health = room_health(&app, &ro).await;
    assert_eq!(
        health["counts"],
        serde_json::json!({"ok": 2, "degraded": 1, "offline": 2}),
        "{health}"
    );
    let state_of = |id: &str| {
        health["rooms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["endpointId"] == id)
            .cloned()
            .unwrap()
    };
    let poly_health = state_of(&poly);
    assert_eq!(poly_health["state"], "offline", "{health}");
    assert_eq!(
        poly_health["reasons"][0]["code"], "notAnswering",
        "{health}"
    );
    assert_eq!(poly_health["since"], last_poly_status, "{health}");
    let orphan_health = state_of(orphan["id"].as_str().unwrap());
    assert_eq!(
        orphan_health["reasons"][0]["code"], "noListener",
        "{health}"
    );
    assert_eq!(
        health["rooms"][0]["state"], "offline",
        "offline rooms first: {health}"
    );
    // The same counts as gauges, for the whole fleet (one enterprise here).
    let metrics = app.metrics().await;
    for line in [
        "roomlink_rooms{state=\"ok\"} 2",
        "roomlink_rooms{state=\"degraded\"} 1",
        "roomlink_rooms{state=\"offline\"} 2",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
    site.set_fault("POLYCOM_TELNET", None);

    // The fleet: every record once, in pages; filters on software and listener.
    let all = fleet(&app, &ro, "").await;
    let mut ids: Vec<&str> = all
        .iter()
        .map(|r| r["endpointId"].as_str().unwrap())
        .collect();
    ids.sort();
    let mut expected = vec![http.as_str(), ssh.as_str(), poly.as_str(), mesh.as_str()];
    expected.sort();
    assert_eq!(ids, expected);
    let upgraded = fleet(&app, &ro, "&softwareVersion=ce11.27.2.0.1a2b3c4").await;
    assert_eq!(upgraded.len(), 1);
    assert_eq!(upgraded[0]["endpointId"], http.as_str());
    let listener = all[0]["listenerServiceId"].as_str().unwrap().to_owned();
    assert_eq!(
        fleet(&app, &ro, &format!("&listenerServiceId={listener}"))
            .await
            .len(),
        4
    );

    // The CSV export with inventory: each room's reported columns; the file loads back
    // unchanged (the upload ignores them).
    let response = app
        .with_token(Method::GET, "/api/endpoints/csv?include=inventory", &ro)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let file = response.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(file.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let at = |name: &str| header.iter().position(|h| h == name).expect(name);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 5, "the four rooms and the unwired one: {file}");
    let row = |id: &str| rows.iter().find(|r| &r[at("id")] == id).expect(id).clone();
    let unwired = rows
        .iter()
        .find(|r| r[at("listenerserviceid")].is_empty())
        .expect("the room without a listener");
    assert!(
        header
            .iter()
            .zip(unwired)
            .all(|(h, cell)| !h.starts_with("inventory.") || cell.is_empty()),
        "never read: blank inventory cells: {file}"
    );
    let cisco = row(&ssh);
    assert_eq!(
        cisco[at("inventory.serialnumber")],
        cisco_serial(&site.address("TANDBERG_SSH"), 0)
    );
    assert!(cisco[at("inventory.softwareversion")].starts_with("ce9.15"));
    assert_eq!(&cisco[at("inventory.peripherals")], "3");
    assert_eq!(&cisco[at("inventory.peripheralsdisconnected")], "0");
    assert!(cisco[at("inventory.readat")].ends_with('Z'), "{file}");
    assert_eq!(
        row(&poly)[at("inventory.serialnumber")],
        poly_serial(&site.address("POLYCOM_TELNET"))
    );
    assert!(
        !row(&mesh)[at("inventory.lastfailure")].is_empty(),
        "Mesh has no inventory, and says why: {file}"
    );
    assert!(!file.contains("room-pw"), "no password in the export");
    let before = app.call(Method::GET, "/api/endpoints", &rw, None).await.1;
    let loaded = app
        .with_token(Method::PUT, "/api/endpoints/csv", &rw)
        .header("Content-Type", "text/csv")
        .body(file)
        .send()
        .await
        .unwrap();
    assert_eq!(
        loaded.status(),
        StatusCode::OK,
        "{}",
        loaded.text().await.unwrap()
    );
    let after = app.call(Method::GET, "/api/endpoints", &rw, None).await.1;
    assert_eq!(after, before, "nothing changed");
    let (status, body) = app
        .call(
            Method::GET,
            "/api/endpoints/csv?include=passwords",
            &ro,
            None,
        )
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);

    // Bad questions: the catalog's answers.
    let (status, body) = app
        .call(Method::GET, "/api/inventory?limit=0", &ro, None)
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    let (status, body) = app
        .call(Method::GET, "/api/endpoints/nope/inventory", &ro, None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // Another enterprise sees none of it.
    let (other, _) = app.tenant("globex").await;
    let (status, _) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{http}/inventory"),
            &other,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = history_of(http.clone(), other.clone()).await;
    assert_error(status, &body, 404, "NotFound", 1217481661);
    assert!(fleet(&app, &other, "").await.is_empty());
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_say_what_they_are_on_sqlite() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite app");
    rooms_say_what_they_are(app, 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rooms_say_what_they_are_on_postgres() {
    if let Some(app) = TestApp::spawn(Backend::Postgres).await {
        rooms_say_what_they_are(app, 11).await;
    }
}
