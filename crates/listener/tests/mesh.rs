//! The MESH driver against the emulated Relay Mesh driver server (and a scripted server for a
//! 404), over loopback sockets.

use base64::Engine;
use roomlink_device_emu::device::{DeviceDefaults, Devices, Fault};
use roomlink_device_emu::{Frontend, mesh};
use roomlink_domain::enums::SignalingProtocol;
use roomlink_domain::rules::dial_plan::DialPlan;
use roomlink_listener::driver::{Action, CallPhase, Capability, Device, Driver, DriverFailure};
use roomlink_listener::drivers::mesh::{MeshCapabilities, MeshDriver, MeshSettings};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::WireEndpoint;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use zeroize::Zeroizing;

const PASSWORD: &str = "room-secret-9";

async fn emulator(host: &str) -> (Devices, Frontend) {
    let devices = Devices::new(DeviceDefaults {
        username: "admin".into(),
        password: PASSWORD.into(),
        connect_after: Duration::from_millis(20),
    });
    let frontend = mesh::start(host.parse().expect("an address"), 0, devices.clone())
        .await
        .expect("the emulator starts");
    (devices, frontend)
}

fn device(base: &str, ip: &str, password: &str) -> Device {
    Device {
        endpoint: WireEndpoint {
            name: Some("Board room".into()),
            ip_address: Some(ip.into()),
            control_protocol: Some("MESH".into()),
            signaling_protocol: Some("SIP".into()),
            username: Some("admin".into()),
            mesh_base_uri: Some(base.into()),
            ..WireEndpoint::default()
        },
        address: ip.into(),
        port: None,
        username: Some("admin".into()),
        password: Some(Zeroizing::new(password.to_owned())),
    }
}

fn driver(request_ms: u64) -> MeshDriver {
    MeshDriver::new(MeshSettings {
        request_timeout: Duration::from_millis(request_ms),
        connect_timeout: Duration::from_secs(2),
    })
}

fn assert_no_password(failure: &DriverFailure) {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("admin:{PASSWORD}"));
    let all = format!(
        "{} {:?} {:?} {:?}",
        failure.message, failure.causes, failure.remote_request, failure.remote_response
    );
    assert!(
        !all.contains(PASSWORD) && !all.contains(&encoded),
        "a credential leaked: {all}"
    );
}

#[tokio::test]
async fn every_action_and_the_status_round_trip() {
    let (devices, frontend) = emulator("127.77.41.1").await;
    // A base with a path and a trailing slash: paths stay under it.
    let base = format!("http://127.77.41.1:{}/mesh/", frontend.port);
    let ip = "127.77.41.101";
    let d = device(&base, ip, PASSWORD);
    let driver = driver(3_000);

    let caps = driver.remote_capabilities(&d).await.expect("capabilities");
    assert_eq!(
        caps,
        MeshCapabilities {
            join: true,
            hangup: true,
            status: true,
            mute_microphone: true,
            calendar_push: false,
        }
    );
    let idle = driver.status(&d).await.expect("status");
    assert_eq!(idle.call, CallPhase::Idle);

    let join = Action::Join {
        plan: DialPlan {
            dial_string: "111.222@bridge.example".into(),
            ivr_steps: vec![],
        },
        signaling: Some(SignalingProtocol::Sip),
        meeting_id: Some("111".into()),
        passcode: Some("222".into()),
    };
    driver.perform(&d, &join).await.expect("join");
    let state = devices.get(ip);
    assert_eq!(state.last_dialed.as_deref(), Some("111.222@bridge.example"));
    assert_eq!(state.last_dial_protocol.as_deref(), Some("SIP"));
    assert_eq!(state.last_dial_extras["meetingId"], "111");
    assert_eq!(state.last_dial_extras["passcode"], "222");
    assert_eq!(state.last_dial_extras["bridgeAddress"], "bridge.example");
    assert_eq!(
        driver.status(&d).await.expect("status").call,
        CallPhase::Connected
    );

    driver.perform(&d, &Action::Mute).await.expect("mute");
    assert!(driver.status(&d).await.expect("status").microphone_muted);
    driver.perform(&d, &Action::Unmute).await.expect("unmute");
    assert!(!devices.get(ip).microphone_muted);
    driver.perform(&d, &Action::Hangup).await.expect("hangup");
    assert_eq!(
        driver.status(&d).await.expect("status").call,
        CallPhase::Idle
    );
}

#[tokio::test]
async fn a_base_without_a_slash_works_and_dtmf_is_not_offered() {
    let (devices, frontend) = emulator("127.77.41.2").await;
    let base = format!("http://127.77.41.2:{}", frontend.port);
    let d = device(&base, "127.77.41.102", PASSWORD);
    let driver = driver(3_000);
    driver.perform(&d, &Action::Mute).await.expect("mute");
    assert!(devices.get("127.77.41.102").microphone_muted);

    assert!(!driver.capabilities().contains(&Capability::Dtmf));
    let f = driver
        .perform(&d, &Action::Dtmf("123#".into()))
        .await
        .expect_err("no dtmf");
    assert_eq!(f.kind, FailureKind::Misprovisioned);
    assert_eq!(devices.get("127.77.41.102").dtmf, "");
}

#[tokio::test]
async fn refused_credentials_are_bad_credentials_and_never_shown() {
    let (devices, frontend) = emulator("127.77.41.3").await;
    let base = format!("http://127.77.41.3:{}/", frontend.port);
    let driver = driver(3_000);

    let f = driver
        .perform(
            &device(&base, "127.77.41.103", "wrong-one"),
            &Action::Hangup,
        )
        .await
        .expect_err("refused");
    assert_eq!(f.kind, FailureKind::BadCredentials);
    let request = f.remote_request.clone().expect("the request");
    assert!(request.contains("Authorization: Basic [redacted]"));
    assert!(!request.contains("wrong-one"));

    devices.with("127.77.41.104", |d| {
        d.faults.insert(Fault::BadCredentials);
    });
    let f = driver
        .status(&device(&base, "127.77.41.104", PASSWORD))
        .await
        .expect_err("refused");
    assert_eq!(f.kind, FailureKind::BadCredentials);
    assert_no_password(&f);
}

#[tokio::test]
async fn faults_map_onto_failure_kinds() {
    let (devices, frontend) = emulator("127.77.41.4").await;
    let base = format!("http://127.77.41.4:{}", frontend.port);
    devices.with("127.77.41.105", |d| {
        d.faults.insert(Fault::RateLimit);
    });
    devices.with("127.77.41.106", |d| {
        d.faults.insert(Fault::Slow);
        d.slow_ms = 10_000;
    });
    devices.with("127.77.41.107", |d| {
        d.faults.insert(Fault::DropConnection);
    });
    let driver = driver(400);
    for (ip, kind) in [
        ("127.77.41.105", FailureKind::ServerError),
        ("127.77.41.106", FailureKind::Timeout),
        ("127.77.41.107", FailureKind::Unreachable),
    ] {
        let f = driver
            .perform(&device(&base, ip, PASSWORD), &Action::Hangup)
            .await
            .expect_err("a fault");
        assert_eq!(f.kind, kind, "{ip}: {f:?}");
        assert_no_password(&f);
        assert_eq!(devices.get(ip).commands, 0);
    }
}

#[tokio::test]
async fn no_server_no_base_or_no_such_path() {
    let listener = TcpListener::bind("127.77.41.5:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let driver = driver(2_000);
    let f = driver
        .status(&device(
            &format!("http://127.77.41.5:{port}"),
            "10.0.0.1",
            PASSWORD,
        ))
        .await
        .expect_err("refused");
    assert_eq!(f.kind, FailureKind::Unreachable);

    let mut no_base = device("", "10.0.0.1", PASSWORD);
    no_base.endpoint.mesh_base_uri = None;
    let f = driver
        .perform(&no_base, &Action::Hangup)
        .await
        .expect_err("no base");
    assert_eq!(f.kind, FailureKind::Misprovisioned);

    // A web server that knows none of the contract's paths: capabilities 404 (taken as an old
    // server), then the hangup's 404.
    let listener = TcpListener::bind("127.77.41.5:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = stream
                    .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found")
                    .await;
            });
        }
    });
    let f = driver
        .perform(
            &device(&format!("http://127.77.41.5:{port}/"), "10.0.0.1", PASSWORD),
            &Action::Hangup,
        )
        .await
        .expect_err("404");
    assert_eq!(f.kind, FailureKind::Misprovisioned);
    assert!(
        f.remote_response
            .as_deref()
            .is_some_and(|r| r.starts_with("HTTP 404"))
    );
}
