//! `readinventory` against the device emulator over real sockets: the Cisco HTTP, Cisco SSH and
//! Poly Telnet drivers read what the emulated room says about itself; the control surface's
//! changes (a peripheral lost, another software version) show in the next read; an Integrator
//! gets what it may read; the listener's route answers it, and 404 for Mesh.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use roomlink_device_emu::device::{DeviceDefaults, Fault};
use roomlink_device_emu::{EmuConfig, Emulator, inventory as emu};
use roomlink_listener::driver::{Driver, DriverFailure};
use roomlink_listener::drivers::poly_telnet::{PolyTelnetDriver, PolyTelnetSettings};
use roomlink_listener::settings::Settings;
use roomlink_listener::startup;
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::secrets::SharedSecret;
use roomlink_listener_protocol::wire::WireInventory;
use serde_json::{Value, json};
use std::time::Duration;

use support::{device, http_driver, ssh_driver};

const PASSWORD: &str = "codec-Secret-60";
const SECRET: &str = "a-listener-secret-for-inventory";

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
        cisco_basic_rate_limit: false,
        cisco_ssh: Some(0),
        poly_telnet: Some(0),
        control: Some(0),
        ..EmuConfig::default()
    })
    .await
    .expect("emulator starts")
}

fn poly_driver() -> PolyTelnetDriver {
    PolyTelnetDriver::new(PolyTelnetSettings {
        connect_timeout: Duration::from_secs(2),
        answer_timeout: Duration::from_secs(5),
    })
}

/// A control-surface request that must succeed.
async fn control(emu: &Emulator, method: reqwest::Method, path: &str, body: Option<Value>) {
    let url = format!("http://{}{path}", emu.control_addr.unwrap());
    let mut request = reqwest::Client::new().request(method, url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let answer = request.send().await.unwrap();
    assert_eq!(
        answer.status(),
        200,
        "{path}: {}",
        answer.text().await.unwrap()
    );
}

fn addresses(inventory: &WireInventory) -> Vec<(String, String)> {
    inventory
        .addresses
        .iter()
        .map(|a| (a.kind.clone(), a.value.clone()))
        .collect()
}

fn peripherals(inventory: &WireInventory) -> Vec<(String, String, bool)> {
    inventory
        .peripherals
        .iter()
        .map(|p| {
            (
                p.kind.clone(),
                p.id.clone().unwrap_or_default(),
                p.connected,
            )
        })
        .collect()
}

/// What every read of the emulated CE codec at `address` shows, before any change.
fn assert_emulated_codec(inventory: &WireInventory, address: &str) {
    assert_eq!(inventory.vendor.as_deref(), Some("Cisco"));
    assert_eq!(inventory.product.as_deref(), Some("Cisco Webex Room Kit"));
    assert_eq!(inventory.model.as_deref(), Some("Room Kit"));
    assert_eq!(
        inventory.serial_number.as_deref(),
        Some(emu::cisco_serial(address, 0).as_str())
    );
    assert_eq!(
        inventory.software_version.as_deref(),
        Some("ce9.15.17.4.4c8b7f1a3e2")
    );
    assert_eq!(
        inventory.software_release_date.as_deref(),
        Some("2024-02-29")
    );
    assert!(inventory.uptime_seconds.is_some());
    assert_eq!(
        addresses(inventory),
        [
            ("ipv4".to_owned(), address.to_owned()),
            ("mac".to_owned(), emu::mac(address)),
        ]
    );
    let expected: Vec<(String, String, bool)> = emu::cisco_peripherals(address)
        .into_iter()
        .zip(["touchPanel", "camera", "microphone"])
        .map(|(p, kind)| (kind.to_owned(), p.id, true))
        .collect();
    assert_eq!(peripherals(inventory), expected);
    assert_eq!(
        inventory.peripherals[0].name.as_deref(),
        Some("Cisco TelePresence Touch")
    );
    assert!(
        inventory.not_reported.is_empty(),
        "{:?}",
        inventory.not_reported
    );
}

fn no_secret(failure: &DriverFailure) {
    assert!(!format!("{failure:?}").contains(PASSWORD), "{failure:?}");
}

#[tokio::test]
async fn cisco_http_reads_the_codec_and_follows_the_control_surface() {
    let emu = emulator([127, 77, 60, 1]).await;
    let address = "127.77.60.1";
    let room = device(address, emu.ports.cisco_http.unwrap(), PASSWORD);
    let driver = http_driver();
    assert_emulated_codec(&driver.inventory(&room).await.unwrap(), address);

    let camera = emu::cisco_peripherals(address)[1].id.clone();
    let base = format!("/emu/devices/{address}");
    control(
        &emu,
        reqwest::Method::PUT,
        &format!("{base}/peripherals/{camera}/disconnected"),
        None,
    )
    .await;
    let software = json!({"version": "ce9.15.18.5.1a2b3c4d5e6", "releaseDate": "2024-06-12"});
    control(
        &emu,
        reqwest::Method::PUT,
        &format!("{base}/software"),
        Some(software),
    )
    .await;
    let changed = driver.inventory(&room).await.unwrap();
    assert_eq!(
        changed.software_version.as_deref(),
        Some("ce9.15.18.5.1a2b3c4d5e6")
    );
    assert_eq!(changed.software_release_date.as_deref(), Some("2024-06-12"));
    let states: Vec<bool> = changed.peripherals.iter().map(|p| p.connected).collect();
    assert_eq!(states, [true, false, true], "{:?}", changed.peripherals);

    // An Integrator may not read the network: the rest is still read.
    emu.devices
        .with(address, |d| d.faults.insert(Fault::IntegratorRole));
    let partial = driver.inventory(&room).await.unwrap();
    assert_eq!(partial.not_reported, ["addresses"]);
    assert!(partial.addresses.is_empty());
    assert_eq!(partial.peripherals.len(), 3);
    assert!(partial.serial_number.is_some());

    emu.devices
        .with(address, |d| d.faults.insert(Fault::BadCredentials));
    let refused = http_driver().inventory(&room).await.unwrap_err();
    assert_eq!(refused.kind, FailureKind::BadCredentials);
    no_secret(&refused);
}

#[tokio::test]
async fn cisco_ssh_reads_the_same_tree_through_xstatus() {
    let emu = emulator([127, 77, 61, 1]).await;
    let address = "127.77.61.1";
    let room = device(address, emu.ports.cisco_ssh.unwrap(), PASSWORD);
    let driver = ssh_driver();
    assert_emulated_codec(&driver.inventory(&room).await.unwrap(), address);

    let microphone = emu::cisco_peripherals(address)[2].id.clone();
    control(
        &emu,
        reqwest::Method::PUT,
        &format!("/emu/devices/{address}/peripherals/{microphone}/disconnected"),
        None,
    )
    .await;
    emu.devices
        .with(address, |d| d.faults.insert(Fault::IntegratorRole));
    let changed = driver.inventory(&room).await.unwrap();
    assert_eq!(changed.not_reported, ["addresses"]);
    let states: Vec<bool> = changed.peripherals.iter().map(|p| p.connected).collect();
    assert_eq!(states, [true, true, false]);

    let refused = ssh_driver()
        .inventory(&device(
            address,
            emu.ports.cisco_ssh.unwrap(),
            "wrong-password",
        ))
        .await
        .unwrap_err();
    assert_eq!(refused.kind, FailureKind::BadCredentials);
    assert!(!format!("{refused:?}").contains("wrong-password"));
}

#[tokio::test]
async fn poly_telnet_reads_whoami_and_status() {
    let emu = emulator([127, 77, 62, 1]).await;
    let address = "127.77.62.1";
    let room = device(address, emu.ports.poly_telnet.unwrap(), PASSWORD);
    let driver = poly_driver();
    let inventory = driver.inventory(&room).await.unwrap();
    assert_eq!(inventory.vendor.as_deref(), Some("Poly"));
    assert_eq!(inventory.product.as_deref(), Some("Group 500"));
    assert_eq!(
        inventory.serial_number.as_deref(),
        Some(emu::poly_serial(address).as_str())
    );
    assert_eq!(
        inventory.software_version.as_deref(),
        Some("6.2.2.4-520003")
    );
    assert_eq!(
        addresses(&inventory),
        [
            ("ipv4".to_owned(), address.to_owned()),
            ("mac".to_owned(), emu::mac(address).to_ascii_lowercase()),
        ]
    );
    let all_online: Vec<(String, String, bool)> = [
        ("other", "remotecontrol"),
        ("microphone", "microphones"),
        ("camera", "camera"),
    ]
    .iter()
    .map(|(kind, id)| ((*kind).to_owned(), (*id).to_owned(), true))
    .collect();
    assert_eq!(peripherals(&inventory), all_online);
    assert_eq!(
        inventory.not_reported,
        ["model", "softwareReleaseDate", "uptimeSeconds"]
    );

    let base = format!("/emu/devices/{address}");
    control(
        &emu,
        reqwest::Method::PUT,
        &format!("{base}/peripherals/camera/disconnected"),
        None,
    )
    .await;
    let software = json!({"version": "6.2.2.5-530001"});
    control(
        &emu,
        reqwest::Method::PUT,
        &format!("{base}/software"),
        Some(software),
    )
    .await;
    let changed = driver.inventory(&room).await.unwrap();
    assert_eq!(changed.software_version.as_deref(), Some("6.2.2.5-530001"));
    let camera = changed
        .peripherals
        .iter()
        .find(|p| p.kind == "camera")
        .unwrap();
    assert!(!camera.connected);

    emu.devices
        .with(address, |d| d.faults.insert(Fault::BadCredentials));
    let refused = driver.inventory(&room).await.unwrap_err();
    assert_eq!(refused.kind, FailureKind::BadCredentials);
    no_secret(&refused);
}

fn command(address: &str, protocol: &str, port: u16, password: &str) -> Value {
    json!({
        "endpoint": {"id": "e1", "name": "Boardroom", "ipAddress": address, "port": port,
            "controlProtocol": protocol, "username": "admin",
            "meshBaseUri": "http://127.77.63.1:9/mesh/"},
        "credential": {"kind": "plain", "password": password}
    })
}

#[tokio::test]
async fn the_listener_answers_readinventory_and_404_for_mesh() {
    let emu = emulator([127, 77, 63, 1]).await;
    let address = "127.77.63.1";
    let port = emu.ports.cisco_http.unwrap();
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
    let base = format!("http://{}", listener.addr);
    let http = reqwest::Client::new();
    let post = |body: Value| {
        http.post(format!("{base}/v1/commands/readinventory"))
            .bearer_auth(SECRET)
            .json(&body)
            .send()
    };

    let info: Value = http
        .get(format!("{base}/v1/info"))
        .bearer_auth(SECRET)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(info["version"], "3.5.0");
    assert!(
        info["commands"]
            .as_array()
            .unwrap()
            .contains(&json!("readinventory"))
    );

    let answer = post(command(address, "TANDBERG_HTTP", port, PASSWORD))
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let body: Value = answer.json().await.unwrap();
    println!("{}", serde_json::to_string_pretty(&body).unwrap());
    let inventory: WireInventory = serde_json::from_value(body["inventory"].clone()).unwrap();
    assert_emulated_codec(&inventory, address);

    let answer = post(command(address, "MESH", port, PASSWORD))
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
    let failure: Value = answer.json().await.unwrap();
    assert_eq!(failure["failure"], "no_such_command");

    // The codec refuses the account (its session too).
    emu.devices
        .with(address, |d| d.faults.insert(Fault::BadCredentials));
    let answer = post(command(address, "TANDBERG_HTTP", port, PASSWORD))
        .await
        .unwrap();
    assert_eq!(answer.status(), 502);
    let text = answer.text().await.unwrap();
    let failure: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(failure["failure"], "bad_credentials");
    assert!(
        !text.contains("not-the-password") && !text.contains(PASSWORD),
        "{text}"
    );
    listener.stop(false).await;
}
