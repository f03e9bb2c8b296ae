//! The settings' layers, refusals and ranges.

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

fn refusal(file: Option<&str>, env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("roomlink.toml");
    if let Some(text) = file {
        std::fs::write(&path, text).unwrap();
    }
    let env = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let error = Settings::load_with_env(file.map(|_| path.as_path()), Some(env))
        .expect_err("refused")
        .to_string();
    assert_eq!(error.lines().count(), 1, "one line: {error}");
    error
}

#[test]
fn a_typo_in_the_environment_names_the_key_meant() {
    assert_eq!(
        refusal(None, &[("ROOMLINK__SERVRE__BIND", "127.0.0.1:1")]),
        "unknown setting servre.bind (from ROOMLINK__SERVRE__BIND); did you mean server.bind?"
    );
    // One underscore where two separate section and key.
    assert!(
        refusal(None, &[("ROOMLINK__LOG_LEVEL", "debug")]).ends_with("did you mean log.level?")
    );
    // The right key in the wrong section.
    assert!(
        refusal(None, &[("ROOMLINK__SERVER__COMMAND_TIMEOUT_MS", "1")])
            .ends_with("did you mean listener.command_timeout_ms?")
    );
    // A key cut short.
    assert!(
        refusal(None, &[("ROOMLINK__LIMITS__ADDRESS_RATE", "1")])
            .ends_with("did you mean limits.address_rate_per_sec?")
    );
    let far = refusal(None, &[("ROOMLINK__QUUX", "1")]);
    assert_eq!(
        far,
        "unknown setting quux (from ROOMLINK__QUUX); every setting is listed in docs/operations.md"
    );
}

#[test]
fn a_typo_in_the_file_names_the_file_and_the_key_meant() {
    let error = refusal(Some("[server]\nbnid = \"127.0.0.1:1\"\n"), &[]);
    assert!(
        error.starts_with("unknown setting server.bnid (from /")
            && error.ends_with("roomlink.toml); did you mean server.bind?"),
        "{error}"
    );
    let error = refusal(
        Some("[limits]\nadress_burst = 3\n[listener]\ncommand_timeout = 1\n"),
        &[],
    );
    assert!(
        error.starts_with("unknown setting limits.adress_burst ")
            && error.ends_with("did you mean limits.address_burst? (1 more unknown)"),
        "{error}"
    );
    // A section that does not exist, even empty of keys known elsewhere.
    assert!(
        refusal(Some("[pairng]\nrotation_interval_secs = 60\n"), &[])
            .ends_with("did you mean pairing.rotation_interval_secs?")
    );
}

#[test]
fn other_roomlink_variables_are_not_ours() {
    let env = HashMap::from([
        (
            "ROOMLINK_TEST_DATABASE_URL".to_owned(),
            "postgres://x".to_owned(),
        ),
        (
            "ROOMLINK_LISTENER__COMMANDS__TIMEOUT_MS".to_owned(),
            "5".to_owned(),
        ),
        ("ROOMLINKCTL_URL".to_owned(), "http://x".to_owned()),
        ("ROOMLINK".to_owned(), "x".to_owned()),
    ]);
    let s = Settings::load_with_env(None, Some(env)).unwrap();
    assert_eq!(s.database.url, "sqlite://roomlink.db");
}

#[test]
fn every_known_key_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("all.toml");
    std::fs::write(
        &file,
        r#"
[server]
bind = "[::1]:0"
workers = 2
shutdown_timeout_secs = 5
endpoint_list_cache_mib = 8
tls_cert = "cert.pem"
tls_key = "key.pem"
[database]
url = "postgresql://u@h/db"
max_connections = 4
connect_timeout_ms = 100
[platform.oauth2]
token_url = "https://idp.example/token"
introspection_url = "https://idp.example/introspect"
client_id = "roomlink"
client_secret = "s"
scope = "openid"
zero_touch_scope = "zt"
timeout_ms = 1000
cache_ttl_ms = 0
[platform.oauth2.claims]
platform_id = "a"
username = "b"
enterprise = "c"
enterprise_admin = "d"
first_name = "e"
last_name = "f"
zero_touch = "g"
[listener]
command_timeout_ms = 1
status_poll_interval_ms = 1000
[pairing]
rotation_interval_secs = 60
[audit]
retention_days = 30
[usage]
retention_days = 90
[inventory]
refresh_minutes = 15
reads_per_round = 5
[webhooks]
allow_networks = "loopback"
allowed_hosts = "hooks.corp.example"
timeout_ms = 2000
lease_secs = 30
delivery_interval_ms = 200
[templates]
job_lease_secs = 30
rooms_per_listener = 4
job_retention_days = 7
drift_check_minutes = 120
drift_checks_per_round = 0
[security]
service_key = "k"
previous_service_keys = "p1,p2"
service_key_file = "k.key"
bcrypt_cost = 31
verified_password_cache_secs = 0
token_cache_ms = 0
stream_recheck_ms = 3600000
[log]
format = "json"
level = "debug"
[limits]
address_rate_per_sec = 0
address_burst = 0
token_rate_per_sec = 0.001
token_burst = 1000000
auth_failures_per_minute = 0
max_header_bytes = 131072
[cluster]
nats_url = "nats://127.0.0.1:4222"
nats_user = "roomlink"
nats_password = "nats-password"
nats_token = "nats-token"
nats_ca_file = "ca.pem"
subject_prefix = "roomlink.test"

[calendar]
allowed_hosts = "dav.corp.example, 127.0.0.1"
auto_join_lead_secs = 3600
auto_join_grace_secs = 86400
auto_join_interval_ms = 100
poll_interval_ms = 5000
requests_per_second = 7
push_interval_ms = 60000

[calendar.meetings]
hosts = ["video.corp.example"]
sip_domains = ["sip.corp.example"]
teams_hosts = ["teams.microsoft.com"]
zoom_hosts = ["zoom.us"]
webex_hosts = ["webex.com"]
meet_hosts = ["meet.google.com"]
"#,
    )
    .unwrap();
    let env = HashMap::from([(
        "ROOMLINK__PLATFORM__STATIC_FILE".to_owned(),
        "u.toml".to_owned(),
    )]);
    let s = Settings::load_with_env(Some(&file), Some(env)).unwrap();
    assert_eq!(s.security.bcrypt_cost, 31);
    assert_eq!(s.security.stream_recheck_ms, 3_600_000);
    assert_eq!(s.limits.token_burst, 1_000_000);
    assert_eq!(s.usage.retention_days, 90);
    assert_eq!(
        (s.inventory.refresh_minutes, s.inventory.reads_per_round),
        (15, 5)
    );
    assert_eq!(s.webhooks.allow_networks, "loopback");
    assert_eq!(
        (
            s.webhooks.timeout_ms,
            s.webhooks.lease_secs,
            s.webhooks.delivery_interval_ms
        ),
        (2000, 30, 200)
    );
    assert_eq!(
        (s.templates.job_lease_secs, s.templates.rooms_per_listener),
        (30, 4)
    );
    assert_eq!(
        (
            s.templates.job_retention_days,
            s.templates.drift_check_minutes,
            s.templates.drift_checks_per_round
        ),
        (7, 120, 0)
    );
    assert!(!format!("{:?}", s.cluster).contains("nats-password"));
    assert_eq!(s.calendar.allowed_hosts, "dav.corp.example, 127.0.0.1");
    assert_eq!(s.calendar.auto_join_interval_ms, 100);
    assert_eq!(s.calendar.poll_interval_ms, 5000);
    assert_eq!(s.calendar.requests_per_second, 7);
    assert_eq!(s.calendar.push_interval_ms, 60_000);
    assert_eq!(s.calendar.meetings.hosts, ["video.corp.example"]);
    // Every key of the list was set: the list and the structs agree.
    let text = std::fs::read_to_string(&file).unwrap();
    let mut section = String::new();
    let mut set = vec!["platform.static_file".to_owned()];
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('[') {
            section = name.trim_end_matches(']').to_owned();
        } else if let Some((key, _)) = line.split_once(" = ") {
            set.push(format!("{section}.{key}"));
        }
    }
    set.sort();
    let mut known: Vec<String> = KNOWN.iter().map(|k| (*k).to_owned()).collect();
    known.sort();
    assert_eq!(set, known);
    for range in RANGES {
        assert!(KNOWN.contains(&range.key), "{}", range.key);
    }
}

#[test]
fn numbers_out_of_range_are_refused_with_the_range() {
    assert_eq!(
        refusal(None, &[("ROOMLINK__LIMITS__ADDRESS_RATE_PER_SEC", "-5")]),
        "limits.address_rate_per_sec: must be >= 0 (got -5)"
    );
    assert_eq!(
        refusal(None, &[("ROOMLINK__LIMITS__ADDRESS_BURST", "-5")]),
        "limits.address_burst: must be from 0 to 1000000 (got -5)"
    );
    assert_eq!(
        refusal(None, &[("ROOMLINK__LISTENER__COMMAND_TIMEOUT_MS", "0")]),
        "listener.command_timeout_ms: must be from 1 to 600000 (got 0)"
    );
    assert_eq!(
        refusal(None, &[("ROOMLINK__SERVER__WORKERS", "1.5")]),
        "server.workers: must be a whole number from 0 to 1024 (got 1.5)"
    );
    assert_eq!(
        refusal(None, &[("ROOMLINK__LIMITS__TOKEN_RATE_PER_SEC", "inf")]),
        "limits.token_rate_per_sec: must be a number >= 0"
    );
    assert_eq!(
        refusal(Some("[security]\nbcrypt_cost = 40\n"), &[]),
        "security.bcrypt_cost: must be from 4 to 31 (got 40)"
    );
    // Not a number: the value is not quoted (it could be a misplaced secret).
    assert_eq!(
        refusal(
            None,
            &[("ROOMLINK__SERVER__SHUTDOWN_TIMEOUT_SECS", "hunter2")]
        ),
        "server.shutdown_timeout_secs: must be a number from 1 to 3600"
    );
    assert_eq!(
        refusal(
            None,
            &[("ROOMLINK__LISTENER__STATUS_POLL_INTERVAL_MS", "10")]
        ),
        "listener.status_poll_interval_ms: must be from 1000 to 86400000 (got 10)"
    );
    assert_eq!(
        refusal(None, &[("ROOMLINK__SERVER__BIND", "localhost:99999")]),
        "server.bind: must be HOST:PORT with a port from 0 to 65535 (got \"localhost:99999\")"
    );
    assert!(refusal(None, &[("ROOMLINK__SERVER__BIND", "8080")]).starts_with("server.bind"));
    // Numbers given as strings in the file are read as numbers.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.toml");
    std::fs::write(&file, "[server]\nworkers = \"3\"\n").unwrap();
    let s = Settings::load_with_env(Some(&file), Some(HashMap::new())).unwrap();
    assert_eq!(s.server.workers, 3);
}

#[test]
fn the_database_scheme_is_checked_first_and_no_password_is_quoted() {
    assert_eq!(
        refusal(None, &[("ROOMLINK__DATABASE__URL", "mysql://x")]),
        "database.url: unsupported scheme 'mysql'; use sqlite://PATH or postgres://USER@HOST:PORT/DB"
    );
    for url in [
        "mysql://root:hunter2@db/x",
        "root:hunter2@db/x",
        "host=db password=hunter2",
        "pw:hunter2@db://x",
    ] {
        let error = refusal(
            None,
            &[
                ("ROOMLINK__DATABASE__URL", url),
                ("ROOMLINK__SERVRE__BIND", "x"),
            ],
        );
        // The unknown key comes first; then, alone, the URL.
        assert!(error.starts_with("unknown setting servre.bind"), "{error}");
        let error = refusal(None, &[("ROOMLINK__DATABASE__URL", url)]);
        assert!(error.starts_with("database.url: "), "{error}");
        assert!(!error.contains("hunter2"), "{url}: {error}");
    }
    assert!(refusal(None, &[("ROOMLINK__DATABASE__URL", "sqlite://")]).contains("file path"));
    // A parse error in the file does not quote the offending line.
    let error = refusal(Some("[database]\nurl = \"postgres://u:hunter2@db\n"), &[]);
    assert!(!error.contains("hunter2"), "{error}");
}

#[test]
fn a_section_given_a_value_and_an_unknown_log_format_are_refused() {
    let error = refusal(Some("server = 5\n"), &[]);
    assert!(
        error.starts_with("server (from ")
            && error.ends_with("is a section, not a setting: set its keys, such as server.bind"),
        "{error}"
    );
    assert_eq!(
        refusal(None, &[("ROOMLINK__LOG__FORMAT", "xml")]),
        "log.format: must be human or json (got \"xml\")"
    );
}

#[test]
fn the_edit_distance_counts_a_swap_as_one() {
    assert_eq!(edit_distance("servre", "server"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("same", "same"), 0);
    assert_eq!(nearest("database.ulr"), Some("database.url"));
    assert_eq!(nearest("zzzzzzzzzzzz"), None);
}

#[test]
fn a_missing_config_file_is_an_error() {
    assert!(Settings::load_with_env(Some(Path::new("/nonexistent/roomlink.toml")), None).is_err());
}

#[test]
fn meeting_hosts_come_from_an_environment_variable_as_a_list() {
    let env = HashMap::from([
        (
            "ROOMLINK__CALENDAR__MEETINGS__HOSTS".to_owned(),
            "video.corp.example, meet.corp.example".to_owned(),
        ),
        (
            "ROOMLINK__PLATFORM__STATIC_FILE".to_owned(),
            "u.toml".to_owned(),
        ),
    ]);
    let s = Settings::load_with_env(None, Some(env)).unwrap();
    assert_eq!(
        s.calendar.meetings.hosts,
        ["video.corp.example", "meet.corp.example"]
    );
    assert_eq!(
        s.calendar.meetings.teams_hosts,
        roomlink_domain::calendar::meeting::MeetingRules::default().teams_hosts,
        "the other lists keep their defaults"
    );
}
