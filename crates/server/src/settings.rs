//! Configuration: built-in defaults < `roomlink.toml` in the working directory (or the file
//! given with `--config`) < environment variables `ROOMLINK__SECTION__KEY`.
//!
//! Every key, its default and its meaning is listed in `docs/operations.md`.

use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
pub struct Settings {
    pub server: ServerSettings,
    pub database: DatabaseSettings,
    #[serde(default)]
    pub platform: PlatformSettings,
    pub listener: ListenerSettings,
    pub pairing: PairingSettings,
    pub security: SecuritySettings,
    pub log: LogSettings,
    pub limits: LimitSettings,
}

/// Abuse limits; a zero rate (or bound) turns that limit off.
#[derive(Debug, Clone, Deserialize)]
pub struct LimitSettings {
    /// Sustained requests per second from one client address, and the burst allowed.
    pub address_rate_per_sec: f64,
    pub address_burst: u32,
    /// Sustained requests per second with one access token, and the burst allowed.
    pub token_rate_per_sec: f64,
    pub token_burst: u32,
    /// Failed authentications per minute from one address before it is refused for a while.
    pub auth_failures_per_minute: u32,
    /// All request headers together.
    pub max_header_bytes: usize,
}

impl LimitSettings {
    pub fn options(&self) -> roomlink_http::LimitOptions {
        let rate = |rate_per_sec: f64, burst: u32| roomlink_http::Rate {
            rate_per_sec,
            burst: f64::from(burst),
        };
        roomlink_http::LimitOptions {
            per_address: rate(self.address_rate_per_sec, self.address_burst),
            per_token: rate(self.token_rate_per_sec, self.token_burst),
            auth_failures: rate(
                f64::from(self.auth_failures_per_minute) / 60.0,
                self.auth_failures_per_minute,
            ),
            max_header_bytes: self.max_header_bytes,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct ServerSettings {
    pub bind: String,
    /// Worker threads; 0 = one per core.
    pub workers: usize,
    pub shutdown_timeout_secs: u64,
}

#[derive(Clone, Deserialize)]
pub struct DatabaseSettings {
    /// `sqlite://PATH` (embedded, created on first start) or `postgres://...`.
    pub url: String,
    pub max_connections: usize,
    pub connect_timeout_ms: u64,
}

// The URL may hold a password: never print it.
impl std::fmt::Debug for DatabaseSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatabaseSettings")
            .field("url", &"[redacted]")
            .field("max_connections", &self.max_connections)
            .finish()
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PlatformSettings {
    /// TOML file of companion-platform users (the embedded default and tests).
    pub static_file: Option<PathBuf>,
    /// An OAuth2 identity provider (token introspection and the password grant). At most one
    /// of `static_file` and `oauth2`; with neither, platform credentials are refused.
    pub oauth2: Option<roomlink_platform::OAuth2Config>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PairingSettings {
    /// How long the pairing code of a ROTATING endpoint lasts.
    pub rotation_interval_secs: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ListenerSettings {
    pub command_timeout_ms: u64,
    pub status_poll_interval_ms: u64,
}

#[derive(Clone, Deserialize)]
pub struct SecuritySettings {
    /// The service sealing key, base64 of 32 bytes. Takes precedence over `service_key_file`.
    pub service_key: Option<String>,
    /// A file holding the service key; created (mode 0600) on first start if missing.
    /// Default for SQLite: `roomlink.key` beside the database file.
    pub service_key_file: Option<PathBuf>,
    /// bcrypt cost of new service-user password hashes.
    pub bcrypt_cost: u32,
}

impl std::fmt::Debug for SecuritySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecuritySettings")
            .field(
                "service_key",
                &self.service_key.as_ref().map(|_| "[redacted]"),
            )
            .field("service_key_file", &self.service_key_file)
            .field("bcrypt_cost", &self.bcrypt_cost)
            .finish()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Human,
    Json,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LogSettings {
    /// `human` or `json` (one JSON object per line); anything else is refused at start.
    pub format: LogFormat,
    /// A tracing filter, e.g. `info` or `roomlink=debug,info`. `RUST_LOG` overrides it.
    pub level: String,
}

impl Settings {
    /// Loads the layers. `file` is `--config`; without it `roomlink.toml` is read if present.
    pub fn load(file: Option<&Path>) -> Result<Settings, config::ConfigError> {
        Self::load_with_env(file, None)
    }

    /// As [`Settings::load`], with the environment given explicitly (tests).
    pub fn load_with_env(
        file: Option<&Path>,
        env: Option<std::collections::HashMap<String, String>>,
    ) -> Result<Settings, config::ConfigError> {
        let mut builder = config::Config::builder()
            .set_default("server.bind", "127.0.0.1:8080")?
            .set_default("server.workers", 0)?
            .set_default("server.shutdown_timeout_secs", 30)?
            .set_default("database.url", "sqlite://roomlink.db")?
            .set_default("database.max_connections", 16)?
            .set_default("database.connect_timeout_ms", 5000)?
            .set_default("listener.command_timeout_ms", 10_000)?
            .set_default("listener.status_poll_interval_ms", 30_000)?
            .set_default("pairing.rotation_interval_secs", 86_400)?
            .set_default("security.bcrypt_cost", roomlink_crypto::DEFAULT_BCRYPT_COST)?
            .set_default("log.format", "human")?
            .set_default("log.level", "info")?
            .set_default("limits.address_rate_per_sec", 1000.0)?
            .set_default("limits.address_burst", 2000)?
            .set_default("limits.token_rate_per_sec", 200.0)?
            .set_default("limits.token_burst", 400)?
            .set_default("limits.auth_failures_per_minute", 30)?
            .set_default("limits.max_header_bytes", 16 * 1024)?;
        builder = match file {
            Some(path) => builder.add_source(config::File::from(path).required(true)),
            None => builder.add_source(config::File::with_name("roomlink.toml").required(false)),
        };
        let environment = config::Environment::with_prefix("ROOMLINK")
            .separator("__")
            .try_parsing(true)
            .source(env);
        builder.add_source(environment).build()?.try_deserialize()
    }

    /// The SQLite database file, when the URL names one.
    pub fn sqlite_path(&self) -> Option<PathBuf> {
        self.database
            .url
            .strip_prefix("sqlite://")
            .map(PathBuf::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn defaults_file_and_environment_layer_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("custom.toml");
        std::fs::write(
            &file,
            "[server]\nbind = \"127.0.0.1:9000\"\n[log]\nlevel = \"debug\"\n",
        )
        .unwrap();
        let env = HashMap::from([("ROOMLINK__LOG__LEVEL".to_owned(), "warn".to_owned())]);
        let s = Settings::load_with_env(Some(&file), Some(env)).unwrap();
        assert_eq!(
            s.server.bind, "127.0.0.1:9000",
            "the file overrides the default"
        );
        assert_eq!(s.log.level, "warn", "the environment overrides the file");
        assert_eq!(s.database.url, "sqlite://roomlink.db", "defaults stay");
        assert_eq!(s.listener.command_timeout_ms, 10_000);
        assert_eq!(s.sqlite_path().unwrap(), PathBuf::from("roomlink.db"));
    }

    #[test]
    fn secrets_are_not_printed() {
        let env = HashMap::from([
            (
                "ROOMLINK__DATABASE__URL".to_owned(),
                "postgres://u:hunter2@db/x".to_owned(),
            ),
            (
                "ROOMLINK__SECURITY__SERVICE_KEY".to_owned(),
                "c2VjcmV0".to_owned(),
            ),
        ]);
        let s = Settings::load_with_env(None, Some(env)).unwrap();
        let printed = format!("{s:?}");
        assert!(
            !printed.contains("hunter2") && !printed.contains("c2VjcmV0"),
            "{printed}"
        );
    }

    #[test]
    fn a_missing_config_file_is_an_error() {
        assert!(
            Settings::load_with_env(Some(Path::new("/nonexistent/roomlink.toml")), None).is_err()
        );
    }
}
