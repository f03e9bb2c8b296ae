//! The real binary on one database: admin commands and serving processes.

use reqwest::StatusCode;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_roomlink");

/// Processes of the binary sharing a working directory (and so a service key) and a database.
pub struct Service {
    pub dir: tempfile::TempDir,
    pub database_url: String,
    /// More `ROOMLINK__*` settings for every process.
    pub env: Vec<(String, String)>,
}

impl Service {
    pub fn new(dir: tempfile::TempDir, database_url: String) -> Service {
        Service {
            dir,
            database_url,
            env: Vec::new(),
        }
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new(BIN);
        command
            .current_dir(self.dir.path())
            .env_remove("RUST_LOG")
            .env("ROOMLINK__DATABASE__URL", &self.database_url)
            .env(
                "ROOMLINK__SECURITY__SERVICE_KEY_FILE",
                self.dir.path().join("service.key"),
            )
            .env("ROOMLINK__SECURITY__BCRYPT_COST", "4")
            .env("ROOMLINK__SERVER__BIND", "127.0.0.1:0")
            .env("ROOMLINK__SERVER__WORKERS", "1")
            .env("ROOMLINK__LOG__FORMAT", "json")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    pub fn admin(&self, args: &[&str], stdin: &str) {
        let mut child = self.command().args(args).spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// An enterprise and a read-write user `<name>-ops`.
    pub fn tenant(&self, name: &str) {
        self.admin(&["admin", "enterprise", "create", name], "");
        self.admin(
            &[
                "admin",
                "user",
                "create",
                "--enterprise",
                name,
                "--username",
                &format!("{name}-ops"),
                "--role",
                "ROLE_READWRITE",
                "--password-stdin",
            ],
            &format!("{name}-password-1\n"),
        );
    }

    /// Starts serving; the child and `host:port` once it listens.
    pub fn serve(&self) -> (Child, String) {
        let mut child = self.command().stdin(Stdio::null()).spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut announced = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if announced {
                    continue; // keep draining so the child never blocks on a full pipe
                }
                let Ok(log) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if log["fields"]["message"] == "roomlink is listening" {
                    announced = true;
                    let _ = send.send(log["fields"]["address"].as_str().unwrap().to_owned());
                }
            }
        });
        let address = receive
            .recv_timeout(Duration::from_secs(60))
            .expect("roomlink starts listening");
        (child, address)
    }
}

pub fn sigkill(mut child: Child) {
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
}

/// A token of `<enterprise>-ops` (see [`Service::tenant`]).
pub async fn token(client: &reqwest::Client, address: &str, enterprise: &str) -> String {
    let response = client
        .post(format!("http://{address}/api/auth/accesstokens"))
        .basic_auth(
            format!("{enterprise}-ops"),
            Some(format!("{enterprise}-password-1")),
        )
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    body["accessToken"].as_str().unwrap().to_owned()
}
