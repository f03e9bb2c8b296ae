//! Several instances as one (issue #14): three `roomlink serve` processes on one PostgreSQL
//! database and one real `nats-server` of the test's own, with an outbound listener (the
//! simulator) connected to one of them.
//!
//! Proves: a command sent to any instance reaches the listener wherever it is connected; a
//! token deleted through one instance is refused by another at once (not after the 5 s cache),
//! and so are the tokens an admin command revokes (user disabled, deleted or given a new
//! password, enterprise deleted), on every instance;
//! killing the holding instance moves the listener to another and commands work again, while
//! commands in flight end with `ListenerOffline` or `CommandTimedOut` and reach their room once;
//! commands and writes flowing through every instance meanwhile (traffic.rs) get only answers a
//! client can act on and lose no acknowledged write; while NATS is down a deleted token is served
//! by other instances no longer than their cache's lifetime; the endpoint limit and
//! Zero Touch pairings hold across instances; an inbound listener is polled by one instance, and
//! by another once that one dies; a listener cannot connect with another listener's secret; and a NATS
//! restart heals without restarting roomlink. Needs `ROOMLINK_TEST_DATABASE_URL` (CI sets it)
//! and `nats-server` on the PATH or in /usr/sbin (CI installs it).

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

mod traffic;

use crate::support::nats::{Nats, free_port};
use crate::support::service::{Service, sigkill, token, token_as};
use reqwest::{Method, StatusCode};
use roomlink_listener_protocol::dial_home::{DialHomeSettings, ListenerSecret, Timing};
use roomlink_listener_sim::{SimConfig, SimState, Surface};
use serde_json::{Value, json};
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};
use traffic::Traffic;

const COMMAND_TIMEOUT_MS: u64 = 3000;

/// How long an instance may serve a token from its cache without asking the database
/// (`security.token_cache_ms`): how long a revocation may take when NATS cannot announce it.
const TOKEN_CACHE: Duration = Duration::from_secs(5);

/// One companion-platform user with Zero Touch, in the enterprise the test creates.
const PLATFORM_USERS: &str = r#"
[[users]]
username = "alice@example.com"
password = "alice-platform-pw"
platform_id = 1001
enterprise = "acme"
enterprise_admin = true
first_name = "Alice"
last_name = "Liddell"
zero_touch = true
access_tokens = ["plat-token-alice"]
"#;

/// Instances that are killed when the test ends, however it ends.
pub(crate) struct Instances(pub(crate) Vec<Option<Child>>);

impl Instances {
    fn kill(&mut self, i: usize) {
        if let Some(child) = self.0[i].take() {
            sigkill(child);
        }
    }
}

impl Drop for Instances {
    fn drop(&mut self) {
        for i in 0..self.0.len() {
            self.kill(i);
        }
    }
}

struct Client {
    http: reqwest::Client,
    token: String,
}

impl Client {
    async fn call(&self, method: Method, url: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut request = self
            .http
            .request(method, url)
            .header("X-Access-Token", &self.token)
            .timeout(Duration::from_millis(COMMAND_TIMEOUT_MS * 3));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let bytes = response.bytes().await.unwrap();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, body)
    }
}

/// Polls `check` until it is true, at most `within`; returns how long it took.
async fn until<F, Fut>(what: &str, within: Duration, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    loop {
        if check().await {
            return start.elapsed();
        }
        assert!(start.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_act_as_one() {
    let Some(database) = roomlink_store::testing::TestDatabase::create().await else {
        eprintln!("three_instances_act_as_one: SKIPPED (set ROOMLINK_TEST_DATABASE_URL)");
        return;
    };
    let mut nats = Nats::start(free_port());
    let mut service = Service::new(tempfile::tempdir().unwrap(), database.url().to_owned());
    service.env = vec![
        ("ROOMLINK__CLUSTER__NATS_URL".into(), nats.url()),
        (
            "ROOMLINK__LISTENER__COMMAND_TIMEOUT_MS".into(),
            COMMAND_TIMEOUT_MS.to_string(),
        ),
        (
            "ROOMLINK__LISTENER__STATUS_POLL_INTERVAL_MS".into(),
            "1000".into(),
        ),
        (
            "ROOMLINK__SECURITY__TOKEN_CACHE_MS".into(),
            TOKEN_CACHE.as_millis().to_string(),
        ),
    ];
    let users = service.dir.path().join("platform-users.toml");
    std::fs::write(&users, PLATFORM_USERS).unwrap();
    service.env.push((
        "ROOMLINK__PLATFORM__STATIC_FILE".into(),
        users.display().to_string(),
    ));
    service.tenant("acme");
    service.admin(&["admin", "enterprise", "set-limit", "acme", "4"], "");
    let mut children = Vec::new();
    let mut bases = Vec::new();
    for _ in 0..3 {
        let (child, address) = service.serve();
        children.push(Some(child));
        bases.push(format!("http://{address}"));
    }
    let mut instances = Instances(children);
    let [a, b, c] = [&bases[0], &bases[1], &bases[2]];
    let http = reqwest::Client::new();
    let client = Client {
        token: token(&http, a.trim_start_matches("http://"), "acme").await,
        http: http.clone(),
    };

    // An outbound listener that tries A first, then B, then C.
    let (status, listener) = client
        .call(
            Method::POST,
            &format!("{a}/api/listenerservices"),
            Some(json!({"name": "Site", "connection": "outbound"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{listener}");
    let listener_id = listener["id"].as_str().unwrap().to_owned();
    let secret = listener["secret"].as_str().unwrap().to_owned();
    let state = Arc::new(SimState::new(SimConfig {
        secret: Some(secret.clone()),
        ..SimConfig::default()
    }));
    let (control, _control) =
        roomlink_listener_sim::serve("127.0.0.1:0", state.clone(), Surface::Control, 1, false)
            .await
            .unwrap();
    let settings = DialHomeSettings {
        urls: bases.clone(),
        listener_id: listener_id.clone(),
        secret: ListenerSecret::new(&secret).unwrap(),
        ca_file: None,
        timing: Timing {
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
            ..Timing::default()
        },
    };
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(roomlink_listener_sim::dial_home(settings, state, async {
        let _ = stopped.await;
    }));
    let shown_connected = |base: String| {
        let url = format!("{base}/api/listenerservices/{listener_id}");
        let client = &client;
        async move { client.call(Method::GET, &url, None).await.1["connected"] == true }
    };
    until("connected, as C sees it", Duration::from_secs(10), || {
        shown_connected(c.clone())
    })
    .await;

    // Endpoints through B; a command through C reaches the listener held by A.
    let (status, endpoint) = client
        .call(
            Method::POST,
            &format!("{b}/api/endpoints"),
            Some(json!({
                "name": "Boardroom", "ipAddress": "127.77.6.1", "controlProtocol": "TANDBERG_SSH",
                "listenerServiceId": listener_id, "username": "admin", "password": "room-pw-secret"
            })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{endpoint}");
    let room = endpoint["id"].as_str().unwrap().to_owned();
    let (status, body) = client
        .call(
            Method::POST,
            &format!("{c}/api/endpoints/{room}/join?meetingid=4242"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let seen: Value = http
        .get(format!("http://{control}/sim/endpoints/127.77.6.1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(seen["lastMeetingId"], "4242", "{seen}");
    // The holder polls the listener's statuses; every instance serves them.
    until(
        "a polled status, as B sees it",
        Duration::from_secs(10),
        || {
            let url = format!("{b}/api/endpoints/status");
            let client = &client;
            async move {
                let (_, statuses) = client.call(Method::GET, &url, None).await;
                statuses[0]["callActive"] == true
            }
        },
    )
    .await;

    // An inbound listener: polled by exactly one instance, the holder of the poll lease.
    let (inbound_sim, _inbound_sim) =
        roomlink_listener_sim::start("127.0.0.1:0", SimConfig::default())
            .await
            .unwrap();
    let (status, inbound) = client
        .call(
            Method::POST,
            &format!("{c}/api/listenerservices"),
            Some(json!({"name": "HQ", "baseUrl": format!("http://{inbound_sim}")})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{inbound}");
    let (status, body) = client
        .call(
            Method::POST,
            &format!("{c}/api/endpoints"),
            Some(json!({
                "name": "HQ room", "ipAddress": "127.77.6.9", "controlProtocol": "TANDBERG_SSH",
                "listenerServiceId": inbound["id"], "username": "admin", "password": "room-pw-secret"
            })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let inbound_room = body["id"].as_str().unwrap().to_owned();
    let polled_at = |base: String| {
        let client = &client;
        let room = inbound_room.clone();
        async move {
            let (_, status) = client
                .call(
                    Method::GET,
                    &format!("{base}/api/endpoints/{room}/status"),
                    None,
                )
                .await;
            status["timestamp"].as_i64()
        }
    };
    until("the inbound room polled", Duration::from_secs(10), || {
        let at = polled_at(a.clone());
        async move { at.await.is_some() }
    })
    .await;
    let status_requests = || {
        let http = http.clone();
        async move {
            let stats: Value = http
                .get(format!("http://{inbound_sim}/sim/stats"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            stats["statusRequests"].as_u64().unwrap()
        }
    };
    let before = status_requests().await;
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let polls = status_requests().await - before;
    eprintln!("status polls of the inbound listener in 3.5 s with three instances: {polls}");
    // One poller at a 1 s interval: about 3; three pollers would make about 10. The window
    // must have seen polling rounds, or the bound would hold vacuously.
    assert!(
        polls >= 2,
        "{polls} status polls in 3.5 s: the window saw no rounds"
    );
    assert!(
        polls <= 6,
        "{polls} status polls in 3.5 s: more than one instance polls"
    );

    // The endpoint limit (4) holds across instances.
    let mut rooms = Vec::new();
    for (i, base) in [a, b, c].into_iter().enumerate() {
        let (status, body) = client
            .call(
                Method::POST,
                &format!("{base}/api/endpoints"),
                Some(json!({"name": format!("Room {i}"), "ipAddress": format!("127.77.6.{}", i + 2)})),
            )
            .await;
        let expected = if i < 2 { 200 } else { 403 };
        assert_eq!(status.as_u16(), expected, "{base}: {body}");
        rooms.extend(body["id"].as_str().map(str::to_owned));
    }
    let [hung_room, writable] = <[String; 2]>::try_from(rooms).unwrap();

    // A token deleted through A is refused by C at once, not after C's 5 s cache.
    let doomed = token(&http, a.trim_start_matches("http://"), "acme").await;
    let on_c = |t: String| {
        let http = http.clone();
        let url = format!("{c}/api/endpoints");
        async move {
            http.get(url)
                .header("X-Access-Token", t)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(on_c(doomed.clone()).await, StatusCode::OK, "cached on C");
    let (status, _) = client
        .call(
            Method::DELETE,
            &format!("{a}/api/auth/accesstokens/{doomed}"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let took = until(
        "the deleted token refused by C",
        Duration::from_secs(2),
        || {
            let status = on_c(doomed.clone());
            async move { status.await == StatusCode::UNAUTHORIZED }
        },
    )
    .await;
    eprintln!("deleted token refused by another instance after {took:?}");

    // Zero Touch across instances: the code read through A, the companion's token made
    // through B and used through C; A lists the pairing that C's use created.
    let (status, code) = client
        .call(
            Method::GET,
            &format!("{a}/api/endpoints/{room}/currentpairingcode"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{code}");
    let created = http
        .post(format!(
            "{b}/api/auth/accesstokens?platformaccesstoken=plat-token-alice&code={}&clientDeviceType=IOS_NATIVE",
            code["code"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::OK);
    let companion = Client {
        token: created.json::<Value>().await.unwrap()["accessToken"]
            .as_str()
            .unwrap()
            .to_owned(),
        http: http.clone(),
    };
    let (status, body) = companion
        .call(
            Method::GET,
            &format!("{c}/api/endpoints/{room}/status"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, paired) = client
        .call(
            Method::GET,
            &format!("{a}/api/endpoints/{room}/paired"),
            None,
        )
        .await;
    assert_eq!(paired.as_array().map(Vec::len), Some(1), "{paired}");
    assert_eq!(paired[0]["username"], "alice@example.com");

    // Another listener's secret does not open this one.
    let (_, other) = client
        .call(
            Method::POST,
            &format!("{b}/api/listenerservices"),
            Some(json!({"name": "Other", "connection": "outbound"})),
        )
        .await;
    let refused = http
        .get(format!(
            "{b}/api/listenerservices/{}/connect",
            other["id"].as_str().unwrap()
        ))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);

    // A command in flight when the holder dies ends within the timeout, with one of the two
    // answers a client can act on, and reaches the room once (never repeated). Its room hangs
    // every command; another room takes commands and a third endpoint writes all along.
    let (status, body) = client
        .call(
            Method::PATCH,
            &format!("{b}/api/endpoints/{hung_room}"),
            Some(json!({
                "listenerServiceId": listener_id, "controlProtocol": "TANDBERG_SSH",
                "username": "admin", "password": "room-pw-secret"
            })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let hung_commands = || {
        let url = format!("http://{control}/sim/endpoints/127.77.6.2");
        let http = http.clone();
        async move {
            let seen: Value = http.get(url).send().await.unwrap().json().await.unwrap();
            seen["commandsByName"]["hangup"].as_u64().unwrap_or(0)
        }
    };
    let traffic = Traffic::start(
        &http,
        &client.token,
        &bases,
        &room,
        &writable,
        Duration::from_millis(COMMAND_TIMEOUT_MS * 3),
    );
    let hang = http
        .put(format!("http://{control}/sim/endpoints/127.77.6.2/fault"))
        .json(&json!({"fault": "listener_hang"}))
        .send()
        .await
        .unwrap();
    assert!(hang.status().is_success());
    let in_flight = {
        let url = format!("{b}/api/endpoints/{hung_room}/hangup");
        let http = http.clone();
        let token = client.token.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let response = http
                .post(url)
                .header("X-Access-Token", token)
                .send()
                .await
                .unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            (status, body, started.elapsed())
        })
    };
    until(
        "the hung command at the room",
        Duration::from_secs(10),
        || {
            let count = hung_commands();
            async move { count.await == 1 }
        },
    )
    .await;
    instances.kill(0);
    let killed = Instant::now();
    // The listener reconnects to B or C, and commands through C work again.
    until(
        "a command through C after A died",
        Duration::from_secs(5),
        || {
            let url = format!("{c}/api/endpoints/{room}/mutemicrophone");
            let client = &client;
            async move { client.call(Method::POST, &url, None).await.0 == StatusCode::NO_CONTENT }
        },
    )
    .await;
    eprintln!(
        "commands worked again {:?} after the holder was killed",
        killed.elapsed()
    );
    // If A held the poll lease, another instance takes it: the inbound room is polled on.
    let last = polled_at(b.clone()).await.unwrap();
    let took = until(
        "the inbound room polled after A died",
        Duration::from_secs(10),
        || {
            let at = polled_at(b.clone());
            async move { at.await.is_some_and(|t| t >= last + 2000) }
        },
    )
    .await;
    eprintln!(
        "inbound polling went on; two more seconds of polls seen {took:?} after the check began"
    );
    let (status, body, took) = in_flight.await.unwrap();
    eprintln!(
        "in flight during the kill: {} after {took:?}",
        body["errorName"].as_str().unwrap_or("?")
    );
    assert!(
        matches!(
            body["errorName"].as_str(),
            Some("ListenerOffline" | "CommandTimedOut")
        ),
        "{status}: {body}"
    );
    assert!(
        took < Duration::from_millis(COMMAND_TIMEOUT_MS + 2000),
        "{took:?}"
    );
    assert_eq!(
        hung_commands().await,
        1,
        "the command in flight reached the room once"
    );

    // NATS restarts under traffic: the instances heal without a restart of their own.
    nats.stop();
    let down = client
        .call(Method::GET, &format!("{c}/api/endpoints"), None)
        .await
        .0;
    assert_eq!(down, StatusCode::OK, "reads do not need NATS");
    // Commands answer at once: done (the listener is held by the instance asked) or offline.
    for base in [b, c] {
        let started = Instant::now();
        let (status, body) = client
            .call(
                Method::POST,
                &format!("{base}/api/endpoints/{room}/mutemicrophone"),
                None,
            )
            .await;
        assert!(
            status == StatusCode::NO_CONTENT || body["errorName"] == "ListenerOffline",
            "{status}: {body}"
        );
        assert!(
            started.elapsed() < Duration::from_millis(COMMAND_TIMEOUT_MS),
            "{base}"
        );
    }
    revoked_without_nats(&http, b, c).await;
    let port = nats.port;
    let _nats = Nats::start(port);
    let took = until(
        "commands through B and C after NATS restarted",
        Duration::from_secs(5),
        || {
            let client = &client;
            let (b, c, room) = (b.clone(), c.clone(), room.clone());
            async move {
                let mut ok = true;
                for base in [b, c] {
                    let url = format!("{base}/api/endpoints/{room}/unmutemicrophone");
                    ok &= client.call(Method::POST, &url, None).await.0 == StatusCode::NO_CONTENT;
                }
                ok
            }
        },
    )
    .await;
    eprintln!("commands through every instance worked again {took:?} after NATS restarted");

    // What flowed meanwhile: every answer one a client can act on, no acknowledged write lost,
    // and the command in flight at the kill still reached its room only once.
    let flowed = traffic.stop().await;
    eprintln!("while A died and NATS restarted: {}", flowed.check(0));
    let (status, kept) = client
        .call(Method::GET, &format!("{c}/api/endpoints/{writable}"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{kept}");
    let expected = flowed.expected_names();
    assert!(
        expected.iter().any(|name| kept["name"] == name.as_str()),
        "the last acknowledged write is kept: {} not in {expected:?}",
        kept["name"]
    );
    assert_eq!(hung_commands().await, 1, "never repeated");
}

/// A token deleted through `b` while NATS is down: `c` cannot hear of it and serves it from its
/// cache, but never longer than the cache's lifetime (from when `c` cached it).
async fn revoked_without_nats(http: &reqwest::Client, b: &str, c: &str) {
    let doomed = token(http, b.trim_start_matches("http://"), "acme").await;
    let on_c = || {
        let request = http
            .get(format!("{c}/api/endpoints"))
            .header("X-Access-Token", &doomed)
            .send();
        async move { request.await.unwrap().status() }
    };
    assert_eq!(on_c().await, StatusCode::OK, "cached on C");
    let cached_by = Instant::now();
    let deleted = http
        .delete(format!("{b}/api/auth/accesstokens/{doomed}"))
        .header("X-Access-Token", &doomed)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let deleted_at = Instant::now();
    let mut served = 0;
    loop {
        let asked = Instant::now();
        match on_c().await {
            StatusCode::OK => {
                assert!(
                    asked < cached_by + TOKEN_CACHE,
                    "served {:?} after it was cached (lifetime {TOKEN_CACHE:?})",
                    asked - cached_by
                );
                served += 1;
            }
            StatusCode::UNAUTHORIZED => break,
            other => panic!("{other}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "a token deleted while NATS was down: served {served} more times by another instance, \
         refused {:?} after the deletion (cache lifetime {TOKEN_CACHE:?})",
        deleted_at.elapsed()
    );
}

/// Every way an operator revokes tokens, run as `roomlink admin` (a process of its own, no
/// instance): each of three instances refuses the token as soon as the command's event
/// arrives. The instances keep tokens for a minute here (`security.token_cache_ms`), so only
/// the event can explain a refusal within the bound below.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revocations_reach_every_instance() {
    let Some(database) = roomlink_store::testing::TestDatabase::create().await else {
        eprintln!("revocations_reach_every_instance: SKIPPED (set ROOMLINK_TEST_DATABASE_URL)");
        return;
    };
    let nats = Nats::start(free_port());
    let mut service = Service::new(tempfile::tempdir().unwrap(), database.url().to_owned());
    service.env = vec![
        ("ROOMLINK__CLUSTER__NATS_URL".into(), nats.url()),
        ("ROOMLINK__SECURITY__TOKEN_CACHE_MS".into(), "60000".into()),
    ];
    service.tenant("acme");
    service.tenant("doomed");
    for user in ["disabled", "renewed", "deleted"] {
        let username = format!("acme-{user}");
        service.admin(
            &[
                "admin",
                "user",
                "create",
                "--enterprise",
                "acme",
                "--username",
                &username,
                "--role",
                "ROLE_READONLY",
                "--password-stdin",
            ],
            &format!("{username}-password\n"),
        );
    }
    let mut children = Vec::new();
    let mut bases = Vec::new();
    for _ in 0..3 {
        let (child, address) = service.serve();
        children.push(Some(child));
        bases.push(address);
    }
    let _instances = Instances(children);
    let http = reqwest::Client::new();
    let status_on = |address: &str, token: &str| {
        let request = http
            .get(format!("http://{address}/api/endpoints"))
            .header("X-Access-Token", token)
            .send();
        async move { request.await.unwrap().status() }
    };

    let cases: [(&str, &str, &str, Vec<&str>, &str); 4] = [
        (
            "user disabled",
            "acme-disabled",
            "acme-disabled-password",
            vec![
                "admin",
                "user",
                "disable",
                "--enterprise",
                "acme",
                "--username",
                "acme-disabled",
            ],
            "",
        ),
        (
            "password changed",
            "acme-renewed",
            "acme-renewed-password",
            vec![
                "admin",
                "user",
                "set-password",
                "--enterprise",
                "acme",
                "--username",
                "acme-renewed",
                "--password-stdin",
            ],
            "a-new-password-1\n",
        ),
        (
            "user deleted",
            "acme-deleted",
            "acme-deleted-password",
            vec![
                "admin",
                "user",
                "delete",
                "--enterprise",
                "acme",
                "--username",
                "acme-deleted",
            ],
            "",
        ),
        (
            "enterprise deleted",
            "doomed-ops",
            "doomed-password-1",
            vec!["admin", "enterprise", "delete", "doomed", "--yes"],
            "",
        ),
    ];
    for (what, username, password, args, stdin) in cases {
        let token = token_as(&http, &bases[0], username, password).await;
        for address in &bases {
            assert_eq!(
                status_on(address, &token).await,
                StatusCode::OK,
                "{what}: the token works on {address} (and is cached there)"
            );
        }
        service.admin(&args, stdin);
        let returned = Instant::now();
        // Each instance is asked until it refuses, then left alone (a refusal counts against
        // the failed-authentication throttle).
        let mut took = Vec::new();
        for address in &bases {
            until(
                &format!("{what}: the token refused by {address}"),
                Duration::from_secs(10),
                || {
                    let status = status_on(address, &token);
                    async move { status.await == StatusCode::UNAUTHORIZED }
                },
            )
            .await;
            took.push(returned.elapsed());
        }
        eprintln!("{what}: refused by the three instances {took:?} after the command returned");
    }
}
