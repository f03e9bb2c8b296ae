//! Deliveries to a real receiver on 127.0.0.1: what goes on the wire, and what each kind of
//! answer (or its absence) comes to.

mod support;

use roomlink_domain::ports::{Clock, OutgoingWebhook, WebhookSender};
use roomlink_domain::secret::Secret;
use roomlink_domain::system::SystemClock;
use std::time::Duration;
use support::{Receiver, Reply, TOKEN, secret, sender};

const BODY: &str =
    r#"{"type":"room.offline","timestamp":"2026-01-01T00:00:00Z","data":{"endpointId":"ep-1"}}"#;
const EVENT_ID: &str = "msg_2Kq7deliverytest";
const TEN_S: Duration = Duration::from_secs(10);

fn webhook<'a>(url: &'a str, secret: &'a Secret) -> OutgoingWebhook<'a> {
    OutgoingWebhook {
        url,
        event_id: EVENT_ID,
        body: BODY,
        secret,
    }
}

/// No outcome may repeat the URL or its token.
fn assert_clean(error: &str, url: &str) {
    assert!(!error.contains(TOKEN) && !error.contains(url), "{error}");
}

#[tokio::test]
async fn a_delivery_is_signed_as_the_reference_library_verifies() {
    let receiver = Receiver::start(Reply::status(204)).await;
    let url = receiver.url(&format!("/hooks/in?token={TOKEN}"));
    let secret = secret();
    let before = SystemClock.now_ms() / 1_000;

    let outcome = sender(true, TEN_S).send(webhook(&url, &secret)).await;

    assert_eq!((outcome.status, outcome.error), (Some(204), None));
    let received = receiver.received();
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path_and_query, format!("/hooks/in?token={TOKEN}"));
    assert_eq!(request.body, BODY.as_bytes());
    assert_eq!(request.header("webhook-id"), EVENT_ID);
    assert_eq!(request.header("content-type"), "application/json");
    assert_eq!(
        request.header("user-agent"),
        concat!("roomlink-webhooks/", env!("CARGO_PKG_VERSION"))
    );
    let timestamp: i64 = request.header("webhook-timestamp").parse().unwrap();
    assert!((before..=before + 5).contains(&timestamp), "{timestamp}");
    assert!(request.header("webhook-signature").starts_with("v1,"));
    // The referee: Standard Webhooks' own Rust library, from the secret as receivers get it.
    let referee = standardwebhooks::Webhook::new(support::SECRET).unwrap();
    referee.verify(&request.body, &request.headers).unwrap();
    // And it tells a tampered body apart, so the verification above means something.
    assert!(referee.verify(b"{}", &request.headers).is_err());
}

#[tokio::test]
async fn a_server_error_is_a_failed_attempt_with_its_status() {
    let receiver = Receiver::start(Reply::status(500)).await;
    let url = receiver.url(&format!("/?token={TOKEN}"));
    let secret = secret();

    let outcome = sender(true, TEN_S).send(webhook(&url, &secret)).await;

    assert_eq!(outcome.status, Some(500));
    assert_eq!(outcome.error.as_deref(), Some("HTTP 500"));
    assert!(!outcome.delivered());
    assert_eq!(receiver.received().len(), 1);
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let elsewhere = Receiver::start(Reply::status(200)).await;
    let redirecting = Receiver::start(Reply {
        location: Some(elsewhere.url("/stolen")),
        ..Reply::status(302)
    })
    .await;
    let url = redirecting.url(&format!("/?token={TOKEN}"));
    let secret = secret();

    let outcome = sender(true, TEN_S).send(webhook(&url, &secret)).await;

    assert_eq!(outcome.status, Some(302));
    assert_eq!(
        outcome.error.as_deref(),
        Some("HTTP 302: redirects are not followed")
    );
    assert_eq!(redirecting.received().len(), 1);
    // A followed redirect would have been sent before `send` returned.
    assert!(elsewhere.received().is_empty());
}

#[tokio::test]
async fn a_slow_receiver_times_out() {
    let receiver = Receiver::start(Reply {
        delay: Duration::from_secs(5),
        ..Reply::status(200)
    })
    .await;
    let url = receiver.url(&format!("/?token={TOKEN}"));
    let secret = secret();
    let started = std::time::Instant::now();

    let outcome = sender(true, Duration::from_millis(300))
        .send(webhook(&url, &secret))
        .await;

    assert_eq!(outcome.status, None);
    assert_eq!(outcome.error.as_deref(), Some("timed out after 300 ms"));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_closed_port_is_connection_refused() {
    // A port that was just free: nothing listens there any more.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/?token={TOKEN}");
    let secret = secret();

    let outcome = sender(true, TEN_S).send(webhook(&url, &secret)).await;

    assert_eq!(outcome.status, None);
    let error = outcome.error.unwrap();
    assert_eq!(error, "connection refused");
    assert_clean(&error, &url);
}

#[tokio::test]
async fn a_name_is_connected_to_through_the_resolver_when_its_addresses_are_permitted() {
    let receiver = Receiver::start(Reply::status(200)).await;
    let url = format!("http://localhost:{}/?token={TOKEN}", receiver.addr.port());
    let secret = secret();
    let sender = sender(true, TEN_S);

    assert_eq!(sender.check_target(&url).await, Ok(()));
    let outcome = sender.send(webhook(&url, &secret)).await;

    assert!(outcome.delivered(), "{outcome:?}");
    assert_eq!(receiver.received().len(), 1);
}

#[tokio::test]
async fn an_unusable_secret_sends_nothing_and_is_not_echoed() {
    let receiver = Receiver::start(Reply::status(200)).await;
    let url = receiver.url("/");
    let bad = Secret::new("whsec_not*base64*9d8f7e");

    let outcome = sender(true, TEN_S).send(webhook(&url, &bad)).await;

    assert_eq!(outcome.status, None);
    let error = outcome.error.unwrap();
    assert!(
        error.contains("signing secret") && !error.contains("9d8f7e"),
        "{error}"
    );
    assert!(receiver.received().is_empty());
}
