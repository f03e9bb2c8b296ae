//! The POLYCOM_TELNET driver against the emulated Poly codec (and a few scripted servers for
//! answers the emulator never gives), over loopback sockets.

use roomlink_device_emu::device::{DeviceDefaults, Devices, Fault};
use roomlink_device_emu::{Frontend, poly_telnet};
use roomlink_domain::enums::SignalingProtocol;
use roomlink_domain::rules::dial_plan::DialPlan;
use roomlink_listener::driver::{Action, CallPhase, Device, DeviceStatus, Driver, DriverFailure};
use roomlink_listener::drivers::poly_telnet::{PolyTelnetDriver, PolyTelnetSettings};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::WireEndpoint;
use std::net::IpAddr;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use zeroize::Zeroizing;

const PASSWORD: &str = "room-secret-7";

async fn emulator(host: &str) -> (Devices, Frontend) {
    let devices = Devices::new(DeviceDefaults {
        username: "admin".into(),
        password: PASSWORD.into(),
        connect_after: Duration::from_millis(50),
    });
    let host: IpAddr = host.parse().expect("an address");
    let frontend = poly_telnet::start(&[host], 0, devices.clone())
        .await
        .expect("the emulator starts");
    (devices, frontend)
}

fn device(address: &str, port: u16, password: Option<&str>) -> Device {
    Device {
        endpoint: WireEndpoint::default(),
        address: address.into(),
        port: Some(port),
        username: Some("ignored-by-poly".into()),
        password: password.map(|p| Zeroizing::new(p.to_owned())),
    }
}

fn driver(answer_ms: u64) -> PolyTelnetDriver {
    PolyTelnetDriver::new(PolyTelnetSettings {
        connect_timeout: Duration::from_secs(2),
        answer_timeout: Duration::from_millis(answer_ms),
    })
}

fn join(dial: &str, signaling: Option<SignalingProtocol>) -> Action {
    Action::Join {
        plan: DialPlan {
            dial_string: dial.into(),
            ivr_steps: vec![],
        },
        signaling,
        meeting_id: None,
        passcode: None,
    }
}

/// Polls the driver's status until `want` (or fails after 5 s).
async fn wait_for(driver: &PolyTelnetDriver, device: &Device, want: CallPhase) -> DeviceStatus {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let status = driver.status(device).await.expect("status");
        if status.call == want {
            return status;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never reached {want:?}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn assert_no_password(failure: &DriverFailure) {
    let all = format!(
        "{} {:?} {:?} {:?}",
        failure.message, failure.causes, failure.remote_request, failure.remote_response
    );
    assert!(!all.contains(PASSWORD), "the password leaked: {all}");
}

#[tokio::test]
async fn every_action_and_the_status_round_trip() {
    let (devices, frontend) = emulator("127.77.40.1").await;
    let d = device("127.77.40.1", frontend.port, Some(PASSWORD));
    let driver = driver(2_000);

    let idle = driver.status(&d).await.expect("status");
    assert_eq!(idle.call, CallPhase::Idle);
    assert!(!idle.microphone_muted);

    driver
        .perform(
            &d,
            &join("111.222@bridge.example", Some(SignalingProtocol::Sip)),
        )
        .await
        .expect("join");
    let state = devices.get("127.77.40.1");
    assert_eq!(state.last_dialed.as_deref(), Some("111.222@bridge.example"));
    assert_eq!(state.last_dial_protocol.as_deref(), Some("sip"));
    wait_for(&driver, &d, CallPhase::Connected).await;

    driver
        .perform(&d, &Action::Dtmf("0123456789*#".into()))
        .await
        .expect("tones");
    assert_eq!(devices.get("127.77.40.1").dtmf, "0123456789*#");

    driver.perform(&d, &Action::Mute).await.expect("mute");
    assert!(driver.status(&d).await.expect("status").microphone_muted);
    driver.perform(&d, &Action::Unmute).await.expect("unmute");
    assert!(!driver.status(&d).await.expect("status").microphone_muted);

    driver.perform(&d, &Action::Hangup).await.expect("hangup");
    assert_eq!(
        driver.status(&d).await.expect("status").call,
        CallPhase::Idle
    );
    assert_eq!(devices.get("127.77.40.1").dial_count, 1);
}

#[tokio::test]
async fn the_dial_type_follows_the_signaling_protocol() {
    let (devices, frontend) = emulator("127.77.40.2").await;
    let d = device("127.77.40.2", frontend.port, Some(PASSWORD));
    let driver = driver(2_000);
    driver
        .perform(&d, &join("10.0.0.9", Some(SignalingProtocol::H323)))
        .await
        .expect("join");
    assert_eq!(
        devices.get("127.77.40.2").last_dial_protocol.as_deref(),
        Some("h323")
    );
    driver
        .perform(&d, &join("room@example.com", None))
        .await
        .expect("join");
    let state = devices.get("127.77.40.2");
    assert_eq!(state.last_dialed.as_deref(), Some("room@example.com"));
    assert_eq!(state.last_dial_protocol, None);
}

#[tokio::test]
async fn a_codec_without_a_password_goes_straight_to_the_prompt() {
    let (devices, frontend) = emulator("127.77.40.3").await;
    devices.with("127.77.40.3", |d| d.password.clear());
    let d = device("127.77.40.3", frontend.port, None);
    driver(2_000)
        .perform(&d, &Action::Mute)
        .await
        .expect("mute");
    assert!(devices.get("127.77.40.3").microphone_muted);
}

#[tokio::test]
async fn a_wrong_password_or_the_fault_is_bad_credentials() {
    let (devices, frontend) = emulator("127.77.40.4").await;
    let driver = driver(2_000);
    let wrong = device("127.77.40.4", frontend.port, Some("not-it"));
    let f = driver
        .perform(&wrong, &Action::Hangup)
        .await
        .expect_err("refused");
    assert_eq!(f.kind, FailureKind::BadCredentials);
    assert!(!format!("{f:?}").contains("not-it"));

    devices.with("127.77.40.4", |d| {
        d.faults.insert(Fault::BadCredentials);
    });
    let right = device("127.77.40.4", frontend.port, Some(PASSWORD));
    let f = driver.status(&right).await.expect_err("refused");
    assert_eq!(f.kind, FailureKind::BadCredentials);
    assert_eq!(f.remote_request.as_deref(), Some("Password: [redacted]"));
    assert_no_password(&f);
    assert_eq!(devices.get("127.77.40.4").commands, 0);
}

#[tokio::test]
async fn a_slow_codec_times_out() {
    let (devices, frontend) = emulator("127.77.40.5").await;
    devices.with("127.77.40.5", |d| {
        d.faults.insert(Fault::Slow);
        d.slow_ms = 10_000;
    });
    let d = device("127.77.40.5", frontend.port, Some(PASSWORD));
    let f = driver(300)
        .perform(&d, &Action::Hangup)
        .await
        .expect_err("too slow");
    assert_eq!(f.kind, FailureKind::Timeout);
    assert_eq!(f.remote_request.as_deref(), Some("hangup all"));
    // The echo came, the answer did not.
    assert_eq!(f.remote_response.as_deref(), Some("hangup all"));
    assert_no_password(&f);
}

#[tokio::test]
async fn a_dropped_connection_is_unreachable() {
    let (devices, frontend) = emulator("127.77.40.6").await;
    devices.with("127.77.40.6", |d| {
        d.faults.insert(Fault::DropConnection);
    });
    let d = device("127.77.40.6", frontend.port, Some(PASSWORD));
    let f = driver(2_000)
        .perform(&d, &join("1@bridge.example", None))
        .await
        .expect_err("dropped");
    assert_eq!(f.kind, FailureKind::Unreachable);
    assert_no_password(&f);
    assert_eq!(devices.get("127.77.40.6").dial_count, 0);
}

#[tokio::test]
async fn a_closed_port_is_unreachable() {
    let listener = TcpListener::bind("127.77.40.7:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let f = driver(2_000)
        .status(&device("127.77.40.7", port, Some(PASSWORD)))
        .await
        .expect_err("refused");
    assert_eq!(f.kind, FailureKind::Unreachable);
}

/// A server that writes `greeting`, then answers each line with `reply(line)`.
async fn scripted(host: &str, greeting: &'static [u8], reply: fn(&str) -> String) -> u16 {
    let listener = TcpListener::bind((host, 0)).await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                if write.write_all(greeting).await.is_err() {
                    return;
                }
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let answer = reply(line.trim());
                    if write.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

#[tokio::test]
async fn another_protocol_or_garbage_is_misprovisioned_and_silence_a_timeout() {
    let ssh = scripted("127.77.40.8", b"SSH-2.0-OpenSSH_9.6\r\n", |_| String::new()).await;
    let f = driver(500)
        .status(&device("127.77.40.8", ssh, Some(PASSWORD)))
        .await
        .expect_err("ssh");
    assert_eq!(f.kind, FailureKind::Misprovisioned);

    let chatty = scripted("127.77.40.8", b"Welcome to something else\r\n", |_| {
        String::new()
    })
    .await;
    let f = driver(300)
        .status(&device("127.77.40.8", chatty, Some(PASSWORD)))
        .await
        .expect_err("garbage");
    assert_eq!(f.kind, FailureKind::Misprovisioned);

    let silent = scripted("127.77.40.8", b"", |_| String::new()).await;
    let f = driver(300)
        .status(&device("127.77.40.8", silent, Some(PASSWORD)))
        .await
        .expect_err("silence");
    assert_eq!(f.kind, FailureKind::Timeout);
}

#[tokio::test]
async fn error_answers_map_onto_failures() {
    let unknown = scripted("127.77.40.9", b"-> ", |line| {
        format!("{line}\n\rerror: command not found\r\n")
    })
    .await;
    let f = driver(2_000)
        .perform(&device("127.77.40.9", unknown, None), &Action::Hangup)
        .await
        .expect_err("unknown");
    assert_eq!(f.kind, FailureKind::Misprovisioned);
    assert_eq!(f.causes, ["error: command not found"]);

    let params = scripted("127.77.40.9", b"-> ", |line| {
        format!("{line}\n\rerror: command needs more parameters to execute successfully\r\n")
    })
    .await;
    let f = driver(2_000)
        .perform(&device("127.77.40.9", params, None), &Action::Hangup)
        .await
        .expect_err("params");
    assert_eq!(f.kind, FailureKind::ServerError);

    // Group Series' CR CR LF and a mute that did not take.
    let stubborn = scripted("127.77.40.9", b"\xff\xfb\x01-> ", |line| {
        format!("{line}\n\rmute near off\r\r\n")
    })
    .await;
    let f = driver(2_000)
        .perform(&device("127.77.40.9", stubborn, None), &Action::Mute)
        .await
        .expect_err("ignored");
    assert_eq!(f.kind, FailureKind::Ignored);
}
