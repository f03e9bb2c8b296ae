//! `readinventory` of the simulator's rooms (listener 3.3.0): gated by version, deterministic
//! per room, changed through the control surface, meeting the room's fault.
#![allow(clippy::unwrap_used)]

use roomlink_listener_sim::version::Version;
use roomlink_listener_sim::{SimConfig, start};
use serde_json::{Value, json};

fn body(address: &str, protocol: &str) -> Value {
    json!({
        "endpoint": {"id": "e1", "ipAddress": address, "controlProtocol": protocol,
            "username": "admin"},
        "credential": {"kind": "plain", "password": "room-pw"}
    })
}

async fn read(http: &reqwest::Client, base: &str, address: &str, protocol: &str) -> (u16, Value) {
    let answer = http
        .post(format!("{base}/v1/commands/readinventory"))
        .json(&body(address, protocol))
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.json().await.unwrap())
}

async fn sim(version: &str) -> (String, roomlink_listener_sim::SimHandle) {
    let (addr, handle) = start(
        "127.0.0.1:0",
        SimConfig {
            version: version.parse::<Version>().unwrap(),
            ..SimConfig::default()
        },
    )
    .await
    .unwrap();
    (format!("http://{addr}"), handle)
}

#[tokio::test]
async fn an_older_simulator_has_no_readinventory() {
    let (base, handle) = sim("3.2.0").await;
    let http = reqwest::Client::new();
    let (status, failure) = read(&http, &base, "127.77.41.1", "TANDBERG_HTTP").await;
    assert_eq!(status, 404);
    assert_eq!(failure["failure"], "no_such_command");
    let info: Value = http
        .get(format!("{base}/v1/info"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        !info["commands"]
            .as_array()
            .unwrap()
            .contains(&json!("readinventory"))
    );
    handle.stop().await;
}

#[tokio::test]
async fn rooms_answer_their_inventory_and_the_control_surface_changes_it() {
    let (base, handle) = sim("3.3.0").await;
    let http = reqwest::Client::new();
    let info: Value = http
        .get(format!("{base}/v1/info"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        info["commands"]
            .as_array()
            .unwrap()
            .contains(&json!("readinventory"))
    );

    let (status, first) = read(&http, &base, "127.77.41.1", "TANDBERG_SSH").await;
    assert_eq!(status, 200, "{first}");
    let inventory = &first["inventory"];
    assert_eq!(inventory["vendor"], "Cisco");
    assert_eq!(inventory["product"], "Cisco Webex Room Kit");
    assert_eq!(inventory["softwareVersion"], "ce9.15.17.4.4c8b7f1a3e2");
    assert_eq!(
        inventory["addresses"][0],
        json!({"kind": "ipv4", "value": "127.77.41.1"})
    );
    assert_eq!(
        inventory["addresses"][1],
        json!({"kind": "mac", "value": "02:00:7F:4D:29:01"})
    );
    assert_eq!(inventory["peripherals"][0]["kind"], "touchPanel");
    assert!(
        inventory["serialNumber"]
            .as_str()
            .unwrap()
            .starts_with("FOC")
    );
    let (_, again) = read(&http, &base, "127.77.41.1", "TANDBERG_SSH").await;
    assert_eq!(again, first, "the same room reads the same");

    let camera = inventory["peripherals"][1]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let control = format!("{base}/sim/endpoints/127.77.41.1");
    let lost = http
        .put(format!("{control}/peripherals/{camera}/disconnected"))
        .send()
        .await
        .unwrap();
    assert_eq!(lost.status(), 200);
    let set = http
        .put(format!("{control}/software"))
        .json(&json!({"version": "ce9.15.18.5.1a2b3c4d5e6", "releaseDate": "2024-06-12"}))
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 200);
    let (_, changed) = read(&http, &base, "127.77.41.1", "TANDBERG_SSH").await;
    let changed = &changed["inventory"];
    assert_eq!(changed["peripherals"][1]["connected"], false);
    assert_eq!(changed["peripherals"][0]["connected"], true);
    assert_eq!(changed["softwareVersion"], "ce9.15.18.5.1a2b3c4d5e6");
    assert_eq!(changed["softwareReleaseDate"], "2024-06-12");
    let refused = http
        .put(format!("{control}/peripherals/toaster/disconnected"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 404);
    let refused = http
        .put(format!("{control}/software"))
        .json(&json!({"version": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    http.delete(format!("{control}/peripherals/{camera}/disconnected"))
        .send()
        .await
        .unwrap();
    let (_, restored) = read(&http, &base, "127.77.41.1", "TANDBERG_SSH").await;
    assert_eq!(restored["inventory"]["peripherals"][1]["connected"], true);

    let (_, poly) = read(&http, &base, "127.77.41.2", "POLYCOM_TELNET").await;
    assert_eq!(poly["inventory"]["vendor"], "Poly");
    assert_eq!(
        poly["inventory"]["notReported"],
        json!(["model", "softwareReleaseDate", "uptimeSeconds"])
    );
    let (status, mesh) = read(&http, &base, "127.77.41.3", "MESH").await;
    assert_eq!(
        (status, mesh["failure"].as_str()),
        (404, Some("no_such_command"))
    );

    // The room's fault applies as to any command.
    http.put(format!("{base}/sim/endpoints/127.77.41.2/fault"))
        .json(&json!({"fault": "bad_credentials"}))
        .send()
        .await
        .unwrap();
    let (status, failure) = read(&http, &base, "127.77.41.2", "POLYCOM_TELNET").await;
    assert_eq!(
        (status, failure["failure"].as_str()),
        (502, Some("bad_credentials"))
    );
    assert!(!failure.to_string().contains("room-pw"));
    handle.stop().await;
}
