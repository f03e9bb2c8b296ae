//! The client against the real simulator, over real HTTP on loopback. Simulated room systems
//! use 127.77.0.x addresses; nothing ever connects to them (the simulator keeps them in memory).

// Helpers outside `#[test]` functions: a failed setup should panic the test, loudly.
#![allow(clippy::unwrap_used)]

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::error::{Error, ErrorKind};
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId};
use roomlink_domain::ports::{Command, CommandTarget, EndpointCredential, ListenerTransport};
use roomlink_domain::rules::dtmf::Dtmf;
use roomlink_domain::rules::join::{JoinParams, JoinRequest};
use roomlink_domain::secret::{SealedSecret, Secret};
use roomlink_domain::template::{
    SettingKey, SettingOutcome, SettingOutcomes, TemplateSettings, WriteMode,
};
use roomlink_listener_client::{ClientConfig, HttpListenerClient};
use roomlink_listener_sim::{SimConfig, SimHandle, start};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

const SECRET: &str = "test-listener-secret-0001";
const PASSWORD: &str = "hunter2-room-password";
const LISTENER: &str = "550c9289e4b0c0c6485f4cfa";

struct Sim {
    base: String,
    handle: SimHandle,
    http: reqwest::Client,
}

impl Sim {
    async fn start(config: SimConfig) -> Sim {
        Sim::start_at("127.0.0.1:0", config).await
    }

    async fn start_at(bind: &str, config: SimConfig) -> Sim {
        let (addr, handle) = start(bind, config).await.expect("simulator starts");
        Sim {
            base: format!("http://{addr}"),
            handle,
            http: reqwest::Client::new(),
        }
    }

    async fn default() -> Sim {
        Sim::start(SimConfig::default()).await
    }

    async fn room(&self, address: &str) -> Value {
        self.get(&format!("/sim/endpoints/{address}")).await
    }

    async fn stats(&self) -> Value {
        self.get("/sim/stats").await
    }

    async fn get(&self, path: &str) -> Value {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{path}");
        response.json().await.unwrap()
    }

    async fn fault(&self, address: &str, fault: &str) {
        let response = self
            .http
            .put(format!("{}/sim/endpoints/{address}/fault", self.base))
            .json(&json!({ "fault": fault }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{fault}");
    }

    async fn clear_fault(&self, address: &str) {
        let response = self
            .http
            .delete(format!("{}/sim/endpoints/{address}/fault", self.base))
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success());
    }

    fn target(&self, endpoint: Endpoint, credential: EndpointCredential) -> CommandTarget {
        target_at(&self.base, SECRET, endpoint, credential)
    }
}

fn target_at(
    base: &str,
    secret: &str,
    endpoint: Endpoint,
    credential: EndpointCredential,
) -> CommandTarget {
    CommandTarget {
        listener_id: ListenerServiceId::from_trusted(LISTENER.into()),
        route: roomlink_domain::listener::ListenerRoute::Http(base.to_owned()),
        listener_secret: Secret::new(secret),
        endpoint,
        credential,
    }
}

fn endpoint_with(id: &str, address: &str, protocol: &str) -> Endpoint {
    let body = json!({ "name": format!("Room {id}"), "ipAddress": address, "port": 22,
        "controlProtocol": protocol, "username": "admin" });
    let draft = roomlink_domain::rules::put::insert(body.as_object().unwrap()).unwrap();
    Endpoint::new(
        EndpointId::from_trusted(id.into()),
        EnterpriseId::from_trusted("ent1".into()),
        draft.profile,
        None,
    )
    .unwrap()
}

fn endpoint(id: &str, address: &str) -> Endpoint {
    endpoint_with(id, address, "TANDBERG_SSH")
}

fn plain() -> EndpointCredential {
    EndpointCredential::Plain(Secret::new(PASSWORD))
}

fn client() -> HttpListenerClient {
    HttpListenerClient::new(ClientConfig {
        command_timeout: Duration::from_secs(5),
        ..ClientConfig::default()
    })
}

fn join(meeting_id: Option<&str>, passcode: Option<&str>) -> Command {
    Command::Join(
        JoinRequest::from_params(&JoinParams {
            meeting_id,
            passcode,
            ..JoinParams::default()
        })
        .unwrap(),
    )
}

/// The errorDetails keys of `e`, and a check that they are exactly its catalog row's and that
/// no secret appears anywhere in it.
fn keys(e: &Error) -> BTreeSet<String> {
    let found: BTreeSet<String> = e.details().keys().cloned().collect();
    let expected: BTreeSet<String> = e
        .kind()
        .detail_keys()
        .iter()
        .map(|k| (*k).to_owned())
        .collect();
    assert_eq!(found, expected, "{e:?}");
    if let Some(causes) = e.details().get("causes") {
        let all_strings = causes
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string));
        assert!(all_strings, "causes must be an array of strings: {causes}");
    }
    for text in [
        format!("{e:?}"),
        format!("{e}"),
        Value::Object(e.details().clone()).to_string(),
    ] {
        assert!(!text.contains(PASSWORD), "password leaked: {text}");
        assert!(!text.contains(SECRET), "listener secret leaked: {text}");
    }
    found
}

async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), f)
        .await
        .expect("finished in time")
}

#[tokio::test]
async fn every_command_changes_the_simulated_room_system() {
    let sim = Sim::default().await;
    let client = client();
    let t = sim.target(endpoint("e1", "127.77.0.1"), plain());

    let state = client
        .send(&t, &join(Some("123456789"), Some("4321")))
        .await
        .unwrap();
    assert!(state.call_active && state.dialing && !state.microphone_muted);
    assert!(state.last_dial_timestamp_millis.is_some());
    let room = sim.room("127.77.0.1").await;
    assert_eq!(room["callActive"], true);
    assert_eq!(room["lastMeetingId"], "123456789");
    assert_eq!(room["lastPasscode"], "4321");
    assert_eq!(room["lastCluster"], "PROD");
    assert_eq!(room["lastMeetingType"], "MEETME");
    assert_eq!(room["lastCredential"], "plain");
    assert!(!room.to_string().contains(PASSWORD));

    let dtmf = Command::SendDtmf(Dtmf::parse(Some("12#*")).unwrap());
    client.send(&t, &dtmf).await.unwrap();
    assert_eq!(sim.room("127.77.0.1").await["dtmfReceived"], "12#*");

    let state = client.send(&t, &Command::MuteMicrophone).await.unwrap();
    assert!(state.microphone_muted);
    assert_eq!(sim.room("127.77.0.1").await["microphoneMuted"], true);
    let state = client.send(&t, &Command::UnmuteMicrophone).await.unwrap();
    assert!(!state.microphone_muted);
    assert_eq!(sim.room("127.77.0.1").await["microphoneMuted"], false);

    let state = client.send(&t, &Command::HangUp).await.unwrap();
    assert!(!state.call_active && !state.dialing);
    let room = sim.room("127.77.0.1").await;
    assert_eq!(
        (room["callActive"].clone(), room["dialing"].clone()),
        (json!(false), json!(false))
    );
    assert_eq!(room["commands"], 5);

    // No meeting id: the IVR.
    let ivr = sim.target(endpoint("e2", "127.77.0.2"), EndpointCredential::None);
    client.send(&ivr, &join(None, None)).await.unwrap();
    let room = sim.room("127.77.0.2").await;
    assert_eq!(room["callActive"], true);
    assert_eq!(room["lastMeetingId"], Value::Null);
    assert_eq!(room["lastCredential"], "none");

    // The info was asked once and cached for the following commands.
    assert_eq!(sim.stats().await["infoRequests"], 1);
    sim.handle.stop().await;
}

#[tokio::test]
async fn each_room_system_fault_maps_to_its_catalog_error() {
    let sim = Sim::default().await;
    let client = client();
    let table = [
        ("unreachable", ErrorKind::ExternalSystemUnreachable, 504),
        ("timeout", ErrorKind::ExternalSystemTimedOut, 504),
        ("bad_credentials", ErrorKind::AuthenticationFailed, 502),
        ("misprovisioned", ErrorKind::IncorrectlyProvisioned, 502),
        ("server_error", ErrorKind::Unavailable, 503),
        ("ignore", ErrorKind::BadCommand, 500),
    ];
    for (i, (fault, kind, status)) in table.into_iter().enumerate() {
        let address = format!("127.77.0.{}", 10 + i);
        sim.fault(&address, fault).await;
        let t = sim.target(endpoint(&format!("f{i}"), &address), plain());
        let e = bounded(client.send(&t, &join(Some("1"), None)))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), kind, "{fault}: {e:?}");
        assert_eq!(e.kind().status(), status, "{fault}");
        let keys = keys(&e);
        assert!(keys.contains("causes"), "{fault}");
        assert!(
            !e.details()["causes"].as_array().unwrap().is_empty(),
            "{fault}"
        );
        if keys.contains("remoteAddress") {
            assert_eq!(e.details()["remoteAddress"], address.as_str());
            assert_eq!(e.details()["remoteId"], format!("f{i}"));
            assert_eq!(e.details()["command"], "join");
        }
        if let Some(request) = e.details().get("remoteRequest") {
            let request = request.as_str().unwrap();
            assert!(
                request.contains("Authorization: Basic [redacted]"),
                "{request}"
            );
        }
        // The fault is gone once cleared.
        sim.clear_fault(&address).await;
        client.send(&t, &Command::HangUp).await.unwrap();
    }
    sim.handle.stop().await;
}

#[tokio::test]
async fn a_listener_that_is_down_is_offline_at_once() {
    // A port that was just free and is closed now: connection refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let client = HttpListenerClient::new(ClientConfig::default()); // 10 s command timeout
    let t = target_at(
        &format!("http://127.0.0.1:{port}"),
        SECRET,
        endpoint("e1", "127.77.0.1"),
        plain(),
    );
    let e = bounded(client.send(&t, &Command::HangUp))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ListenerOffline);
    assert_eq!(keys(&e), BTreeSet::from(["listenerServiceId".to_owned()]));
    assert_eq!(e.details()["listenerServiceId"], LISTENER);

    // A simulator that was running and stopped, on an address of its own: once stopped, its
    // port may be given to another test's simulator, which must not answer in its place.
    let sim = Sim::start_at("127.77.99.1:0", SimConfig::default()).await;
    let t = sim.target(endpoint("e1", "127.77.0.1"), plain());
    client.send(&t, &Command::HangUp).await.unwrap();
    // https:// to a listener that speaks plain HTTP: the TLS handshake fails, no answer.
    let tls = target_at(
        &sim.base.replace("http://", "https://"),
        SECRET,
        endpoint("e1", "127.77.0.1"),
        plain(),
    );
    let e = bounded(client.send(&tls, &Command::HangUp))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ListenerOffline, "{e:?}");
    let base = sim.base.clone();
    sim.handle.stop().await;
    // The stop returns before the simulator's worker threads have dropped the connections they
    // hold, and the client's pool may hold one (seen in CI: one more answer after the stop).
    // Wait until the address refuses connections, then ask with a client that has no pool.
    let address = base.trim_start_matches("http://").to_owned();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(&address).is_ok() {
        assert!(std::time::Instant::now() < deadline, "the simulator stops");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let client = HttpListenerClient::new(ClientConfig::default());
    let t = target_at(&base, SECRET, endpoint("e1", "127.77.0.1"), plain());
    let e = bounded(client.send(&t, &Command::HangUp))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ListenerOffline, "{e:?}");
    let e = bounded(client.poll(std::slice::from_ref(&t)))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ListenerOffline, "{e:?}");
}

#[tokio::test]
async fn broken_listeners_map_to_listener_errors() {
    let sim = Sim::default().await;
    let client = HttpListenerClient::new(ClientConfig {
        command_timeout: Duration::from_millis(300),
        ..ClientConfig::default()
    });

    sim.fault("127.77.0.20", "listener_hang").await;
    let t = sim.target(endpoint("h", "127.77.0.20"), plain());
    let e = bounded(client.send(&t, &Command::HangUp))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CommandTimedOut, "{e:?}");
    keys(&e);
    assert_eq!(e.details()["commandName"], "hangup");

    sim.fault("127.77.0.21", "listener_garbage").await;
    let t = sim.target(endpoint("g", "127.77.0.21"), plain());
    let e = bounded(client.send(&t, &Command::HangUp))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MessagingException, "{e:?}");
    keys(&e);

    // The connection closes before any answer: `ListenerOffline` (the protocol's "reset
    // before an answer"), and the command is not sent twice.
    sim.fault("127.77.0.22", "listener_reset").await;
    let t = sim.target(endpoint("r", "127.77.0.22"), plain());
    let e = bounded(client.send(&t, &Command::HangUp))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ListenerOffline, "{e:?}");
    keys(&e);
    assert_eq!(
        sim.room("127.77.0.22").await["commands"],
        1,
        "commands are never retried"
    );

    // A status request is retried once on a reset, then fails as a whole.
    let before = sim.stats().await["statusRequests"].as_u64().unwrap();
    let e = bounded(client.poll(std::slice::from_ref(&t)))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ListenerOffline, "{e:?}");
    assert_eq!(
        sim.stats().await["statusRequests"].as_u64().unwrap() - before,
        2
    );

    // The listener recovers.
    sim.clear_fault("127.77.0.22").await;
    client.send(&t, &Command::HangUp).await.unwrap();
    sim.handle.stop().await;
}

#[tokio::test]
async fn an_old_listener_refuses_newer_commands_before_sending_them() {
    let sim = Sim::start(SimConfig {
        version: "1.3.0".parse().unwrap(),
        ..SimConfig::default()
    })
    .await;
    let client = client();
    let t = sim.target(endpoint("e1", "127.77.0.30"), plain());
    client.send(&t, &join(Some("42"), None)).await.unwrap();

    let dtmf = Command::SendDtmf(Dtmf::parse(Some("1")).unwrap());
    let e = client.send(&t, &dtmf).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ForwardsCompatibility, "{e:?}");
    keys(&e);
    assert_eq!(e.details()["listenerServiceVersion"], "1.3.0");
    assert_eq!(e.details()["commandName"], "senddtmf");
    assert_eq!(
        sim.room("127.77.0.30").await["commands"],
        1,
        "refused before sending"
    );

    let e = client.poll(std::slice::from_ref(&t)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ForwardsCompatibility);
    assert_eq!(e.details()["commandName"], "status");
    sim.handle.stop().await;
}

#[tokio::test]
async fn a_listener_without_the_command_has_no_handler() {
    let sim = Sim::start(SimConfig {
        commands: Some(vec!["join".into(), "hangup".into(), "status".into()]),
        ..SimConfig::default()
    })
    .await;
    let client = client();
    let t = sim.target(endpoint("e1", "127.77.0.40"), plain());
    let e = client.send(&t, &Command::MuteMicrophone).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSuchHandler, "{e:?}");
    keys(&e);
    assert_eq!(e.details()["listenerServiceVersion"], "2.25.0");
    assert_eq!(e.details()["commandName"], "mutemicrophone");
    sim.handle.stop().await;
}

#[tokio::test]
async fn an_unsupported_control_protocol_is_refused_per_endpoint() {
    let sim = Sim::start(SimConfig {
        control_protocols: Some(vec!["TANDBERG_SSH".into()]),
        ..SimConfig::default()
    })
    .await;
    let client = client();
    let mesh = sim.target(endpoint_with("m1", "127.77.0.50", "MESH"), plain());
    let e = client.send(&mesh, &Command::HangUp).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownControlProtocol, "{e:?}");
    keys(&e);
    assert_eq!(e.details()["listenerServiceVersion"], "2.25.0");

    let ssh = sim.target(endpoint("s1", "127.77.0.51"), plain());
    let polled = client.poll(&[mesh, ssh]).await.unwrap();
    assert_eq!(polled.len(), 2);
    assert_eq!(polled[0].0.as_str(), "m1");
    assert_eq!(
        polled[0].1.as_ref().unwrap_err().kind(),
        ErrorKind::UnknownControlProtocol
    );
    assert!(polled[1].1.is_ok());
    sim.handle.stop().await;
}

#[tokio::test]
async fn a_wrong_secret_is_a_listener_service_exception() {
    let sim = Sim::start(SimConfig {
        secret: Some(SECRET.into()),
        ..SimConfig::default()
    })
    .await;
    let client = client();
    let wrong = target_at(
        &sim.base,
        "not-the-right-secret",
        endpoint("e1", "127.77.0.60"),
        plain(),
    );
    let e = client.send(&wrong, &Command::HangUp).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ListenerServiceException, "{e:?}");
    keys(&e);
    assert!(!format!("{e:?}").contains("not-the-right-secret"));
    let right = sim.target(endpoint("e1", "127.77.0.60"), plain());
    client.send(&right, &Command::HangUp).await.unwrap();
    sim.handle.stop().await;
}

#[tokio::test]
async fn poll_batches_500_endpoints_per_request_and_reports_each() {
    let sim = Sim::default().await;
    let client = client();
    let address = |i: usize| format!("127.77.0.{}", 100 + i % 100);
    let targets: Vec<CommandTarget> = (0..1200)
        .map(|i| sim.target(endpoint(&format!("p{i:04}"), &address(i)), plain()))
        .collect();
    client
        .send(&targets[1], &join(Some("7"), None))
        .await
        .unwrap();
    sim.fault(&address(2), "unreachable").await;
    let before = sim.stats().await;

    let polled = bounded(client.poll(&targets)).await.unwrap();

    let after = sim.stats().await;
    let delta = |key: &str| after[key].as_u64().unwrap() - before[key].as_u64().unwrap();
    assert_eq!(delta("statusRequests"), 3);
    assert_eq!(delta("statusEndpoints"), 1200);
    assert_eq!(polled.len(), 1200);
    for (i, (id, result)) in polled.iter().enumerate() {
        assert_eq!(id.as_str(), format!("p{i:04}"), "in the order asked");
        match i % 100 {
            2 => {
                let e = result.as_ref().unwrap_err();
                assert_eq!(e.kind(), ErrorKind::ExternalSystemUnreachable);
                assert_eq!(e.details()["command"], "status");
                assert_eq!(e.details()["remoteId"], id.as_str());
                keys(e);
            }
            1 => assert!(result.as_ref().unwrap().call_active, "{i}"),
            _ => assert!(!result.as_ref().unwrap().call_active, "{i}"),
        }
    }
    assert!(client.poll(&[]).await.unwrap().is_empty());

    // A listener fault breaks the whole request.
    sim.fault(&address(3), "listener_garbage").await;
    let e = bounded(client.poll(&targets[..10])).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MessagingException);
    sim.handle.stop().await;
}

#[tokio::test]
async fn sealed_credentials_are_opened_by_the_listener_private_key() {
    let key = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
    let file = std::env::temp_dir().join(format!("listener-key-{}.b64", std::process::id()));
    std::fs::write(&file, BASE64.encode(key.to_bytes())).unwrap();
    let private_key = roomlink_listener_sim::load_private_key(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    let sim = Sim::start(SimConfig {
        private_key: Some(private_key),
        ..SimConfig::default()
    })
    .await;
    let client = client();
    let seal = |public: &crypto_box::PublicKey| {
        EndpointCredential::SealedForListener(SealedSecret {
            key_id: "pk-0123abcd".into(),
            ciphertext: public
                .seal(&mut crypto_box::aead::OsRng, PASSWORD.as_bytes())
                .unwrap(),
        })
    };
    let t = sim.target(endpoint("e1", "127.77.0.70"), seal(&key.public_key()));
    client.send(&t, &Command::HangUp).await.unwrap();
    assert_eq!(
        sim.room("127.77.0.70").await["lastCredential"],
        "sealed-opened"
    );

    let other = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
    let t = sim.target(endpoint("e2", "127.77.0.71"), seal(&other.public_key()));
    client.send(&t, &Command::HangUp).await.unwrap();
    assert_eq!(
        sim.room("127.77.0.71").await["lastCredential"],
        "sealed-unopened"
    );
    sim.handle.stop().await;
}

#[tokio::test]
async fn capabilities_follow_the_listener_version() {
    use roomlink_domain::enums::EndpointCapability;
    let sim = Sim::default().await;
    let client = client();
    let t = sim.target(endpoint("e1", "127.77.0.40"), EndpointCredential::None);
    let all = bounded(client.capabilities(&t)).await.unwrap();
    for c in [
        EndpointCapability::Join,
        EndpointCapability::Hangup,
        EndpointCapability::Status,
        EndpointCapability::MuteMicrophone,
    ] {
        assert!(all.contains(&c), "{c}");
    }
    // Asking needs no command: the simulated room saw nothing.
    assert_eq!(sim.room("127.77.0.40").await["commands"], 0);
}

fn settings(body: Value) -> TemplateSettings {
    TemplateSettings::from_json(&body).unwrap()
}

#[tokio::test]
async fn template_settings_are_read_and_written_through_the_listener() {
    let sim = Sim::start(SimConfig {
        version: "3.4.0".parse().unwrap(),
        ..SimConfig::default()
    })
    .await;
    let client = client();
    let cisco = sim.target(endpoint("e1", "127.77.0.60"), plain());
    let before = client
        .read_configuration(&cisco, &[SettingKey::TimeZone, SettingKey::SystemName])
        .await
        .unwrap();
    assert_eq!(
        before,
        SettingOutcomes::from([
            (
                SettingKey::TimeZone,
                SettingOutcome::Value(json!("Etc/UTC"))
            ),
            (
                SettingKey::SystemName,
                SettingOutcome::Value(json!("Cisco-127.77.0.60"))
            ),
        ])
    );
    let written = client
        .write_configuration(
            &cisco,
            &settings(json!({"time_zone": "europe/oslo", "standby.delay_minutes": 15})),
            WriteMode::Apply,
        )
        .await
        .unwrap();
    assert_eq!(
        written[&SettingKey::TimeZone],
        SettingOutcome::Value(json!("Europe/Oslo"))
    );
    let after = client
        .read_configuration(&cisco, SettingKey::ALL)
        .await
        .unwrap();
    assert_eq!(after.len(), SettingKey::ALL.len());
    assert_eq!(
        after[&SettingKey::StandbyDelayMinutes],
        SettingOutcome::Value(json!(15))
    );
    // An undo puts back what the room held, also outside roomlink's spaces (a Cisco standby
    // delay of 10 minutes): the listener takes it as a restore only.
    let restored =
        TemplateSettings::from_json_for(&json!({"standby.delay_minutes": 10}), WriteMode::Restore)
            .unwrap();
    let written = client
        .write_configuration(&cisco, &restored, WriteMode::Restore)
        .await
        .unwrap();
    assert_eq!(
        written[&SettingKey::StandbyDelayMinutes],
        SettingOutcome::Value(json!(10))
    );
    let e = client
        .write_configuration(&cisco, &restored, WriteMode::Apply)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ListenerServiceException, "{e:?}");
    assert!(
        e.details()["causes"][1]
            .as_str()
            .unwrap()
            .contains("10 is not one of 1, 3, 15"),
        "{e:?}"
    );

    let poly = sim.target(
        endpoint_with("e2", "127.77.0.61", "POLYCOM_TELNET"),
        plain(),
    );
    let written = client
        .write_configuration(
            &poly,
            &settings(json!({"time_zone": "Europe/Oslo", "auto_answer.mode": "off"})),
            WriteMode::Apply,
        )
        .await
        .unwrap();
    assert_eq!(
        written[&SettingKey::AutoAnswerMode],
        SettingOutcome::Value(json!("off"))
    );
    assert!(matches!(
        &written[&SettingKey::TimeZone],
        SettingOutcome::Unsupported(why) if why.contains("POLYCOM_TELNET")
    ));
    let room = sim.room("127.77.0.61").await;
    assert_eq!(room["commandsByName"]["writeconfiguration"], 1, "{room}");
    sim.handle.stop().await;
}

#[tokio::test]
async fn raw_cisco_paths_go_to_listeners_that_take_them_only() {
    let raw = SettingKey::parse("cisco:Audio Ultrasound MaxVolume").unwrap();
    let template =
        settings(json!({"cisco:Audio Ultrasound MaxVolume": 40, "time_zone": "Etc/GMT"}));
    for (version, sends_raw) in [("3.4.0", false), ("3.5.0", true)] {
        let sim = Sim::start(SimConfig {
            version: version.parse().unwrap(),
            ..SimConfig::default()
        })
        .await;
        let client = client();
        let cisco = sim.target(endpoint("e1", "127.77.0.63"), plain());
        let written = client
            .write_configuration(&cisco, &template, WriteMode::Apply)
            .await
            .unwrap();
        assert_eq!(
            written[&SettingKey::TimeZone],
            SettingOutcome::Value(json!("Etc/GMT"))
        );
        let read = client
            .read_configuration(&cisco, &[raw, SettingKey::TimeZone])
            .await
            .unwrap();
        if sends_raw {
            assert_eq!(written[&raw], SettingOutcome::Value(json!(40)), "{version}");
            assert_eq!(read[&raw], SettingOutcome::Value(json!(40)), "{version}");
        } else {
            for outcome in [&written[&raw], &read[&raw]] {
                assert!(
                    matches!(
                        outcome,
                        SettingOutcome::Unsupported(why)
                            if why == "listener 3.4.0 predates raw Cisco paths (from 3.5.0): upgrade it"
                    ),
                    "{outcome:?}"
                );
            }
        }
        assert_eq!(
            read[&SettingKey::TimeZone],
            SettingOutcome::Value(json!("Etc/GMT"))
        );
        // Only raw paths on a listener too old for them: nothing is sent.
        let before = sim.room("127.77.0.63").await["commands"].clone();
        let read = client.read_configuration(&cisco, &[raw]).await.unwrap();
        assert_eq!(read.len(), 1);
        let after = sim.room("127.77.0.63").await["commands"].clone();
        assert_eq!(before == after, !sends_raw, "{version}: {before} → {after}");
        // Poly rooms have no raw Cisco paths.
        let poly = sim.target(
            endpoint_with("e2", "127.77.0.64", "POLYCOM_TELNET"),
            plain(),
        );
        let read = client.read_configuration(&poly, &[raw]).await.unwrap();
        assert!(
            matches!(&read[&raw], SettingOutcome::Unsupported(_)),
            "{read:?}"
        );
        sim.handle.stop().await;
    }
}

#[tokio::test]
async fn an_older_listener_is_not_asked_for_configuration() {
    let sim = Sim::start(SimConfig {
        version: "3.3.0".parse().unwrap(),
        ..SimConfig::default()
    })
    .await;
    let client = client();
    let t = sim.target(endpoint("e1", "127.77.0.62"), plain());
    let e = client
        .write_configuration(
            &t,
            &settings(json!({"audio.default_volume": 40})),
            WriteMode::Apply,
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ForwardsCompatibility, "{e:?}");
    keys(&e);
    assert_eq!(e.details()["commandName"], "writeconfiguration");
    let e = client
        .read_configuration(&t, &[SettingKey::TimeZone])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ForwardsCompatibility, "{e:?}");
    assert_eq!(
        sim.room("127.77.0.62").await["commands"],
        0,
        "refused before sending"
    );
    sim.handle.stop().await;
}
