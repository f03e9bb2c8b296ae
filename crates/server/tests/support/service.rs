//! The real binary on one database: admin commands and serving processes.

use reqwest::StatusCode;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_roomlink");

/// The binary as an operator runs it from `dir`, on the SQLite file `dir/data/roomlink.db`:
/// quick password hashing, any free port, one worker, JSON logs.
pub fn roomlink(dir: &Path) -> Command {
    let mut command = Command::new(BIN);
    command.current_dir(dir).env_remove("RUST_LOG").env(
        "ROOMLINK__DATABASE__URL",
        format!("sqlite://{}", dir.join("data/roomlink.db").display()),
    );
    quick_settings(&mut command);
    command
}

/// Runs `command` with `stdin` on its standard input: what it printed and how it ended.
pub fn run_with_stdin(command: &mut Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("roomlink starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("roomlink ends")
}

/// As [`run_with_stdin`], for a command that must succeed (its standard error is the report).
pub fn run_ok(command: &mut Command, stdin: &str) -> Output {
    let output = run_with_stdin(command, stdin);
    let args: Vec<_> = command.get_args().collect();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        text(&output.stderr)
    );
    output
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What every test process shares: quick password hashing, any free port, one worker, JSON logs.
fn quick_settings(command: &mut Command) {
    command
        .env("ROOMLINK__SECURITY__BCRYPT_COST", "4")
        .env("ROOMLINK__SERVER__BIND", "127.0.0.1:0")
        .env("ROOMLINK__SERVER__WORKERS", "1")
        .env("ROOMLINK__LOG__FORMAT", "json");
}

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

    /// On a new SQLite database, `roomlink.db` in a temporary directory.
    pub fn on_sqlite() -> Service {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("roomlink.db").display());
        Service::new(dir, url)
    }

    /// On a fresh PostgreSQL database (dropped with `drop_now` at the end), or `None` when no
    /// server is configured (the database helper says so).
    pub async fn on_postgres() -> Option<(Service, roomlink_store::testing::TestDatabase)> {
        let database = roomlink_store::testing::TestDatabase::create().await?;
        let url = database.url().to_owned();
        Some((Service::new(tempfile::tempdir().unwrap(), url), database))
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
            );
        quick_settings(&mut command);
        command
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    pub fn admin(&self, args: &[&str], stdin: &str) {
        run_ok(self.command().args(args), stdin);
    }

    /// An enterprise and a read-write user `<name>-ops`.
    pub fn tenant(&self, name: &str) {
        self.admin(
            &["admin", "enterprise", "create", name, "--create-database"],
            "",
        );
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
    token_as(
        client,
        address,
        &format!("{enterprise}-ops"),
        &format!("{enterprise}-password-1"),
    )
    .await
}

/// A token of the service user `username`.
pub async fn token_as(
    client: &reqwest::Client,
    address: &str,
    username: &str,
    password: &str,
) -> String {
    let response = client
        .post(format!("http://{address}/api/auth/accesstokens"))
        .basic_auth(username, Some(password))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    body["accessToken"].as_str().unwrap().to_owned()
}

/// A serving process whose JSON log is read as it goes.
pub struct Served {
    pub child: Child,
    pub address: String,
    log: std::sync::mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl Service {
    /// Starts serving (with more settings in `env`) and waits until it listens.
    pub fn serve_watched(&self, env: &[(&str, &str)]) -> Served {
        let mut child = self
            .command()
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (send, log) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                // A line that is not JSON (a panic's message) is kept as a string.
                let entry = serde_json::from_str::<Value>(&line).unwrap_or(Value::String(line));
                if send.send(entry).is_err() {
                    break;
                }
            }
        });
        let mut served = Served {
            child,
            address: String::new(),
            log,
            seen: Vec::new(),
        };
        let listening = served.wait_for_log("roomlink is listening");
        served.address = listening["fields"]["address"].as_str().unwrap().to_owned();
        served
    }
}

impl Served {
    /// The first log line from now on whose message starts with `message` (30 s at most).
    pub fn wait_for_log(&mut self, message: &str) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            let Ok(line) = self.log.recv_timeout(Duration::from_millis(100)) else {
                if let Ok(Some(status)) = self.child.try_wait() {
                    panic!("roomlink exited ({status}): {:#?}", self.seen);
                }
                continue;
            };
            self.seen.push(line.clone());
            if line["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with(message))
            {
                return line;
            }
        }
        panic!("no log line {message:?}: {:#?}", self.seen);
    }

    /// Every log line read so far, and those waiting.
    pub fn log_so_far(&mut self) -> &[Value] {
        self.seen.extend(self.log.try_iter());
        &self.seen
    }

    /// Sends a signal by name (`HUP`, `TERM`, ...).
    pub fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{name}");
    }

    /// SIGTERM, and waits for the graceful exit.
    pub fn stop(mut self) {
        self.signal("TERM");
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}: {:#?}", self.seen);
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs an admin command; its exit code and stdout + stderr.
pub fn run(service: &Service, args: &[&str]) -> (i32, String) {
    let out = service
        .command()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}
