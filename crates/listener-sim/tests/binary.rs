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

/// Redirected as the README does (`> sim.log &`), everything it logs lands in that file and
/// nothing on stderr: the terminal stays clean between curl outputs.
#[tokio::test]
async fn its_log_goes_to_stdout_with_the_listening_line() {
    let dir = std::env::temp_dir().join(format!("roomlink-sim-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (log, errors) = (dir.join("sim.log"), dir.join("sim.err"));
    let child = Command::new(BIN)
        .args(["--bind", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(&errors).unwrap())
        .spawn()
        .expect("the simulator binary starts");
    let running = Running(child);
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    let wait_for = |needle: &str| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let text = read();
            if text.contains(needle) {
                return text;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {needle:?} in {text:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let text = wait_for("listening on http://");
    assert!(
        text.starts_with("listening on http://"),
        "the first line: {text:?}"
    );
    let base = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("listening on "))
        .unwrap()
        .to_owned();

    let set = reqwest::Client::new()
        .put(format!("{base}/sim/endpoints/127.77.9.9/fault"))
        .json(&serde_json::json!({"fault": "bad_credentials"}))
        .send()
        .await
        .unwrap();
    assert!(set.status().is_success());
    let text = wait_for("fault set");
    assert!(text.contains("listener simulator started"), "{text}");
    drop(running);
    let stderr = std::fs::read_to_string(&errors).unwrap();
    assert!(stderr.is_empty(), "nothing on stderr: {stderr:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
