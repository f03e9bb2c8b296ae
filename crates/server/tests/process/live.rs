//! Live updates across instances: two `roomlink serve` processes on one PostgreSQL database
//! and a `nats-server` of the test's own. A ticket issued by one instance opens a stream on
//! the other, a change made through one reaches the stream on the other, and stopping an
//! instance ends its streams at once (they would otherwise hold the graceful stop for its
//! whole grace period). Needs `ROOMLINK_TEST_DATABASE_URL` (CI sets it) and `nats-server`.

use crate::support::nats::{Nats, free_port};
use crate::support::service::{Service, token};
use crate::support::sse::Events;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_reach_streams_on_every_instance_and_a_stop_ends_them() {
    let Some((mut service, _database)) = Service::on_postgres().await else {
        eprintln!(
            "changes_reach_streams_on_every_instance_and_a_stop_ends_them: SKIPPED (set \
             ROOMLINK_TEST_DATABASE_URL)"
        );
        return;
    };
    let nats = Nats::start(free_port());
    // A grace period far longer than the test waits: only ended streams let B stop sooner.
    service.env = vec![
        ("ROOMLINK__CLUSTER__NATS_URL".into(), nats.url()),
        (
            "ROOMLINK__SERVER__SHUTDOWN_TIMEOUT_SECS".into(),
            "600".into(),
        ),
    ];
    service.tenant("acme");
    let a = service.serve_watched(&[]);
    let mut b = service.serve_watched(&[]);
    let http = reqwest::Client::new();
    let token = token(&http, &a.address, "acme").await;
    let issued: Value = http
        .post(format!("http://{}/api/live/tickets", a.address))
        .header("X-Access-Token", &token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ticket = issued["ticket"].as_str().unwrap();
    let response = http
        .get(format!(
            "http://{}/api/live/events?ticket={ticket}",
            b.address
        ))
        .send()
        .await
        .unwrap();
    let mut on_b = Events::new(response);
    on_b.expect("ready").await;

    // Rooms created through A until B's stream tells of one: the instances join NATS in the
    // background, so the first may come before B listens.
    let mut told = None;
    for n in 0..15 {
        let created = http
            .post(format!("http://{}/api/endpoints", a.address))
            .header("X-Access-Token", &token)
            .json(
                &json!({"name": format!("Room {n}"), "ipAddress": "127.77.9.2",
                "controlProtocol": "TANDBERG_SSH"}),
            )
            .send()
            .await
            .unwrap();
        assert!(created.status().is_success());
        if let Ok(event) = on_b.next_within(Duration::from_secs(2)).await {
            told = event;
            break;
        }
    }
    let told = told.expect("a change made through A reaches B's stream");
    assert_eq!(told.name, "statuses");
    assert_eq!(told.data, json!({"topic": "statuses"}));

    // B stops: its stream ends with why, and B exits long before its grace period.
    let started = Instant::now();
    b.signal("TERM");
    let closing = on_b.expect("closing").await;
    assert_eq!(closing.data, json!({"reason": "shuttingDown"}));
    assert_eq!(on_b.next().await, None);
    let status = b.child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(600),
        "the stream held the stop"
    );
    drop(a);
}
