//! The TANDBERG_HTTP driver against the emulated Cisco codec (roomlink-device-emu, in process),
//! over real sockets on loopback addresses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roomlink_device_emu::cisco_xapi;
use roomlink_device_emu::device::{DeviceDefaults, Fault, Phase};
use roomlink_device_emu::{EmuConfig, Emulator};
use roomlink_domain::enums::SignalingProtocol;
use roomlink_domain::rules::dial_plan::DialPlan;
use roomlink_listener::driver::{Action, CallPhase, Device, Driver, DriverFailure};
use roomlink_listener::drivers::cisco_http::{
    CiscoHttpDriver, CiscoHttpSettings, PROTOCOL, Scheme, TlsPolicy,
};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::WireEndpoint;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use zeroize::Zeroizing;

const PASSWORD: &str = "codec-Secret-71";

async fn emulator(first: [u8; 4], count: u32, connect_after: Duration) -> Emulator {
    roomlink_device_emu::start(EmuConfig {
        first_host: first.into(),
        count,
        defaults: DeviceDefaults {
            username: "admin".into(),
            password: PASSWORD.into(),
            connect_after,
        },
        cisco_http: Some(0),
        cisco_https: Some(0),
        ..EmuConfig::default()
    })
    .await
    .expect("emulator starts")
}

fn device(address: &str, port: u16) -> Device {
    Device {
        endpoint: WireEndpoint::default(),
        address: address.into(),
        port: Some(port),
        username: Some("admin".into()),
        password: Some(Zeroizing::new(PASSWORD.into())),
    }
}

fn http_driver() -> CiscoHttpDriver {
    CiscoHttpDriver::new(CiscoHttpSettings {
        scheme: Scheme::Http,
        ..CiscoHttpSettings::default()
    })
    .expect("driver")
}

fn https_driver(tls: TlsPolicy) -> CiscoHttpDriver {
    CiscoHttpDriver::new(CiscoHttpSettings {
        tls,
        ..CiscoHttpSettings::default()
    })
    .expect("driver")
}

fn join(dial: &str, signaling: Option<SignalingProtocol>) -> Action {
    Action::Join {
        plan: DialPlan {
            dial_string: dial.into(),
            ivr_steps: Vec::new(),
        },
        signaling,
        meeting_id: None,
        passcode: None,
    }
}

/// Fails the test if any text of the failure holds the password.
fn no_secret(failure: &DriverFailure) {
    let texts = [
        failure.message.clone(),
        failure.causes.join("\n"),
        failure.remote_request.clone().unwrap_or_default(),
        failure.remote_response.clone().unwrap_or_default(),
        format!("{failure:?}"),
    ];
    for text in texts {
        assert!(!text.contains(PASSWORD), "password in {text}");
        assert!(!text.contains("SessionId="), "session cookie in {text}");
    }
}

async fn connected(driver: &CiscoHttpDriver, device: &Device) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if driver.status(device).await.expect("status").call == CallPhase::Connected {
            return;
        }
        assert!(Instant::now() < deadline, "the call never connected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn every_action_and_status_over_http() {
    let emu = emulator([127, 77, 20, 1], 1, Duration::ZERO).await;
    let driver = http_driver();
    assert_eq!(driver.protocol(), PROTOCOL);
    let room = device("127.77.20.1", emu.ports.cisco_http.unwrap());

    let idle = driver.status(&room).await.unwrap();
    assert_eq!(idle.call, CallPhase::Idle);
    assert!(!idle.microphone_muted);

    driver
        .perform(
            &room,
            &join("991.1234@bridge.example", Some(SignalingProtocol::Sip)),
        )
        .await
        .unwrap();
    let state = emu.devices.get("127.77.20.1");
    assert_eq!(
        state.last_dialed.as_deref(),
        Some("991.1234@bridge.example")
    );
    assert_eq!(state.last_dial_protocol.as_deref(), Some("Sip"));
    connected(&driver, &room).await;

    driver.perform(&room, &Action::Mute).await.unwrap();
    assert!(emu.devices.get("127.77.20.1").microphone_muted);
    assert!(driver.status(&room).await.unwrap().microphone_muted);
    driver.perform(&room, &Action::Unmute).await.unwrap();
    assert!(!driver.status(&room).await.unwrap().microphone_muted);

    driver
        .perform(&room, &Action::Dtmf("1234#".into()))
        .await
        .unwrap();
    assert_eq!(emu.devices.get("127.77.20.1").dtmf, "1234#");

    driver.perform(&room, &Action::Hangup).await.unwrap();
    assert_eq!(driver.status(&room).await.unwrap().call, CallPhase::Idle);
    // Nothing to hang up is not a failure.
    driver.perform(&room, &Action::Hangup).await.unwrap();

    // A dial string with XML's special characters arrives intact.
    driver
        .perform(&room, &join("a&b<c>@x", Some(SignalingProtocol::H323)))
        .await
        .unwrap();
    let state = emu.devices.get("127.77.20.1");
    assert_eq!(state.last_dialed.as_deref(), Some("a&b<c>@x"));
    assert_eq!(state.last_dial_protocol.as_deref(), Some("H323"));
    driver.shutdown().await;
}

#[tokio::test]
async fn a_call_is_dialling_until_it_connects() {
    let emu = emulator([127, 77, 21, 1], 1, Duration::from_secs(3600)).await;
    let driver = http_driver();
    let room = device("127.77.21.1", emu.ports.cisco_http.unwrap());
    driver.perform(&room, &join("42@x", None)).await.unwrap();
    let status = driver.status(&room).await.unwrap();
    assert_eq!(status.call, CallPhase::Dialling);
    assert!(status.dialing() && status.call_active());
    assert_eq!(emu.devices.get("127.77.21.1").last_dial_protocol, None);
}

#[tokio::test]
async fn https_accepts_any_or_the_pinned_certificate_and_verify_refuses_it() {
    let emu = emulator([127, 77, 22, 1], 2, Duration::ZERO).await;
    let port = emu.ports.cisco_https.unwrap();
    let fingerprint = emu.tls_fingerprint.clone().unwrap();
    let room = device("127.77.22.1", port);

    let any = https_driver(TlsPolicy::AcceptAny);
    any.perform(&room, &Action::Mute).await.unwrap();
    assert!(emu.devices.get("127.77.22.1").microphone_muted);

    let pins = BTreeMap::from([
        ("127.77.22.1".to_owned(), fingerprint.to_lowercase()),
        ("127.77.22.2".to_owned(), "00:".repeat(31) + "00"),
    ]);
    let pinned = https_driver(TlsPolicy::Pinned(pins));
    pinned.perform(&room, &Action::Unmute).await.unwrap();
    assert!(!emu.devices.get("127.77.22.1").microphone_muted);

    let wrong = pinned
        .perform(&device("127.77.22.2", port), &Action::Mute)
        .await
        .unwrap_err();
    assert_eq!(wrong.kind, FailureKind::Misprovisioned, "{wrong:?}");
    assert!(
        wrong.causes.join(" ").contains("not the pinned one"),
        "{wrong:?}"
    );
    no_secret(&wrong);
    assert!(!emu.devices.get("127.77.22.2").microphone_muted);

    let verify = https_driver(TlsPolicy::Verify);
    let refused = verify.status(&room).await.unwrap_err();
    assert_eq!(refused.kind, FailureKind::Misprovisioned, "{refused:?}");
    no_secret(&refused);

    assert!(
        CiscoHttpDriver::new(CiscoHttpSettings {
            tls: TlsPolicy::Pinned(BTreeMap::from([("127.77.22.1".into(), "abc".into())])),
            ..CiscoHttpSettings::default()
        })
        .is_err()
    );
}

#[tokio::test]
async fn faults_become_the_expected_failure_kinds() {
    let emu = emulator([127, 77, 23, 1], 6, Duration::ZERO).await;
    let port = emu.ports.cisco_http.unwrap();
    let set = |address: &str, fault: Fault| emu.devices.with(address, |d| d.faults.insert(fault));

    // Wrong password, and a device refusing every login.
    let driver = http_driver();
    let mut stranger = device("127.77.23.1", port);
    stranger.password = Some(Zeroizing::new("not-it".into()));
    let failure = driver.perform(&stranger, &Action::Mute).await.unwrap_err();
    assert_eq!(failure.kind, FailureKind::BadCredentials);
    assert!(
        failure
            .remote_request
            .as_deref()
            .unwrap()
            .contains("Authorization: Basic [redacted]")
    );
    assert!(
        failure
            .remote_response
            .as_deref()
            .unwrap()
            .starts_with("HTTP/1.1 401")
    );
    no_secret(&failure);
    set("127.77.23.1", Fault::BadCredentials);
    let failure = driver
        .status(&device("127.77.23.1", port))
        .await
        .unwrap_err();
    assert_eq!(failure.kind, FailureKind::BadCredentials);
    no_secret(&failure);

    // Rate limit: commands are not retried; reads are, and then fail.
    set("127.77.23.2", Fault::RateLimit);
    let room = device("127.77.23.2", port);
    let failure = driver.perform(&room, &Action::Mute).await.unwrap_err();
    assert_eq!(failure.kind, FailureKind::ServerError, "{failure:?}");
    no_secret(&failure);
    let failure = driver.status(&room).await.unwrap_err();
    assert_eq!(failure.kind, FailureKind::ServerError);
    assert!(
        failure.causes.iter().any(|c| c.contains("503")),
        "{failure:?}"
    );
    no_secret(&failure);

    // Slow: the driver's own request timeout.
    emu.devices.with("127.77.23.3", |d| {
        d.faults.insert(Fault::Slow);
        d.slow_ms = 5_000;
    });
    let impatient = CiscoHttpDriver::new(CiscoHttpSettings {
        scheme: Scheme::Http,
        request_timeout: Duration::from_millis(300),
        ..CiscoHttpSettings::default()
    })
    .unwrap();
    let failure = impatient
        .perform(&device("127.77.23.3", port), &Action::Mute)
        .await
        .unwrap_err();
    assert_eq!(failure.kind, FailureKind::Timeout, "{failure:?}");
    no_secret(&failure);

    // The connection closes under a command.
    set("127.77.23.4", Fault::DropConnection);
    let failure = driver
        .perform(&device("127.77.23.4", port), &Action::Mute)
        .await
        .unwrap_err();
    assert_eq!(failure.kind, FailureKind::Unreachable, "{failure:?}");
    no_secret(&failure);

    // Integrator role: no DTMF (misprovisioned); call status from the active call count.
    set("127.77.23.5", Fault::IntegratorRole);
    let room = device("127.77.23.5", port);
    driver.perform(&room, &join("7@x", None)).await.unwrap();
    connected(&driver, &room).await;
    let failure = driver
        .perform(&room, &Action::Dtmf("1".into()))
        .await
        .unwrap_err();
    assert_eq!(failure.kind, FailureKind::Misprovisioned, "{failure:?}");
    assert!(
        failure
            .remote_response
            .as_deref()
            .unwrap()
            .contains("Permission denied")
    );
    no_secret(&failure);
    driver.perform(&room, &Action::Hangup).await.unwrap();
    assert_eq!(driver.status(&room).await.unwrap().call, CallPhase::Idle);

    // Microsoft Teams mode: a call the codec lists nowhere under `/Status/Call` still counts.
    emu.devices.with("127.77.23.5", |d| d.faults.clear());
    set("127.77.23.5", Fault::TeamsMode);
    driver.perform(&room, &join("8@x", None)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while emu.devices.get("127.77.23.5").phase() != Phase::Connected {
        assert!(Instant::now() < deadline, "the call never connected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let listed = cisco_xapi::read_status(&emu.devices.get("127.77.23.5"), "/Status/Call");
    assert!(
        listed.is_ok_and(|status| status.children.is_empty()),
        "no call listed"
    );
    assert_eq!(
        driver.status(&room).await.unwrap().call,
        CallPhase::Connected
    );
    driver.perform(&room, &Action::Hangup).await.unwrap();

    // Nothing listening.
    let free = {
        let listener = std::net::TcpListener::bind("127.77.23.6:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let failure = driver
        .perform(&device("127.77.23.6", free), &Action::Mute)
        .await
        .unwrap_err();
    assert_eq!(failure.kind, FailureKind::Unreachable, "{failure:?}");
    no_secret(&failure);
}

#[tokio::test]
async fn tc_firmware_gets_basic_auth_and_top_level_dtmfsend() {
    let emu = emulator([127, 77, 24, 1], 1, Duration::ZERO).await;
    emu.devices
        .with("127.77.24.1", |d| d.faults.insert(Fault::TcFirmware));
    let driver = http_driver();
    let room = device("127.77.24.1", emu.ports.cisco_http.unwrap());
    driver.perform(&room, &join("5@x", None)).await.unwrap();
    connected(&driver, &room).await;
    driver
        .perform(&room, &Action::Dtmf("*9#".into()))
        .await
        .unwrap();
    assert_eq!(emu.devices.get("127.77.24.1").dtmf, "*9#");
}

#[tokio::test]
async fn a_lost_session_is_replaced() {
    let emu = emulator([127, 77, 25, 1], 1, Duration::ZERO).await;
    let driver = http_driver();
    let room = device("127.77.25.1", emu.ports.cisco_http.unwrap());
    driver.perform(&room, &Action::Mute).await.unwrap();
    // TC firmware accepts no session cookie: the driver's 401 makes it log in again, finds
    // no sessions, and goes on with Basic.
    emu.devices
        .with("127.77.25.1", |d| d.faults.insert(Fault::TcFirmware));
    driver.perform(&room, &Action::Unmute).await.unwrap();
    assert!(!emu.devices.get("127.77.25.1").microphone_muted);
    driver.close_sessions().await;
}

#[tokio::test]
async fn a_changed_password_does_not_ride_on_the_old_login() {
    let emu = emulator([127, 77, 27, 1], 1, Duration::ZERO).await;
    let driver = http_driver();
    let room = device("127.77.27.1", emu.ports.cisco_http.unwrap());
    driver.perform(&room, &Action::Mute).await.unwrap();
    // The same device with another password (changed in roomlink, wrong on the codec): the
    // session the right one opened does not carry it.
    let mut wrong = room.clone();
    wrong.password = Some(Zeroizing::new("not-the-codec-password".into()));
    let failure = driver.perform(&wrong, &Action::Unmute).await.unwrap_err();
    assert_eq!(failure.kind, FailureKind::BadCredentials, "{failure:?}");
    no_secret(&failure);
    assert!(
        emu.devices.get("127.77.27.1").microphone_muted,
        "nothing was done"
    );
    // The right password logs in again and is obeyed.
    driver.perform(&room, &Action::Unmute).await.unwrap();
    assert!(!emu.devices.get("127.77.27.1").microphone_muted);
    driver.close_sessions().await;
}

#[tokio::test]
async fn long_dtmf_goes_in_chunks_of_32() {
    let emu = emulator([127, 77, 26, 1], 1, Duration::ZERO).await;
    let driver = http_driver();
    let room = device("127.77.26.1", emu.ports.cisco_http.unwrap());
    driver.perform(&room, &join("1@x", None)).await.unwrap();
    connected(&driver, &room).await;
    let before = emu.devices.get("127.77.26.1").commands;
    let tones: String = "0123456789*#".chars().cycle().take(70).collect();
    driver
        .perform(&room, &Action::Dtmf(tones.clone()))
        .await
        .unwrap();
    let after = emu.devices.get("127.77.26.1");
    assert_eq!(after.dtmf, tones);
    assert_eq!(after.commands - before, 3, "32 + 32 + 6 tones");
}
