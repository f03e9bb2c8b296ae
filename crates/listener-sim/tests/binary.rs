//! The real `roomlink-listener-sim` binary: flags, the printed address, `/v1/info`.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_roomlink-listener-sim");

/// Kills the simulator even when an assertion fails first.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_binary_serves_info_on_the_port_it_prints() {
    let child = Command::new(BIN)
        .args([
            "--bind",
            "127.0.0.1:0",
            "--version",
            "2.3.4",
            "--secret",
            "bin-test-secret",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the simulator binary starts");
    let mut running = Running(child);
    let stdout = running.0.stdout.take().expect("stdout is piped");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_owned();

    let http = reqwest::Client::new();
    let info = http
        .get(format!("{base}/v1/info"))
        .bearer_auth("bin-test-secret")
        .send()
        .await
        .unwrap();
    assert_eq!(info.status(), 200);
    assert_eq!(info.headers()["x-listener-version"], "2.3.4");
    let body: serde_json::Value = info.json().await.unwrap();
    assert_eq!(body["version"], "2.3.4");
    assert_eq!(body["protocol"], 1);
    assert_eq!(
        body["commands"],
        serde_json::json!([
            "join",
            "hangup",
            "senddtmf",
            "mutemicrophone",
            "unmutemicrophone"
        ])
    );

    let refused = http
        .get(format!("{base}/v1/info"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["failure"], "unauthorized");
    drop(running);
}

#[test]
fn bad_flags_exit_non_zero_with_a_reason() {
    let bad_version = Command::new(BIN)
        .args(["--bind", "127.0.0.1:0", "--version", "two"])
        .output()
        .unwrap();
    assert!(!bad_version.status.success());
    assert!(String::from_utf8_lossy(&bad_version.stderr).contains("X.Y.Z"));

    let missing_key = Command::new(BIN)
        .args([
            "--bind",
            "127.0.0.1:0",
            "--private-key",
            "/nonexistent/listener.key",
        ])
        .output()
        .unwrap();
    assert!(!missing_key.status.success());
    let reason = String::from_utf8_lossy(&missing_key.stderr);
    assert!(reason.contains("private key"), "{reason}");
}
