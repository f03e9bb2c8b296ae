//! What several driver test files build alike: a room to reach and the Cisco drivers as the
//! tests run them (plain HTTP, any SSH host key). Each test file uses what it needs.
#![allow(dead_code)]

use roomlink_device_emu::Emulator;
use roomlink_listener::driver::Device;
use roomlink_listener::driver::{SettingOutcome, SettingOutcomes};
use roomlink_listener::drivers::cisco_http::{CiscoHttpDriver, CiscoHttpSettings, Scheme};
use roomlink_listener::drivers::cisco_ssh::{CiscoSshDriver, CiscoSshSettings, HostKeyPolicy};
use roomlink_listener_protocol::wire::WireEndpoint;
use serde_json::{Value, json};
use std::time::Duration;
use zeroize::Zeroizing;

/// The room at `address:port`, logged in to as `admin` with `password`.
pub fn device(address: &str, port: u16, password: &str) -> Device {
    Device {
        endpoint: WireEndpoint::default(),
        address: address.into(),
        port: Some(port),
        username: Some("admin".into()),
        password: Some(Zeroizing::new(password.into())),
    }
}

pub fn http_driver() -> CiscoHttpDriver {
    CiscoHttpDriver::new(CiscoHttpSettings {
        scheme: Scheme::Http,
        ..CiscoHttpSettings::default()
    })
    .unwrap()
}

pub fn ssh_driver() -> CiscoSshDriver {
    CiscoSshDriver::new(CiscoSshSettings {
        host_keys: HostKeyPolicy::AcceptAny,
        legacy_algorithms: false,
        connect_timeout: Duration::from_secs(2),
        answer_timeout: Duration::from_secs(5),
    })
}

/// The outcomes as one JSON object: values as they are, other outcomes as their debug text.
pub fn values(outcomes: &SettingOutcomes) -> Value {
    let map: serde_json::Map<String, Value> = outcomes
        .iter()
        .map(|(k, o)| match o {
            SettingOutcome::Value(v) => (k.name().to_owned(), v.clone()),
            other => (k.name().to_owned(), json!(format!("{other:?}"))),
        })
        .collect();
    Value::Object(map)
}

/// The emulator's control surface view of the device (`GET /emu/devices/{address}`).
pub async fn view(emu: &Emulator, address: &str) -> Value {
    let url = format!("http://{}/emu/devices/{address}", emu.control_addr.unwrap());
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}
