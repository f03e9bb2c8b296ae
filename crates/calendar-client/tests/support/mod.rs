//! What the Microsoft Graph and Google tests share: loopback stub servers, the token requests
//! they received, and the check every failure passes.

use roomlink_domain::error::{Error, ErrorKind};
use std::collections::BTreeMap;
use wiremock::MockServer;

/// A stub server listening on 127.0.0.1 only.
pub async fn loopback_server() -> MockServer {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    MockServer::builder().listener(listener).start().await
}

/// The form fields of every POST the server received (the token requests), in order.
pub async fn token_requests(server: &MockServer) -> Vec<BTreeMap<String, String>> {
    let requests = server.received_requests().await.unwrap();
    requests
        .iter()
        .filter(|r| r.method == wiremock::http::Method::POST)
        .map(|r| {
            assert_eq!(
                r.headers.get("content-type").unwrap(),
                "application/x-www-form-urlencoded"
            );
            form_urlencoded::parse(&r.body).into_owned().collect()
        })
        .collect()
}

/// A CalendarServerException whose message names `calendar_id` and `expected`, and whose message
/// and details quote none of `never` (secrets, tokens, keys, assertions).
pub fn assert_failure(e: &Error, calendar_id: &str, expected: &str, never: &[&str]) {
    assert_eq!(e.kind(), ErrorKind::CalendarServerException, "{e:?}");
    assert!(e.message().contains(calendar_id), "{}", e.message());
    assert!(e.message().contains(expected), "{}", e.message());
    assert_eq!(e.details()["calendarId"], calendar_id);
    let everything = format!("{} {:?} {e:?} {e}", e.message(), e.details());
    for secret in never {
        assert!(!secret.is_empty());
        assert!(!everything.contains(secret), "{secret:?} in {everything}");
    }
}
