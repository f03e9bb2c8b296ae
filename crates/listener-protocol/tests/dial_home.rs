//! The outbound transport's loop against a small roomlink (tests/support/fake_roomlink.rs) on
//! loopback, with a scripted handler and short timings; over `ws://`, and over `wss://` with a
//! CA of the test's own (tests/support/fake_roomlink_tls.rs).

#[path = "support/fake_roomlink.rs"]
mod fake_roomlink;
#[path = "support/fake_roomlink_tls.rs"]
mod fake_roomlink_tls;

use fake_roomlink::FakeRoomlink;
use roomlink_listener_protocol::dial_home::{
    self, DialHomeSettings, Handler, ListenerSecret, Timing,
};
use roomlink_listener_protocol::server::{Answer, Route};
use roomlink_listener_protocol::version::Version;
use serde_json::{Value, json};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

const ID: &str = "5f0c9289e4b0c0c6485f4cfa";
const SECRET: &str = "dial-home-test-secret-42";
const VERSION: Version = Version::new(3, 1, 4);

/// Answers by command name: `slow` after a while, `hang` never, `reset` drops the socket;
/// `status` echoes its body.
struct Script;

impl Handler for Script {
    fn handle(&self, route: Route<'_>, body: &[u8]) -> impl Future<Output = Answer> + Send {
        let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let route = match route {
            Route::Info => "info".to_owned(),
            Route::Status => "status".to_owned(),
            Route::Command(name) => name.to_owned(),
        };
        async move {
            match route.as_str() {
                "info" => Answer::ok(json!({"version": VERSION.to_string()})),
                "status" => Answer::ok(json!({"echo": body})),
                "slow" => {
                    tokio::time::sleep(Duration::from_millis(600)).await;
                    Answer::ok(json!({"slow": true}))
                }
                "hang" => futures::future::pending().await,
                "reset" => Answer::Reset,
                other => Answer::ok(json!({"command": other})),
            }
        }
    }
}

fn timing() -> Timing {
    Timing {
        idle_timeout: Duration::from_secs(30),
        initial_delay: Duration::from_millis(50),
        max_delay: Duration::from_millis(400),
        reset_after: Duration::from_secs(10),
        handshake_timeout: Duration::from_secs(5),
    }
}

type Loop = (
    oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), String>>,
);

/// The loop running against `urls`; dropping the sender (or sending) stops it.
fn start(urls: Vec<String>, timing: Timing) -> Loop {
    start_trusting(urls, timing, None)
}

/// The loop, trusting the certificates of `ca_file` besides the system's for `wss://`.
fn start_trusting(urls: Vec<String>, timing: Timing, ca_file: Option<PathBuf>) -> Loop {
    let settings = DialHomeSettings {
        urls,
        listener_id: ID.into(),
        secret: ListenerSecret::new(SECRET).expect("a secret"),
        ca_file,
        timing,
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(dial_home::run(
        settings,
        VERSION,
        Arc::new(Script),
        async move {
            let _ = stopped.await;
        },
    ));
    (stop, task)
}

#[tokio::test]
async fn connects_with_path_secret_subprotocol_and_version_and_answers_requests() {
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    let (stop, task) = start(vec![roomlink.base.clone()], timing());
    let attempt = roomlink.attempt().await;
    assert_eq!(attempt.path, format!("/api/listenerservices/{ID}/connect"));
    assert!(attempt.authorized && attempt.subprotocol, "{attempt:?}");
    assert_eq!(attempt.version.as_deref(), Some("3.1.4"));
    let mut conn = roomlink.accept().await;

    let info = conn.exchange("GET", "/v1/info", Value::Null).await;
    assert_eq!(info["status"], 200);
    assert_eq!(info["version"], "3.1.4");
    assert_eq!(info["body"], json!({"version": "3.1.4"}));
    let status = conn
        .exchange("POST", "/v1/status", json!({"endpoints": []}))
        .await;
    assert_eq!(status["body"], json!({"echo": {"endpoints": []}}));
    let unknown = conn.exchange("DELETE", "/v1/info", Value::Null).await;
    assert_eq!(unknown["status"], 404);
    assert_eq!(unknown["body"]["failure"], "no_such_handler");

    conn.ping().await;
    assert!(conn.pong().await, "a ping is answered");

    // Shutdown closes with 1001 and ends the loop.
    stop.send(()).expect("the loop runs");
    assert_eq!(conn.closed().await, Some(1001));
    let ended = tokio::time::timeout(Duration::from_secs(10), task).await;
    assert_eq!(ended.expect("ends").expect("no panic"), Ok(()));
}

#[tokio::test]
async fn requests_run_concurrently_and_answers_match_by_id() {
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    let (stop, task) = start(vec![roomlink.base.clone()], timing());
    let mut conn = roomlink.accept().await;
    let hang = conn.send("POST", "/v1/commands/hang", json!({})).await;
    let slow = conn.send("POST", "/v1/commands/slow", json!({})).await;
    let quick = conn.send("POST", "/v1/status", json!({"n": 1})).await;
    let first = conn.answer().await;
    assert_eq!(
        first["id"], quick,
        "the status does not wait for the slow join: {first}"
    );
    assert_eq!(first["body"], json!({"echo": {"n": 1}}));
    let second = conn.answer().await;
    assert_eq!(second["id"], slow);
    assert_eq!(second["body"], json!({"slow": true}));
    // The hanging request holds nothing up: the socket stays usable, and over its whole life
    // (until the loop stops and closes it) the hanging request is never answered.
    let after = conn.exchange("GET", "/v1/info", Value::Null).await;
    assert_ne!(after["id"], hang);
    stop.send(()).expect("the loop runs");
    let (answers, code) = conn.answers_until_closed().await;
    assert_eq!(code, Some(1001));
    assert!(answers.is_empty(), "{answers:?}");
    assert_eq!(task.await.expect("no panic"), Ok(()));
}

#[tokio::test]
async fn frames_that_are_not_requests_get_a_400_when_they_have_an_id() {
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    let (_stop, _task) = start(vec![roomlink.base.clone()], timing());
    let mut conn = roomlink.accept().await;
    conn.send_text("not json at all".into()).await;
    conn.send_text(json!({"method": "GET", "path": "/v1/info"}).to_string())
        .await;
    conn.send_text(json!({"id": 77, "method": 5}).to_string())
        .await;
    let answer = conn.answer().await;
    assert_eq!(answer["id"], 77);
    assert_eq!(answer["status"], 400);
    assert_eq!(answer["version"], "3.1.4");
    assert_eq!(answer["body"]["failure"], "bad_request");
}

#[tokio::test]
async fn reconnects_after_a_drop_a_replacement_and_a_reset() {
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    let (_stop, _task) = start(vec![roomlink.base.clone()], timing());
    // roomlink drops the connection without a close frame.
    drop(roomlink.accept().await);
    // roomlink replaces it (4000).
    let conn = roomlink.accept().await;
    conn.close(4000).await;
    // A handler's reset drops the socket; the listener comes back and serves again.
    let mut conn = roomlink.accept().await;
    conn.send("POST", "/v1/commands/reset", json!({})).await;
    assert_eq!(conn.closed().await, None, "dropped without a close frame");
    let mut conn = roomlink.accept().await;
    let info = conn.exchange("GET", "/v1/info", Value::Null).await;
    assert_eq!(info["status"], 200);
}

#[tokio::test]
async fn a_refused_url_moves_on_to_the_next() {
    // A port nobody listens on: bind, note it, close.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    let dead = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    let (_stop, _task) = start(vec![dead, roomlink.base.clone()], timing());
    let mut conn = roomlink.accept().await;
    let info = conn.exchange("GET", "/v1/info", Value::Null).await;
    assert_eq!(info["status"], 200);
}

#[tokio::test]
async fn a_401_is_retried_after_a_backoff() {
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    roomlink
        .refuse_next
        .store(1, std::sync::atomic::Ordering::SeqCst);
    let (_stop, _task) = start(vec![roomlink.base.clone()], timing());
    assert_eq!(roomlink.attempt().await.status, 401);
    let second = roomlink.attempt().await;
    assert_eq!(second.status, 101, "{second:?}");
    let mut conn = roomlink.accept().await;
    assert_eq!(
        conn.exchange("GET", "/v1/info", Value::Null).await["status"],
        200
    );
}

#[tokio::test]
async fn a_wrong_secret_is_refused_and_retried_without_leaking_it() {
    let roomlink = FakeRoomlink::start(ID, "another-secret-entirely").await;
    let (_stop, _task) = start(vec![roomlink.base.clone()], timing());
    let first = roomlink.attempt().await;
    assert!(!first.authorized && first.status == 401);
    assert_eq!(
        roomlink.attempt().await.status,
        401,
        "a second attempt comes"
    );
}

#[tokio::test]
async fn a_silent_socket_is_closed_and_dialed_again() {
    let mut roomlink = FakeRoomlink::start(ID, SECRET).await;
    let (_stop, _task) = start(
        vec![roomlink.base.clone()],
        Timing {
            idle_timeout: Duration::from_millis(300),
            ..timing()
        },
    );
    let first = roomlink.accept().await;
    // roomlink sends nothing, not even a ping: the listener gives the socket up and returns.
    let mut second = roomlink.accept().await;
    drop(first);
    assert_eq!(
        second.exchange("GET", "/v1/info", Value::Null).await["status"],
        200
    );
}

// ---- wss:// ----

/// Stops the loop and expects it to end cleanly (no panic, no error).
async fn stop_and_join((stop, task): Loop) {
    let _ = stop.send(());
    let ended = tokio::time::timeout(Duration::from_secs(10), task).await;
    assert_eq!(ended.expect("ends").expect("no panic"), Ok(()));
}

#[tokio::test]
async fn wss_with_the_ca_file_connects_and_answers() {
    let (mut roomlink, ca) = fake_roomlink_tls::start_tls(ID, SECRET).await;
    let base = roomlink.base.replace("https://", "wss://");
    assert!(base.starts_with("wss://127.0.0.1:"), "{base}");
    let (stop, task) = start_trusting(vec![base], timing(), Some(ca.pem_file()));
    assert_eq!(roomlink.layer().await, Ok(()), "the TLS handshake succeeds");
    let attempt = roomlink.attempt().await;
    assert_eq!(attempt.path, format!("/api/listenerservices/{ID}/connect"));
    assert!(attempt.authorized && attempt.subprotocol, "{attempt:?}");
    assert_eq!(attempt.status, 101);
    let mut conn = roomlink.accept().await;

    let info = conn.exchange("GET", "/v1/info", Value::Null).await;
    assert_eq!(info["status"], 200);
    assert_eq!(info["version"], "3.1.4");
    assert_eq!(info["body"], json!({"version": "3.1.4"}));
    conn.ping().await;
    assert!(conn.pong().await, "a ping is answered over TLS");

    // Shutdown closes with 1001 over TLS too.
    stop.send(()).expect("the loop runs");
    assert_eq!(conn.closed().await, Some(1001));
    let ended = tokio::time::timeout(Duration::from_secs(10), task).await;
    assert_eq!(ended.expect("ends").expect("no panic"), Ok(()));
}

#[tokio::test]
async fn wss_by_host_name_checks_the_name_and_connects() {
    let (mut roomlink, ca) = fake_roomlink_tls::start_tls(ID, SECRET).await;
    // https:// becomes wss://; the certificate names localhost as well as 127.0.0.1.
    let base = roomlink.base.replace("127.0.0.1", "localhost");
    let running = start_trusting(vec![base], timing(), Some(ca.pem_file()));
    let mut conn = roomlink.accept().await;
    let info = conn.exchange("GET", "/v1/info", Value::Null).await;
    assert_eq!(info["status"], 200);
    stop_and_join(running).await;
}

#[tokio::test]
async fn wss_without_the_ca_file_is_refused_and_retried() {
    let (mut roomlink, _ca) = fake_roomlink_tls::start_tls(ID, SECRET).await;
    let base = roomlink.base.replace("https://", "wss://");
    if rustls_native_certs::load_native_certs().certs.is_empty() {
        // No system roots at all: nothing could be trusted, and the loop says so at once.
        let (_stop, task) = start_trusting(vec![base], timing(), None);
        let ended = tokio::time::timeout(Duration::from_secs(10), task).await;
        let error = ended.expect("ends").expect("no panic").unwrap_err();
        assert!(error.contains("connect.ca_file"), "{error}");
        eprintln!("no system roots here: only the error at start was checked");
        return;
    }
    let running = start_trusting(vec![base], timing(), None);
    // The listener does not trust the certificate: it aborts the handshake (the fake sees the
    // alert), backs off and dials again; it never falls back to anything without TLS. Every
    // connection made so far ended in its handshake, and none gave a WebSocket.
    for n in 1..=3 {
        let layer = roomlink.layer().await.expect_err("the TLS handshake fails");
        assert!(layer.contains("UnknownCA"), "attempt {n}: {layer}");
    }
    let made = roomlink.connections_so_far().await;
    for n in 4..=made {
        let layer = roomlink.layer().await.expect_err("the TLS handshake fails");
        assert!(layer.contains("UnknownCA"), "attempt {n}: {layer}");
    }
    assert!(
        roomlink.accepted_already().is_none(),
        "no WebSocket is opened"
    );
    assert!(!running.1.is_finished(), "the loop keeps going");
    stop_and_join(running).await;
}

#[tokio::test]
async fn a_ca_file_that_is_not_pem_fails_the_start() {
    let (roomlink, ca) = fake_roomlink_tls::start_tls(ID, SECRET).await;
    let not_a_certificate = fake_roomlink_tls::pem("CERTIFICATE", b"not a certificate");
    let files = [
        ("text", ca.write("text.pem", b"this is not a certificate\n")),
        ("DER", ca.write("ca.der", &ca.der)),
        ("empty", ca.write("empty.pem", b"")),
        (
            "a key only",
            ca.write(
                "key.pem",
                fake_roomlink_tls::pem("PRIVATE KEY", b"k").as_bytes(),
            ),
        ),
        (
            "not a certificate",
            ca.write("bad.pem", not_a_certificate.as_bytes()),
        ),
        ("missing", ca.pem_file().with_file_name("missing.pem")),
    ];
    for (what, path) in files {
        // `--check` refuses what `run` refuses, with the same message.
        let settings = DialHomeSettings {
            urls: vec![roomlink.base.clone()],
            listener_id: ID.into(),
            secret: ListenerSecret::new(SECRET).expect("a secret"),
            ca_file: Some(path.clone()),
            timing: timing(),
        };
        let checked = settings.check().expect_err(what);
        let (_stop, task) =
            start_trusting(vec![roomlink.base.clone()], timing(), Some(path.clone()));
        let ended = tokio::time::timeout(Duration::from_secs(10), task).await;
        let result = ended.expect("ends at once").expect("no panic");
        let error = result.expect_err(what);
        assert!(
            error.starts_with("connect.ca_file ") && error.contains(&path.display().to_string()),
            "{what}: {error}"
        );
        assert_eq!(checked, error, "{what}");
        if what == "not a certificate" {
            assert!(error.contains("cannot be used"), "{error}");
        }
    }
    // Every loop has ended: none of them dialed before it did.
    assert_eq!(roomlink.connections_so_far().await, 0, "nothing was dialed");
}
