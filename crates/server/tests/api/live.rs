//! Live updates end to end: tickets, the server-sent event stream read over real HTTP as a
//! browser's `EventSource` reads it, what ends a stream, and resuming with `Last-Event-ID`.

use crate::control::room as room_with_listener;
use crate::support::app::{Backend, TestApp, assert_error, json};
use crate::support::sse::{Event, Events};
use reqwest::{Method, Response, StatusCode};
use roomlink_domain::ports::Clock;
use roomlink_domain::secret::Secret;
use roomlink_listener_sim::SimConfig;
use serde_json::json;

async fn ticket(app: &TestApp, token: &str) -> String {
    let response = app
        .with_token(Method::POST, "/api/live/tickets", token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["cache-control"], "no-store");
    let (status, body) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let expires = body["expiresAt"].as_i64().unwrap();
    assert_eq!(expires, app.clock.now_ms() + 60_000, "a minute");
    body["ticket"].as_str().unwrap().to_owned()
}

async fn open(app: &TestApp, query: &str) -> Response {
    app.request(Method::GET, &format!("/api/live/events{query}"))
        .send()
        .await
        .unwrap()
}

async fn room(app: &TestApp, token: &str, name: &str) {
    app.create_endpoint(
        token,
        json!({"name": name, "ipAddress": "127.77.9.1", "controlProtocol": "TANDBERG_SSH"}),
    )
    .await;
}

async fn a_ticket_opens_the_stream_and_changes_arrive(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let (other, _) = app.tenant("globex").await;
    // A read-only caller may follow the fleet too.
    let mut events = Events::new(open(&app, &format!("?ticket={}", ticket(&app, &ro).await)).await);
    let ready = events.expect("ready").await;
    assert_eq!(ready.data, json!({}));
    let metrics = app.metrics().await;
    assert!(
        metrics.contains("\nroomlink_live_streams 1\n"),
        "the open stream is counted: {metrics}"
    );
    // Another enterprise's change is not told; this one's is, in order, numbered after ready.
    room(&app, &other, "Elsewhere").await;
    room(&app, &rw, "Boardroom").await;
    let changed = events.expect("statuses").await;
    assert_eq!(changed.data, json!({"topic": "statuses"}));
    let number = |e: &Event| -> u64 {
        let id = e.id.as_deref().unwrap();
        id.split_once('.').unwrap().1.parse().unwrap()
    };
    assert!(number(&changed) > number(&ready), "{ready:?} {changed:?}");
    // Health: a room first observed ok (nothing to tell), then silent for three poll
    // intervals: offline, told once; the same again is not told (the next event is the
    // poll's).
    room_with_listener(&app, &rw, SimConfig::default(), "127.77.16.1").await;
    events.expect("statuses").await;
    assert_eq!(app.poll_now(&rw, true).await, 1);
    events.expect("statuses").await;
    app.services.health_watch.round().await.unwrap().unwrap();
    app.clock.advance(4 * 30_000);
    app.services.health_watch.round().await.unwrap().unwrap();
    let health = events.expect("health").await;
    assert_eq!(health.data, json!({"topic": "health"}));
    app.services.health_watch.round().await.unwrap().unwrap();
    assert_eq!(app.poll_now(&rw, true).await, 1);
    events.expect("statuses").await;
}

async fn tickets_and_credentials_are_checked(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let good = ticket(&app, &rw).await;
    // Nothing, a forged signature, another field changed under the signature, garbage: each
    // refused as a catalog error, the same for each.
    let (status, body) = json(open(&app, "").await).await;
    assert_error(status, &body, 401, "NotAuthenticated", 1_285_563_822);
    let (head, signature) = good.rsplit_once('.').unwrap();
    let forged = format!("{head}.{}A", signature);
    let (enterprise, rest) = good.split_once('.').unwrap();
    let (token_id, rest) = rest.split_once('.').unwrap();
    let (expires, signature) = rest.split_once('.').unwrap();
    let later: i64 = expires.parse::<i64>().unwrap() + 3_600_000;
    let extended = format!("{enterprise}.{token_id}.{later}.{signature}");
    for bad in [forged.as_str(), extended.as_str(), "not-a-ticket"] {
        let (status, body) = json(open(&app, &format!("?ticket={bad}")).await).await;
        assert_error(status, &body, 401, "BadCredentialsException", 1_285_563_821);
        assert!(!body.to_string().contains(signature), "{body}");
    }
    // Expired after a minute.
    app.clock.advance(60_000);
    let (status, body) = json(open(&app, &format!("?ticket={good}")).await).await;
    assert_error(status, &body, 401, "BadCredentialsException", 1_285_563_821);
    // Basic callers get no ticket (there is no token to name) but may open the stream with
    // their credentials, as any client but a browser's EventSource can.
    let response = app
        .request(Method::POST, "/api/live/tickets")
        .basic_auth("acme-admin", Some("acme-admin-password"))
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_error(status, &body, 403, "Forbidden", 1_900_000_001);
    let response = app
        .request(Method::GET, "/api/live/events")
        .basic_auth("acme-admin", Some("acme-admin-password"))
        .send()
        .await
        .unwrap();
    Events::new(response).expect("ready").await;
    let response = app
        .with_token(Method::GET, "/api/live/events", &rw)
        .send()
        .await
        .unwrap();
    Events::new(response).expect("ready").await;
}

async fn revoking_the_token_ends_its_streams_and_its_tickets(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let viewer = app.token("acme-viewer").await;
    let (_, me) = app
        .call(
            Method::GET,
            &format!("/api/auth/accesstokens/{viewer}"),
            &viewer,
            None,
        )
        .await;
    let viewer_id = me["id"].as_str().unwrap().to_owned();
    let viewers = ticket(&app, &viewer).await;
    let mut theirs = Events::new(open(&app, &format!("?ticket={viewers}")).await);
    let mut mine = Events::new(open(&app, &format!("?ticket={}", ticket(&app, &rw).await)).await);
    theirs.expect("ready").await;
    mine.expect("ready").await;
    let (status, body) = app
        .call(
            Method::DELETE,
            &format!("/api/auth/accesstokens/{viewer_id}"),
            &rw,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let closing = theirs.expect("closing").await;
    assert_eq!(closing.data, json!({"reason": "tokenRevoked"}));
    assert_eq!(theirs.next().await, None, "ended");
    // Its ticket, still unexpired, opens nothing now.
    let (status, body) = json(open(&app, &format!("?ticket={viewers}")).await).await;
    assert_error(status, &body, 401, "BadCredentialsException", 1_285_563_821);
    // The other stream goes on: the next change reaches it, not a closing.
    room(&app, &rw, "Boardroom").await;
    mine.expect("statuses").await;
}

async fn a_reconnecting_stream_gets_what_it_missed(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let pass = ticket(&app, &rw).await;
    let mut first = Events::new(open(&app, &format!("?ticket={pass}")).await);
    first.expect("ready").await;
    room(&app, &rw, "One").await;
    let seen = first.expect("statuses").await.id.unwrap();
    drop(first);
    // Missed while away: two changes.
    room(&app, &rw, "Two").await;
    room(&app, &rw, "Three").await;
    let response = app
        .request(Method::GET, &format!("/api/live/events?ticket={pass}"))
        .header("Last-Event-ID", &seen)
        .send()
        .await
        .unwrap();
    let mut again = Events::new(response);
    let a = again.expect("statuses").await;
    let b = again.expect("statuses").await;
    let ready = again.expect("ready").await;
    assert_eq!(ready.id, b.id, "goes on from the last change");
    assert_ne!(a.id, b.id);
    // The same through the query parameter; and a position this process never gave resyncs.
    let mut same = Events::new(
        open(
            &app,
            &format!("?ticket={pass}&lastEventId={}", b.id.unwrap()),
        )
        .await,
    );
    same.expect("ready").await;
    let mut other = Events::new(open(&app, &format!("?ticket={pass}&lastEventId=1.1")).await);
    let resync = other.expect("resync").await;
    assert_eq!(resync.data, json!({"reason": "cannotResume"}));
}

/// A stream opened with a service user's Basic credentials ends once they stop holding (the
/// user disabled, or given a new password), at the stream's next check; another user's goes on.
async fn basic_streams_end_when_their_user_is_disabled_or_repassworded(backend: Backend) {
    // Checked every second here (a minute by default).
    let Some(app) = TestApp::spawn_with(
        backend,
        &[("ROOMLINK__SECURITY__STREAM_RECHECK_MS", "1000")],
    )
    .await
    else {
        return;
    };
    let (rw, _) = app.tenant("acme").await;
    let basic = |user: &str| {
        app.request(Method::GET, "/api/live/events")
            .basic_auth(user, Some(format!("{user}-password")))
            .send()
    };
    let mut admin = Events::new(basic("acme-admin").await.unwrap());
    let mut viewer = Events::new(basic("acme-viewer").await.unwrap());
    admin.expect("ready").await;
    viewer.expect("ready").await;
    room(&app, &rw, "Boardroom").await;
    admin.expect("statuses").await;
    viewer.expect("statuses").await;

    app.services
        .admin
        .set_user_disabled("acme", "acme-viewer", true)
        .await
        .unwrap();
    let closing = viewer.expect("closing").await;
    assert_eq!(closing.data, json!({"reason": "credentialsRevoked"}));
    assert_eq!(viewer.next().await, None, "ended");
    // Its credentials open nothing now.
    let (status, body) = json(basic("acme-viewer").await.unwrap()).await;
    assert_error(status, &body, 401, "BadCredentialsException", 1_285_563_821);

    app.services
        .admin
        .set_user_password("acme", "acme-admin", Secret::new("a-new-password-42"))
        .await
        .unwrap();
    let closing = admin.expect("closing").await;
    assert_eq!(closing.data, json!({"reason": "credentialsRevoked"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_streams_end_when_their_user_is_disabled_or_repassworded_on_sqlite() {
    basic_streams_end_when_their_user_is_disabled_or_repassworded(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_streams_end_when_their_user_is_disabled_or_repassworded_on_postgres() {
    basic_streams_end_when_their_user_is_disabled_or_repassworded(Backend::Postgres).await;
}

crate::on_every_backend!(
    a_ticket_opens_the_stream_and_changes_arrive,
    tickets_and_credentials_are_checked,
    revoking_the_token_ends_its_streams_and_its_tickets,
    a_reconnecting_stream_gets_what_it_missed,
);
