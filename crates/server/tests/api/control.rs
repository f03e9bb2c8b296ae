//! Remote control through the real listener simulator on loopback. Simulated room systems have
//! 127.77.0.x addresses; the simulator never connects to them, so no traffic leaves loopback.

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use base64::Engine;
use reqwest::{Method, StatusCode};
use roomlink_listener_sim::{SimConfig, SimHandle};
use serde_json::{Value, json};

pub struct Room {
    pub sim: String,
    _handle: SimHandle,
    pub endpoint: String,
}

async fn simulator(config: SimConfig) -> (String, SimHandle) {
    let (address, handle) = roomlink_listener_sim::start("127.0.0.1:0", config)
        .await
        .unwrap();
    (format!("http://{address}"), handle)
}

/// A simulator, a listener record for it and one endpoint behind it.
pub async fn room(app: &TestApp, token: &str, config: SimConfig, address: &str) -> Room {
    let (sim, handle) = simulator(config).await;
    let (status, listener) = app
        .call(
            Method::POST,
            "/api/listenerservices",
            token,
            Some(json!({"name": "HQ", "baseUrl": sim})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{listener}");
    let endpoint = app
        .create_endpoint(
            token,
            json!({
                "name": "Boardroom", "ipAddress": address, "port": 22,
                "controlProtocol": "TANDBERG_SSH", "listenerServiceId": listener["id"],
                "username": "admin", "password": "room-pw-secret"
            }),
        )
        .await;
    Room {
        sim,
        _handle: handle,
        endpoint: endpoint["id"].as_str().unwrap().to_owned(),
    }
}

pub async fn sim_state(app: &TestApp, room: &Room, address: &str) -> Value {
    let response = app
        .client
        .get(format!("{}/sim/endpoints/{address}", room.sim))
        .send()
        .await
        .unwrap();
    json(response).await.1
}

/// The room starts a call by itself: a command straight to the simulator, not via roomlink.
pub async fn call_started_at_the_room(app: &TestApp, room: &Room, address: &str) {
    let direct = app
        .client
        .post(format!("{}/v1/commands/join", room.sim))
        .bearer_auth("any")
        .json(&json!({"endpoint": {"id": room.endpoint, "name": "Boardroom", "ipAddress": address, "controlProtocol": "TANDBERG_SSH"}, "credential": {"kind": "none"}, "params": {}}))
        .send()
        .await
        .unwrap();
    assert!(direct.status().is_success(), "{:?}", direct.text().await);
}

async fn post(app: &TestApp, token: &str, path: String) -> (StatusCode, Value) {
    app.call(Method::POST, &path, token, None).await
}

async fn commands_change_the_simulated_room(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let room = room(&app, &rw, SimConfig::default(), "127.77.0.1").await;
    let id = &room.endpoint;

    let (status, body) = post(
        &app,
        &ro,
        format!("/api/endpoints/{id}/join?meetingid=123456789&passcode=4321"),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::NO_CONTENT,
        "read-only callers may control: {body}"
    );
    let state = sim_state(&app, &room, "127.77.0.1").await;
    assert_eq!(state["callActive"], true);
    assert_eq!(state["lastMeetingId"], "123456789");
    assert_eq!(state["lastPasscode"], "4321");
    assert_eq!(state["lastCluster"], "PROD");
    assert_eq!(state["lastMeetingType"], "MEETME");
    assert_eq!(
        state["lastCredential"], "plain",
        "the service-key seal was opened for the listener"
    );

    assert_eq!(
        post(
            &app,
            &rw,
            format!("/api/endpoints/{id}/senddtmf?dtmfString=12%23*")
        )
        .await
        .0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        sim_state(&app, &room, "127.77.0.1").await["dtmfReceived"],
        "12#*"
    );
    assert_eq!(
        post(&app, &rw, format!("/api/endpoints/{id}/mutemicrophone"))
            .await
            .0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        sim_state(&app, &room, "127.77.0.1").await["microphoneMuted"],
        true
    );

    // The command's result is in the status cache at once.
    let (status, one) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{id}/status"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(one["endpointId"], id.as_str());
    assert_eq!(one["callActive"], true);
    assert_eq!(one["microphoneMuted"], true);
    assert!(one["timestamp"].as_i64().unwrap() > 1_700_000_000_000);

    assert_eq!(
        post(&app, &rw, format!("/api/endpoints/{id}/unmutemicrophone"))
            .await
            .0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        post(&app, &rw, format!("/api/endpoints/{id}/hangup"))
            .await
            .0,
        StatusCode::NO_CONTENT
    );
    let state = sim_state(&app, &room, "127.77.0.1").await;
    assert_eq!(state["callActive"], false);
    assert_eq!(state["microphoneMuted"], false);

    // No meeting id dials the IVR.
    assert_eq!(
        post(&app, &rw, format!("/api/endpoints/{id}/join")).await.0,
        StatusCode::NO_CONTENT
    );
    assert!(sim_state(&app, &room, "127.77.0.1").await["lastMeetingId"].is_null());

    // Every endpoint is listed, observed or not.
    let idle = app
        .create_endpoint(&rw, json!({"name": "Never observed"}))
        .await;
    let (status, all) = app
        .call(Method::GET, "/api/endpoints/status", &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0]["callActive"], true);
    assert_eq!(all[1]["endpointId"], idle["id"]);
    assert_eq!(all[1]["timestamp"], 0, "never observed");
}

async fn parameters_are_checked_before_anything_is_sent(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let room = room(&app, &rw, SimConfig::default(), "127.77.0.2").await;
    let id = &room.endpoint;
    for bad in ["12a", "", "1%202"] {
        let (status, body) = post(
            &app,
            &rw,
            format!("/api/endpoints/{id}/senddtmf?dtmfString={bad}"),
        )
        .await;
        assert_error(status, &body, 400, "InvalidDtmf", 1782937295);
    }
    let (status, body) = post(&app, &rw, format!("/api/endpoints/{id}/senddtmf")).await;
    assert_error(status, &body, 400, "InvalidDtmf", 1782937295);
    for query in [
        "meetingid=12ab",
        "passcode=1",
        "meetingid=1&cluster=DEV",
        "meetingid=1&meetingtype=SKYPE",
    ] {
        let (status, body) = post(&app, &rw, format!("/api/endpoints/{id}/join?{query}")).await;
        assert_error(status, &body, 400, "Invalid", 1782937293);
    }
    assert_eq!(
        sim_state(&app, &room, "127.77.0.2").await["commands"],
        0,
        "nothing reached the room"
    );
}

async fn each_fault_gives_its_catalog_error(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let room = room(&app, &rw, SimConfig::default(), "127.77.0.3").await;
    let id = &room.endpoint;
    let faults = [
        ("unreachable", 504, "ExternalSystemUnreachable", 1436062998),
        ("timeout", 504, "ExternalSystemTimedOut", 594923066),
        ("bad_credentials", 502, "AuthenticationFailed", 1780355652),
        ("misprovisioned", 502, "IncorrectlyProvisioned", 1917844536),
        ("server_error", 503, "Unavailable", 2042734031),
        ("ignore", 500, "BadCommand", 47328961),
    ];
    for (fault, status, name, code) in faults {
        let set = app
            .client
            .put(format!("{}/sim/endpoints/127.77.0.3/fault", room.sim))
            .json(&json!({"fault": fault}))
            .send()
            .await
            .unwrap();
        assert!(set.status().is_success());
        let (got, body) = post(&app, &rw, format!("/api/endpoints/{id}/join?meetingid=1")).await;
        assert_error(got, &body, status, name, code);
        let keys: Vec<&str> = body["errorDetails"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let catalog = roomlink_domain::ErrorKind::ALL
            .iter()
            .find(|k| k.name() == name)
            .unwrap();
        for key in &keys {
            assert!(catalog.detail_keys().contains(key), "{name}: {key}");
        }
        if let Some(causes) = body["errorDetails"].get("causes") {
            assert!(causes.is_array() && causes.as_array().unwrap().iter().all(Value::is_string));
        }
        assert!(!body.to_string().contains("room-pw-secret"), "{body}");
    }
    app.client
        .delete(format!("{}/sim/endpoints/127.77.0.3/fault", room.sim))
        .send()
        .await
        .unwrap();
    assert_eq!(
        post(&app, &rw, format!("/api/endpoints/{id}/hangup"))
            .await
            .0,
        StatusCode::NO_CONTENT
    );

    // Each failure was recorded for monitoring, newest first.
    let (status, failures) = app.call(Method::GET, "/api/failures", &rw, None).await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<_> = failures
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["errorName"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.len(), faults.len());
    assert_eq!(names[0], "BadCommand");
    assert_eq!(failures[0]["subjectClass"], "ListenerService");
    assert!(!failures.to_string().contains("room-pw-secret"));
}

async fn listener_failures_and_missing_listeners(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    // A listener that is not running: a closed port on loopback.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (_, listener) = app
        .call(
            Method::POST,
            "/api/listenerservices",
            &rw,
            Some(json!({"name": "Down", "baseUrl": format!("http://{closed}")})),
        )
        .await;
    let endpoint = app
        .create_endpoint(&rw, json!({"name": "R", "ipAddress": "127.77.0.4", "controlProtocol": "TANDBERG_SSH", "listenerServiceId": listener["id"]}))
        .await;
    let id = endpoint["id"].as_str().unwrap();
    let answered = tokio::time::timeout(
        std::time::Duration::from_secs(8),
        post(&app, &rw, format!("/api/endpoints/{id}/hangup")),
    )
    .await
    .expect("a stopped listener is reported without waiting for the command timeout");
    assert_error(answered.0, &answered.1, 503, "ListenerOffline", 208581637);
    assert_eq!(
        answered.1["errorDetails"]["listenerServiceId"],
        listener["id"]
    );

    let orphan = app.create_endpoint(&rw, json!({"name": "Orphan"})).await;
    let oid = orphan["id"].as_str().unwrap();
    let (status, body) = post(&app, &rw, format!("/api/endpoints/{oid}/join")).await;
    assert_error(
        status,
        &body,
        500,
        "EndpointHasNoListenerService",
        1881171133,
    );
    assert_eq!(body["errorDetails"]["commandName"], "join");
    assert_eq!(body["errorDetails"]["endpointName"], "Orphan");

    // An old listener: commands newer than it are refused before anything is sent.
    let old = room(
        &app,
        &rw,
        SimConfig {
            version: "1.3.0".parse().unwrap(),
            ..SimConfig::default()
        },
        "127.77.0.5",
    )
    .await;
    let (status, body) = post(
        &app,
        &rw,
        format!("/api/endpoints/{}/senddtmf?dtmfString=1", old.endpoint),
    )
    .await;
    assert_error(status, &body, 501, "ForwardsCompatibility", 2123224504);
    assert_eq!(body["errorDetails"]["listenerServiceVersion"], "1.3.0");
    assert_eq!(
        post(&app, &rw, format!("/api/endpoints/{}/join", old.endpoint))
            .await
            .0,
        StatusCode::NO_CONTENT
    );

    // Another enterprise's endpoint does not exist for the caller.
    let (other, _) = app.tenant("globex").await;
    let (status, body) = post(
        &app,
        &other,
        format!("/api/endpoints/{}/join", old.endpoint),
    )
    .await;
    assert_error(status, &body, 404, "NotFound", 1217481661);
}

async fn passwords_sealed_to_the_enterprise_key(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let secret = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
    let public = base64::engine::general_purpose::STANDARD.encode(secret.public_key().as_bytes());
    let (status, enterprise) = app
        .call(
            Method::PUT,
            "/api/enterprises/self",
            &rw,
            Some(json!({"publicKey": public})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{enterprise}");
    assert_eq!(enterprise["publicKey"], public.as_str());
    let (status, body) = app
        .call(
            Method::PUT,
            "/api/enterprises/self",
            &rw,
            Some(json!({"publicKey": "not a key"})),
        )
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);

    let config = SimConfig {
        private_key: Some(secret),
        ..SimConfig::default()
    };
    let room = room(&app, &rw, config, "127.77.0.6").await;
    let id = &room.endpoint;
    assert_eq!(
        post(&app, &rw, format!("/api/endpoints/{id}/join")).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        sim_state(&app, &room, "127.77.0.6").await["lastCredential"],
        "sealed-opened"
    );

    // A new key: the stored password is sealed to the old one until it is entered again.
    let newer = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
    let newer_public =
        base64::engine::general_purpose::STANDARD.encode(newer.public_key().as_bytes());
    app.call(
        Method::PUT,
        "/api/enterprises/self",
        &rw,
        Some(json!({"publicKey": newer_public})),
    )
    .await;
    let (status, body) = post(&app, &rw, format!("/api/endpoints/{id}/join")).await;
    assert_error(status, &body, 500, "EncryptionUpdated", 1065375345);
    let (status, _) = app
        .call(
            Method::PATCH,
            &format!("/api/endpoints/{id}"),
            &rw,
            Some(json!({"password": "room-pw-again"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        post(&app, &rw, format!("/api/endpoints/{id}/hangup"))
            .await
            .0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        sim_state(&app, &room, "127.77.0.6").await["lastCredential"],
        "sealed-unopened",
        "sealed to the new key the simulator lacks"
    );
}

async fn polling_refreshes_the_status_cache(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let room = room(&app, &rw, SimConfig::default(), "127.77.0.7").await;
    call_started_at_the_room(&app, &room, "127.77.0.7").await;
    let (_, before) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{}/status", room.endpoint),
            &ro,
            None,
        )
        .await;
    assert_eq!(before["timestamp"], 0);
    assert_eq!(app.poll_now(&ro, true).await, 1);
    let (_, after) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{}/status", room.endpoint),
            &ro,
            None,
        )
        .await;
    assert_eq!(after["callActive"], true);
    assert!(after["timestamp"].as_i64().unwrap() > 0);
}

/// Each poll round asks every inbound listener what it is; the listeners API shows the answer
/// (health, version, last contact) or why there was none.
async fn inbound_listeners_are_checked_each_round(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let (answering, _a) = simulator(SimConfig::default()).await;
    let (refusing, _b) = simulator(SimConfig {
        secret: Some("the-listener-has-another-secret".into()),
        ..SimConfig::default()
    })
    .await;
    // A port that was free a moment ago: nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut ids = Vec::new();
    for (name, url) in [("up", &answering), ("refusing", &refusing), ("down", &down)] {
        let (status, created) = app
            .call(
                Method::POST,
                "/api/listenerservices",
                &rw,
                Some(json!({"name": name, "baseUrl": url})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{created}");
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    let shown = |listed: &Value, id: &str| -> Value {
        let found = listed.as_array().unwrap().iter().find(|l| l["id"] == id);
        found.cloned().unwrap()
    };
    let (_, before) = app
        .call(Method::GET, "/api/listenerservices", &ro, None)
        .await;
    for id in &ids {
        let l = shown(&before, id);
        assert_eq!(l["health"], "unknown", "{l}");
        assert_eq!(l["checkedAt"], Value::Null, "{l}");
        assert_eq!(l["lastContact"], Value::Null, "{l}");
        assert_eq!(l["connected"], Value::Null, "inbound: {l}");
    }

    let enterprise = app.enterprise_of(&ro).await;
    let checked = app
        .services
        .control
        .check_listeners(&enterprise)
        .await
        .unwrap();
    assert_eq!(checked, 3);

    let (status, after) = app
        .call(Method::GET, "/api/listenerservices", &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let up = shown(&after, &ids[0]);
    assert_eq!(up["health"], "online", "{up}");
    assert_eq!(
        up["listenerVersion"],
        roomlink_listener_sim::version::DEFAULT_VERSION.to_string(),
        "{up}"
    );
    assert!(up["lastContact"].as_i64().unwrap() > 0, "{up}");
    assert_eq!(up["lastContact"], up["checkedAt"], "{up}");
    assert_eq!(up["checkError"], Value::Null, "{up}");

    let refused = shown(&after, &ids[1]);
    assert_eq!(refused["health"], "offline", "{refused}");
    assert_eq!(
        refused["checkError"]["errorName"], "ListenerServiceException",
        "{refused}"
    );
    assert!(
        refused["checkError"]["message"]
            .as_str()
            .unwrap()
            .contains("401"),
        "{refused}"
    );
    assert_eq!(refused["lastContact"], Value::Null, "{refused}");

    let gone = shown(&after, &ids[2]);
    assert_eq!(gone["health"], "offline", "{gone}");
    assert_eq!(gone["checkError"]["errorName"], "ListenerOffline", "{gone}");
    assert!(gone["checkedAt"].as_i64().unwrap() > 0, "{gone}");

    // One listener read alone shows the same; no check wrote a failure.
    let (_, one) = app
        .call(
            Method::GET,
            &format!("/api/listenerservices/{}", ids[0]),
            &ro,
            None,
        )
        .await;
    assert_eq!(one["health"], "online", "{one}");
    let (_, failures) = app.call(Method::GET, "/api/failures", &ro, None).await;
    assert_eq!(failures.as_array().map(Vec::len), Some(0), "{failures}");
}

on_every_backend!(
    inbound_listeners_are_checked_each_round,
    commands_change_the_simulated_room,
    parameters_are_checked_before_anything_is_sent,
    each_fault_gives_its_catalog_error,
    listener_failures_and_missing_listeners,
    passwords_sealed_to_the_enterprise_key,
    polling_refreshes_the_status_cache,
);
