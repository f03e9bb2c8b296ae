//! The listener's configuration: built-in defaults < `--config FILE` (TOML) < environment
//! variables `ROOMLINK_LISTENER__SECTION__KEY` < command-line flags. Unknown keys are refused,
//! as are values out of range; every refusal is one line that quotes no secret.

use crate::drivers::cisco_http::parse_fingerprint;
use roomlink_domain::enums::Cluster;
use roomlink_domain::rules::dial_plan::Bridge;
use roomlink_listener_protocol::dial_home::settings::{check_listener_id, connect_url};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub server: ServerSettings,
    /// The outbound mode: set `connect.urls` and the listener dials roomlink instead of serving.
    pub connect: ConnectSettings,
    pub commands: CommandSettings,
    pub ivr: IvrSettings,
    /// The meeting bridge of each cluster (`bridges.prod`, `bridges.stage`, `bridges.qa`).
    pub bridges: BTreeMap<String, BridgeSettings>,
    pub tandberg_http: TandbergHttpSettings,
    pub tandberg_ssh: TandbergSshSettings,
    pub polycom_telnet: PolycomTelnetSettings,
    pub mesh: MeshSettings,
    /// Room calendars this listener reads for roomlink (`readcalendar`).
    pub calendar: CalendarSettings,
    pub log: LogSettings,
}

#[derive(Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSettings {
    pub bind: String,
    /// The shared secret roomlink presents. Prefer `secret_file` (or `--secret-file`).
    pub secret: Option<String>,
    pub secret_file: Option<PathBuf>,
    /// Base64 of the enterprise's X25519 private key, to open sealed passwords.
    pub private_key_file: Option<PathBuf>,
    pub workers: usize,
    pub shutdown_timeout_secs: u64,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            bind: "127.0.0.1:9001".into(),
            secret: None,
            secret_file: None,
            private_key_file: None,
            workers: 2,
            shutdown_timeout_secs: 30,
        }
    }
}

// The secret never prints.
impl std::fmt::Debug for ServerSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSettings")
            .field("bind", &self.bind)
            .field("secret", &self.secret.as_ref().map(|_| "[redacted]"))
            .field("secret_file", &self.secret_file)
            .field("private_key_file", &self.private_key_file)
            .field("workers", &self.workers)
            .finish()
    }
}

/// The outbound ("dial-home") mode. The secret it presents is `server.secret` /
/// `server.secret_file`: one listener, one shared secret, whichever side connects.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConnectSettings {
    /// roomlink's base URLs, tried in turn; empty: inbound mode. A list, or one string with
    /// commas (what an environment variable can hold).
    #[serde(deserialize_with = "url_list")]
    pub urls: Vec<String>,
    /// The listener's id in roomlink (the `id` of its record).
    pub listener_id: Option<String>,
    /// PEM certificates trusted for `wss://` besides the system's roots.
    pub ca_file: Option<PathBuf>,
}

impl ConnectSettings {
    pub fn outbound(&self) -> bool {
        !self.urls.is_empty()
    }
}

/// `["a", "b"]` or `"a,b"`.
fn url_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum List {
        One(String),
        Many(Vec<String>),
    }
    let urls = match List::deserialize(d)? {
        List::One(text) => text.split(',').map(str::to_owned).collect(),
        List::Many(urls) => urls,
    };
    Ok(urls
        .into_iter()
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty())
        .collect())
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommandSettings {
    /// A room system that has not answered a command by then fails with `timeout`. Below
    /// roomlink's `listener.command_timeout_ms` (10 s) so that the room system's silence, not
    /// the listener's, is what the user reads.
    pub timeout_ms: u64,
    /// The deadline for one device's answer in a batched status request.
    pub status_timeout_ms: u64,
    /// Devices asked at once while answering one status request.
    pub status_concurrency: usize,
}

impl Default for CommandSettings {
    fn default() -> Self {
        CommandSettings {
            timeout_ms: 8_000,
            status_timeout_ms: 5_000,
            status_concurrency: 64,
        }
    }
}

/// How a join's tones are sent when the dial style needs them (IP_HASH, E164).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IvrSettings {
    /// How long to wait for the call to connect before giving the tones up.
    pub connect_wait_ms: u64,
    /// After the call connects, the pause before the first tones (the IVR's greeting).
    pub delay_ms: u64,
    /// The pause between two steps (meeting id, then passcode).
    pub step_gap_ms: u64,
    /// How often the call's state is read while waiting for it to connect.
    pub poll_ms: u64,
}

impl Default for IvrSettings {
    fn default() -> Self {
        IvrSettings {
            connect_wait_ms: 30_000,
            delay_ms: 3_000,
            step_gap_ms: 1_500,
            poll_ms: 500,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeSettings {
    pub hostname: String,
    pub ip_address: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TandbergHttpSettings {
    /// `https` (the codecs' default) or `http` (old firmware, labs, tests).
    pub scheme: String,
    /// `verify`, `accept-any`, or `pinned` (then `pins` maps addresses to SHA-256 fingerprints).
    pub tls: String,
    pub pins: BTreeMap<String, String>,
    pub connect_timeout_ms: u64,
}

impl Default for TandbergHttpSettings {
    fn default() -> Self {
        TandbergHttpSettings {
            scheme: "https".into(),
            tls: "verify".into(),
            pins: BTreeMap::new(),
            connect_timeout_ms: 3_000,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TandbergSshSettings {
    /// `pin-on-first-use` (the key seen first is recorded in `known_hosts_file` and demanded
    /// after) or `accept-any`.
    pub host_keys: String,
    pub known_hosts_file: PathBuf,
    /// Also offer SHA-1 key exchange and MACs, for TC-era and older units.
    pub legacy_algorithms: bool,
    pub connect_timeout_ms: u64,
}

impl Default for TandbergSshSettings {
    fn default() -> Self {
        TandbergSshSettings {
            host_keys: "pin-on-first-use".into(),
            known_hosts_file: PathBuf::from("roomlink-listener-known-hosts"),
            legacy_algorithms: false,
            connect_timeout_ms: 3_000,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolycomTelnetSettings {
    pub connect_timeout_ms: u64,
}

impl Default for PolycomTelnetSettings {
    fn default() -> Self {
        PolycomTelnetSettings {
            connect_timeout_ms: 3_000,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeshSettings {
    pub connect_timeout_ms: u64,
}

impl Default for MeshSettings {
    fn default() -> Self {
        MeshSettings {
            connect_timeout_ms: 3_000,
        }
    }
}

/// `[calendar]`: the calendar systems inside the customer's network this listener reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CalendarSettings {
    pub exchange: ExchangeSettings,
}

/// `[calendar.exchange]`: an on-premises Exchange server's EWS endpoint and the service
/// account that reads the room mailboxes' calendars (delegate access). Unset `soap_uri`: the
/// listener reads no Exchange calendars (`calendar_not_configured`).
#[derive(Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExchangeSettings {
    /// `https://mail.corp.example/EWS/Exchange.asmx`.
    pub soap_uri: Option<String>,
    pub username: Option<String>,
    /// The account's password: never logged, never answered.
    pub password: Option<String>,
    /// The account's Windows domain: the Basic user becomes `DOMAIN\username`.
    pub domain: Option<String>,
}

// The password never prints.
impl std::fmt::Debug for ExchangeSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExchangeSettings")
            .field("soap_uri", &self.soap_uri)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "[redacted]"))
            .field("domain", &self.domain)
            .finish()
    }
}

impl ExchangeSettings {
    fn check(&self) -> Result<(), SettingsError> {
        let Some(uri) = &self.soap_uri else {
            if self.username.is_some() || self.password.is_some() || self.domain.is_some() {
                return Err(refuse(
                    "calendar.exchange: username, password and domain need soap_uri",
                ));
            }
            return Ok(());
        };
        let rest = uri
            .strip_prefix("https://")
            .or_else(|| uri.strip_prefix("http://"));
        let authority = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or_default());
        match authority {
            Some(a) if a.contains('@') => {
                return Err(refuse(
                    "calendar.exchange.soap_uri: must not carry credentials; set username and password",
                ));
            }
            Some(a) if !a.is_empty() && !uri.contains(['?', '#', ' ']) => {}
            _ => {
                return Err(refuse(
                    "calendar.exchange.soap_uri: must be an http(s) URL such as https://mail.corp.example/EWS/Exchange.asmx",
                ));
            }
        }
        let filled = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
        if !filled(&self.username) || !filled(&self.password) {
            return Err(refuse(
                "calendar.exchange: soap_uri needs username and password",
            ));
        }
        let printable = |v: &Option<String>| {
            v.as_deref()
                .is_none_or(|v| !v.chars().any(char::is_control))
        };
        if !printable(&self.username) || !printable(&self.password) || !printable(&self.domain) {
            return Err(refuse(
                "calendar.exchange: username, password and domain must be printable",
            ));
        }
        if self.username.as_deref().is_some_and(|u| u.contains(':')) {
            return Err(refuse(
                "calendar.exchange.username: must not contain ':' (HTTP Basic)",
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    /// `human` or `json`.
    pub format: String,
    /// A tracing filter; `RUST_LOG` overrides it.
    pub level: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            format: "human".into(),
            level: "info".into(),
        }
    }
}

/// Why the configuration was refused: one line, no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError(pub String);

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SettingsError {}

fn refuse(message: impl Into<String>) -> SettingsError {
    SettingsError(message.into())
}

/// The environment variables' prefix.
pub const ENV_PREFIX: &str = "ROOMLINK_LISTENER";

impl Settings {
    /// Loads the file (if any) and `env` (the process environment in the binary) and checks
    /// every value.
    pub fn load(
        file: Option<&Path>,
        env: HashMap<String, String>,
    ) -> Result<Settings, SettingsError> {
        let mut builder = config::Config::builder();
        if let Some(path) = file {
            if !path.exists() {
                return Err(refuse(format!("--config {}: no such file", path.display())));
            }
            builder = builder.add_source(config::File::from(path).required(true));
        }
        let ours: HashMap<String, String> = env
            .into_iter()
            .filter(|(k, _)| k.starts_with(&format!("{ENV_PREFIX}__")))
            .collect();
        let merged = builder
            .add_source(
                config::Environment::with_prefix(ENV_PREFIX)
                    .prefix_separator("__")
                    .separator("__")
                    .try_parsing(true)
                    .source(Some(ours)),
            )
            .build()
            .map_err(|e| refuse(one_line(&e.to_string())))?;
        let settings: Settings = merged
            .try_deserialize()
            .map_err(|e| refuse(one_line(&e.to_string())))?;
        settings.check()?;
        Ok(settings)
    }

    /// Range and shape checks serde cannot express.
    pub fn check(&self) -> Result<(), SettingsError> {
        self.server
            .bind
            .parse::<std::net::SocketAddr>()
            .map_err(|_| {
                refuse(format!(
                    "server.bind: {:?} is not an address:port such as 127.0.0.1:9001",
                    self.server.bind
                ))
            })?;
        if self.connect.outbound() {
            let id = self.connect.listener_id.as_deref().unwrap_or("");
            check_listener_id(id).map_err(|e| refuse(format!("connect.listener_id: {e}")))?;
            for url in &self.connect.urls {
                connect_url(url, id).map_err(|e| refuse(format!("connect.urls: {e}")))?;
            }
        } else if self.connect.listener_id.is_some() || self.connect.ca_file.is_some() {
            return Err(refuse(
                "connect.listener_id and connect.ca_file need connect.urls (--connect)",
            ));
        }
        if self.server.secret.is_some() && self.server.secret_file.is_some() {
            return Err(refuse(
                "server.secret and server.secret_file are both set; keep one",
            ));
        }
        let positive = [
            ("commands.timeout_ms", self.commands.timeout_ms),
            (
                "commands.status_timeout_ms",
                self.commands.status_timeout_ms,
            ),
            ("ivr.connect_wait_ms", self.ivr.connect_wait_ms),
            ("ivr.poll_ms", self.ivr.poll_ms),
            (
                "tandberg_http.connect_timeout_ms",
                self.tandberg_http.connect_timeout_ms,
            ),
            (
                "tandberg_ssh.connect_timeout_ms",
                self.tandberg_ssh.connect_timeout_ms,
            ),
            (
                "polycom_telnet.connect_timeout_ms",
                self.polycom_telnet.connect_timeout_ms,
            ),
            ("mesh.connect_timeout_ms", self.mesh.connect_timeout_ms),
        ];
        for (key, value) in positive {
            if !(1..=600_000).contains(&value) {
                return Err(refuse(format!("{key}: must be 1 to 600000 (got {value})")));
            }
        }
        if !(1..=1024).contains(&self.commands.status_concurrency) {
            return Err(refuse(format!(
                "commands.status_concurrency: must be 1 to 1024 (got {})",
                self.commands.status_concurrency
            )));
        }
        if !(1..=64).contains(&self.server.workers) {
            return Err(refuse(format!(
                "server.workers: must be 1 to 64 (got {})",
                self.server.workers
            )));
        }
        for name in self.bridges.keys() {
            if Cluster::parse(name).is_err() {
                return Err(refuse(format!(
                    "bridges.{name}: not a cluster; the clusters are prod, stage and qa"
                )));
            }
        }
        if !matches!(self.tandberg_http.scheme.as_str(), "https" | "http") {
            return Err(refuse(format!(
                "tandberg_http.scheme: must be https or http (got {:?})",
                self.tandberg_http.scheme
            )));
        }
        match self.tandberg_http.tls.as_str() {
            "verify" | "accept-any" => {}
            "pinned" if !self.tandberg_http.pins.is_empty() => {}
            "pinned" => {
                return Err(refuse(
                    "tandberg_http.tls = \"pinned\" needs tandberg_http.pins (address = \"SHA-256 fingerprint\")",
                ));
            }
            other => {
                return Err(refuse(format!(
                    "tandberg_http.tls: must be verify, accept-any or pinned (got {other:?})"
                )));
            }
        }
        for (address, pin) in &self.tandberg_http.pins {
            if parse_fingerprint(pin).is_none() {
                return Err(refuse(format!(
                    "tandberg_http.pins.{address}: not a SHA-256 fingerprint (64 hex digits, colons allowed)"
                )));
            }
        }
        if !matches!(
            self.tandberg_ssh.host_keys.as_str(),
            "pin-on-first-use" | "accept-any"
        ) {
            return Err(refuse(format!(
                "tandberg_ssh.host_keys: must be pin-on-first-use or accept-any (got {:?})",
                self.tandberg_ssh.host_keys
            )));
        }
        self.calendar.exchange.check()?;
        if !matches!(self.log.format.as_str(), "human" | "json") {
            return Err(refuse(format!(
                "log.format: must be human or json (got {:?})",
                self.log.format
            )));
        }
        Ok(())
    }

    /// The bridge of `cluster`, when configured.
    pub fn bridge(&self, cluster: Cluster) -> Option<Bridge> {
        self.bridges
            .iter()
            .find(|(name, _)| Cluster::parse(name).ok() == Some(cluster))
            .map(|(_, b)| Bridge {
                hostname: b.hostname.clone(),
                ip_address: b.ip_address.clone(),
            })
    }
}

/// The config crate's errors on one line; TOML parse errors quote the file's line under `|`
/// markers, which may hold a secret: those lines are left out.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| {
            let marker = line
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start();
            !line.is_empty() && !marker.starts_with('|')
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_are_sane() {
        let s = Settings::load(None, HashMap::new()).unwrap();
        assert_eq!(s.server.bind, "127.0.0.1:9001");
        assert_eq!(s.tandberg_http.scheme, "https");
        assert_eq!(s.tandberg_http.tls, "verify");
        assert_eq!(s.tandberg_ssh.host_keys, "pin-on-first-use");
        assert!(s.commands.timeout_ms < 10_000);
    }

    #[test]
    fn file_then_environment() {
        let f = file(
            "[server]\nbind = \"127.0.0.1:9100\"\n[bridges.prod]\nhostname = \"bridge.example\"\nip_address = \"192.0.2.1\"\n[tandberg_http]\nscheme = \"http\"\n",
        );
        let s = Settings::load(
            Some(f.path()),
            env(&[
                ("ROOMLINK_LISTENER__SERVER__BIND", "127.0.0.1:9200"),
                ("OTHER", "x"),
            ]),
        )
        .unwrap();
        assert_eq!(s.server.bind, "127.0.0.1:9200");
        assert_eq!(s.tandberg_http.scheme, "http");
        assert_eq!(s.bridge(Cluster::Prod).unwrap().hostname, "bridge.example");
        assert!(s.bridge(Cluster::Qa).is_none());
    }

    #[test]
    fn bad_settings_are_refused_with_the_key_named() {
        let cases = [
            ("[server]\nbnid = \"x\"\n", "bnid"),
            ("[server]\nbind = \"nowhere\"\n", "server.bind"),
            ("[tandberg_http]\ntls = \"maybe\"\n", "tandberg_http.tls"),
            ("[tandberg_http]\ntls = \"pinned\"\n", "pins"),
            (
                "[tandberg_http.pins]\n\"127.77.0.1\" = \"abc\"\n",
                "pins.127.77.0.1",
            ),
            ("[tandberg_ssh]\nhost_keys = \"trust\"\n", "host_keys"),
            ("[commands]\ntimeout_ms = 0\n", "commands.timeout_ms"),
            (
                "[bridges.dev]\nhostname = \"a\"\nip_address = \"b\"\n",
                "bridges.dev",
            ),
            ("[log]\nformat = \"xml\"\n", "log.format"),
            ("[connect]\nurl = \"https://h\"\n", "url"),
            (
                "[connect]\nurls = [\"ftp://h\"]\nlistener_id = \"a\"\n",
                "connect.urls",
            ),
            ("[connect]\nurls = [\"https://h\"]\n", "listener id"),
            ("[connect]\nlistener_id = \"a\"\n", "connect.urls"),
            (
                "[calendar.exchange]\nsoap_uri = \"ftp://mail\"\nusername = \"u\"\npassword = \"p\"\n",
                "calendar.exchange.soap_uri",
            ),
            (
                "[calendar.exchange]\nsoap_uri = \"https://u:p@mail/EWS/Exchange.asmx\"\n",
                "must not carry credentials",
            ),
            (
                "[calendar.exchange]\nsoap_uri = \"https://mail/EWS/Exchange.asmx\"\nusername = \"u\"\n",
                "needs username and password",
            ),
            ("[calendar.exchange]\nusername = \"u\"\n", "need soap_uri"),
            ("[calendar.exchange]\nsoapUri = \"x\"\n", "soapUri"),
        ];
        for (text, named) in cases {
            let e = Settings::load(Some(file(text).path()), HashMap::new()).unwrap_err();
            assert!(e.0.contains(named), "{text}: {e}");
        }
    }

    #[test]
    fn connect_urls_come_as_a_list_or_with_commas() {
        let f = file(
            "[connect]\nurls = [\"https://a.example\", \"https://b.example\"]\nlistener_id = \"l1\"\n",
        );
        let s = Settings::load(Some(f.path()), HashMap::new()).unwrap();
        assert_eq!(s.connect.urls, ["https://a.example", "https://b.example"]);
        assert!(s.connect.outbound());
        let s = Settings::load(
            None,
            env(&[
                (
                    "ROOMLINK_LISTENER__CONNECT__URLS",
                    "https://a.example, http://127.0.0.1:1",
                ),
                ("ROOMLINK_LISTENER__CONNECT__LISTENER_ID", "l1"),
            ]),
        )
        .unwrap();
        assert_eq!(s.connect.urls, ["https://a.example", "http://127.0.0.1:1"]);
        assert!(!Settings::default().connect.outbound());
    }

    #[test]
    fn exchange_settings_load_and_never_print_the_password() {
        let f = file(
            "[calendar.exchange]\nsoap_uri = \"https://mail.corp.example/EWS/Exchange.asmx\"\nusername = \"svc-rooms\"\npassword = \"ews-pass-77\"\ndomain = \"CORP\"\n",
        );
        let s = Settings::load(Some(f.path()), HashMap::new()).unwrap();
        let ews = &s.calendar.exchange;
        assert_eq!(
            ews.soap_uri.as_deref(),
            Some("https://mail.corp.example/EWS/Exchange.asmx")
        );
        assert_eq!(ews.domain.as_deref(), Some("CORP"));
        assert!(!format!("{s:?}").contains("ews-pass-77"));
        let s = Settings::load(
            None,
            env(&[
                (
                    "ROOMLINK_LISTENER__CALENDAR__EXCHANGE__SOAP_URI",
                    "http://127.0.0.1:1/EWS/Exchange.asmx",
                ),
                ("ROOMLINK_LISTENER__CALENDAR__EXCHANGE__USERNAME", "svc"),
                ("ROOMLINK_LISTENER__CALENDAR__EXCHANGE__PASSWORD", "pw"),
            ]),
        )
        .unwrap();
        assert_eq!(s.calendar.exchange.username.as_deref(), Some("svc"));
        assert!(Settings::default().calendar.exchange.soap_uri.is_none());
    }

    #[test]
    fn a_secret_in_a_broken_file_is_not_quoted() {
        let f = file("[server]\nsecret = \"s3cr3t-value\n");
        let e = Settings::load(Some(f.path()), HashMap::new()).unwrap_err();
        assert!(!e.0.contains("s3cr3t-value"), "{e}");
        let s = ServerSettings {
            secret: Some("s3cr3t-value".into()),
            ..ServerSettings::default()
        };
        assert!(!format!("{s:?}").contains("s3cr3t"));
    }
}
