//! The `roomlink` binary's library half: configuration, wiring of adapters into the domain's
//! use cases, and the operator commands. `main.rs` only parses the command line.
//!
//! This is the one crate that knows every adapter.

pub mod admin;
pub mod announce;
pub mod commands;
pub mod maintenance;
pub mod settings;

use anyhow::Context;
use roomlink_app::auth_failures::SharedAllowances;
use roomlink_app::housekeeping::AuditRetention;
use roomlink_app::revocation::TokenCacheLifetime;
use roomlink_app::{CalendarPollInterval, ListCacheBudget, Policies, Ports, Services};
use roomlink_crypto::{KeyRing, Passwords, Sealer, ServiceKey};
use roomlink_domain::calendar::account::AllowedHosts;
use roomlink_domain::calendar::auto_join::AutoJoinTiming;
use roomlink_domain::cluster::{EventBus, ListenerLinks, LocalBus};
use roomlink_domain::pairing::PairingPolicy;
use roomlink_domain::ports::{Clock, IdGenerator, PlatformIdentity};
use roomlink_domain::secret::Secret;
use roomlink_domain::system::{RandomIds, SystemClock};
use roomlink_domain::throttle::Allowance;
use roomlink_http::LinkRegistry;
use roomlink_listener_client::{ClientConfig, HttpListenerClient};
use roomlink_platform::{OAuth2Platform, StaticPlatform};
use roomlink_store::{DbConfig, DbStore};
use settings::Settings;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Connects to the database named by the settings (migrating it if `migrate`); a missing
/// SQLite file is created, with a warning.
pub async fn connect_store(settings: &Settings, migrate: bool) -> anyhow::Result<Arc<DbStore>> {
    connect_store_with(settings, migrate, true).await
}

/// As [`connect_store`]; with `create_sqlite` off, a missing SQLite file is refused
/// (`StoreError::NoSqliteDatabase`) instead of created. Logs which database it opened.
pub async fn connect_store_with(
    settings: &Settings,
    migrate: bool,
    create_sqlite: bool,
) -> anyhow::Result<Arc<DbStore>> {
    let mut config = DbConfig::new(settings.database.url.clone());
    config.max_connections = settings.database.max_connections.max(1);
    config.connect_timeout = Duration::from_millis(settings.database.connect_timeout_ms);
    config.create_sqlite = create_sqlite;
    let store = DbStore::connect(&config).await?;
    let (backend, location) = (store.backend(), store.location());
    tracing::info!(%backend, %location, "database: {backend} at {location}");
    if migrate {
        let applied = store.migrate().await?;
        if !applied.is_empty() {
            tracing::info!(migrations = ?applied, "database migrated");
        }
    }
    Ok(Arc::new(store))
}

/// Where the service key ring comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `security.service_key` (and `security.previous_service_keys`).
    Settings,
    /// A key file: `security.service_key_file`, or `roomlink.key` beside the SQLite database.
    File(PathBuf),
}

/// Where the settings say the service key ring is.
pub fn key_source(settings: &Settings) -> anyhow::Result<KeySource> {
    if settings.security.service_key.is_some() {
        return Ok(KeySource::Settings);
    }
    match (&settings.security.service_key_file, settings.sqlite_path()) {
        (Some(file), _) => Ok(KeySource::File(file.clone())),
        (None, Some(db)) => Ok(KeySource::File(db.with_file_name("roomlink.key"))),
        (None, None) => anyhow::bail!(
            "set security.service_key (or security.service_key_file) when the database is not SQLite: \
             every instance must seal endpoint passwords with the same key"
        ),
    }
}

/// The service key ring: from the settings, or a key file (created on first start).
pub fn service_keys(settings: &Settings) -> anyhow::Result<KeyRing> {
    match key_source(settings)? {
        KeySource::Settings => {
            let current = settings.security.service_key.as_deref().unwrap_or_default();
            let current = ServiceKey::from_base64(current).context("security.service_key")?;
            let previous = settings
                .security
                .previous_service_keys
                .as_deref()
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(ServiceKey::from_base64)
                .collect::<Result<Vec<_>, _>>()
                .context("security.previous_service_keys")?;
            Ok(KeyRing::new(current, previous))
        }
        KeySource::File(file) => Ok(KeyRing::load_or_create(&file)?),
    }
}

/// The companion platform's identity adapter: an OAuth2 provider, a static file, or nobody.
pub fn platform(settings: &Settings) -> anyhow::Result<Arc<dyn PlatformIdentity>> {
    Ok(platform_described(settings)?.0)
}

/// The platform adapter and a one-line description of it for the startup log (a file path
/// and its user count, or the provider's host; never a client secret).
fn platform_described(settings: &Settings) -> anyhow::Result<(Arc<dyn PlatformIdentity>, String)> {
    Ok(
        match (&settings.platform.oauth2, &settings.platform.static_file) {
            (Some(_), Some(_)) => {
                anyhow::bail!("configure platform.oauth2 or platform.static_file, not both")
            }
            (Some(oauth2), None) => {
                let described = format!(
                    "OAuth2 provider, introspection at {}, password grant at {}",
                    url_host(&oauth2.introspection_url),
                    url_host(&oauth2.token_url)
                );
                let adapter = OAuth2Platform::new(oauth2.clone()).context("platform.oauth2")?;
                (Arc::new(adapter), described)
            }
            (None, Some(path)) => {
                let adapter = StaticPlatform::load(path)?;
                let described = format!(
                    "static file {} with {} user(s)",
                    path.display(),
                    adapter.len()
                );
                (Arc::new(adapter), described)
            }
            (None, None) => (
                Arc::new(StaticPlatform::empty()),
                "none (platform credentials are refused)".to_owned(),
            ),
        },
    )
}

/// The host (and port) of a URL: no user, password, path or query.
fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority.rsplit_once('@').map_or(authority, |(_, h)| h)
}

/// What the key of the failed-authentication allowances' hash is derived for: a new purpose
/// string would start every allowance afresh.
const AUTH_FAILURE_KEY_PURPOSE: &str = "roomlink auth-failure allowances v1";

/// What the key of the tokens' hash in the rate limits is derived for.
const RATE_TOKEN_KEY_PURPOSE: &str = "roomlink rate-limit token keys v1";

/// A serving process's wiring: the use cases, and the outbound listeners' connections this
/// instance holds (the HTTP adapter accepts them, the use cases send through them).
pub struct Wiring {
    pub services: Services,
    pub links: Arc<LinkRegistry>,
    /// Browsers' live-update streams, told of every instance's changes.
    pub live: Arc<roomlink_http::LiveHub>,
    /// The connection to the other instances, when `cluster.nats_url` is set; its tasks live
    /// as long as this does.
    pub cluster: Option<roomlink_cluster::Cluster>,
    /// The sealer, whose key ring SIGHUP reloads.
    pub sealer: Arc<Sealer>,
    /// An admin command's events, for [`announce::announce`]; `None` when serving (the
    /// cluster bus sends them at once).
    pub outbox: Option<Arc<announce::Outbox>>,
    /// The key with which a cluster's instances all hash access tokens in their rate limits.
    pub rate_token_key: [u8; 16],
}

/// Every use case, wired to real adapters, for serving: a missing SQLite file is created
/// (with a warning), and each adapter is named in the log.
pub async fn services(settings: &Settings, migrate: bool) -> anyhow::Result<Wiring> {
    services_with_clock(settings, migrate, Arc::new(SystemClock)).await
}

/// As [`services`], with another clock (tests move time by hand).
pub async fn services_with_clock(
    settings: &Settings,
    migrate: bool,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<Wiring> {
    wire(settings, migrate, true, true, clock).await
}

/// The use cases for an admin command: migrated, and a missing SQLite file is created only
/// if `create_sqlite` (see `docs/operations.md`, "Admin commands").
pub async fn admin_services(settings: &Settings, create_sqlite: bool) -> anyhow::Result<Services> {
    Ok(admin_wiring(settings, create_sqlite).await?.services)
}

/// As [`admin_services`], with the outbox of what the running instances must be told.
pub async fn admin_wiring(settings: &Settings, create_sqlite: bool) -> anyhow::Result<Wiring> {
    wire(settings, true, create_sqlite, false, Arc::new(SystemClock)).await
}

/// `serving`: for `roomlink serve` (adapters named in the log, the cluster joined); an admin
/// command is neither.
async fn wire(
    settings: &Settings,
    migrate: bool,
    create_sqlite: bool,
    serving: bool,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<Wiring> {
    // Where the SQLite file may not be created, the database first: a refusal must not leave
    // a new key file behind. Otherwise the key first: a missing key setting is reported even
    // when the database is down.
    let (store, key) = if create_sqlite {
        let key = service_keys(settings)?;
        (connect_store_with(settings, migrate, true).await?, key)
    } else {
        let store = connect_store_with(settings, migrate, false).await?;
        (store, service_keys(settings)?)
    };
    let (platform, described) = platform_described(settings)?;
    if serving {
        log_wiring(settings, &described);
    }
    let policies = Policies {
        pairing: PairingPolicy {
            rotation_ms: i64::try_from(
                settings.pairing.rotation_interval_secs.saturating_mul(1000),
            )
            .unwrap_or(i64::MAX),
        },
        audit_retention: AuditRetention {
            days: settings.audit.retention_days,
        },
        usage_retention: roomlink_domain::usage::UsageRetention {
            days: settings.usage.retention_days,
        },
        inventory_refresh: roomlink_app::inventory::InventoryRefresh {
            interval_ms: i64::from(settings.inventory.refresh_minutes) * 60_000,
            per_round: settings.inventory.reads_per_round as usize,
        },
        // Three missed poll rounds, two missed inventory reads.
        health: roomlink_domain::health::HealthPolicy {
            stale_status_ms: i64::try_from(settings.listener.status_poll_interval_ms)
                .unwrap_or(i64::MAX / 4)
                .saturating_mul(3),
            stale_inventory_ms: i64::from(settings.inventory.refresh_minutes) * 2 * 60_000,
        },
        webhook_delivery: roomlink_app::webhooks::DeliveryPolicy {
            lease_ms: i64::try_from(settings.webhooks.lease_secs * 1000).unwrap_or(i64::MAX),
            attempt_timeout_ms: i64::try_from(settings.webhooks.timeout_ms).unwrap_or(i64::MAX),
            ..Default::default()
        },
        webhook_hosts: AllowedHosts::from_list(&settings.webhooks.allowed_hosts),
        template_jobs: roomlink_app::template_jobs::JobPolicy {
            lease_ms: secs_to_ms(settings.templates.job_lease_secs),
            rooms_per_listener: settings.templates.rooms_per_listener as usize,
            ..Default::default()
        },
        job_retention: roomlink_app::housekeeping::JobRetention {
            days: settings.templates.job_retention_days,
        },
        drift_refresh: roomlink_app::drift_checks::DriftRefresh {
            interval_ms: i64::from(settings.templates.drift_check_minutes) * 60_000,
            per_round: settings.templates.drift_checks_per_round as usize,
        },
        endpoint_list_cache_bytes: ListCacheBudget(
            settings
                .server
                .endpoint_list_cache_mib
                .saturating_mul(1 << 20),
        ),
        meeting_rules: settings.calendar.meetings.clone(),
        calendar_hosts: AllowedHosts::from_list(&settings.calendar.allowed_hosts),
        auto_join: AutoJoinTiming {
            lead_ms: secs_to_ms(settings.calendar.auto_join_lead_secs),
            grace_ms: secs_to_ms(settings.calendar.auto_join_grace_secs),
        },
        calendar_poll: CalendarPollInterval(
            i64::try_from(settings.calendar.poll_interval_ms).unwrap_or(i64::MAX),
        ),
        token_cache: TokenCacheLifetime(
            i64::try_from(settings.security.token_cache_ms).unwrap_or(i64::MAX),
        ),
        // Instances of a cluster count failed authentications together (none when off).
        shared_allowances: Allowance::per_minute(settings.limits.auth_failures_per_minute)
            .filter(|_| serving && settings.cluster.nats_url.is_some())
            .map(|allowance| SharedAllowances {
                allowance,
                hash_key: *key.current().derive(AUTH_FAILURE_KEY_PURPOSE),
            }),
    };
    let rate_token_key: [u8; 16] = {
        let derived = key.current().derive(RATE_TOKEN_KEY_PURPOSE);
        std::array::from_fn(|i| derived[i])
    };
    // This process among roomlink instances: names its connections and bus messages.
    let instance = RandomIds.entity_id()[..12].to_owned();
    let registry = Arc::new(LinkRegistry::new(instance.clone()));
    let cluster = match &settings.cluster.nats_url {
        Some(url) if serving => Some(join_cluster(settings, url, instance).await?),
        _ => None,
    };
    // Alone: events stay in this process and only its own sockets are reachable. In a
    // cluster: events go to every instance, and a listener held elsewhere is asked over NATS.
    // An admin command keeps its events for the instances (`announce`).
    let mut outbox = None;
    let (bus, events, links): (Arc<LocalBus>, Arc<dyn EventBus>, Arc<dyn ListenerLinks>) =
        match &cluster {
            None if !serving => {
                let bus = Arc::new(LocalBus::default());
                let kept = Arc::new(announce::Outbox::new(bus.clone()));
                outbox = Some(kept.clone());
                (bus, kept, registry.clone())
            }
            None => {
                let bus = Arc::new(LocalBus::default());
                (bus.clone(), bus, registry.clone())
            }
            Some(cluster) => {
                let links = cluster.links(registry.clone());
                registry.observe(links.clone());
                (cluster.local_bus(), cluster.bus(), links)
            }
        };
    let client = HttpListenerClient::new(ClientConfig {
        command_timeout: Duration::from_millis(settings.listener.command_timeout_ms),
        ..ClientConfig::default()
    })
    .with_links(links.clone());
    let sealer = Arc::new(match key_source(settings)? {
        KeySource::File(path) => Sealer::from_file(key, path),
        KeySource::Settings => Sealer::new(key),
    });
    let services = Services::new(
        Ports {
            store,
            hasher: Arc::new(
                Passwords::with_bcrypt_cost(settings.security.bcrypt_cost).remembering_for(
                    Duration::from_secs(settings.security.verified_password_cache_secs),
                ),
            ),
            sealer: sealer.clone(),
            platform,
            transport: Arc::new(client),
            links,
            events,
            calendars: Arc::new(roomlink_calendar::CalendarReaders::paced(
                clock.clone(),
                roomlink_calendar::Pace::per_host(
                    u32::try_from(settings.calendar.requests_per_second).unwrap_or(u32::MAX),
                ),
            )),
            clock,
            ids: Arc::new(RandomIds),
            webhooks: Arc::new(
                roomlink_webhook_sender::HttpWebhookSender::new(
                    roomlink_webhook_sender::SenderSettings {
                        timeout: Duration::from_millis(settings.webhooks.timeout_ms),
                        rule: settings.webhooks.target_rule()?,
                    },
                )
                .map_err(|e| anyhow::anyhow!("webhooks: {e}"))?,
            ),
            tickets: sealer.clone(),
        },
        policies,
    );
    bus.subscribe(Arc::new(services.clone()));
    bus.subscribe(registry.clone());
    let live = Arc::new(roomlink_http::LiveHub::with_recheck(
        std::time::Duration::from_millis(settings.security.stream_recheck_ms),
    ));
    bus.subscribe(live.clone());
    Ok(Wiring {
        services,
        links: registry,
        live,
        cluster,
        sealer,
        outbox,
        rate_token_key,
    })
}

/// The NATS client settings of `cluster.*`, for `url`.
fn nats_settings(settings: &Settings, url: &str) -> roomlink_cluster::ClusterSettings {
    let c = &settings.cluster;
    roomlink_cluster::ClusterSettings {
        url: url.to_owned(),
        user: c.nats_user.clone(),
        password: c.nats_password.clone().map(Secret::new),
        token: c.nats_token.clone().map(Secret::new),
        tls: false,
        ca_file: c.nats_ca_file.clone(),
        subject_prefix: c
            .subject_prefix
            .clone()
            .unwrap_or_else(|| roomlink_cluster::DEFAULT_PREFIX.to_owned()),
    }
}

/// Joins the other instances over NATS (`cluster.*`). Returns at once: the connection is made,
/// and remade after an outage, in the background.
async fn join_cluster(
    settings: &Settings,
    url: &str,
    instance: String,
) -> anyhow::Result<roomlink_cluster::Cluster> {
    let nats = nats_settings(settings, url);
    let cluster = roomlink_cluster::connect(&nats, instance.clone())
        .await
        .context("cluster.nats_url: cannot use the NATS settings")?;
    tracing::info!(
        instance = %instance,
        "cluster: instance {instance} on NATS at {}",
        url.split(',').map(url_host).collect::<Vec<_>>().join(", ")
    );
    Ok(cluster)
}

/// One startup line per adapter besides the database (logged when connecting): what an
/// operator checks first when the service behaves unlike another instance.
fn log_wiring(settings: &Settings, platform: &str) {
    tracing::info!("platform identity: {platform}");
    let listener = &settings.listener;
    tracing::info!(
        command_timeout_ms = listener.command_timeout_ms,
        status_poll_interval_ms = listener.status_poll_interval_ms.max(1000),
        "listener client: command timeout {} ms, status poll every {} ms",
        listener.command_timeout_ms,
        listener.status_poll_interval_ms.max(1000)
    );
    let l = &settings.limits;
    tracing::info!(
        "abuse limits: {}/s burst {} per address, {}/s burst {} per token, {} failed \
         authentications per minute per address and user name or token kind, {} header bytes \
         (0 = off)",
        l.address_rate_per_sec,
        l.address_burst,
        l.token_rate_per_sec,
        l.token_burst,
        l.auth_failures_per_minute,
        l.max_header_bytes
    );
}

/// The thread that writes the log; dropping this writes out every line still queued and
/// stops it. Kept by `main` until the process ends.
#[must_use = "dropping the guard stops the log writer"]
pub struct LogWriter {
    _writer: tracing_appender::non_blocking::WorkerGuard,
}

/// Log lines queued for the writer thread at most. The queue is allocated whole at start (32
/// bytes a line); tracing-appender's default of 128,000 took 4 MiB of resident memory.
const LOG_QUEUE_LINES: usize = 8_192;

/// Sets up logging: human-readable or JSON lines, filtered by `log.level` (or `RUST_LOG`).
///
/// Lines go to standard error through a thread of their own, which writes whatever is queued in
/// one go and flushes whenever the queue is empty, so a request's thread neither waits for a
/// write(2) nor contends for stderr's lock (about 5 % of a cached GET's CPU, docs/benchmarks.md).
/// Nothing is dropped: past [`LOG_QUEUE_LINES`] queued lines a logging thread waits for the
/// writer.
pub fn init_logging(settings: &Settings) -> LogWriter {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&settings.log.level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours only for a person at a terminal, never in files or collectors.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .thread_name("roomlink-log")
        .finish(std::io::BufWriter::new(std::io::stderr()));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(writer);
    let _ = match settings.log.format {
        settings::LogFormat::Json => builder.json().try_init(),
        settings::LogFormat::Human => builder.try_init(),
    };
    LogWriter { _writer: guard }
}

/// Seconds from a setting as milliseconds (the settings' ranges keep it far from overflow).
fn secs_to_ms(secs: u64) -> i64 {
    i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX)
}
