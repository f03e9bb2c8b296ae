//! The `roomlink-listener` binary as an operator runs it: `--check`, refusals with one line and
//! exit status 1, serving with the secret demanded, SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

const SECRET: &str = "listener-secret-0123456789";

fn listener() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_roomlink-listener"));
    // Only what the test sets: no ROOMLINK_LISTENER__ variables from the environment.
    for (key, _) in std::env::vars() {
        if key.starts_with("ROOMLINK_LISTENER") || key == "RUST_LOG" {
            command.env_remove(key);
        }
    }
    command
}

/// Kills the child when the test ends early (a failed assertion), so no listener outlives it.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn config(dir: &tempfile::TempDir, text: &str) -> std::path::PathBuf {
    let path = dir.path().join("listener.toml");
    std::fs::write(&path, text).expect("config file");
    path
}

#[test]
fn check_accepts_a_good_configuration_and_prints_no_secret() {
    let dir = tempfile::tempdir().expect("dir");
    let file = config(
        &dir,
        "[bridges.prod]\nhostname = \"bridge.example\"\nip_address = \"192.0.2.1\"\n",
    );
    let out = listener()
        .args([
            "--config",
            file.to_str().expect("path"),
            "--secret",
            SECRET,
            "--check",
        ])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("configuration ok"), "{stdout}");
    assert!(stdout.contains("bridges: prod"), "{stdout}");
    assert!(!stdout.contains(SECRET));
}

#[test]
fn refusals_exit_1_with_one_line_naming_the_problem() {
    let dir = tempfile::tempdir().expect("dir");
    // Flags, environment, what the one line must say.
    type Case<'a> = (Vec<String>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (vec![], vec![], "no listener secret"),
        (
            vec!["--secret".into(), "short".into()],
            vec![],
            "at least 16 characters",
        ),
        (
            vec!["--secret".into(), SECRET.into()],
            vec![("ROOMLINK_LISTENER__TANDBERG_HTTP__TLS", "sometimes")],
            "tandberg_http.tls",
        ),
        (
            vec![
                "--secret".into(),
                SECRET.into(),
                "--config".into(),
                config(&dir, "[commands]\ntimeuot_ms = 5\n")
                    .display()
                    .to_string(),
            ],
            vec![],
            "timeuot_ms",
        ),
        (
            vec![
                "--secret".into(),
                SECRET.into(),
                "--private-key".into(),
                "/nonexistent/key".into(),
            ],
            vec![],
            "private key",
        ),
    ];
    for (args, env, expected) in cases {
        let out = listener()
            .args(&args)
            .args(["--check"])
            .envs(env)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(!stderr.contains(SECRET));
    }
}

#[test]
fn serves_the_protocol_with_the_secret_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().expect("dir");
    let secret_file = dir.path().join("secret");
    std::fs::write(&secret_file, format!("{SECRET}\n")).expect("secret file");
    let mut running = Running(
        listener()
            .args(["--bind", "127.0.0.1:0", "--secret-file"])
            .arg(&secret_file)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starts"),
    );
    let child = &mut running.0;
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("first line");
    let base = first
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line: {first}"))
        .to_owned();
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    let refused = client
        .get(format!("{base}/v1/info"))
        .send()
        .expect("answers");
    assert_eq!(refused.status(), 401);
    let info = client
        .get(format!("{base}/v1/info"))
        .bearer_auth(SECRET)
        .send()
        .expect("answers");
    assert_eq!(info.status(), 200);
    assert_eq!(
        info.headers()["x-listener-version"],
        roomlink_listener::LISTENER_VERSION.to_string().as_str()
    );
    let body: serde_json::Value = info.json().expect("json");
    assert_eq!(body["protocol"], 1);
    let protocols = body["controlProtocols"]
        .as_array()
        .expect("protocols")
        .clone();
    for p in ["TANDBERG_HTTP", "TANDBERG_SSH", "POLYCOM_TELNET", "MESH"] {
        assert!(protocols.contains(&p.into()), "{p} in {protocols:?}");
    }

    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = child.wait().expect("exits");
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).expect("log");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("stderr");
    assert!(!rest.contains(SECRET) && !stderr.contains(SECRET));
}

#[test]
fn the_shipped_example_configuration_is_accepted() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy/systemd/roomlink-listener.toml");
    let out = listener()
        .arg("--config")
        .arg(&file)
        .args(["--secret", SECRET, "--check"])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("bridges: prod"), "{stdout}");
}
