//! Configuration: built-in defaults < `roomlink.toml` in the working directory (or the file
//! given with `--config`) < environment variables `ROOMLINK__SECTION__KEY`.
//!
//! Every key, its default and its meaning is listed in `docs/operations.md`.

use config::Source;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub server: ServerSettings,
    pub database: DatabaseSettings,
    #[serde(default)]
    pub platform: PlatformSettings,
    pub listener: ListenerSettings,
    pub pairing: PairingSettings,
    pub audit: AuditSettings,
    pub usage: UsageSettings,
    pub inventory: InventorySettings,
    pub webhooks: WebhookSettings,
    pub templates: TemplateJobSettings,
    pub security: SecuritySettings,
    pub log: LogSettings,
    pub limits: LimitSettings,
    #[serde(default)]
    pub cluster: ClusterSettings,
    pub calendar: CalendarSettings,
}

/// Reading room calendars (docs/calendars.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalendarSettings {
    /// The hosts calendar accounts may name, comma-separated host names or IP addresses;
    /// empty: any. Keeps an enterprise's account from pointing roomlink at internal services.
    pub allowed_hosts: String,
    /// How long before a meeting's start a room with auto-join on dials it.
    pub auto_join_lead_secs: u64,
    /// How long after a meeting's start a room still joins it (after a restart, say).
    pub auto_join_grace_secs: u64,
    /// How often auto-join rounds run.
    pub auto_join_interval_ms: u64,
    /// How old a room calendar's kept copy may be when rounds use it (0: ask every time).
    pub poll_interval_ms: u64,
    /// Requests a second to each calendar system's host (0: no limit).
    pub requests_per_second: u64,
    /// How often the calendar-push rooms' calendars are read and changed ones pushed.
    pub push_interval_ms: u64,
    /// Which links and numbers in events are meetings (`[calendar.meetings]`).
    #[serde(default)]
    pub meetings: roomlink_domain::calendar::meeting::MeetingRules,
}

/// Several instances as one (docs/operations.md, "Running several instances"). Without
/// `nats_url` this instance is alone and nothing is shared.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSettings {
    /// `nats://host:port` (or `tls://`), comma-separated for several servers.
    pub nats_url: Option<String>,
    pub nats_user: Option<String>,
    pub nats_password: Option<String>,
    pub nats_token: Option<String>,
    /// A CA bundle (PEM) to verify the NATS servers' certificates; turns TLS on.
    pub nats_ca_file: Option<PathBuf>,
    /// The first element of every subject (several roomlink deployments on one NATS).
    pub subject_prefix: Option<String>,
}

// Passwords and tokens never print.
impl std::fmt::Debug for ClusterSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = |v: &Option<String>| v.as_ref().map(|_| "[redacted]");
        f.debug_struct("ClusterSettings")
            .field("nats_url", &self.nats_url)
            .field("nats_user", &self.nats_user)
            .field("nats_password", &redacted(&self.nats_password))
            .field("nats_token", &redacted(&self.nats_token))
            .field("nats_ca_file", &self.nats_ca_file)
            .field("subject_prefix", &self.subject_prefix)
            .finish()
    }
}

/// Abuse limits; a zero rate (or bound) turns that limit off.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    /// Sustained requests per second from one client address, and the burst allowed.
    pub address_rate_per_sec: f64,
    pub address_burst: u32,
    /// Sustained requests per second with one access token, and the burst allowed.
    pub token_rate_per_sec: f64,
    pub token_burst: u32,
    /// Failed authentications per minute from one address, per user name (Basic) or per
    /// credential kind (tokens), before that attempt is refused for a while.
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
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    pub bind: String,
    /// Worker threads; 0 = one per core.
    pub workers: usize,
    pub shutdown_timeout_secs: u64,
    /// MiB of serialized endpoint lists kept in memory (0: none).
    pub endpoint_list_cache_mib: usize,
    /// HTTPS: the certificate chain (PEM, leaf first) and its private key (PEM). Both or
    /// neither; SIGHUP reads them again.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
}

impl ServerSettings {
    /// The certificate files, when HTTPS is configured.
    pub fn tls_files(&self) -> Option<roomlink_http::tls::TlsFiles> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(roomlink_http::tls::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ => None,
        }
    }
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
pub struct PlatformSettings {
    /// TOML file of companion-platform users (the embedded default and tests).
    pub static_file: Option<PathBuf>,
    /// An OAuth2 identity provider (token introspection and the password grant). At most one
    /// of `static_file` and `oauth2`; with neither, platform credentials are refused.
    pub oauth2: Option<roomlink_platform::OAuth2Config>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairingSettings {
    /// How long the pairing code of a ROTATING endpoint lasts.
    pub rotation_interval_secs: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSettings {
    /// How long audit entries are kept, in days.
    pub retention_days: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageSettings {
    /// How long call sessions are kept after they ended, in days.
    pub retention_days: u32,
}

/// Reading room inventories (docs/operations.md "Room inventory").
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InventorySettings {
    /// How long after a room's last read (or failed attempt) it is read again, in minutes.
    pub refresh_minutes: u32,
    /// Rooms read per listener and status poll round, at most; 0 reads none.
    pub reads_per_round: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListenerSettings {
    pub command_timeout_ms: u64,
    pub status_poll_interval_ms: u64,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecuritySettings {
    /// The service sealing key, base64 of 32 bytes. Takes precedence over `service_key_file`.
    pub service_key: Option<String>,
    /// Keys that sealed values before a rotation, base64, comma-separated: still opened,
    /// never used to seal (with `service_key`; a key file lists them after its first line).
    pub previous_service_keys: Option<String>,
    /// A file holding the service key ring (the current key first, then previous keys);
    /// created (mode 0600) on first start if missing. Default for SQLite: `roomlink.key`
    /// beside the database file.
    pub service_key_file: Option<PathBuf>,
    /// bcrypt cost of new service-user password hashes.
    pub bcrypt_cost: u32,
    /// How long a successful Basic-auth password verification is remembered (0: never).
    pub verified_password_cache_secs: u64,
    /// How long a looked-up access token is kept (0: never): the longest a token revoked
    /// where no cluster bus tells this instance stays usable here.
    pub token_cache_ms: u64,
    /// How often an event stream opened with a service user's Basic credentials checks that
    /// the user is still enabled with the same password (it ends otherwise).
    pub stream_recheck_ms: u64,
}

impl std::fmt::Debug for SecuritySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecuritySettings")
            .field(
                "service_key",
                &self.service_key.as_ref().map(|_| "[redacted]"),
            )
            .field(
                "previous_service_keys",
                &self.previous_service_keys.as_ref().map(|_| "[redacted]"),
            )
            .field("service_key_file", &self.service_key_file)
            .field("bcrypt_cost", &self.bcrypt_cost)
            .field(
                "verified_password_cache_secs",
                &self.verified_password_cache_secs,
            )
            .field("token_cache_ms", &self.token_cache_ms)
            .field("stream_recheck_ms", &self.stream_recheck_ms)
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
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    /// `human` or `json` (one JSON object per line); anything else is refused at start.
    pub format: LogFormat,
    /// A tracing filter, e.g. `info` or `roomlink=debug,info`. `RUST_LOG` overrides it.
    pub level: String,
}

impl Settings {
    /// Loads the layers. `file` is `--config`; without it `roomlink.toml` is read if present.
    pub fn load(file: Option<&Path>) -> Result<Settings, SettingsError> {
        Self::load_with_env(file, None)
    }

    /// As [`Settings::load`], with the environment given explicitly (tests). Refuses unknown
    /// keys (naming the nearest known one), database URLs of other schemes and numbers out of
    /// their range (see [`RANGES`]), each with a one-line reason that quotes no secret.
    pub fn load_with_env(
        file: Option<&Path>,
        env: Option<HashMap<String, String>>,
    ) -> Result<Settings, SettingsError> {
        let env = match env {
            Some(env) => ours(env),
            None => process_environment()?,
        };
        let (source, origin) = match file {
            Some(path) => (
                config::File::from(path).required(true),
                path.display().to_string(),
            ),
            None => (
                config::File::with_name("roomlink.toml").required(false),
                "roomlink.toml".to_owned(),
            ),
        };
        // The pre-pass: every key the file and the environment set must be a known one.
        let mut present: Vec<(String, String)> = Vec::new();
        let mut from_file = Vec::new();
        flatten(
            "",
            source.collect().map_err(SettingsError::config)?,
            &mut from_file,
        );
        from_file.sort();
        present.extend(from_file.into_iter().map(|key| (key, origin.clone())));
        let mut from_env: Vec<(String, String)> = env
            .keys()
            .map(|variable| (env_key(variable), variable.clone()))
            .collect();
        from_env.sort();
        present.extend(from_env);
        check_known(&present)?;

        let mut builder = config::Config::builder();
        for (key, value) in DEFAULTS {
            builder = builder
                .set_default(*key, *value)
                .map_err(SettingsError::config)?;
        }
        let merged = builder
            .add_source(source)
            .add_source(
                config::Environment::with_prefix("ROOMLINK")
                    .separator("__")
                    .try_parsing(true)
                    .source(Some(env.into_iter().collect())),
            )
            .build()
            .map_err(SettingsError::config)?;
        // The scheme first: without it the other database checks (and the service key's) mislead.
        check_database_url(&merged.get_string("database.url").unwrap_or_default())?;
        let format = merged.get_string("log.format").unwrap_or_default();
        if !matches!(format.as_str(), "human" | "json") {
            return Err(SettingsError::new(format!(
                "log.format: must be human or json (got {format:?})"
            )));
        }
        for range in RANGES {
            if let Ok(value) = merged.get::<config::Value>(range.key) {
                range.check(&value.kind)?;
            }
        }
        let settings: Settings = merged.try_deserialize().map_err(SettingsError::config)?;
        check_bind(&settings.server.bind)?;
        if settings.server.tls_cert.is_some() != settings.server.tls_key.is_some() {
            return Err(SettingsError::new(
                "server.tls_cert and server.tls_key: set both (HTTPS) or neither (HTTP)",
            ));
        }
        settings.webhooks.target_rule()?;
        if settings.webhooks.lease_secs * 1000 <= settings.webhooks.timeout_ms * 2 {
            return Err(SettingsError::new(
                "webhooks.lease_secs: must be more than twice webhooks.timeout_ms, so that a \
                 claim outlives the attempts made under it",
            ));
        }
        Ok(settings)
    }

    /// The SQLite database file, when the URL names one.
    pub fn sqlite_path(&self) -> Option<PathBuf> {
        self.database
            .url
            .strip_prefix("sqlite://")
            .map(PathBuf::from)
    }
}

/// Why the configuration was refused: one line, no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError(String);

impl SettingsError {
    fn new(message: impl Into<String>) -> SettingsError {
        SettingsError(message.into())
    }

    /// The config crate's errors, on one line. A TOML parse error quotes the offending line of
    /// the file under `|` markers; those lines are left out, as they may hold a secret.
    fn config(e: config::ConfigError) -> SettingsError {
        let text = e.to_string();
        let kept: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|line| {
                let marker = line
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .trim_start();
                !line.is_empty() && !marker.starts_with('|')
            })
            .collect();
        SettingsError(kept.join(" "))
    }
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SettingsError {}

/// The built-in defaults: the bottom layer.
const DEFAULTS: &[(&str, Builtin)] = &[
    ("server.bind", Builtin::Text("127.0.0.1:8080")),
    ("server.workers", Builtin::Whole(0)),
    ("server.shutdown_timeout_secs", Builtin::Whole(30)),
    (
        "server.endpoint_list_cache_mib",
        Builtin::Whole((roomlink_app::endpoint_lists::DEFAULT_LIST_CACHE_BYTES >> 20) as u64),
    ),
    ("database.url", Builtin::Text("sqlite://roomlink.db")),
    ("database.max_connections", Builtin::Whole(16)),
    ("database.connect_timeout_ms", Builtin::Whole(5000)),
    ("listener.command_timeout_ms", Builtin::Whole(10_000)),
    ("listener.status_poll_interval_ms", Builtin::Whole(30_000)),
    ("pairing.rotation_interval_secs", Builtin::Whole(86_400)),
    (
        "audit.retention_days",
        Builtin::Whole(roomlink_domain::audit::DEFAULT_RETENTION_DAYS as u64),
    ),
    (
        "usage.retention_days",
        Builtin::Whole(roomlink_domain::usage::DEFAULT_USAGE_RETENTION_DAYS as u64),
    ),
    ("inventory.refresh_minutes", Builtin::Whole(60)),
    ("inventory.reads_per_round", Builtin::Whole(20)),
    ("webhooks.allow_networks", Builtin::Text("")),
    ("webhooks.allowed_hosts", Builtin::Text("")),
    ("webhooks.timeout_ms", Builtin::Whole(10_000)),
    ("webhooks.lease_secs", Builtin::Whole(60)),
    ("webhooks.delivery_interval_ms", Builtin::Whole(1_000)),
    ("templates.job_lease_secs", Builtin::Whole(60)),
    ("templates.rooms_per_listener", Builtin::Whole(2)),
    ("templates.job_retention_days", Builtin::Whole(90)),
    ("templates.drift_check_minutes", Builtin::Whole(60)),
    ("templates.drift_checks_per_round", Builtin::Whole(20)),
    (
        "security.bcrypt_cost",
        Builtin::Whole(roomlink_crypto::DEFAULT_BCRYPT_COST as u64),
    ),
    (
        "security.verified_password_cache_secs",
        Builtin::Whole(roomlink_crypto::DEFAULT_VERIFIED_CACHE_SECS),
    ),
    ("security.token_cache_ms", Builtin::Whole(5_000)),
    ("security.stream_recheck_ms", Builtin::Whole(60_000)),
    ("calendar.allowed_hosts", Builtin::Text("")),
    ("calendar.auto_join_lead_secs", Builtin::Whole(30)),
    ("calendar.auto_join_grace_secs", Builtin::Whole(300)),
    ("calendar.auto_join_interval_ms", Builtin::Whole(15_000)),
    ("calendar.poll_interval_ms", Builtin::Whole(60_000)),
    ("calendar.requests_per_second", Builtin::Whole(250)),
    ("calendar.push_interval_ms", Builtin::Whole(300_000)),
    ("log.format", Builtin::Text("human")),
    ("log.level", Builtin::Text("info")),
    ("limits.address_rate_per_sec", Builtin::Real(1000.0)),
    ("limits.address_burst", Builtin::Whole(2000)),
    ("limits.token_rate_per_sec", Builtin::Real(200.0)),
    ("limits.token_burst", Builtin::Whole(400)),
    ("limits.auth_failures_per_minute", Builtin::Whole(30)),
    ("limits.max_header_bytes", Builtin::Whole(16 * 1024)),
];

#[derive(Clone, Copy)]
enum Builtin {
    Text(&'static str),
    Whole(u64),
    Real(f64),
}

impl From<Builtin> for config::Value {
    fn from(value: Builtin) -> config::Value {
        match value {
            Builtin::Text(text) => text.into(),
            Builtin::Whole(n) => n.into(),
            Builtin::Real(x) => x.into(),
        }
    }
}

/// Every key a file or `ROOMLINK__*` variable may set. The structs above refuse anything else
/// too (`deny_unknown_fields`); this list makes the refusal name the key meant.
pub const KNOWN: &[&str] = &[
    "server.bind",
    "server.workers",
    "server.shutdown_timeout_secs",
    "server.endpoint_list_cache_mib",
    "server.tls_cert",
    "server.tls_key",
    "database.url",
    "database.max_connections",
    "database.connect_timeout_ms",
    "platform.static_file",
    "platform.oauth2.token_url",
    "platform.oauth2.introspection_url",
    "platform.oauth2.client_id",
    "platform.oauth2.client_secret",
    "platform.oauth2.scope",
    "platform.oauth2.zero_touch_scope",
    "platform.oauth2.timeout_ms",
    "platform.oauth2.cache_ttl_ms",
    "platform.oauth2.claims.platform_id",
    "platform.oauth2.claims.username",
    "platform.oauth2.claims.enterprise",
    "platform.oauth2.claims.enterprise_admin",
    "platform.oauth2.claims.first_name",
    "platform.oauth2.claims.last_name",
    "platform.oauth2.claims.zero_touch",
    "listener.command_timeout_ms",
    "listener.status_poll_interval_ms",
    "pairing.rotation_interval_secs",
    "audit.retention_days",
    "usage.retention_days",
    "inventory.refresh_minutes",
    "inventory.reads_per_round",
    "webhooks.allow_networks",
    "webhooks.allowed_hosts",
    "webhooks.timeout_ms",
    "webhooks.lease_secs",
    "webhooks.delivery_interval_ms",
    "templates.job_lease_secs",
    "templates.rooms_per_listener",
    "templates.job_retention_days",
    "templates.drift_check_minutes",
    "templates.drift_checks_per_round",
    "security.service_key",
    "security.previous_service_keys",
    "security.service_key_file",
    "security.bcrypt_cost",
    "security.verified_password_cache_secs",
    "security.token_cache_ms",
    "security.stream_recheck_ms",
    "calendar.allowed_hosts",
    "calendar.auto_join_lead_secs",
    "calendar.auto_join_grace_secs",
    "calendar.auto_join_interval_ms",
    "calendar.poll_interval_ms",
    "calendar.requests_per_second",
    "calendar.push_interval_ms",
    "calendar.meetings.hosts",
    "calendar.meetings.sip_domains",
    "calendar.meetings.teams_hosts",
    "calendar.meetings.zoom_hosts",
    "calendar.meetings.webex_hosts",
    "calendar.meetings.meet_hosts",
    "log.format",
    "log.level",
    "limits.address_rate_per_sec",
    "limits.address_burst",
    "limits.token_rate_per_sec",
    "limits.token_burst",
    "limits.auth_failures_per_minute",
    "limits.max_header_bytes",
    "cluster.nats_url",
    "cluster.nats_user",
    "cluster.nats_password",
    "cluster.nats_token",
    "cluster.nats_ca_file",
    "cluster.subject_prefix",
];

/// The process's `ROOMLINK__*` variables. Others (`ROOMLINK_TEST_DATABASE_URL`, the listener's
/// `ROOMLINK_LISTENER__*`) are not ours. Read as OS strings: a variable that is not UTF-8
/// must not make the read panic, and its value is not quoted.
fn process_environment() -> Result<HashMap<String, String>, SettingsError> {
    let mut env = HashMap::new();
    for (name, value) in std::env::vars_os() {
        let Some(name) = name.to_str().filter(|name| is_ours(name)) else {
            continue;
        };
        let value = value
            .into_string()
            .map_err(|_| SettingsError::new(format!("{name}: the value is not valid UTF-8")))?;
        env.insert(name.to_owned(), value);
    }
    Ok(env)
}

fn ours(env: HashMap<String, String>) -> HashMap<String, String> {
    env.into_iter().filter(|(name, _)| is_ours(name)).collect()
}

/// As the config crate matches its prefix: case-insensitively.
fn is_ours(name: &str) -> bool {
    name.get(..ENV_PREFIX.len())
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case(ENV_PREFIX))
}

const ENV_PREFIX: &str = "ROOMLINK__";

/// `ROOMLINK__SERVER__BIND` -> `server.bind`, as the config crate reads it.
fn env_key(name: &str) -> String {
    name[ENV_PREFIX.len()..].to_lowercase().replace("__", ".")
}

/// The dotted keys of a file's values (`[server] bind = ...` -> `server.bind`).
fn flatten(prefix: &str, table: config::Map<String, config::Value>, keys: &mut Vec<String>) {
    for (name, value) in table {
        let key = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}.{name}")
        };
        match value.kind {
            config::ValueKind::Table(inner) if !inner.is_empty() => flatten(&key, inner, keys),
            _ => keys.push(key),
        }
    }
}

/// Refuses the first unknown key, naming where it came from and the key probably meant.
fn check_known(present: &[(String, String)]) -> Result<(), SettingsError> {
    let unknown: Vec<&(String, String)> = present
        .iter()
        .filter(|(key, _)| !KNOWN.contains(&key.as_str()))
        .collect();
    let Some((key, origin)) = unknown.first() else {
        return Ok(());
    };
    let section = format!("{key}.");
    if let Some(first) = KNOWN.iter().find(|known| known.starts_with(&section)) {
        return Err(SettingsError::new(format!(
            "{key} (from {origin}) is a section, not a setting: set its keys, such as {first}"
        )));
    }
    let hint = match nearest(key) {
        Some(known) => format!("did you mean {known}?"),
        None => "every setting is listed in docs/operations.md".to_owned(),
    };
    let more = match unknown.len() {
        1 => String::new(),
        n => format!(" ({} more unknown)", n - 1),
    };
    Err(SettingsError::new(format!(
        "unknown setting {key} (from {origin}); {hint}{more}"
    )))
}

/// Only the scheme is ever quoted, and only when it looks like one: the rest of the URL may
/// hold a password.
fn check_database_url(url: &str) -> Result<(), SettingsError> {
    const USE: &str = "use sqlite://PATH or postgres://USER@HOST:PORT/DB";
    let Some((scheme, rest)) = url.trim().split_once("://") else {
        return Err(SettingsError::new(format!(
            "database.url: not a URL; {USE}"
        )));
    };
    let looks_like_a_scheme = !scheme.is_empty()
        && scheme.len() <= 32
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !looks_like_a_scheme {
        return Err(SettingsError::new(format!(
            "database.url: not a URL; {USE}"
        )));
    }
    match scheme.to_ascii_lowercase().as_str() {
        "postgres" | "postgresql" => Ok(()),
        "sqlite" if rest.split('?').next().is_some_and(|path| !path.is_empty()) => Ok(()),
        "sqlite" => Err(SettingsError::new(
            "database.url: sqlite:// needs a file path, e.g. sqlite://roomlink.db",
        )),
        _ => Err(SettingsError::new(format!(
            "database.url: unsupported scheme '{scheme}'; {USE}"
        ))),
    }
}

/// `HOST:PORT`, the port a number from 0 (any free port) to 65535.
fn check_bind(bind: &str) -> Result<(), SettingsError> {
    let valid = bind
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if valid {
        Ok(())
    } else {
        Err(SettingsError::new(format!(
            "server.bind: must be HOST:PORT with a port from 0 to 65535 (got {bind:?})"
        )))
    }
}

mod ranges;
mod suggest;
mod templates;
mod webhooks;
pub use ranges::{Bounds, RANGES, Range};
pub use templates::TemplateJobSettings;
pub use webhooks::WebhookSettings;
#[cfg(test)]
mod tests;

pub use suggest::{edit_distance, nearest};
