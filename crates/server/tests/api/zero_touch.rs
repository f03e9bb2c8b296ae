//! Zero Touch pairing as a companion device uses it, against the real simulator.

use crate::control::{room, sim_state};
use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use roomlink_domain::ports::Clock;
use roomlink_listener_sim::SimConfig;
use serde_json::{Value, json};

async fn current_code(app: &TestApp, token: &str, endpoint: &str) -> Value {
    let (status, code) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{endpoint}/currentpairingcode"),
            token,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{code}");
    code
}

async fn zero_touch_token(app: &TestApp, platform_token: &str, code: &str) -> (StatusCode, Value) {
    let path = format!(
        "/api/auth/accesstokens?platformaccesstoken={platform_token}&code={code}&clientDeviceType=IOS_NATIVE"
    );
    json(app.request(Method::POST, &path).send().await.unwrap()).await
}

async fn paired(app: &TestApp, token: &str, endpoint: &str) -> Vec<Value> {
    let (status, list) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{endpoint}/paired"),
            token,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list.as_array().unwrap().clone()
}

async fn a_companion_device_pairs_drives_the_room_and_unpairs(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let room = room(&app, &rw, SimConfig::default(), "127.77.1.1").await;
    let id = room.endpoint.as_str();

    // An admin (or a read-only caller) reads the room's current code; it is stable.
    let code = current_code(&app, &ro, id).await;
    assert_eq!(
        code.as_object().unwrap().len(),
        2,
        "only id and code: {code}"
    );
    assert_eq!(current_code(&app, &rw, id).await, code);
    let code_value = code["code"].as_str().unwrap();

    // A platform user with Zero Touch turns it into a limited token.
    let (status, token) = zero_touch_token(&app, "plat-token-alice", code_value).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    assert_eq!(token["roles"], json!(["ROLE_PAIRINGCODE"]));
    assert_eq!(token["pairingCodeId"], code["id"]);
    assert_eq!(token["pairingCodeEndpointId"], id);
    assert_eq!(token["clientDeviceType"], "IOS_NATIVE");
    assert_eq!(token["platformId"], 1001);
    assert_eq!(token["creator"], "alice@example.com");
    let lifetime =
        token["expirationDate"].as_i64().unwrap() - token["creationDate"].as_i64().unwrap();
    assert_eq!(lifetime, 86_400_000, "one day");
    let zt = token["accessToken"].as_str().unwrap().to_owned();

    // Refusals: no feature, wrong code.
    let (status, body) = zero_touch_token(&app, "plat-token-bob", code_value).await;
    assert_error(status, &body, 403, "Forbidden", 1900000001);
    let (status, body) = zero_touch_token(&app, "plat-token-alice", "WRONGCODE2").await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    // An empty code is a code lost on the way, not a request for a full-rights token.
    let (status, body) = zero_touch_token(&app, "plat-token-alice", "").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["errorName"], "Invalid", "{body}");
    let message = body["errorMessage"].as_str().unwrap();
    assert!(message.contains("code is empty"), "{body}");

    // Nobody is paired before the first use.
    assert!(paired(&app, &rw, id).await.is_empty());

    // The suggested order: the pairing code, the status, join, tones, mute, hang up.
    let (status, view) = app
        .call(
            Method::GET,
            &format!(
                "/api/endpoints/{}/pairingcode",
                code["id"].as_str().unwrap()
            ),
            &zt,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["code"], code["code"]);
    assert_eq!(view["endpoint"]["id"], id);
    assert!(view["endpoint"]["password"].is_null());
    assert!(
        view["endpointCapabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("JOIN"))
    );
    let first_use = app.clock.now_ms();
    let listed = paired(&app, &rw, id).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["username"], "alice@example.com");
    assert_eq!(listed[0]["firstName"], "Alice");
    assert_eq!(listed[0]["lastName"], "Liddell");
    assert_eq!(listed[0]["clientDeviceType"], "IOS_NATIVE");
    assert_eq!(listed[0]["endpointId"], id);
    assert_eq!(listed[0]["creationDate"], first_use);
    assert_eq!(listed[0]["heartbeatDate"], first_use);

    app.clock.advance(30_000);
    let (status, _) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{id}/status"),
            &zt,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    for path in [
        format!("/api/endpoints/{id}/join?meetingid=111222333"),
        format!("/api/endpoints/{id}/senddtmf?dtmfString=9"),
        format!("/api/endpoints/{id}/mutemicrophone"),
        format!("/api/endpoints/{id}/unmutemicrophone"),
        format!("/api/endpoints/{id}/hangup"),
    ] {
        let (status, body) = app.call(Method::POST, &path, &zt, None).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{path}: {body}");
    }
    let state = sim_state(&app, &room, "127.77.1.1").await;
    assert_eq!(state["lastMeetingId"], "111222333");
    assert_eq!(state["dtmfReceived"], "9");

    // The heartbeat moved; the pairing began at the first use.
    let listed = paired(&app, &rw, id).await;
    assert_eq!(listed[0]["creationDate"], first_use);
    assert_eq!(listed[0]["heartbeatDate"], first_use + 30_000);

    // One minute without use: gone (59,999 ms is not yet a minute).
    app.clock.advance(59_999);
    assert_eq!(paired(&app, &rw, id).await.len(), 1);
    app.clock.advance(1);
    assert!(paired(&app, &rw, id).await.is_empty());

    // A new use pairs again; deleting the token unpairs at once and ends the token.
    app.call(
        Method::GET,
        &format!("/api/endpoints/{id}/status"),
        &zt,
        None,
    )
    .await;
    assert_eq!(paired(&app, &rw, id).await.len(), 1);
    let (status, mine) = app
        .call(
            Method::GET,
            &format!("/api/auth/accesstokens/{zt}"),
            &zt,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(mine["roles"], json!(["ROLE_PAIRINGCODE"]));
    let (status, _) = app
        .call(
            Method::DELETE,
            &format!("/api/auth/accesstokens/{zt}"),
            &zt,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(paired(&app, &rw, id).await.is_empty());
    let (status, body) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{id}/status"),
            &zt,
            None,
        )
        .await;
    assert_error(status, &body, 401, "BadCredentialsException", 1285563821);
}

async fn zero_touch_tokens_are_refused_everything_else(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let mine = room(&app, &rw, SimConfig::default(), "127.77.1.2").await;
    let other = room(&app, &rw, SimConfig::default(), "127.77.1.3").await;
    let code = current_code(&app, &rw, &mine.endpoint).await;
    let other_code = current_code(&app, &rw, &other.endpoint).await;
    let (_, token) =
        zero_touch_token(&app, "plat-token-alice", code["code"].as_str().unwrap()).await;
    let zt = token["accessToken"].as_str().unwrap();
    let (a, b) = (mine.endpoint.as_str(), other.endpoint.as_str());
    let oc = other_code["id"].as_str().unwrap();
    let refused = [
        (Method::GET, "/api/endpoints".to_owned(), None),
        (Method::GET, format!("/api/endpoints/{a}"), None),
        (
            Method::POST,
            "/api/endpoints".to_owned(),
            Some(json!({"name": "x"})),
        ),
        (
            Method::PUT,
            format!("/api/endpoints/{a}"),
            Some(json!({"name": "x"})),
        ),
        (
            Method::PATCH,
            format!("/api/endpoints/{a}"),
            Some(json!({"name": "x"})),
        ),
        (Method::DELETE, format!("/api/endpoints/{a}"), None),
        (Method::GET, "/api/endpoints/status".to_owned(), None),
        (
            Method::GET,
            format!("/api/endpoints/{a}/currentpairingcode"),
            None,
        ),
        (Method::GET, "/api/auth/accesstokens".to_owned(), None),
        (Method::GET, format!("/api/auth/accesstokens/{rw}"), None),
        (Method::DELETE, format!("/api/auth/accesstokens/{rw}"), None),
        (Method::GET, "/api/listenerservices".to_owned(), None),
        (Method::GET, "/api/enterprises/self".to_owned(), None),
        (Method::GET, "/api/failures".to_owned(), None),
        (Method::POST, format!("/api/endpoints/{b}/join"), None),
        (Method::POST, format!("/api/endpoints/{b}/hangup"), None),
        (Method::GET, format!("/api/endpoints/{b}/status"), None),
        (Method::GET, format!("/api/endpoints/{b}/paired"), None),
        (
            Method::GET,
            format!("/api/endpoints/{oc}/pairingcode"),
            None,
        ),
    ];
    for (method, path, body) in refused {
        let (status, error) = app.call(method.clone(), &path, zt, body).await;
        if status == StatusCode::NOT_FOUND {
            // Another enterprise's token is not even found; that is refusal too.
            assert_error(status, &error, 404, "NotFound", 1217481661);
        } else {
            assert_error(status, &error, 403, "Forbidden", 1900000001);
            assert_eq!(
                error["errorDetails"]["roles"],
                json!(["ROLE_PAIRINGCODE"]),
                "{method} {path}"
            );
        }
    }
    let response = app
        .with_token(Method::PUT, "/api/endpoints/csv", zt)
        .header("Content-Type", "text/csv")
        .body("id,name,password\n,x,pw\n")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        sim_state(&app, &other, "127.77.1.3").await["commands"],
        0,
        "the other room was never reached"
    );
    let (_, list) = app.call(Method::GET, "/api/endpoints", &rw, None).await;
    assert_eq!(list.as_array().unwrap().len(), 2, "nothing was written");
    assert!(paired(&app, &rw, b).await.is_empty());
}

async fn rotating_codes_expire_and_are_replaced(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let endpoint = app
        .create_endpoint(
            &rw,
            json!({"name": "Hot desk", "zeroTouchType": "ROTATING"}),
        )
        .await;
    let fixed = app
        .create_endpoint(&rw, json!({"name": "Board", "zeroTouchType": "STATIC"}))
        .await;
    let (id, fixed_id) = (
        endpoint["id"].as_str().unwrap(),
        fixed["id"].as_str().unwrap(),
    );
    let first = current_code(&app, &rw, id).await;
    let fixed_code = current_code(&app, &rw, fixed_id).await;
    app.clock.advance(86_400_000 - 1);
    assert_eq!(
        current_code(&app, &rw, id).await,
        first,
        "still valid one ms before a day"
    );
    app.clock.advance(1);
    let (status, body) =
        zero_touch_token(&app, "plat-token-alice", first["code"].as_str().unwrap()).await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    let second = current_code(&app, &rw, id).await;
    assert_ne!(second["code"], first["code"]);
    assert_ne!(second["id"], first["id"]);
    assert_eq!(
        current_code(&app, &rw, fixed_id).await,
        fixed_code,
        "STATIC codes never rotate"
    );
    let (status, _) =
        zero_touch_token(&app, "plat-token-alice", second["code"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK);
}

on_every_backend!(
    a_companion_device_pairs_drives_the_room_and_unpairs,
    zero_touch_tokens_are_refused_everything_else,
    rotating_codes_expire_and_are_replaced,
);
