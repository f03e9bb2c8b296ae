//! End to end with the production listener: roomlink → `roomlink-listener` → emulated room
//! systems speaking the vendors' wire protocols (Cisco HTTP and SSH xAPI, Poly Telnet, a Mesh
//! driver server), all in this process on loopback. Each test has its own 127.78.N.x addresses.

use crate::support::app::{Backend, TestApp, assert_error};
use base64::Engine;
use reqwest::{Method, StatusCode};
use roomlink_device_emu::device::{DeviceDefaults, Fault, Phase};
use roomlink_device_emu::{EmuConfig, Emulator};
use roomlink_listener::settings::{BridgeSettings, Settings};
use roomlink_listener::startup::{self, Listener};
use roomlink_listener_protocol::secrets::SharedSecret;
use serde_json::{Value, json};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

const ROOM_PASSWORD: &str = "room-pw-secret";
const LISTENER_SECRET: &str = "listener-secret-for-tests-0001";
const PROTOCOLS: [&str; 4] = ["TANDBERG_HTTP", "TANDBERG_SSH", "POLYCOM_TELNET", "MESH"];

/// Emulated rooms (one per protocol, each on its own address), a listener in front of them
/// registered with roomlink, and an endpoint per room.
pub(crate) struct Site {
    pub(crate) emu: Emulator,
    listener: Option<Listener>,
    /// Endpoint id by control protocol.
    endpoints: Vec<(&'static str, String)>,
    _dir: tempfile::TempDir,
}

impl Site {
    pub(crate) fn endpoint(&self, protocol: &str) -> &str {
        &self
            .endpoints
            .iter()
            .find(|(p, _)| *p == protocol)
            .expect("endpoint of protocol")
            .1
    }

    /// The emulated device behind `protocol`'s endpoint.
    pub(crate) fn address(&self, protocol: &str) -> String {
        let i = PROTOCOLS
            .iter()
            .position(|p| *p == protocol)
            .expect("protocol");
        self.emu.hosts[i].to_string()
    }

    pub(crate) fn set_fault(&self, protocol: &str, fault: Option<Fault>) {
        self.emu.devices.with(&self.address(protocol), |d| {
            d.faults.clear();
            if let Some(fault) = fault {
                d.faults.insert(fault);
            }
        });
    }

    pub(crate) async fn stop(mut self) {
        if let Some(listener) = self.listener.take() {
            listener.stop(false).await;
        }
        self.emu.stop();
    }
}

fn listener_settings(dir: &tempfile::TempDir) -> Settings {
    let mut settings = Settings::default();
    settings.server.bind = "127.0.0.1:0".into();
    settings.bridges.insert(
        "prod".into(),
        BridgeSettings {
            hostname: "bridge.example".into(),
            ip_address: "192.0.2.10".into(),
        },
    );
    settings.tandberg_http.scheme = "http".into();
    settings.tandberg_ssh.known_hosts_file = dir.path().join("known-hosts");
    // Above the Cisco HTTP driver's read retries (250 + 500 + 1000 ms), below a slow room (5 s).
    settings.commands.timeout_ms = 3_000;
    settings.commands.status_timeout_ms = 1_500;
    settings.ivr.delay_ms = 50;
    settings.ivr.step_gap_ms = 50;
    settings.ivr.poll_ms = 50;
    settings
}

pub(crate) async fn site(
    app: &TestApp,
    token: &str,
    net: u8,
    private_key: Option<crypto_box::SecretKey>,
) -> Site {
    let emu = roomlink_device_emu::start(EmuConfig {
        first_host: Ipv4Addr::new(127, 78, net, 1),
        count: PROTOCOLS.len() as u32,
        defaults: DeviceDefaults {
            username: "admin".into(),
            password: ROOM_PASSWORD.into(),
            connect_after: Duration::from_millis(100),
        },
        cisco_http: Some(0),
        cisco_basic_rate_limit: false,
        cisco_ssh: Some(0),
        poly_telnet: Some(0),
        mesh: Some(0),
        ..EmuConfig::default()
    })
    .await
    .expect("emulator starts");
    let dir = tempfile::tempdir().expect("dir");
    let settings = listener_settings(&dir);
    let drivers = startup::drivers(&settings).expect("drivers");
    let listener = startup::start(
        settings,
        Some(SharedSecret::new(LISTENER_SECRET)),
        private_key,
        drivers,
        false,
    )
    .await
    .expect("listener starts");
    let (status, record) = app
        .call(
            Method::POST,
            "/api/listenerservices",
            token,
            Some(
                json!({"name": "Site", "baseUrl": format!("http://{}", listener.addr),
                "secret": LISTENER_SECRET}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{record}");
    let ports = emu.ports;
    let mesh_base = format!("http://{}:{}", emu.hosts[0], ports.mesh.expect("mesh port"));
    let mut endpoints = Vec::new();
    for (i, protocol) in PROTOCOLS.iter().enumerate() {
        let port = match *protocol {
            "TANDBERG_HTTP" => ports.cisco_http,
            "TANDBERG_SSH" => ports.cisco_ssh,
            "POLYCOM_TELNET" => ports.poly_telnet,
            _ => None,
        };
        let mut body = json!({
            "name": format!("{protocol} room"), "ipAddress": emu.hosts[i].to_string(),
            "controlProtocol": protocol, "listenerServiceId": record["id"],
            "username": "admin", "password": ROOM_PASSWORD,
        });
        if let Some(port) = port {
            body["port"] = json!(port);
        }
        if *protocol == "MESH" {
            body["meshBaseUri"] = json!(mesh_base);
        }
        let endpoint = app.create_endpoint(token, body).await;
        endpoints.push((*protocol, endpoint["id"].as_str().expect("id").to_owned()));
    }
    Site {
        emu,
        listener: Some(listener),
        endpoints,
        _dir: dir,
    }
}

async fn post(app: &TestApp, token: &str, path: String) -> (StatusCode, Value) {
    app.call(Method::POST, &path, token, None).await
}

/// Waits (up to 10 s) until `check` holds for the device at `address`.
async fn until(
    site: &Site,
    address: &str,
    what: &str,
    check: impl Fn(&roomlink_device_emu::device::Device) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let device = site.emu.devices.get(address);
        if check(&device) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{address}: {what}: {}",
            device.view(address)
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn app() -> TestApp {
    TestApp::spawn(Backend::Sqlite).await.expect("sqlite app")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_driver_carries_out_every_command() {
    let app = app().await;
    let (rw, ro) = app.tenant("acme").await;
    let site = site(&app, &rw, 1, None).await;
    for protocol in PROTOCOLS {
        let id = site.endpoint(protocol).to_owned();
        let address = site.address(protocol);
        let (status, body) = post(
            &app,
            &ro,
            format!("/api/endpoints/{id}/join?meetingid=123456789&passcode=4321"),
        )
        .await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{protocol} join: {body}");
        let device = site.emu.devices.get(&address);
        assert_eq!(
            device.last_dialed.as_deref(),
            Some("123456789.4321@bridge.example"),
            "{protocol}"
        );
        until(&site, &address, "call connects", |d| {
            d.phase() == Phase::Connected
        })
        .await;

        if protocol != "MESH" {
            let (status, body) = post(
                &app,
                &rw,
                format!("/api/endpoints/{id}/senddtmf?dtmfString=12%23*"),
            )
            .await;
            assert_eq!(status, StatusCode::NO_CONTENT, "{protocol} dtmf: {body}");
            assert_eq!(site.emu.devices.get(&address).dtmf, "12#*", "{protocol}");
        }

        let (status, body) = post(&app, &rw, format!("/api/endpoints/{id}/mutemicrophone")).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{protocol} mute: {body}");
        assert!(
            site.emu.devices.get(&address).microphone_muted,
            "{protocol}"
        );

        let (status, one) = app
            .call(
                Method::GET,
                &format!("/api/endpoints/{id}/status"),
                &ro,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(one["callActive"], true, "{protocol}: {one}");
        assert_eq!(one["microphoneMuted"], true, "{protocol}: {one}");

        let (status, body) = post(&app, &rw, format!("/api/endpoints/{id}/unmutemicrophone")).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{protocol} unmute: {body}");
        assert!(
            !site.emu.devices.get(&address).microphone_muted,
            "{protocol}"
        );

        let (status, body) = post(&app, &rw, format!("/api/endpoints/{id}/hangup")).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{protocol} hangup: {body}");
        assert_eq!(
            site.emu.devices.get(&address).phase(),
            Phase::Idle,
            "{protocol}"
        );
    }

    // Status polling reads every room through its driver: a change made at the room (not
    // through roomlink) shows up in roomlink's status list.
    for protocol in PROTOCOLS {
        site.emu
            .devices
            .with(&site.address(protocol), |d| d.set_muted(true));
    }
    assert_eq!(app.poll_now(&ro, true).await, PROTOCOLS.len());
    let (status, all) = app
        .call(Method::GET, "/api/endpoints/status", &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    for entry in all.as_array().expect("list") {
        assert_eq!(entry["microphoneMuted"], true, "{all}");
        assert_eq!(entry["callActive"], false, "{all}");
    }
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_room_fault_gives_its_catalog_error_without_the_password() {
    let app = app().await;
    let (rw, _) = app.tenant("acme").await;
    let site = site(&app, &rw, 2, None).await;
    let cases: Vec<(&str, Fault, &str, u16, &str, i64)> = vec![
        (
            "TANDBERG_HTTP",
            Fault::BadCredentials,
            "join?meetingid=1",
            502,
            "AuthenticationFailed",
            1780355652,
        ),
        (
            "TANDBERG_SSH",
            Fault::BadCredentials,
            "join?meetingid=1",
            502,
            "AuthenticationFailed",
            1780355652,
        ),
        (
            "POLYCOM_TELNET",
            Fault::BadCredentials,
            "join?meetingid=1",
            502,
            "AuthenticationFailed",
            1780355652,
        ),
        (
            "MESH",
            Fault::BadCredentials,
            "join?meetingid=1",
            502,
            "AuthenticationFailed",
            1780355652,
        ),
        (
            "TANDBERG_HTTP",
            Fault::RateLimit,
            "join?meetingid=1",
            503,
            "Unavailable",
            2042734031,
        ),
        (
            "TANDBERG_HTTP",
            Fault::IntegratorRole,
            "senddtmf?dtmfString=1",
            502,
            "IncorrectlyProvisioned",
            1917844536,
        ),
        (
            "TANDBERG_SSH",
            Fault::IntegratorRole,
            "senddtmf?dtmfString=1",
            502,
            "IncorrectlyProvisioned",
            1917844536,
        ),
        (
            "TANDBERG_HTTP",
            Fault::Slow,
            "mutemicrophone",
            504,
            "ExternalSystemTimedOut",
            594923066,
        ),
        (
            "TANDBERG_SSH",
            Fault::Slow,
            "mutemicrophone",
            504,
            "ExternalSystemTimedOut",
            594923066,
        ),
        (
            "POLYCOM_TELNET",
            Fault::Slow,
            "mutemicrophone",
            504,
            "ExternalSystemTimedOut",
            594923066,
        ),
        (
            "MESH",
            Fault::Slow,
            "mutemicrophone",
            504,
            "ExternalSystemTimedOut",
            594923066,
        ),
        (
            "TANDBERG_HTTP",
            Fault::DropConnection,
            "hangup",
            504,
            "ExternalSystemUnreachable",
            1436062998,
        ),
        (
            "TANDBERG_SSH",
            Fault::DropConnection,
            "hangup",
            504,
            "ExternalSystemUnreachable",
            1436062998,
        ),
        (
            "POLYCOM_TELNET",
            Fault::DropConnection,
            "hangup",
            504,
            "ExternalSystemUnreachable",
            1436062998,
        ),
    ];
    for (protocol, fault, command, status, name, code) in cases {
        site.set_fault(protocol, Some(fault));
        let id = site.endpoint(protocol);
        let (got, body) = post(&app, &rw, format!("/api/endpoints/{id}/{command}")).await;
        assert_error(got, &body, status, name, code);
        let text = body.to_string();
        assert!(
            !text.contains(ROOM_PASSWORD),
            "{protocol} {fault:?}: {text}"
        );
        assert!(
            !text.contains(LISTENER_SECRET),
            "{protocol} {fault:?}: {text}"
        );
        let basic =
            base64::engine::general_purpose::STANDARD.encode(format!("admin:{ROOM_PASSWORD}"));
        assert!(!text.contains(&basic), "{protocol} {fault:?}: {text}");
        site.set_fault(protocol, None);
    }
    // Every driver works again once the faults are gone (sessions re-established).
    for protocol in PROTOCOLS {
        let id = site.endpoint(protocol);
        let (status, body) = post(&app, &rw, format!("/api/endpoints/{id}/hangup")).await;
        assert_eq!(
            status,
            StatusCode::NO_CONTENT,
            "{protocol} after faults: {body}"
        );
    }

    // A room nobody answers for, and a protocol the listener has no driver for.
    let (_, listeners) = app
        .call(Method::GET, "/api/listenerservices", &rw, None)
        .await;
    let listener_id = listeners[0]["id"].clone();
    let nobody = app
        .create_endpoint(
            &rw,
            json!({"name": "Nobody", "ipAddress": "127.78.2.200", "port": 9,
                "controlProtocol": "TANDBERG_SSH", "listenerServiceId": listener_id,
                "username": "admin", "password": ROOM_PASSWORD}),
        )
        .await;
    let (got, body) = post(
        &app,
        &rw,
        format!(
            "/api/endpoints/{}/hangup",
            nobody["id"].as_str().expect("id")
        ),
    )
    .await;
    assert_error(got, &body, 504, "ExternalSystemUnreachable", 1436062998);
    let lifesize = app
        .create_endpoint(
            &rw,
            json!({"name": "Other vendor", "ipAddress": "127.78.2.201",
                "controlProtocol": "LIFESIZE_SSH", "listenerServiceId": listener_id,
                "username": "admin", "password": ROOM_PASSWORD}),
        )
        .await;
    let (got, body) = post(
        &app,
        &rw,
        format!(
            "/api/endpoints/{}/hangup",
            lifesize["id"].as_str().expect("id")
        ),
    )
    .await;
    assert_error(got, &body, 501, "UnknownControlProtocol", 941644305);
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passwords_sealed_to_the_enterprise_key_are_opened_by_the_listener() {
    let app = app().await;
    let (rw, _) = app.tenant("acme").await;
    let key = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
    let public = base64::engine::general_purpose::STANDARD.encode(key.public_key().as_bytes());
    let (status, body) = app
        .call(
            Method::PUT,
            "/api/enterprises/self",
            &rw,
            Some(json!({"publicKey": public})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let opened = site(&app, &rw, 3, Some(key)).await;
    for protocol in PROTOCOLS {
        let id = opened.endpoint(protocol);
        let (status, body) =
            post(&app, &rw, format!("/api/endpoints/{id}/join?meetingid=42")).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{protocol}: {body}");
        let dialed = opened
            .emu
            .devices
            .get(&opened.address(protocol))
            .last_dialed;
        assert_eq!(
            dialed.as_deref(),
            Some("42@bridge.example"),
            "{protocol}: the room accepted the opened password"
        );
    }
    opened.stop().await;

    // The same rooms behind a listener without the private key: a clear refusal.
    let keyless = site(&app, &rw, 4, None).await;
    let id = keyless.endpoint("TANDBERG_HTTP");
    let (got, body) = post(&app, &rw, format!("/api/endpoints/{id}/hangup")).await;
    assert_error(got, &body, 502, "IncorrectlyProvisioned", 1917844536);
    assert!(body.to_string().contains("private key"), "{body}");
    keyless.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ivr_tones_follow_the_connected_call() {
    let app = app().await;
    let (rw, _) = app.tenant("acme").await;
    let site = site(&app, &rw, 5, None).await;
    for protocol in ["TANDBERG_HTTP", "TANDBERG_SSH", "POLYCOM_TELNET"] {
        let id = site.endpoint(protocol);
        let (status, body) = app
            .call(
                Method::PATCH,
                &format!("/api/endpoints/{id}"),
                &rw,
                Some(json!({"dialStyle": "IP_HASH"})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body) = post(
            &app,
            &rw,
            format!("/api/endpoints/{id}/join?meetingid=123456789&passcode=4321"),
        )
        .await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{protocol}: {body}");
        let address = site.address(protocol);
        assert_eq!(
            site.emu.devices.get(&address).last_dialed.as_deref(),
            Some("bridge.example##123456789")
        );
        until(&site, &address, "passcode sent as tones", |d| {
            d.dtmf == "4321#"
        })
        .await;
    }
    site.stop().await;
}
