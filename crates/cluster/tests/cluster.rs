//! Two instances on a real nats-server (started per test on a free loopback port).
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

mod support;

use roomlink_cluster::{ClusterError, ClusterSettings, connect};
use roomlink_domain::cluster::{ClusterEvent, LinkFailure, LinkObserver, ListenerLinks};
use roomlink_domain::ids::EnterpriseId;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::*;

const WAIT: Duration = Duration::from_secs(5);

fn statuses_changed(enterprise: &str) -> ClusterEvent {
    ClusterEvent::StatusesChanged {
        enterprise: EnterpriseId::from_trusted(enterprise.into()),
    }
}

#[tokio::test]
async fn an_event_reaches_every_instance_and_a_malformed_one_is_skipped() {
    let nats = NatsServer::start();
    let (a, b) = (nats.instance("a").await, nats.instance("b").await);
    let (seen_a, seen_b) = (Arc::new(Seen::default()), Arc::new(Seen::default()));
    a.local_bus().subscribe(seen_a.clone());
    b.local_bus().subscribe(seen_b.clone());

    let event = statuses_changed("ent1");
    assert!(until_heard(&*a.bus(), &event, &seen_b, WAIT).await);
    assert!(seen_a.has(&event), "the publisher's own sinks hear it too");

    // Garbage on the subject is skipped; the next good event still arrives.
    let raw = async_nats::connect(format!("127.0.0.1:{}", nats.port))
        .await
        .unwrap();
    for junk in [
        &b"not json"[..],
        br#"{"event":"statuses_changed","enterprise":"a b"}"#,
    ] {
        raw.publish("roomlink.events", junk.into()).await.unwrap();
    }
    raw.flush().await.unwrap();
    let after = statuses_changed("ent2");
    assert!(until_heard(&*a.bus(), &after, &seen_b, WAIT).await);
    let heard = seen_b.all();
    assert!(
        heard.iter().all(|e| *e == event || *e == after),
        "{heard:?}"
    );
}

#[tokio::test]
async fn a_request_reaches_the_instance_holding_the_listener() {
    let nats = NatsServer::start();
    let (a, b) = (nats.instance("a").await, nats.instance("b").await);
    let local_a = FakeLocal::holding(&["lst1"]);
    let links_a = a.links(local_a.clone());
    let links_b = b.links(FakeLocal::holding(&[]));
    links_a.attached(&id("lst1"));

    let routed = eventually(WAIT, async || {
        links_b
            .exchange(&id("lst1"), join_request(), Duration::from_secs(2))
            .await
            .is_ok()
    })
    .await;
    assert!(routed, "b never reached a");
    let answer_b = links_b
        .exchange(&id("lst1"), join_request(), Duration::from_secs(2))
        .await;
    assert_eq!(answer_b, Ok(answer()));
    let (listener, request, timeout) = local_a.seen.lock().unwrap().last().unwrap().clone();
    assert_eq!((listener.as_str(), request), ("lst1", join_request()));
    assert!(timeout <= Duration::from_secs(2) && timeout > Duration::from_secs(1));

    // Held here: served by the local registry without NATS.
    assert!(links_a.held_here(&id("lst1")));
    let before = local_a.requests();
    let here = links_a
        .exchange(&id("lst1"), join_request(), Duration::from_secs(1))
        .await;
    assert_eq!((here, local_a.requests()), (Ok(answer()), before + 1));
}

#[tokio::test]
async fn an_unknown_listener_is_offline_at_once() {
    let nats = NatsServer::start();
    let b = nats.instance("b").await;
    let links_b = b.links(FakeLocal::holding(&[]));
    assert!(eventually(WAIT, async || b.is_connected()).await);
    let started = Instant::now();
    let failure = links_b
        .exchange(&id("nobody"), join_request(), Duration::from_secs(10))
        .await;
    assert_eq!(failure, Err(LinkFailure::Offline));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_holder_slower_than_the_deadline_times_out() {
    let nats = NatsServer::start();
    let (a, b) = (nats.instance("a").await, nats.instance("b").await);
    let local_a = FakeLocal::slow("slow", Duration::from_secs(30));
    let links_a = a.links(local_a.clone());
    let links_b = b.links(FakeLocal::holding(&[]));
    links_a.attached(&id("slow"));
    // Routed once the holder has been asked anything.
    let routed = eventually(WAIT, async || {
        let _ = links_b
            .exchange(&id("slow"), join_request(), Duration::from_millis(200))
            .await;
        local_a.requests() > 0
    })
    .await;
    assert!(routed);

    let timeout = Duration::from_millis(500);
    let started = Instant::now();
    let failure = links_b.exchange(&id("slow"), join_request(), timeout).await;
    assert_eq!(failure, Err(LinkFailure::TimedOut));
    assert!(started.elapsed() < timeout + Duration::from_secs(2));
}

#[tokio::test]
async fn a_detached_listener_is_offline() {
    let nats = NatsServer::start();
    let (a, b) = (nats.instance("a").await, nats.instance("b").await);
    let local_a = FakeLocal::holding(&["lst1"]);
    let links_a = a.links(local_a.clone());
    let links_b = b.links(FakeLocal::holding(&[]));
    links_a.attached(&id("lst1"));
    let ask = async || {
        links_b
            .exchange(&id("lst1"), join_request(), Duration::from_secs(2))
            .await
    };
    assert!(eventually(WAIT, async || ask().await.is_ok()).await);

    local_a.held.lock().unwrap().clear();
    links_a.detached(&id("lst1"));
    assert!(eventually(WAIT, async || ask().await == Err(LinkFailure::Offline)).await);
    // At once, not at the deadline (kept far apart so a loaded machine cannot blur them).
    let started = Instant::now();
    let failure = links_b
        .exchange(&id("lst1"), join_request(), Duration::from_secs(20))
        .await;
    assert_eq!(failure, Err(LinkFailure::Offline));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn taking_a_link_tells_the_older_holder() {
    let nats = NatsServer::start();
    let (a, b) = (nats.instance("a").await, nats.instance("b").await);
    let (seen_a, seen_b) = (Arc::new(Seen::default()), Arc::new(Seen::default()));
    a.local_bus().subscribe(seen_a.clone());
    b.local_bus().subscribe(seen_b.clone());
    // a's event subscription is in place once it hears b.
    assert!(until_heard(&*b.bus(), &statuses_changed("warm"), &seen_a, WAIT).await);

    let links_a = a.links(FakeLocal::holding(&["lst1"]));
    let links_b = b.links(FakeLocal::holding(&["lst1"]));
    links_a.attached(&id("lst1"));
    links_b.attached(&id("lst1"));
    let taken_by = |instance: &str| ClusterEvent::LinkTaken {
        listener: id("lst1"),
        instance: instance.into(),
    };
    assert!(eventually(WAIT, async || seen_a.has(&taken_by("b"))).await);
    assert!(
        seen_b.has(&taken_by("b")),
        "b's own sinks hear it (and ignore their own)"
    );
}

#[tokio::test]
async fn events_and_requests_flow_again_after_nats_restarts() {
    let mut nats = NatsServer::start();
    let (a, b) = (nats.instance("a").await, nats.instance("b").await);
    let seen_b = Arc::new(Seen::default());
    b.local_bus().subscribe(seen_b.clone());
    let links_a = a.links(FakeLocal::holding(&["lst1"]));
    let links_b = b.links(FakeLocal::holding(&[]));
    links_a.attached(&id("lst1"));
    let ask = async || {
        links_b
            .exchange(&id("lst1"), join_request(), Duration::from_secs(1))
            .await
    };
    assert!(until_heard(&*a.bus(), &statuses_changed("before"), &seen_b, WAIT).await);
    assert!(eventually(WAIT, async || ask().await.is_ok()).await);

    nats.stop();
    assert!(eventually(WAIT, async || !b.is_connected()).await);
    // At once, not at the deadline (kept far apart so a loaded machine cannot blur them).
    let started = Instant::now();
    let failure = links_b
        .exchange(&id("lst1"), join_request(), Duration::from_secs(20))
        .await;
    assert_eq!(
        failure,
        Err(LinkFailure::Offline),
        "offline while disconnected"
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    nats.restart();
    let limit = Duration::from_secs(10);
    assert!(until_heard(&*a.bus(), &statuses_changed("after"), &seen_b, limit).await);
    assert!(eventually(limit, async || ask().await.is_ok()).await);
}

#[tokio::test]
async fn ids_that_would_break_a_subject_are_refused() {
    let nats = NatsServer::start();
    for bad in ["a.b", "*", ">", "a b", ""] {
        let refused = connect(&nats.settings(), bad.into()).await;
        assert!(matches!(refused, Err(ClusterError::InstanceId)), "{bad:?}");
    }
    for prefix in ["a.*", "a.>", "", "a..b"] {
        let settings = ClusterSettings {
            subject_prefix: prefix.into(),
            ..nats.settings()
        };
        let refused = connect(&settings, "a".into()).await;
        assert!(
            matches!(refused, Err(ClusterError::SubjectPrefix)),
            "{prefix:?}"
        );
    }

    let (a, b) = (nats.instance("a").await, nats.instance("b").await);
    let local_a = FakeLocal::holding(&["lst1", "x.>", "*"]);
    let links_a = a.links(local_a.clone());
    let links_b = b.links(FakeLocal::holding(&[]));
    links_a.attached(&id("lst1"));
    links_a.attached(&id("x.>"));
    links_a.attached(&id("*"));
    let ask = async |listener: &str| {
        links_b
            .exchange(&id(listener), join_request(), Duration::from_secs(1))
            .await
    };
    assert!(eventually(WAIT, async || ask("lst1").await.is_ok()).await);
    let served = local_a.requests();
    for bad in ["*", ">", "x.>", "x.y", "lst1.z", "a b"] {
        assert_eq!(ask(bad).await, Err(LinkFailure::Offline), "{bad:?}");
    }
    assert_eq!(
        local_a.requests(),
        served,
        "no malformed id reached the holder"
    );
}
