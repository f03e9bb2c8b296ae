//! `readconfiguration` and `writeconfiguration` (listener 3.4.0) through the listener's own
//! route, over loopback against the emulated Cisco codec: the whole catalog read, settings
//! written and seen held by the codec, a value outside its space refused before anything is
//! sent, Mesh answering every key unsupported, the secret checked first.
#![allow(clippy::unwrap_used)]

use roomlink_device_emu::cisco_config;
use roomlink_device_emu::device::DeviceDefaults;
use roomlink_device_emu::{EmuConfig, Emulator};
use roomlink_domain::template::SettingKey;
use roomlink_listener::settings::Settings;
use roomlink_listener::startup;
use roomlink_listener_protocol::secrets::SharedSecret;
use serde_json::{Value, json};
use std::time::Duration;

const PASSWORD: &str = "codec-Secret-344";
const SECRET: &str = "a-listener-secret-for-configuration";
const ADDRESS: &str = "127.77.70.1";

async fn emulator() -> Emulator {
    roomlink_device_emu::start(EmuConfig {
        first_host: [127, 77, 70, 1].into(),
        count: 1,
        defaults: DeviceDefaults {
            username: "admin".into(),
            password: PASSWORD.into(),
            connect_after: Duration::ZERO,
        },
        cisco_http: Some(0),
        cisco_basic_rate_limit: false,
        ..EmuConfig::default()
    })
    .await
    .unwrap()
}

/// The listener's base URL (inbound HTTP, plain HTTP toward the codec).
async fn listener() -> String {
    let mut settings = Settings::default();
    settings.server.bind = "127.0.0.1:0".into();
    settings.tandberg_http.scheme = "http".into();
    let drivers = startup::drivers(&settings).unwrap();
    let listener = startup::start(
        settings,
        Some(SharedSecret::new(SECRET)),
        None,
        drivers,
        false,
    )
    .await
    .unwrap();
    format!("http://{}", listener.addr)
}

fn body(protocol: &str, port: u16, params: Value) -> Value {
    json!({
        "endpoint": {"id": "e1", "name": "Boardroom", "ipAddress": ADDRESS, "port": port,
            "controlProtocol": protocol, "username": "admin",
            "meshBaseUri": "http://127.77.70.1:9/mesh/"},
        "credential": {"kind": "plain", "password": PASSWORD},
        "params": params,
    })
}

async fn post(base: &str, command: &str, secret: &str, body: &Value) -> (u16, Value) {
    let answer = reqwest::Client::new()
        .post(format!("{base}/v1/commands/{command}"))
        .bearer_auth(secret)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap())
}

#[tokio::test]
async fn the_listener_reads_and_writes_template_settings_of_a_cisco_room() {
    let emu = emulator().await;
    let port = emu.ports.cisco_http.unwrap();
    let base = listener().await;

    let (status, read) = post(
        &base,
        "readconfiguration",
        SECRET,
        &body("TANDBERG_HTTP", port, json!({})),
    )
    .await;
    assert_eq!(status, 200, "{read}");
    let read = read["configuration"].as_object().unwrap().clone();
    let names: Vec<&str> = read.keys().map(String::as_str).collect();
    let mut catalog: Vec<&str> = SettingKey::ALL.iter().map(|k| k.name()).collect();
    catalog.sort_unstable();
    assert_eq!(names, catalog, "every key when none are named");
    assert_eq!(read["time_zone"], json!({"value": "Etc/UTC"}));
    assert_eq!(read["proximity.mode"], json!({"value": "on"}));

    let write = json!({"settings": {"time_zone": "europe/oslo", "audio.default_volume": 35,
        "welcome.message": "Welcome to the boardroom"}});
    let (status, written) = post(
        &base,
        "writeconfiguration",
        SECRET,
        &body("TANDBERG_HTTP", port, write),
    )
    .await;
    assert_eq!(status, 200, "{written}");
    assert_eq!(
        written,
        json!({"configuration": {
            "audio.default_volume": {"value": 35},
            "time_zone": {"value": "Europe/Oslo"},
            "welcome.message": {"value": "Welcome to the boardroom"},
        }})
    );
    let held = cisco_config::view(&emu.devices.get(ADDRESS));
    assert_eq!(held["Time Zone"], "Europe/Oslo");
    assert_eq!(held["Audio DefaultVolume"], "35");
    assert_eq!(
        held["UserInterface OSD HalfwakeMessage"],
        "Welcome to the boardroom"
    );
    let (_, read) = post(
        &base,
        "readconfiguration",
        SECRET,
        &body("TANDBERG_HTTP", port, json!({"keys": ["time_zone"]})),
    )
    .await;
    assert_eq!(
        read,
        json!({"configuration": {"time_zone": {"value": "Europe/Oslo"}}})
    );
    emu.stop();
}

#[tokio::test]
async fn a_value_outside_its_space_is_refused_before_the_codec_is_asked() {
    let emu = emulator().await;
    let port = emu.ports.cisco_http.unwrap();
    let base = listener().await;
    let requests_before = emu.devices.get(ADDRESS).commands;

    let write = json!({"settings": {"time_zone": "Europe/Oslo", "audio.default_volume": 150}});
    let (status, refusal) = post(
        &base,
        "writeconfiguration",
        SECRET,
        &body("TANDBERG_HTTP", port, write),
    )
    .await;
    assert_eq!(status, 400, "{refusal}");
    assert_eq!(refusal["failure"], "bad_request");
    assert_eq!(
        refusal["message"],
        "params.settings.audio.default_volume: 150 is not a whole number from 0 to 100"
    );
    let (status, refusal) = post(
        &base,
        "readconfiguration",
        SECRET,
        &body("TANDBERG_HTTP", port, json!({"keys": ["timezone"]})),
    )
    .await;
    assert_eq!(status, 400, "{refusal}");
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .starts_with("params.keys: 'timezone' is not a template setting")
    );
    // Neither request reached the codec: it holds its defaults and counted nothing.
    assert_eq!(emu.devices.get(ADDRESS).commands, requests_before);
    assert!(emu.devices.get(ADDRESS).configuration.is_empty());
    emu.stop();
}

#[tokio::test]
async fn mesh_answers_every_key_unsupported_and_the_secret_comes_first() {
    let base = listener().await;
    let (status, read) = post(
        &base,
        "readconfiguration",
        SECRET,
        &body("MESH", 9, json!({"keys": ["time_zone", "system.name"]})),
    )
    .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(
        read,
        json!({"configuration": {
            "system.name": {"unsupported": "MESH reads no configuration"},
            "time_zone": {"unsupported": "MESH reads no configuration"},
        }})
    );
    let (status, refusal) = post(
        &base,
        "writeconfiguration",
        "not-the-secret",
        &body("MESH", 9, json!({"settings": {"time_zone": "Etc/UTC"}})),
    )
    .await;
    assert_eq!(status, 401, "{refusal}");
}
