//! The TANDBERG_SSH driver against the emulated Cisco codec's SSH xAPI, over loopback: every
//! action and status, one session reused, reconnection, host keys pinned on first use, faults.

use roomlink_device_emu::Frontend;
use roomlink_device_emu::cisco_ssh;
use roomlink_device_emu::device::{DeviceDefaults, Devices, Fault, Phase};
use roomlink_domain::enums::SignalingProtocol;
use roomlink_domain::rules::dial_plan::DialPlan;
use roomlink_listener::driver::{Action, CallPhase, Device, Driver, DriverFailure};
use roomlink_listener::drivers::cisco_ssh::{CiscoSshDriver, CiscoSshSettings, HostKeyPolicy};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::WireEndpoint;
use std::net::IpAddr;
use std::time::{Duration, Instant};
use zeroize::Zeroizing;

const PASSWORD: &str = "room-secret-ssh-9";

fn devices() -> Devices {
    Devices::new(DeviceDefaults {
        username: "admin".into(),
        password: PASSWORD.into(),
        connect_after: Duration::from_millis(50),
    })
}

async fn codec(host: &str, port: u16, devices: &Devices) -> Frontend {
    let host: IpAddr = host.parse().expect("address");
    let key = cisco_ssh::generate_host_key().expect("key");
    // A port just given up by a stopped front end frees once its task has ended.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match cisco_ssh::start(&[host], port, devices.clone(), key.clone()).await {
            Ok(frontend) => return frontend,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("the emulator does not start: {e}"),
        }
    }
}

fn device(address: &str, port: u16, password: &str) -> Device {
    Device {
        endpoint: WireEndpoint::default(),
        address: address.into(),
        port: Some(port),
        username: Some("admin".into()),
        password: Some(Zeroizing::new(password.to_owned())),
    }
}

fn driver(dir: &tempfile::TempDir, answer_ms: u64) -> CiscoSshDriver {
    CiscoSshDriver::new(CiscoSshSettings {
        host_keys: HostKeyPolicy::PinOnFirstUse {
            file: dir.path().join("known-hosts"),
        },
        legacy_algorithms: false,
        connect_timeout: Duration::from_secs(2),
        answer_timeout: Duration::from_millis(answer_ms),
    })
}

fn join(dial: &str) -> Action {
    Action::Join {
        plan: DialPlan {
            dial_string: dial.into(),
            ivr_steps: vec![],
        },
        signaling: Some(SignalingProtocol::Sip),
        meeting_id: None,
        passcode: None,
    }
}

async fn connected(devices: &Devices, address: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while devices.get(address).phase() != Phase::Connected {
        assert!(Instant::now() < deadline, "the call never connected");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn assert_secret_free(failure: &DriverFailure) {
    let text = format!("{failure:?}");
    assert!(!text.contains(PASSWORD), "{text}");
}

#[tokio::test]
async fn every_action_and_status_over_one_reused_session() {
    let dir = tempfile::tempdir().expect("dir");
    let devices = devices();
    let codec = codec("127.79.10.1", 0, &devices).await;
    let driver = driver(&dir, 3_000);
    let room = device("127.79.10.1", codec.port, PASSWORD);

    let idle = driver.status(&room).await.expect("status");
    assert_eq!(idle.call, CallPhase::Idle);
    driver
        .perform(&room, &join("123.4@bridge.example"))
        .await
        .expect("dial");
    let d = devices.get("127.79.10.1");
    assert_eq!(d.last_dialed.as_deref(), Some("123.4@bridge.example"));
    assert_eq!(d.last_dial_protocol.as_deref(), Some("Sip"));
    connected(&devices, "127.79.10.1").await;
    assert_eq!(
        driver.status(&room).await.expect("status").call,
        CallPhase::Connected
    );
    let tones = format!("{}#", "1234567890".repeat(7));
    driver
        .perform(&room, &Action::Dtmf(tones.clone()))
        .await
        .expect("dtmf");
    assert_eq!(
        devices.get("127.79.10.1").dtmf,
        tones,
        "71 tones in three commands"
    );
    driver.perform(&room, &Action::Mute).await.expect("mute");
    assert!(driver.status(&room).await.expect("status").microphone_muted);
    driver
        .perform(&room, &Action::Unmute)
        .await
        .expect("unmute");
    driver
        .perform(&room, &Action::Hangup)
        .await
        .expect("hang up");
    assert_eq!(devices.get("127.79.10.1").phase(), Phase::Idle);
    driver
        .perform(&room, &Action::Hangup)
        .await
        .expect("nothing to hang up is fine");
    assert_eq!(driver.connections(), 1, "one SSH session for everything");
}

#[tokio::test]
async fn faults_become_failure_kinds_and_a_dropped_session_is_reopened() {
    let dir = tempfile::tempdir().expect("dir");
    let devices = devices();
    let codec = codec("127.79.11.1", 0, &devices).await;
    let driver = driver(&dir, 1_000);
    let room = device("127.79.11.1", codec.port, PASSWORD);
    let set = |fault: Option<Fault>| {
        devices.with("127.79.11.1", |d| {
            d.faults.clear();
            d.faults.extend(fault);
        })
    };

    set(Some(Fault::BadCredentials));
    let f = driver
        .perform(&room, &Action::Mute)
        .await
        .expect_err("refused");
    assert_eq!(f.kind, FailureKind::BadCredentials);
    assert_secret_free(&f);

    set(None);
    driver.perform(&room, &join("1@b")).await.expect("dial");
    connected(&devices, "127.79.11.1").await;
    set(Some(Fault::IntegratorRole));
    let f = driver
        .perform(&room, &Action::Dtmf("1".into()))
        .await
        .expect_err("no DTMF");
    assert_eq!(f.kind, FailureKind::Misprovisioned, "{f:?}");
    let s = driver
        .status(&room)
        .await
        .expect("status from NumberOfActiveCalls");
    assert_eq!(s.call, CallPhase::Connected);
    // Microsoft Teams mode: `xStatus Call` lists no call, yet the call counts.
    set(Some(Fault::TeamsMode));
    let s = driver.status(&room).await.expect("status in Teams mode");
    assert_eq!(s.call, CallPhase::Connected);

    set(Some(Fault::DropConnection));
    let f = driver
        .perform(&room, &Action::Mute)
        .await
        .expect_err("dropped");
    assert_eq!(f.kind, FailureKind::Unreachable, "{f:?}");
    set(Some(Fault::Slow));
    devices.with("127.79.11.1", |d| d.slow_ms = 3_000);
    let f = driver
        .perform(&room, &Action::Mute)
        .await
        .expect_err("slow");
    assert_eq!(f.kind, FailureKind::Timeout, "{f:?}");

    set(Some(Fault::TcFirmware));
    let before = driver.connections();
    driver
        .perform(&room, &Action::Dtmf("42#".into()))
        .await
        .expect("TC DTMF");
    assert!(devices.get("127.79.11.1").dtmf.ends_with("42#"));
    assert!(
        driver.connections() > before,
        "a new session after the broken ones"
    );

    let nobody = device("127.79.11.2", codec.port, PASSWORD);
    let f = driver
        .perform(&nobody, &Action::Mute)
        .await
        .expect_err("nobody there");
    assert_eq!(f.kind, FailureKind::Unreachable, "{f:?}");
}

#[tokio::test]
async fn a_changed_password_does_not_ride_on_the_open_shell() {
    let dir = tempfile::tempdir().expect("dir");
    let devices = devices();
    let codec = codec("127.79.14.1", 0, &devices).await;
    let driver = driver(&dir, 3_000);
    let room = device("127.79.14.1", codec.port, PASSWORD);
    driver.perform(&room, &Action::Mute).await.expect("mute");
    // Another password for the same device: the shell the right one opened does not carry it.
    let wrong = device("127.79.14.1", codec.port, "not-the-codec-password");
    let failure = driver.perform(&wrong, &Action::Unmute).await.unwrap_err();
    assert_eq!(failure.kind, FailureKind::BadCredentials, "{failure:?}");
    assert!(
        devices.get("127.79.14.1").microphone_muted,
        "nothing was done"
    );
    driver
        .perform(&room, &Action::Unmute)
        .await
        .expect("unmute");
    assert!(!devices.get("127.79.14.1").microphone_muted);
    assert_eq!(driver.connections(), 3, "a login per password change");
}

#[tokio::test]
async fn a_changed_host_key_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let devices = devices();
    let first = codec("127.79.12.1", 0, &devices).await;
    let port = first.port;
    let driver = driver(&dir, 3_000);
    let room = device("127.79.12.1", port, PASSWORD);
    driver
        .status(&room)
        .await
        .expect("first use records the key");
    let recorded = std::fs::read_to_string(dir.path().join("known-hosts")).expect("file");
    assert!(
        recorded.starts_with(&format!("127.79.12.1:{port} ssh-ed25519 ")),
        "{recorded}"
    );
    drop(first);
    driver.shutdown().await;
    // Another codec (another key) at the same address and port.
    let _second = codec("127.79.12.1", port, &devices).await;
    let f = driver.status(&room).await.expect_err("a new key");
    assert_eq!(f.kind, FailureKind::Misprovisioned, "{f:?}");
    assert!(f.message.contains("changed"), "{}", f.message);
}
