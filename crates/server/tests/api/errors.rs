use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use serde_json::json;

async fn framework_failures_are_catalog_bodies(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    // Unknown route (authenticated or not).
    // (`/` leads to the console: tests/api/console.rs.)
    for path in ["/api/nothing-here", "/nothing-here", "/api/endpoints/a/b/c"] {
        let (status, body) = app.call(Method::GET, path, &rw, None).await;
        assert_error(status, &body, 404, "NotFound", 1217481661);
    }
    // Wrong method.
    let response = app
        .with_token(Method::DELETE, "/api/endpoints", &rw)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["allow"], "GET, POST");
    let (status, body) = json(response).await;
    assert_error(status, &body, 405, "MethodNotAllowed", 1900000002);
    assert_eq!(body["errorDetails"]["allowed"], json!(["GET", "POST"]));
    // A 405 a handler answers names the resource's methods too (`allowed` is the override's).
    let response = app
        .with_token(Method::PUT, "/api/endpoints/0123456789abcdef01234567", &rw)
        .header("X-HTTP-Method-Override", "DELETE")
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["allow"], "GET, PUT, PATCH, DELETE");
    let (status, body) = json(response).await;
    assert_error(status, &body, 405, "MethodNotAllowed", 1900000002);
    assert_eq!(body["errorDetails"]["allowed"], json!(["PATCH"]));
    // Malformed JSON.
    let response = app
        .with_token(Method::POST, "/api/endpoints", &rw)
        .header("Content-Type", "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_error(status, &body, 500, "JsonParseException", 12789218);
    // JSON of the wrong shape.
    let (status, body) = app
        .call(
            Method::POST,
            "/api/endpoints",
            &rw,
            Some(json!({"name": "x", "port": true})),
        )
        .await;
    assert_error(status, &body, 500, "JsonMappingException", 12789219);
    assert_eq!(body["errorDetails"]["pathReference"], "port");
    let (status, body) = app
        .call(Method::POST, "/api/endpoints", &rw, Some(json!([1, 2])))
        .await;
    assert_error(status, &body, 500, "JsonMappingException", 12789219);
    // Unsupported content type.
    let response = app
        .with_token(Method::POST, "/api/endpoints", &rw)
        .header("Content-Type", "text/plain")
        .body("name=x")
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_error(status, &body, 415, "UnsupportedMediaType", 1900000003);
    // Oversized body.
    let huge = json!({"name": "x", "location": "y".repeat(300 * 1024)});
    let (status, body) = app
        .call(Method::POST, "/api/endpoints", &rw, Some(huge))
        .await;
    assert_error(status, &body, 413, "PayloadTooLarge", 1900000004);
}

async fn every_response_has_a_request_id(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let ok = app
        .with_token(Method::GET, "/api/endpoints", &rw)
        .send()
        .await
        .unwrap();
    let generated = ok.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(generated.len(), 24);
    let failed = app
        .request(Method::GET, "/api/endpoints")
        .header("X-Request-Id", "trace-42")
        .send()
        .await
        .unwrap();
    assert_eq!(failed.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        failed.headers()["x-request-id"],
        "trace-42",
        "a client's id is kept"
    );
}

async fn health_and_readiness(app: TestApp) {
    let (status, body) = json(app.request(Method::GET, "/healthz").send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "ok");
    let (status, body) = json(app.request(Method::GET, "/readyz").send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["status"], "ready");
}

/// A paging parameter given twice is refused: the second value would otherwise go unread.
async fn a_paging_parameter_given_twice_is_invalid(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    for path in [
        "/api/endpoints/?cursor=73&limit=6&limit=%C3%A5M",
        "/api/endpoints?limit=6&limit=7",
        "/api/endpoints?cursor=1&cursor=2",
        "/api/auditlog?limit=5&limit=x",
        "/api/auditlog?cursor=9&cursor=8",
    ] {
        let (status, body) = app.call(Method::GET, path, &rw, None).await;
        assert_error(status, &body, 400, "Invalid", 1782937293);
        assert!(
            body["errorMessage"]
                .as_str()
                .unwrap()
                .contains("given more than once"),
            "{path}: {body}"
        );
    }
    for once in ["/api/endpoints?limit=6", "/api/auditlog?limit=5"] {
        let (status, body) = app.call(Method::GET, once, &rw, None).await;
        assert_eq!(status, StatusCode::OK, "{once}: {body}");
    }
}

on_every_backend!(
    framework_failures_are_catalog_bodies,
    every_response_has_a_request_id,
    health_and_readiness,
    a_paging_parameter_given_twice_is_invalid
);
