//! Starting the real application for black-box tests: real HTTP on loopback (port 0), a fresh
//! SQLite file or a fresh PostgreSQL database per test, the static platform users below.

use reqwest::{Method, RequestBuilder, Response, StatusCode};
use roomlink::settings::Settings;
use roomlink_app::Services;
use roomlink_domain::access::Role;
use roomlink_domain::ports::Clock;
use roomlink_domain::secret::Secret;
use roomlink_domain::system::{ManualClock, SystemClock};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tempfile::TempDir;

pub const PLATFORM_USERS: &str = r#"
[[users]]
username = "alice@example.com"
password = "alice-platform-pw"
platform_id = 1001
enterprise = "acme"
enterprise_admin = true
first_name = "Alice"
last_name = "Liddell"
zero_touch = true
access_tokens = ["plat-token-alice"]

[[users]]
username = "bob@example.com"
password = "bob-platform-pw"
platform_id = 1002
enterprise = "acme"
enterprise_admin = false
first_name = "Bob"
last_name = "Builder"
access_tokens = ["plat-token-bob"]

[[users]]
username = "mallory@example.com"
password = "mallory-pw"
platform_id = 1003
enterprise = "no-such-enterprise"
enterprise_admin = true
access_tokens = ["plat-token-mallory"]
"#;

/// A background task whose rounds tests wait for (`TestApp::full_rounds`).
#[derive(Debug, Clone, Copy)]
pub enum Round {
    AutoJoin,
    CalendarPush,
}

impl Round {
    fn ended(self, services: &Services) -> u64 {
        match self {
            Round::AutoJoin => services.auto_join.rounds.ended(),
            Round::CalendarPush => services.calendar_push.rounds.ended(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub services: Services,
    pub clock: Arc<ManualClock>,
    /// What a second instance beside this one shares with it.
    shared: Shared,
    _background: Option<roomlink::commands::Background>,
    /// Holds the SQLite file, key and platform users until the test ends.
    _dir: TempDir,
    _database: Option<roomlink_store::testing::TestDatabase>,
}

/// The database, service key, platform users and clock of an instance.
#[derive(Clone)]
struct Shared {
    url: String,
    users: std::path::PathBuf,
    key_file: std::path::PathBuf,
    clock: Arc<ManualClock>,
    /// Whether its background tasks run.
    background: bool,
}

impl TestApp {
    /// Starts the app; `None` (after saying so) for PostgreSQL when no test server is configured.
    pub async fn spawn(backend: Backend) -> Option<TestApp> {
        Self::spawn_with(backend, &[]).await
    }

    /// As [`TestApp::spawn`], with more settings as `ROOMLINK__...` variables.
    pub async fn spawn_with(backend: Backend, settings: &[(&str, &str)]) -> Option<TestApp> {
        Self::spawn_as(backend, settings, false).await
    }

    /// As [`TestApp::spawn_with`], with the background tasks an instance runs (status polling,
    /// auto-join, housekeeping) running too; other tests leave them out so that nothing moves
    /// but what they do.
    pub async fn spawn_with_background(
        backend: Backend,
        settings: &[(&str, &str)],
    ) -> Option<TestApp> {
        Self::spawn_as(backend, settings, true).await
    }

    async fn spawn_as(
        backend: Backend,
        settings: &[(&str, &str)],
        background: bool,
    ) -> Option<TestApp> {
        let dir = tempfile::tempdir().expect("temp dir");
        let (url, database) = match backend {
            Backend::Sqlite => (
                format!("sqlite://{}", dir.path().join("roomlink.db").display()),
                None,
            ),
            Backend::Postgres => {
                let db = roomlink_store::testing::TestDatabase::create().await?;
                (db.url().to_owned(), Some(db))
            }
        };
        let users = dir.path().join("platform-users.toml");
        std::fs::write(&users, PLATFORM_USERS).expect("platform users file");
        let key_file = dir.path().join("service.key");
        // Time moves only when a test says so (pairing heartbeats, rotation).
        let clock = Arc::new(ManualClock::at(SystemClock.now_ms()));
        let shared = Shared {
            url,
            users,
            key_file,
            clock,
            background,
        };
        Some(Self::launch(shared, settings, dir, database).await)
    }

    /// A second instance on this one's database, with its service key, platform users and
    /// clock (several instances as one; they share no bus).
    /// Waits until every one of `apps` has ended two more `round`s than when called: the first
    /// may have begun before the caller's change, the second began after it. A test showing
    /// that a round did not act waits for this rather than for a time in which a round may or
    /// may not have run (the apps must run their background tasks).
    pub async fn full_rounds(apps: &[&TestApp], round: Round) {
        let targets: Vec<u64> = apps.iter().map(|a| round.ended(&a.services) + 2).collect();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while apps
            .iter()
            .zip(&targets)
            .any(|(app, target)| round.ended(&app.services) < *target)
        {
            assert!(
                std::time::Instant::now() < deadline,
                "{round:?}: two rounds did not end within 60 s"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    pub async fn spawn_beside(&self, settings: &[(&str, &str)]) -> TestApp {
        let dir = tempfile::tempdir().expect("temp dir");
        Self::launch(self.shared.clone(), settings, dir, None).await
    }

    async fn launch(
        shared: Shared,
        settings: &[(&str, &str)],
        dir: TempDir,
        database: Option<roomlink_store::testing::TestDatabase>,
    ) -> TestApp {
        let mut env = HashMap::from([
            (
                "ROOMLINK__SERVER__BIND".to_owned(),
                "127.0.0.1:0".to_owned(),
            ),
            ("ROOMLINK__SERVER__WORKERS".to_owned(), "2".to_owned()),
            ("ROOMLINK__DATABASE__URL".to_owned(), shared.url.clone()),
            (
                "ROOMLINK__PLATFORM__STATIC_FILE".to_owned(),
                shared.users.display().to_string(),
            ),
            (
                "ROOMLINK__SECURITY__SERVICE_KEY_FILE".to_owned(),
                shared.key_file.display().to_string(),
            ),
            // Cheap hashes keep the suite fast; production uses the default cost.
            ("ROOMLINK__SECURITY__BCRYPT_COST".to_owned(), "4".to_owned()),
        ]);
        env.extend(
            settings
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let settings = Settings::load_with_env(None, Some(env)).expect("settings");
        let wiring = roomlink::services_with_clock(&settings, true, shared.clock.clone())
            .await
            .expect("services");
        let running = roomlink::commands::start_with(&settings, wiring)
            .await
            .expect("app starts");
        tokio::spawn(running.server);
        // Dropped, the background tasks stop.
        let background = shared.background.then_some(running.background);
        TestApp {
            base: format!("http://{}", running.address),
            client: reqwest::Client::new(),
            services: running.services,
            clock: shared.clock.clone(),
            shared,
            _background: background,
            _dir: dir,
            _database: database,
        }
    }

    pub async fn enterprise(&self, name: &str, limit: Option<u32>) {
        self.services
            .admin
            .create_enterprise(name, limit)
            .await
            .expect("enterprise");
    }

    pub async fn user(&self, enterprise: &str, username: &str, role: Role) {
        self.services
            .admin
            .create_user(
                enterprise,
                username,
                role,
                Secret::new(format!("{username}-password")),
            )
            .await
            .expect("user");
    }

    /// An enterprise with a read-write and a read-only user; returns their tokens.
    pub async fn tenant(&self, name: &str) -> (String, String) {
        self.enterprise(name, None).await;
        let rw = format!("{name}-admin");
        let ro = format!("{name}-viewer");
        self.user(name, &rw, Role::ReadWrite).await;
        self.user(name, &ro, Role::ReadOnly).await;
        (self.token(&rw).await, self.token(&ro).await)
    }

    /// A token for a service user created by [`TestApp::user`].
    pub async fn token(&self, username: &str) -> String {
        let response = self
            .request(Method::POST, "/api/auth/accesstokens")
            .basic_auth(username, Some(format!("{username}-password")))
            .send()
            .await
            .expect("request");
        let (status, body) = json(response).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["accessToken"].as_str().expect("token").to_owned()
    }

    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, format!("{}{path}", self.base))
    }

    /// A request authenticated with `token` in the `X-Access-Token` header.
    pub fn with_token(&self, method: Method, path: &str, token: &str) -> RequestBuilder {
        self.request(method, path).header("X-Access-Token", token)
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.with_token(method, path, token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        json(request.send().await.expect("request")).await
    }

    /// The text of `GET /metrics` (no credentials: scrapers send none).
    pub async fn metrics(&self) -> String {
        self.request(Method::GET, "/metrics")
            .send()
            .await
            .expect("request")
            .text()
            .await
            .expect("body")
    }

    /// The caller's enterprise, as `GET /api/enterprises/self` names it.
    pub async fn enterprise_of(&self, token: &str) -> roomlink_domain::ids::EnterpriseId {
        let (_, me) = self
            .call(Method::GET, "/api/enterprises/self", token, None)
            .await;
        roomlink_domain::ids::EnterpriseId::from_trusted(
            me["id"].as_str().expect("enterprise id").to_owned(),
        )
    }

    /// One status poll round of the caller's enterprise, now (`inbound`: this instance holds
    /// the inbound poll lease); how many statuses it saved.
    pub async fn poll_now(&self, token: &str, inbound: bool) -> usize {
        let enterprise = self.enterprise_of(token).await;
        self.services
            .control
            .poll_enterprise(&enterprise, roomlink_app::control::PollShare { inbound })
            .await
            .expect("poll")
    }

    pub async fn create_endpoint(&self, token: &str, body: Value) -> Value {
        let (status, created) = self
            .call(Method::POST, "/api/endpoints", token, Some(body))
            .await;
        assert_eq!(status, StatusCode::OK, "{created}");
        created
    }
}

/// The status and JSON body of a response (`null` for an empty body).
pub async fn json(response: Response) -> (StatusCode, Value) {
    let status = response.status();
    let bytes = response.bytes().await.expect("body");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| panic!("not JSON ({status}): {}", String::from_utf8_lossy(&bytes)))
    };
    (status, body)
}

/// Asserts a catalog error body: status, name, code from the spec's table.
pub fn assert_error(status: StatusCode, body: &Value, expected_status: u16, name: &str, code: i64) {
    assert_eq!(status.as_u16(), expected_status, "{body}");
    assert_eq!(body["errorName"], name, "{body}");
    assert_eq!(body["errorCode"], code, "{body}");
    assert!(body["errorMessage"].is_string(), "{body}");
    assert!(body["errorDetails"].is_object(), "{body}");
}

/// Runs each listed test once per backend: `sqlite::name` and `postgres::name`.
#[macro_export]
macro_rules! on_every_backend {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let app = $crate::support::app::TestApp::spawn($crate::support::app::Backend::Sqlite).await.expect("sqlite app");
                    super::$name(app).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if let Some(app) = $crate::support::app::TestApp::spawn($crate::support::app::Backend::Postgres).await {
                        super::$name(app).await;
                    }
                }
            )*
        }
    };
}
