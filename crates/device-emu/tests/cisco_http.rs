//! The emulated codec's HTTP(S) XML API and the control surface, over real sockets on loopback.
#![allow(clippy::unwrap_used)]

use roomlink_device_emu::device::{DeviceDefaults, Fault};
use roomlink_device_emu::{EmuConfig, Emulator, start};
use std::time::Duration;

async fn emulator(first: [u8; 4], count: u32) -> Emulator {
    start(EmuConfig {
        first_host: first.into(),
        count,
        defaults: DeviceDefaults {
            username: "admin".into(),
            password: "room-pw".into(),
            connect_after: Duration::ZERO,
        },
        cisco_http: Some(0),
        cisco_https: Some(0),
        control: Some(0),
        ..EmuConfig::default()
    })
    .await
    .unwrap()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

#[tokio::test]
async fn sessions_commands_and_status_over_http() {
    let emu = emulator([127, 77, 10, 1], 2).await;
    let base = format!("http://127.77.10.2:{}", emu.ports.cisco_http.unwrap());
    let http = client();

    let refused = http.post(format!("{base}/putxml")).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["www-authenticate"],
        "Basic realm=\"Cisco Codec\""
    );
    let wrong = http
        .post(format!("{base}/xmlapi/session/begin"))
        .basic_auth("admin", Some("nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);

    let begun = http
        .post(format!("{base}/xmlapi/session/begin"))
        .basic_auth("admin", Some("room-pw"))
        .send()
        .await
        .unwrap();
    assert_eq!(begun.status(), 204);
    let cookie = begun.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.starts_with("SessionId=") && cookie.contains("HttpOnly"));
    let cookie = cookie.split(';').next().unwrap().to_owned();

    let dial = http
        .post(format!("{base}/putxml"))
        .header("Cookie", &cookie)
        .header("Content-Type", "text/xml")
        .body("<Command><Dial command=\"True\"><Number>1234.5@bridge.example</Number><Protocol>Sip</Protocol></Dial></Command>")
        .send()
        .await
        .unwrap();
    assert_eq!(dial.status(), 200);
    assert_eq!(
        dial.text().await.unwrap(),
        "<?xml version=\"1.0\"?>\n<Command><DialResult status=\"OK\"><CallId>1</CallId><ConferenceId>1</ConferenceId></DialResult></Command>\n"
    );
    let status = http
        .get(format!("{base}/getxml?location=%2FStatus%2FCall"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        status.starts_with(
            "<?xml version=\"1.0\"?>\n<Status product=\"Cisco Codec\" version=\"ce9.15"
        )
    );
    assert!(status.contains("<Status>Connected</Status>"), "{status}");

    let device = emu.devices.get("127.77.10.2");
    assert_eq!(device.last_dialed.as_deref(), Some("1234.5@bridge.example"));
    assert_eq!(
        emu.devices.get("127.77.10.1").dial_count,
        0,
        "the other address is another device"
    );

    let end = http
        .post(format!("{base}/xmlapi/session/end"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(end.status(), 204);
    let after = http
        .get(format!(
            "{base}/getxml?location=/Status/Audio/Microphones/Mute"
        ))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 401, "an ended session is gone");
}

#[tokio::test]
async fn https_serves_the_fingerprinted_certificate() {
    let emu = emulator([127, 77, 11, 1], 1).await;
    let fingerprint = emu.tls_fingerprint.clone().unwrap();
    assert_eq!(fingerprint.len(), 95);
    let url = format!(
        "https://127.77.11.1:{}/getxml?location=/Status/SystemUnit/Software/Version",
        emu.ports.cisco_https.unwrap()
    );
    let answer = client()
        .get(&url)
        .basic_auth("admin", Some("room-pw"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        answer.contains("<Version>ce9.15.17.4.4c8b7f1a3e2</Version>"),
        "{answer}"
    );
    let strict = reqwest::Client::builder().build().unwrap();
    assert!(
        strict.get(&url).send().await.is_err(),
        "self-signed: not trusted"
    );
    assert!(emu.listening_lines().iter().any(|l| {
        l.starts_with("cisco-https listening on 127.77.11.1:") && l.ends_with(&fingerprint)
    }));
}

#[tokio::test]
async fn faults_change_the_answers() {
    let emu = emulator([127, 77, 12, 1], 1).await;
    let base = format!("http://127.77.12.1:{}", emu.ports.cisco_http.unwrap());
    let http = client();
    let put = |body: &'static str| {
        http.post(format!("{base}/putxml"))
            .basic_auth("admin", Some("room-pw"))
            .body(body)
            .send()
    };

    emu.devices
        .with("127.77.12.1", |d| d.faults.insert(Fault::RateLimit));
    assert_eq!(put("<Command/>").await.unwrap().status(), 503);

    emu.devices.with("127.77.12.1", |d| {
        d.faults.clear();
        d.faults.insert(Fault::DropConnection);
    });
    let dropped = put("<Command><Audio><Microphones><Mute/></Microphones></Audio></Command>").await;
    assert!(dropped.is_err(), "no answer: {dropped:?}");
    assert!(!emu.devices.get("127.77.12.1").microphone_muted);

    emu.devices.with("127.77.12.1", |d| {
        d.faults.clear();
        d.faults.insert(Fault::TcFirmware);
    });
    let begin = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{base}/xmlapi/session/begin"))
        .basic_auth("admin", Some("room-pw"))
        .send()
        .await
        .unwrap();
    assert_eq!(begin.status(), 302);
    assert_eq!(begin.headers()["location"], "/login.html");

    emu.devices.with("127.77.12.1", |d| {
        d.faults.clear();
        d.faults.insert(Fault::BadCredentials);
    });
    assert_eq!(put("<Command/>").await.unwrap().status(), 401);

    let bad = http
        .post(format!("{base}/putxml"))
        .basic_auth("admin", Some("room-pw"))
        .body("<Command><Dial>")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401, "credentials are checked before the body");
}

#[tokio::test]
async fn the_control_surface_sets_faults_and_credentials() {
    let emu = emulator([127, 77, 13, 1], 3).await;
    let control = format!("http://{}", emu.control_addr.unwrap());
    let http = client();

    let all: serde_json::Value = http
        .get(format!("{control}/emu/devices"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(all.as_array().unwrap().len(), 3);

    let slow = http
        .put(format!("{control}/emu/devices/127.77.13.2/faults/slow"))
        .body("{\"ms\": 1234}")
        .send()
        .await
        .unwrap();
    assert_eq!(slow.status(), 200);
    let view: serde_json::Value = slow.json().await.unwrap();
    assert_eq!(view["slowMs"], 1234);
    assert_eq!(view["faults"], serde_json::json!(["slow"]));

    let unknown = http
        .put(format!("{control}/emu/devices/127.77.13.2/faults/gremlins"))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let body: serde_json::Value = unknown.json().await.unwrap();
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("integrator_role")
    );

    let bad = http
        .put(format!("{control}/emu/devices/127.77.13.2/faults/slow"))
        .body("{\"ms\": \"soon\"}")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);

    let cleared: serde_json::Value = http
        .delete(format!("{control}/emu/devices/127.77.13.2/faults"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cleared["faults"], serde_json::json!([]));

    let creds = http
        .put(format!("{control}/emu/devices/127.77.13.3/credentials"))
        .body("{\"username\": \"ops\", \"password\": \"new-secret\"}")
        .send()
        .await
        .unwrap();
    assert_eq!(creds.status(), 200);
    assert!(!creds.text().await.unwrap().contains("new-secret"));
    let base = format!("http://127.77.13.3:{}", emu.ports.cisco_http.unwrap());
    let ok = http
        .get(format!("{base}/getxml?location=/Status/Audio"))
        .basic_auth("ops", Some("new-secret"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);

    let not_ip = http
        .get(format!("{control}/emu/devices/room-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(not_ip.status(), 400);
}
