//! Template settings (issue #36) through the POLYCOM_TELNET driver against the emulated Poly
//! codec (and a scripted server for answers the emulator never gives), over loopback: defaults
//! read, keys written and read back (and seen in the emulator's control surface), unsupported
//! keys answered without connecting, a provisioned codec's refusals, a bad password, a missing
//! command, a connection lost in the middle of a write.
#![allow(clippy::unwrap_used)]

mod support;

use roomlink_device_emu::device::{DeviceDefaults, Fault};
use roomlink_device_emu::{EmuConfig, Emulator, poly_config, poly_telnet};
use roomlink_domain::template::{SettingKey, TemplateSettings};
use roomlink_listener::driver::{Capability, Driver, SettingOutcome, SettingOutcomes};
use roomlink_listener::drivers::poly_config::{self as mapping, Answer};
use roomlink_listener::drivers::poly_telnet::{PolyTelnetDriver, PolyTelnetSettings};
use roomlink_listener_protocol::failure::FailureKind;
use serde_json::json;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use support::{device, values, view};

const PASSWORD: &str = "poly-Secret-36";
const SUPPORTED: [SettingKey; 4] = [
    SettingKey::SystemName,
    SettingKey::StandbyDelayMinutes,
    SettingKey::AutoAnswerMode,
    SettingKey::AutoAnswerMute,
];

async fn emulator(first: [u8; 4]) -> Emulator {
    roomlink_device_emu::start(EmuConfig {
        first_host: first.into(),
        count: 1,
        defaults: DeviceDefaults {
            username: "admin".into(),
            password: PASSWORD.into(),
            connect_after: Duration::ZERO,
        },
        poly_telnet: Some(0),
        control: Some(0),
        ..EmuConfig::default()
    })
    .await
    .unwrap()
}

fn driver() -> PolyTelnetDriver {
    PolyTelnetDriver::new(PolyTelnetSettings {
        connect_timeout: Duration::from_secs(2),
        answer_timeout: Duration::from_secs(3),
    })
}

fn unsupported_why(outcomes: &SettingOutcomes, key: SettingKey) -> &str {
    match &outcomes[&key] {
        SettingOutcome::Unsupported(why) => why,
        other => panic!("{key} should be unsupported: {other:?}"),
    }
}

#[tokio::test]
async fn defaults_are_read_and_written_keys_read_back() {
    let emu = emulator([127, 77, 38, 1]).await;
    let address = "127.77.38.1";
    let room = device(address, emu.ports.poly_telnet.unwrap(), PASSWORD);
    let driver = driver();
    assert!(driver.capabilities().contains(&Capability::Configuration));

    let read = driver
        .read_configuration(&room, SettingKey::ALL)
        .await
        .unwrap();
    let mut expected = json!({
        "system.name": "Poly-127-77-38-1",
        "standby.delay_minutes": 3,
        "auto_answer.mode": "on",
        "auto_answer.mute": "off",
    });
    for key in SUPPORTED {
        assert_eq!(
            SettingOutcome::Value(expected[key.name()].clone()),
            read[&key],
            "{key}"
        );
    }
    for key in SettingKey::ALL.iter().filter(|k| !SUPPORTED.contains(k)) {
        assert_eq!(unsupported_why(&read, *key), mapping::unsupported(*key));
    }
    let before = view(&emu, address).await["commands"].as_u64().unwrap();

    let settings = TemplateSettings::from_json(&json!({
        "system.name": "Oslo 4.12 «Fjord»",
        "standby.delay_minutes": 480,
        "auto_answer.mode": "off",
        "auto_answer.mute": "on",
        "time_zone": "Europe/Oslo",
        "audio.default_volume": 70,
    }))
    .unwrap();
    let written = driver.write_configuration(&room, &settings).await.unwrap();
    for key in SUPPORTED {
        assert_eq!(
            written[&key],
            SettingOutcome::Value(settings.get(key).unwrap().to_json()),
            "{key} applied"
        );
        expected[key.name()] = settings.get(key).unwrap().to_json();
    }
    assert!(unsupported_why(&written, SettingKey::TimeZone).contains("time zone"));
    assert!(unsupported_why(&written, SettingKey::AudioDefaultVolume).contains("volume set"));

    let back = driver.read_configuration(&room, &SUPPORTED).await.unwrap();
    assert_eq!(values(&back), expected, "read back");

    let seen = view(&emu, address).await;
    assert_eq!(
        seen["polyConfiguration"],
        json!({
            "autoanswer": "no",
            "muteautoanswer": "yes",
            "sleeptime": "480",
            "systemname": "Oslo 4.12 «Fjord»",
        })
    );
    // Four writes reached the codec: the unsupported keys sent nothing.
    assert_eq!(seen["commands"].as_u64().unwrap(), before + 4);
    emu.stop();
}

#[tokio::test]
async fn unsupported_keys_are_answered_without_connecting_and_a_bad_password_fails_the_call() {
    let emu = emulator([127, 77, 38, 2]).await;
    let address = "127.77.38.2";
    let port = emu.ports.poly_telnet.unwrap();
    let driver = driver();
    // Every login would fail: an answer at all shows that no connection was made.
    emu.devices
        .with(address, |d| d.faults.insert(Fault::BadCredentials));
    let room = device(address, port, PASSWORD);
    let only_unsupported = [SettingKey::TimeZone, SettingKey::ProximityMode];
    let read = driver
        .read_configuration(&room, &only_unsupported)
        .await
        .unwrap();
    assert_eq!(read.len(), 2);
    assert!(unsupported_why(&read, SettingKey::ProximityMode).contains("Cisco feature"));
    let settings = TemplateSettings::from_json(&json!({
        "sip.display_name": "Room",
        "welcome.message": "Hello",
    }))
    .unwrap();
    let written = driver.write_configuration(&room, &settings).await.unwrap();
    assert!(unsupported_why(&written, SettingKey::WelcomeMessage).contains("sleeptext"));
    assert!(!unsupported_why(&written, SettingKey::SipDisplayName).is_empty());

    // A key that needs the codec does connect, and the refused login fails the whole call.
    let failure = driver
        .read_configuration(&room, &[SettingKey::TimeZone, SettingKey::AutoAnswerMode])
        .await
        .unwrap_err();
    assert_eq!(failure.kind, FailureKind::BadCredentials);

    // A wrong password, no fault: the same, and the password is nowhere in the failure.
    emu.devices
        .with(address, |d| d.faults.remove(&Fault::BadCredentials));
    let wrong = device(address, port, "not-the-password");
    let failure = driver
        .write_configuration(
            &wrong,
            &TemplateSettings::from_json(&json!({"standby.delay_minutes": 15})).unwrap(),
        )
        .await
        .unwrap_err();
    assert_eq!(failure.kind, FailureKind::BadCredentials);
    let shown = format!("{failure:?}");
    assert!(!shown.contains("not-the-password"), "{shown}");
    assert!(
        emu.devices
            .with(address, |d| d.poly_configuration.is_empty())
    );
    emu.stop();
}

#[tokio::test]
async fn a_provisioned_codec_refuses_each_write_with_its_text_and_odd_values_read_as_they_are() {
    let emu = emulator([127, 77, 38, 3]).await;
    let address = "127.77.38.3";
    let room = device(address, emu.ports.poly_telnet.unwrap(), PASSWORD);
    let driver = driver();
    emu.devices
        .with(address, |d| d.faults.insert(Fault::Provisioned));
    let settings = TemplateSettings::from_json(&json!({
        "system.name": "Provisioned",
        "standby.delay_minutes": 30,
        "auto_answer.mode": "off",
        "auto_answer.mute": "on",
    }))
    .unwrap();
    let written = driver.write_configuration(&room, &settings).await.unwrap();
    for key in SUPPORTED {
        assert_eq!(
            written[&key],
            SettingOutcome::Refused(poly_config::PROVISIONED.into()),
            "{key}"
        );
    }
    assert!(
        emu.devices
            .with(address, |d| d.poly_configuration.is_empty())
    );

    // Values no template sets (set on the codec by other means) read as the codec says them.
    emu.devices.with(address, |d| {
        d.poly_configuration
            .insert("autoanswer".into(), "donotdisturb".into());
        d.poly_configuration.insert("sleeptime".into(), "0".into());
    });
    let read = driver.read_configuration(&room, &SUPPORTED).await.unwrap();
    assert_eq!(
        read[&SettingKey::AutoAnswerMode],
        SettingOutcome::Value(json!("donotdisturb"))
    );
    assert_eq!(
        read[&SettingKey::StandbyDelayMinutes],
        SettingOutcome::Value(json!(0))
    );
    emu.stop();
}

/// A value the domain never lets through (a `sleeptime` of 45) is refused by the emulated codec
/// with the `error:` line, and that line is the key's refusal in the driver's reading.
#[test]
fn the_codec_s_error_line_for_a_value_outside_its_list_is_a_refusal() {
    let mut codec = roomlink_device_emu::device::Device::new("admin", "pw", Duration::ZERO);
    let answer = poly_telnet::answer(&mut codec, "sleeptime 45");
    assert_eq!(answer, [poly_telnet::ILLEGAL]);
    assert!(TemplateSettings::from_json(&json!({"standby.delay_minutes": 45})).is_err());
    assert_eq!(
        mapping::answer(SettingKey::StandbyDelayMinutes, &answer[0]),
        Some(Answer::Refused(poly_telnet::ILLEGAL.into()))
    );
}

/// A codec without a password that answers from a script: `None` closes the connection.
async fn scripted(address: &str, script: fn(&str) -> Option<Vec<&'static str>>) -> u16 {
    let listener = TcpListener::bind((address, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (reader, mut writer) = stream.into_split();
        let mut lines = BufReader::new(reader).lines();
        writer.write_all(b"-> ").await.unwrap();
        while let Ok(Some(line)) = lines.next_line().await {
            let line = line.trim().to_owned();
            let mut out = format!("{line}\n\r");
            match script(&line) {
                Some(answer) => {
                    for a in answer {
                        out.push_str(a);
                        out.push_str("\r\n");
                    }
                    writer.write_all(out.as_bytes()).await.unwrap();
                }
                None => {
                    let _ = writer.write_all(out.as_bytes()).await;
                    return;
                }
            }
        }
    });
    port
}

#[tokio::test]
async fn a_missing_command_is_unsupported_and_a_lost_connection_names_what_was_applied() {
    let address = "127.77.38.4";
    let port = scripted(address, |line| match line {
        "muteautoanswer get" => Some(vec!["error: command not found"]),
        "systemname get" => Some(vec![
            "cs: call[3] chan[0] dialstr[x] state[RINGING]",
            "systemname \"Board Room\"",
        ]),
        "exit" => None,
        _ => Some(vec!["error: unexpected"]),
    })
    .await;
    let room = device(address, port, "");
    let read = driver()
        .read_configuration(&room, &[SettingKey::AutoAnswerMute, SettingKey::SystemName])
        .await
        .unwrap();
    assert_eq!(
        read[&SettingKey::AutoAnswerMute],
        SettingOutcome::Unsupported(
            "this firmware has no muteautoanswer command (error: command not found)".into()
        )
    );
    assert_eq!(
        read[&SettingKey::SystemName],
        SettingOutcome::Value(json!("Board Room"))
    );

    let port = scripted(address, |line| match line {
        "systemname set \"Board Room\"" => Some(vec!["systemname \"Board Room\""]),
        _ => None,
    })
    .await;
    let room = device(address, port, "");
    let settings = TemplateSettings::from_json(&json!({
        "system.name": "Board Room",
        "standby.delay_minutes": 30,
        "auto_answer.mode": "on",
    }))
    .unwrap();
    let failure = driver()
        .write_configuration(&room, &settings)
        .await
        .unwrap_err();
    assert_eq!(failure.kind, FailureKind::Unreachable);
    assert!(
        failure.message.contains("sleeptime 30"),
        "{}",
        failure.message
    );
    assert!(
        failure
            .causes
            .contains(&"applied before the failure: system.name".to_owned()),
        "{:?}",
        failure.causes
    );
}
