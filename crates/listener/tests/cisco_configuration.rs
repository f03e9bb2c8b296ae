//! Template settings (issue #36) through both Cisco drivers against the emulated codec, over
//! loopback: defaults read, several keys written and read back (and seen in the emulator's
//! control surface), refusals by the codec per key (an Integrator account writing Admin-only
//! paths) with the others still applied, TC firmware unsupported, nothing secret in outcomes.
#![allow(clippy::unwrap_used)]

mod support;

use async_trait::async_trait;
use roomlink_device_emu::cisco_config;
use roomlink_device_emu::device::{DeviceDefaults, Fault};
use roomlink_device_emu::{EmuConfig, Emulator};
use roomlink_domain::template::{SettingKey, TemplateSettings};
use roomlink_listener::driver::{
    Action, Capability, Device, DeviceStatus, Driver, DriverFailure, SettingOutcome,
};
use roomlink_listener::drivers::cisco_ssh::answers::take_object;
use roomlink_listener::drivers::cisco_ssh::configuration::refusal;
use serde_json::json;
use std::time::Duration;

use support::{device, http_driver, ssh_driver, values, view};

const PASSWORD: &str = "config-Secret-36";
const JSXAPI_ANSWERS: &str = include_str!("recorded/jsxapi_tsh_answers.json");

async fn emulator(first: [u8; 4]) -> Emulator {
    roomlink_device_emu::start(EmuConfig {
        first_host: first.into(),
        count: 1,
        defaults: DeviceDefaults {
            username: "admin".into(),
            password: PASSWORD.into(),
            connect_after: Duration::ZERO,
        },
        cisco_http: Some(0),
        cisco_ssh: Some(0),
        control: Some(0),
        cisco_basic_rate_limit: false,
        ..EmuConfig::default()
    })
    .await
    .unwrap()
}

/// Which driver a test runs, with the room it reaches.
fn rooms(emu: &Emulator, address: &str) -> Vec<(&'static str, Box<dyn Driver>, Device)> {
    vec![
        (
            "http",
            Box::new(http_driver()) as Box<dyn Driver>,
            device(address, emu.ports.cisco_http.unwrap(), PASSWORD),
        ),
        (
            "ssh",
            Box::new(ssh_driver()),
            device(address, emu.ports.cisco_ssh.unwrap(), PASSWORD),
        ),
    ]
}

fn no_secret(text: &str) {
    assert!(!text.contains(PASSWORD), "password in {text}");
    assert!(!text.contains("SessionId="), "session cookie in {text}");
}

#[tokio::test]
async fn defaults_are_read_and_written_keys_read_back_over_http_and_ssh() {
    let emu = emulator([127, 77, 36, 1]).await;
    let address = "127.77.36.1";
    let defaults = json!({
        "time_zone": "Etc/UTC",
        "system.name": "Cisco-127-77-36-1",
        "standby.delay_minutes": 10,
        "audio.default_volume": 50,
        "sip.display_name": "",
        "proximity.mode": "on",
        "auto_answer.mode": "off",
        "auto_answer.mute": "off",
        "welcome.message": "",
    });
    let templates = [
        json!({
            "time_zone": "europe/oslo",
            "audio.default_volume": 70,
            "standby.delay_minutes": 30,
            "sip.display_name": "Room 4.12 & <co>",
            "auto_answer.mode": "on",
            "welcome.message": "Welcome! Tap the screen to start.",
        }),
        json!({
            "time_zone": "America/New_York",
            "audio.default_volume": 0,
            "system.name": "Oslo 4.12",
            "proximity.mode": "off",
            "auto_answer.mute": "on",
            "sip.display_name": "Møterom «Fjord»",
        }),
    ];
    let mut expected = defaults.clone();
    for ((protocol, driver, room), body) in rooms(&emu, address).into_iter().zip(templates) {
        assert!(driver.capabilities().contains(&Capability::Configuration));
        let read = driver
            .read_configuration(&room, SettingKey::ALL)
            .await
            .unwrap();
        assert_eq!(values(&read), expected, "{protocol}: the values before");

        let settings = TemplateSettings::from_json(&body).unwrap();
        let written = driver.write_configuration(&room, &settings).await.unwrap();
        assert_eq!(
            values(&written),
            settings.to_json(),
            "{protocol}: all applied"
        );
        for (key, value) in settings.to_json().as_object().unwrap() {
            expected[key] = value.clone();
        }
        let back = driver
            .read_configuration(&room, SettingKey::ALL)
            .await
            .unwrap();
        assert_eq!(values(&back), expected, "{protocol}: read back");
    }
    let held = &view(&emu, address).await["configuration"];
    assert_eq!(held["Time Zone"], "America/New_York");
    assert_eq!(held["Audio DefaultVolume"], "0");
    assert_eq!(held["Standby Delay"], "30");
    assert_eq!(held["SIP DisplayName"], "Møterom «Fjord»");
    assert_eq!(held["Conference AutoAnswer Mode"], "On");
    assert_eq!(held["Conference AutoAnswer Mute"], "On");
    assert_eq!(held["Proximity Mode"], "Off");
    assert_eq!(held["SystemUnit Name"], "Oslo 4.12");
    assert_eq!(
        held["UserInterface OSD HalfwakeMessage"],
        "Welcome! Tap the screen to start."
    );
    emu.stop();
}

#[tokio::test]
async fn an_integrator_account_is_refused_admin_only_keys_and_the_others_are_applied() {
    let emu = emulator([127, 77, 36, 9]).await;
    let address = "127.77.36.9";
    emu.devices
        .with(address, |d| d.faults.insert(Fault::IntegratorRole));
    for (n, (protocol, driver, room)) in rooms(&emu, address).into_iter().enumerate() {
        let volume = 20 + n as i64;
        let settings = TemplateSettings::from_json(&json!({
            "system.name": "Not allowed",
            "audio.default_volume": volume,
            "sip.display_name": "Not allowed either",
            "standby.delay_minutes": 60,
        }))
        .unwrap();
        let written = driver.write_configuration(&room, &settings).await.unwrap();
        for key in [SettingKey::SystemName, SettingKey::SipDisplayName] {
            let SettingOutcome::Refused(message) = &written[&key] else {
                panic!("{protocol}: {key} should be refused: {:?}", written[&key]);
            };
            assert!(
                message.starts_with("Permission denied (Configuration/"),
                "{protocol}: {message}"
            );
            no_secret(message);
        }
        assert_eq!(
            written[&SettingKey::AudioDefaultVolume],
            SettingOutcome::Value(json!(volume))
        );
        assert_eq!(
            written[&SettingKey::StandbyDelayMinutes],
            SettingOutcome::Value(json!(60))
        );
        no_secret(&format!("{written:?}"));
        let held = cisco_config::view(&emu.devices.get(address));
        assert_eq!(
            held["Audio DefaultVolume"],
            volume.to_string(),
            "{protocol}"
        );
        assert_eq!(held["Standby Delay"], "60");
        assert_eq!(held["SystemUnit Name"], "Cisco-127-77-36-9");
        assert_eq!(held["SIP DisplayName"], "");
    }
    emu.stop();
}

#[tokio::test]
async fn tc_firmware_supports_no_key_and_nothing_is_written() {
    let emu = emulator([127, 77, 37, 1]).await;
    let address = "127.77.37.1";
    emu.devices
        .with(address, |d| d.faults.insert(Fault::TcFirmware));
    let settings = TemplateSettings::from_json(&json!({"audio.default_volume": 80})).unwrap();
    for (protocol, driver, room) in rooms(&emu, address) {
        let written = driver.write_configuration(&room, &settings).await.unwrap();
        let read = driver
            .read_configuration(&room, &[SettingKey::TimeZone])
            .await
            .unwrap();
        for outcome in [
            &written[&SettingKey::AudioDefaultVolume],
            &read[&SettingKey::TimeZone],
        ] {
            assert!(
                matches!(outcome, SettingOutcome::Unsupported(why) if why.starts_with("TC firmware")),
                "{protocol}: {outcome:?}"
            );
        }
    }
    assert!(emu.devices.get(address).configuration.is_empty());
    emu.stop();
}

/// cisco-ce/jsxapi's recorded answers (tests/recorded/SOURCES.md): a successful `xSet` answers
/// nothing but its `ResultId`, which the SSH driver takes as applied; the refused `xGet` of a
/// configuration path is a refusal with its reason and path.
#[test]
fn jsxapi_s_recorded_xset_and_refused_configuration_read() {
    let mut buffer = JSXAPI_ANSWERS.as_bytes().to_vec();
    let mut by_id = std::collections::BTreeMap::new();
    while let Some(object) = take_object(&mut buffer) {
        let id = object["ResultId"].as_str().unwrap().to_owned();
        by_id.insert(id, object);
    }
    assert_eq!(
        refusal(&by_id["request-7"]),
        None,
        "a bare ResultId is success"
    );
    assert_eq!(
        refusal(&by_id["request-6"]).as_deref(),
        Some("No match on address expression (Configuration/Audio/Foo)")
    );
    // Command answers are not configuration refusals unless their status says so.
    assert_eq!(refusal(&by_id["request-1"]), None);
    assert_eq!(
        refusal(&by_id["request-3"]).as_deref(),
        Some("status ParameterError")
    );
}

/// A driver without configuration support needs no code: every key is unsupported.
struct Plain;

#[async_trait]
impl Driver for Plain {
    fn protocol(&self) -> &'static str {
        "PLAIN"
    }

    fn capabilities(&self) -> &'static [Capability] {
        &[Capability::Join]
    }

    async fn perform(&self, _: &Device, _: &Action) -> Result<(), DriverFailure> {
        Ok(())
    }

    async fn status(&self, _: &Device) -> Result<DeviceStatus, DriverFailure> {
        unreachable!()
    }
}

#[tokio::test]
async fn drivers_without_configuration_answer_every_key_unsupported() {
    let room = device("127.0.0.1", 1, PASSWORD);
    let read = Plain
        .read_configuration(&room, &[SettingKey::TimeZone, SettingKey::SystemName])
        .await
        .unwrap();
    assert_eq!(read.len(), 2);
    assert!(
        read.values()
            .all(|o| *o == SettingOutcome::Unsupported("PLAIN reads no configuration".into()))
    );
    let settings = TemplateSettings::from_json(&json!({"proximity.mode": "on"})).unwrap();
    let written = Plain.write_configuration(&room, &settings).await.unwrap();
    assert_eq!(
        written[&SettingKey::ProximityMode],
        SettingOutcome::Unsupported("PLAIN writes no configuration".into())
    );
}
