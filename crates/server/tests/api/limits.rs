//! Abuse limits: request rates per address and per token, failed-authentication throttling,
//! header and body bounds. Each answer is a catalog body; 429s carry `Retry-After`.

use crate::helpers::{Backend, TestApp, assert_error, json};
use reqwest::{Method, StatusCode};

/// Rates so slow that no token comes back during a test: only the bursts count.
const SLOW: &str = "0.001";

async fn limited_app(settings: &[(&str, &str)]) -> TestApp {
    TestApp::spawn_with(Backend::Sqlite, settings)
        .await
        .expect("sqlite app")
}

fn retry_after(response: &reqwest::Response) -> u64 {
    response
        .headers()
        .get("retry-after")
        .expect("Retry-After")
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_over_its_rate_gets_429_with_retry_after_and_others_do_not() {
    let app = limited_app(&[
        ("ROOMLINK__LIMITS__TOKEN_RATE_PER_SEC", SLOW),
        ("ROOMLINK__LIMITS__TOKEN_BURST", "5"),
    ])
    .await;
    let (rw, ro) = app.tenant("acme").await;
    for _ in 0..5 {
        let (status, body) = app.call(Method::GET, "/api/endpoints", &rw, None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let response = app
        .with_token(Method::GET, "/api/endpoints", &rw)
        .send()
        .await
        .unwrap();
    assert!(retry_after(&response) >= 1);
    let (status, body) = json(response).await;
    assert_error(status, &body, 429, "TooManyRequests", 1900000005);
    assert_eq!(body["errorDetails"]["limit"], "token");
    // Another token of the same client is not held back.
    let (status, _) = app.call(Method::GET, "/api/endpoints", &ro, None).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_over_its_rate_gets_429_before_authentication() {
    let app = limited_app(&[
        ("ROOMLINK__LIMITS__ADDRESS_RATE_PER_SEC", SLOW),
        ("ROOMLINK__LIMITS__ADDRESS_BURST", "3"),
    ])
    .await;
    for _ in 0..3 {
        let response = app.request(Method::GET, "/healthz").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    // Even a request without credentials is refused for its rate, not its credentials.
    let response = app
        .request(Method::GET, "/api/endpoints")
        .send()
        .await
        .unwrap();
    assert!(retry_after(&response) >= 1);
    let (status, body) = json(response).await;
    assert_error(status, &body, 429, "TooManyRequests", 1900000005);
    assert_eq!(body["errorDetails"]["limit"], "address");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_failed_logins_throttle_the_address_even_with_the_right_password() {
    let app = limited_app(&[("ROOMLINK__LIMITS__AUTH_FAILURES_PER_MINUTE", "3")]).await;
    app.enterprise("acme", None).await;
    app.user("acme", "admin", roomlink_domain::access::Role::ReadWrite)
        .await;
    for _ in 0..3 {
        let response = app
            .request(Method::POST, "/api/auth/accesstokens")
            .basic_auth("admin", Some("guess"))
            .send()
            .await
            .unwrap();
        let (status, body) = json(response).await;
        assert_error(status, &body, 401, "BadCredentialsException", 1285563821);
    }
    let response = app
        .request(Method::POST, "/api/auth/accesstokens")
        .basic_auth("admin", Some("admin-password"))
        .send()
        .await
        .unwrap();
    // 3 per minute: the next attempt is allowed in about 20 s.
    let wait = retry_after(&response);
    assert!((1..=20).contains(&wait), "{wait}");
    let (status, body) = json(response).await;
    assert_error(status, &body, 429, "TooManyRequests", 1900000005);
    assert_eq!(body["errorDetails"]["limit"], "authFailures");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_headers_and_bodies_are_catalog_errors() {
    let app = limited_app(&[("ROOMLINK__LIMITS__MAX_HEADER_BYTES", "2048")]).await;
    let (rw, _) = app.tenant("acme").await;
    let response = app
        .with_token(Method::GET, "/api/endpoints", &rw)
        .header("X-Padding", "p".repeat(4096))
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_error(
        status,
        &body,
        431,
        "RequestHeaderFieldsTooLarge",
        1900000008,
    );
    assert_eq!(body["errorDetails"]["limitBytes"], 2048);
    // JSON bodies are bounded at 256 KiB.
    let big = format!("{{\"name\": \"{}\"}}", "n".repeat(300 * 1024));
    let response = app
        .with_token(Method::POST, "/api/endpoints", &rw)
        .header("Content-Type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_error(status, &body, 413, "PayloadTooLarge", 1900000004);
    // Nothing was written by either.
    let (_, list) = app.call(Method::GET, "/api/endpoints", &rw, None).await;
    assert_eq!(list, serde_json::json!([]));
}
