//! Outbound listeners: the real simulator connects out to the real app over a WebSocket
//! (docs/listener-protocol.md, "Transport: outbound WebSocket"), and commands, statuses and
//! faults travel over that socket with the same catalog answers as over HTTP.

use crate::support::app::{Backend, TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use roomlink_calendar::testing::{CalDavServer, PASSWORD, USER, vcalendar};
use roomlink_listener_protocol::dial_home::{DialHomeSettings, ListenerSecret, Timing};
use roomlink_listener_sim::version::Version;
use roomlink_listener_sim::{SimConfig, SimHandle, SimState, Surface};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// A simulator connected out to the app: its control surface and the way to stop it.
struct Outbound {
    control: String,
    _control: SimHandle,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), String>>,
}

impl Outbound {
    async fn start(app: &TestApp, listener: &str, secret: &str) -> Outbound {
        Self::start_as(app, listener, secret, SimConfig::default().version).await
    }

    /// A simulator reporting listener `version`.
    async fn start_as(app: &TestApp, listener: &str, secret: &str, version: Version) -> Outbound {
        let state = Arc::new(SimState::new(SimConfig {
            secret: Some(secret.to_owned()),
            version,
            ..SimConfig::default()
        }));
        let (control, handle) =
            roomlink_listener_sim::serve("127.0.0.1:0", state.clone(), Surface::Control, 1, false)
                .await
                .unwrap();
        let settings = DialHomeSettings {
            urls: vec![app.base.clone()],
            listener_id: listener.to_owned(),
            secret: ListenerSecret::new(secret).unwrap(),
            ca_file: None,
            timing: Timing {
                initial_delay: Duration::from_millis(100),
                max_delay: Duration::from_millis(500),
                ..Timing::default()
            },
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(roomlink_listener_sim::dial_home(settings, state, async {
            let _ = stopped.await;
        }));
        Outbound {
            control: format!("http://{control}"),
            _control: handle,
            stop: Some(stop),
            task,
        }
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), &mut self.task).await;
    }

    async fn room(&self, app: &TestApp, address: &str) -> Value {
        let response = app
            .client
            .get(format!("{}/sim/endpoints/{address}", self.control))
            .send()
            .await
            .unwrap();
        json(response).await.1
    }
}

/// Waits (bounded) until the listener shows `connected` as wanted; returns its record.
async fn until_connected(app: &TestApp, token: &str, id: &str, connected: bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, listener) = app
            .call(
                Method::GET,
                &format!("/api/listenerservices/{id}"),
                token,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{listener}");
        if listener["connected"] == json!(connected) {
            return listener;
        }
        assert!(
            Instant::now() < deadline,
            "listener never showed connected={connected}: {listener}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn outbound_listener(app: &TestApp, token: &str) -> (String, String) {
    let (status, created) = app
        .call(
            Method::POST,
            "/api/listenerservices",
            token,
            Some(json!({"name": "Site", "connection": "outbound"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["connection"], "outbound");
    assert_eq!(created["baseUrl"], Value::Null);
    (
        created["id"].as_str().unwrap().to_owned(),
        created["secret"].as_str().unwrap().to_owned(),
    )
}

async fn post(app: &TestApp, token: &str, path: &str) -> (StatusCode, Value) {
    app.call(Method::POST, path, token, None).await
}

async fn commands_statuses_and_faults_travel_over_the_socket(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let (id, secret) = outbound_listener(&app, &rw).await;
    let idle = until_connected(&app, &rw, &id, false).await;
    assert_eq!(idle["connectedSince"], Value::Null);
    assert_eq!(idle["health"], "offline", "{idle}");
    assert_eq!(idle["lastContact"], Value::Null, "{idle}");
    assert_eq!(
        idle["checkedAt"],
        Value::Null,
        "outbound: never checked: {idle}"
    );

    let sim = Outbound::start(&app, &id, &secret).await;
    let shown = until_connected(&app, &rw, &id, true).await;
    assert!(shown["connectedSince"].is_i64(), "{shown}");
    assert!(shown["listenerVersion"].is_string(), "{shown}");
    assert_eq!(shown["health"], "online", "{shown}");
    assert!(shown["lastContact"].is_i64(), "{shown}");
    assert!(!shown.to_string().contains(&secret));

    let endpoint = app
        .create_endpoint(
            &rw,
            json!({
                "name": "Boardroom", "ipAddress": "127.77.5.1", "port": 22,
                "controlProtocol": "TANDBERG_SSH", "listenerServiceId": id,
                "username": "admin", "password": "room-pw-secret"
            }),
        )
        .await;
    let api = format!("/api/endpoints/{}", endpoint["id"].as_str().unwrap());
    let (status, body) = post(&app, &rw, &format!("{api}/join?meetingid=123456789")).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let room = sim.room(&app, "127.77.5.1").await;
    assert_eq!(room["lastMeetingId"], "123456789", "{room}");
    let (status, _) = post(&app, &rw, &format!("{api}/mutemicrophone")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, state) = app
        .call(Method::GET, &format!("{api}/status"), &rw, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(state["microphoneMuted"], true, "{state}");

    // This instance holds the socket, so its poller asks this listener, inbound lease or not.
    assert_eq!(app.poll_now(&rw, false).await, 1);

    // A room fault comes back as its catalog error, with no password in it.
    let fault = app
        .client
        .put(format!("{}/sim/endpoints/127.77.5.1/fault", sim.control))
        .json(&json!({"fault": "bad_credentials"}))
        .send()
        .await
        .unwrap();
    assert!(fault.status().is_success());
    let (status, body) = post(&app, &rw, &format!("{api}/hangup")).await;
    assert_error(status, &body, 502, "AuthenticationFailed", 1_780_355_652);
    assert!(!body.to_string().contains("room-pw-secret"), "{body}");
    assert_eq!(body["errorDetails"]["listenerServiceId"], id.as_str());

    // The listener goes away: offline at once, and shown as not connected.
    sim.stop().await;
    until_connected(&app, &rw, &id, false).await;
    let (status, body) = post(&app, &rw, &format!("{api}/hangup")).await;
    assert_error(status, &body, 503, "ListenerOffline", 208_581_637);
}

/// `pushcalendar` travels over the socket like every command: a push round sends the room's
/// meetings to the simulator connected out.
async fn a_calendar_push_travels_over_the_socket(app: TestApp) {
    // 2027-01-15T09:00:00Z, an hour before the review.
    app.clock.set(1_800_003_600_000);
    let radicale = CalDavServer::radicale();
    let room = "outbound-room@corp.example";
    let review = vcalendar(
        "BEGIN:VEVENT
UID:review@corp.example
DTSTAMP:20270110T080000Z
DTSTART:20270115T100000Z
DTEND:20270115T110000Z
SUMMARY:Design review
LOCATION:https://bluejeans.com/123456789/4321
END:VEVENT
",
    );
    radicale.calendar(room, &[("review", review)]).await;
    let (rw, _) = app.tenant("acme").await;
    let (status, account) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/CALDAV",
            &rw,
            Some(json!({"baseUrl": radicale.base_url(), "username": USER, "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{account}");
    let (id, secret) = outbound_listener(&app, &rw).await;
    let sim = Outbound::start_as(&app, &id, &secret, Version::new(3, 1, 0)).await;
    until_connected(&app, &rw, &id, true).await;
    app.create_endpoint(
        &rw,
        json!({
            "name": "Huddle", "ipAddress": "127.77.5.9", "port": 443,
            "controlProtocol": "TANDBERG_HTTP", "listenerServiceId": id,
            "calendarId": room, "calendarType": "CALDAV", "calendarPushMode": "ENABLED"
        }),
    )
    .await;
    let round = app.services.calendar_push.run_once().await.unwrap();
    assert_eq!((round.pushed, round.failed), (1, 0), "{round:?}");
    let shown = sim.room(&app, "127.77.5.9").await;
    assert_eq!(shown["calendarPushes"], 1, "{shown}");
    assert_eq!(shown["calendar"]["meetings"][0]["title"], "Design review");
    assert_eq!(
        shown["calendar"]["meetings"][0]["dial"]["meetingId"],
        "123456789"
    );
    sim.stop().await;
}

/// Listener connections the service refused so far (any 4xx), from its metrics.
async fn refused_connects(app: &TestApp) -> u64 {
    app.metrics()
        .await
        .lines()
        .filter(|l| {
            l.starts_with("roomlink_http_requests_total{")
                && l.contains("route=\"/api/listenerservices/{id}/connect\"")
                && l.contains("status=\"4")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

async fn a_new_secret_closes_the_socket_and_the_old_one_is_refused(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let (id, secret) = outbound_listener(&app, &rw).await;
    let sim = Outbound::start(&app, &id, &secret).await;
    until_connected(&app, &rw, &id, true).await;
    let (status, body) = app
        .call(
            Method::PUT,
            &format!("/api/listenerservices/{id}"),
            &rw,
            Some(json!({"name": "Site", "connection": "outbound", "secret": "a-brand-new-secret-value"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["connected"].is_boolean(), "shaped like GET: {body}");
    // Closed with 4001; its reconnections with the old secret are refused: at least one more
    // is seen refused, and the listener is still not connected after it.
    until_connected(&app, &rw, &id, false).await;
    let refused = refused_connects(&app).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while refused_connects(&app).await <= refused {
        assert!(
            std::time::Instant::now() < deadline,
            "no reconnection was tried"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    until_connected(&app, &rw, &id, false).await;
    sim.stop().await;
}

async fn the_handshake_refuses_what_it_must(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let (id, secret) = outbound_listener(&app, &rw).await;
    let connect =
        |id: &str| app.request(Method::GET, &format!("/api/listenerservices/{id}/connect"));
    let (status, body) = json(connect(&id).send().await.unwrap()).await;
    assert_error(status, &body, 401, "NotAuthenticated", 1_285_563_822);
    for (who, presented) in [
        (id.as_str(), "not-the-secret-at-all"),
        ("0123456789abcdef01234567", secret.as_str()),
    ] {
        let (status, body) = json(connect(who).bearer_auth(presented).send().await.unwrap()).await;
        assert_error(status, &body, 401, "BadCredentialsException", 1_285_563_821);
        assert!(!body.to_string().contains(presented));
    }
    // The right secret without a WebSocket upgrade.
    let (status, body) = json(connect(&id).bearer_auth(&secret).send().await.unwrap()).await;
    assert_error(status, &body, 400, "Invalid", 1_782_937_293);
    // An inbound listener cannot connect.
    let (status, inbound) = app
        .call(
            Method::POST,
            "/api/listenerservices",
            &rw,
            Some(json!({"name": "HQ", "baseUrl": "http://127.0.0.1:9", "secret": "inbound-listener-secret"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(inbound["connection"], "inbound");
    let inbound_id = inbound["id"].as_str().unwrap();
    let (status, body) = json(
        connect(inbound_id)
            .bearer_auth("inbound-listener-secret")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &body, 400, "Invalid", 1_782_937_293);
    let (_, shown) = app
        .call(
            Method::GET,
            &format!("/api/listenerservices/{inbound_id}"),
            &rw,
            None,
        )
        .await;
    assert_eq!(shown["connected"], Value::Null, "{shown}");
}

/// The list shows each listener's own connection: of three outbound listeners the two with a
/// socket open are connected and the third is not, and an inbound one has none to show.
async fn the_list_shows_each_listeners_own_connection(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let (first, first_secret) = outbound_listener(&app, &rw).await;
    let (idle, _) = outbound_listener(&app, &rw).await;
    let (third, third_secret) = outbound_listener(&app, &rw).await;
    let (status, inbound) = app
        .call(
            Method::POST,
            "/api/listenerservices",
            &rw,
            Some(json!({"name": "Inbound", "baseUrl": "http://127.0.0.1:9"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{inbound}");
    let sims = [
        Outbound::start(&app, &first, &first_secret).await,
        Outbound::start(&app, &third, &third_secret).await,
    ];
    until_connected(&app, &rw, &first, true).await;
    until_connected(&app, &rw, &third, true).await;

    let (status, list) = app
        .call(Method::GET, "/api/listenerservices", &rw, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let connected = |id: &str| {
        let shown = list
            .as_array()
            .and_then(|all| all.iter().find(|l| l["id"] == id))
            .unwrap_or_else(|| panic!("{id} is not in {list}"));
        shown["connected"].clone()
    };
    assert_eq!(connected(&first), json!(true));
    assert_eq!(connected(&third), json!(true));
    assert_eq!(connected(&idle), json!(false));
    assert_eq!(
        connected(inbound["id"].as_str().unwrap()),
        Value::Null,
        "inbound: no socket to show"
    );
    for sim in sims {
        sim.stop().await;
    }
}

/// Each test on SQLite and, when configured, PostgreSQL, with a short command timeout.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let app = TestApp::spawn_with(Backend::Sqlite, SETTINGS).await.expect("app");
                    super::$name(app).await;
                }
            )*
            use super::*;
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if let Some(app) = TestApp::spawn_with(Backend::Postgres, SETTINGS).await {
                        super::$name(app).await;
                    }
                }
            )*
            use super::*;
        }
    };
}

const SETTINGS: &[(&str, &str)] = &[("ROOMLINK__LISTENER__COMMAND_TIMEOUT_MS", "2000")];

on_both!(
    commands_statuses_and_faults_travel_over_the_socket,
    a_calendar_push_travels_over_the_socket,
    a_new_secret_closes_the_socket_and_the_old_one_is_refused,
    the_handshake_refuses_what_it_must,
    the_list_shows_each_listeners_own_connection,
);
