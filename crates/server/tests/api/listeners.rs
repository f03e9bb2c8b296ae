use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error};
use reqwest::{Method, StatusCode};
use serde_json::json;

async fn listener_records_and_their_secret(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let (status, created) = app
        .call(
            Method::POST,
            "/api/listenerservices",
            &rw,
            Some(json!({"name": "HQ", "baseUrl": "http://127.0.0.1:9001", "location": "DC1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let secret = created["secret"]
        .as_str()
        .expect("a generated secret, shown once")
        .to_owned();
    assert!(secret.len() >= 32);
    let id = created["id"].as_str().unwrap().to_owned();

    let (status, listed) = app
        .call(Method::GET, "/api/listenerservices", &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert!(!listed.to_string().contains(&secret), "never listed");
    let (_, fetched) = app
        .call(
            Method::GET,
            &format!("/api/listenerservices/{id}"),
            &ro,
            None,
        )
        .await;
    assert!(fetched.get("secret").is_none());
    assert_eq!(fetched["location"], "DC1");

    // A chosen secret is not echoed back.
    let (status, chosen) = app
        .call(Method::POST, "/api/listenerservices", &rw, Some(json!({"name": "B", "baseUrl": "http://127.0.0.1:9002", "secret": "a-chosen-secret-of-length"})))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(chosen.get("secret").is_none());

    let (status, replaced) = app
        .call(
            Method::PUT,
            &format!("/api/listenerservices/{id}"),
            &rw,
            Some(json!({"name": "HQ2", "baseUrl": "http://127.0.0.1:9003"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert!(replaced["location"].is_null());

    // Endpoints reference it; it cannot be deleted while they do.
    let endpoint = app
        .create_endpoint(&rw, json!({"name": "Room", "listenerServiceId": id}))
        .await;
    assert_eq!(endpoint["listenerServiceId"], id.as_str());
    let (status, error) = app
        .call(
            Method::DELETE,
            &format!("/api/listenerservices/{id}"),
            &rw,
            None,
        )
        .await;
    assert_error(status, &error, 400, "Invalid", 1782937293);
    let (status, error) = app
        .call(
            Method::POST,
            "/api/endpoints",
            &rw,
            Some(json!({"name": "Room", "listenerServiceId": "ffffffffffffffffffffffff"})),
        )
        .await;
    assert_error(status, &error, 400, "Invalid", 1782937293);
    let eid = endpoint["id"].as_str().unwrap();
    app.call(Method::DELETE, &format!("/api/endpoints/{eid}"), &rw, None)
        .await;
    let (status, _) = app
        .call(
            Method::DELETE,
            &format!("/api/listenerservices/{id}"),
            &rw,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, error) = app
        .call(
            Method::GET,
            &format!("/api/listenerservices/{id}"),
            &rw,
            None,
        )
        .await;
    assert_error(status, &error, 404, "NotFound", 1217481661);
}

on_every_backend!(listener_records_and_their_secret);
