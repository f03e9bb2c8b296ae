//! Webhooks end to end: subscriptions through the API, events from what roomlink observes
//! (health changes, calls, failed commands), the outbox delivered by the delivery rounds to a
//! real HTTP receiver on loopback (wiremock), signatures checked by Standard Webhooks'
//! reference library, retries, the pause, and two instances sharing one outbox.

use crate::control::{call_started_at_the_room, room};
use crate::support::app::{TestApp, assert_error};
use reqwest::{Method, StatusCode};
use roomlink_listener_sim::SimConfig;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const LOOPBACK: &[(&str, &str)] = &[("ROOMLINK__WEBHOOKS__ALLOW_NETWORKS", "loopback")];

async fn receiver(status: u16) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(status))
        .mount(&server)
        .await;
    server
}

/// Subscribes `url` to `types`: the subscription and its secret.
async fn subscribe(app: &TestApp, token: &str, url: &str, types: &[&str]) -> (String, String) {
    let (status, body) = app
        .call(
            Method::POST,
            "/api/webhooks",
            token,
            Some(json!({"url": url, "eventTypes": types, "description": "ops"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (
        body["id"].as_str().unwrap().to_owned(),
        body["secret"].as_str().unwrap().to_owned(),
    )
}

/// What the receiver got: each request's body, after checking its signature with the
/// reference library and that `webhook-id` is the body's event.
async fn received(server: &MockServer, secret: &str) -> Vec<(String, Value)> {
    let referee = standardwebhooks::Webhook::new(secret).unwrap();
    let mut all = Vec::new();
    for request in server.received_requests().await.unwrap() {
        referee
            .verify(&request.body, &request.headers)
            .expect("a signature the reference library accepts");
        let id = request.headers["webhook-id"].to_str().unwrap().to_owned();
        assert_eq!(request.headers["content-type"], "application/json");
        all.push((id, serde_json::from_slice(&request.body).unwrap()));
    }
    all
}

async fn deliveries(app: &TestApp, token: &str, id: &str) -> Vec<Value> {
    let (status, body) = app
        .call(
            Method::GET,
            &format!("/api/webhooks/{id}/deliveries"),
            token,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.as_array().unwrap().clone()
}

async fn deliver(app: &TestApp) -> roomlink_app::webhooks::DeliveryRound {
    app.services.webhook_deliveries.round().await.unwrap()
}

async fn subscriptions_are_checked_and_their_secret_shown_once(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let target = receiver(204).await;
    let (id, secret) = subscribe(&app, &rw, &target.uri(), &["room.offline", "call.ended"]).await;
    assert!(secret.starts_with("whsec_"), "{secret}");
    let (status, listed) = app.call(Method::GET, "/api/webhooks", &rw, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(
        listed[0]["eventTypes"],
        json!(["room.offline", "call.ended"])
    );
    assert!(listed[0]["paused"].is_null(), "{listed}");
    assert!(
        !listed.to_string().contains(&secret),
        "the secret is shown once"
    );
    // Administrators only: a subscription's URL may carry a receiver's token.
    let (status, body) = app.call(Method::GET, "/api/webhooks", &ro, None).await;
    assert_error(status, &body, 403, "Forbidden", 1_900_000_001);

    for (bad, says) in [
        (
            json!({"url": "ftp://x.example/", "eventTypes": ["room.offline"]}),
            "https://",
        ),
        (
            json!({"url": "https://u:hunter2@x.example/", "eventTypes": ["room.offline"]}),
            "user information",
        ),
        (
            json!({"url": target.uri(), "eventTypes": []}),
            "at least one",
        ),
        (
            json!({"url": target.uri(), "eventTypes": ["room.exploded"]}),
            "room.offline",
        ),
        (
            json!({"url": target.uri(), "eventTypes": ["webhook.test"]}),
            "not an event type",
        ),
        (
            json!({"url": target.uri(), "eventTypes": ["room.offline"], "secret": "mine"}),
            "not a field",
        ),
        // Link-local (cloud metadata) is never a target, whatever the operator allows.
        (
            json!({"url": "http://169.254.169.254/latest", "eventTypes": ["room.offline"]}),
            "link-local",
        ),
    ] {
        let (status, body) = app
            .call(Method::POST, "/api/webhooks", &rw, Some(bad.clone()))
            .await;
        assert_error(status, &body, 400, "Invalid", 1_782_937_293);
        let message =
            body["errorMessage"].as_str().unwrap_or_default().to_owned() + &body.to_string();
        assert!(message.contains(says), "{bad}: {body}");
        assert!(!message.contains("hunter2"), "{body}");
    }

    let (status, updated) = app
        .call(
            Method::PUT,
            &format!("/api/webhooks/{id}"),
            &rw,
            Some(json!({"url": format!("{}/v2", target.uri()), "eventTypes": ["call.started"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["eventTypes"], json!(["call.started"]));
    assert!(updated["description"].is_null());

    let (status, _) = app
        .call(Method::DELETE, &format!("/api/webhooks/{id}"), &rw, None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app
        .call(Method::GET, &format!("/api/webhooks/{id}"), &rw, None)
        .await;
    assert_error(status, &body, 404, "NotFound", 1_217_481_661);
    // Another enterprise's subscription does not exist for a caller.
    let (other, _) = app.tenant("globex").await;
    let (theirs, _) = subscribe(&app, &other, &target.uri(), &["call.ended"]).await;
    let (status, _) = app
        .call(Method::GET, &format!("/api/webhooks/{theirs}"), &rw, None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

async fn a_strict_service_refuses_loopback_targets(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let target = receiver(204).await;
    let (status, body) = app
        .call(
            Method::POST,
            "/api/webhooks",
            &rw,
            Some(json!({"url": target.uri(), "eventTypes": ["room.offline"]})),
        )
        .await;
    assert_error(status, &body, 400, "Invalid", 1_782_937_293);
    assert!(body.to_string().contains("loopback"), "{body}");
    assert!(target.received_requests().await.unwrap().is_empty());
}

async fn what_roomlink_observes_reaches_the_receiver_signed_and_in_order(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let address = "127.77.15.1";
    let room = room(&app, &rw, SimConfig::default(), address).await;
    let id = room.endpoint.clone();
    let target = receiver(204).await;
    let every = [
        "room.offline",
        "room.online",
        "call.started",
        "call.ended",
        "command.failed",
        "listener.offline",
    ];
    let (hook, secret) = subscribe(&app, &rw, &target.uri(), &every).await;
    // A second subscriber, for calls only. Its server lives as long as the test: wiremock
    // pools servers, and one dropped early would be handed to another test while this one's
    // deliveries still go to its port.
    let calls = receiver(204).await;
    let (_, calls_secret) = subscribe(&app, &rw, &calls.uri(), &["call.started"]).await;

    // First observed ok: no news. Then three poll intervals of silence: offline.
    assert_eq!(app.poll_now(&ro, true).await, 1);
    assert_eq!(app.services.health_watch.round().await.unwrap(), Some(0));
    app.clock.advance(4 * 30_000);
    assert_eq!(app.services.health_watch.round().await.unwrap(), Some(1));
    // The same state again is no new event.
    assert_eq!(app.services.health_watch.round().await.unwrap(), Some(0));
    assert_eq!(app.poll_now(&ro, true).await, 1);
    assert_eq!(app.services.health_watch.round().await.unwrap(), Some(1));

    // A call joined through the API, seen in the command's status; then hung up.
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/api/endpoints/{id}/join?meetingid=123456789"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    app.clock.advance(90_000);
    let (status, _) = app
        .call(
            Method::POST,
            &format!("/api/endpoints/{id}/hangup"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // A call started at the room itself, seen by a poll.
    call_started_at_the_room(&app, &room, address).await;
    assert_eq!(app.poll_now(&ro, true).await, 1);

    // A command the room fails is an event; a caller's mistake is not.
    let fault = app
        .client
        .put(format!("{}/sim/endpoints/{address}/fault", room.sim))
        .json(&json!({"fault": "unreachable"}))
        .send()
        .await
        .unwrap();
    assert!(fault.status().is_success());
    let (status, _) = app
        .call(
            Method::POST,
            &format!("/api/endpoints/{id}/hangup"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status.as_u16() / 100, 5);
    let (status, _) = app
        .call(
            Method::POST,
            &format!("/api/endpoints/{id}/senddtmf?dtmfString=12ab"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Nothing is sent before a delivery round; then everything, oldest first.
    assert!(target.received_requests().await.unwrap().is_empty());
    let round = deliver(&app).await;
    assert_eq!(round.delivered, round.attempts);
    let got = received(&target, &secret).await;
    let types: Vec<&str> = got
        .iter()
        .map(|(_, b)| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "room.offline",
            "room.online",
            "call.started",
            "call.ended",
            "call.started",
            "command.failed"
        ],
        "{got:?}"
    );
    let (_, offline) = &got[0];
    assert_eq!(offline["data"]["endpointId"], id.as_str());
    assert_eq!(offline["data"]["name"], "Boardroom");
    assert_eq!(offline["data"]["reasons"][0]["code"], "notAnswering");
    assert!(offline["timestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(got[1].1["data"]["previousState"], "offline");
    assert_eq!(got[2].1["data"]["joinedBy"], "api");
    assert_eq!(got[3].1["data"]["durationSeconds"], 90);
    assert_eq!(got[4].1["data"]["joinedBy"], "device");
    assert_eq!(got[5].1["data"]["operation"], "endpoints.hangUp");
    assert_eq!(got[5].1["data"]["errorName"], "ExternalSystemUnreachable");
    // Nothing in any body is a credential.
    for (_, body) in &got {
        assert!(!body.to_string().contains("room-pw-secret"), "{body}");
    }

    // The deliveries say the same, newest first, under the same webhook-ids.
    let listed = deliveries(&app, &rw, &hook).await;
    assert_eq!(listed.len(), got.len());
    for (delivery, (event_id, _)) in listed.iter().rev().zip(&got) {
        assert_eq!(delivery["eventId"], event_id.as_str());
        assert_eq!(delivery["state"], "delivered");
        assert_eq!(delivery["attempts"], 1);
        assert_eq!(delivery["lastStatus"], 204);
    }
    // The calls-only subscriber got the two call.started, and nothing else.
    let calls_got = received(&calls, &calls_secret).await;
    let call_types: Vec<&str> = calls_got
        .iter()
        .map(|(_, b)| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        call_types,
        ["call.started", "call.started"],
        "{calls_got:?}"
    );
    // A second round has nothing left to send.
    assert_eq!(deliver(&app).await.attempts, 0);
    assert_eq!(target.received_requests().await.unwrap().len(), got.len());
}

async fn a_failing_receiver_is_retried_on_schedule_then_paused(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let target = receiver(500).await;
    let (hook, secret) = subscribe(&app, &rw, &target.uri(), &["room.offline"]).await;
    let (status, queued) = app
        .call(
            Method::POST,
            &format!("/api/webhooks/{hook}/test"),
            &rw,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{queued}");
    let event = queued["eventId"].as_str().unwrap().to_owned();
    // A second event waits behind the first: deliveries go in order.
    let (_, second) = app
        .call(
            Method::POST,
            &format!("/api/webhooks/{hook}/test"),
            &rw,
            None,
        )
        .await;

    // Standard Webhooks' schedule after the first attempt.
    let delays_s = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];
    assert_eq!(deliver(&app).await.attempts, 1);
    for (n, delay) in delays_s.iter().enumerate() {
        let listed = deliveries(&app, &rw, &hook).await;
        let first = listed.last().unwrap();
        assert_eq!(first["attempts"], n as u64 + 1, "{first}");
        assert_eq!(first["lastStatus"], 500);
        assert_eq!(first["lastError"], "HTTP 500");
        assert_eq!(
            first["nextAttemptAt"].as_i64().unwrap() - first["lastAttemptAt"].as_i64().unwrap(),
            delay * 1000
        );
        // Not before its time: a round a second early sends nothing.
        app.clock.advance(delay * 1000 - 1000);
        assert_eq!(deliver(&app).await.attempts, 0);
        app.clock.advance(1000);
        assert_eq!(deliver(&app).await.attempts, 1);
    }
    let listed = deliveries(&app, &rw, &hook).await;
    assert_eq!(listed.last().unwrap()["state"], "failed");
    assert_eq!(listed.last().unwrap()["attempts"], 8);
    assert_eq!(listed[0]["state"], "pending", "the second waited behind it");
    assert_eq!(listed[0]["attempts"], 0);
    let (_, paused) = app
        .call(Method::GET, &format!("/api/webhooks/{hook}"), &rw, None)
        .await;
    let reason = paused["paused"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("failed 8 times") && reason.contains("HTTP 500"),
        "{reason}"
    );
    // Paused: nothing goes, however much time passes.
    app.clock.advance(86_400_000);
    assert_eq!(deliver(&app).await.claimed, 0);
    // Every attempt carried the same webhook-id, each one signed afresh.
    let got = received(&target, &secret).await;
    assert_eq!(got.len(), 8);
    assert!(
        got.iter()
            .all(|(id, body)| *id == event && body["type"] == "webhook.test")
    );

    // The receiver is fixed and the subscription resumed: the waiting one goes at once.
    target.reset().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&target)
        .await;
    let (status, resumed) = app
        .call(
            Method::POST,
            &format!("/api/webhooks/{hook}/resume"),
            &rw,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resumed}");
    assert!(resumed["paused"].is_null());
    assert_eq!(deliver(&app).await.delivered, 1);
    let got = received(&target, &secret).await;
    assert_eq!(got[0].0, second["eventId"].as_str().unwrap());
    // The instance's counters say the same: eight failed, one delivered, one pause.
    let metrics = app.metrics().await;
    for line in [
        "roomlink_webhook_attempts_total{outcome=\"delivered\"} 1",
        "roomlink_webhook_attempts_total{outcome=\"failed\"} 8",
        "roomlink_webhook_subscriptions_paused_total 1",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
    // The audit trail has the subscription's life.
    let (_, audit) = app
        .call(
            Method::GET,
            &format!("/api/auditlog?targetId={hook}"),
            &rw,
            None,
        )
        .await;
    let operations: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["operation"].as_str().unwrap())
        .collect();
    assert_eq!(
        operations,
        ["webhooks.resume", "webhooks.create"],
        "{audit}"
    );
}

async fn a_redirect_is_not_followed(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let elsewhere = receiver(204).await;
    let target = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(307).insert_header("location", elsewhere.uri().as_str()),
        )
        .mount(&target)
        .await;
    let (hook, _) = subscribe(&app, &rw, &target.uri(), &["room.offline"]).await;
    app.call(
        Method::POST,
        &format!("/api/webhooks/{hook}/test"),
        &rw,
        None,
    )
    .await;
    assert_eq!(deliver(&app).await.attempts, 1);
    let listed = deliveries(&app, &rw, &hook).await;
    assert_eq!(listed[0]["lastStatus"], 307);
    assert!(
        listed[0]["lastError"]
            .as_str()
            .unwrap()
            .contains("redirects are not followed"),
        "{listed:?}"
    );
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
}

/// Two instances on one database deliver one outbox: each event once, whichever instance
/// sends it. One instance stops in the middle of a delivery (its round is dropped with the
/// request in flight, as a killed process's would end): the other takes the subscription
/// over once the claim expires and sends it again, the one repeat a stop can cause.
async fn two_instances_share_the_outbox_and_take_over_a_stopped_one(app: TestApp) {
    let other = app.spawn_beside(LOOPBACK).await;
    let (rw, _) = app.tenant("acme").await;
    let target = receiver(204).await;
    let mut hooks = Vec::new();
    for n in 0..3 {
        let url = format!("{}/s{n}", target.uri());
        hooks.push(subscribe(&app, &rw, &url, &["room.offline"]).await.0);
    }
    let mut expected = Vec::new();
    for _ in 0..4 {
        for (n, hook) in hooks.iter().enumerate() {
            let (_, queued) = app
                .call(
                    Method::POST,
                    &format!("/api/webhooks/{hook}/test"),
                    &rw,
                    None,
                )
                .await;
            expected.push((
                format!("/s{n}"),
                queued["eventId"].as_str().unwrap().to_owned(),
            ));
        }
    }
    let (a, b) = futures::join!(deliver(&app), deliver(&other));
    assert_eq!(
        a.claimed + b.claimed,
        3,
        "each subscription claimed by one instance"
    );
    assert_eq!(a.delivered + b.delivered, expected.len());
    let mut got: Vec<(String, String)> = target
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            (
                r.url.path().to_owned(),
                r.headers["webhook-id"].to_str().unwrap().to_owned(),
            )
        })
        .collect();
    // In order within each subscription, and none twice.
    for (n, _) in hooks.iter().enumerate() {
        let path = format!("/s{n}");
        let mine: Vec<_> = got.iter().filter(|(p, _)| *p == path).collect();
        let wanted: Vec<_> = expected.iter().filter(|(p, _)| *p == path).collect();
        assert_eq!(mine, wanted);
    }
    got.sort();
    got.dedup();
    assert_eq!(got.len(), expected.len());

    // The receiver holds the next delivery open; its instance stops meanwhile.
    let hook = &hooks[0];
    let (_, queued) = app
        .call(
            Method::POST,
            &format!("/api/webhooks/{hook}/test"),
            &rw,
            None,
        )
        .await;
    let event = queued["eventId"].as_str().unwrap().to_owned();
    target.reset().await;
    Mock::given(method("POST"))
        .and(wiremock::matchers::header("webhook-id", event.as_str()))
        .respond_with(ResponseTemplate::new(204).set_delay(std::time::Duration::from_secs(30)))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&target)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(204))
        .mount(&target)
        .await;
    let services = app.services.clone();
    let stopping = tokio::spawn(async move { services.webhook_deliveries.round().await });
    // Wait for the request to arrive rather than for a fixed time.
    while target.received_requests().await.unwrap().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    stopping.abort();
    assert!(stopping.await.unwrap_err().is_cancelled());
    // Its claim holds: the other instance does not send it meanwhile...
    assert_eq!(deliver(&other).await.claimed, 0);
    let listed = deliveries(&app, &rw, hook).await;
    assert_eq!(
        (listed[0]["state"].as_str(), listed[0]["attempts"].as_u64()),
        (Some("pending"), Some(0))
    );
    // ...until it expires (the default 60 s), when the other takes it over.
    app.clock.advance(61_000);
    let taken = deliver(&other).await;
    assert_eq!((taken.claimed, taken.delivered), (1, 1));
    let sent: Vec<String> = target
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.headers["webhook-id"].to_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        sent,
        [event.clone(), event.clone()],
        "the one repeat, under the same webhook-id"
    );
    let listed = deliveries(&app, &rw, hook).await;
    assert_eq!(listed[0]["eventId"], event.as_str());
    assert_eq!(listed[0]["state"], "delivered");
}

macro_rules! with_loopback_targets {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let app = $crate::support::app::TestApp::spawn_with($crate::support::app::Backend::Sqlite, super::LOOPBACK).await.unwrap();
                    super::$name(app).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if let Some(app) = $crate::support::app::TestApp::spawn_with($crate::support::app::Backend::Postgres, super::LOOPBACK).await {
                        super::$name(app).await;
                    }
                }
            )*
        }
    };
}

with_loopback_targets!(
    subscriptions_are_checked_and_their_secret_shown_once,
    what_roomlink_observes_reaches_the_receiver_signed_and_in_order,
    a_failing_receiver_is_retried_on_schedule_then_paused,
    a_redirect_is_not_followed,
    two_instances_share_the_outbox_and_take_over_a_stopped_one,
);

mod strict {
    use super::*;
    crate::on_every_backend!(a_strict_service_refuses_loopback_targets);
}
