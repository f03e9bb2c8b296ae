//! Templates assigned to rooms and checked for drift, end to end: roomlink → `roomlink-listener`
//! (`readconfiguration`) → emulated Cisco (HTTP, SSH), Poly (Telnet) and Mesh rooms, on SQLite
//! and PostgreSQL: the poll rounds' checks, a check on request, the `template.drifted` webhook,
//! and the re-apply that brings drifted rooms back in line.

use crate::real_rooms::site;
use crate::support::app::{Backend, TestApp, assert_error};
use reqwest::{Method, StatusCode};
use roomlink_app::template_jobs::JobRun;
use roomlink_domain::ids::JobId;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The receiver of `template.drifted` is on this machine.
const LOOPBACK: &[(&str, &str)] = &[("ROOMLINK__WEBHOOKS__ALLOW_NETWORKS", "loopback")];

async fn call_ok(
    app: &TestApp,
    verb: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> Value {
    let (status, answer) = app.call(verb, path, token, body).await;
    assert_eq!(status, StatusCode::OK, "{path}: {answer}");
    answer
}

/// Each room's state by name.
fn states(rooms: &Value) -> Vec<(String, String)> {
    rooms["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn room<'a>(rooms: &'a Value, name: &str) -> &'a Value {
    rooms["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {rooms}"))
}

/// The types and data of the events the receiver got, in order.
async fn received(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

async fn drift_end_to_end(app: TestApp, net: u8) {
    let (rw, ro) = app.tenant("acme").await;
    let enterprise = app.enterprise_of(&rw).await;
    let site = site(&app, &rw, net, None).await;
    let receiver = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&receiver)
        .await;
    call_ok(
        &app,
        Method::POST,
        "/api/webhooks",
        &rw,
        Some(json!({"url": receiver.uri(), "eventTypes": ["template.drifted"]})),
    )
    .await;
    let (status, created) = app
        .call(
            Method::POST,
            "/api/templates",
            &rw,
            Some(json!({"name": "Oslo rooms", "settings": {
                "time_zone": "Europe/Oslo", "standby.delay_minutes": 15,
                "auto_answer.mode": "on"}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let path = |what: &str| format!("/api/templates/{id}/{what}");
    let all = json!({"rooms": {"all": true}});

    // Assigning is for read-write users; reading the rooms is for everyone.
    let (status, body) = app
        .call(Method::POST, &path("assign"), &ro, Some(all.clone()))
        .await;
    assert_error(status, &body, 403, "Forbidden", 1900000001);
    let (status, body) = app
        .call(
            Method::POST,
            &path("assign"),
            &rw,
            Some(json!({"rooms": {}})),
        )
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    let assigned = call_ok(&app, Method::POST, &path("assign"), &rw, Some(all.clone())).await;
    assert_eq!(assigned["counts"]["assigned"], 4, "{assigned}");
    assert_eq!(assigned["counts"]["unchecked"], 4, "{assigned}");
    let rooms = call_ok(&app, Method::GET, &path("rooms"), &ro, None).await;
    assert_eq!(rooms, assigned);

    // A poll round checks the rooms that are due: all of them, never checked.
    assert_eq!(app.poll_now(&ro, true).await, 4);
    let rooms = call_ok(&app, Method::GET, &path("rooms"), &ro, None).await;
    assert_eq!(
        states(&rooms),
        [
            ("MESH room".into(), "in_line".into()),
            ("POLYCOM_TELNET room".into(), "drifted".into()),
            ("TANDBERG_HTTP room".into(), "drifted".into()),
            ("TANDBERG_SSH room".into(), "drifted".into()),
        ],
        "{rooms}"
    );
    assert_eq!(
        room(&rooms, "TANDBERG_HTTP room")["drifted"],
        json!([
            {"key": "time_zone", "held": "Etc/UTC", "template": "Europe/Oslo"},
            {"key": "standby.delay_minutes", "held": 10, "template": 15},
            {"key": "auto_answer.mode", "held": "off", "template": "on"},
        ])
    );
    // Poly has no time zone and auto-answers already: only its standby delay drifted.
    assert_eq!(
        room(&rooms, "POLYCOM_TELNET room")["drifted"],
        json!([{"key": "standby.delay_minutes", "held": 3, "template": 15}])
    );
    let first_check = room(&rooms, "TANDBERG_SSH room")["checkedAt"].clone();

    // The next round, at once: nothing is due, so nothing is read again.
    app.clock.advance(1_000);
    assert_eq!(app.poll_now(&ro, true).await, 4);
    let again = call_ok(&app, Method::GET, &path("rooms"), &ro, None).await;
    assert_eq!(room(&again, "TANDBERG_SSH room")["checkedAt"], first_check);

    // Three rooms drifted: three events, keys only.
    app.services.webhook_deliveries.round().await.unwrap();
    let events = received(&receiver).await;
    assert_eq!(events.len(), 3, "{events:?}");
    let ssh = site.endpoint("TANDBERG_SSH");
    let ssh_event = events
        .iter()
        .find(|e| e["data"]["endpointId"] == ssh)
        .expect("an event for the SSH room");
    assert_eq!(ssh_event["type"], "template.drifted");
    assert_eq!(ssh_event["data"]["templateId"], json!(id));
    assert_eq!(
        ssh_event["data"]["keys"],
        json!(["time_zone", "standby.delay_minutes", "auto_answer.mode"])
    );
    assert!(
        !ssh_event.to_string().contains("Europe/Oslo"),
        "{ssh_event}"
    );

    // One click: the drifted rooms get the template, and a check finds every room in line.
    let response = app
        .with_token(Method::POST, &path("reapply"), &rw)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let job: Value = response.json().await.unwrap();
    assert_eq!(job["rooms"].as_array().unwrap().len(), 3, "{job}");
    let run = app
        .services
        .template_jobs
        .run(
            &enterprise,
            &JobId::from_trusted(job["id"].as_str().unwrap().to_owned()),
        )
        .await
        .unwrap();
    assert!(matches!(run, JobRun::Finished(_)), "{run:?}");
    let checked = call_ok(&app, Method::POST, &path("check"), &rw, None).await;
    assert_eq!(checked["counts"]["inLine"], 4, "{checked}");
    assert_eq!(
        room(&checked, "TANDBERG_SSH room")["driftedSince"],
        Value::Null
    );
    let (status, body) = app.call(Method::POST, &path("reapply"), &rw, None).await;
    assert_error(status, &body, 400, "Invalid", 1782937293);

    // Someone changes a room by hand; the round after the interval finds it, and tells.
    let ssh_address = site.address("TANDBERG_SSH");
    site.emu.devices.with(&ssh_address, |d| {
        d.configuration
            .insert("Time Zone".into(), "Europe/Paris".into());
    });
    app.clock.advance(60 * 60 * 1000);
    assert_eq!(app.poll_now(&ro, true).await, 4);
    let rooms = call_ok(&app, Method::GET, &path("rooms"), &ro, None).await;
    assert_eq!(rooms["counts"]["drifted"], 1, "{rooms}");
    assert_eq!(
        room(&rooms, "TANDBERG_SSH room")["drifted"],
        json!([{"key": "time_zone", "held": "Europe/Paris", "template": "Europe/Oslo"}])
    );
    app.services.webhook_deliveries.round().await.unwrap();
    let events = received(&receiver).await;
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[3]["data"]["keys"], json!(["time_zone"]));

    // Unassigned (chosen by its location, in another case), the room is no longer checked;
    // the others stay.
    call_ok(
        &app,
        Method::PATCH,
        &format!("/api/endpoints/{ssh}"),
        &rw,
        Some(json!({"location": "Floor 3"})),
    )
    .await;
    let left = call_ok(
        &app,
        Method::POST,
        &path("unassign"),
        &rw,
        Some(json!({"rooms": {"location": " floor 3"}})),
    )
    .await;
    assert_eq!(left["counts"]["assigned"], 3, "{left}");
    assert_eq!(left["counts"]["drifted"], 0, "{left}");

    // Another enterprise sees none of it.
    let (globex, _) = app.tenant("globex").await;
    let (status, body) = app.call(Method::GET, &path("rooms"), &globex, None).await;
    assert_error(status, &body, 404, "NotFound", 1217481661);

    // The trail has who assigned and unassigned, and deleting the template ends its
    // assignments with it.
    let (_, trail) = app.call(Method::GET, "/api/auditlog", &rw, None).await;
    let trail = trail.to_string();
    for operation in ["templates.assign", "templates.unassign"] {
        assert!(trail.contains(operation), "{operation} in {trail}");
    }
    let (status, _) = app
        .call(Method::DELETE, &format!("/api/templates/{id}"), &rw, None)
        .await;
    assert!(status.is_success(), "{status}");
    let (status, body) = app.call(Method::GET, &path("rooms"), &rw, None).await;
    assert_error(status, &body, 404, "NotFound", 1217481661);
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_is_checked_told_and_reapplied_on_sqlite() {
    let app = TestApp::spawn_with(Backend::Sqlite, LOOPBACK)
        .await
        .expect("sqlite app");
    drift_end_to_end(app, 34).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_is_checked_told_and_reapplied_on_postgres() {
    if let Some(app) = TestApp::spawn_with(Backend::Postgres, LOOPBACK).await {
        drift_end_to_end(app, 35).await;
    }
}
