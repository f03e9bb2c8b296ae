//! The `roomlink` binary as an operator runs it: admin commands, exit codes, serving,
//! graceful shutdown on SIGTERM, and logs that never hold a secret.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use crate::support::service::{roomlink, run_with_stdin, text};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Standard error without the log lines (JSON objects, such as the line naming the
/// database): what the command says about its failure.
fn reason_of(stderr: &[u8]) -> String {
    text(stderr)
        .lines()
        .filter(|l| !l.starts_with('{'))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn admin_commands_report_and_fail_with_one_line_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let first = run_with_stdin(roomlink(dir.path()).arg("migrate"), "");
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(text(&first.stdout).contains("applied"));
    let second = run_with_stdin(roomlink(dir.path()).arg("migrate"), "");
    assert!(second.status.success());
    assert!(
        text(&second.stdout).contains("up to date"),
        "running it twice changes nothing"
    );

    let created = run_with_stdin(
        roomlink(dir.path()).args([
            "admin",
            "enterprise",
            "create",
            "acme",
            "--endpoint-limit",
            "5",
        ]),
        "",
    );
    assert!(created.status.success(), "{}", text(&created.stderr));
    assert!(text(&created.stdout).contains("endpoint limit 5"));
    let key = dir.path().join("data/roomlink.key");
    assert!(
        key.exists(),
        "the sealing key is created beside the database"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let duplicate = run_with_stdin(
        roomlink(dir.path()).args(["admin", "enterprise", "create", "acme"]),
        "",
    );
    assert!(!duplicate.status.success());
    let reason = reason_of(&duplicate.stderr);
    assert_eq!(reason.lines().count(), 1, "{reason}");
    assert!(reason.contains("taken"), "{reason}");

    let user = |enterprise: &str, username: &str, stdin: &str| {
        run_with_stdin(
            roomlink(dir.path()).args([
                "admin",
                "user",
                "create",
                "--enterprise",
                enterprise,
                "--username",
                username,
                "--role",
                "ROLE_READWRITE",
                "--password-stdin",
            ]),
            stdin,
        )
    };
    let ok = user("acme", "ops", "a-long-password\n");
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert!(!text(&ok.stdout).contains("a-long-password"));
    for (enterprise, username, stdin, why) in [
        ("acme", "ops", "another-password\n", "taken"),
        ("nope", "ops2", "a-long-password\n", "no enterprise"),
        ("acme", "ops3", "short\n", "password"),
        ("acme", "ops4", "", "no password"),
    ] {
        let failed = user(enterprise, username, stdin);
        assert!(!failed.status.success(), "{why}");
        let reason = reason_of(&failed.stderr);
        assert_eq!(reason.lines().count(), 1, "{reason}");
        assert!(reason.contains(why), "{why}: {reason}");
    }
}

#[test]
fn bad_configuration_is_a_clear_startup_error() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = run_with_stdin(
        roomlink(dir.path())
            .env("ROOMLINK__DATABASE__URL", "mysql://x/y")
            .arg("migrate"),
        "",
    );
    assert!(!unknown.status.success());
    assert!(
        text(&unknown.stderr).contains("mysql"),
        "{}",
        text(&unknown.stderr)
    );

    let started = Instant::now();
    let unreachable = run_with_stdin(
        roomlink(dir.path())
            .env(
                "ROOMLINK__DATABASE__URL",
                "postgres://postgres:hunter2@127.0.0.1:1/nothing",
            )
            .env(
                "ROOMLINK__SECURITY__SERVICE_KEY",
                "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
            )
            .arg("migrate"),
        "",
    );
    assert!(!unreachable.status.success());
    let reason = text(&unreachable.stderr);
    assert!(
        !reason.contains("hunter2"),
        "the URL's password is not printed: {reason}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));

    let missing = run_with_stdin(
        roomlink(dir.path()).args(["--config", "no-such-file.toml", "migrate"]),
        "",
    );
    assert!(!missing.status.success());
    assert!(
        text(&missing.stderr).contains("no-such-file"),
        "{}",
        text(&missing.stderr)
    );

    let no_key = run_with_stdin(
        roomlink(dir.path())
            .env(
                "ROOMLINK__DATABASE__URL",
                "postgres://postgres@127.0.0.1:1/x",
            )
            .arg("serve"),
        "",
    );
    assert!(!no_key.status.success());
    assert!(
        text(&no_key.stderr).contains("service_key"),
        "{}",
        text(&no_key.stderr)
    );
}

/// Reads the child's stderr on a thread; the receiver gets every log line.
fn follow_log(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    let stderr = child.stderr.take().expect("stderr");
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// Waits for the JSON log line announcing the address; keeps the lines read in `log`.
fn listening_address(
    log_lines: &std::sync::mpsc::Receiver<String>,
    log: &mut Vec<String>,
) -> String {
    while let Ok(line) = log_lines.recv_timeout(Duration::from_secs(60)) {
        log.push(line.clone());
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&line)
            && json["fields"]["message"] == "roomlink is listening"
        {
            return json["fields"]["address"]
                .as_str()
                .expect("address")
                .to_owned();
        }
    }
    panic!("roomlink did not start: {log:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_until_sigterm_and_logs_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    assert!(
        run_with_stdin(
            roomlink(dir.path()).args([
                "admin",
                "enterprise",
                "create",
                "acme",
                "--create-database"
            ]),
            ""
        )
        .status
        .success()
    );
    let created = run_with_stdin(
        roomlink(dir.path()).args([
            "admin",
            "user",
            "create",
            "--enterprise",
            "acme",
            "--username",
            "ops",
            "--role",
            "ROLE_READWRITE",
            "--password-stdin",
        ]),
        "service-user-pw-123\n",
    );
    assert!(created.status.success());

    let mut child = roomlink(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log_lines = follow_log(&mut child);
    let mut log = Vec::new();
    let address = listening_address(&log_lines, &mut log);
    let base = format!("http://{address}");
    let client = reqwest::Client::new();

    let token: serde_json::Value = client
        .post(format!("{base}/api/auth/accesstokens"))
        .basic_auth("ops", Some("service-user-pw-123"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["accessToken"].as_str().unwrap().to_owned();
    let endpoint = client
        .post(format!("{base}/api/endpoints?accesstoken={token}"))
        .json(&serde_json::json!({"name": "Room", "password": "endpoint-pw-456"}))
        .send()
        .await
        .unwrap();
    assert_eq!(endpoint.status(), 200);
    let inspected = client
        .get(format!("{base}/api/auth/accesstokens/{token}"))
        .header("X-Access-Token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(inspected.status(), 200);
    let refused = client
        .get(format!("{base}/api/endpoints"))
        .basic_auth("ops", Some("wrong-pw-789"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);

    // SIGTERM: the service stops by itself, successfully.
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(40);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "roomlink did not stop after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    log.extend(log_lines.iter());
    let all = log.join("\n");

    assert!(all.contains("request completed"), "{all}");
    assert!(all.contains("request_id"), "{all}");
    assert!(
        all.contains("/api/auth/accesstokens/{token}"),
        "routes are logged by pattern"
    );
    for secret in [
        token.as_str(),
        "endpoint-pw-456",
        "service-user-pw-123",
        "wrong-pw-789",
        "Authorization",
        "authorization",
    ] {
        assert!(
            !all.contains(secret),
            "{secret} appears in the logs:\n{all}"
        );
    }
}
