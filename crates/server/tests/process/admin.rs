//! `roomlink admin` as an operator runs it: the real binary, a real SQLite file, and the HTTP
//! API of a served instance to prove what disable, enable and set-password do to sign-in.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use crate::support::service::{roomlink, run_with_stdin, text};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

fn run(dir: &Path, args: &[&str], stdin: &str) -> Output {
    run_with_stdin(roomlink(dir).args(args), stdin)
}

/// Runs and expects success; returns stdout.
fn ok(dir: &Path, args: &[&str], stdin: &str) -> String {
    let out = run(dir, args, stdin);
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs and expects exit code `code` with a one-line reason containing `why`.
fn refused(dir: &Path, args: &[&str], stdin: &str, code: i32, why: &str) {
    let out = run(dir, args, stdin);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        text(&out.stderr)
    );
    let reason = text(&out.stderr);
    let last = reason.trim().lines().last().unwrap_or_default();
    assert!(last.starts_with("roomlink: "), "{reason}");
    assert!(last.contains(why), "{why}: {reason}");
}

#[test]
fn admin_from_the_wrong_directory_is_refused_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = dir.path().join("data/roomlink.db");
    for args in [
        &["admin", "user", "list"][..],
        &["admin", "enterprise", "list"],
        &["admin", "enterprise", "show", "acme"],
        &[
            "admin",
            "user",
            "disable",
            "--enterprise",
            "acme",
            "--username",
            "ops",
        ],
    ] {
        refused(dir.path(), args, "", 1, &wrong.display().to_string());
    }
    refused(
        dir.path(),
        &[
            "admin",
            "user",
            "create",
            "--enterprise",
            "acme",
            "--username",
            "ops",
            "--role",
            "ROLE_READONLY",
            "--password-stdin",
        ],
        "a-long-password\n",
        1,
        "ROOMLINK__DATABASE__URL",
    );
    assert!(
        !dir.path().join("data").exists(),
        "no database, no key file"
    );

    // Not even the first enterprise creates a database unless asked.
    refused(
        dir.path(),
        &["admin", "enterprise", "create", "acme"],
        "",
        1,
        "--create-database",
    );
    assert!(!dir.path().join("data").exists(), "nothing created");

    // Asked, it creates the database, and says so.
    let created = run(
        dir.path(),
        &["admin", "enterprise", "create", "acme", "--create-database"],
        "",
    );
    assert!(created.status.success(), "{}", text(&created.stderr));
    let log = text(&created.stderr);
    assert!(
        log.contains(&format!(
            "creating new SQLite database at {}",
            wrong.display()
        )),
        "{log}"
    );
    assert!(log.contains("database: SQLite at"), "{log}");
}

#[test]
fn role_help_offers_exactly_the_accepted_roles() {
    let dir = tempfile::tempdir().unwrap();
    let help = ok(dir.path(), &["admin", "user", "create", "--help"], "");
    assert!(help.contains("ROLE_READWRITE") && help.contains("ROLE_READONLY"));
    assert!(!help.contains("ROLE_PAIRINGCODE"), "{help}");
    let out = run(
        dir.path(),
        &[
            "admin",
            "user",
            "create",
            "--enterprise",
            "a",
            "--username",
            "u",
            "--role",
            "ROLE_PAIRINGCODE",
            "--password-stdin",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let reason = text(&out.stderr);
    assert!(
        reason.contains("[possible values: ROLE_READWRITE, ROLE_READONLY]"),
        "{reason}"
    );
    for args in [
        &["admin", "--help"][..],
        &["admin", "user", "disable", "--help"],
    ] {
        let help = ok(dir.path(), args, "");
        for line in help
            .lines()
            .filter(|l| l.trim_start().starts_with(['e', 'u', '-']))
        {
            // Every command and flag line carries a description after its name.
            assert!(
                line.trim().contains("  "),
                "no description: {line:?} in\n{help}"
            );
        }
    }
}

/// A served instance on the test's database; killed when dropped.
struct Served(std::process::Child, String);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(dir: &Path) -> Served {
    let child = roomlink(dir)
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Owned by `Served` at once: killed and waited for on every path, panics included.
    let mut served = Served(child, String::new());
    let stderr = served.0.stderr.take().unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            // Keeps reading after the test stops listening: a closed pipe would stop the log.
            let _ = send.send(line);
        }
    });
    let mut seen = vec![];
    while let Ok(line) = receive.recv_timeout(Duration::from_secs(60)) {
        seen.push(line.clone());
        let json: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if json["fields"]["message"] == "roomlink is listening" {
            let log = seen.join("\n");
            for adapter in [
                "database: SQLite at",
                "platform identity: none",
                "listener client: command timeout 10000 ms",
                "abuse limits:",
            ] {
                assert!(log.contains(adapter), "{adapter} missing from\n{log}");
            }
            let address = json["fields"]["address"].as_str().unwrap();
            served.1 = format!("http://{address}");
            return served;
        }
    }
    panic!("roomlink did not start: {seen:?}");
}

/// The status and errorName of a Basic-authenticated token request.
async fn sign_in(base: &str, user: &str, password: &str) -> (u16, serde_json::Value) {
    let response = reqwest::Client::new()
        .post(format!("{base}/api/auth/accesstokens"))
        .basic_auth(user, Some(password))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn with_token(base: &str, token: &str) -> u16 {
    reqwest::Client::new()
        .get(format!("{base}/api/endpoints"))
        .header("X-Access-Token", token)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_commands_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["migrate"], "");
    ok(
        d,
        &[
            "admin",
            "enterprise",
            "create",
            "acme",
            "--endpoint-limit",
            "5",
        ],
        "",
    );
    ok(d, &["admin", "enterprise", "create", "beta"], "");
    let user = ["--enterprise", "acme", "--username", "ops"];
    let create = [
        &["admin", "user", "create"][..],
        &user,
        &["--role", "ROLE_READWRITE", "--password-stdin"],
    ]
    .concat();
    ok(d, &create, "first-password\n");

    let listed: serde_json::Value =
        serde_json::from_str(&ok(d, &["admin", "enterprise", "list", "--json"], "")).unwrap();
    assert_eq!(listed[0]["name"], "acme");
    assert_eq!(listed[0]["endpointLimit"], 5);
    assert_eq!(listed[0]["usage"]["users"], 1);
    assert_eq!(listed[1]["name"], "beta");
    ok(d, &["admin", "enterprise", "set-limit", "acme", "7"], "");
    let shown: serde_json::Value = serde_json::from_str(&ok(
        d,
        &["admin", "enterprise", "show", "acme", "--json"],
        "",
    ))
    .unwrap();
    assert_eq!(shown["endpointLimit"], 7);
    refused(
        d,
        &["admin", "enterprise", "show", "nope"],
        "",
        1,
        "no enterprise named 'nope'",
    );
    let users: serde_json::Value =
        serde_json::from_str(&ok(d, &["admin", "user", "list", "--json"], "")).unwrap();
    assert_eq!(
        users,
        serde_json::json!([{"enterprise": "acme", "username": "ops", "role": "ROLE_READWRITE", "disabled": false}])
    );
    assert!(!ok(d, &["admin", "user", "list", "--enterprise", "acme"], "").contains("password"));

    let served = serve(d);
    let base = served.1.as_str();
    let (status, body) = sign_in(base, "ops", "first-password").await;
    assert_eq!(status, 200, "{body}");
    let token = body["accessToken"].as_str().unwrap().to_owned();
    assert_eq!(with_token(base, &token).await, 200);
    let endpoint = reqwest::Client::new()
        .post(format!("{base}/api/endpoints"))
        .header("X-Access-Token", &token)
        .json(&serde_json::json!({"name": "Room"}))
        .send()
        .await
        .unwrap();
    assert_eq!(endpoint.status(), 200);

    // Disabled: refused exactly like a wrong password; its token is revoked.
    let disabled = ok(d, &[&["admin", "user", "disable"][..], &user].concat(), "");
    assert!(disabled.contains("1 token(s) revoked"), "{disabled}");
    let (status, refusal) = sign_in(base, "ops", "first-password").await;
    let (_, wrong) = sign_in(base, "ops", "wrong-password").await;
    assert_eq!(status, 401);
    assert_eq!(refusal["errorName"], "BadCredentialsException");
    assert_eq!(
        refusal["message"], wrong["message"],
        "no hint that it is disabled"
    );
    // The token cache on the serving instance forgets it within its TTL (5 s).
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    assert_eq!(with_token(base, &token).await, 401);

    ok(d, &[&["admin", "user", "enable"][..], &user].concat(), "");
    assert_eq!(sign_in(base, "ops", "first-password").await.0, 200);

    let set = [
        &["admin", "user", "set-password"][..],
        &user,
        &["--password-stdin"],
    ]
    .concat();
    refused(d, &set, "short\n", 1, "password");
    ok(d, &set, "second-password\n");
    assert_eq!(sign_in(base, "ops", "first-password").await.0, 401);
    assert_eq!(sign_in(base, "ops", "second-password").await.0, 200);

    ok(d, &[&["admin", "user", "delete"][..], &user].concat(), "");
    assert_eq!(sign_in(base, "ops", "second-password").await.0, 401);
    refused(
        d,
        &[&["admin", "user", "delete"][..], &user].concat(),
        "",
        1,
        "has no user 'ops'",
    );

    refused(
        d,
        &["admin", "enterprise", "set-limit", "acme", "0"],
        "",
        1,
        "below the 1 endpoints",
    );
    refused(
        d,
        &["admin", "enterprise", "delete", "acme"],
        "",
        1,
        "--yes",
    );
    let deleted = ok(d, &["admin", "enterprise", "delete", "acme", "--yes"], "");
    assert!(deleted.contains("1 endpoint(s)"), "{deleted}");
    ok(d, &["admin", "enterprise", "delete", "beta"], "");
    assert_eq!(
        ok(d, &["admin", "enterprise", "list", "--json"], "").trim(),
        "[]"
    );
    drop(served);
}
