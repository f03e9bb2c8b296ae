//! Values the OpenAPI document declares exactly, as the service takes them: where the
//! service used to accept more than any pattern could say (blanks around a key or a duration,
//! numeric text for elevation) or less than JSON Schema means (`22.0` as an integer).

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use base64::Engine;
use reqwest::{Method, StatusCode};
use roomlink_domain::access::Role;
use serde_json::json;

async fn numbers_are_json_numbers(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let created = app
        .create_endpoint(&rw, json!({"name": "Room", "port": 22.0, "elevation": ""}))
        .await;
    assert_eq!(created["port"], 22);
    assert!(created["elevation"].is_null());
    let created = app
        .create_endpoint(&rw, json!({"name": "Room 2", "port": "0443"}))
        .await;
    assert_eq!(created["port"], 443);
    for port in [json!(" 80"), json!("+80"), json!(22.5)] {
        let (status, body) = app
            .call(
                Method::POST,
                "/api/endpoints",
                &rw,
                Some(json!({"name": "R", "port": port})),
            )
            .await;
        assert_error(status, &body, 400, "Invalid", 1782937293);
    }
    let (status, body) = app
        .call(
            Method::POST,
            "/api/endpoints",
            &rw,
            Some(json!({"name": "R", "elevation": "102.5"})),
        )
        .await;
    assert_error(status, &body, 500, "JsonMappingException", 12789219);
    assert_eq!(body["errorDetails"]["pathReference"], "elevation");
}

async fn host_names_count_their_final_dot(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let name = format!("{0}.{0}.{0}.{1}", "a".repeat(63), "b".repeat(61));
    app.create_endpoint(&rw, json!({"name": "R", "ipAddress": name}))
        .await;
    let (status, body) = app
        .call(
            Method::POST,
            "/api/endpoints",
            &rw,
            Some(json!({"name": "R", "ipAddress": format!("{name}.")})),
        )
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
}

async fn public_keys_are_taken_as_written(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let key = base64::engine::general_purpose::STANDARD.encode([9u8; 32]);
    for padded in [format!(" {key}"), format!("{key}\n"), "  ".to_owned()] {
        let (status, body) = app
            .call(
                Method::PUT,
                "/api/enterprises/self",
                &rw,
                Some(json!({"publicKey": padded})),
            )
            .await;
        assert_error(status, &body, 400, "Invalid", 1782937293);
    }
    // The properties of a GET are ignored, so an enterprise can be PUT back as read.
    let (_, mut enterprise) = app
        .call(Method::GET, "/api/enterprises/self", &rw, None)
        .await;
    enterprise["publicKey"] = json!(key);
    enterprise["name"] = json!("renamed");
    let (status, body) = app
        .call(Method::PUT, "/api/enterprises/self", &rw, Some(enterprise))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["publicKey"], key.as_str());
    assert_eq!(body["name"], "acme");
    let (status, body) = app
        .call(
            Method::PUT,
            "/api/enterprises/self",
            &rw,
            Some(json!({"publicKey": ""})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["publicKey"].is_null(), "\"\" removes the key");
}

async fn durations_are_taken_as_written(app: TestApp) {
    app.enterprise("acme", None).await;
    app.user("acme", "ops", Role::ReadWrite).await;
    for (duration, expected) in [("%207d", 400), ("7d%20", 400), ("", 200), ("7D", 200)] {
        let response = app
            .request(
                Method::POST,
                &format!("/api/auth/accesstokens?duration={duration}"),
            )
            .basic_auth("ops", Some("ops-password"))
            .send()
            .await
            .unwrap();
        let (status, body) = json(response).await;
        assert_eq!(status.as_u16(), expected, "{duration}: {body}");
    }
}

async fn outbound_listeners_take_an_empty_base_url(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let (status, body) = app
        .call(
            Method::POST,
            "/api/listenerservices",
            &rw,
            Some(json!({"name": "Site", "connection": "outbound", "baseUrl": ""})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["baseUrl"].is_null());
}

on_every_backend!(
    numbers_are_json_numbers,
    host_names_count_their_final_dot,
    public_keys_are_taken_as_written,
    durations_are_taken_as_written,
    outbound_listeners_take_an_empty_base_url,
);
